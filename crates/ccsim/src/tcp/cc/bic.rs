//! BIC-TCP (Xu, Harfoush, Rhee, INFOCOM 2004), ported from Linux `net/ipv4/tcp_bic.c`.
//!
//! After a loss at W_max the window is cut to beta W_max (beta = 819/1024 = 0.8) and
//! grows by binary search towards W_max: each RTT it adds (W_max - cwnd)/B with B = 4,
//! but at most `max_increment` (16) segments and, within B segments of W_max, only
//! B/`smooth_part` = 0.2 per RTT. Past W_max it probes for a new maximum ("max
//! probing"): slowly at first (0.2/RTT within B), then (cwnd - W_max)/(B - 1) per RTT,
//! then linearly at `max_increment`. At or below `low_window` (14) it is Reno (+1/RTT,
//! halve on loss).
//!
//! Linux details kept: the increase is expressed as `cnt` (ACKed segments per +1) and
//! divided by the measured segments-per-ACK ratio (`delayed_ack`, x16, EWMA 1/16,
//! starting at 2). That scaling dates from when `cong_avoid` counted ACKs; now that
//! `tcp_cong_avoid_ai` counts segments it makes Linux BIC grow about twice as fast as
//! the paper's figures, both with delayed ACKs (ratio 2) and without (the EWMA's
//! integer dead band stops at 31/16). Also: `cnt` is recomputed at most every HZ/32
//! while cwnd is unchanged; before the first loss growth is at least 5% per RTT; fast
//! convergence lowers W_max to cwnd (1 + beta)/2 when a loss comes below the previous
//! maximum. The paper's S_min is not a parameter in Linux (it is implied by
//! `smooth_part`).

use super::cubic::jiffies32_at;
use super::{AckSample, AnyCc, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;
use crate::time::Nanos;

const BICTCP_BETA_SCALE: u32 = 1024;
/// Binary search goes to (max + min) / B.
const BICTCP_B: u32 = 4;
/// `delayed_ack` is the segments-per-ACK ratio << 4.
const ACK_RATIO_SHIFT: u32 = 4;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "fast_convergence",
        default: ParamValue::Bool(true),
        doc: "lower W_max to cwnd*(1+beta)/2 when a loss comes below the previous W_max",
    },
    ParamSpec {
        name: "max_increment",
        default: ParamValue::Int(16),
        doc: "limit on the increase per RTT during binary search and max probing (segments)",
    },
    ParamSpec { name: "low_window", default: ParamValue::Int(14), doc: "at or below this cwnd BIC is Reno (segments)" },
    ParamSpec { name: "beta", default: ParamValue::Int(819), doc: "multiplicative decrease, /1024 (819 = 0.8)" },
    ParamSpec {
        name: "initial_ssthresh",
        default: ParamValue::Int(0),
        doc: "initial ssthresh in segments (0 = infinite)",
    },
    ParamSpec {
        name: "smooth_part",
        default: ParamValue::Int(20),
        doc: "RTTs to spend within B segments of W_max (increase B/smooth_part per RTT)",
    },
];

#[derive(Clone, Debug)]
pub struct BicParams {
    pub fast_convergence: bool,
    pub max_increment: u32,
    pub low_window: u32,
    pub beta: u32,
    pub initial_ssthresh: u32,
    pub smooth_part: u32,
}

impl Default for BicParams {
    fn default() -> Self {
        BicParams {
            fast_convergence: true,
            max_increment: 16,
            low_window: 14,
            beta: 819,
            initial_ssthresh: 0,
            smooth_part: 20,
        }
    }
}

/// `struct bictcp`.
#[derive(Clone, Debug)]
pub struct Bic {
    pub p: BicParams,
    pub cnt: u32,
    pub last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u32,
    epoch_start: u32,
    /// Segments per ACK << 4.
    pub delayed_ack: u32,
}

impl Bic {
    pub fn new(p: BicParams) -> Self {
        Bic {
            p,
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        }
    }

    /// `bictcp_reset`.
    fn reset(&mut self) {
        *self = Bic::new(self.p.clone());
    }

    /// `bictcp_update`: ACKed segments per +1 segment for the current region.
    fn update(&mut self, now: Nanos, hz: u32, cwnd: u32) {
        let jiffies = jiffies32_at(now, hz);
        if self.last_cwnd == cwnd && (jiffies.wrapping_sub(self.last_time) as i32) <= (hz / 32) as i32 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = jiffies;
        if self.epoch_start == 0 {
            self.epoch_start = jiffies;
        }

        let p = &self.p;
        if cwnd <= p.low_window {
            self.cnt = cwnd;
            return;
        }
        let max_inc = p.max_increment.max(1);
        self.cnt = if cwnd < self.last_max_cwnd {
            // Binary search: aim (W_max - cwnd)/B closer each RTT.
            let dist = (self.last_max_cwnd - cwnd) / BICTCP_B;
            if dist > max_inc {
                cwnd / max_inc
            } else if dist <= 1 {
                cwnd * p.smooth_part / BICTCP_B
            } else {
                cwnd / dist
            }
        } else if cwnd < self.last_max_cwnd + BICTCP_B {
            // Max probing, just above the old maximum: slowly.
            cwnd * p.smooth_part / BICTCP_B
        } else if cwnd < self.last_max_cwnd + max_inc * (BICTCP_B - 1) {
            // Then faster and faster: (cwnd - W_max)/(B - 1) per RTT.
            cwnd * (BICTCP_B - 1) / (cwnd - self.last_max_cwnd)
        } else {
            cwnd / max_inc
        };

        // No loss yet (or after an RTO): at least 5% per RTT.
        if self.last_max_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }

        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1);
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let beta = p.int("beta")?;
    if !(1..1024).contains(&beta) {
        return Err(ConfigError::new(
            format!("{}.params.beta", p.field),
            format!("{beta} outside 1..=1023 (beta/1024 < 1)"),
        ));
    }
    let nonneg = |name: &str| -> Result<u32, ConfigError> {
        let v = p.int(name)?;
        u32::try_from(v)
            .map_err(|_| ConfigError::new(format!("{}.params.{name}", p.field), format!("{v} must be >= 0")))
    };
    Ok(AnyCc::Bic(Bic::new(BicParams {
        fast_convergence: p.bool("fast_convergence")?,
        max_increment: nonneg("max_increment")?.max(1),
        low_window: nonneg("low_window")?,
        beta: beta as u32,
        initial_ssthresh: nonneg("initial_ssthresh")?,
        smooth_part: nonneg("smooth_part")?,
    })))
}

impl CongestionOps for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }

    /// `bictcp_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        self.reset();
        if self.p.initial_ssthresh != 0 {
            cx.sk.ssthresh = self.p.initial_ssthresh;
        }
    }

    /// `bictcp_recalc_ssthresh`: Reno's half at or below `low_window`, else beta.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        let cwnd = cx.sk.cwnd;
        self.epoch_start = 0;
        self.last_max_cwnd = if cwnd < self.last_max_cwnd && self.p.fast_convergence {
            ((cwnd as u64 * (BICTCP_BETA_SCALE + self.p.beta) as u64) / (2 * BICTCP_BETA_SCALE) as u64) as u32
        } else {
            cwnd
        };
        if cwnd <= self.p.low_window {
            (cwnd >> 1).max(2)
        } else {
            (((cwnd as u64 * self.p.beta as u64) / BICTCP_BETA_SCALE as u64) as u32).max(2)
        }
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// `bictcp_state`: an RTO forgets W_max.
    fn set_state(&mut self, _cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Loss {
            self.reset();
        }
    }

    /// `bictcp_acked`: segments-per-ACK ratio, EWMA 1/16, only in Open.
    fn pkts_acked(&mut self, cx: &mut CcContext<'_>, sample: &AckSample) {
        if cx.sk.ca_state == CaState::Open {
            self.delayed_ack =
                self.delayed_ack.wrapping_add(sample.pkts_acked).wrapping_sub(self.delayed_ack >> ACK_RATIO_SHIFT);
        }
    }
}

impl CongAvoid for Bic {
    /// `bictcp_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let sk = &mut *cx.sk;
        let acked = sk.acked_for_cong_avoid(acked);
        if acked == 0 {
            return;
        }
        self.update(cx.now, sk.hz, sk.cwnd);
        sk.cong_avoid_ai(self.cnt, acked);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::AckClock;

    /// Loss at `w_max`, then per-RTT cwnd for `rounds` RTTs.
    fn epoch(w_max: u32, rounds: usize) -> (u32, Vec<u32>, u32) {
        let mut ck = AckClock::new(w_max, 10, 100_000);
        let mut b = Bic::new(BicParams::default());
        b.init(&mut ck.cx());
        ck.sk.ssthresh = 10;
        for _ in 0..3 {
            ck.round(&mut b); // converge delayed_ack to 1 segment per ACK
        }
        ck.sk.cwnd = w_max;
        let (_, after) = ck.loss(&mut b);
        let mut w = vec![after];
        for _ in 0..rounds {
            ck.round(&mut b);
            w.push(ck.sk.cwnd);
        }
        (after, w, b.delayed_ack)
    }

    #[test]
    fn binary_search_then_max_probing() {
        let w_max = 1000;
        let (after, w, ratio) = epoch(w_max, 60);
        assert_eq!(after, 799); // 1000 * 819 / 1024
                                // Linux divides cnt by the measured segments-per-ACK ratio, an EWMA whose
                                // integer dead band leaves it at 31/16 (not 1) with an ACK per segment, coming
                                // down from its initial 2: every increase below is that much faster than the
                                // paper's (tcp_cong_avoid_ai already counts segments; the ratio dates from when
                                // it counted ACKs).
        assert_eq!(ratio, 31);
        let s = ratio as f64 / 16.0;
        println!("cwnd per RTT: {w:?}");
        let mut phases = [0; 5];
        for (r, p) in w.windows(2).enumerate() {
            let (c, d) = (p[0] as f64, p[1] as f64 - p[0] as f64);
            let (gap, gap_end) = (w_max as f64 - c, w_max as f64 - p[1] as f64);
            let ok = if gap_end > 4.0 * 17.0 {
                // Far below W_max: linear at max_increment.
                phases[0] += 1;
                (d - 16.0 * s).abs() <= 1.0
            } else if gap > 4.0 * 17.0 {
                true // crossing into binary search within this RTT
            } else if gap_end >= 8.0 {
                // Binary search: a quarter of the remaining distance per RTT.
                phases[1] += 1;
                d <= s * gap / 4.0 + 1.0 && d >= s * gap_end / 4.0 - 1.0
            } else if gap_end > -4.0 {
                // Around W_max: B/smooth_part = 0.2 per RTT.
                phases[2] += 1;
                d <= (0.2 * s).ceil()
            } else if gap_end > -48.0 {
                // Max probing: (cwnd - W_max)/(B - 1) per RTT, accelerating.
                phases[3] += 1;
                d >= s * (-gap) / 3.0 - 1.0 && d <= s * (-gap_end) / 3.0 + 1.0
            } else if gap < -48.0 {
                phases[4] += 1;
                (d - 16.0 * s).abs() <= 1.0
            } else {
                true
            };
            assert!(ok, "round {r}: cwnd {c} +{d}");
        }
        println!("RTTs per phase (linear, binary search, plateau, probing, linear): {phases:?}");
        assert!(phases.iter().all(|&n| n >= 2), "{phases:?}");
        // The plateau is where BIC spends its time: ~smooth_part/s RTTs.
        assert!(phases[2] >= 15, "{phases:?}");
    }

    #[test]
    fn reno_at_low_window() {
        let mut ck = AckClock::new(12, 6, 50_000);
        let mut b = Bic::new(BicParams::default());
        for _ in 0..3 {
            ck.round(&mut b);
        }
        assert_eq!(ck.sk.cwnd, 15);
        ck.sk.cwnd = 14;
        assert_eq!(b.ssthresh(&mut ck.cx()), 7);
        ck.sk.cwnd = 15;
        assert_eq!(b.ssthresh(&mut ck.cx()), 11); // 15 * 819 / 1024 = 11.99
    }

    #[test]
    fn beta_and_fast_convergence() {
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut b = Bic::new(BicParams::default());
        assert_eq!(b.ssthresh(&mut ck.cx()), 799);
        assert_eq!(b.last_max_cwnd, 1000);
        ck.sk.cwnd = 900;
        assert_eq!(b.ssthresh(&mut ck.cx()), 719);
        assert_eq!(b.last_max_cwnd, 900 * (1024 + 819) / 2048);
    }

    #[test]
    fn stretch_acks_double_the_linear_increase() {
        // Two segments per ACK: delayed_ack converges to 2 << 4 and cnt is divided by
        // 2, but tcp_cong_avoid_ai counts the 2 segments of every ACK: modern Linux
        // BIC adds max_increment * 2 = 32 per RTT in its linear phase.
        let mut ck = AckClock::new(400, 10, 100_000);
        let mut b = Bic::new(BicParams::default());
        b.last_max_cwnd = 2000;
        for _ in 0..400 {
            ck.ack(&mut b, 2);
        }
        let c0 = ck.sk.cwnd;
        for _ in 0..c0 / 2 {
            ck.now += 100_000_000 / (c0 as u64 / 2);
            ck.ack(&mut b, 2);
        }
        assert_eq!(b.delayed_ack, 32);
        let d = ck.sk.cwnd - c0;
        assert!((31..=33).contains(&d), "+{d} per RTT");
    }
}
