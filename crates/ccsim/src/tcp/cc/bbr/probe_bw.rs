//! PROBE_BW: the gain cycle (`bbr_update_cycle_phase`) and the ACK-aggregation
//! allowance (`bbr_update_ack_aggregation`).

use super::{Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT, CYCLE_LEN, CYCLE_RAND};
use crate::tcp::cc::{CcContext, RateSample};
use rand::Rng as _;

/// `bbr_extra_acked_gain`.
const EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts`: window of the aggregation max filter.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: cap the allowance at 100 ms of data.
const EXTRA_ACKED_MAX_US: u64 = 100_000;

impl Bbr {
    /// `bbr_reset_probe_bw_mode`: start at a random phase, never the 3/4 one (a
    /// flow just out of DRAIN has no queue to drain).
    pub(super) fn reset_probe_bw_mode(&mut self, cx: &mut CcContext<'_>) {
        self.set_mode(cx.now, Mode::ProbeBw);
        self.cycle_idx = CYCLE_LEN - 1 - cx.rng.random_range(0..CYCLE_RAND);
        self.advance_cycle_phase(cx);
    }

    fn advance_cycle_phase(&mut self, cx: &CcContext<'_>) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = cx.now;
    }

    /// `bbr_is_next_cycle_phase`: each phase lasts one min_rtt; the 5/4 phase also
    /// waits until in-flight reaches 5/4 BDP (or a loss), the 3/4 phase ends early
    /// once in-flight is down to one BDP.
    fn is_next_cycle_phase(&self, cx: &CcContext<'_>, rs: &RateSample) -> bool {
        let is_full_length = cx.now.saturating_sub(self.cycle_mstamp) / 1000 > self.min_rtt_us as u64;
        if self.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(cx, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(cx, bw, self.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(cx, bw, BBR_UNIT)
    }

    pub(super) fn update_cycle_phase(&mut self, cx: &CcContext<'_>, rs: &RateSample) {
        if self.mode == Mode::ProbeBw && self.is_next_cycle_phase(cx, rs) {
            self.advance_cycle_phase(cx);
        }
    }

    /// `bbr_ack_aggregation_cwnd`.
    pub(super) fn ack_aggregation_cwnd(&self) -> u32 {
        if EXTRA_ACKED_GAIN == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw() as u64 * EXTRA_ACKED_MAX_US / BW_UNIT;
        let aggr = (EXTRA_ACKED_GAIN as u64 * self.extra_acked_max() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_update_ack_aggregation`: how many more packets were ACKed in this epoch
    /// than the bandwidth estimate explains (max over 5-10 rounds).
    pub(super) fn update_ack_aggregation(&mut self, cx: &CcContext<'_>, rs: &RateSample) {
        if EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = cx.now.saturating_sub(self.ack_epoch_mstamp) / 1000;
        let mut expected = self.bw() as u64 * epoch_us / BW_UNIT;
        if self.ack_epoch_acked as u64 <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = cx.now;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.ack_epoch_acked as u64 - expected).min(cx.sk.cwnd as u64) as u32;
        let i = self.extra_acked_win_idx;
        self.extra_acked[i] = self.extra_acked[i].max(extra);
    }
}
