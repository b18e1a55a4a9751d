//! The receiver's timers, as `tcp_timer.c`: the delayed ACK
//! (`tcp_delack_timer_handler`) and SACK compression (`tcp_compressed_ack_kick`).

use crate::time::Nanos;

use super::{TcpReceiver, TCP_RTO_MIN, TCP_TIMEOUT_INIT};

impl TcpReceiver {
    /// When [`on_timer`](Self::on_timer) must next be called: the delayed-ACK timer or
    /// the SACK-compression timer, whichever is earlier.
    pub fn next_timer(&self) -> Option<Nanos> {
        match (self.delack_at, self.comp_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Fires the timers due at `now`; any ACK they produce is then in
    /// [`poll_ack`](Self::poll_ack).
    pub fn on_timer(&mut self, now: Nanos) {
        // `tcp_compressed_ack_kick`.
        if let Some(t) = self.comp_at {
            if t <= now {
                self.comp_at = None;
                if self.compressed_ack > 0 {
                    self.compressed_ack -= 1;
                    self.send_ack(now);
                }
            }
        }
        // `tcp_delack_timer_handler`.
        if let Some(t) = self.delack_at {
            if t <= now {
                self.delack_at = None;
                if self.ack_scheduled {
                    // "Delayed ACK missed: inflate ATO": the sender is slower than we
                    // guessed, wait longer next time (bounded by the RTO).
                    self.ato = (self.ato * 2).min(self.ato_rto);
                    self.send_ack(now);
                }
            }
        }
    }

    /// The receiving socket's RTO: from its handshake RTT sample if it has one
    /// (`tcp_rtt_estimator` first sample: RTO = srtt + max(2·srtt, 200 ms)), else 1 s.
    pub(super) fn rto(&self) -> Nanos {
        match self.cfg.srtt_ns {
            Some(s) if s > 0 => s + (2 * s).max(TCP_RTO_MIN),
            _ => TCP_TIMEOUT_INIT,
        }
    }
}
