//! TCP Westwood+ (Mascolo et al., MobiCom 2001; Grieco, Mascolo, CCR 2004), ported
//! from Linux `net/ipv4/tcp_westwood.c`.
//!
//! Probing is Reno's. The difference is what a loss does: the sender keeps an
//! end-to-end bandwidth estimate (BWE) from the ACKed bytes, sampled once per RTT (but
//! over at least 50 ms) and smoothed by two cascaded 7/8 low-pass filters (Westwood+'s
//! per-RTT sampling, instead of the original per-ACK filter that ACK compression
//! fooled). After a loss, ssthresh = BWE x RTTmin / MSS, the window that just fills
//! the pipe, and on leaving recovery cwnd = ssthresh too; after an RTO ssthresh is set
//! the same way (cwnd restarts at 1 as usual).
//!
//! As Linux: `tcp_reno_ssthresh` still runs when recovery starts (PRR heads for
//! cwnd/2 during recovery) and the BWE-based value replaces it at
//! `CA_EVENT_COMPLETE_CWR`; BWE is bytes per jiffy and RTTs are jiffies (HZ = 1000
//! here), so BWE x RTTmin is in bytes; duplicate ACKs count one MSS each towards the
//! sample (`westwood_acked_count`) and are then deducted from the cumulative ACK that
//! covers them; RTTmin is re-learnt from the next sample after an RTO.

use super::cubic::{jiffies32, usecs_to_jiffies, HZ};
use super::{AckFlags, AckSample, AnyCc, CaEvent, CcContext, CongAvoid, CongestionOps, ParamSpec, Params};
use crate::error::ConfigError;
use crate::time::Nanos;

/// Westwood+ has no module parameters.
pub const PARAMS: &[ParamSpec] = &[];

/// `TCP_WESTWOOD_RTT_MIN`: shortest sampling interval (50 ms).
const RTT_MIN: u32 = HZ / 20;
/// `TCP_WESTWOOD_INIT_RTT`: RTT until the first sample (20 s, "maybe too
/// conservative").
const INIT_RTT: u32 = 20 * HZ;

/// `struct westwood`.
#[derive(Clone, Debug)]
pub struct Westwood {
    /// First filter stage, bytes per jiffy.
    pub bw_ns_est: u32,
    /// Bandwidth estimate, bytes per jiffy.
    pub bw_est: u32,
    rtt_win_sx: u32,
    /// Bytes ACKed in the current sampling interval.
    bk: u32,
    snd_una: u64,
    cumul_ack: u32,
    accounted: u32,
    /// Last RTT sample and minimum, jiffies.
    pub rtt: u32,
    pub rtt_min: u32,
    first_ack: bool,
    reset_rtt_min: bool,
}

impl Westwood {
    pub fn new() -> Self {
        Westwood {
            bw_ns_est: 0,
            bw_est: 0,
            rtt_win_sx: 0,
            bk: 0,
            snd_una: 0,
            cumul_ack: 0,
            accounted: 0,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            first_ack: true,
            reset_rtt_min: true,
        }
    }

    /// `westwood_do_filter`: 7/8 old + 1/8 new.
    fn filter(a: u32, b: u32) -> u32 {
        ((7 * a as u64 + b as u64) >> 3) as u32
    }

    /// `westwood_filter`: one bandwidth sample over `delta` jiffies.
    fn sample(&mut self, delta: u32) {
        let s = self.bk / delta;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = s;
            self.bw_est = s;
        } else {
            self.bw_ns_est = Self::filter(self.bw_ns_est, s);
            self.bw_est = Self::filter(self.bw_est, self.bw_ns_est);
        }
    }

    /// `westwood_update_window`: close the sampling interval once an RTT (>= 50 ms)
    /// has passed.
    fn update_window(&mut self, now: Nanos, snd_una: u64) {
        let now = jiffies32(now);
        let delta = now.wrapping_sub(self.rtt_win_sx) as i32;
        if self.first_ack {
            self.snd_una = snd_una;
            self.first_ack = false;
        }
        if self.rtt != 0 && delta > self.rtt.max(RTT_MIN) as i32 {
            self.sample(delta as u32);
            self.bk = 0;
            self.rtt_win_sx = now;
        }
    }

    fn update_rtt_min(&mut self) {
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
    }

    /// `westwood_acked_count`: bytes this (slow-path) ACK accounts for.
    fn acked_count(&mut self, snd_una: u64, mss: u32) -> u32 {
        self.cumul_ack = snd_una.wrapping_sub(self.snd_una) as u32;
        // A duplicate ACK: one segment left the network.
        if self.cumul_ack == 0 {
            self.accounted += mss;
            self.cumul_ack = mss;
        }
        // A cumulative ACK after duplicates: do not count them twice.
        if self.cumul_ack > mss {
            if self.accounted >= self.cumul_ack {
                self.accounted -= self.cumul_ack;
                self.cumul_ack = mss;
            } else {
                self.cumul_ack -= self.accounted;
                self.accounted = 0;
            }
        }
        self.snd_una = snd_una;
        self.cumul_ack
    }

    /// `tcp_westwood_bw_rttmin`: the pipe-filling window, segments.
    pub fn bw_rttmin(&self, mss: u32) -> u32 {
        ((self.bw_est as u64 * self.rtt_min as u64 / mss.max(1) as u64).min(u32::MAX as u64) as u32).max(2)
    }
}

impl Default for Westwood {
    fn default() -> Self {
        Westwood::new()
    }
}

pub fn build(_p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    Ok(AnyCc::Westwood(Westwood::new()))
}

impl CongestionOps for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }

    /// `tcp_westwood_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Westwood::new();
        self.rtt_win_sx = jiffies32(cx.now);
        self.snd_una = cx.sk.snd_una;
    }

    /// `tcp_reno_ssthresh`; replaced by BWE x RTTmin when the reduction completes.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (cx.sk.cwnd >> 1).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// `tcp_westwood_event`.
    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        match ev {
            CaEvent::CompleteCwr => {
                let w = self.bw_rttmin(cx.sk.mss);
                cx.sk.ssthresh = w;
                cx.sk.cwnd = w.min(cx.sk.cwnd_clamp);
            }
            CaEvent::Loss => {
                cx.sk.ssthresh = self.bw_rttmin(cx.sk.mss);
                self.reset_rtt_min = true;
            }
            _ => {}
        }
    }

    /// `tcp_westwood_ack`: count ACKed bytes into the current sample.
    fn in_ack_event(&mut self, cx: &mut CcContext<'_>, flags: AckFlags) {
        let snd_una = cx.sk.snd_una;
        self.update_window(cx.now, snd_una);
        if flags.has(AckFlags::SLOWPATH) {
            let n = self.acked_count(snd_una, cx.sk.mss);
            self.bk = self.bk.wrapping_add(n);
        } else {
            // westwood_fast_bw
            self.bk = self.bk.wrapping_add(snd_una.wrapping_sub(self.snd_una) as u32);
            self.snd_una = snd_una;
        }
        self.update_rtt_min();
    }

    /// `tcp_westwood_pkts_acked`: the last RTT sample.
    fn pkts_acked(&mut self, _cx: &mut CcContext<'_>, sample: &AckSample) {
        if sample.rtt_us > 0 {
            self.rtt = usecs_to_jiffies(sample.rtt_us.min(u32::MAX as i64) as u32);
        }
    }
}

impl CongAvoid for Westwood {
    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        super::reno::Reno.cong_avoid(cx, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::{AckClock, MSS};
    use crate::tcp::cc::CaState;

    #[test]
    fn bandwidth_estimate_converges_to_the_ack_rate() {
        // 100 segments per 100 ms RTT: 1448 bytes per ms.
        let mut ck = AckClock::new(100, 10, 100_000);
        let mut w = Westwood::new();
        w.init(&mut ck.cx());
        let mut est = vec![];
        for _ in 0..40 {
            ck.round(&mut w);
            ck.sk.cwnd = 100;
            est.push(w.bw_est);
        }
        println!("BWE per RTT (bytes/ms): {est:?}");
        assert_eq!(w.rtt_min, 100);
        // One sample per RTT-long interval: the filter moved ~40 times.
        let want = 100 * MSS / 100;
        assert!((w.bw_est as i64 - want as i64).abs() <= (want / 50) as i64, "{} vs {want}", w.bw_est);
        assert!((w.bw_rttmin(MSS) as i64 - 100).abs() <= 2);
    }

    #[test]
    fn filter_reacts_per_rtt_not_per_ack() {
        // Halving the rate: the two-stage 7/8 filter needs many RTTs to follow.
        let mut ck = AckClock::new(100, 10, 100_000);
        let mut w = Westwood::new();
        w.init(&mut ck.cx());
        for _ in 0..40 {
            ck.round(&mut w);
            ck.sk.cwnd = 100;
        }
        let full = w.bw_est;
        ck.sk.cwnd = 50;
        ck.round(&mut w);
        ck.sk.cwnd = 50;
        ck.round(&mut w);
        // After two RTTs at half rate: first stage has moved ~2/8 of the way, the
        // second less.
        assert!(w.bw_est > full * 9 / 10, "{} vs {full}", w.bw_est);
        for _ in 0..60 {
            ck.round(&mut w);
            ck.sk.cwnd = 50;
        }
        assert!((w.bw_est as i64 - full as i64 / 2).abs() <= full as i64 / 25, "{} vs {}", w.bw_est, full / 2);
    }

    #[test]
    fn after_recovery_cwnd_is_bwe_times_rtt_min() {
        let mut ck = AckClock::new(100, 10, 100_000);
        let mut w = Westwood::new();
        w.init(&mut ck.cx());
        for _ in 0..40 {
            ck.round(&mut w);
            ck.sk.cwnd = 100;
        }
        // Reno would halve; Westwood+ restores the pipe size measured: ~100.
        let (before, after) = ck.loss(&mut w);
        println!("loss at {before}: ssthresh = cwnd = {after}");
        assert!((after as i64 - 100).abs() <= 2);
        assert_eq!(ck.sk.ssthresh, after);
        // RTO: ssthresh from the estimate, RTTmin re-learnt.
        w.cwnd_event(&mut ck.cx(), CaEvent::Loss);
        assert_eq!(ck.sk.ssthresh, w.bw_rttmin(MSS));
        // The next ACK takes RTTmin from the latest sample, even if larger.
        let s = AckSample { pkts_acked: 1, rtt_us: 150_000, in_flight: 0 };
        w.pkts_acked(&mut ck.cx(), &s);
        ck.sk.ca_state = CaState::Open;
        w.in_ack_event(&mut ck.cx(), AckFlags(0));
        assert_eq!(w.rtt_min, 150);
    }

    #[test]
    fn duplicate_acks_count_once() {
        let mut ck = AckClock::new(100, 10, 100_000);
        let mut w = Westwood::new();
        w.init(&mut ck.cx());
        w.first_ack = false;
        w.snd_una = 0;
        ck.sk.snd_una = 0;
        let slow = AckFlags(AckFlags::SLOWPATH);
        for _ in 0..3 {
            w.in_ack_event(&mut ck.cx(), slow); // dupacks: one MSS each
        }
        assert_eq!(w.bk, 3 * MSS);
        ck.sk.snd_una = 5 * MSS as u64; // cumulative ACK for 5 segments
        w.in_ack_event(&mut ck.cx(), slow);
        assert_eq!(w.bk, 5 * MSS);
    }
}
