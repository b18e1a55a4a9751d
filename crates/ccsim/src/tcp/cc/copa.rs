//! Copa (Arun & Balakrishnan, "Copa: Practical Delay-Based Congestion Control for the
//! Internet", NSDI 2018), default mode.
//!
//! Copa steers its sending rate toward the target λ_t = 1 / (δ · d_q) (§2, eq. 1),
//! where d_q is the queueing delay it measures: d_q = RTT_standing - RTT_min, with
//! RTT_standing the smallest RTT over the last srtt/2 (§2.1, so that ACK compression
//! and the flow's own packet train do not count) and RTT_min the smallest over 10 s
//! (§2.1). The current rate is λ = cwnd / RTT_standing. On every ACK (§2.1 step 3):
//! cwnd += v / (δ · cwnd) if λ <= λ_t, else cwnd -= v / (δ · cwnd). The velocity v
//! (§2.2) starts at 1, is doubled once per RTT after cwnd has moved in the same
//! direction for three RTTs, and returns to 1 when the direction changes. At the
//! start cwnd doubles each RTT (+1 per ACKed packet) until λ exceeds λ_t (§2.1 "slow
//! start"). Packets are paced at 2 · cwnd / RTT_standing (§2.1).
//!
//! At the fixed point every flow keeps 1/δ packets queued (Theorem 1's equilibrium:
//! λ · d_q = 1/δ), 2 packets at the default δ = 0.5, and flows with the same δ get
//! equal rates. Packet loss does not change cwnd (the paper's default mode: the delay
//! signal governs); a timeout restarts the doubling from the socket's window.
//!
//! Not modelled: the competitive mode (§2.3, switching δ against buffer-filling flows);
//! δ is fixed.

use super::{AnyCc, CaState, CcContext, CongControl, CongestionOps, ParamSpec, ParamValue, Params, RateSample};
use crate::error::ConfigError;
use crate::tcp::minmax::MinMax;
use crate::time::Nanos;
use std::collections::VecDeque;

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "delta",
    default: ParamValue::Float(0.5),
    doc: "δ: target rate 1/(δ d_q); each flow keeps about 1/δ packets queued (paper default 0.5)",
}];

/// RTT_min window (§2.1: 10 s).
const MIN_RTT_WIN: Nanos = 10_000_000_000;
/// RTTs in the same direction before v starts doubling (§2.2).
const SAME_DIRECTION_RTTS: u32 = 3;
const MIN_CWND: f64 = 2.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Direction {
    None,
    Up,
    Down,
}

#[derive(Clone, Debug)]
pub struct Copa {
    delta: f64,
    /// cwnd in packets, real-valued.
    w: f64,
    velocity: f64,
    slow_start: bool,
    /// RTT_min (10 s window), µs.
    min_rtt: MinMax,
    /// (time, rtt µs) samples with increasing RTT: the sliding minimum over srtt/2.
    standing: VecDeque<(Nanos, u32)>,
    /// Once-per-RTT direction bookkeeping: cwnd at the last RTT boundary, when the
    /// next boundary is due, the direction seen and for how many RTTs.
    round_end: Nanos,
    round_w: f64,
    direction: Direction,
    same_dir_rtts: u32,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let delta = p.float("delta")?;
    if !(delta > 0.0 && delta <= 10.0) {
        return Err(ConfigError::new(
            format!("{}.params.delta", p.field),
            format!("{delta}; accepted: a number in (0, 10]"),
        ));
    }
    Ok(AnyCc::Copa(Copa::new(delta)))
}

impl Copa {
    pub fn new(delta: f64) -> Self {
        Copa {
            delta,
            w: 10.0,
            velocity: 1.0,
            slow_start: true,
            min_rtt: MinMax::default(),
            standing: VecDeque::new(),
            round_end: 0,
            round_w: 10.0,
            direction: Direction::None,
            same_dir_rtts: 0,
        }
    }

    pub fn velocity(&self) -> f64 {
        self.velocity
    }
    pub fn in_slow_start(&self) -> bool {
        self.slow_start
    }

    /// RTT_standing: the smallest RTT of the last srtt/2 (at least the newest sample).
    fn update_standing(&mut self, now: Nanos, rtt_us: u32, srtt_us: u32) -> u32 {
        while self.standing.back().is_some_and(|&(_, r)| r >= rtt_us) {
            self.standing.pop_back();
        }
        self.standing.push_back((now, rtt_us));
        let win = srtt_us as u64 * 1000 / 2;
        while self.standing.len() > 1 && self.standing[0].0 + win < now {
            self.standing.pop_front();
        }
        self.standing[0].1
    }

    /// §2.2: once per RTT, compare cwnd with an RTT ago; three RTTs in one direction
    /// start doubling v, a change of direction resets it.
    fn update_velocity(&mut self, now: Nanos, srtt_us: u32) {
        if now < self.round_end {
            return;
        }
        let dir = if self.w > self.round_w {
            Direction::Up
        } else if self.w < self.round_w {
            Direction::Down
        } else {
            self.direction
        };
        if dir == self.direction && dir != Direction::None {
            self.same_dir_rtts += 1;
            if self.same_dir_rtts >= SAME_DIRECTION_RTTS {
                // one RTT's change, v/δ packets, never more than the window itself
                self.velocity = (self.velocity * 2.0).min((self.w * self.delta).max(1.0));
            }
        } else {
            self.velocity = 1.0;
            self.same_dir_rtts = 0;
        }
        self.direction = dir;
        self.round_w = self.w;
        self.round_end = now + srtt_us as u64 * 1000;
    }
}

impl CongestionOps for Copa {
    fn name(&self) -> &'static str {
        "copa"
    }

    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Copa::new(self.delta);
        self.w = cx.sk.cwnd.max(2) as f64;
        self.round_w = self.w;
        cx.sk.ssthresh = super::INFINITE_SSTHRESH;
        cx.sk.pacing_needed = true;
    }

    /// Loss does not set the window (the delay signal does); ssthresh only records it.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.cwnd.max(2)
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        cx.sk.cwnd
    }

    /// A timeout: the socket cut cwnd to in-flight + 1; double from there again.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Loss {
            self.w = MIN_CWND.max(cx.sk.in_flight as f64 + 1.0);
            self.slow_start = true;
            self.velocity = 1.0;
            self.same_dir_rtts = 0;
        }
    }
}

impl CongControl for Copa {
    fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        let acked = rs.acked_sacked;
        if rs.rtt_us > 0 && acked > 0 {
            let rtt = rs.rtt_us.min(u32::MAX as i64) as u32;
            let srtt = cx.sk.srtt_us.max(rtt);
            let rtt_min = if self.min_rtt.get() == 0 {
                self.min_rtt.reset(cx.now, rtt) // the first sample (the filter starts at 0)
            } else {
                self.min_rtt.running_min(MIN_RTT_WIN, cx.now, rtt)
            };
            let standing = self.update_standing(cx.now, rtt, srtt).max(1);
            // λ <= λ_t  <=>  cwnd / RTT_st <= 1 / (δ d_q)  <=>  cwnd δ d_q <= RTT_st
            let d_q = standing.saturating_sub(rtt_min) as f64;
            let below_target = self.w * self.delta * d_q <= standing as f64;
            if self.slow_start {
                if below_target {
                    self.w += acked as f64;
                } else {
                    self.slow_start = false;
                }
            }
            if !self.slow_start {
                let step = self.velocity * acked as f64 / (self.delta * self.w);
                self.w = if below_target { self.w + step } else { (self.w - step).max(MIN_CWND) };
                self.update_velocity(cx.now, srtt);
            }
            // §2.1: pace at twice the window's rate over RTT_standing
            let rate = 2.0 * self.w * cx.sk.mss as f64 * 1e6 / standing as f64;
            cx.sk.pacing_rate = rate.min(u64::MAX as f64 / 2.0) as u64;
        }
        cx.sk.cwnd = (self.w.round() as u32).clamp(MIN_CWND as u32, cx.sk.cwnd_clamp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;
    use crate::tcp::cc::SockState;
    use rand::SeedableRng;

    fn ack(c: &mut Copa, s: &mut SockState, now: Nanos, rtt_us: i64) {
        let mut rng = Rng::seed_from_u64(1);
        let rs = RateSample { rtt_us, acked_sacked: 1, ..Default::default() };
        c.cong_control(&mut CcContext { now, sk: s, rng: &mut rng }, &rs);
    }

    #[test]
    fn equilibrium_window_queues_one_over_delta_packets() {
        // At cwnd w with RTT_min 10 ms, the target queueing delay is RTT_st / (δ w):
        // 100 packets over 10 ms + d_q: d_q = 10.2 ms / (0.5 * 100) -> queue λ d_q = 1/δ.
        let mut c = Copa::new(0.5);
        c.slow_start = false;
        c.w = 100.0;
        let mut s = SockState::new(1448, 100);
        s.srtt_us = 10_000;
        ack(&mut c, &mut s, 1_000_000, 10_000); // RTT_min
                                                // a standing RTT with 2 packets of queue per 100-packet window is the target:
                                                // d_q = 0.2 ms, cwnd δ d_q = 100 * 0.5 * 200 = 10000 µs <= 10200: still below
        let before = c.w;
        ack(&mut c, &mut s, 20_000_000, 10_200);
        assert!(c.w > before);
        // 3 packets' worth of queue (0.3 ms): above the target, cwnd goes down
        let mut c2 = Copa::new(0.5);
        c2.slow_start = false;
        c2.w = 100.0;
        ack(&mut c2, &mut s, 1_000_000, 10_000);
        let before = c2.w;
        ack(&mut c2, &mut s, 30_000_000, 10_600);
        assert!(c2.w < before);
    }

    #[test]
    fn step_is_velocity_over_delta_cwnd_per_ack() {
        let mut c = Copa::new(0.5);
        c.slow_start = false;
        c.w = 20.0;
        let mut s = SockState::new(1448, 20);
        s.srtt_us = 10_000;
        ack(&mut c, &mut s, 1_000_000, 10_000); // no queue: increase by 1 / (0.5 * 20)
        assert!((c.w - 20.1).abs() < 1e-9, "{}", c.w);
    }

    #[test]
    fn velocity_doubles_after_three_rtts_in_one_direction_and_resets_on_a_turn() {
        let mut c = Copa::new(0.5);
        c.w = 100.0;
        c.round_w = 100.0;
        let rtt = 10_000u32;
        let mut t = 0;
        let mut seen = vec![];
        for _ in 0..6 {
            t += rtt as u64 * 1000;
            c.w += 1.0;
            c.update_velocity(t, rtt);
            seen.push(c.velocity);
        }
        assert_eq!(seen, vec![1.0, 1.0, 1.0, 2.0, 4.0, 8.0]);
        t += rtt as u64 * 1000;
        c.w -= 5.0;
        c.update_velocity(t, rtt);
        assert_eq!(c.velocity, 1.0);
    }

    #[test]
    fn slow_start_doubles_until_the_rate_passes_the_target() {
        let mut c = Copa::new(0.5);
        let mut s = SockState::new(1448, 10);
        s.srtt_us = 10_000;
        let mut rng = Rng::seed_from_u64(1);
        c.init(&mut CcContext { now: 0, sk: &mut s, rng: &mut rng });
        for i in 0..10 {
            ack(&mut c, &mut s, 1_000_000 + i, 10_000);
        }
        assert_eq!((c.w, c.in_slow_start()), (20.0, true));
        // a 2 ms queue, the older samples out of the srtt/2 window: 20 * 0.5 * 2000 > 12000
        ack(&mut c, &mut s, 20_000_000, 12_000);
        assert!(!c.in_slow_start());
        assert_eq!(s.pacing_rate, (2.0 * c.w * 1448.0 * 1e6 / 12_000.0) as u64);
    }
}
