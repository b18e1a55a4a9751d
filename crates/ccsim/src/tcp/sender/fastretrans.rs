//! The congestion-avoidance state machine of `tcp_input.c`: `tcp_fastretrans_alert`
//! and what it calls. Entering and leaving Disorder, CWR, Recovery and Loss
//! (`tcp_enter_loss` for the RTO), undo of spurious reductions (DSACK, timestamps,
//! F-RTO), and the choice between RACK and NewReno loss marking.

use crate::tcp::cc::{CaEvent, CaState, INFINITE_SSTHRESH};
use crate::tcp::config::RecoveryMode;
use crate::time::Nanos;

use super::{
    TcpSender, FLAG_DATA_SACKED, FLAG_ECE, FLAG_LOST_RETRANS, FLAG_ORIG_SACK_ACKED, FLAG_SND_UNA_ADVANCED,
    TCP_REORDERING,
};

impl TcpSender {
    /// `tcp_enter_loss`: everything not SACKed (and not sent within the last RTT) is
    /// lost; cwnd = in-flight + 1, so go-back-N retransmission starts with one segment
    /// and slow start rebuilds the window.
    pub(super) fn enter_loss(&mut self) {
        self.timeout_mark_lost();
        let st = self.sk.ca_state;
        if st <= CaState::Disorder || self.high_seq <= self.snd_una || (st == CaState::Loss && self.rto_retries == 0) {
            self.prior_ssthresh = self.sk.current_ssthresh();
            self.sk.prior_cwnd = self.sk.cwnd;
            let ss = self.with_cc(|cc, cx| cc.ops().ssthresh(cx));
            self.sk.ssthresh = ss;
            self.with_cc(|cc, cx| cc.ops().cwnd_event(cx, CaEvent::Loss));
            self.init_undo();
        }
        self.sk.cwnd = self.sb.in_flight() + 1;
        self.sk.cwnd_cnt = 0;
        self.bytes_acked = 0;
        self.snd_cwnd_stamp = self.now;
        if st <= CaState::Disorder && self.sb.sacked_out >= TCP_REORDERING {
            self.reordering = self.reordering.min(TCP_REORDERING);
        }
        let new_recovery = st < CaState::Recovery;
        self.set_state(CaState::Loss);
        self.high_seq = self.snd_nxt;
        if self.reno_exit {
            // ns-2 Reno sets `recover_` at a timeout too: duplicate ACKs caused by
            // go-back-N duplicates then trigger no fast retransmit.
            self.reno_recover = self.snd_nxt;
        }
        self.tlp_high_seq = None;
        // F-RTO step 1, for a fresh episode or a repeated timeout.
        self.frto = self.frto_cfg && (new_recovery || self.rto_retries > 0);
        self.tlp_deadline = None;
        self.queue_cwr();
    }

    /// `tcp_timeout_mark_lost`.
    fn timeout_mark_lost(&mut self) {
        let reneged = self.sb.head().is_some_and(|h| h.flags.sacked);
        if reneged {
            self.sb.clear_all_sacked();
            self.sack_cache.clear();
        } else if !self.sack {
            self.sb.sacked_out = 0;
        }
        for i in 0..self.sb.len() {
            if !reneged && i != 0 && self.rack_skb_timeout(i, 0) > 0 {
                continue; // sent too recently to be declared lost
            }
            if self.sb.mark_lost(i) {
                self.lost_total += 1;
            }
        }
    }

    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery)
    }

    pub(super) fn set_state(&mut self, new: CaState) {
        if new == self.sk.ca_state {
            return;
        }
        self.with_cc(|cc, cx| cc.ops().set_state(cx, new));
        self.sk.ca_state = new;
    }

    fn any_retrans_done(&self) -> bool {
        self.sb.retrans_out > 0 || self.sb.head().is_some_and(|h| h.ever_retrans())
    }

    /// `tcp_packet_delayed`: the ACK echoes a timestamp older than the first
    /// retransmission, so the original got through.
    fn packet_delayed(&self, tsecr: Nanos) -> bool {
        matches!(self.retrans_stamp, Some(rs) if tsecr != 0 && tsecr < rs)
    }

    fn may_undo(&self, tsecr: Nanos) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(tsecr))
    }

    fn init_undo(&mut self) {
        self.undo_marker = Some(self.snd_una);
        let mut u = self.sb.retrans_out as i32;
        if self.tlp_high_seq.is_some() && self.tlp_retrans {
            u += 1; // the probe may come back as a DSACK too
        }
        self.undo_retrans = if u > 0 { u } else { -1 };
    }

    fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.sb.unmark_all_lost();
        }
        if self.prior_ssthresh != 0 {
            let c = self.with_cc(|cc, cx| cc.ops().undo_cwnd(cx));
            self.sk.cwnd = c;
            if self.prior_ssthresh > self.sk.ssthresh {
                self.sk.ssthresh = self.prior_ssthresh;
                self.ecn_queue_cwr = false; // `tcp_ecn_withdraw_cwr`
            }
        }
        self.snd_cwnd_stamp = self.now;
        self.undo_marker = None;
        self.rack.advanced = true;
        self.stats.undos += 1;
    }

    /// `tcp_is_non_sack_preventing_reopen`: NewReno holds Recovery until data above
    /// `high_seq` is ACKed, to avoid a false fast retransmit (RFC 6582 §3.2 step 4).
    fn non_sack_preventing_reopen(&mut self) -> bool {
        if self.snd_una == self.high_seq && !self.sack {
            if !self.any_retrans_done() {
                self.retrans_stamp = None;
            }
            return true;
        }
        false
    }

    fn try_undo_recovery(&mut self, tsecr: Nanos) -> bool {
        if self.may_undo(tsecr) {
            self.undo_cwnd_reduction(false);
        }
        if self.non_sack_preventing_reopen() {
            return true;
        }
        self.set_state(CaState::Open);
        false
    }

    fn try_undo_dsack(&mut self) -> bool {
        if self.undo_marker.is_some() && self.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            return true;
        }
        false
    }

    fn try_undo_loss(&mut self, tsecr: Nanos, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo(tsecr) {
            self.undo_cwnd_reduction(true);
            self.rto_retries = 0;
            if self.non_sack_preventing_reopen() {
                return true;
            }
            if frto_undo || self.sack {
                self.set_state(CaState::Open);
            }
            return true;
        }
        false
    }

    fn try_undo_partial(&mut self, prior_snd_una: u64, tsecr: Nanos) -> bool {
        if self.undo_marker.is_some() && self.packet_delayed(tsecr) {
            // The hole was filled by the delayed original: reordering, not loss.
            let fack = self.sb.highest_sack_end.max(self.snd_una);
            self.check_sack_reordering(prior_snd_una, fack);
            if self.sb.retrans_out > 0 {
                return true;
            }
            if !self.any_retrans_done() {
                self.retrans_stamp = None;
            }
            self.undo_cwnd_reduction(true);
            self.try_keep_open();
        }
        false
    }

    pub(super) fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.sk.cwnd_cnt = 0;
        // 2.6 `tcp_enter_cwr` / entering Recovery restart the ABC byte count.
        self.bytes_acked = 0;
        self.sk.prior_cwnd = self.sk.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        let ss = self.with_cc(|cc, cx| cc.ops().ssthresh(cx));
        self.sk.ssthresh = ss;
        self.queue_cwr();
    }

    /// `tcp_ecn_queue_cwr`.
    fn queue_cwr(&mut self) {
        if self.sk.ecn_ok {
            self.ecn_queue_cwr = true;
        }
    }

    pub(super) fn end_cwnd_reduction(&mut self) {
        if self.cc.has_cong_control() {
            return;
        }
        if self.sk.ssthresh < INFINITE_SSTHRESH && (self.sk.ca_state == CaState::Cwr || self.undo_marker.is_some()) {
            self.sk.cwnd = match self.recovery {
                RecoveryMode::Prr => self.sk.ssthresh,
                // 2.6 `tcp_complete_cwr`: never raise cwnd at the end.
                RecoveryMode::RateHalving => self.sk.cwnd.min(self.sk.ssthresh),
            };
            self.snd_cwnd_stamp = self.now;
        }
        self.with_cc(|cc, cx| cc.ops().cwnd_event(cx, CaEvent::CompleteCwr));
    }

    /// `tcp_enter_cwr`: ECN congestion signal, one reduction per window and no undo.
    fn enter_cwr(&mut self) {
        self.prior_ssthresh = 0;
        if self.sk.ca_state < CaState::Cwr {
            self.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
            self.stats.ecn_reductions += 1;
        }
    }

    pub(super) fn try_keep_open(&mut self) {
        let state = if self.sb.left_out() > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
        if self.sk.ca_state != state {
            self.set_state(state);
            self.high_seq = self.snd_nxt;
        }
    }

    fn try_to_open(&mut self, flag: u32) {
        if !self.any_retrans_done() {
            self.retrans_stamp = None;
        }
        if flag & FLAG_ECE != 0 {
            self.enter_cwr();
        }
        if self.sk.ca_state != CaState::Cwr {
            self.try_keep_open();
        }
    }

    pub(super) fn enter_recovery(&mut self, ece_ack: bool) {
        self.stats.fast_recoveries += 1;
        self.stats.loss_events += 1;
        self.prior_ssthresh = 0;
        self.init_undo();
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.prior_ssthresh = self.sk.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_state(CaState::Recovery);
    }

    /// `tcp_time_to_recover` with RACK on (Linux default): recover once a loss is
    /// proven.
    fn time_to_recover(&self) -> bool {
        self.sb.lost_out > 0
    }

    /// `tcp_process_loss` (without F-RTO).
    fn process_loss(&mut self, flag: u32, num_dupack: u32, tsecr: Nanos) {
        let recovered = self.snd_una >= self.high_seq;
        if flag & FLAG_SND_UNA_ADVANCED != 0 && self.try_undo_loss(tsecr, false) {
            return;
        }
        if self.frto {
            // F-RTO (RFC 5682 §3.1, SACK-enhanced). Step 3.b: data never
            // retransmitted was (S)ACKed, so not everything was lost: spurious RTO.
            if flag & FLAG_ORIG_SACK_ACKED != 0 && self.try_undo_loss(tsecr, true) {
                return;
            }
            if self.snd_nxt > self.high_seq {
                // Step 3.a: new data was sent, yet duplicate ACKs or SACKs came back:
                // the loss was real.
                if flag & FLAG_DATA_SACKED != 0 || num_dupack > 0 {
                    self.frto = false;
                }
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 && !recovered {
                // Step 2.b: send new data instead of retransmitting, and see whether
                // the next ACK acknowledges data that was never retransmitted.
                self.high_seq = self.snd_nxt;
                if self.write_seq > self.snd_nxt && self.snd_una + self.snd_wnd > self.snd_nxt {
                    self.frto_rexmit_new = true;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery(tsecr);
            return;
        }
        if !self.sack {
            if self.snd_nxt > self.high_seq && num_dupack > 0 {
                self.add_reno_sack(num_dupack, flag & FLAG_ECE != 0);
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 {
                self.sb.sacked_out = 0;
            }
        }
    }

    /// `tcp_identify_packet_loss`.
    fn identify_packet_loss(&mut self, flag: &mut u32) {
        if self.sb.is_empty() {
            return;
        }
        if !self.sack {
            self.newreno_mark_lost(*flag & FLAG_SND_UNA_ADVANCED != 0);
        } else {
            let prior_retrans = self.sb.retrans_out;
            self.rack_mark_lost();
            if prior_retrans > self.sb.retrans_out {
                *flag |= FLAG_LOST_RETRANS;
            }
        }
    }

    /// `tcp_fastretrans_alert`: the CA state machine, run on every dubious ACK.
    pub(super) fn fastretrans_alert(&mut self, prior_snd_una: u64, num_dupack: u32, flag: &mut u32) {
        let f = *flag;
        let ece_ack = f & FLAG_ECE != 0;
        let tsecr = self.last_tsecr;
        if self.sb.packets_out() == 0 && self.sb.sacked_out > 0 {
            self.sb.sacked_out = 0;
        }
        if ece_ack {
            self.prior_ssthresh = 0; // ECN proves congestion: no undo
        }
        // D. Exit conditions.
        if self.sk.ca_state == CaState::Open {
            self.retrans_stamp = None;
        } else if self.snd_una >= self.high_seq {
            match self.sk.ca_state {
                // Hold CWR until something *above* high_seq is ACKed, so the CWR
                // flag has reached the receiver.
                CaState::Cwr if self.snd_una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                }
                CaState::Recovery => {
                    if !self.sack {
                        self.sb.sacked_out = 0;
                    }
                    if self.try_undo_recovery(tsecr) {
                        return;
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }
        // E. Process state.
        let mut default_branch = true;
        match self.sk.ca_state {
            CaState::Recovery => {
                default_branch = false;
                if f & FLAG_SND_UNA_ADVANCED == 0 {
                    if !self.sack {
                        self.add_reno_sack(num_dupack, ece_ack);
                    }
                } else if self.try_undo_partial(prior_snd_una, tsecr) {
                    return;
                } else if self.reno_exit && self.snd_una < self.high_seq {
                    // Reno (RFC 5681 §3.2 step 6): the partial ACK deflates the window
                    // and ends recovery; the next hole waits for three dupACKs above
                    // `high_seq`, i.e. in practice for the RTO.
                    self.reno_recover = self.high_seq;
                    self.sb.sacked_out = 0;
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                    return;
                }
                if self.try_undo_dsack() {
                    self.try_keep_open();
                }
                self.identify_packet_loss(flag);
                if self.sk.ca_state != CaState::Recovery {
                    if !self.time_to_recover() {
                        return;
                    }
                    self.enter_recovery(ece_ack);
                }
            }
            CaState::Loss => {
                self.process_loss(f, num_dupack, tsecr);
                self.identify_packet_loss(flag);
                if !(self.sk.ca_state == CaState::Open || *flag & FLAG_LOST_RETRANS != 0) {
                    return;
                }
            }
            _ => {}
        }
        if default_branch {
            if !self.sack {
                if f & FLAG_SND_UNA_ADVANCED != 0 {
                    self.sb.sacked_out = 0;
                }
                self.add_reno_sack(num_dupack, ece_ack);
            }
            if self.sk.ca_state <= CaState::Disorder {
                self.try_undo_dsack();
            }
            self.identify_packet_loss(flag);
            if !self.time_to_recover() {
                self.try_to_open(f);
                return;
            }
            self.enter_recovery(ece_ack);
        }
    }
}
