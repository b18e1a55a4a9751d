//! PCC Vivace (Dong et al., "PCC Vivace: Online-Learning Congestion Control", NSDI
//! 2018): rate control by online gradient ascent on a utility function.
//!
//! The sender runs monitor intervals (MIs) of one smoothed RTT, each at one sending
//! rate x (Mbit/s); from the ACKs of an MI's packets it computes the utility (§3, eq. 1
//! with the paper's defaults t = 0.9, b = 900, c = 11.35):
//!
//!   u(x) = x^t - b · x · dRTT/dT - c · x · L
//!
//! where dRTT/dT is the slope of the least-squares line through the MI's RTT samples
//! against their time (a rising queue), ignored below 0.01 as measurement noise (§4.2),
//! and L the MI's loss rate. Rate control (§4):
//! - slow start: double the rate every MI until an MI's utility falls below the
//!   previous one's, then return to the best rate;
//! - probing: two pairs of MIs at r(1 + ε) and r(1 - ε), ε = 0.05, each pair in
//!   random order (§4.1); if both pairs' gradients γ = (u+ - u-) / (2εr) agree in sign,
//!   move, else probe again;
//! - moving: Δr = m(τ) · θ0 · γ (§4.1) with the confidence amplifier m(τ) = τ, the
//!   number of consecutive steps in one direction, θ0 = 1 (Mbit/s per unit of
//!   utility gradient), bounded by the dynamic change boundary |Δr| <= ω r with
//!   ω = ω0 + k δ, ω0 = 0.05, δ = 0.1, k counting consecutive steps that hit the bound
//!   (§4.2). Each step's gradient comes from a fresh pair of probes around the new
//!   rate (the paper's moving phase estimates it from consecutive MIs instead; with
//!   the simulator's exact RTTs that estimate mixes the queue of the previous rate
//!   into the next and overshoots); a change of sign resets m and k.
//!
//! An MI's packets are told apart by the rate sample's `prior_delivered` (the
//! socket's delivered count when the sampled packet was sent, which only grows with
//! send time): a sample belongs to the MI during which `delivered` had that value, and
//! the MI is complete when a packet sent after it is acknowledged. The window is set
//! to twice the rate times srtt, so pacing at the rate is what limits the sender.

use super::{AnyCc, CaState, CcContext, CongControl, CongestionOps, ParamSpec, ParamValue, Params, RateSample};
use crate::error::ConfigError;
use crate::time::Nanos;
use rand::Rng as _;
use std::collections::VecDeque;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec { name: "b", default: ParamValue::Float(900.0), doc: "latency-gradient coefficient b of the utility" },
    ParamSpec { name: "c", default: ParamValue::Float(11.35), doc: "loss coefficient c of the utility" },
];

/// Utility exponent t (§3).
const EXPONENT: f64 = 0.9;
/// Probing step ε (§4.1).
const EPSILON: f64 = 0.05;
/// RTT-gradient noise floor (§4.2).
const GRADIENT_TOLERANCE: f64 = 0.01;
/// Dynamic boundary ω0 and its step δ (§4.2).
const OMEGA0: f64 = 0.05;
const OMEGA_STEP: f64 = 0.1;
/// Conversion factor θ0, Mbit/s per unit of utility gradient.
const THETA0: f64 = 1.0;
/// Lowest rate, Mbit/s.
const MIN_RATE: f64 = 0.05;
/// Most MIs awaiting their ACKs.
const MAX_PENDING: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    SlowStart,
    Probing,
    Moving,
}

/// What an MI's result is used for.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Role {
    /// No decision waits on it.
    Filler,
    SlowStart,
    /// Probe pair `pair` (0 or 1), `up` = the r(1 + ε) half.
    Probe {
        pair: usize,
        up: bool,
    },
}

/// One monitor interval and what its ACKs told so far.
#[derive(Clone, Debug)]
struct Mi {
    role: Role,
    rate: f64,
    start: Nanos,
    end: Nanos,
    /// Socket `delivered` at the start and end: the `prior_delivered` of its packets.
    d_start: u64,
    d_end: u64,
    snd_start: u64,
    sent_bytes: u64,
    acked: u64,
    lost: u64,
    /// Least-squares sums over (t seconds since start, rtt seconds).
    n: f64,
    st: f64,
    sr: f64,
    stt: f64,
    str_: f64,
}

impl Mi {
    fn new(role: Role, rate: f64, start: Nanos, d_start: u64, snd_start: u64) -> Self {
        Mi {
            role,
            rate,
            start,
            end: start,
            d_start,
            d_end: u64::MAX,
            snd_start,
            sent_bytes: 0,
            acked: 0,
            lost: 0,
            n: 0.0,
            st: 0.0,
            sr: 0.0,
            stt: 0.0,
            str_: 0.0,
        }
    }

    /// One RTT sample `r` (s) at `t` (s since the MI began), for the regression.
    fn add_rtt(&mut self, t: f64, r: f64) {
        self.n += 1.0;
        self.st += t;
        self.sr += r;
        self.stt += t * t;
        self.str_ += t * r;
    }

    fn rtt_slope(&self) -> f64 {
        let den = self.n * self.stt - self.st * self.st;
        if self.n < 2.0 || den.abs() < 1e-18 {
            return 0.0;
        }
        (self.n * self.str_ - self.st * self.sr) / den
    }
}

#[derive(Clone, Debug)]
pub struct Vivace {
    b: f64,
    c: f64,
    phase: Phase,
    /// Base rate, Mbit/s.
    rate: f64,
    current: Option<Mi>,
    pending: VecDeque<Mi>,
    /// MIs still to send in this phase: (role, rate).
    plan: VecDeque<(Role, f64)>,
    // slow start
    best: (f64, f64),
    last_ss_utility: f64,
    // probing results: [pair][up as usize]
    probe_u: [[Option<f64>; 2]; 2],
    // moving: direction of the last step, its amplifier m(τ) and boundary k
    direction: f64,
    amplifier: f64,
    boundary_k: f64,
    /// (time, rate Mbit/s) of every rate decision, the first few thousand.
    rate_log: Vec<(Nanos, f64)>,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let (b, c) = (p.float("b")?, p.float("c")?);
    for (name, v) in [("b", b), ("c", c)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(ConfigError::new(
                format!("{}.params.{name}", p.field),
                format!("{v}; accepted: a number >= 0"),
            ));
        }
    }
    Ok(AnyCc::Vivace(Vivace::new(b, c)))
}

/// `u(x) = x^0.9 - b x dRTT/dT - c x L`, x in Mbit/s (eq. 1).
pub fn utility(x_mbps: f64, rtt_gradient: f64, loss: f64, b: f64, c: f64) -> f64 {
    let g = if rtt_gradient.abs() < GRADIENT_TOLERANCE { 0.0 } else { rtt_gradient };
    x_mbps.powf(EXPONENT) - b * x_mbps * g - c * x_mbps * loss
}

impl Vivace {
    pub fn new(b: f64, c: f64) -> Self {
        Vivace {
            b,
            c,
            phase: Phase::SlowStart,
            rate: 1.0,
            current: None,
            pending: VecDeque::new(),
            plan: VecDeque::new(),
            best: (0.0, f64::NEG_INFINITY),
            last_ss_utility: f64::NEG_INFINITY,
            probe_u: [[None; 2]; 2],
            direction: 0.0,
            amplifier: 0.0,
            boundary_k: 0.0,
            rate_log: Vec::new(),
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }
    /// Base sending rate, bit/s.
    pub fn rate_bps(&self) -> f64 {
        self.rate * 1e6
    }
    pub fn rate_log(&self) -> &[(Nanos, f64)] {
        &self.rate_log
    }

    fn set_rate(&mut self, now: Nanos, r: f64) {
        self.rate = r.max(MIN_RATE);
        if self.rate_log.len() < 4096 {
            self.rate_log.push((now, self.rate));
        }
    }

    fn utility_of(&self, mi: &Mi) -> f64 {
        let dur = (mi.end - mi.start).max(1) as f64 / 1e9;
        let x = mi.sent_bytes as f64 * 8.0 / dur / 1e6;
        let total = mi.acked + mi.lost;
        let loss = if total > 0 { mi.lost as f64 / total as f64 } else { 0.0 };
        utility(x, mi.rtt_slope(), loss, self.b, self.c)
    }

    /// Ends the running MI (if its time is up) and starts the next one.
    fn roll_mi(&mut self, cx: &mut CcContext<'_>, mi_len: Nanos) {
        if let Some(cur) = &self.current {
            if cx.now < cur.start + mi_len {
                return;
            }
        }
        if let Some(mut cur) = self.current.take() {
            cur.end = cx.now;
            cur.d_end = cx.sk.delivered;
            cur.sent_bytes = cx.sk.snd_nxt.saturating_sub(cur.snd_start);
            if self.pending.len() == MAX_PENDING {
                self.pending.pop_front();
            }
            self.pending.push_back(cur);
        }
        let (role, rate) = self.next_mi(cx);
        self.current = Some(Mi::new(role, rate, cx.now, cx.sk.delivered, cx.sk.snd_nxt));
    }

    /// The role and rate of the next MI.
    fn next_mi(&mut self, cx: &mut CcContext<'_>) -> (Role, f64) {
        match self.phase {
            Phase::SlowStart => {
                let r = if self.current_is_first() { self.rate } else { self.rate * 2.0 };
                self.set_rate(cx.now, r);
                (Role::SlowStart, self.rate)
            }
            _ => {
                if let Some(p) = self.plan.pop_front() {
                    return p;
                }
                (Role::Filler, self.rate)
            }
        }
    }

    fn current_is_first(&self) -> bool {
        self.pending.is_empty() && self.best.1 == f64::NEG_INFINITY && self.rate_log.is_empty()
    }

    /// §4.1: two pairs of MIs at r(1 ± ε), each pair in random order.
    fn start_probing(&mut self, cx: &mut CcContext<'_>) {
        self.phase = Phase::Probing;
        self.probe_u = [[None; 2]; 2];
        self.plan.clear();
        for pair in 0..2 {
            let up_first = cx.rng.random_bool(0.5);
            for up in [up_first, !up_first] {
                let r = self.rate * if up { 1.0 + EPSILON } else { 1.0 - EPSILON };
                self.plan.push_back((Role::Probe { pair, up }, r));
            }
        }
    }

    /// One step of `Δr = m(τ) θ0 γ`, within the dynamic boundary ω r.
    fn step(&mut self, cx: &mut CcContext<'_>, gamma: f64) {
        let dir = gamma.signum();
        if dir != self.direction {
            self.amplifier = 0.0;
            self.boundary_k = 0.0;
        }
        self.direction = dir;
        self.amplifier += 1.0;
        let mut delta = self.amplifier * THETA0 * gamma;
        let bound = (OMEGA0 + self.boundary_k * OMEGA_STEP) * self.rate;
        if delta.abs() > bound {
            delta = bound * dir;
            self.boundary_k += 1.0;
        } else {
            self.boundary_k = 0.0;
        }
        let r = self.rate + delta;
        self.set_rate(cx.now, r);
        // the next gradient again from a randomised probe pair around the new rate
        self.start_probing(cx);
        self.phase = Phase::Moving;
    }

    /// An MI's ACKs are all in: feed its utility to the phase that asked for it.
    fn on_result(&mut self, cx: &mut CcContext<'_>, mi: &Mi) {
        let u = self.utility_of(mi);
        match (self.phase, mi.role) {
            (Phase::SlowStart, Role::SlowStart) => {
                if u > self.best.1 {
                    self.best = (mi.rate, u);
                }
                if u < self.last_ss_utility {
                    // utility fell: back to the best rate seen, learn from there
                    self.set_rate(cx.now, self.best.0);
                    self.pending.clear();
                    self.current = None;
                    self.start_probing(cx);
                    return;
                }
                self.last_ss_utility = u;
            }
            (Phase::Probing | Phase::Moving, Role::Probe { pair, up }) => {
                self.probe_u[pair][up as usize] = Some(u);
                if let [[Some(d0), Some(u0)], [Some(d1), Some(u1)]] = self.probe_u {
                    let width = 2.0 * EPSILON * self.rate;
                    let (g0, g1) = ((u0 - d0) / width, (u1 - d1) / width);
                    if g0.signum() == g1.signum() && g0 != 0.0 {
                        self.step(cx, (g0 + g1) / 2.0);
                    } else {
                        // inconclusive: the next step starts unamplified
                        self.amplifier = 0.0;
                        self.boundary_k = 0.0;
                        self.start_probing(cx);
                    }
                }
            }
            _ => {}
        }
    }
}

impl CongestionOps for Vivace {
    fn name(&self) -> &'static str {
        "vivace"
    }

    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Vivace::new(self.b, self.c);
        // the initial window over the first RTT (100 ms before one is measured)
        let rtt_s = if cx.sk.srtt_us > 0 { cx.sk.srtt_us as f64 / 1e6 } else { 0.1 };
        self.rate = (cx.sk.cwnd as f64 * cx.sk.mss as f64 * 8.0 / rtt_s / 1e6).max(MIN_RATE);
        cx.sk.ssthresh = super::INFINITE_SSTHRESH;
        cx.sk.pacing_needed = true;
        cx.sk.pacing_rate = (self.rate * 1e6 / 8.0) as u64;
    }

    /// Losses enter the utility, not the window.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.cwnd.max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.cwnd
    }

    fn set_state(&mut self, _cx: &mut CcContext<'_>, _new: CaState) {}
}

impl CongControl for Vivace {
    fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        let srtt_ns = (cx.sk.srtt_us.max(1) as u64) * 1000;
        if cx.sk.srtt_us > 0 {
            self.roll_mi(cx, srtt_ns);
        }
        // attribute this ACK to the MI its sampled packet was sent in
        if rs.delivered >= 0 && rs.prior_mstamp.is_some() {
            let pd = rs.prior_delivered;
            let now = cx.now;
            let mut target = self.pending.iter_mut().find(|m| pd >= m.d_start && pd < m.d_end.max(m.d_start + 1));
            if target.is_none() {
                target = self.current.as_mut().filter(|m| pd >= m.d_start);
            }
            if let Some(mi) = target {
                mi.acked += rs.acked_sacked as u64;
                mi.lost += rs.losses as u64;
                if rs.rtt_us > 0 {
                    let t = now.saturating_sub(mi.start) as f64 / 1e9;
                    mi.add_rtt(t, rs.rtt_us as f64 / 1e6);
                }
            }
            // MIs whose every packet is older than this sample are complete
            while self.pending.front().is_some_and(|m| pd > m.d_end) {
                let mi = self.pending.pop_front().unwrap();
                self.on_result(cx, &mi);
            }
        }
        let rate = self.current.as_ref().map_or(self.rate, |m| m.rate);
        cx.sk.pacing_rate = (rate * 1e6 / 8.0) as u64;
        let srtt_s = if cx.sk.srtt_us > 0 { cx.sk.srtt_us as f64 / 1e6 } else { 0.1 };
        let w = 2.0 * rate * 1e6 / 8.0 * srtt_s / cx.sk.mss as f64;
        cx.sk.cwnd = (w.ceil() as u32).max(4).min(cx.sk.cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utility_is_the_papers_equation_one() {
        // no queue growth, no loss: x^0.9
        assert!((utility(10.0, 0.0, 0.0, 900.0, 11.35) - 10f64.powf(0.9)).abs() < 1e-12);
        // a gradient below the 0.01 noise floor is ignored
        assert_eq!(utility(10.0, 0.005, 0.0, 900.0, 11.35), utility(10.0, 0.0, 0.0, 900.0, 11.35));
        // 5 % loss at 10 Mbit/s costs c x L = 11.35 * 10 * 0.05
        let d = utility(10.0, 0.0, 0.0, 900.0, 11.35) - utility(10.0, 0.0, 0.05, 900.0, 11.35);
        assert!((d - 5.675).abs() < 1e-9);
        // a queue growing 2 % of time costs 900 * x * 0.02
        let g = utility(10.0, 0.0, 0.0, 900.0, 11.35) - utility(10.0, 0.02, 0.0, 900.0, 11.35);
        assert!((g - 180.0).abs() < 1e-9);
    }

    #[test]
    fn rtt_slope_is_the_least_squares_fit() {
        let mut mi = Mi::new(Role::Filler, 1.0, 0, 0, 0);
        for i in 0..10 {
            let t = i as f64 * 0.001;
            mi.add_rtt(t, 0.040 + 0.5 * t); // the RTT grows 0.5 ms per ms
        }
        assert!((mi.rtt_slope() - 0.5).abs() < 1e-9);
    }

    #[test]
    fn a_step_is_amplified_and_bounded_by_the_dynamic_boundary() {
        use crate::rng::Rng;
        use crate::tcp::cc::SockState;
        use rand::SeedableRng;
        let mut v = Vivace::new(900.0, 11.35);
        let mut s = SockState::new(1448, 10);
        let mut rng = Rng::seed_from_u64(1);
        let mut cx = CcContext { now: 0, sk: &mut s, rng: &mut rng };
        v.rate = 100.0;
        v.step(&mut cx, 2.0); // m = 1: +2 Mbit/s, within 5 %
        assert!((v.rate - 102.0).abs() < 1e-9);
        v.step(&mut cx, 2.0); // m = 2: +4 Mbit/s, within 5.1
        assert!((v.rate - 106.0).abs() < 1e-9);
        v.step(&mut cx, 10.0); // m = 3: +30, bounded to 5 % of 106 = 5.3, k -> 1
        assert!((v.rate - 111.3).abs() < 1e-9, "{}", v.rate);
        v.step(&mut cx, 10.0); // m = 4: +40, bounded to 15 % of 111.3
        assert!((v.rate - 111.3 * 1.15).abs() < 1e-9, "{}", v.rate);
        v.step(&mut cx, -1.0); // a turn: m and k reset, -1
        assert!((v.rate - (111.3 * 1.15 - 1.0)).abs() < 1e-9);
    }
}
