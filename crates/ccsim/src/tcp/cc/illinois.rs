//! TCP-Illinois (Liu, Başar, Srikant, Perf. Eval. 2008), ported from Linux
//! `net/ipv4/tcp_illinois.c`.
//!
//! Loss-based AIMD whose parameters follow the queueing delay: once per RTT the
//! average queueing delay d_a (mean RTT - base RTT) is compared with the largest seen,
//! d_m (max RTT - base RTT). The increase alpha is 10 segments per RTT while d_a <=
//! d_m/100 and falls along alpha = k1/(k2 + d_a) to 0.3 at d_a = d_m (a concave
//! curve: fast when the queue is empty, gentle near congestion). The decrease beta is
//! 1/8 while d_a <= d_m/10, rises linearly to 1/2 at d_a = 8 d_m/10, and stays 1/2
//! beyond. Below `win_thresh` segments it is Reno (alpha 1, beta 1/2).
//!
//! Linux details kept: alpha << 7 and beta << 6 in fixed point, RTTs in µs; after a
//! spell of high delay, alpha only returns to its maximum after `theta` consecutive
//! low-delay RTTs; an RTO resets alpha and beta to Reno's; max RTT is never aged
//! (Linux's own TODO). The paper's alpha_min/alpha_max/beta_min/beta_max are
//! compile-time constants in Linux, so they are constants here too.

use super::{AckSample, AnyCc, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

const ALPHA_SHIFT: u32 = 7;
const ALPHA_SCALE: u32 = 1 << ALPHA_SHIFT;
/// ~0.3 (38/128 = 0.297).
pub const ALPHA_MIN: u32 = (3 * ALPHA_SCALE) / 10;
pub const ALPHA_MAX: u32 = 10 * ALPHA_SCALE;
const ALPHA_BASE: u32 = ALPHA_SCALE;
/// Keeps `dm * ALPHA_MAX` within 32 bits (3.3 s).
const RTT_MAX: u32 = u32::MAX / ALPHA_MAX;

const BETA_SHIFT: u32 = 6;
const BETA_SCALE: u32 = 1 << BETA_SHIFT;
/// 1/8.
pub const BETA_MIN: u32 = BETA_SCALE / 8;
/// 1/2.
pub const BETA_MAX: u32 = BETA_SCALE / 2;
const BETA_BASE: u32 = BETA_MAX;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "win_thresh",
        default: ParamValue::Int(15),
        doc: "window (segments) below which Illinois is Reno",
    },
    ParamSpec { name: "theta", default: ParamValue::Int(5), doc: "low-delay RTTs before alpha returns to its maximum" },
];

/// `struct illinois`.
#[derive(Clone, Debug)]
pub struct Illinois {
    pub win_thresh: u32,
    pub theta: u32,
    sum_rtt: u64,
    cnt_rtt: u32,
    /// Minimum and maximum RTT, µs.
    pub base_rtt: u32,
    pub max_rtt: u32,
    end_seq: u64,
    /// Additive increase, segments per RTT << 7.
    pub alpha: u32,
    /// Multiplicative decrease << 6.
    pub beta: u32,
    acked: u32,
    rtt_above: bool,
    rtt_low: u32,
}

impl Illinois {
    pub fn new(win_thresh: u32, theta: u32) -> Self {
        Illinois {
            win_thresh,
            theta,
            sum_rtt: 0,
            cnt_rtt: 0,
            base_rtt: 0x7fff_ffff,
            max_rtt: 0,
            end_seq: 0,
            alpha: ALPHA_MAX,
            beta: BETA_BASE,
            acked: 0,
            rtt_above: false,
            rtt_low: 0,
        }
    }

    /// `rtt_reset`: start a new per-RTT average at `snd_nxt`.
    fn rtt_reset(&mut self, snd_nxt: u64) {
        self.end_seq = snd_nxt;
        self.cnt_rtt = 0;
        self.sum_rtt = 0;
    }

    /// `alpha`: increase from average (`da`) and maximum (`dm`) queueing delay.
    pub fn alpha_of(&mut self, da: u32, dm: u32) -> u32 {
        let d1 = dm / 100;
        if da <= d1 {
            if !self.rtt_above {
                return ALPHA_MAX;
            }
            // theta good RTTs before going back to alpha max.
            self.rtt_low += 1;
            if self.rtt_low < self.theta {
                return self.alpha;
            }
            self.rtt_low = 0;
            self.rtt_above = false;
            return ALPHA_MAX;
        }
        self.rtt_above = true;
        // alpha = k1 / (k2 + da), with alpha(d1) = max and alpha(dm) = min.
        let (dm, da) = ((dm - d1) as u64, (da - d1) as u64);
        ((dm * ALPHA_MAX as u64) / (dm + (da * (ALPHA_MAX - ALPHA_MIN) as u64) / ALPHA_MIN as u64)) as u32
    }

    /// `beta`: decrease from average and maximum queueing delay.
    pub fn beta_of(da: u32, dm: u32) -> u32 {
        let d2 = dm / 10;
        if da <= d2 {
            return BETA_MIN;
        }
        let d3 = (8 * dm as u64 / 10) as u32;
        if da >= d3 || d3 <= d2 {
            return BETA_MAX;
        }
        // Linear from (d2, beta min) to (d3, beta max).
        ((BETA_MIN as u64 * d3 as u64 + (BETA_MAX - BETA_MIN) as u64 * da as u64 - BETA_MAX as u64 * d2 as u64)
            / (d3 - d2) as u64) as u32
    }

    /// `update_params`, once per RTT.
    fn update_params(&mut self, cwnd: u32, snd_nxt: u64) {
        if cwnd < self.win_thresh {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
        } else if self.cnt_rtt > 0 {
            let dm = self.max_rtt - self.base_rtt;
            let da = (self.sum_rtt / self.cnt_rtt as u64) as u32 - self.base_rtt;
            self.alpha = self.alpha_of(da, dm);
            self.beta = Self::beta_of(da, dm);
        }
        self.rtt_reset(snd_nxt);
    }
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let nonneg = |name: &str| -> Result<u32, ConfigError> {
        let v = p.int(name)?;
        u32::try_from(v)
            .map_err(|_| ConfigError::new(format!("{}.params.{name}", p.field), format!("{v} must be >= 0")))
    };
    Ok(AnyCc::Illinois(Illinois::new(nonneg("win_thresh")?, nonneg("theta")?)))
}

impl CongestionOps for Illinois {
    fn name(&self) -> &'static str {
        "illinois"
    }

    /// `tcp_illinois_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Illinois::new(self.win_thresh, self.theta);
        self.rtt_reset(cx.sk.snd_nxt);
    }

    /// `tcp_illinois_ssthresh`: cwnd (1 - beta).
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        let cwnd = cx.sk.cwnd;
        (cwnd - ((cwnd as u64 * self.beta as u64) >> BETA_SHIFT) as u32).max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.reno_undo_cwnd()
    }

    /// `tcp_illinois_state`: an RTO goes back to Reno's parameters.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Loss {
            self.alpha = ALPHA_BASE;
            self.beta = BETA_BASE;
            self.rtt_low = 0;
            self.rtt_above = false;
            self.rtt_reset(cx.sk.snd_nxt);
        }
    }

    /// `tcp_illinois_acked`: accumulate this RTT's samples.
    fn pkts_acked(&mut self, _cx: &mut CcContext<'_>, sample: &AckSample) {
        self.acked = sample.pkts_acked;
        if sample.rtt_us < 0 {
            return;
        }
        let rtt = sample.rtt_us.min(RTT_MAX as i64) as u32;
        self.base_rtt = self.base_rtt.min(rtt);
        self.max_rtt = self.max_rtt.max(rtt);
        self.cnt_rtt += 1;
        self.sum_rtt += rtt as u64;
    }
}

impl CongAvoid for Illinois {
    /// `tcp_illinois_cong_avoid`.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let sk = &mut *cx.sk;
        if sk.snd_una > self.end_seq {
            self.update_params(sk.cwnd, sk.snd_nxt);
        }
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            sk.slow_start(acked);
            return;
        }
        // cwnd += alpha / cwnd per ACKed segment.
        sk.cwnd_cnt += self.acked;
        self.acked = 1;
        let delta = ((sk.cwnd_cnt as u64 * self.alpha as u64) >> ALPHA_SHIFT) as u32;
        if delta >= sk.cwnd {
            sk.cwnd = (sk.cwnd + delta / sk.cwnd).min(sk.cwnd_clamp);
            sk.cwnd_cnt = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::AckClock;

    #[test]
    fn alpha_curve() {
        let mut il = Illinois::new(15, 5);
        let dm = 100_000; // 100 ms of queueing at most
        assert_eq!(il.alpha_of(500, dm), ALPHA_MAX); // <= dm/100, never above
                                                     // At d_a = d_m: alpha min.
        assert_eq!(il.alpha_of(dm, dm), ALPHA_MIN);
        // In between: k1/(k2 + d_a), with alpha(d1) = 10, alpha(dm) = 0.3.
        let (amin, amax) = (ALPHA_MIN as f64 / 128.0, 10.0);
        let d1 = dm as f64 / 100.0;
        for da in [5_000u32, 20_000, 50_000, 80_000] {
            let got = il.alpha_of(da, dm) as f64 / 128.0;
            let k1 = (dm as f64 - d1) * amin * amax / (amax - amin);
            let k2 = (dm as f64 - d1) * amin / (amax - amin) - d1;
            let want = k1 / (k2 + da as f64);
            assert!((got - want).abs() < 0.02, "da {da}: {got} vs {want}");
        }
        // After high delay, theta = 5 low-delay RTTs before alpha max again.
        let last = il.alpha_of(80_000, dm);
        il.alpha = last;
        for _ in 0..4 {
            assert_eq!(il.alpha_of(0, dm), last);
        }
        assert_eq!(il.alpha_of(0, dm), ALPHA_MAX);
    }

    #[test]
    fn beta_curve() {
        let dm = 100_000;
        assert_eq!(Illinois::beta_of(10_000, dm), BETA_MIN); // <= 10%: 1/8
        assert_eq!(Illinois::beta_of(80_000, dm), BETA_MAX); // >= 80%: 1/2
        assert_eq!(Illinois::beta_of(95_000, dm), BETA_MAX);
        // Linear in between: 45% is halfway, (1/8 + 1/2)/2 = 0.3125 = 20/64.
        assert_eq!(Illinois::beta_of(45_000, dm), 20);
    }

    /// Rounds at a given RTT after a base RTT of 100 ms and a max of 200 ms.
    fn with_delay(cwnd: u32, avg_rtt_us: u32) -> (Illinois, AckClock) {
        let mut ck = AckClock::new(cwnd, 10, 100_000);
        let mut il = Illinois::new(15, 5);
        il.init(&mut ck.cx());
        ck.round(&mut il);
        ck.rtt_us = 200_000;
        ck.round(&mut il);
        ck.rtt_us = avg_rtt_us;
        // More than theta RTTs, so alpha can recover after the 200 ms round.
        for _ in 0..7 {
            ck.sk.cwnd = cwnd;
            ck.round(&mut il);
        }
        ck.sk.cwnd = cwnd;
        (il, ck)
    }

    #[test]
    fn backoff_follows_queueing_delay() {
        // No queueing: cut by 1/8.
        let (mut il, mut ck) = with_delay(800, 100_000);
        let (before, after) = ck.loss(&mut il);
        assert_eq!((before, after), (800, 700));
        // Queue at 90% of its maximum: cut by half.
        let (mut il, mut ck) = with_delay(800, 190_000);
        assert_eq!(ck.loss(&mut il), (800, 400));
        // 45%: beta = 20/64.
        let (mut il, mut ck) = with_delay(800, 145_000);
        assert_eq!(ck.loss(&mut il), (800, 800 - 800 * 20 / 64));
        // Below win_thresh: Reno.
        let (mut il, mut ck) = with_delay(12, 100_000);
        assert_eq!(ck.loss(&mut il), (12, 6));
    }

    #[test]
    fn increase_is_alpha_per_rtt() {
        // No queueing delay: +10 per RTT.
        let (mut il, mut ck) = with_delay(500, 100_000);
        assert_eq!(il.alpha, ALPHA_MAX);
        let c0 = ck.sk.cwnd;
        ck.round(&mut il);
        assert!((ck.sk.cwnd as i64 - c0 as i64 - 10).abs() <= 1, "+{}", ck.sk.cwnd - c0);
        // Delay at its maximum: 0.3 per RTT.
        let (mut il, mut ck) = with_delay(500, 200_000);
        assert_eq!(il.alpha, ALPHA_MIN);
        let c0 = ck.sk.cwnd;
        for _ in 0..10 {
            ck.round(&mut il);
        }
        assert!((ck.sk.cwnd - c0) as f64 <= 3.0 + 1.0 && ck.sk.cwnd - c0 >= 2, "+{}", ck.sk.cwnd - c0);
    }
}
