//! The timers, as `tcp_timer.c`: when the sender next has work, the dispatch of due
//! timers, the RTO (`tcp_retransmit_timer`, with backoff) and the zero-window probe
//! (`tcp_probe_timer`). RACK's reordering timer and the loss probe's are set in
//! `recovery.rs`; `enter_loss` is in `fastretrans.rs` as in tcp_input.c.

use crate::tcp::cc::CaState;
use crate::time::{Nanos, NS_PER_SEC};

use super::TcpSender;

impl TcpSender {
    /// Earliest time `on_timer` (or, for pacing, `poll_transmit`) has work.
    pub fn next_timer(&self) -> Option<Nanos> {
        // The pacing timer only matters when cwnd would let a segment out: Linux's
        // hrtimer also fires when cwnd is full, but then `tcp_write_xmit` sends nothing,
        // and the ACK that opens cwnd runs it anyway (the timer is past by then).
        let pacing = (self.pacing_active()
            && self.wstamp > self.now
            && self.sb.in_flight() < self.sk.cwnd
            && self.has_sendable())
        .then_some(self.wstamp);
        // Called several times per event: a branch-free min over the options (with the
        // iterator-flatten form, next_timer was ~4 % of a paced run's instructions).
        let next = [self.rto_deadline, self.reo_deadline, self.persist_deadline, self.tlp_deadline, pacing]
            .iter()
            .fold(u64::MAX, |m, t| m.min(t.unwrap_or(u64::MAX)));
        (next != u64::MAX).then_some(next)
    }

    fn has_sendable(&self) -> bool {
        self.write_seq > self.snd_nxt || self.sb.lost_out > self.sb.retrans_out
    }

    /// Runs every timer due at `now`.
    pub fn on_timer(&mut self, now: Nanos) {
        self.now = now;
        if self.reo_deadline.is_some_and(|t| t <= now) {
            self.reo_deadline = None;
            self.rack_reo_timeout();
        }
        if self.tlp_deadline.is_some_and(|t| t <= now) {
            // The probe timer stands in for the RTO when both are due.
            self.tlp_deadline = None;
            if self.tlp_high_seq.is_none() && self.sb.packets_out() > 0 {
                self.tlp_pending = true;
                self.rearm_rto_always();
            }
        }
        if self.rto_deadline.is_some_and(|t| t <= now) {
            self.rto_deadline = None;
            self.retransmit_timer();
        }
        if self.persist_deadline.is_some_and(|t| t <= now) {
            self.persist_deadline = None;
            self.probe_timer();
        }
    }

    pub(super) fn rearm_rto(&mut self) {
        if self.sb.packets_out() == 0 {
            self.rto_deadline = None;
        } else {
            self.rearm_rto_always();
        }
    }

    pub(super) fn rearm_rto_always(&mut self) {
        self.rto_deadline = Some(self.now + self.rtt.rto());
    }

    pub(super) fn persist_timeout(&self) -> Nanos {
        let base = self.rtt.base_rto().max(self.rtt.rto());
        base.saturating_mul(1 << self.persist_backoff.min(20)).min(120 * NS_PER_SEC)
    }

    /// `tcp_probe_timer` / `tcp_send_probe0`: the peer's window is closed and nothing
    /// is in flight to carry a window update back; send a zero-length probe at
    /// `snd_una` so the receiver answers with an ACK (Linux probes with `snd_una - 1`,
    /// which does not exist when sequence numbers start at 0).
    fn probe_timer(&mut self) {
        if self.sb.packets_out() > 0 || self.write_seq == self.snd_nxt {
            self.persist_backoff = 0;
            return;
        }
        self.probe_pending = true;
        self.persist_backoff += 1;
        self.persist_deadline = Some(self.now + self.persist_timeout());
    }

    /// `tcp_retransmit_timer`.
    fn retransmit_timer(&mut self) {
        if self.sb.packets_out() == 0 {
            return;
        }
        self.stats.timeouts += 1;
        // An RTO during Recovery or Loss continues the same congestion episode.
        if self.sk.ca_state < CaState::Recovery {
            self.stats.loss_events += 1;
        }
        self.enter_loss();
        self.rto_retries += 1;
        self.rtt.back_off();
        self.rearm_rto_always();
    }
}
