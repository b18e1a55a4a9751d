//! Reno congestion avoidance, as Linux's built-in `reno` (net/ipv4/tcp_cong.c:
//! `tcp_reno_cong_avoid`, `tcp_reno_ssthresh`, `tcp_reno_undo_cwnd`).
//!
//! Differences from the RFC 5681 textbook that Linux has and this copies:
//! - growth happens only while cwnd-limited (`tcp_is_cwnd_limited`), so an
//!   application-limited sender keeps its window;
//! - slow start counts ACKed *segments* (a delayed ACK for two segments adds two), and
//!   the segments left over when ssthresh is crossed go into congestion avoidance
//!   in the same ACK;
//! - additive increase keeps its fraction in `snd_cwnd_cnt` (+1 after cwnd ACKed
//!   segments) rather than adding MSS*MSS/cwnd bytes.
//!
//! Loss recovery is not part of this module: with SACK the socket runs SACK/RACK
//! recovery, without it NewReno (RFC 6582). That is why `newreno` is registered as the
//! same algorithm.

use super::{AnyCc, CcContext, CongAvoid, CongestionOps, ParamSpec, Params};
use crate::error::ConfigError;

/// Reno has no tunables.
pub const PARAMS: &[ParamSpec] = &[];

/// Reno keeps no private state.
#[derive(Clone, Debug, Default)]
pub struct Reno;

pub fn build(_p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    Ok(AnyCc::Reno(Reno))
}

impl CongestionOps for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// `tcp_reno_ssthresh`: half the window, at least 2.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (cx.sk.cwnd >> 1).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }
}

impl CongAvoid for Reno {
    /// `tcp_reno_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        cx.sk.reno_cong_avoid(acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::tcp::cc::SockState;
    use rand::SeedableRng;

    fn run(sk: &mut SockState, acked: u32) {
        let mut rng = Rng::seed_from_u64(1);
        let mut cx = CcContext { now: 0, sk, rng: &mut rng };
        Reno.cong_avoid(&mut cx, acked);
    }

    #[test]
    fn ssthresh_halves_with_floor_two() {
        let mut rng = Rng::seed_from_u64(1);
        for (cwnd, want) in [(20, 10), (3, 2), (1, 2)] {
            let mut sk = SockState::new(1448, cwnd);
            let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
            assert_eq!(Reno.ssthresh(&mut cx), want);
        }
    }

    #[test]
    fn slow_start_crossing_ssthresh_continues_in_avoidance() {
        let mut sk = SockState::new(1448, 10);
        sk.ssthresh = 11;
        sk.is_cwnd_limited = true;
        // 2 segments ACKed: one takes cwnd to ssthresh, one is AI credit.
        run(&mut sk, 2);
        assert_eq!((sk.cwnd, sk.cwnd_cnt), (11, 1));
    }

    #[test]
    fn no_growth_when_not_cwnd_limited() {
        let mut sk = SockState::new(1448, 10);
        sk.max_packets_out = 3;
        run(&mut sk, 3);
        assert_eq!(sk.cwnd, 10);
    }
}
