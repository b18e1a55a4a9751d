//! HighSpeed TCP (RFC 3649), ported from Linux `net/ipv4/tcp_highspeed.c`.
//!
//! Above Low_Window = 38 segments the per-RTT increase a(w) grows and the decrease
//! b(w) shrinks with cwnd, following RFC 3649 Appendix B's table, so that the response
//! function becomes w = 0.12 / p^0.835 instead of Reno's 1.2 / sqrt(p). Linux stores
//! the table as (cwnd upper bound, b(w) << 8); a(w) is the row index + 1 (the RFC
//! table's a(w) column is exactly 1, 2, 3, ...). The row index `ai` is moved up or down
//! one step at a time as cwnd crosses row bounds, as Linux does.
//!
//! Linux behaviours kept (they differ from a literal reading of the RFC):
//! - the additive increase adds a(w) to `snd_cwnd_cnt` once per `cong_avoid` call,
//!   whatever the number of segments that ACK covered, so with delayed ACKs the
//!   increase per RTT is about a(w)/2 (the RFC's response function assumes an ACK per
//!   segment);
//! - slow start leftovers are dropped (`tcp_slow_start`'s return value is ignored);
//! - the decrease uses the row of the last congestion-avoidance update, not of the
//!   cwnd at the loss.
//!
//! Limited Slow-Start (RFC 3742, which RFC 3649 recommends) is not part of the module.

use super::{AnyCc, CcContext, CongAvoid, CongestionOps, ParamSpec, Params};
use crate::error::ConfigError;

/// HighSpeed has no module parameters.
pub const PARAMS: &[ParamSpec] = &[];

/// RFC 3649 Appendix B: (upper cwnd bound of the row, b(w) * 256); a(w) = row + 1.
pub const AIMD: [(u32, u32); 72] = [
    (38, 128),
    (118, 112),
    (221, 104),
    (347, 98),
    (495, 93),
    (663, 89),
    (851, 86),
    (1058, 83),
    (1284, 81),
    (1529, 78),
    (1793, 76),
    (2076, 74),
    (2378, 72),
    (2699, 71),
    (3039, 69),
    (3399, 68),
    (3778, 66),
    (4177, 65),
    (4596, 64),
    (5036, 62),
    (5497, 61),
    (5979, 60),
    (6483, 59),
    (7009, 58),
    (7558, 57),
    (8130, 56),
    (8726, 55),
    (9346, 54),
    (9991, 53),
    (10661, 52),
    (11358, 52),
    (12082, 51),
    (12834, 50),
    (13614, 49),
    (14424, 48),
    (15265, 48),
    (16137, 47),
    (17042, 46),
    (17981, 45),
    (18955, 45),
    (19965, 44),
    (21013, 43),
    (22101, 43),
    (23230, 42),
    (24402, 41),
    (25618, 41),
    (26881, 40),
    (28193, 39),
    (29557, 39),
    (30975, 38),
    (32450, 38),
    (33986, 37),
    (35586, 36),
    (37253, 36),
    (38992, 35),
    (40808, 35),
    (42707, 34),
    (44694, 33),
    (46776, 33),
    (48961, 32),
    (51258, 32),
    (53677, 31),
    (56230, 30),
    (58932, 30),
    (61799, 29),
    (64851, 28),
    (68113, 28),
    (71617, 27),
    (75401, 26),
    (79517, 26),
    (84035, 25),
    (89053, 24),
];

/// `struct hstcp`: the current table row.
#[derive(Clone, Debug, Default)]
pub struct HighSpeed {
    pub ai: usize,
}

pub fn build(_p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    Ok(AnyCc::HighSpeed(HighSpeed::default()))
}

impl HighSpeed {
    /// a(w): segments added per RTT at the current row.
    pub fn a(&self) -> u32 {
        self.ai as u32 + 1
    }

    /// Move `ai` so that AIMD[ai-1].0 < cwnd <= AIMD[ai].0 (clamped to the table).
    fn update_row(&mut self, cwnd: u32) {
        if cwnd > AIMD[self.ai].0 {
            while cwnd > AIMD[self.ai].0 && self.ai < AIMD.len() - 1 {
                self.ai += 1;
            }
        } else {
            while self.ai > 0 && cwnd <= AIMD[self.ai - 1].0 {
                self.ai -= 1;
            }
        }
    }
}

impl CongestionOps for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }

    /// `hstcp_init`: keep `cwnd * md` within 32 bits.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        self.ai = 0;
        cx.sk.cwnd_clamp = cx.sk.cwnd_clamp.min(u32::MAX / 128);
    }

    /// `hstcp_ssthresh`: cwnd (1 - b(w)).
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        let cwnd = cx.sk.cwnd;
        (cwnd - ((cwnd as u64 * AIMD[self.ai].1 as u64) >> 8) as u32).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }
}

impl CongAvoid for HighSpeed {
    /// `hstcp_cong_avoid`: cwnd += a(w)/cwnd per ACK.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let sk = &mut *cx.sk;
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            sk.slow_start(acked);
            return;
        }
        self.update_row(sk.cwnd);
        if sk.cwnd < sk.cwnd_clamp {
            sk.cwnd_cnt += self.a();
            if sk.cwnd_cnt >= sk.cwnd {
                sk.cwnd_cnt -= sk.cwnd;
                sk.cwnd += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::AckClock;

    #[test]
    fn table_is_monotone_and_matches_rfc_endpoints() {
        assert!(AIMD.windows(2).all(|r| r[0].0 < r[1].0 && r[0].1 >= r[1].1));
        // RFC 3649: Low_Window 38 with b = 0.5; High_Window 83000 with b = 0.1.
        assert_eq!(AIMD[0], (38, 128));
        let hi = AIMD.iter().position(|r| r.0 >= 83000).unwrap();
        assert!((AIMD[hi].1 as f64 / 256.0 - 0.1).abs() < 0.005);
    }

    #[test]
    fn reno_below_low_window() {
        let mut ck = AckClock::new(30, 10, 50_000);
        let mut hs = HighSpeed::default();
        hs.init(&mut ck.cx());
        ck.round(&mut hs);
        assert_eq!(ck.sk.cwnd, 31);
        // cwnd - (cwnd * 128 >> 8): 31 - 15 = 16 (Reno's 31 >> 1 would give 15).
        assert_eq!(hs.ssthresh(&mut ck.cx()), 16);
    }

    #[test]
    fn increase_per_rtt_is_a_of_w() {
        // cwnd 1000 is in row 7 (851 < w <= 1058): a = 8 per RTT.
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut hs = HighSpeed::default();
        hs.init(&mut ck.cx());
        ck.round(&mut hs);
        assert_eq!((hs.ai, hs.a()), (7, 8));
        assert!((ck.sk.cwnd as i64 - 1008).abs() <= 1, "{}", ck.sk.cwnd);
    }

    #[test]
    fn decrease_follows_the_table_md() {
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut hs = HighSpeed::default();
        for (cwnd, want_b) in [(30u32, 128u32), (100, 112), (1000, 83), (5000, 62), (50000, 32), (100000, 24)] {
            ck.sk.cwnd = cwnd;
            hs.update_row(cwnd);
            assert_eq!(AIMD[hs.ai].1, want_b, "row for cwnd {cwnd}");
            let ss = hs.ssthresh(&mut ck.cx());
            assert_eq!(ss, cwnd - cwnd * want_b / 256);
            let ratio = ss as f64 / cwnd as f64;
            assert!((ratio - (1.0 - want_b as f64 / 256.0)).abs() < 1.0 / cwnd as f64);
        }
        // The row moves down one step at a time as cwnd falls.
        hs.update_row(200);
        assert_eq!(hs.ai, 2);
    }
}
