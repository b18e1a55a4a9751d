//! Test-only driver for the window hooks: an idealised ACK clock on a path with a
//! fixed RTT and no queue. Every round the sender has `cwnd` segments out; their ACKs
//! (one segment each, no delayed ACKs) arrive spread evenly over the next RTT, and each
//! ACK calls `in_ack_event`, `pkts_acked` then `cong_avoid` the way `tcp_ack` does. A loss event runs
//! the hooks in the order `tcp_enter_recovery`/`tcp_end_cwnd_reduction` call them and
//! leaves cwnd at the new ssthresh (what PRR converges to).

use super::{AckFlags, AckSample, CaEvent, CaState, CcContext, CongAvoid, SockState};
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
    /// one RTT with cwnd = ssthresh, `set_state(Open)`, `CompleteCwr`. Returns (cwnd
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
        self.sk.cwnd = ss;
        cc.set_state(&mut self.cx(), CaState::Open);
        self.sk.ca_state = CaState::Open;
        cc.cwnd_event(&mut self.cx(), CaEvent::CompleteCwr);
        (before, self.sk.cwnd)
    }
}
