//! Pacing modes of the TCP sender ([`PacingMode`], `TcpConfig.pacing`) and the
//! randomized pacer of Wei's thesis.
//!
//! - `false` / `"off"`: no pacing, unless the congestion control asks for it (BBR);
//! - `true` / `"fq"`: Linux's pacing as with the `fq` qdisc: `tcp_update_pacing_rate`
//!   (2x cwnd/srtt in slow start, 1.2x after) and `tcp_update_skb_after_send` (the next
//!   departure `len/rate` after this one), in the sender;
//! - `"random"`: Wei, "Microscopic Behavior of Internet Congestion Control" (Caltech
//!   2007), Appendix A.2, Algorithm 4: packets follow a virtual grid of one per
//!   `RTT/w`, each sent at a uniformly random offset of at most `RTT/(2w')` from its
//!   grid point, where `w' = max{w + alpha, min{2w, ssthresh}}` is the window expected
//!   next RTT (alpha = 1 segment: Reno's increase). The offsets are zero-mean, so the
//!   long-run rate is the grid's, `w/RTT`, while flows sharing a bottleneck lose their
//!   phase lock. The thesis writes "send at min{s, t}" with `t` the current time;
//!   that would send everything at once, and the intent (and our reading, see
//!   shared/notes §6.2) is **max**: at the drawn time, or now if that has passed.
//!
//! Algorithm 4 assumes a network-limited flow. When the sender falls more than an RTT
//! behind its grid (idle, application-limited), the grid restarts at the current
//! time rather than letting the flow catch up in a burst.

use crate::rng::Rng;
use crate::time::Nanos;
use rand::Rng as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `TcpConfig.pacing`. JSON accepts `true` (= `"fq"`), `false` (= `"off"`), `"fq"`,
/// `"random"`, `"off"`; it writes `false`, `"fq"` or `"random"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacingMode {
    #[default]
    Off,
    Fq,
    Random,
}

impl PacingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            PacingMode::Off => "off",
            PacingMode::Fq => "fq",
            PacingMode::Random => "random",
        }
    }
}

impl Serialize for PacingMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PacingMode::Off => s.serialize_bool(false),
            m => s.serialize_str(m.as_str()),
        }
    }
}

impl<'de> Deserialize<'de> for PacingMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Name(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(false) => Ok(PacingMode::Off),
            Raw::Bool(true) => Ok(PacingMode::Fq),
            Raw::Name(n) => match n.as_str() {
                "off" | "none" => Ok(PacingMode::Off),
                "fq" => Ok(PacingMode::Fq),
                "random" => Ok(PacingMode::Random),
                other => Err(serde::de::Error::custom(format!(
                    "unknown pacing mode {other:?}; accepted: true, false, \"off\", \"fq\", \"random\""
                ))),
            },
        }
    }
}

/// Algorithm 4's per-flow state: the virtual send time of the last packet.
#[derive(Clone, Debug, Default)]
pub struct RandomPacer {
    v: Option<Nanos>,
    /// Offset drawn for the next packet (for tests and traces), ns.
    last_offset: i64,
}

impl RandomPacer {
    /// Called when a packet leaves at `now`: returns the earliest departure of the
    /// next one, `max{v(k+1) + U[-h, h], now}` with `v(k+1) = v(k) + RTT/w` and
    /// `h = RTT/(2w')`. `ai` is the window increase per RTT (1 for Reno).
    pub fn next_departure(
        &mut self,
        now: Nanos,
        rtt: Nanos,
        cwnd: u32,
        ssthresh: u32,
        ai: u32,
        rng: &mut Rng,
    ) -> Nanos {
        let w = cwnd.max(1) as u64;
        let interval = rtt / w;
        let v = match self.v {
            Some(v) if v + rtt >= now => v,
            _ => now,
        };
        let next_v = v + interval;
        self.v = Some(next_v);
        let w_next = (w + ai as u64).max((2 * w).min(ssthresh as u64));
        let h = (rtt / (2 * w_next)) as i64;
        let u = if h > 0 { rng.random_range(-h..=h) } else { 0 };
        self.last_offset = u;
        ((next_v as i64 + u).max(now as i64)) as Nanos
    }

    /// The virtual send time of the next packet.
    pub fn virtual_time(&self) -> Option<Nanos> {
        self.v
    }

    pub fn last_offset(&self) -> i64 {
        self.last_offset
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn json_accepts_bools_and_names() {
        let p = |s: &str| serde_json::from_str::<PacingMode>(s);
        assert_eq!(p("true").unwrap(), PacingMode::Fq);
        assert_eq!(p("false").unwrap(), PacingMode::Off);
        assert_eq!(p("\"fq\"").unwrap(), PacingMode::Fq);
        assert_eq!(p("\"random\"").unwrap(), PacingMode::Random);
        assert_eq!(p("\"off\"").unwrap(), PacingMode::Off);
        let e = p("\"wei\"").unwrap_err().to_string();
        assert!(e.contains("random"), "{e}");
        assert_eq!(serde_json::to_string(&PacingMode::Off).unwrap(), "false");
        assert_eq!(serde_json::to_string(&PacingMode::Random).unwrap(), "\"random\"");
    }

    #[test]
    fn offsets_are_uniform_within_half_a_next_rtt_slot_and_the_rate_is_the_grid_rate() {
        let mut rng = Rng::seed_from_u64(7);
        let mut p = RandomPacer::default();
        // RTT 100 ms, w = 100 in congestion avoidance: grid 1 ms, w' = 101,
        // h = 100 ms / 202 = 495 µs.
        let (rtt, w) = (100_000_000u64, 100u32);
        let h = (rtt / 202) as i64;
        let n = 20_000;
        let mut now = 0;
        let mut offsets = Vec::with_capacity(n);
        let mut departures = Vec::with_capacity(n);
        for _ in 0..n {
            // The sender is always ready: it sends at the earliest allowed time.
            now = p.next_departure(now, rtt, w, 50, 1, &mut rng).max(now);
            offsets.push(p.last_offset());
            departures.push(now);
        }
        assert!(offsets.iter().all(|&u| u.abs() <= h));
        let mean = offsets.iter().sum::<i64>() as f64 / n as f64;
        let var = offsets.iter().map(|&u| (u as f64 - mean).powi(2)).sum::<f64>() / n as f64;
        // U[-h, h]: mean 0, variance h^2/3.
        assert!(mean.abs() < 0.03 * h as f64, "mean {mean}");
        assert!((var / (h as f64 * h as f64 / 3.0) - 1.0).abs() < 0.05, "var {var}");
        // Gaps are randomised (not all 1 ms) ...
        let gaps: Vec<i64> = departures.windows(2).map(|d| d[1] as i64 - d[0] as i64).collect();
        let (gmin, gmax) = (*gaps.iter().min().unwrap(), *gaps.iter().max().unwrap());
        assert!(gmin < 200_000 && gmax > 1_800_000, "gaps {gmin}..{gmax}");
        // ... but the long-run rate is one packet per RTT/w.
        let rate = (n - 1) as f64 / ((departures[n - 1] - departures[0]) as f64 / 1e9);
        assert!((rate / 1000.0 - 1.0).abs() < 0.001, "rate {rate}/s");
    }

    #[test]
    fn slow_start_widens_the_jitter_with_the_doubled_next_window() {
        let mut rng = Rng::seed_from_u64(1);
        let mut p = RandomPacer::default();
        // w = 10, ssthresh large: w' = min(20, ssthresh) = 20, h = RTT/40.
        let mut hmax = 0;
        for _ in 0..2000 {
            p.next_departure(0, 40_000_000, 10, 1000, 1, &mut rng);
            hmax = hmax.max(p.last_offset().abs());
            p.v = Some(0);
        }
        assert!(hmax <= 1_000_000 && hmax > 990_000, "{hmax}");
    }

    #[test]
    fn falling_an_rtt_behind_restarts_the_grid() {
        let mut rng = Rng::seed_from_u64(1);
        let mut p = RandomPacer::default();
        p.next_departure(0, 10_000_000, 10, 5, 1, &mut rng);
        assert_eq!(p.virtual_time(), Some(1_000_000));
        p.next_departure(50_000_000, 10_000_000, 10, 5, 1, &mut rng);
        assert_eq!(p.virtual_time(), Some(51_000_000));
    }
}

/// A sender and a receiver joined by a lossless path of fixed one-way delay and no
/// rate limit: whatever spacing the departures have is the sender's own.
#[cfg(test)]
mod pipe_tests {
    use super::PacingMode;
    use crate::rng::Rng;
    use crate::tcp::{ReceiverConfig, Segment, TcpConfig, TcpReceiver, TcpSender};
    use crate::time::Nanos;
    use rand::SeedableRng;
    use std::collections::VecDeque;

    /// Departure time and the sender's pacing rate (bytes/s) at that time.
    struct Departure {
        t: Nanos,
        rate: u64,
        srtt: Nanos,
    }

    fn run(pacing: PacingMode, one_way: Nanos, until: Nanos, rcvbuf: u64) -> Vec<Departure> {
        run_tso(pacing, one_way, until, rcvbuf, false)
    }

    fn run_tso(pacing: PacingMode, one_way: Nanos, until: Nanos, rcvbuf: u64, tso: bool) -> Vec<Departure> {
        let cfg = TcpConfig { pacing, rcvbuf_bytes: rcvbuf, tso_autosize: tso, ..Default::default() };
        let mut snd = TcpSender::from_config(&cfg, 0, "t").unwrap();
        snd.set_rng(Rng::seed_from_u64(3));
        let mut rcv = TcpReceiver::with_grown_window(ReceiverConfig { rcvbuf_bytes: rcvbuf, scaling_ratio: 256, ..Default::default() });
        let mut to_rcv: VecDeque<(Nanos, Segment)> = VecDeque::new();
        let mut to_snd: VecDeque<(Nanos, Segment)> = VecDeque::new();
        let mut out = Vec::new();
        let mut t = 0;
        loop {
            snd.write(t, snd.sndbuf_space());
            while let Some(seg) = snd.poll_transmit(t) {
                if seg.len > 0 {
                    let st = snd.state();
                    out.push(Departure { t, rate: st.pacing_rate_bps / 8, srtt: st.srtt });
                }
                to_rcv.push_back((t + one_way, seg));
            }
            let next = [to_rcv.front().map(|x| x.0), to_snd.front().map(|x| x.0), snd.next_timer(), rcv.next_timer()]
                .into_iter()
                .flatten()
                .min();
            let Some(next) = next else { break };
            if next > until {
                break;
            }
            t = next;
            while to_rcv.front().is_some_and(|x| x.0 == t) {
                let (_, seg) = to_rcv.pop_front().unwrap();
                rcv.on_segment(t, &seg, false);
            }
            if rcv.next_timer().is_some_and(|x| x <= t) {
                rcv.on_timer(t);
            }
            while let Some(ack) = rcv.poll_ack(t) {
                to_snd.push_back((t + one_way, ack));
            }
            while to_snd.front().is_some_and(|x| x.0 == t) {
                let (_, ack) = to_snd.pop_front().unwrap();
                snd.on_ack(t, &ack);
            }
            if snd.next_timer().is_some_and(|x| x <= t) {
                snd.on_timer(t);
            }
        }
        out
    }

    /// Linux/fq pacing of a slow-start flow: after the first 10 segments
    /// (`tcp_update_skb_after_send` lets them go unpaced) and the first RTT sample, no
    /// two segments leave together; each gap is `mss/pacing_rate`, or at least half of
    /// it when the sender had idle credit. Without pacing the ACK clock releases
    /// back-to-back bursts (zero gaps on an unlimited path).
    #[test]
    fn fq_pacing_spaces_slow_start_by_mss_over_rate_and_no_pacing_bursts() {
        let one_way = 20_000_000;
        let paced = run(PacingMode::Fq, one_way, 200_000_000, 6_291_456);
        let mut checked = 0;
        let mut near = 0;
        for w in paced.windows(2).skip(10) {
            let (a, b) = (&w[0], &w[1]);
            if a.srtt == 0 || a.rate == 0 {
                continue;
            }
            let want = 1448 * 1_000_000_000 / a.rate;
            let gap = b.t - a.t;
            assert!(gap + 1 >= want / 2, "gap {gap} ns < half of mss/rate {want} ns at t {}", a.t);
            if gap.abs_diff(want) * 10 <= want {
                near += 1;
            }
            checked += 1;
        }
        println!("fq: {near} of {checked} gaps within 10% of mss/rate");
        assert!(checked > 50, "{checked}");
        // The gaps inside a flight are mss/rate exactly; the rest are the ACK clock.
        assert!(near * 2 > checked, "{near} of {checked} gaps within 10% of mss/rate");
        let bursty = run(PacingMode::Off, one_way, 200_000_000, 6_291_456);
        let zero = bursty.windows(2).filter(|w| w[1].t == w[0].t).count();
        println!("no pacing: {zero} of {} departures back to back", bursty.len());
        assert!(zero * 2 > bursty.len(), "{zero} of {} back to back", bursty.len());
    }

    /// With TSO autosizing (the default) a paced flow sends GSO bursts: the segments
    /// leaving at one instant number `max(rate * 1 ms / mss, 2)` (`tcp_tso_autosize`
    /// with Linux's `tcp_min_tso_segs` = 2), never more; fewer only where cwnd or the
    /// data ran out.
    #[test]
    fn fq_pacing_with_tso_sends_autosized_bursts() {
        let d = run_tso(PacingMode::Fq, 20_000_000, 200_000_000, 6_291_456, true);
        let (mut full, mut bursts) = (0, 0);
        let mut i = 10;
        while i < d.len() {
            let mut j = i;
            while j + 1 < d.len() && d[j + 1].t == d[i].t {
                j += 1;
            }
            let (size, rate) = (j - i + 1, d[i].rate);
            if d[i].srtt > 0 && rate > 0 {
                let want = ((rate >> 10) / 1448).max(2) as usize;
                assert!(size <= want, "{size} segments at t {} (rate {rate} B/s allows {want})", d[i].t);
                full += usize::from(size == want);
                bursts += 1;
            }
            i = j + 1;
        }
        println!("tso: {full} of {bursts} bursts of the autosized length");
        assert!(bursts > 30 && full * 2 > bursts, "{full} of {bursts}");
    }

    /// `pacing = "random"` with a constant window (the receive window holds the flow
    /// at 40 segments per RTT; the pacer uses the window the flow can use): the
    /// long-run rate is the window per RTT, as with fq pacing, and the gaps scatter
    /// around the grid spacing srtt/w as Algorithm 4 says. Gap k is
    /// `RTT/w + u(k+1) - u(k)` with `u ~ U[-h, h]`, `h = RTT/(2w')` and `w' = w + 1`,
    /// so its coefficient of variation is `sqrt(2/3) h w/RTT = 0.40`; the ACK clock
    /// (a packet cannot leave before its ACK frees the window: `max{s, t}`) trims the
    /// early tail a little.
    #[test]
    fn random_pacing_keeps_the_rate_and_randomises_the_gaps() {
        let one_way = 10_000_000;
        let rwnd = 40 * 1448;
        let random = run(PacingMode::Random, one_way, 3_000_000_000, rwnd);
        let fq = run(PacingMode::Fq, one_way, 3_000_000_000, rwnd);
        let stats = |d: &[Departure]| {
            let tail: Vec<&Departure> = d.iter().filter(|x| x.t > 1_000_000_000).collect();
            let gaps: Vec<f64> = tail.windows(2).map(|w| (w[1].t - w[0].t) as f64).collect();
            let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
            let sd = (gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len() as f64).sqrt();
            let rate = (tail.len() - 1) as f64 / ((tail[tail.len() - 1].t - tail[0].t) as f64 / 1e9);
            (rate, mean, sd / mean)
        };
        let (r_rand, mean_rand, cv_rand) = stats(&random);
        let (r_fq, _, _) = stats(&fq);
        // 40 segments per 20 ms RTT = 2000 segments/s.
        let r_window = 40.0 / 0.02;
        // The grid runs at w/srtt, and srtt includes the receiver's ACK delay: the
        // random offsets must not change that rate.
        let tail: Vec<&Departure> = random.iter().filter(|x| x.t > 1_000_000_000).collect();
        let srtt = tail.iter().map(|d| d.srtt as f64).sum::<f64>() / tail.len() as f64;
        let r_grid = 40.0 / (srtt / 1e9);
        println!("random: {r_rand:.1}/s (grid 40/srtt = {r_grid:.1}/s), mean gap {mean_rand:.0} ns, cv {cv_rand:.3}; fq {r_fq:.1}/s");
        assert!((r_rand / r_grid - 1.0).abs() < 0.005, "random {r_rand}/s vs grid {r_grid}/s");
        assert!((r_rand / r_window - 1.0).abs() < 0.02, "random {r_rand}/s vs {r_window}/s");
        assert!((r_fq / r_window - 1.0).abs() < 0.02, "fq {r_fq}/s");
        assert!((mean_rand / (srtt / 40.0) - 1.0).abs() < 0.005, "mean gap {mean_rand} ns vs srtt/w");
        assert!(cv_rand > 0.3 && cv_rand < 0.5, "gap cv {cv_rand}, Algorithm 4: 0.40");
    }
}
