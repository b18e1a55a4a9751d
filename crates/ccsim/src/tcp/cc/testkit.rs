//! Test-only driver for the window hooks: an idealised ACK clock on a path with a
//! fixed RTT and no queue. Every round the sender has `cwnd` segments out; their ACKs
//! (one segment each, no delayed ACKs) arrive spread evenly over the next RTT, and each
//! ACK calls `in_ack_event`, `pkts_acked` then `cong_avoid` the way `tcp_ack` does. A loss event runs
//! the hooks in the order `tcp_enter_recovery`/`tcp_end_cwnd_reduction` call them and
//! leaves cwnd at the new ssthresh (what PRR converges to).

use super::{AckFlags, AckSample, CaEvent, CaState, CcContext, CongAvoid, CongestionOps, SockState};
use crate::rng::Rng;
use crate::time::Nanos;
use rand::SeedableRng;

pub const MSS: u32 = 1448;

pub struct AckClock {
    pub sk: SockState,
    pub rng: Rng,
    pub now: Nanos,
    /// RTT of every sample, µs (tests may change it between rounds).
    pub rtt_us: u32,
}

impl AckClock {
    /// Starts at t = 1 s in congestion avoidance (`ssthresh` < `cwnd` unless given
    /// otherwise), cwnd-limited, with the RTT estimator already converged.
    pub fn new(cwnd: u32, ssthresh: u32, rtt_us: u32) -> Self {
        let mut sk = SockState::new(MSS, cwnd);
        sk.ssthresh = ssthresh;
        sk.is_cwnd_limited = true;
        sk.srtt_us = rtt_us;
        sk.min_rtt_us = rtt_us;
        sk.snd_nxt = cwnd as u64 * MSS as u64;
        AckClock { sk, rng: Rng::seed_from_u64(7), now: 1_000_000_000, rtt_us }
    }

    pub fn cx(&mut self) -> CcContext<'_> {
        CcContext { now: self.now, sk: &mut self.sk, rng: &mut self.rng }
    }

    /// One ACK for `acked` segments at the current time.
    pub fn ack<C: CongAvoid>(&mut self, cc: &mut C, acked: u32) {
        self.sk.snd_una += acked as u64 * MSS as u64;
        self.sk.srtt_us = self.rtt_us;
        self.sk.min_rtt_us = self.sk.min_rtt_us.min(self.rtt_us);
        let in_flight = self.sk.cwnd * MSS;
        let s = AckSample { pkts_acked: acked, rtt_us: self.rtt_us as i64, in_flight };
        // A pure cumulative ACK: Linux's fast path (no CA_ACK_SLOWPATH).
        cc.in_ack_event(&mut self.cx(), AckFlags(AckFlags::WIN_UPDATE));
        cc.pkts_acked(&mut self.cx(), &s);
        cc.cong_avoid(&mut self.cx(), acked);
        self.sk.snd_nxt = self.sk.snd_una + self.sk.cwnd as u64 * MSS as u64;
        self.sk.in_flight = self.sk.cwnd;
        self.sk.packets_out = self.sk.cwnd;
        self.sk.max_packets_out = self.sk.cwnd;
    }

    /// One RTT: the ACKs for the `cwnd` segments sent a round ago, evenly spaced.
    /// Calls `each(now, cwnd)` after every ACK.
    pub fn round_with<C: CongAvoid>(&mut self, cc: &mut C, mut each: impl FnMut(Nanos, u32)) {
        let n = self.sk.cwnd.max(1);
        let rtt_ns = self.rtt_us as u64 * 1000;
        let start = self.now;
        for i in 1..=n as u64 {
            self.now = start + rtt_ns * i / n as u64;
            self.ack(cc, 1);
            each(self.now, self.sk.cwnd);
        }
    }

    pub fn round<C: CongAvoid>(&mut self, cc: &mut C) {
        self.round_with(cc, |_, _| {});
    }

    /// A fast-retransmit loss event: `ssthresh`, `set_state(Recovery)`, recovery lasting
    /// one RTT, cwnd = ssthresh with `CompleteCwr`, `set_state(Open)`. Returns (cwnd
    /// before, cwnd after).
    pub fn loss<C: CongAvoid>(&mut self, cc: &mut C) -> (u32, u32) {
        let before = self.sk.cwnd;
        self.sk.prior_cwnd = before;
        self.sk.cwnd_cnt = 0;
        // tcp_enter_recovery: tcp_init_cwnd_reduction (ssthresh) before the state change.
        let ss = cc.ssthresh(&mut self.cx());
        self.sk.ssthresh = ss;
        cc.set_state(&mut self.cx(), CaState::Recovery);
        self.sk.ca_state = CaState::Recovery;
        self.now += self.rtt_us as u64 * 1000;
        // tcp_fastretrans_alert: tcp_end_cwnd_reduction, then tcp_try_to_open.
        self.sk.cwnd = ss;
        cc.cwnd_event(&mut self.cx(), CaEvent::CompleteCwr);
        cc.set_state(&mut self.cx(), CaState::Open);
        self.sk.ca_state = CaState::Open;
        (before, self.sk.cwnd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::{registry, AckFlags, AnyCc, Params, INFINITE_SSTHRESH};
    use rand::Rng as _;
    use std::collections::BTreeMap;

    /// Random ACK / loss / RTO / idle / undo sequences through every registered
    /// window-based algorithm with default parameters: no panic (overflow checks are
    /// on in tests), cwnd >= 1, ssthresh >= 2, cwnd within the clamp.
    #[test]
    fn every_window_algorithm_survives_random_hook_sequences() {
        let values = BTreeMap::new();
        for spec in registry() {
            let p = Params { spec, values: &values, field: "t" };
            for seed in 0..4u64 {
                let mut cc: AnyCc = (spec.build)(&p).unwrap();
                if cc.has_cong_control() {
                    continue;
                }
                let mut r = Rng::seed_from_u64(seed);
                let mut ck = AckClock::new(10, INFINITE_SSTHRESH, 20_000);
                ck.now = 0;
                cc.ops().init(&mut ck.cx());
                for step in 0..20_000 {
                    let op = r.random_range(0..1000);
                    ck.now += r.random_range(0..2_000_000u64);
                    if op < 960 {
                        let acked = r.random_range(1..4u32);
                        ck.rtt_us = r.random_range(1_000..400_000);
                        ck.sk.snd_una += acked as u64 * MSS as u64;
                        let s = AckSample { pkts_acked: acked, rtt_us: ck.rtt_us as i64, in_flight: ck.sk.cwnd * MSS };
                        let slow = if op % 7 == 0 { AckFlags::SLOWPATH } else { 0 };
                        cc.ops().in_ack_event(&mut ck.cx(), AckFlags(slow));
                        cc.ops().pkts_acked(&mut ck.cx(), &s);
                        cc.cong_avoid(&mut ck.cx(), acked);
                        ck.sk.snd_nxt = ck.sk.snd_una + ck.sk.cwnd as u64 * MSS as u64;
                    } else if op < 980 {
                        let (_, after) = ck.loss(&mut cc_wrapper(&mut cc));
                        assert!(after >= 2, "{}: step {step}", spec.name);
                    } else if op < 990 {
                        // RTO: tcp_enter_loss.
                        ck.sk.prior_cwnd = ck.sk.cwnd;
                        let ss = cc.ops().ssthresh(&mut ck.cx());
                        assert!(ss >= 2, "{}: ssthresh {ss}", spec.name);
                        ck.sk.ssthresh = ss;
                        cc.ops().cwnd_event(&mut ck.cx(), CaEvent::Loss);
                        cc.ops().set_state(&mut ck.cx(), CaState::Loss);
                        ck.sk.ca_state = CaState::Loss;
                        ck.sk.cwnd = 1;
                        cc.ops().set_state(&mut ck.cx(), CaState::Open);
                        ck.sk.ca_state = CaState::Open;
                    } else if op < 995 {
                        ck.sk.lsndtime = ck.now;
                        ck.now += r.random_range(0..5_000_000_000u64);
                        cc.ops().cwnd_event(&mut ck.cx(), CaEvent::TxStart);
                    } else {
                        let c = cc.ops().undo_cwnd(&mut ck.cx());
                        ck.sk.cwnd = c;
                    }
                    // What the sender's `with_cc` enforces after every hook.
                    ck.sk.cwnd = ck.sk.cwnd.max(1);
                    assert!(ck.sk.cwnd <= ck.sk.cwnd_clamp, "{}: cwnd above clamp", spec.name);
                    assert!(ck.sk.ssthresh >= 2, "{}: ssthresh {}", spec.name, ck.sk.ssthresh);
                    ck.sk.in_flight = ck.sk.cwnd;
                    ck.sk.max_packets_out = ck.sk.cwnd;
                    ck.sk.is_cwnd_limited = r.random_range(0..10) != 0;
                }
            }
        }
    }

    /// `AckClock::loss` takes a `CongAvoid`; route it to an `AnyCc`.
    struct Wrap<'a>(&'a mut AnyCc);
    fn cc_wrapper(cc: &mut AnyCc) -> Wrap<'_> {
        Wrap(cc)
    }
    impl CongestionOps for Wrap<'_> {
        fn name(&self) -> &'static str {
            self.0.name()
        }
        fn init(&mut self, cx: &mut CcContext<'_>) {
            self.0.ops().init(cx)
        }
        fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
            self.0.ops().ssthresh(cx)
        }
        fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
            self.0.ops().undo_cwnd(cx)
        }
        fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
            self.0.ops().set_state(cx, new)
        }
        fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
            self.0.ops().cwnd_event(cx, ev)
        }
    }
    impl CongAvoid for Wrap<'_> {
        fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
            self.0.cong_avoid(cx, acked)
        }
    }
}
