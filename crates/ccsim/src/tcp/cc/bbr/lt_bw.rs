//! Long-term bandwidth sampling (`bbr_lt_bw_sampling`): a token-bucket policer shows
//! up as high loss at a steady delivery rate; when two consecutive sampling intervals
//! with >= 20% loss give rates within 1/8 (or 4 kbit/s) of each other, BBR uses their
//! average as its bandwidth for 48 rounds.

use super::{Bbr, Mode, BBR_SCALE, BBR_UNIT, BW_UNIT};
use crate::tcp::cc::{CcContext, RateSample};

/// `bbr_lt_intvl_min_rtts`.
const LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh` = 50/256 (about 20%).
const LT_LOSS_THRESH: u64 = 50;
/// `bbr_lt_bw_ratio` = 1/8.
const LT_BW_RATIO: u64 = BBR_UNIT as u64 / 8;
/// `bbr_lt_bw_diff` = 4000/8 bytes/s.
const LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`.
const LT_BW_MAX_RTTS: u32 = 48;

impl Bbr {
    pub(super) fn reset_lt_bw_sampling_interval(&mut self, cx: &CcContext<'_>) {
        self.lt_last_stamp = cx.now / 1_000_000;
        self.lt_last_delivered = cx.sk.delivered;
        self.lt_last_lost = cx.sk.lost;
        self.lt_rtt_cnt = 0;
    }

    pub(super) fn reset_lt_bw_sampling(&mut self, cx: &CcContext<'_>) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(cx);
    }

    /// `bbr_lt_bw_interval_done`.
    fn lt_bw_interval_done(&mut self, cx: &CcContext<'_>, bw: u32) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw) as u64;
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.lt_bw as u64
                || Self::rate_bytes_per_sec(cx.sk.mss, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                // Two consistent intervals: policed. Use their average.
                self.lt_bw = ((bw as u64 + self.lt_bw as u64) >> 1) as u32;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(cx);
    }

    pub(super) fn lt_bw_sampling(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        if !self.lt_enabled {
            return;
        }
        if self.lt_use_bw {
            // After 48 rounds, probe again whether the policer is still there.
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(cx);
                    self.reset_probe_bw_mode(cx);
                }
            }
            return;
        }
        // Sample from the first loss on (policers drop in bursts).
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(cx);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(cx);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(cx);
            return;
        }
        // End an interval only at a loss (the token bucket just ran dry).
        if rs.losses == 0 {
            return;
        }
        let lost = cx.sk.lost - self.lt_last_lost;
        let delivered = cx.sk.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let t_ms = (cx.now / 1_000_000) as i64 - self.lt_last_stamp as i64;
        if t_ms < 1 {
            return;
        }
        if t_ms as u64 >= u32::MAX as u64 / 1000 {
            self.reset_lt_bw_sampling(cx);
            return;
        }
        let bw = (delivered * BW_UNIT / (t_ms as u64 * 1000)).min(u32::MAX as u64) as u32;
        self.lt_bw_interval_done(cx, bw);
    }
}
