//! Time-varying link rates: a Mahimahi packet-delivery trace or a piecewise-constant
//! schedule. A link without one keeps its constant `rate_bps` and never reaches this
//! code (the serialiser's hot path is `now + tx_time_ns`).
//!
//! **Mahimahi trace** (`mm-link`, Netravali et al., USENIX ATC 2015): one integer
//! millisecond per line, each a delivery opportunity for up to 1500 bytes, the file
//! repeating with its last timestamp as period. The byte accounting follows
//! `LinkQueue::rationalize` (mahimahi `src/frontend/link_queue.cc`): an opportunity
//! gives its bytes to the packet at the head of the queue; a packet larger than what
//! is left waits for the next opportunities, and bytes a finished packet did not need
//! go to the next queued packet at the same instant; an opportunity that finds the
//! queue empty is lost (rationalize burns every opportunity up to `now` before a new
//! packet is queued), so a packet reaching an idle link waits for the first
//! opportunity strictly after its arrival. The packet leaves at the time of the
//! opportunity that completes it.
//!
//! **Schedule**: rate `rates_bps[i]` from `times_ns[i]` until the next point (the last
//! one lasts for ever, or until `repeat_ns` when the schedule repeats); a packet is
//! serialised at whatever rates hold while it is on the wire, so one that straddles a
//! change finishes as the integral of the rate says. A rate of 0 is an outage.

use crate::error::ConfigError;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC};
use serde::{Deserialize, Serialize};

/// Bytes one Mahimahi delivery opportunity carries (an MTU-sized packet).
pub const MAHIMAHI_OPPORTUNITY_BYTES: u32 = 1500;

fn opportunity_bytes() -> u32 {
    MAHIMAHI_OPPORTUNITY_BYTES
}

/// The JSON form (`LinkConfig.rate_var`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum RateVarConfig {
    /// Mahimahi delivery opportunities in milliseconds from the start of the run.
    Trace {
        ms: Vec<u64>,
        #[serde(default = "opportunity_bytes")]
        bytes: u32,
    },
    /// Piecewise-constant rate: `rates_bps[i]` from `times_ns[i]` (the first at 0).
    Schedule {
        times_ns: Vec<u64>,
        rates_bps: Vec<u64>,
        /// Start again from the first point after this long (longer than the last point).
        #[serde(default)]
        repeat_ns: Option<u64>,
    },
}

impl RateVarConfig {
    /// Long-run mean rate in bit/s (a trace: opportunities x bytes / period; a
    /// schedule without repeat: its last rate).
    pub fn mean_rate_bps(&self) -> f64 {
        match self {
            RateVarConfig::Trace { ms, bytes } => {
                let period = *ms.last().unwrap_or(&0) as f64 * 1e-3;
                if period > 0.0 {
                    ms.len() as f64 * *bytes as f64 * 8.0 / period
                } else {
                    0.0
                }
            }
            RateVarConfig::Schedule { times_ns, rates_bps, repeat_ns } => match repeat_ns {
                None => *rates_bps.last().unwrap_or(&0) as f64,
                Some(p) => {
                    let mut bits = 0.0;
                    for i in 0..times_ns.len() {
                        let end = times_ns.get(i + 1).copied().unwrap_or(*p);
                        bits += rates_bps[i] as f64 * (end - times_ns[i]) as f64;
                    }
                    bits / *p as f64
                }
            },
        }
    }
}

/// A trace or schedule serialiser with its position.
#[derive(Clone, Debug)]
pub enum RateModel {
    Trace(TraceRate),
    Schedule(ScheduleRate),
}

impl RateModel {
    pub fn new(cfg: &RateVarConfig, field: &str) -> Result<RateModel, ConfigError> {
        match cfg {
            RateVarConfig::Trace { ms, bytes } => Ok(RateModel::Trace(TraceRate::new(ms, *bytes, field)?)),
            RateVarConfig::Schedule { times_ns, rates_bps, repeat_ns } => {
                Ok(RateModel::Schedule(ScheduleRate::new(times_ns, rates_bps, *repeat_ns, field)?))
            }
        }
    }

    /// When a packet of `bytes` that starts transmission at `now` has left the
    /// serialiser. Calls must come in time order, one packet at a time.
    pub fn finish(&mut self, bytes: u32, now: Nanos) -> Nanos {
        match self {
            RateModel::Trace(t) => t.finish(bytes, now),
            RateModel::Schedule(s) => s.finish(bytes, now),
        }
    }
}

#[derive(Clone, Debug)]
pub struct TraceRate {
    /// Opportunity times within one period, in ns, non-decreasing; the last is the period.
    at: Vec<Nanos>,
    period: Nanos,
    bytes: u32,
    /// The next unused opportunity: period number and index.
    cycle: u64,
    idx: usize,
    /// The last opportunity used: its time and the bytes it has left.
    last_at: Option<Nanos>,
    left: u32,
}

impl TraceRate {
    fn new(ms: &[u64], bytes: u32, field: &str) -> Result<TraceRate, ConfigError> {
        let bad = |why: String| Err(ConfigError::new(field.to_string(), why));
        if ms.is_empty() {
            return bad("a trace needs at least one delivery opportunity".into());
        }
        if let Some(i) = (1..ms.len()).find(|&i| ms[i] < ms[i - 1]) {
            return bad(format!("timestamps must never decrease: entry {i} is {} after {}", ms[i], ms[i - 1]));
        }
        if *ms.last().unwrap() == 0 {
            return bad("a trace must last for a nonzero time (its last timestamp is its period)".into());
        }
        if bytes == 0 {
            return bad("opportunity bytes must be positive".into());
        }
        let at: Vec<Nanos> = ms.iter().map(|&m| m * NS_PER_MS).collect();
        Ok(TraceRate { period: *at.last().unwrap(), at, bytes, cycle: 0, idx: 0, last_at: None, left: 0 })
    }

    #[inline]
    fn next_time(&self) -> Nanos {
        self.cycle * self.period + self.at[self.idx]
    }

    fn step(&mut self) {
        self.idx += 1;
        if self.idx == self.at.len() {
            self.idx = 0;
            self.cycle += 1;
        }
    }

    /// Moves to the first opportunity strictly after `now` (the ones in between found
    /// the queue empty and are lost).
    fn seek_after(&mut self, now: Nanos) {
        if self.next_time() > now {
            return;
        }
        self.cycle = now / self.period;
        let base = self.cycle * self.period;
        self.idx = self.at.partition_point(|&x| base + x <= now);
        if self.idx == self.at.len() {
            self.idx = 0;
            self.cycle += 1;
        }
    }

    fn finish(&mut self, bytes: u32, now: Nanos) -> Nanos {
        let mut need = bytes;
        if self.last_at == Some(now) {
            // Queued behind a packet that completed at this opportunity: its surplus first.
            if need <= self.left {
                self.left -= need;
                return now;
            }
            need -= self.left;
        } else {
            self.seek_after(now);
        }
        loop {
            let t = self.next_time();
            self.step();
            if need <= self.bytes {
                self.last_at = Some(t);
                self.left = self.bytes - need;
                return t;
            }
            need -= self.bytes;
        }
    }
}

#[derive(Clone, Debug)]
pub struct ScheduleRate {
    times: Vec<Nanos>,
    rates: Vec<u64>,
    repeat: Option<Nanos>,
}

impl ScheduleRate {
    fn new(times: &[u64], rates: &[u64], repeat: Option<u64>, field: &str) -> Result<ScheduleRate, ConfigError> {
        let bad = |why: String| Err(ConfigError::new(field.to_string(), why));
        if times.is_empty() || times.len() != rates.len() {
            return bad(format!(
                "a schedule needs one rate per time and at least one point ({} times, {} rates)",
                times.len(),
                rates.len()
            ));
        }
        if times[0] != 0 {
            return bad(format!("the first point must be at time 0, not {} ns", times[0]));
        }
        if let Some(i) = (1..times.len()).find(|&i| times[i] <= times[i - 1]) {
            return bad(format!("times must increase: point {i} at {} ns is not after {} ns", times[i], times[i - 1]));
        }
        match repeat {
            Some(p) if p <= *times.last().unwrap() => {
                return bad(format!(
                    "repeat = {p} ns must be longer than the last point ({} ns)",
                    times.last().unwrap()
                ))
            }
            Some(_) if rates.iter().all(|&r| r == 0) => return bad("every rate is 0: the link never sends".into()),
            None if *rates.last().unwrap() == 0 => {
                return bad("the last rate is 0 and the schedule does not repeat: the link would stop for ever".into())
            }
            _ => {}
        }
        Ok(ScheduleRate { times: times.to_vec(), rates: rates.to_vec(), repeat })
    }

    /// (rate, end of its phase) at `t`.
    fn phase(&self, t: Nanos) -> (u64, Nanos) {
        let (base, rel) = match self.repeat {
            Some(p) => (t - t % p, t % p),
            None => (0, t),
        };
        let i = self.times.partition_point(|&x| x <= rel) - 1;
        let end = match self.times.get(i + 1) {
            Some(&e) => base + e,
            None => self.repeat.map_or(Nanos::MAX, |p| base + p),
        };
        (self.rates[i], end)
    }

    fn finish(&self, bytes: u32, now: Nanos) -> Nanos {
        // Work in bit-nanoseconds per second, as `tx_time_ns`: a packet of b bits needs
        // b * 1e9 of it and a phase of rate r serves r per nanosecond.
        let mut work = bytes as u128 * 8 * NS_PER_SEC as u128;
        let mut t = now;
        loop {
            let (rate, end) = self.phase(t);
            if rate > 0 {
                let cap = rate as u128 * (end - t) as u128;
                if cap >= work {
                    return t + work.div_ceil(rate as u128) as Nanos;
                }
                work -= cap;
            }
            t = end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::tx_time_ns;

    fn trace(ms: &[u64]) -> RateModel {
        RateModel::new(&RateVarConfig::Trace { ms: ms.to_vec(), bytes: 1500 }, "t").unwrap()
    }

    #[test]
    fn an_idle_packet_waits_for_the_next_opportunity_strictly_after_it() {
        let mut r = trace(&[1, 2, 5]);
        assert_eq!(r.finish(1500, 0), 1_000_000);
        // arriving exactly at 2 ms: that opportunity was burned before the packet came
        assert_eq!(r.finish(1500, 2_000_000), 5_000_000);
        // queued as that one completed; the trace repeats with period 5 ms: 5 + 1 = 6 ms
        assert_eq!(r.finish(1500, 5_000_000), 6_000_000);
        // a long idle time: the opportunities in between are lost; 20 + {1, 2, 5} ms
        assert_eq!(r.finish(1500, 23_500_000), 25_000_000);
        assert_eq!(r.finish(1500, 25_000_000), 26_000_000);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_several() {
        let mut r = trace(&[1, 2, 3, 4]);
        assert_eq!(r.finish(1000, 0), 1_000_000);
        // queued behind it: 500 bytes left at 1 ms
        assert_eq!(r.finish(500, 1_000_000), 1_000_000);
        // nothing left: the next opportunity
        assert_eq!(r.finish(100, 1_000_000), 2_000_000);
        // 1400 left at 2 ms; a 3000-byte packet takes those and 1500 at 3 ms and 100 at 4 ms
        assert_eq!(r.finish(3000, 2_000_000), 4_000_000);
    }

    #[test]
    fn duplicate_timestamps_are_separate_opportunities() {
        let mut r = trace(&[3, 3, 3, 10]);
        assert_eq!(r.finish(1500, 0), 3_000_000);
        assert_eq!(r.finish(1500, 3_000_000), 3_000_000);
        assert_eq!(r.finish(1500, 3_000_000), 3_000_000);
        assert_eq!(r.finish(1500, 3_000_000), 10_000_000);
        assert_eq!(r.finish(1500, 10_000_000), 13_000_000);
    }

    #[test]
    fn greedy_throughput_is_the_trace_capacity() {
        let ms: Vec<u64> = vec![0, 0, 1, 4, 4, 4, 7, 9, 10];
        let mut r = trace(&ms);
        let mut t = 0;
        let n = 9 * 1000;
        for _ in 0..n {
            t = r.finish(1500, t);
        }
        // 9 opportunities per 10 ms; the two at 0 are lost to a packet arriving at 0, so
        // packet k uses opportunity 2 + k: the last one is index 1 of period 1000
        assert_eq!(t, 1000 * 10_000_000);
        let cfg = RateVarConfig::Trace { ms, bytes: 1500 };
        assert!((cfg.mean_rate_bps() - 9.0 * 1500.0 * 8.0 / 0.010).abs() < 1e-6);
    }

    #[test]
    fn bad_traces_are_refused() {
        let e = |ms: &[u64]| RateModel::new(&RateVarConfig::Trace { ms: ms.to_vec(), bytes: 1500 }, "f").unwrap_err();
        assert!(e(&[]).to_string().contains("at least one"));
        assert!(e(&[3, 2]).to_string().contains("entry 1 is 2 after 3"));
        assert!(e(&[0, 0]).to_string().contains("nonzero"));
    }

    fn sched(times: &[u64], rates: &[u64], repeat: Option<u64>) -> RateModel {
        RateModel::new(
            &RateVarConfig::Schedule { times_ns: times.to_vec(), rates_bps: rates.to_vec(), repeat_ns: repeat },
            "s",
        )
        .unwrap()
    }

    #[test]
    fn a_one_point_schedule_is_the_constant_rate() {
        let mut r = sched(&[0], &[12_345_678], None);
        for (b, t) in [(1500, 0), (52, 77), (9000, 1_000_000_007)] {
            assert_eq!(r.finish(b, t), t + tx_time_ns(b, 12_345_678));
        }
    }

    #[test]
    fn a_packet_straddling_a_change_gets_both_rates() {
        // 10 Mbit/s until 1 ms, then 1 Mbit/s: 1250 B = 10000 bit; 0.5 ms at 10 Mbit/s
        // serves 5000 bits, the rest takes 5 ms at 1 Mbit/s
        let mut r = sched(&[0, 1_000_000], &[10_000_000, 1_000_000], None);
        assert_eq!(r.finish(1250, 500_000), 6_000_000);
        // an outage in a repeating schedule: 0 from 1 ms to 3 ms, period 4 ms
        let mut r = sched(&[0, 1_000_000, 3_000_000], &[8_000_000, 0, 8_000_000], Some(4_000_000));
        // 1000 B = 1 ms at 8 Mbit/s; start at 0.5 ms: 0.5 ms before the outage, 0.5 ms after
        assert_eq!(r.finish(1000, 500_000), 3_500_000);
        // in the next period
        assert_eq!(r.finish(1000, 4_500_000), 7_500_000);
        let cfg = RateVarConfig::Schedule {
            times_ns: vec![0, 1_000_000, 3_000_000],
            rates_bps: vec![8_000_000, 0, 8_000_000],
            repeat_ns: Some(4_000_000),
        };
        assert!((cfg.mean_rate_bps() - 4_000_000.0).abs() < 1e-6);
    }

    #[test]
    fn bad_schedules_are_refused() {
        let e = |t: &[u64], r: &[u64], p| {
            RateModel::new(&RateVarConfig::Schedule { times_ns: t.to_vec(), rates_bps: r.to_vec(), repeat_ns: p }, "f")
                .unwrap_err()
                .to_string()
        };
        assert!(e(&[5], &[1], None).contains("time 0"));
        assert!(e(&[0, 0], &[1, 1], None).contains("must increase"));
        assert!(e(&[0, 5], &[1, 0], None).contains("for ever"));
        assert!(e(&[0, 5], &[1, 1], Some(5)).contains("longer than"));
        assert!(e(&[0], &[0], Some(5)).contains("never sends"));
    }
}
