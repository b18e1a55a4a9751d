//! ACK processing, as `tcp_input.c`'s `tcp_ack`: the window update, SACK tagging
//! with DSACK, the cumulative ACK with its RTT sample (Karn), duplicate-ACK counting
//! without SACK, and the window change the ACK then makes (`tcp_cong_control`: the
//! CC's growth, PRR or rate halving, the pacing rate). The state machine a dubious ACK
//! runs is in `fastretrans.rs`.

use crate::tcp::cc::{AckFlags, AckSample, CaState, RateSample};
use crate::tcp::config::RecoveryMode;
use crate::tcp::segment::Segment;
use crate::time::{Nanos, NS_PER_US};

use super::{
    TcpSender, FLAG_ACKED, FLAG_ANY_PROGRESS, FLAG_CA_ALERT, FLAG_DATA_ACKED, FLAG_DATA_SACKED, FLAG_DSACKING_ACK,
    FLAG_ECE, FLAG_FORWARD_PROGRESS, FLAG_NOT_DUP, FLAG_ORIG_SACK_ACKED, FLAG_RETRANS_DATA_ACKED, FLAG_SET_XMIT_TIMER,
    FLAG_SND_UNA_ADVANCED, FLAG_WIN_UPDATE, TCP_REORDERING,
};

/// `net.ipv4.tcp_max_reordering` = 300.
const TCP_MAX_REORDERING: u32 = 300;
/// `sysctl_tcp_pacing_ss_ratio` / `_ca_ratio`, percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;

impl TcpSender {
    /// Processes one ACK from the receiver (`tcp_ack`).
    pub fn on_ack(&mut self, now: Nanos, seg: &Segment) {
        self.now = now;
        self.last_tsecr = seg.tsecr;
        // `tcp_replace_ts_recent`: the peer's newest TSval, echoed on our data (RFC 7323
        // §4.3). The receiver sends no data, so every in-order ACK qualifies.
        if seg.tsval >= self.ts_recent {
            self.ts_recent = seg.tsval;
        }
        self.sackt = (None, None);
        self.frto_rexmit_new = false;
        let ack = seg.ack;
        if ack > self.snd_nxt {
            return; // ACKs data never sent: Linux drops it.
        }
        let prior_snd_una = self.snd_una;
        let prior_fack = if self.sack && self.sb.sacked_out > 0 { self.sb.highest_sack_end } else { self.snd_una };
        let prior_packets = self.sb.packets_out();
        let prior_delivered = self.rate.delivered;
        let prior_lost = self.lost_total;
        let mut rs = RateSample { prior_in_flight: self.sb.in_flight(), rtt_us: -1, ..Default::default() };
        let mut flag = 0u32;
        let ece = seg.ece && self.sk.ecn_ok;
        if ece {
            flag |= FLAG_ECE;
        }

        if ack < prior_snd_una {
            // Old ACK: only its SACK information is useful.
            if seg.n_sack > 0 && self.sack {
                flag |= self.sacktag(seg, prior_snd_una, &mut rs, ece);
                self.fastretrans_alert(prior_snd_una, 0, &mut flag);
            }
            return;
        }

        // `tcp_ack_update_window` / `tcp_may_update_window`: the peer sends no data,
        // so its sequence number (snd_wl1) never moves; the window is taken when the
        // ACK advances, when it grows, or when it closes to zero. A duplicate ACK
        // with a smaller window is ignored, as in Linux.
        if ack > self.snd_una || seg.rwnd > self.snd_wnd || seg.rwnd == 0 {
            if seg.rwnd != self.snd_wnd || ack > self.snd_una {
                flag |= FLAG_WIN_UPDATE;
            }
            self.snd_wnd = seg.rwnd;
            if seg.rwnd > self.max_snd_wnd {
                self.max_snd_wnd = seg.rwnd;
                self.size_goal = super::output::size_goal(self.max_snd_wnd, self.mss);
            }
        }
        // Linux 2.6 counted ABC bytes here, before the state machine ran.
        self.abc_count_acked(ack - prior_snd_una);
        if ack > self.snd_una {
            flag |= FLAG_SND_UNA_ADVANCED;
            self.snd_una = ack;
            self.rto_retries = 0;
        }
        let fast_path = flag & FLAG_SND_UNA_ADVANCED != 0 && seg.n_sack == 0 && !ece;
        if seg.n_sack > 0 && self.sack {
            flag |= self.sacktag(seg, prior_snd_una, &mut rs, ece);
        }
        let mut ev = if fast_path { 0 } else { AckFlags::SLOWPATH };
        if flag & FLAG_WIN_UPDATE != 0 {
            ev |= AckFlags::WIN_UPDATE;
        }
        if ece {
            ev |= AckFlags::ECE;
        }
        self.with_cc(|cc, cx| cc.ops().in_ack_event(cx, AckFlags(ev)));

        if prior_packets == 0 {
            // `no_queue`: nothing was outstanding; a DSACK may still undo, and a
            // window update may unblock data held by a closed window.
            if flag & FLAG_DSACKING_ACK != 0 {
                self.fastretrans_alert(prior_snd_una, 0, &mut flag);
            }
            self.ack_probe();
            return;
        }

        flag |= self.clean_rtx_queue(prior_fack, &mut rs, seg, ece);

        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(ack, flag);
        }
        if self.ack_is_dubious(flag) {
            let num_dupack = u32::from(flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DSACKING_ACK) == 0);
            self.fastretrans_alert(prior_snd_una, num_dupack, &mut flag);
        }
        if flag & FLAG_SET_XMIT_TIMER != 0 {
            // `tcp_set_xmit_timer`. Linux arms the probe *instead of* the RTO and
            // later re-derives the RTO from the head's send time; keeping the RTO
            // armed from now is the same to within the ACK's delay.
            self.rearm_rto();
            self.schedule_loss_probe(true);
        }
        let delivered = (self.rate.delivered - prior_delivered) as u32;
        let lost = (self.lost_total - prior_lost) as u32;
        let min_rtt = self.rtt.min_rtt_us();
        self.rate.generate(now, delivered, lost, min_rtt, &mut rs);
        self.cong_control(delivered, flag, &rs);
        self.ack_probe();
    }

    /// `tcp_ack_probe`: a window that reopened stops the persist timer.
    fn ack_probe(&mut self) {
        let unsent = self.write_seq - self.snd_nxt;
        if unsent == 0 {
            self.persist_deadline = None;
            self.persist_backoff = 0;
            return;
        }
        let len = unsent.min(self.mss as u64);
        if self.snd_nxt + len <= self.snd_una + self.snd_wnd {
            self.persist_deadline = None;
            self.persist_backoff = 0;
        }
    }

    fn ack_is_dubious(&self, flag: u32) -> bool {
        flag & FLAG_NOT_DUP == 0 || flag & FLAG_CA_ALERT != 0 || self.sk.ca_state != CaState::Open
    }

    /// `tcp_sacktag_write_queue` with `tcp_check_dsack`. Returns flags.
    fn sacktag(&mut self, seg: &Segment, prior_snd_una: u64, rs: &mut RateSample, ece: bool) -> u32 {
        let mut flag = 0;
        let blocks = seg.sacks();
        let mut reord = u64::MAX;
        let mut new_cache = std::mem::take(&mut self.sack_cache_next);
        new_cache.clear();
        let prior_fack = if self.sb.sacked_out > 0 { self.sb.highest_sack_end } else { prior_snd_una };
        for (bi, b) in blocks.iter().enumerate() {
            if b.end <= b.start {
                continue;
            }
            // `tcp_check_dsack`: the first block reports a duplicate when flagged, when
            // it lies below the cumulative ACK, or when it sits inside the second block.
            let is_dsack = bi == 0
                && (seg.dsack
                    || b.start < seg.ack
                    || (blocks.len() > 1 && b.start >= blocks[1].start && b.end <= blocks[1].end));
            if is_dsack {
                flag |= FLAG_DSACKING_ACK;
                if self.dsack {
                    self.dsack_undo_accounting(b.start, b.end, prior_snd_una);
                }
                continue;
            }
            new_cache.push((b.start, b.end));
            if b.end <= self.snd_una {
                continue;
            }
            let start = b.start.max(self.snd_una);
            // `recv_sack_cache`: the part of a block already reported by the previous
            // ACK was tagged then; a growing block costs only its new end.
            let mut skip = start;
            while let Some(c) = self.sack_cache.iter().find(|c| c.0 <= skip && skip < c.1) {
                skip = c.1;
            }
            let mut i = self.sb.containing_or_after(skip);
            while i < self.sb.len() && self.sb.get(i).end_seq() <= b.end {
                let s = *self.sb.get(i);
                if !s.flags.sacked && s.seq >= start {
                    if !s.ever_retrans() {
                        if s.seq < prior_fack {
                            reord = reord.min(s.seq);
                        }
                        if s.end_seq() <= self.high_seq {
                            flag |= FLAG_ORIG_SACK_ACKED;
                        }
                        // `first_sackt`/`last_sackt`: SACK-based RTT sample.
                        self.sackt.0.get_or_insert(s.tx_time);
                        self.sackt.1 = Some(s.tx_time);
                    }
                    self.rack_advance(s.ever_retrans(), s.end_seq(), s.tx_time);
                    self.rate.on_delivered(rs, self.sb.seg_mut_rate(i), s.tx_time, s.end_seq(), s.ever_retrans(), true);
                    self.sb.mark_sacked(i);
                    self.count_delivered(1, ece);
                    flag |= FLAG_DATA_SACKED;
                }
                i += 1;
            }
        }
        // Swap the two buffers: no allocation per SACK-carrying ACK.
        self.sack_cache_next = std::mem::replace(&mut self.sack_cache, new_cache);
        if reord < prior_fack {
            self.check_sack_reordering(reord, prior_fack);
        }
        flag
    }

    /// DSACK bookkeeping for undo (`tcp_sacktag_one` dup_sack branch and the
    /// "forgotten data" count in `tcp_sacktag_write_queue`): each duplicate of a
    /// retransmitted segment proves one retransmission unnecessary.
    fn dsack_undo_accounting(&mut self, start: u64, end: u64, prior_snd_una: u64) {
        let Some(marker) = self.undo_marker else { return };
        if self.undo_retrans <= 0 || end <= marker {
            return;
        }
        if end <= prior_snd_una.max(self.snd_una) && end <= self.sb.head().map_or(u64::MAX, |h| h.seq) {
            let segs = ((end - start).div_ceil(self.mss as u64)).max(1) as i32;
            self.undo_retrans = (self.undo_retrans - segs).max(0);
            return;
        }
        let mut i = self.sb.first_at_or_after(start);
        while i < self.sb.len() && self.sb.get(i).end_seq() <= end {
            if self.sb.get(i).ever_retrans() && self.undo_retrans > 0 {
                self.undo_retrans -= 1;
            }
            i += 1;
        }
    }

    /// `tcp_check_sack_reordering`: a never-retransmitted segment below the highest
    /// SACK was delivered, so the network reorders by at least that distance.
    pub(super) fn check_sack_reordering(&mut self, low_seq: u64, fack: u64) {
        if low_seq >= fack {
            return;
        }
        let metric = fack - low_seq;
        if metric > self.reordering as u64 * self.mss as u64 {
            let segs = metric.div_ceil(self.mss as u64).min(TCP_MAX_REORDERING as u64) as u32;
            self.reordering = self.reordering.max(segs);
        }
        self.reord_seen = true;
    }

    fn count_delivered(&mut self, n: u32, ece: bool) {
        self.rate.delivered += n as u64;
        if ece {
            self.rate.delivered_ce += n as u64;
        }
    }

    /// `tcp_clean_rtx_queue` + `tcp_ack_update_rtt` + the `pkts_acked` hook.
    fn clean_rtx_queue(&mut self, prior_fack: u64, rs: &mut RateSample, seg: &Segment, ece: bool) -> u32 {
        let now = self.now;
        let mut flag = 0u32;
        let mut first_ackt: Option<Nanos> = None;
        let mut last_ackt: Option<Nanos> = None;
        let mut pkts_acked = 0u32;
        let mut reord = u64::MAX;
        while let Some(mut s) = self.sb.pop_acked(self.snd_una) {
            if s.ever_retrans() {
                flag |= FLAG_RETRANS_DATA_ACKED;
            } else if !s.flags.sacked {
                last_ackt = Some(s.tx_time);
                first_ackt.get_or_insert(s.tx_time);
                reord = reord.min(s.seq);
                if s.end_seq() <= self.high_seq {
                    flag |= FLAG_ORIG_SACK_ACKED;
                }
            }
            if !s.flags.sacked && self.sack {
                self.count_delivered(1, ece);
                if !(s.ever_retrans() && seg.tsecr != 0 && seg.tsecr < s.tx_time) {
                    self.rack_advance(s.ever_retrans(), s.end_seq(), s.tx_time);
                }
            }
            pkts_acked += 1;
            let (tx, end, rt) = (s.tx_time, s.end_seq(), s.ever_retrans());
            self.rate.on_delivered(rs, &mut s.rate, tx, end, rt, false);
            flag |= FLAG_DATA_ACKED;
        }
        if flag & FLAG_ACKED != 0 {
            flag |= FLAG_SET_XMIT_TIMER;
            if !self.sack {
                self.remove_reno_sacks(pkts_acked, ece);
                if flag & FLAG_RETRANS_DATA_ACKED != 0 {
                    flag &= !FLAG_ORIG_SACK_ACKED;
                }
            } else if reord < prior_fack {
                self.check_sack_reordering(reord, prior_fack);
            }
        }

        // RTT: Karn's rule. A cumulative ACK that covers any retransmitted segment
        // gives no sequence-based sample; SACKed originals or the timestamp echo may.
        let mut seq_rtt: i64 = -1;
        let mut ca_rtt: i64 = -1;
        if let (Some(f), Some(l)) = (first_ackt, last_ackt) {
            if flag & FLAG_RETRANS_DATA_ACKED == 0 {
                seq_rtt = ((now - f) / NS_PER_US) as i64;
                ca_rtt = ((now - l) / NS_PER_US) as i64;
            }
        }
        let mut sack_rtt: i64 = -1;
        if let (Some(f), Some(l)) = std::mem::take(&mut self.sackt) {
            sack_rtt = ((now - f) / NS_PER_US) as i64;
            ca_rtt = ((now - l) / NS_PER_US) as i64;
        }
        if seq_rtt < 0 {
            seq_rtt = sack_rtt;
        }
        // RFC 7323 RTTM: the echoed timestamp gives a sample when the ACK
        // acknowledges new data, also for retransmitted data (it echoes the copy that
        // arrived).
        if seq_rtt < 0 && seg.tsecr != 0 && seg.tsecr <= now && flag & FLAG_ACKED != 0 {
            seq_rtt = ((now - seg.tsecr) / NS_PER_US) as i64;
            ca_rtt = seq_rtt;
        }
        rs.rtt_us = ca_rtt;
        if seq_rtt >= 0 {
            self.rtt.on_sample(now, seq_rtt as u64, ca_rtt.max(0) as u64, self.snd_una, self.snd_nxt);
            self.stats.rtt_samples_us.push(seq_rtt.min(u32::MAX as i64) as u32);
        }

        let in_flight_bytes = if rs.prior_mstamp.is_some() {
            (self.mss as u64 * (self.rate.delivered - rs.prior_delivered)).min(u32::MAX as u64) as u32
        } else {
            0
        };
        let sample = AckSample { pkts_acked, rtt_us: rs.rtt_us, in_flight: in_flight_bytes };
        self.with_cc(|cc, cx| cc.ops().pkts_acked(cx, &sample));
        flag
    }

    /// `tcp_add_reno_sack`: without SACK, each duplicate ACK stands for one segment
    /// that left the network.
    pub(super) fn add_reno_sack(&mut self, num_dupack: u32, ece: bool) {
        if num_dupack == 0 {
            return;
        }
        let prior = self.sb.sacked_out;
        self.sb.sacked_out += num_dupack;
        if self.limit_reno_sacked() {
            self.reord_seen = true;
        }
        let d = self.sb.sacked_out.saturating_sub(prior);
        if d > 0 {
            self.count_delivered(d, ece);
        }
    }

    /// `tcp_limit_reno_sacked`: more dupACKs than segments outstanding means the
    /// network duplicated or reordered; clamp.
    fn limit_reno_sacked(&mut self) -> bool {
        let holes = self.sb.lost_out.max(1).min(self.sb.packets_out());
        if self.sb.sacked_out + holes > self.sb.packets_out() {
            self.sb.sacked_out = self.sb.packets_out() - holes;
            return true;
        }
        false
    }

    /// `tcp_remove_reno_sacks`: one cumulatively ACKed segment filled the hole, the
    /// rest had already been counted by duplicate ACKs.
    fn remove_reno_sacks(&mut self, acked: u32, ece: bool) {
        if acked == 0 {
            return;
        }
        let d = acked.saturating_sub(self.sb.sacked_out).max(1);
        self.count_delivered(d, ece);
        if acked > self.sb.sacked_out {
            self.sb.sacked_out = 0;
        } else {
            self.sb.sacked_out -= acked - 1;
        }
    }

    /// `tcp_cong_control`.
    fn cong_control(&mut self, delivered: u32, flag: u32, rs: &RateSample) {
        if self.cc.has_cong_control() {
            self.with_cc(|cc, cx| cc.cong_control(cx, rs));
            return;
        }
        if self.in_cwnd_reduction() {
            match self.recovery {
                RecoveryMode::Prr => self.cwnd_reduction(delivered, rs.losses, flag),
                RecoveryMode::RateHalving => self.cwnd_down(flag),
            }
        } else if self.may_raise_cwnd(flag) {
            if let Some(acked) = self.abc_credit(delivered) {
                self.with_cc(|cc, cx| cc.cong_avoid(cx, acked));
            }
            self.snd_cwnd_stamp = self.now;
        }
        self.update_pacing_rate();
    }

    /// `tcp_may_raise_cwnd`: grow on in-order progress only, unless reordering is
    /// known to be high.
    fn may_raise_cwnd(&self, flag: u32) -> bool {
        if self.reordering > TCP_REORDERING {
            flag & FLAG_FORWARD_PROGRESS != 0
        } else {
            flag & FLAG_DATA_ACKED != 0
        }
    }

    /// `tcp_cwnd_reduction`: Proportional Rate Reduction (RFC 6937). While more than
    /// ssthresh is in flight, send `ssthresh/prior_cwnd` of what is delivered; below
    /// ssthresh, send what is delivered, plus one when the cumulative ACK advanced
    /// without new losses (PRR-SSRB, slow-starting back to ssthresh).
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
        if newly_acked_sacked == 0 || self.sk.prior_cwnd == 0 {
            return;
        }
        let in_flight = self.sb.in_flight() as i64;
        let delta = self.sk.ssthresh as i64 - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let mut sndcnt: i64 = if delta < 0 {
            let dividend = self.sk.ssthresh as u64 * self.prr_delivered as u64 + self.sk.prior_cwnd as u64 - 1;
            (dividend / self.sk.prior_cwnd as u64) as i64 - self.prr_out as i64
        } else {
            let mut s = (self.prr_delivered as i64 - self.prr_out as i64).max(newly_acked_sacked as i64);
            if flag & FLAG_SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                s += 1;
            }
            s.min(delta)
        };
        // Entering recovery must let the fast retransmission out.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.sk.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// Linux 2.6 `tcp_cwnd_down` (rate halving): one segment off cwnd per two ACKs
    /// that show progress, never below ssthresh/2 (`tcp_reno_min_cwnd`), and never
    /// more than one segment above what is in flight.
    fn cwnd_down(&mut self, flag: u32) {
        let mut decr = self.sk.cwnd_cnt + 1;
        if flag & (FLAG_ANY_PROGRESS | FLAG_DSACKING_ACK) != 0 || (!self.sack && flag & FLAG_NOT_DUP == 0) {
            self.sk.cwnd_cnt = decr & 1;
            decr >>= 1;
            let floor = (self.sk.ssthresh / 2).max(1);
            if decr > 0 && self.sk.cwnd > floor {
                self.sk.cwnd -= decr;
            }
            self.sk.cwnd = self.sk.cwnd.min(self.sb.in_flight() + 1).max(1);
            self.snd_cwnd_stamp = self.now;
        }
    }

    /// `tcp_update_pacing_rate`: 2x cwnd/srtt while cwnd < ssthresh/2 (slow start),
    /// 1.2x after, in bytes per second.
    fn update_pacing_rate(&mut self) {
        let srtt8 = self.rtt.srtt_us8();
        if srtt8 == 0 {
            return;
        }
        let ratio = if self.sk.cwnd < self.sk.ssthresh / 2 { PACING_SS_RATIO } else { PACING_CA_RATIO };
        // Once per ACK: the product fits 64 bits for any realistic window, and the
        // 128-bit division is kept only for the case where it does not.
        let per_seg = self.mss as u64 * ((1_000_000 / 100) << 3) * ratio;
        let segs = self.sk.cwnd.max(self.sb.packets_out()) as u64;
        let rate = match per_seg.checked_mul(segs) {
            Some(n) => n / srtt8 as u64,
            None => u64::try_from(per_seg as u128 * segs as u128 / srtt8 as u128).unwrap_or(u64::MAX),
        };
        self.sk.pacing_rate = rate.min(u64::MAX - 1);
    }
}
