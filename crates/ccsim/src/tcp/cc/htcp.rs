//! H-TCP (Shorten, Leith, PFLDnet 2004; Leith, Shorten, Lee 2005), ported from Linux
//! `net/ipv4/tcp_htcp.c`.
//!
//! Increase: alpha segments per RTT, a function of the time Δ since the last
//! congestion event: 1 for Δ <= Δ_L = 1 s, then 1 + 10 (Δ - Δ_L) + ((Δ - Δ_L)/2)^2,
//! scaled by 2 (1 - beta) so that the average throughput matches Reno's at
//! equilibrium, and, with `use_rtt_scaling`, by minRTT / 100 ms clamped to [0.1, 2]
//! (Linux clamps the inverse, 100 ms / minRTT, to [0.5, 10]) so that flows with
//! different RTTs converge. Decrease:
//! beta = minRTT / maxRTT clamped to [0.5, 0.8] (adaptive backoff); with
//! `use_bandwidth_switch`, beta falls back to 0.5 whenever the throughput measured
//! before this congestion event differs by more than 20% from the one before.
//!
//! Fixed point and units as in Linux: alpha and beta are << 7, times and RTTs are in
//! jiffies (HZ = 1000 here, see [`super::cubic::jiffies32`]), so integer truncation
//! happens where the kernel's does. Linux quirks kept: `last_cong` is set on entering
//! CWR/Recovery/Loss, i.e. Δ counts from the start of the reduction; alpha is only
//! recomputed when cwnd grows; maxRTT only tracks samples within 20 ms above it and
//! decays 5% towards minRTT at every congestion event; beta is only adaptive from the
//! second congestion event on (`modeswitch`) and never with minRTT <= 10 ms.

use super::cubic::{jiffies32, usecs_to_jiffies, HZ};
use super::{AckSample, AnyCc, CaState, CcContext, CongAvoid, CongestionOps, ParamSpec, ParamValue, Params};
use crate::error::ConfigError;

/// 1.0 << 7.
const ALPHA_BASE: u32 = 1 << 7;
/// 0.5 << 7.
const BETA_MIN: u32 = 1 << 6;
/// 0.8 << 7 (102/128 = 0.797).
const BETA_MAX: u32 = 102;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "use_rtt_scaling",
        default: ParamValue::Bool(true),
        doc: "scale alpha by minRTT/100 ms (RTT fairness)",
    },
    ParamSpec {
        name: "use_bandwidth_switch",
        default: ParamValue::Bool(true),
        doc: "back off by 0.5 when the measured throughput changed by more than 20%",
    },
];

/// `struct htcp`.
#[derive(Clone, Debug)]
pub struct Htcp {
    pub use_rtt_scaling: bool,
    pub use_bandwidth_switch: bool,
    /// Segments per RTT << 7.
    pub alpha: u32,
    /// Backoff factor << 7.
    pub beta: u32,
    pub modeswitch: bool,
    pkts_acked: u32,
    packetcount: u32,
    /// RTT bounds, jiffies.
    pub min_rtt: u32,
    pub max_rtt: u32,
    /// Jiffies at the last congestion event.
    pub last_cong: u32,
    undo_last_cong: u32,
    undo_max_rtt: u32,
    undo_old_max_b: u32,
    min_b: u32,
    pub max_b: u32,
    pub old_max_b: u32,
    bi: u32,
    lasttime: u32,
}

impl Htcp {
    pub fn new(use_rtt_scaling: bool, use_bandwidth_switch: bool) -> Self {
        Htcp {
            use_rtt_scaling,
            use_bandwidth_switch,
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: 0,
            undo_last_cong: 0,
            undo_max_rtt: 0,
            undo_old_max_b: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            bi: 0,
            lasttime: 0,
        }
    }

    fn cong_time(&self, now: u32) -> u32 {
        now.wrapping_sub(self.last_cong)
    }

    /// `htcp_reset`: a congestion event starts now (undo keeps the old values).
    fn reset(&mut self, now: u32) {
        self.undo_last_cong = self.last_cong;
        self.undo_max_rtt = self.max_rtt;
        self.undo_old_max_b = self.old_max_b;
        self.last_cong = now;
    }

    /// `measure_rtt`, RTT in jiffies.
    fn measure_rtt(&mut self, state: CaState, srtt: u32) {
        if self.min_rtt > srtt || self.min_rtt == 0 {
            self.min_rtt = srtt;
        }
        if state == CaState::Open {
            if self.max_rtt < self.min_rtt {
                self.max_rtt = self.min_rtt;
            }
            // Ignore jumps of more than 20 ms (routing changes, outliers).
            if self.max_rtt < srtt && srtt <= self.max_rtt + 20 * HZ / 1000 {
                self.max_rtt = srtt;
            }
        }
    }

    /// `htcp_beta_update`.
    fn beta_update(&mut self, min_rtt: u32, max_rtt: u32) {
        if self.use_bandwidth_switch {
            let (max_b, old_max_b) = (self.max_b, self.old_max_b);
            self.old_max_b = self.max_b;
            // between(5 maxB, 4 oldmaxB, 6 oldmaxB): maxB within ±20% of the old one.
            let x = 5u32.wrapping_mul(max_b);
            let lo = 4u32.wrapping_mul(old_max_b);
            let hi = 6u32.wrapping_mul(old_max_b);
            if x.wrapping_sub(lo) > hi.wrapping_sub(lo) {
                self.beta = BETA_MIN;
                self.modeswitch = false;
                return;
            }
        }
        if self.modeswitch && min_rtt > 10 * HZ / 1000 && max_rtt != 0 {
            self.beta = ((min_rtt << 7) / max_rtt).clamp(BETA_MIN, BETA_MAX);
        } else {
            self.beta = BETA_MIN;
            self.modeswitch = true;
        }
    }

    /// `htcp_alpha_update`: alpha(Δ) = 2 (1 - beta) factor(Δ) [x minRTT/100 ms].
    fn alpha_update(&mut self, now: u32) {
        let min_rtt = self.min_rtt;
        let mut factor: u32 = 1;
        let mut diff = self.cong_time(now);
        if diff > HZ {
            diff -= HZ;
            factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / HZ)) / HZ;
        }
        if self.use_rtt_scaling && min_rtt != 0 {
            // 8 * 100 ms / minRTT, clamped to [0.5, 10] << 3.
            let scale = ((HZ << 3) / (10 * min_rtt)).clamp(1 << 2, 10 << 3);
            factor = (factor << 3) / scale;
            if factor == 0 {
                factor = 1;
            }
        }
        self.alpha = 2 * factor * ((1 << 7) - self.beta);
        if self.alpha == 0 {
            self.alpha = ALPHA_BASE;
        }
    }

    /// `htcp_param_update`, at each congestion event.
    fn param_update(&mut self, now: u32) {
        let (min_rtt, max_rtt) = (self.min_rtt, self.max_rtt);
        self.beta_update(min_rtt, max_rtt);
        self.alpha_update(now);
        // Slowly fading memory of maxRTT (routing changes).
        if min_rtt > 0 && max_rtt > min_rtt {
            self.max_rtt = min_rtt + ((max_rtt - min_rtt) * 95) / 100;
        }
    }
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    Ok(AnyCc::Htcp(Htcp::new(p.bool("use_rtt_scaling")?, p.bool("use_bandwidth_switch")?)))
}

impl CongestionOps for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }

    /// `htcp_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Htcp::new(self.use_rtt_scaling, self.use_bandwidth_switch);
        self.last_cong = jiffies32(cx.now);
    }

    /// `htcp_recalc_ssthresh`: update beta and alpha, cut to beta.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        self.param_update(jiffies32(cx.now));
        (((cx.sk.cwnd as u64 * self.beta as u64) >> 7) as u32).max(2)
    }

    /// `htcp_cwnd_undo`: restore the congestion-event bookkeeping too.
    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        if self.undo_last_cong != 0 {
            self.last_cong = self.undo_last_cong;
            self.max_rtt = self.undo_max_rtt;
            self.old_max_b = self.undo_old_max_b;
            self.undo_last_cong = 0;
        }
        cx.sk.reno_undo_cwnd()
    }

    /// `htcp_state`.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        let now = jiffies32(cx.now);
        match new {
            CaState::Open => {
                if self.undo_last_cong != 0 {
                    self.last_cong = now;
                    self.undo_last_cong = 0;
                }
            }
            CaState::Cwr | CaState::Recovery | CaState::Loss => self.reset(now),
            CaState::Disorder => {}
        }
    }

    /// `measure_achieved_throughput`: RTT bounds and the per-RTT throughput samples
    /// the bandwidth switch compares.
    fn pkts_acked(&mut self, cx: &mut CcContext<'_>, sample: &AckSample) {
        let now = jiffies32(cx.now);
        let state = cx.sk.ca_state;
        if state == CaState::Open {
            self.pkts_acked = sample.pkts_acked;
        }
        if sample.rtt_us > 0 {
            self.measure_rtt(state, usecs_to_jiffies(sample.rtt_us.min(u32::MAX as i64) as u32));
        }
        if !self.use_bandwidth_switch {
            return;
        }
        if !matches!(state, CaState::Open | CaState::Disorder) {
            self.packetcount = 0;
            self.lasttime = now;
            return;
        }
        self.packetcount += sample.pkts_acked;
        let alpha_segs = if self.alpha >> 7 != 0 { self.alpha >> 7 } else { 1 };
        if self.packetcount >= cx.sk.cwnd.wrapping_sub(alpha_segs)
            && now.wrapping_sub(self.lasttime) >= self.min_rtt
            && self.min_rtt > 0
        {
            let cur_bi = self.packetcount.wrapping_mul(HZ) / now.wrapping_sub(self.lasttime).max(1);
            if self.cong_time(now) / self.min_rtt <= 3 {
                // Just after a backoff.
                self.min_b = cur_bi;
                self.max_b = cur_bi;
                self.bi = cur_bi;
            } else {
                self.bi = (3 * self.bi + cur_bi) / 4;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime = now;
        }
    }
}

impl CongAvoid for Htcp {
    /// `htcp_cong_avoid`: cwnd += alpha/cwnd per ACK.
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        let sk = &mut *cx.sk;
        if !sk.is_cwnd_limited() {
            return;
        }
        if sk.in_slow_start() {
            sk.slow_start(acked);
            return;
        }
        // u32 arithmetic as in Linux.
        if sk.cwnd_cnt.wrapping_mul(self.alpha) >> 7 >= sk.cwnd {
            if sk.cwnd < sk.cwnd_clamp {
                sk.cwnd += 1;
            }
            sk.cwnd_cnt = 0;
            self.alpha_update(jiffies32(cx.now));
        } else {
            sk.cwnd_cnt += self.pkts_acked;
        }
        self.pkts_acked = 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::testkit::AckClock;

    /// H-TCP's alpha(Δ) in segments per RTT before scaling (Leith & Shorten).
    fn alpha_formula(delta_s: f64) -> f64 {
        if delta_s <= 1.0 {
            1.0
        } else {
            let d = delta_s - 1.0;
            1.0 + 10.0 * d + (d / 2.0).powi(2)
        }
    }

    #[test]
    fn alpha_follows_the_time_since_congestion() {
        // minRTT = 100 ms: RTT scaling factor exactly 1; beta 0.5: 2 (1 - beta) = 1.
        let mut h = Htcp::new(true, true);
        h.min_rtt = 100;
        h.last_cong = 1_000_000;
        let mut worst = 0f64;
        for ms in [0u32, 500, 1000, 1001, 1500, 2000, 3000, 5000, 7500, 10_000, 20_000, 60_000] {
            h.alpha_update(h.last_cong + ms);
            let got = h.alpha as f64 / 128.0;
            let want = alpha_formula(ms as f64 / 1000.0);
            // Linux truncates the factor to an integer.
            assert_eq!(got, want.floor(), "Δ = {ms} ms");
            worst = worst.max(want - got);
        }
        println!("alpha: max shortfall from the formula (integer truncation) {worst:.3}");
        // beta 0.8 scales alpha by 2 (1 - 0.8) = 0.4 (102/128 in fixed point).
        h.beta = BETA_MAX;
        h.alpha_update(h.last_cong + 3000);
        assert_eq!(h.alpha, 2 * 22 * (128 - 102)); // factor(3 s) = 1 + 20 + 1
    }

    #[test]
    fn rtt_scaling_multiplies_alpha_by_min_rtt_over_100ms() {
        let mut h = Htcp::new(true, true);
        h.last_cong = 1_000_000;
        for (min_rtt, want) in [(50u32, 11u32), (200, 44), (20, 4), (10, 2), (5, 2), (1000, 44)] {
            h.min_rtt = min_rtt;
            h.alpha_update(h.last_cong + 3000); // factor 22, x minRTT/100 ms in [0.1, 2]
            assert_eq!(h.alpha >> 7, want, "minRTT {min_rtt} ms");
        }
        let mut h = Htcp::new(false, true);
        h.last_cong = 1_000_000;
        h.min_rtt = 50;
        h.alpha_update(h.last_cong + 3000);
        assert_eq!(h.alpha >> 7, 22);
    }

    #[test]
    fn backoff_is_min_over_max_rtt_clamped() {
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut h = Htcp::new(true, false);
        for (min_rtt, max_rtt, want) in
            [(80u32, 100u32, 102u32), (60, 100, 76), (40, 100, 64), (95, 100, 102), (8, 10, 64)]
        {
            h.modeswitch = true;
            h.min_rtt = min_rtt;
            h.max_rtt = max_rtt;
            h.last_cong = jiffies32(ck.now);
            let ss = h.ssthresh(&mut ck.cx());
            assert_eq!(h.beta, want, "{min_rtt}/{max_rtt}");
            assert_eq!(ss, (1000 * want) >> 7);
            // maxRTT fades 5% of the way towards minRTT.
            assert_eq!(h.max_rtt, min_rtt + (max_rtt - min_rtt) * 95 / 100);
        }
        // The first congestion event always backs off by half.
        let mut h = Htcp::new(true, false);
        h.min_rtt = 80;
        h.max_rtt = 100;
        assert_eq!(h.ssthresh(&mut ck.cx()), 500);
        assert!(h.modeswitch);
    }

    #[test]
    fn bandwidth_switch_halves_on_throughput_change() {
        let mut ck = AckClock::new(1000, 10, 50_000);
        let mut h = Htcp::new(true, true);
        h.modeswitch = true;
        h.min_rtt = 80;
        h.max_rtt = 100;
        h.old_max_b = 1000;
        h.max_b = 1100; // +10%: adaptive
        h.ssthresh(&mut ck.cx());
        assert_eq!(h.beta, 102);
        h.max_b = 1500; // +36% over the 1100 just recorded: switch to 0.5
        h.ssthresh(&mut ck.cx());
        assert_eq!((h.beta, h.modeswitch), (64, false));
    }

    #[test]
    fn ack_clock_growth_matches_alpha() {
        // cwnd 500, RTT 100 ms, 4 s after congestion: alpha = 1 + 30 + 2.25 -> 33
        // (x 2(1 - 0.5)) segments per RTT.
        let mut ck = AckClock::new(500, 10, 100_000);
        ck.now = 10_000_000_000;
        let mut h = Htcp::new(true, true);
        h.init(&mut ck.cx());
        h.min_rtt = 100;
        h.last_cong = jiffies32(ck.now) - 4000;
        h.alpha_update(jiffies32(ck.now));
        let (c0, a0) = (ck.sk.cwnd, h.alpha);
        assert_eq!(a0 >> 7, 33);
        ck.round(&mut h);
        let d = ck.sk.cwnd - c0;
        // Linux checks the credit before adding the ACK, and the ACK that triggers an
        // increment is not counted: each +1 costs ceil(cwnd/alpha) + 1 = 17 ACKs, so
        // alpha = 33 yields 500/17 = 29 per RTT at this window.
        let per = (c0 * 128).div_ceil(a0) + 1;
        assert!((d as i64 - (c0 / per) as i64).abs() <= 1, "+{d}, per {per}");
    }
}
