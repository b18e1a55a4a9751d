//! ProbeBW's four phases (draft-ietf-ccwg-bbr §4.3.3) and the upper bound
//! inflight_hi (§4.5.10.2 `BBRAdaptUpperBounds`).

use super::{AckPhase, Bbr3, State, BBR_SCALE, BW_PROBE_BASE, BW_PROBE_MAX_ROUNDS, BW_PROBE_RAND, INF, UP_GAIN};
use crate::tcp::cc::{CcContext, RateSample};
use rand::Rng as _;

impl Bbr3 {
    /// `BBRUpdateProbeBWCyclePhase`.
    pub(super) fn update_probe_bw_cycle(&mut self, cx: &mut CcContext<'_>, rs: &RateSample, lost: u32, tx: u32) {
        if !self.filled_pipe {
            return;
        }
        self.adapt_upper_bounds(cx, rs, lost, tx);
        match self.state {
            State::Down => {
                if !self.is_time_to_probe_bw(cx) && self.is_time_to_cruise(cx) {
                    self.start_cruise(cx);
                }
            }
            State::Cruise => {
                self.is_time_to_probe_bw(cx);
            }
            State::Refill => {
                // one round at the reset lower bounds, then probe
                if self.round_start {
                    self.bw_probe_samples = true;
                    self.start_up(cx);
                }
            }
            State::Up => {
                if self.is_time_to_go_down(cx, rs) {
                    self.start_down(cx);
                }
            }
            _ => {}
        }
    }

    /// `BBRAdaptUpperBounds`.
    fn adapt_upper_bounds(&mut self, cx: &mut CcContext<'_>, rs: &RateSample, lost: u32, tx: u32) {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            // the ACKs of packets sent while probing start arriving
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // the probe's feedback is over (once per cycle, v3 `bbr_adapt_upper_bounds`):
            // no more probe samples, and a new cycle of the max-bandwidth filter
            self.bw_probe_samples = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !rs.is_app_limited {
                self.advance_max_bw_filter();
            }
        }
        if self.check_inflight_too_high(cx, rs, lost, tx) {
            return;
        }
        if self.inflight_hi == INF {
            return;
        }
        if tx > self.inflight_hi {
            self.inflight_hi = tx;
        }
        if self.state == State::Up {
            self.probe_inflight_hi_upward(cx, rs);
        }
    }

    /// `BBRCheckInflightTooHigh` / `BBRHandleInflightTooHigh`: a probe that met too
    /// much loss (or ECN) sets inflight_hi to max(tx_in_flight, beta x target), once
    /// per probe, and ends UP.
    fn check_inflight_too_high(&mut self, cx: &mut CcContext<'_>, rs: &RateSample, lost: u32, tx: u32) -> bool {
        if !self.is_inflight_too_high(rs, lost, tx) {
            return false;
        }
        if self.bw_probe_samples {
            self.bw_probe_samples = false;
            if !rs.is_app_limited {
                let target = (self.target_inflight(cx) as u64 * self.beta as u64 >> BBR_SCALE) as u32;
                self.inflight_hi = tx.max(target).max(super::MIN_PIPE_CWND);
            }
            if self.state == State::Up {
                self.start_down(cx);
            }
        }
        true
    }

    /// `BBRProbeInflightHiUpward`: while cwnd-limited at inflight_hi, grow it by one
    /// packet per `probe_up_cnt` ACKed, a count that halves every round.
    pub(super) fn probe_inflight_hi_upward(&mut self, cx: &CcContext<'_>, rs: &RateSample) {
        if !cx.sk.is_cwnd_limited || cx.sk.cwnd < self.inflight_hi {
            return;
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.saturating_add(rs.acked_sacked);
        if self.bw_probe_up_acks >= self.probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.probe_up_cnt;
            self.inflight_hi = self.inflight_hi.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_hi_slope(cx);
        }
    }

    /// `BBRRaiseInflightHiSlope`: 1, 2, 4, ... packets of growth per round.
    pub(super) fn raise_inflight_hi_slope(&mut self, cx: &CcContext<'_>) {
        let growth_this_round = 1u32 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(30);
        self.probe_up_cnt = (cx.sk.cwnd / growth_this_round).max(1);
    }

    /// `BBRIsTimeToProbeBW`: after the random wall-clock wait, or as many rounds as
    /// Reno would need (`BBRIsRenoCoexistenceProbeTime`).
    fn is_time_to_probe_bw(&mut self, cx: &mut CcContext<'_>) -> bool {
        let waited = cx.now.saturating_sub(self.cycle_stamp) > self.bw_probe_wait;
        let reno_rounds = self.target_inflight(cx).min(BW_PROBE_MAX_ROUNDS);
        if waited || self.rounds_since_probe >= reno_rounds {
            self.start_refill(cx);
            return true;
        }
        false
    }

    /// `BBRIsTimeToCruise`: the queue of the last probe is gone.
    fn is_time_to_cruise(&self, cx: &CcContext<'_>) -> bool {
        let inflight = cx.sk.in_flight;
        inflight <= self.inflight_with_headroom() && inflight <= self.inflight(cx, self.max_bw(), super::BBR_UNIT)
    }

    /// `BBRIsTimeToGoDown` (the draft's ProbeBW_UP exit without loss): a min_rtt in UP
    /// and 1.25 BDP in flight.
    fn is_time_to_go_down(&self, cx: &CcContext<'_>, rs: &RateSample) -> bool {
        let elapsed_us = cx.now.saturating_sub(self.cycle_stamp) / 1000;
        elapsed_us > self.min_rtt_us as u64 && rs.prior_in_flight >= self.inflight(cx, self.max_bw(), UP_GAIN)
    }

    /// `BBRStartProbeBW_DOWN`.
    pub(super) fn start_down(&mut self, cx: &mut CcContext<'_>) {
        self.loss_in_round = false;
        self.ecn_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
        self.probe_up_cnt = INF;
        // BBRPickProbeWait
        self.rounds_since_probe = cx.rng.random_range(0..2);
        self.bw_probe_wait = BW_PROBE_BASE + cx.rng.random_range(0..BW_PROBE_RAND);
        self.cycle_stamp = cx.now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(cx);
        self.set_state(cx.now, State::Down);
    }

    /// `BBRStartProbeBW_CRUISE`.
    pub(super) fn start_cruise(&mut self, cx: &CcContext<'_>) {
        self.set_state(cx.now, State::Cruise);
    }

    /// `BBRStartProbeBW_REFILL`: forget the lower bounds, refill the pipe for a round.
    fn start_refill(&mut self, cx: &CcContext<'_>) {
        self.reset_lower_bounds();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(cx);
        self.set_state(cx.now, State::Refill);
    }

    /// `BBRStartProbeBW_UP`.
    fn start_up(&mut self, cx: &CcContext<'_>) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(cx);
        self.cycle_stamp = cx.now;
        self.set_state(cx.now, State::Up);
        self.raise_inflight_hi_slope(cx);
    }
}
