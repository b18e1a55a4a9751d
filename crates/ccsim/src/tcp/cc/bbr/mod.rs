//! BBR v1 as Linux's `tcp_bbr` module (net/ipv4/tcp_bbr.c, Linux 4.9-6.x; Cardwell et
//! al., "BBR: Congestion-Based Congestion Control", ACM Queue 2016).
//!
//! BBR models the path as a windowed-max delivery rate (`bw`, over 10 round trips) and
//! a windowed-min RTT (`min_rtt`, over 10 s), paces at `pacing_gain * bw` and caps
//! the data in flight at `cwnd_gain * bw * min_rtt` (plus allowances). It is a
//! `cong_control` algorithm: called on every ACK with a delivery-rate sample
//! ([`RateSample`]), it sets cwnd and `pacing_rate` itself, and asks the socket to
//! pace (`pacing_needed`, Linux's `SK_PACING_NEEDED`).
//!
//! Files follow the state machine:
//! - [`startup`]: STARTUP (gain 2/ln2 = 2.885) until the bandwidth stops growing by 25%
//!   for 3 rounds, then DRAIN (gain ln2/2) until in-flight is down to one BDP;
//! - [`probe_bw`]: the 8-phase gain cycle `[5/4, 3/4, 1, 1, 1, 1, 1, 1]`, starting at a
//!   random phase other than 3/4, and the ACK-aggregation allowance;
//! - [`probe_rtt`]: when min_rtt is 10 s old, cwnd drops to 4 packets for 200 ms and
//!   one round trip to measure a fresh min_rtt;
//! - [`lt_bw`]: long-term bandwidth sampling, the policer detector (optional here).
//!
//! Fixed-point arithmetic as Linux: bandwidth in packets per µs scaled by `2^24`
//! (`BW_SCALE`), gains scaled by 256 (`BBR_SCALE`), so the windows and rates match the
//! kernel's to the segment/byte.
//!
//! Differences from Linux, all from the simulator's per-ACK clock (GSO bursts are
//! modelled by the sender, see `tcp::sender`):
//! - `tcp_wstamp_ns` (the earliest departure time of the next packet) is not visible
//!   here; `bbr_packets_in_net_at_edt` takes it as `now`, i.e. it does not subtract
//!   the packets the pacer will deliver before the next departure (at most one or
//!   two at the pacing rate);
//! - `delivered_mstamp` (time of the latest delivery) is `now`: this is only called
//!   on ACKs, and Linux sets it to the ACK's time whenever the ACK delivered data;
//! - `bbr_tso_segs_goal` is computed as Linux does for a 1-ms pacing shift (rate >> 10
//!   bytes, 2 segments minimum above 1.2 Mbit/s), since it enters the cwnd budget; the
//!   sender's GSO bursts use the same minimum (`min_tso_segs`);
//! - jiffies are not simulated: the 10 s and 200 ms timers use nanoseconds.

mod lt_bw;
mod probe_bw;
mod probe_rtt;
mod startup;
#[cfg(test)]
mod tests;

use super::{
    AnyCc, CaEvent, CaState, CcContext, CongControl, CongestionOps, ParamSpec, ParamValue, Params, RateSample,
};
use crate::error::ConfigError;
use crate::tcp::minmax::MinMax;
use crate::time::Nanos;

pub const PARAMS: &[ParamSpec] = &[ParamSpec {
    name: "lt_bw",
    default: ParamValue::Bool(true),
    doc: "long-term bandwidth sampling (policer detection, bbr_lt_bw_sampling); Linux always runs it",
}];

/// `BW_SCALE`: bandwidth in packets/µs << 24.
pub const BW_SCALE: u32 = 24;
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE`: gains in 1/256.
pub const BBR_SCALE: u32 = 8;
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Gain cycle length (`CYCLE_LEN`).
pub const CYCLE_LEN: u32 = 8;
/// Max-bandwidth filter window, in round trips (`bbr_bw_rtts` = CYCLE_LEN + 2).
pub const BW_RTTS: u64 = CYCLE_LEN as u64 + 2;
/// Min-RTT filter window (`bbr_min_rtt_win_sec`).
pub const MIN_RTT_WIN: Nanos = 10_000_000_000;
/// Time in PROBE_RTT (`bbr_probe_rtt_mode_ms`).
pub const PROBE_RTT_MODE: Nanos = 200_000_000;
/// `bbr_high_gain` = 2/ln(2) (startup: doubles the sending rate each round).
pub const HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain` = ln(2)/2 (drain the queue startup built in one round).
pub const DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`.
pub const CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`.
pub const PACING_GAIN: [u32; CYCLE_LEN as usize] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// `bbr_cycle_rand`: the initial phase is random among the last 7.
pub const CYCLE_RAND: u32 = 7;
/// `bbr_cwnd_min_target`: floor of cwnd, and cwnd in PROBE_RTT.
pub const CWND_MIN_TARGET: u32 = 4;
/// `bbr_pacing_margin_percent`: pace 1% below the estimate to avoid building a queue.
pub const PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_min_tso_rate`, bit/s.
const MIN_TSO_RATE: u64 = 1_200_000;
/// `TCP_INIT_CWND`.
const INIT_CWND: u32 = 10;

/// `enum bbr_mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw,
    ProbeRtt,
}

/// Most mode changes [`Bbr::mode_log`] keeps (ProbeRTT comes every 10 s).
const MODE_LOG_CAP: usize = 256;

/// `struct bbr`, plus a log of mode changes for tests and traces.
#[derive(Clone, Debug)]
pub struct Bbr {
    lt_enabled: bool,
    /// Min RTT in the 10 s window, µs (`u32::MAX` = none yet).
    min_rtt_us: u32,
    min_rtt_stamp: Nanos,
    /// End of PROBE_RTT's 200 ms (0 = not yet armed).
    probe_rtt_done_stamp: Nanos,
    /// Max filter of delivery rate, BW_UNIT, over `BW_RTTS` rounds.
    bw: MinMax,
    /// Round trips counted so far.
    rtt_cnt: u32,
    /// `tp->delivered` at which the next round starts.
    next_rtt_delivered: u64,
    /// Start of the current gain-cycle phase.
    cycle_mstamp: Nanos,
    mode: Mode,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u32,
    lt_last_delivered: u64,
    /// ms.
    lt_last_stamp: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: u32,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u32,
    ack_epoch_mstamp: Nanos,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    /// (time, new mode) for every mode change, the first `MODE_LOG_CAP`.
    mode_log: Vec<(Nanos, Mode)>,
}

pub fn build(p: &Params<'_>) -> Result<AnyCc, ConfigError> {
    Ok(AnyCc::Bbr(Bbr::new(p.bool("lt_bw")?)))
}

impl Bbr {
    pub fn new(lt_enabled: bool) -> Self {
        Bbr {
            lt_enabled,
            min_rtt_us: u32::MAX,
            min_rtt_stamp: 0,
            probe_rtt_done_stamp: 0,
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: 0,
            mode: Mode::Startup,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp: 0,
            lt_last_lost: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: 0,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            mode_log: Vec::new(),
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Mode changes so far, `(time, new mode)`, starting with STARTUP at `init`.
    pub fn mode_log(&self) -> &[(Nanos, Mode)] {
        &self.mode_log
    }

    /// Current bandwidth estimate in packets per µs << 24.
    pub fn bw(&self) -> u32 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.max_bw()
        }
    }

    pub fn max_bw(&self) -> u32 {
        self.bw.get()
    }

    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    fn set_mode(&mut self, now: Nanos, m: Mode) {
        if self.mode_log.last().map(|&(_, last)| last) != Some(m) && self.mode_log.len() < MODE_LOG_CAP {
            self.mode_log.push((now, m));
        }
        self.mode = m;
    }

    fn extra_acked_max(&self) -> u32 {
        self.extra_acked[0].max(self.extra_acked[1])
    }

    /// `bbr_rate_bytes_per_sec`: packets/µs << 24 times gain -> bytes/s, 1% below.
    pub(crate) fn rate_bytes_per_sec(mss: u32, rate: u64, gain: u32) -> u64 {
        let mut rate = rate * mss as u64;
        rate *= gain as u64;
        rate >>= BBR_SCALE;
        rate *= 1_000_000 / 100 * (100 - PACING_MARGIN_PERCENT);
        rate >> BW_SCALE
    }

    /// `bbr_init_pacing_rate_from_rtt`: before any bandwidth sample, pace the
    /// initial window over srtt (or a nominal 1 ms) at high gain.
    fn init_pacing_rate_from_rtt(&mut self, cx: &mut CcContext<'_>) {
        let rtt_us = if cx.sk.srtt_us > 0 {
            self.has_seen_rtt = true;
            cx.sk.srtt_us.max(1) as u64
        } else {
            1000
        };
        let bw = cx.sk.cwnd as u64 * BW_UNIT / rtt_us;
        cx.sk.pacing_rate = Self::rate_bytes_per_sec(cx.sk.mss, bw, HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: in STARTUP the rate never goes down (a low early sample
    /// must not slow the ramp-up).
    fn set_pacing_rate(&mut self, cx: &mut CcContext<'_>, bw: u32, gain: u32) {
        let rate = Self::rate_bytes_per_sec(cx.sk.mss, bw as u64, gain);
        if !self.has_seen_rtt && cx.sk.srtt_us > 0 {
            self.init_pacing_rate_from_rtt(cx);
        }
        if self.full_bw_reached || rate > cx.sk.pacing_rate {
            cx.sk.pacing_rate = rate;
        }
    }

    /// `bbr_min_tso_segs`: single segments below 1.2 Mbit/s.
    pub(crate) fn min_segs(pacing_rate: u64) -> u32 {
        if pacing_rate < MIN_TSO_RATE >> 3 {
            1
        } else {
            2
        }
    }

    /// `bbr_tso_segs_goal` with `sk_pacing_shift` = 10 (1 ms of data per burst).
    pub(crate) fn tso_segs_goal(cx: &CcContext<'_>) -> u32 {
        let rate = cx.sk.pacing_rate;
        let min_segs = Self::min_segs(rate);
        let bytes = (rate >> 10).min(65_536 - 1 - 320);
        let segs = (bytes / cx.sk.mss as u64) as u32;
        segs.max(min_segs).min(0x7f)
    }

    /// `bbr_save_cwnd`: remember the last good cwnd before a loss or PROBE_RTT.
    fn save_cwnd(&mut self, cx: &CcContext<'_>) {
        if self.prev_ca_state < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cx.sk.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cx.sk.cwnd);
        }
    }

    /// `bbr_bdp`: `bw * min_rtt * gain`, rounded up; the initial window before any RTT.
    fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return INIT_CWND;
        }
        let w = bw as u64 * self.min_rtt_us as u64;
        (((w * gain as u64) >> BBR_SCALE).div_ceil(BW_UNIT)) as u32
    }

    /// `bbr_quantization_budget`: room for the pacer's bursts (3 TSO goals, even), and
    /// 2 more packets in the 5/4 phase so it can actually put more in flight.
    fn quantization_budget(&self, cx: &CcContext<'_>, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * Self::tso_segs_goal(cx);
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    fn inflight(&self, cx: &CcContext<'_>, bw: u32, gain: u32) -> u32 {
        let b = self.bdp(bw, gain);
        self.quantization_budget(cx, b)
    }

    /// `bbr_packets_in_net_at_edt`, with the earliest departure time taken as now
    /// (see the module doc).
    fn packets_in_net_at_edt(&self, cx: &CcContext<'_>, inflight_now: u32) -> u32 {
        let mut inflight = inflight_now;
        if self.pacing_gain > BBR_UNIT {
            inflight += Self::tso_segs_goal(cx);
        }
        inflight
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation for the first round
    /// of Recovery, restore the pre-loss cwnd when it ends. Returns the cwnd and
    /// whether conservation decided it.
    fn recover_or_restore(&mut self, cx: &CcContext<'_>, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev = self.prev_ca_state;
        let state = cx.sk.ca_state;
        let mut cwnd = cx.sk.cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd as i64 - rs.losses as i64).max(1) as u32;
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = cx.sk.delivered;
            cwnd = cx.sk.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(cx.sk.in_flight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: grow toward `cwnd_gain * BDP` (+ allowances) by the ACKed
    /// amount; before the pipe is full, grow without the cap unless above target.
    fn set_cwnd(&mut self, cx: &mut CcContext<'_>, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = cx.sk.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(cx, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain);
                target += self.ack_aggregation_cwnd();
                target = self.quantization_budget(cx, target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || cx.sk.delivered < INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(CWND_MIN_TARGET);
            }
        }
        cx.sk.cwnd = cwnd.min(cx.sk.cwnd_clamp);
        if self.mode == Mode::ProbeRtt {
            cx.sk.cwnd = cx.sk.cwnd.min(CWND_MIN_TARGET);
        }
    }

    /// `bbr_update_bw`: round counting and the max-bandwidth filter.
    fn update_bw(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        // A round ends when a packet sent after the previous round's end is delivered.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = cx.sk.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(cx, rs);
        let bw = (rs.delivered as u64 * BW_UNIT / rs.interval_us as u64).min(u32::MAX as u64) as u32;
        // App-limited samples only count when they raise the estimate: they can
        // underestimate, never overestimate.
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.bw.running_max(BW_RTTS, self.rtt_cnt as u64, bw);
        }
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let (p, c) = match self.mode {
            Mode::Startup => (HIGH_GAIN, HIGH_GAIN),
            Mode::Drain => (DRAIN_GAIN, HIGH_GAIN),
            Mode::ProbeBw => (if self.lt_use_bw { BBR_UNIT } else { PACING_GAIN[self.cycle_idx as usize] }, CWND_GAIN),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.pacing_gain = p;
        self.cwnd_gain = c;
    }

    /// `bbr_update_model`.
    fn update_model(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        self.update_bw(cx, rs);
        self.update_ack_aggregation(cx, rs);
        self.update_cycle_phase(cx, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(cx);
        self.update_min_rtt(cx, rs);
        self.update_gains();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, cx: &mut CcContext<'_>) {
        if !self.full_bw_reached {
            self.set_mode(cx.now, Mode::Startup);
        } else {
            self.reset_probe_bw_mode(cx);
        }
    }
}

impl CongestionOps for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        Self::min_segs(pacing_rate)
    }

    /// `bbr_init`.
    fn init(&mut self, cx: &mut CcContext<'_>) {
        let lt = self.lt_enabled;
        *self = Bbr::new(lt);
        cx.sk.ssthresh = super::INFINITE_SSTHRESH;
        self.next_rtt_delivered = cx.sk.delivered;
        self.min_rtt_us = cx.sk.min_rtt_us;
        self.min_rtt_stamp = cx.now;
        self.bw.reset(0, 0);
        self.init_pacing_rate_from_rtt(cx);
        self.reset_lt_bw_sampling(cx);
        self.set_mode(cx.now, Mode::Startup);
        self.ack_epoch_mstamp = cx.now;
        cx.sk.pacing_needed = true;
    }

    /// `bbr_ssthresh`: BBR does not use ssthresh for loss response; remember cwnd.
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        self.save_cwnd(cx);
        cx.sk.ssthresh
    }

    /// `bbr_undo_cwnd`: a spurious loss restarts the full-pipe and policer detectors.
    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(cx);
        cx.sk.cwnd
    }

    /// `bbr_set_state`: an RTO counts as a loss round for the policer detector.
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        if new == CaState::Loss {
            let rs = RateSample { losses: 1, delivered: -1, interval_us: -1, rtt_us: -1, ..Default::default() };
            self.prev_ca_state = CaState::Loss;
            self.full_bw = 0;
            self.round_start = true;
            self.lt_bw_sampling(cx, &rs);
        }
    }

    /// `bbr_cwnd_event`: restarting from idle with an app-limited flight paces at the
    /// estimated bandwidth rather than a probing gain.
    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        if ev == CaEvent::TxStart && cx.sk.app_limited != 0 {
            self.idle_restart = true;
            self.ack_epoch_mstamp = cx.now;
            self.ack_epoch_acked = 0;
            if self.mode == Mode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(cx, bw, BBR_UNIT);
            } else if self.mode == Mode::ProbeRtt {
                self.check_probe_rtt_done(cx);
            }
        }
    }
}

impl CongControl for Bbr {
    /// `bbr_main`.
    fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        self.update_model(cx, rs);
        let bw = self.bw();
        self.set_pacing_rate(cx, bw, self.pacing_gain);
        self.set_cwnd(cx, rs, rs.acked_sacked, bw, self.cwnd_gain);
    }
}
