//! BBR v3 as Google published it (github.com/google/bbr, branch v3, `tcp_bbr.c`;
//! Cardwell et al., IETF 117 ccwg slides, 2023) and as draft-ietf-ccwg-bbr (the
//! "BBR Congestion Control" Internet-Draft, §§ cited below) specifies it.
//!
//! What v3 adds to v1 ([`super::bbr`]): the model has bounds from congestion signals.
//! - `inflight_hi` (§4.5.10.2, "long-term" upper bound): set when a bandwidth probe
//!   meets loss above `loss_thresh` = 2 % of the data in flight (or ECN marks above
//!   50 % of the delivered, §4.5.10.2 `IsInflightTooHigh`), to max(tx_in_flight,
//!   beta x target inflight) with beta = 0.7; it grows again during ProbeBW_UP, slowly
//!   at first, then doubling its per-round step (`ProbeInflightHiUpward`,
//!   `RaiseInflightHiSlope`).
//! - `bw_lo`, `inflight_lo` (§4.5.10.3, "short-term" lower bounds): cut once per round
//!   with loss outside probing to max(latest sample, beta x bound), and with ECN by
//!   (1 - alpha/3) where alpha is the EWMA (gain 1/16) of the per-round CE fraction.
//! - The ProbeBW cycle (§4.3.3) is DOWN (pacing 0.9) -> CRUISE (1.0) -> REFILL (1.0,
//!   one round at the lower bounds reset) -> UP (1.25, cwnd gain 2.25) -> DOWN. The next
//!   probe comes after 2-3 s (random) or after as many rounds as a Reno flow of the
//!   same BDP would take to grow its window (at most 63: `IsRenoCoexistenceProbeTime`).
//! - STARTUP (pacing gain 2.77 = 4 ln 2, cwnd gain 2) also ends on loss: a round with
//!   at least 6 loss events and a loss rate above 2 % (§4.3.1.2 `BBRCheckStartupHighLoss`);
//!   DRAIN paces at 0.35.
//! - PROBE_RTT every 5 s (not 10) with cwnd at half the BDP (not 4 packets) (§4.3.4).
//! - The max-bandwidth filter spans the last two ProbeBW cycles (§4.5.2.4).
//!
//! Fixed point as in Linux: bandwidth in packets/µs << 24, gains in 1/256.
//!
//! Differences from the kernel module, from what the simulator's rate sample carries:
//! - `rs.tx_in_flight` and `rs.lost` (data in flight when the sampled packet was sent,
//!   packets marked lost since then) are rebuilt here: the socket's `(delivered, lost)`
//!   after every ACK are kept for one round trip, so `lost` = lost now - lost when
//!   `delivered` was the sample's `prior_delivered`, and the packets in flight at the
//!   send were all delivered or lost by the time this one is acknowledged (no
//!   reordering): `tx_in_flight` = `rs.delivered` + `lost`;
//! - no ACK-aggregation allowance (`extra_acked`) in the cwnd target, and no PLB;
//! - ECN reaction only when min_rtt <= 5 ms, as v3's `bbr_ecn_max_rtt_us` (datacenter
//!   paths), and only with ECN negotiated.

mod probe_bw;
#[cfg(test)]
mod tests;

use super::bbr::{Bbr as BbrV1, BBR_SCALE, BBR_UNIT, BW_UNIT};
use super::{
    AnyCc, CaEvent, CaState, CcContext, CongControl, CongestionOps, ParamSpec, ParamValue, Params, RateSample,
};
use crate::error::ConfigError;
use crate::time::Nanos;
use std::collections::VecDeque;

pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        name: "loss_thresh",
        default: ParamValue::Float(0.02),
        doc: "highest loss rate of a bandwidth probe before inflight_hi is set (BBRLossThresh, fraction)",
    },
    ParamSpec {
        name: "beta",
        default: ParamValue::Float(0.7),
        doc: "multiplicative decrease of the bounds per round with loss (BBRBeta, fraction)",
    },
    ParamSpec {
        name: "ecn",
        default: ParamValue::Bool(true),
        doc: "react to ECN marks (v3 does so only below 5 ms min_rtt and with ECN negotiated)",
    },
];

/// `bbr_startup_pacing_gain` (v3): 2.77 = 4 ln 2 (draft §4.3.1.1 BBRStartupPacingGain).
pub const STARTUP_PACING_GAIN: u32 = BBR_UNIT * 277 / 100 + 1;
/// `bbr_startup_cwnd_gain` (v3): 2.
pub const STARTUP_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_drain_gain`: 1/2.885 = 0.35 (draft §4.3.2 BBRDrainPacingGain).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// ProbeBW pacing gains (draft §4.3.3): DOWN 0.9, CRUISE and REFILL 1, UP 1.25.
pub const DOWN_GAIN: u32 = BBR_UNIT * 90 / 100;
pub const UP_GAIN: u32 = BBR_UNIT * 5 / 4;
/// cwnd gain in ProbeBW (2) and in ProbeBW_UP (2.25, `bbr_bw_probe_cwnd_gain`).
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
pub const UP_CWND_GAIN: u32 = BBR_UNIT * 9 / 4;
/// `bbr_ecn_thresh`: a round with more than half its deliveries CE-marked is too high.
pub const ECN_THRESH: u32 = BBR_UNIT / 2;
/// `bbr_ecn_alpha_gain` 1/16 and `bbr_ecn_factor` 1/3.
pub const ECN_ALPHA_GAIN: u32 = BBR_UNIT / 16;
pub const ECN_FACTOR: u32 = BBR_UNIT / 3;
/// `bbr_ecn_max_rtt_us`.
pub const ECN_MAX_RTT_US: u32 = 5000;
/// `bbr_inflight_headroom`: leave 15 % of inflight_hi free for other flows (§4.6.4.2).
pub const HEADROOM: u32 = BBR_UNIT * 15 / 100;
/// `bbr_full_loss_cnt` / BBRStartupFullLossCnt.
pub const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// Full pipe: 3 rounds without 25 % bandwidth growth (§4.3.1.2).
pub const FULL_BW_THRESH: u64 = BBR_UNIT as u64 * 5 / 4;
pub const FULL_BW_CNT: u32 = 3;
/// Min-RTT filter (10 s) and the ProbeRTT interval (5 s), ProbeRTT's 200 ms and its
/// cwnd of half a BDP (§4.3.4).
pub const MIN_RTT_WIN: Nanos = 10_000_000_000;
pub const PROBE_RTT_INTERVAL: Nanos = 5_000_000_000;
pub const PROBE_RTT_DURATION: Nanos = 200_000_000;
pub const PROBE_RTT_CWND_GAIN: u32 = BBR_UNIT / 2;
/// BBRMinPipeCwnd.
pub const MIN_PIPE_CWND: u32 = 4;
/// `bbr_bw_probe_max_rounds`: Reno coexistence cap on rounds between probes.
pub const BW_PROBE_MAX_ROUNDS: u32 = 63;
/// Wall-clock wait between probes: 2 s + uniform [0, 1 s) (`bbr_bw_probe_base_us`,
/// `bbr_bw_probe_rand_us`).
pub const BW_PROBE_BASE: Nanos = 2_000_000_000;
pub const BW_PROBE_RAND: Nanos = 1_000_000_000;
const INIT_CWND: u32 = 10;
const INF: u32 = u32::MAX;
/// Most `(delivered, lost)` snapshots kept (one per ACK over about a round trip).
const LOST_HISTORY_CAP: usize = 1 << 16;
const MODE_LOG_CAP: usize = 512;

/// BBR v3's states (draft §4.1): ProbeBW split into its four phases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    Down,
    Cruise,
    Refill,
    Up,
    ProbeRtt,
}

impl State {
    fn is_probe_bw(self) -> bool {
        matches!(self, State::Down | State::Cruise | State::Refill | State::Up)
    }
    /// `BBRIsProbingBW`: the lower bounds are not adapted while probing.
    fn is_probing_bw(self) -> bool {
        matches!(self, State::Startup | State::Refill | State::Up)
    }
}

/// Where the ACKs of the current probe are (`enum bbr_ack_phase`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AckPhase {
    Init,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
    Refilling,
}

#[derive(Clone, Debug)]
pub struct Bbr3 {
    loss_thresh: u32,
    beta: u32,
    ecn_enabled: bool,
    state: State,
    pacing_gain: u32,
    cwnd_gain: u32,
    // rounds
    next_round_delivered: u64,
    round_start: bool,
    round_lost_start: u64,
    round_delivered_start: u64,
    round_ce_start: u64,
    // model
    bw_hi: [u64; 2],
    bw_lo: u64,
    bw: u64,
    bw_latest: u64,
    inflight_latest: u32,
    inflight_hi: u32,
    inflight_lo: u32,
    min_rtt_us: u32,
    min_rtt_stamp: Nanos,
    probe_rtt_min_us: u32,
    probe_rtt_min_stamp: Nanos,
    // congestion signals of the current round
    loss_in_round: bool,
    loss_events_in_round: u32,
    ecn_in_round: bool,
    /// 1/65536.
    ecn_alpha: u32,
    // startup
    full_bw: u64,
    full_bw_cnt: u32,
    filled_pipe: bool,
    // probe_bw
    cycle_stamp: Nanos,
    bw_probe_wait: Nanos,
    rounds_since_probe: u32,
    bw_probe_up_rounds: u32,
    bw_probe_up_acks: u32,
    probe_up_cnt: u32,
    bw_probe_samples: bool,
    ack_phase: AckPhase,
    // probe_rtt
    probe_rtt_done_stamp: Nanos,
    probe_rtt_round_done: bool,
    // recovery
    prev_ca_state: CaState,
    packet_conservation: bool,
    prior_cwnd: u32,
    idle_restart: bool,
    has_seen_rtt: bool,
    /// `(tp->delivered, tp->lost)` after each ACK, for `rs.lost` (see the module doc).
    lost_history: VecDeque<(u64, u64)>,
    state_log: Vec<(Nanos, State)>,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    let frac = |name: &str| -> Result<u32, ConfigError> {
        let v = p.float(name)?;
        if !(v > 0.0 && v < 1.0) {
            return Err(ConfigError::new(
                format!("{}.params.{name}", p.field),
                format!("{v}; accepted: a fraction in (0, 1)"),
            ));
        }
        Ok(((v * BBR_UNIT as f64).round() as u32).max(1))
    };
    Ok(AnyCc::Bbr3(Bbr3::new(frac("loss_thresh")?, frac("beta")?, p.bool("ecn")?)))
}

impl Bbr3 {
    /// `loss_thresh` and `beta` in 1/256.
    pub fn new(loss_thresh: u32, beta: u32, ecn_enabled: bool) -> Self {
        Bbr3 {
            loss_thresh,
            beta,
            ecn_enabled,
            state: State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: STARTUP_CWND_GAIN,
            next_round_delivered: 0,
            round_start: false,
            round_lost_start: 0,
            round_delivered_start: 0,
            round_ce_start: 0,
            bw_hi: [0; 2],
            bw_lo: u64::MAX,
            bw: 0,
            bw_latest: 0,
            inflight_latest: 0,
            inflight_hi: INF,
            inflight_lo: INF,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_min_us: u32::MAX,
            probe_rtt_min_stamp: 0,
            loss_in_round: false,
            loss_events_in_round: 0,
            ecn_in_round: false,
            ecn_alpha: 0,
            full_bw: 0,
            full_bw_cnt: 0,
            filled_pipe: false,
            cycle_stamp: 0,
            bw_probe_wait: 0,
            rounds_since_probe: 0,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks: 0,
            probe_up_cnt: INF,
            bw_probe_samples: false,
            ack_phase: AckPhase::Init,
            probe_rtt_done_stamp: 0,
            probe_rtt_round_done: false,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            prior_cwnd: 0,
            idle_restart: false,
            has_seen_rtt: false,
            lost_history: VecDeque::new(),
            state_log: Vec::new(),
        }
    }

    pub fn state(&self) -> State {
        self.state
    }
    /// State changes so far, `(time, new state)`.
    pub fn state_log(&self) -> &[(Nanos, State)] {
        &self.state_log
    }
    /// Packets; `None` = no bound yet.
    pub fn inflight_hi(&self) -> Option<u32> {
        (self.inflight_hi != INF).then_some(self.inflight_hi)
    }
    pub fn inflight_lo(&self) -> Option<u32> {
        (self.inflight_lo != INF).then_some(self.inflight_lo)
    }
    pub fn max_bw(&self) -> u64 {
        self.bw_hi[0].max(self.bw_hi[1])
    }
    /// ECN alpha in 1/256.
    pub fn ecn_alpha(&self) -> u32 {
        self.ecn_alpha >> 8
    }

    fn set_state(&mut self, now: Nanos, s: State) {
        if self.state != s && self.state_log.len() < MODE_LOG_CAP {
            self.state_log.push((now, s));
        }
        self.state = s;
    }

    /// `BBRBDPMultiple`: bw x min_rtt x gain in packets, rounded up; the initial
    /// window before an RTT sample.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return INIT_CWND;
        }
        let w = bw.saturating_mul(self.min_rtt_us as u64);
        ((w.saturating_mul(gain as u64) >> BBR_SCALE).div_ceil(BW_UNIT)).min(INF as u64 - 1) as u32
    }

    /// `BBRQuantizationBudget`: room for three of the pacer's bursts, even, +2 in UP.
    fn quantization_budget(&self, cx: &CcContext<'_>, cwnd: u32) -> u32 {
        let mut c = cwnd.saturating_add(3 * BbrV1::tso_segs_goal(cx));
        c = (c.saturating_add(1)) & !1;
        if self.state == State::Up {
            c = c.saturating_add(2);
        }
        c
    }

    /// `BBRInflight(bw, gain)`: the BDP multiple plus the quantization budget.
    fn inflight(&self, cx: &CcContext<'_>, bw: u64, gain: u32) -> u32 {
        let b = self.bdp(bw, gain);
        self.quantization_budget(cx, b)
    }

    /// `BBRInflightWithHeadroom` (§4.6.4.2): inflight_hi less 15 %.
    fn inflight_with_headroom(&self) -> u32 {
        if self.inflight_hi == INF {
            return INF;
        }
        let headroom = ((self.inflight_hi as u64 * HEADROOM as u64) >> BBR_SCALE).max(1) as u32;
        self.inflight_hi.saturating_sub(headroom).max(MIN_PIPE_CWND)
    }

    /// `BBRTargetInflight`: what Reno coexistence and the inflight_hi cut refer to.
    fn target_inflight(&self, cx: &CcContext<'_>) -> u32 {
        self.bdp(self.bw, BBR_UNIT).min(cx.sk.cwnd)
    }

    /// Loss and in-flight of the sampled packet (`rs.lost`, `rs.tx_in_flight`).
    fn sample_losses(&mut self, cx: &CcContext<'_>, rs: &RateSample) -> (u32, u32) {
        let (delivered, lost) = (cx.sk.delivered, cx.sk.lost);
        match self.lost_history.back_mut() {
            Some(last) if last.0 == delivered => last.1 = lost,
            _ => {
                if self.lost_history.len() == LOST_HISTORY_CAP {
                    self.lost_history.pop_front();
                }
                self.lost_history.push_back((delivered, lost));
            }
        }
        if rs.delivered < 0 || rs.prior_mstamp.is_none() {
            return (0, 0);
        }
        // The newest snapshot at or before the send of the sampled packet; older ones
        // can go (later samples were sent later).
        while self.lost_history.len() > 1 && self.lost_history[1].0 <= rs.prior_delivered {
            self.lost_history.pop_front();
        }
        let then = match self.lost_history.front() {
            Some(&(d, l)) if d <= rs.prior_delivered => l,
            _ => lost,
        };
        let rs_lost = (lost - then.min(lost)).min(u32::MAX as u64 / 2) as u32;
        (rs_lost, (rs.delivered as u64).min(u32::MAX as u64 / 2) as u32 + rs_lost)
    }

    /// `BBRIsInflightTooHigh` (§4.5.10.2): loss above loss_thresh of tx_in_flight, or
    /// CE marks above half of the delivered.
    fn is_inflight_too_high(&self, rs: &RateSample, lost: u32, tx_in_flight: u32) -> bool {
        if lost > 0 && tx_in_flight > 0 && lost as u64 * BBR_UNIT as u64 > tx_in_flight as u64 * self.loss_thresh as u64
        {
            return true;
        }
        self.ecn_eligible_now()
            && rs.delivered_ce > 0
            && rs.delivered > 0
            && rs.delivered_ce as u64 * BBR_UNIT as u64 > rs.delivered as u64 * ECN_THRESH as u64
    }

    fn ecn_eligible_now(&self) -> bool {
        self.ecn_enabled && self.min_rtt_us <= ECN_MAX_RTT_US
    }

    /// `BBRUpdateRound` + the per-round bookkeeping of congestion signals.
    fn update_round(&mut self, cx: &CcContext<'_>, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered >= 0 && rs.prior_mstamp.is_some() && rs.prior_delivered >= self.next_round_delivered {
            self.start_round(cx);
            self.round_start = true;
            self.rounds_since_probe = self.rounds_since_probe.saturating_add(1);
            self.packet_conservation = false;
        }
    }

    /// `BBRStartRound`.
    fn start_round(&mut self, cx: &CcContext<'_>) {
        self.next_round_delivered = cx.sk.delivered;
    }

    /// `BBRUpdateMaxBw` and the latest-delivery signals (§4.5.2.4, §4.5.10.1).
    fn update_bw_samples(&mut self, rs: &RateSample) -> Option<(u64, u32)> {
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return None;
        }
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        self.bw_latest = self.bw_latest.max(bw);
        self.inflight_latest = self.inflight_latest.max(rs.delivered.min(INF as i64 - 1) as u32);
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw_hi[1] = self.bw_hi[1].max(bw);
        }
        Some((bw, rs.delivered.min(INF as i64 - 1) as u32))
    }

    /// `BBRAdvanceMaxBwFilter`: a new ProbeBW cycle; the filter keeps two.
    fn advance_max_bw_filter(&mut self) {
        self.bw_hi[0] = self.bw_hi[1];
        self.bw_hi[1] = 0;
    }

    /// `BBRUpdateCongestionSignals` (§4.5.10.3) at the end of each round: the ECN
    /// alpha, the lower bounds, STARTUP's loss exit.
    fn update_congestion_signals(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        if rs.losses > 0 {
            self.loss_in_round = true;
            self.loss_events_in_round = (self.loss_events_in_round + 1).min(0xf);
        }
        if rs.delivered_ce > 0 {
            self.ecn_in_round = true;
        }
        if !self.round_start {
            return;
        }
        let delivered = cx.sk.delivered - self.round_delivered_start.min(cx.sk.delivered);
        let lost = cx.sk.lost - self.round_lost_start.min(cx.sk.lost);
        let ce = cx.sk.delivered_ce - self.round_ce_start.min(cx.sk.delivered_ce);
        if self.ecn_eligible_now() && cx.sk.ecn_ok && delivered > 0 {
            // alpha += g (ce_ratio - alpha), g = 1/16 (v3 `bbr_update_ecn_alpha`), kept
            // in 1/65536 so that small steps do not round away
            let ratio = (ce << 16) / delivered;
            let a = self.ecn_alpha as i64;
            let step = (ratio as i64 - a) * ECN_ALPHA_GAIN as i64 >> BBR_SCALE;
            self.ecn_alpha = (a + step).clamp(0, 1 << 16) as u32;
        }
        self.check_startup_high_loss(cx, delivered, lost);
        self.adapt_lower_bounds(cx);
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.loss_events_in_round = 0;
        self.round_delivered_start = cx.sk.delivered;
        self.round_lost_start = cx.sk.lost;
        self.round_ce_start = cx.sk.delivered_ce;
    }

    /// `BBRCheckStartupHighLoss` (§4.3.1.3): a round of STARTUP with at least 6 loss
    /// events and a loss rate above loss_thresh fills the pipe; inflight_hi starts at
    /// max(BDP, what was delivered in the last round).
    fn check_startup_high_loss(&mut self, cx: &CcContext<'_>, delivered: u64, lost: u64) {
        if self.filled_pipe || self.state != State::Startup || self.loss_events_in_round < STARTUP_FULL_LOSS_CNT {
            return;
        }
        let total = delivered + lost;
        if total > 0 && lost * BBR_UNIT as u64 > total * self.loss_thresh as u64 {
            self.filled_pipe = true;
            self.inflight_hi = self.bdp(self.max_bw(), BBR_UNIT).max(self.inflight_latest).max(MIN_PIPE_CWND);
            let _ = cx;
        }
    }

    /// `BBRAdaptLowerBoundsFromCongestion` (§4.5.10.3): once per round with loss
    /// (and not while probing), bw_lo and inflight_lo go to max(latest, beta x bound);
    /// ECN cuts inflight_lo by alpha x 1/3.
    fn adapt_lower_bounds(&mut self, cx: &CcContext<'_>) {
        if self.state.is_probing_bw() {
            return;
        }
        let ecn = self.ecn_in_round && self.ecn_eligible_now() && self.ecn_alpha > 0;
        if !self.loss_in_round && !ecn {
            return;
        }
        if self.bw_lo == u64::MAX {
            self.bw_lo = self.max_bw();
        }
        if self.inflight_lo == INF {
            self.inflight_lo = cx.sk.cwnd;
        }
        let mut lo = self.inflight_lo;
        if self.loss_in_round {
            self.bw_lo = self.bw_latest.max((self.bw_lo as u128 * self.beta as u128 >> BBR_SCALE) as u64);
            lo = self.inflight_latest.max((self.inflight_lo as u64 * self.beta as u64 >> BBR_SCALE) as u32);
        }
        if ecn {
            let cut = BBR_UNIT - ((self.ecn_alpha() as u64 * ECN_FACTOR as u64) >> BBR_SCALE) as u32;
            lo = lo.min((self.inflight_lo as u64 * cut as u64 >> BBR_SCALE) as u32);
        }
        self.inflight_lo = lo.max(MIN_PIPE_CWND);
    }

    /// `BBRResetLowerBounds`.
    fn reset_lower_bounds(&mut self) {
        self.bw_lo = u64::MAX;
        self.inflight_lo = INF;
    }

    /// `BBRCheckStartupFullBandwidth` (§4.3.1.2) and the STARTUP -> DRAIN -> ProbeBW
    /// transitions (§4.3.2).
    fn check_startup_and_drain(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        if !self.filled_pipe && self.round_start && !rs.is_app_limited {
            let max_bw = self.max_bw();
            if max_bw as u128 * BBR_UNIT as u128 >= self.full_bw as u128 * FULL_BW_THRESH as u128 {
                self.full_bw = max_bw;
                self.full_bw_cnt = 0;
            } else {
                self.full_bw_cnt += 1;
                self.filled_pipe = self.full_bw_cnt >= FULL_BW_CNT;
            }
        }
        if self.state == State::Startup && self.filled_pipe {
            self.set_state(cx.now, State::Drain);
            cx.sk.ssthresh = self.inflight(cx, self.max_bw(), BBR_UNIT);
        }
        if self.state == State::Drain && cx.sk.in_flight <= self.inflight(cx, self.max_bw(), BBR_UNIT) {
            self.start_down(cx); // BBREnterProbeBW
        }
    }

    /// `BBRUpdateMinRTT` (§4.5.3.4) with the 5 s ProbeRTT filter, and ProbeRTT
    /// (`BBRCheckProbeRTT`, §4.3.4.4).
    fn update_min_rtt_and_probe_rtt(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        let probe_rtt_expired = cx.now > self.probe_rtt_min_stamp + PROBE_RTT_INTERVAL;
        if rs.rtt_us >= 0
            && ((rs.rtt_us as u64) < self.probe_rtt_min_us as u64 || (probe_rtt_expired && !rs.is_ack_delayed))
        {
            self.probe_rtt_min_us = rs.rtt_us.min(u32::MAX as i64 - 1) as u32;
            self.probe_rtt_min_stamp = cx.now;
        }
        let min_rtt_expired = cx.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if self.probe_rtt_min_us < self.min_rtt_us || min_rtt_expired {
            self.min_rtt_us = self.probe_rtt_min_us;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
        if self.state != State::ProbeRtt && probe_rtt_expired && !self.idle_restart {
            self.set_state(cx.now, State::ProbeRtt);
            self.pacing_gain = BBR_UNIT;
            self.save_cwnd(cx);
            self.probe_rtt_done_stamp = 0;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round(cx);
        }
        if self.state == State::ProbeRtt {
            // low-rate samples of this mode must not lower the estimate
            cx.sk.app_limited = (cx.sk.delivered + cx.sk.in_flight as u64).max(1);
            if self.probe_rtt_done_stamp == 0 && cx.sk.in_flight <= self.probe_rtt_cwnd() {
                self.probe_rtt_done_stamp = cx.now + PROBE_RTT_DURATION;
                self.probe_rtt_round_done = false;
                self.start_round(cx);
            } else if self.probe_rtt_done_stamp != 0 {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(cx);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// `BBRProbeRTTCwnd`: half a BDP, at least 4 packets.
    fn probe_rtt_cwnd(&self) -> u32 {
        self.bdp(self.bw, PROBE_RTT_CWND_GAIN).max(MIN_PIPE_CWND)
    }

    /// `BBRCheckProbeRTTDone` / `BBRExitProbeRTT`.
    fn check_probe_rtt_done(&mut self, cx: &mut CcContext<'_>) {
        if !(self.probe_rtt_done_stamp != 0 && cx.now > self.probe_rtt_done_stamp) {
            return;
        }
        self.probe_rtt_min_stamp = cx.now;
        cx.sk.cwnd = cx.sk.cwnd.max(self.prior_cwnd);
        self.reset_lower_bounds();
        if self.filled_pipe {
            self.start_down(cx);
            self.start_cruise(cx);
        } else {
            self.set_state(cx.now, State::Startup);
        }
    }

    /// `BBRSaveCwnd`.
    fn save_cwnd(&mut self, cx: &CcContext<'_>) {
        if self.prev_ca_state < CaState::Recovery && self.state != State::ProbeRtt {
            self.prior_cwnd = cx.sk.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cx.sk.cwnd);
        }
    }

    fn update_gains(&mut self) {
        let (p, c) = match self.state {
            State::Startup => (STARTUP_PACING_GAIN, STARTUP_CWND_GAIN),
            State::Drain => (DRAIN_GAIN, STARTUP_CWND_GAIN),
            State::Down => (DOWN_GAIN, CWND_GAIN),
            State::Cruise | State::Refill => (BBR_UNIT, CWND_GAIN),
            State::Up => (UP_GAIN, UP_CWND_GAIN),
            State::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// `BBRBoundBWForModel`: bw = min(max_bw, bw_lo).
    fn bound_bw(&mut self) {
        self.bw = self.max_bw().min(self.bw_lo);
    }

    /// `BBRSetPacingRate` (§4.6.2): never lower before the pipe is full.
    fn set_pacing_rate(&mut self, cx: &mut CcContext<'_>) {
        if !self.has_seen_rtt && cx.sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            let bw = cx.sk.cwnd as u64 * BW_UNIT / cx.sk.srtt_us.max(1) as u64;
            cx.sk.pacing_rate = BbrV1::rate_bytes_per_sec(cx.sk.mss, bw, STARTUP_PACING_GAIN);
        }
        let rate = BbrV1::rate_bytes_per_sec(cx.sk.mss, self.bw, self.pacing_gain);
        if self.filled_pipe || rate > cx.sk.pacing_rate {
            cx.sk.pacing_rate = rate;
        }
    }

    /// `BBRModulateCwndForRecovery`: packet conservation in the first round of
    /// Recovery, the saved cwnd restored when it ends (as v1).
    fn recover_or_restore(&mut self, cx: &CcContext<'_>, rs: &RateSample, acked: u32) -> (u32, bool) {
        let state = cx.sk.ca_state;
        let mut cwnd = cx.sk.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            self.packet_conservation = true;
            self.next_round_delivered = cx.sk.delivered;
            cwnd = cx.sk.in_flight + acked;
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(cx.sk.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `BBRSetCwnd` (§4.6.4.6) with `BBRBoundCwndForProbeRTT` and
    /// `BBRBoundCwndForModel`: inflight_hi caps every ProbeBW phase but CRUISE, which
    /// (and ProbeRTT) keeps the 15 % headroom; inflight_lo caps all.
    fn set_cwnd(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        let acked = rs.acked_sacked;
        let mut cwnd = cx.sk.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(cx, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.inflight(cx, self.bw, self.cwnd_gain);
                if self.filled_pipe {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || cx.sk.delivered < INIT_CWND as u64 {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(MIN_PIPE_CWND);
            }
        }
        if self.state == State::ProbeRtt {
            cwnd = cwnd.min(self.probe_rtt_cwnd());
        }
        let mut cap = INF;
        if self.state.is_probe_bw() && self.state != State::Cruise {
            cap = self.inflight_hi;
        } else if matches!(self.state, State::ProbeRtt | State::Cruise) {
            cap = self.inflight_with_headroom();
        }
        cap = cap.min(self.inflight_lo).max(MIN_PIPE_CWND);
        cx.sk.cwnd = cwnd.min(cap).min(cx.sk.cwnd_clamp);
    }
}

impl CongestionOps for Bbr3 {
    fn name(&self) -> &'static str {
        "bbr3"
    }

    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        BbrV1::min_segs(pacing_rate)
    }

    /// `bbr_init` / `BBRInit` (§4.2.1).
    fn init(&mut self, cx: &mut CcContext<'_>) {
        *self = Bbr3::new(self.loss_thresh, self.beta, self.ecn_enabled);
        cx.sk.ssthresh = super::INFINITE_SSTHRESH;
        self.next_round_delivered = cx.sk.delivered;
        self.round_delivered_start = cx.sk.delivered;
        self.min_rtt_us = cx.sk.min_rtt_us;
        self.min_rtt_stamp = cx.now;
        self.probe_rtt_min_us = cx.sk.min_rtt_us;
        self.probe_rtt_min_stamp = cx.now;
        let rtt_us = if cx.sk.srtt_us > 0 { cx.sk.srtt_us as u64 } else { 1000 };
        self.has_seen_rtt = cx.sk.srtt_us > 0;
        let bw = cx.sk.cwnd as u64 * BW_UNIT / rtt_us;
        cx.sk.pacing_rate = BbrV1::rate_bytes_per_sec(cx.sk.mss, bw, STARTUP_PACING_GAIN);
        self.state_log.push((cx.now, State::Startup));
        cx.sk.pacing_needed = true;
    }

    /// BBR keeps ssthresh for `tcp_info` only; remember cwnd for the restore.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        self.save_cwnd(cx);
        cx.sk.ssthresh
    }

    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.loss_in_round = false;
        cx.sk.cwnd
    }

    /// An RTO is a round with loss (v3 `bbr_set_state`).
    fn set_state(&mut self, _cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Loss {
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.loss_in_round = true;
        }
    }

    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        if ev == CaEvent::TxStart && cx.sk.app_limited != 0 {
            self.idle_restart = true;
            if self.state.is_probe_bw() {
                let rate = BbrV1::rate_bytes_per_sec(cx.sk.mss, self.bw, BBR_UNIT);
                cx.sk.pacing_rate = rate;
            } else if self.state == State::ProbeRtt {
                self.check_probe_rtt_done(cx);
            }
        }
    }
}

impl CongControl for Bbr3 {
    /// `BBRUpdateOnACK` (§4.2.3): model and state, then pacing rate and cwnd.
    fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        let (lost, tx_in_flight) = self.sample_losses(cx, rs);
        self.update_round(cx, rs);
        let sample = self.update_bw_samples(rs);
        self.update_congestion_signals(cx, rs);
        self.check_startup_and_drain(cx, rs);
        self.update_probe_bw_cycle(cx, rs, lost, tx_in_flight);
        self.update_min_rtt_and_probe_rtt(cx, rs);
        if self.round_start {
            // BBRAdvanceLatestDeliverySignals: the next round's latest start at this sample
            let (bw, delivered) = sample.unwrap_or((0, 0));
            self.bw_latest = bw;
            self.inflight_latest = delivered;
        }
        self.bound_bw();
        self.update_gains();
        self.set_pacing_rate(cx);
        self.set_cwnd(cx, rs);
    }
}
