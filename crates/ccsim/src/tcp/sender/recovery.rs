//! Loss detection by time, as `tcp_recovery.c`: RACK (RFC 8985 §6) with its
//! reordering window and timer, and NewReno's duplicate-ACK marking without SACK
//! (`tcp_newreno_mark_lost`, also in tcp_recovery.c). The tail loss probe
//! (RFC 8985 §7) is RACK's companion and sits here too; Linux schedules and sends it
//! in tcp_output.c (`tcp_schedule_loss_probe`, `tcp_send_loss_probe`) and checks its
//! ACK in tcp_input.c (`tcp_process_tlp_ack`).

use crate::tcp::cc::CaState;
use crate::tcp::segment::Segment;
use crate::time::{Nanos, NS_PER_US};

use super::{TcpSender, FLAG_DATA_SACKED, FLAG_DSACKING_ACK, FLAG_NOT_DUP, FLAG_SND_UNA_ADVANCED};

/// `TCP_TIMEOUT_MIN`: 2 kernel timer ticks (`TcpConfig::kernel_hz`), added to the TLP
/// and RACK timers.
const TCP_TIMEOUT_MIN_TICKS: Nanos = 2;

impl TcpSender {
    /// `tcp_schedule_loss_probe`: probe after 2*srtt (plus a delayed-ACK allowance
    /// of `rto_min` when a single segment is out), but never later than the RTO.
    pub(super) fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        if !self.tlp
            || !self.sack
            || self.sb.packets_out() == 0
            || !matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let mut timeout = if self.rtt.has_sample() {
            let j = self.rtt.jiffy();
            let two_srtt = (self.rtt.srtt() * 2).div_ceil(j) * j;
            two_srtt + if self.sb.packets_out() == 1 { self.min_rto } else { TCP_TIMEOUT_MIN_TICKS * j }
        } else {
            self.initial_rto
        };
        let rto_delta =
            if advancing_rto { Some(self.rtt.rto()) } else { self.rto_deadline.map(|d| d.saturating_sub(self.now)) };
        if let Some(d) = rto_delta.filter(|&d| d > 0) {
            timeout = timeout.min(d);
        }
        self.tlp_deadline = Some(self.now + timeout);
        true
    }

    /// `tcp_send_loss_probe`: send one new segment if the window allows (ignoring
    /// cwnd and Nagle), else retransmit the last segment, so that a tail loss gets
    /// SACK feedback and RACK can repair it without an RTO.
    pub(super) fn send_loss_probe(&mut self) -> Option<Segment> {
        let unsent = self.write_seq - self.snd_nxt;
        if unsent > 0 {
            let len = unsent.min(self.mss as u64) as u32;
            if self.snd_nxt + len as u64 <= self.snd_una + self.snd_wnd {
                self.tlp_retrans = false;
                let seg = self.send_new(len);
                self.batch_new = 0; // a probe does not schedule another probe
                self.tlp_high_seq = Some(self.snd_nxt);
                self.stats.tlp_probes += 1;
                self.rearm_rto_always();
                return Some(seg);
            }
            return None;
        }
        let i = self.sb.len().checked_sub(1)?;
        let last = *self.sb.get(i);
        if last.flags.sacked {
            return None;
        }
        // `__tcp_retransmit_skb`: a probe is not counted in retrans_out; the segment
        // stays "in flight" once, but is marked as ever retransmitted.
        self.event_data_sent();
        let rate = self.rate.on_send(self.now, self.sb.packets_out());
        self.sb.mark_probe_retransmitted(i, self.now, rate);
        self.tlp_retrans = true;
        self.tlp_high_seq = Some(self.snd_nxt);
        self.stats.tlp_probes += 1;
        self.stats.retrans_bytes += last.len as u64;
        self.stats.retrans_segs += 1;
        self.after_send(last.len);
        self.rearm_rto_always();
        Some(self.make_segment(last.seq, last.len, true, false))
    }

    /// `tcp_process_tlp_ack`: did the probe repair a loss? If the ACK moves past the
    /// probe, a segment was lost and repaired by it: reduce cwnd once (CWR).
    pub(super) fn process_tlp_ack(&mut self, ack: u64, flag: u32) {
        let Some(h) = self.tlp_high_seq else { return };
        if ack < h {
            return;
        }
        if !self.tlp_retrans || flag & FLAG_DSACKING_ACK != 0 {
            self.tlp_high_seq = None;
        } else if ack > h {
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.try_keep_open();
        } else if flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED) == 0 {
            self.tlp_high_seq = None;
        }
    }

    /// `tcp_newreno_mark_lost` (RFC 6582): the head is lost after `reordering`
    /// dupACKs, and in Recovery every partial ACK exposes the next hole, one per RTT.
    pub(super) fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let st = self.sk.ca_state;
        if self.reno_exit && st < CaState::Recovery && self.snd_una < self.reno_recover {
            return; // Reno's `bugFix_`: no second fast retransmit in one window
        }
        if (st < CaState::Recovery && self.sb.sacked_out >= self.reordering)
            || (st == CaState::Recovery && snd_una_advanced)
        {
            if self.sb.head().is_some_and(|h| h.flags.lost) {
                return;
            }
            if self.sb.mark_lost(0) {
                self.lost_total += 1;
            }
        }
    }

    /// `tcp_rack_advance`: remember the most recently sent delivered segment.
    pub(super) fn rack_advance(&mut self, ever_retrans: bool, end_seq: u64, tx_time: Nanos) {
        let rtt = self.now.saturating_sub(tx_time);
        // A retransmission ACKed faster than min_rtt was probably the original's ACK:
        // it says nothing about what was delivered when.
        if ever_retrans && rtt / NS_PER_US < self.rtt.min_rtt_us() as u64 {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt = rtt;
        if tx_time > self.rack.mstamp || (tx_time == self.rack.mstamp && end_seq > self.rack.end_seq) {
            self.rack.mstamp = tx_time;
            self.rack.end_seq = end_seq;
        }
    }

    /// `tcp_rack_reo_wnd`.
    fn rack_reo_wnd(&self) -> Nanos {
        if !self.reord_seen {
            if self.sk.ca_state >= CaState::Recovery {
                return 0;
            }
            if self.sb.sacked_out >= self.reordering {
                return 0;
            }
        }
        let min_rtt = self.rtt.min_rtt_us();
        let quarter = if min_rtt == u32::MAX { u64::MAX } else { (min_rtt as u64 >> 2) * NS_PER_US };
        quarter.min(self.rtt.srtt())
    }

    /// Time left before segment `i` counts as lost, ns (negative: overdue).
    pub(super) fn rack_skb_timeout(&self, i: usize, reo_wnd: Nanos) -> i128 {
        let s = self.sb.get(i);
        self.rack.rtt as i128 + reo_wnd as i128 - self.now.saturating_sub(s.tx_time) as i128
    }

    /// `tcp_rack_detect_loss`: returns the longest wait still needed (ns).
    fn rack_detect_loss(&mut self) -> Nanos {
        let reo_wnd = self.rack_reo_wnd();
        let mut timeout: Nanos = 0;
        // Walk in transmission order (Linux's `tsorted_sent_queue`) and stop at the
        // first segment sent after the RACK segment: everything later was sent later.
        let mut cur = self.sb.next_tsorted(None);
        while let Some((key, idx)) = cur {
            cur = self.sb.next_tsorted(Some(key));
            let s = *self.sb.get(idx);
            let i = idx + 1;
            if s.flags.sacked || (s.flags.lost && !s.flags.retrans) {
                continue;
            }
            let sent_before =
                self.rack.mstamp > s.tx_time || (self.rack.mstamp == s.tx_time && self.rack.end_seq > s.end_seq());
            if !sent_before {
                break;
            }
            let remaining = self.rack_skb_timeout(i - 1, reo_wnd);
            if remaining <= 0 {
                if self.sb.mark_lost(i - 1) {
                    self.lost_total += 1;
                }
            } else {
                timeout = timeout.max(remaining as Nanos);
            }
        }
        timeout
    }

    /// `tcp_rack_mark_lost`.
    pub(super) fn rack_mark_lost(&mut self) {
        if !self.rack.advanced {
            return;
        }
        self.rack.advanced = false;
        let timeout = self.rack_detect_loss();
        if timeout > 0 {
            self.reo_deadline = Some(self.now + self.reo_timer(timeout));
        }
    }

    /// `tcp_rack_mark_lost`'s timer: `usecs_to_jiffies(timeout) + TCP_TIMEOUT_MIN`.
    fn reo_timer(&self, timeout: Nanos) -> Nanos {
        let j = self.rtt.jiffy();
        timeout.div_ceil(j) * j + TCP_TIMEOUT_MIN_TICKS * j
    }

    /// `tcp_rack_reo_timeout`: the reordering window expired.
    pub(super) fn rack_reo_timeout(&mut self) {
        let prior_in_flight = self.sb.in_flight();
        let lost_before = self.lost_total;
        let timeout = self.rack_detect_loss();
        if prior_in_flight != self.sb.in_flight() && self.sk.ca_state != CaState::Recovery {
            self.enter_recovery(false);
            if !self.cc.has_cong_control() {
                let newly_lost = (self.lost_total - lost_before) as u32;
                self.cwnd_reduction(1, newly_lost, 0);
            }
        }
        if timeout > 0 {
            self.reo_deadline = Some(self.now + self.reo_timer(timeout));
        }
        if self.rto_deadline.is_none() {
            self.rearm_rto();
        }
    }
}
