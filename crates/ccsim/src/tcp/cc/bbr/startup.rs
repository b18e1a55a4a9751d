//! STARTUP and DRAIN (`bbr_check_full_bw_reached`, `bbr_check_drain`).

use super::{Bbr, Mode, BBR_SCALE, BBR_UNIT};
use crate::tcp::cc::{CcContext, RateSample};

/// `bbr_full_bw_thresh`: the bandwidth must grow by 25% per round...
pub const FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: ...or after 3 rounds without it the pipe is full.
pub const FULL_BW_CNT: u32 = 3;

impl Bbr {
    /// `bbr_check_full_bw_reached`: once per round, on non-app-limited samples.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u64 * FULL_BW_THRESH as u64) >> BBR_SCALE;
        if self.max_bw() as u64 >= thresh {
            self.full_bw = self.max_bw();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= FULL_BW_CNT;
    }

    /// `bbr_check_drain`: enter DRAIN when the pipe is full (ssthresh records the
    /// BDP for `tcp_info`), leave it when in-flight is down to one BDP.
    pub(super) fn check_drain(&mut self, cx: &mut CcContext<'_>) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.set_mode(cx.now, Mode::Drain);
            cx.sk.ssthresh = self.inflight(cx, self.max_bw(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(cx, cx.sk.in_flight) <= self.inflight(cx, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(cx);
        }
    }
}
