//! The min-RTT filter and PROBE_RTT (`bbr_update_min_rtt`, `bbr_check_probe_rtt_done`).

use super::{Bbr, Mode, CWND_MIN_TARGET, MIN_RTT_WIN, PROBE_RTT_MODE};
use crate::tcp::cc::{CcContext, RateSample};

impl Bbr {
    /// `bbr_check_probe_rtt_done`: after 200 ms and a round at 4 packets, the min_rtt
    /// is fresh; restore the saved cwnd and go back to STARTUP or PROBE_BW.
    pub(super) fn check_probe_rtt_done(&mut self, cx: &mut CcContext<'_>) {
        if !(self.probe_rtt_done_stamp != 0 && cx.now > self.probe_rtt_done_stamp) {
            return;
        }
        self.min_rtt_stamp = cx.now;
        cx.sk.cwnd = cx.sk.cwnd.max(self.prior_cwnd);
        self.reset_mode(cx);
    }

    /// `bbr_update_min_rtt`.
    pub(super) fn update_min_rtt(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        let filter_expired = cx.now > self.min_rtt_stamp + MIN_RTT_WIN;
        if rs.rtt_us >= 0 && ((rs.rtt_us as u64) < self.min_rtt_us as u64 || (filter_expired && !rs.is_ack_delayed)) {
            self.min_rtt_us = rs.rtt_us.min(u32::MAX as i64 - 1) as u32;
            self.min_rtt_stamp = cx.now;
        }
        if filter_expired && !self.idle_restart && self.mode != Mode::ProbeRtt {
            self.set_mode(cx.now, Mode::ProbeRtt);
            self.save_cwnd(cx);
            self.probe_rtt_done_stamp = 0;
        }
        if self.mode == Mode::ProbeRtt {
            // Ignore low rate samples during this mode (Linux marks the socket
            // app-limited; the sender reads `app_limited` back after the hook).
            cx.sk.app_limited = (cx.sk.delivered + cx.sk.in_flight as u64).max(1);
            if self.probe_rtt_done_stamp == 0 && cx.sk.in_flight <= CWND_MIN_TARGET {
                self.probe_rtt_done_stamp = cx.now + PROBE_RTT_MODE;
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = cx.sk.delivered;
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
}
