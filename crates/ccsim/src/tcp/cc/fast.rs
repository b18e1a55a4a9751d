//! FAST TCP (Jin, Wei, Low, INFOCOM 2004), as the update law of Wei's thesis
//! ("Microscopic Behavior of Internet Congestion Control", Caltech 2007), Algorithm 2
//! and Eq. (2.24):
//!
//! ```text
//! w <- min{ 2w, (1 - gamma) w + gamma (baseRTT/RTT * w + alpha) }     once per RTT
//! ```
//!
//! `alpha` is the number of packets the flow aims to keep queued; at equilibrium
//! `w (1 - baseRTT/RTT) = alpha`, so flows sharing a bottleneck hold `alpha_i` packets
//! each in the queue and get windows `w_i = (alpha_i / alpha) (alpha + cd)`
//! (Theorems 2.2.3.1-2). FAST is not in mainline Linux; this follows the thesis.
//!
//! Choices, and why:
//! - **Per RTT, smoothed per ACK.** The target is computed when the ACK passes the
//!   round edge (`snd_nxt` of the previous decision, as Vegas does), and the window
//!   walks to it over the next round: each ACKed segment adds `|target - w0|/w0` of a
//!   segment (credit kept like `snd_cwnd_cnt`). That spreads a change over one RTT
//!   instead of sending it as a burst, as the NS-2 TCP-Linux FAST port did (it moved cwnd
//!   by at most one segment per ACK, Algorithm 2's `w_i +/- 1`).
//! - **Which w meets which RTT.** Eq. (2.24) multiplies `baseRTT/RTT` with
//!   `w(t - D)`, the window one RTT ago: the RTTs of a round belong to packets sent
//!   during the previous round. We therefore use the cwnd at the previous round edge in
//!   that term and the current cwnd in the `(1 - gamma) w` term. Using the current
//!   cwnd in both (a literal reading of the per-RTT formula) adds a round of delay to
//!   the loop.
//! - **RTT** is the mean of the round's RTT samples (FAST averages queueing delay;
//!   Vegas takes the minimum), baseRTT the minimum ever seen.
//! - **Slow start** is Reno's (`tcp_slow_start`) until a round shows `alpha` packets
//!   queued (`w (RTT - baseRTT)/RTT >= alpha`), then the FAST law takes over. The
//!   `2w` cap alone would grow the window by only `gamma*alpha` per RTT from an empty
//!   queue.
//! - **Loss** halves the window as Reno (`ssthresh`), and undo is Reno's: the thesis's
//!   experiments are loss-free; FAST's own loss response is not specified there.
//!
//! Arithmetic is integer: gamma in 1/1024 (0.5 -> 512), windows in 1/1024 segment
//! inside the update, RTTs in µs.

use super::{AckSample, AnyCc, CaEvent, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "alpha",
        default: ParamValue::Int(20),
        doc: "packets the flow keeps queued at equilibrium (FAST is not in Linux, so no kernel default; 20 is a \
              few ms of queue on the 10-100 Mbit/s paths ccbench simulates)",
    },
    ParamSpec { name: "gamma", default: ParamValue::Float(0.5), doc: "step of the update law, in (0, 1]" },
];

const ONE: u64 = 1024;

#[derive(Clone, Debug)]
pub struct Fast {
    alpha: u32,
    /// gamma * 1024.
    gamma: u64,
    beg_snd_nxt: u64,
    /// Sum and count of the round's RTT samples (µs).
    rtt_sum: u64,
    rtt_cnt: u32,
    /// Min RTT ever seen, µs.
    base_rtt: u32,
    /// cwnd at the previous round edge: the window the measured packets were sent with.
    w_prev: u32,
    /// Window this round walks to, from `w0`, with `credit` in segment-ACKs.
    target: u32,
    w0: u32,
    credit: u64,
    /// Most recent mean RTT of a round, µs (0 = none yet).
    last_rtt: u32,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let alpha = p.int("alpha")?;
    if !(1..=1_000_000).contains(&alpha) {
        return Err(ConfigError::new(
            format!("{}.params.alpha", p.field),
            format!("{alpha}; accepted: 1..=1000000 packets"),
        ));
    }
    let gamma = p.float("gamma")?;
    if !(gamma > 0.0 && gamma <= 1.0) {
        return Err(ConfigError::new(format!("{}.params.gamma", p.field), format!("{gamma}; accepted: (0, 1]")));
    }
    Ok(AnyCc::Fast(Fast::new(alpha as u32, (gamma * ONE as f64).round() as u64)))
}

impl Fast {
    /// `gamma_q10` is gamma in 1/1024.
    pub fn new(alpha: u32, gamma_q10: u64) -> Self {
        Fast {
            alpha,
            gamma: gamma_q10.clamp(1, ONE),
            beg_snd_nxt: 0,
            rtt_sum: 0,
            rtt_cnt: 0,
            base_rtt: u32::MAX,
            w_prev: 0,
            target: 0,
            w0: 0,
            credit: 0,
            last_rtt: 0,
        }
    }

    pub fn base_rtt_us(&self) -> u32 {
        self.base_rtt
    }

    /// The update law for window `w` now, `w_then` one round ago, mean RTT `rtt`.
    pub fn law(&self, w: u32, w_then: u32, rtt: u32) -> u32 {
        let (w, w_then) = (w as u64, w_then as u64);
        // baseRTT/RTT * w(t-D) + alpha, in 1/1024 segments.
        let ratio = (self.base_rtt as u64 * w_then * ONE) / rtt.max(1) as u64 + self.alpha as u64 * ONE;
        let next = ((ONE - self.gamma) * w * ONE + self.gamma * ratio) / ONE;
        // Round to the nearest segment.
        (((next + ONE / 2) / ONE).min(2 * w)).clamp(2, u32::MAX as u64) as u32
    }

    fn new_round(&mut self, cx: &CcContext<'_>) {
        self.beg_snd_nxt = cx.sk.snd_nxt;
        self.rtt_sum = 0;
        self.rtt_cnt = 0;
    }
}

impl CongestionOps for Fast {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn init(&mut self, cx: &mut CcContext<'_>) {
        self.new_round(cx);
        self.w_prev = cx.sk.cwnd;
        self.target = cx.sk.cwnd;
    }

    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (cx.sk.cwnd >> 1).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// Leaving a reduction: the window the socket set is the new starting point.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Open {
            self.target = cx.sk.cwnd;
            self.w_prev = cx.sk.cwnd;
            self.new_round(cx);
        }
    }

    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        if matches!(ev, CaEvent::CwndRestart | CaEvent::Loss) {
            self.target = cx.sk.cwnd;
            self.w_prev = cx.sk.cwnd;
            self.new_round(cx);
        }
    }

    fn pkts_acked(&mut self, _cx: &mut CcContext<'_>, sample: &AckSample) {
        if sample.rtt_us <= 0 {
            return;
        }
        let rtt = sample.rtt_us.min(u32::MAX as i64) as u32;
        self.base_rtt = self.base_rtt.min(rtt);
        self.rtt_sum += rtt as u64;
        self.rtt_cnt += 1;
    }
}

impl CongAvoid for Fast {
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        if cx.sk.snd_una > self.beg_snd_nxt {
            let w = cx.sk.cwnd;
            if self.rtt_cnt > 0 {
                let rtt = (self.rtt_sum / self.rtt_cnt as u64) as u32;
                self.last_rtt = rtt;
                if cx.sk.in_slow_start() {
                    // Queue estimate w (RTT - baseRTT)/RTT in segments.
                    let queued = w as u64 * rtt.saturating_sub(self.base_rtt) as u64 / rtt.max(1) as u64;
                    if queued >= self.alpha as u64 {
                        cx.sk.ssthresh = w.max(2);
                    }
                }
                if !cx.sk.in_slow_start() {
                    self.target = self.law(w, self.w_prev.max(1), rtt).min(cx.sk.cwnd_clamp);
                    self.w0 = w;
                    self.credit = 0;
                }
            }
            self.w_prev = w;
            self.new_round(cx);
        }
        if cx.sk.in_slow_start() {
            cx.sk.slow_start(acked);
            self.target = cx.sk.cwnd;
            return;
        }
        let w = cx.sk.cwnd;
        if self.target == w || self.w0 == 0 {
            return;
        }
        self.credit += acked as u64 * self.target.abs_diff(self.w0) as u64;
        let steps = (self.credit / self.w0 as u64).min(self.target.abs_diff(w) as u64) as u32;
        self.credit %= self.w0 as u64;
        cx.sk.cwnd = if self.target > w { w + steps } else { w - steps };
        // Keep the socket out of slow start while FAST steers (as `tcp_vegas_ssthresh`).
        cx.sk.ssthresh = cx.sk.ssthresh.min(cx.sk.cwnd).max(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::tcp::cc::SockState;
    use rand::SeedableRng;

    #[test]
    fn law_matches_the_formula_and_its_cap() {
        let mut f = Fast::new(20, 512);
        f.base_rtt = 100_000;
        // No queue: w + gamma*alpha = 100 + 10.
        assert_eq!(f.law(100, 100, 100_000), 110);
        // Equilibrium: w (1 - 100/125) = 20 at w = 100 -> unchanged.
        assert_eq!(f.law(100, 100, 125_000), 100);
        // Too much queue: 0.5*100 + 0.5*(100*0.5 + 20) = 85.
        assert_eq!(f.law(100, 100, 200_000), 85);
        // The 2w cap binds for a tiny window with a large alpha.
        let f = Fast { base_rtt: 100_000, ..Fast::new(100, 512) };
        assert_eq!(f.law(10, 10, 100_000), 20);
    }

    #[test]
    fn discrete_model_converges_geometrically_to_alpha_plus_cd() {
        // Wei (2.27)-(2.28) with one flow: W(t) - (cd + alpha) = (1 - gamma)^t (...).
        let mut f = Fast::new(20, 512);
        f.base_rtt = 100_000;
        let cd = 80.0;
        let mut w = 10u32;
        for _ in 0..20 {
            let rtt = (100_000.0 * (w as f64 / cd).max(1.0)) as u32;
            w = f.law(w, w, rtt);
        }
        assert!((w as i64 - 100).abs() <= 1, "w = {w}");
    }

    #[test]
    fn window_walks_to_the_target_over_one_round() {
        let mut f = Fast::new(20, 512);
        let mut sk = SockState::new(1448, 100);
        sk.ssthresh = 50;
        let mut rng = Rng::seed_from_u64(1);
        let mut cx = CcContext { now: 0, sk: &mut sk, rng: &mut rng };
        f.init(&mut cx);
        f.pkts_acked(&mut cx, &AckSample { pkts_acked: 1, rtt_us: 100_000, in_flight: 0 });
        cx.sk.snd_una = 1;
        cx.sk.snd_nxt = 1_000_000;
        f.cong_avoid(&mut cx, 1);
        assert_eq!(f.target, 110);
        // 100 ACKed segments in all move cwnd by 10, one step per 10 ACKs.
        for _ in 0..98 {
            f.cong_avoid(&mut cx, 1);
        }
        assert_eq!(cx.sk.cwnd, 109);
        f.cong_avoid(&mut cx, 1);
        f.cong_avoid(&mut cx, 5);
        assert_eq!(cx.sk.cwnd, 110, "stops at the target");
    }
}
