//! The retransmission queue with per-segment SACK state: Linux's `tcp_rtx_queue` with
//! the `TCPCB_SACKED_ACKED`, `TCPCB_LOST`, `TCPCB_SACKED_RETRANS` and
//! `TCPCB_EVER_RETRANS` bits, and the counters derived from them
//! (`sacked_out`, `lost_out`, `retrans_out`).
//!
//! Segments keep the boundaries of their first transmission (Linux may split or
//! collapse skbs; with at most one MSS per segment this never matters here), so a
//! segment is the unit of in-flight accounting, exactly one packet each.
//!
//! Every flag change goes through [`Scoreboard::set_flags`], which keeps the counters
//! consistent; `tcp_packets_in_flight` is then `packets_out - (sacked_out + lost_out)
//! + retrans_out`.
//!
//! Without SACK, `sacked_out` is Linux's duplicate-ACK estimate (`tcp_add_reno_sack`)
//! and no segment carries the SACKED bit; the sender edits the counter directly.

use crate::tcp::rate::TxRateInfo;
use crate::time::Nanos;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SegFlags {
    /// SACKed by the receiver (`TCPCB_SACKED_ACKED`).
    pub sacked: bool,
    /// Deemed lost (`TCPCB_LOST`).
    pub lost: bool,
    /// A retransmission of it is in flight (`TCPCB_SACKED_RETRANS`).
    pub retrans: bool,
}

/// One transmitted, not yet cumulatively acknowledged segment: 64 bytes, aligned, so
/// a lookup touches one cache line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(align(64))]
pub struct TxSeg {
    pub seq: u64,
    pub len: u32,
    pub flags: SegFlags,
    /// [`TxSeg::ever_retrans`] and [`TxSeg::skb_head`], one byte so the segment stays
    /// one cache line.
    marks: u8,
    /// Time of the latest (re)transmission.
    pub tx_time: Nanos,
    /// Delivery-rate snapshot of the latest (re)transmission.
    pub rate: TxRateInfo,
    /// Position in the send-order log while RACK must examine it (set by the
    /// scoreboard; callers pass 0).
    pub ts_pos: u64,
}

const _: () = assert!(std::mem::size_of::<TxSeg>() == 64);

const EVER_RETRANS: u8 = 1;
const SKB_HEAD: u8 = 2;

impl TxSeg {
    /// A segment on its first transmission; `skb_head` as [`TxSeg::skb_head`].
    pub fn new(seq: u64, len: u32, tx_time: Nanos, rate: TxRateInfo, skb_head: bool) -> TxSeg {
        let marks = if skb_head { SKB_HEAD } else { 0 };
        TxSeg { seq, len, flags: SegFlags::default(), marks, tx_time, rate, ts_pos: 0 }
    }

    /// Retransmitted at least once (`TCPCB_EVER_RETRANS`): Karn's rule and undo use it.
    #[inline]
    pub fn ever_retrans(&self) -> bool {
        self.marks & EVER_RETRANS != 0
    }

    /// Begins an skb of the retransmission queue: the first segment of a TSO chunk
    /// (`tso_fragment` cuts one skb per chunk sent) or of a retransmission
    /// (`tcp_fragment` in `__tcp_retransmit_skb`). SACK state adds and removes
    /// boundaries on top of these ([`Scoreboard::skbs`]).
    #[inline]
    pub fn skb_head(&self) -> bool {
        self.marks & SKB_HEAD != 0
    }

    #[inline]
    pub fn end_seq(&self) -> u64 {
        self.seq + self.len as u64
    }

    /// Lost and not yet retransmitted: a candidate for `tcp_xmit_retransmit_queue`.
    #[inline]
    fn pending(&self) -> bool {
        self.flags.lost && !self.flags.retrans && !self.flags.sacked
    }
}

#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    segs: VecDeque<TxSeg>,
    /// Serial number of `segs[0]`: segments are numbered in push order and keep their
    /// number, so the send log and the retransmission hint find a segment's index by
    /// subtraction (no search, no division by the segment size).
    front_serial: u64,
    pub sacked_out: u32,
    pub lost_out: u32,
    pub retrans_out: u32,
    /// Segments lost and not yet retransmitted.
    pending_out: u32,
    /// No pending segment has a serial number below this (`retransmit_skb_hint`).
    pending_hint: u64,
    /// End of the highest SACKed segment (`tcp_highest_sack_seq` when SACKs exist).
    pub highest_sack_end: u64,
    /// Skbs the queue would be in Linux ([`Scoreboard::skbs`]), kept as segments change.
    skbs: u32,
    /// Start of every segment RACK has to examine: not SACKed, and not marked lost
    /// while awaiting retransmission (the role of Linux's `tsorted_sent_queue`, from
    /// which SACKed skbs are removed; Linux skips lost-not-retransmitted ones with a
    /// `continue`, we keep them out of the set so a long loss episode does not make
    /// every ACK walk all of its holes again).
    /// In (re)transmission order, as Linux appends to `tsorted_sent_queue`, so the walk
    /// can stop at the first segment sent after the RACK segment.
    tsorted: SendLog,
}

/// Linux's `tsorted_sent_queue` (a linked list with O(1) unlink) as an append-only log
/// with lazy deletion: a segment knows its position, removal clears the entry's
/// `live` bit, and dead entries are dropped from the front. Every (re)transmission
/// happens at the current time, so appending keeps the log in send order; the rare
/// re-insertion at an old send time (undo of LOST marks, SACK reneging) sets `dirty`
/// and the log is rebuilt in (time, seq) order before the next walk.
#[derive(Clone, Debug, Default)]
struct SendLog {
    entries: VecDeque<LogEntry>,
    /// Absolute position of `entries[0]`.
    base: u64,
    /// Latest send time appended.
    last_time: Nanos,
    dirty: bool,
}

#[derive(Clone, Copy, Debug)]
struct LogEntry {
    /// The segment's serial number (see `Scoreboard::front_serial`).
    serial: u64,
    live: bool,
}

impl SendLog {
    /// Appends; returns the position.
    fn append(&mut self, serial: u64, tx_time: Nanos) -> u64 {
        if tx_time < self.last_time {
            self.dirty = true;
        }
        self.last_time = self.last_time.max(tx_time);
        self.entries.push_back(LogEntry { serial, live: true });
        self.base + self.entries.len() as u64 - 1
    }

    fn unlink(&mut self, pos: u64) {
        self.entries[(pos - self.base) as usize].live = false;
        while self.entries.front().is_some_and(|e| !e.live) {
            self.entries.pop_front();
            self.base += 1;
        }
    }

    /// First live entry at or after `pos`.
    fn next_live(&self, pos: u64) -> Option<(u64, &LogEntry)> {
        let from = pos.saturating_sub(self.base) as usize;
        self.entries
            .range(from.min(self.entries.len())..)
            .enumerate()
            .find(|(_, e)| e.live)
            .map(|(k, e)| (self.base + (from + k) as u64, e))
    }
}

/// Whether RACK's loss detection must look at a segment with these flags.
fn rack_candidate(f: SegFlags) -> bool {
    !f.sacked && !(f.lost && !f.retrans)
}

impl Scoreboard {
    pub fn packets_out(&self) -> u32 {
        self.segs.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    /// `tcp_packets_in_flight`.
    pub fn in_flight(&self) -> u32 {
        (self.packets_out() + self.retrans_out).saturating_sub(self.sacked_out + self.lost_out)
    }

    /// `tcp_left_out`.
    pub fn left_out(&self) -> u32 {
        self.sacked_out + self.lost_out
    }

    pub fn len(&self) -> usize {
        self.segs.len()
    }

    /// How many skbs Linux's retransmission queue would hold these segments in; each
    /// costs `sk_wmem_queued` its own truesize. A segment begins one when it is the
    /// first, or where SACK state changes (`tcp_match_skb_to_sack` splits an skb at a
    /// SACK block's edge, `tcp_shift_skb_data` merges a SACKed skb into a SACKed
    /// predecessor, so a run of SACKed segments is one skb), or, not SACKed, where its
    /// (re)transmission began one ([`TxSeg::skb_head`]).
    pub fn skbs(&self) -> u32 {
        self.skbs
    }

    #[inline]
    fn begins_skb(&self, i: usize) -> bool {
        if i >= self.segs.len() {
            return false;
        }
        if i == 0 {
            return true;
        }
        let (prev, s) = (&self.segs[i - 1], &self.segs[i]);
        prev.flags.sacked != s.flags.sacked || (!s.flags.sacked && s.skb_head())
    }

    /// Skb boundaries at `i` and after it, the two a change to segment `i` can move.
    #[inline]
    fn boundaries_at(&self, i: usize) -> u32 {
        self.begins_skb(i) as u32 + self.begins_skb(i + 1) as u32
    }

    /// Marks segment `i` as beginning an skb of its own or not (a retransmission's
    /// `tcp_fragment`, or the merge of a retransmission with the one before it).
    pub fn set_skb_head(&mut self, i: usize, head: bool) {
        let before = self.begins_skb(i) as u32;
        let m = &mut self.segs[i].marks;
        *m = if head { *m | SKB_HEAD } else { *m & !SKB_HEAD };
        self.skbs = self.skbs + self.begins_skb(i) as u32 - before;
    }

    pub fn get(&self, i: usize) -> &TxSeg {
        &self.segs[i]
    }

    pub fn head(&self) -> Option<&TxSeg> {
        self.segs.front()
    }

    pub fn push(&mut self, mut seg: TxSeg) {
        debug_assert!(self.segs.back().is_none_or(|b| b.end_seq() == seg.seq));
        debug_assert!(!seg.flags.sacked);
        let serial = self.serial(self.segs.len());
        seg.ts_pos = self.tsorted.append(serial, seg.tx_time);
        self.segs.push_back(seg);
        self.skbs += self.begins_skb(self.segs.len() - 1) as u32;
    }

    #[inline]
    fn serial(&self, i: usize) -> u64 {
        self.front_serial + i as u64
    }

    /// Index of the first segment ending after `seq` (the one containing it).
    #[inline]
    pub fn containing_or_after(&self, seq: u64) -> usize {
        if let Some(i) = self.guess_containing(seq) {
            return i;
        }
        self.segs.partition_point(|s| s.end_seq() <= seq)
    }

    /// The segment containing `seq`, found in O(1) when the segments after it all have
    /// the last segment's length (bulk transfers: every segment is one MSS); `None`
    /// when that guess misses, and the caller searches.
    #[inline]
    fn guess_containing(&self, seq: u64) -> Option<usize> {
        let back = self.segs.back()?;
        let stride = back.len as u64;
        if stride == 0 || seq >= back.end_seq() {
            return None;
        }
        let back_i = self.segs.len() - 1;
        let dist = (back.seq.saturating_sub(seq)).div_ceil(stride);
        let i = back_i.checked_sub(usize::try_from(dist).ok()?)?;
        let s = &self.segs[i];
        (s.seq <= seq && seq < s.end_seq()).then_some(i)
    }

    /// The next segment RACK examines (not SACKed, not lost-and-awaiting
    /// retransmission) in transmission order after `after` (from the oldest when
    /// None): an opaque cursor and the segment's index. Segments may change state
    /// between calls (the walk marks them lost).
    pub fn next_tsorted(&mut self, after: Option<u64>) -> Option<(u64, usize)> {
        if self.tsorted.dirty {
            self.rebuild_log();
        }
        let (pos, e) = self.tsorted.next_live(after.map_or(0, |p| p + 1))?;
        Some((pos, (e.serial - self.front_serial) as usize))
    }

    /// Puts every RACK candidate back in (send time, seq) order (appending in that
    /// order leaves the new log clean).
    fn rebuild_log(&mut self) {
        let mut order: Vec<usize> = (0..self.segs.len()).filter(|&i| rack_candidate(self.segs[i].flags)).collect();
        order.sort_by_key(|&i| (self.segs[i].tx_time, self.segs[i].seq));
        self.tsorted = SendLog::default();
        for i in order {
            let (serial, tx) = (self.serial(i), self.segs[i].tx_time);
            self.segs[i].ts_pos = self.tsorted.append(serial, tx);
        }
    }

    /// Index of the first segment starting at or after `seq`.
    #[inline]
    pub fn first_at_or_after(&self, seq: u64) -> usize {
        if let Some(i) = self.guess_containing(seq) {
            return if self.segs[i].seq == seq { i } else { i + 1 };
        }
        self.segs.partition_point(|s| s.seq < seq)
    }

    /// Changes a segment's flags and the counters with them.
    pub fn set_flags(&mut self, i: usize, new: SegFlags) {
        if self.segs[i].flags.sacked == new.sacked {
            self.set_flags_counted(i, new);
            return;
        }
        let before = self.boundaries_at(i);
        self.set_flags_counted(i, new);
        self.skbs = self.skbs + self.boundaries_at(i) - before;
    }

    /// [`Scoreboard::set_flags`] but for the skb count.
    fn set_flags_counted(&mut self, i: usize, new: SegFlags) {
        let serial = self.serial(i);
        let s = &mut self.segs[i];
        let old = s.flags;
        let old_pending = s.pending();
        s.flags = new;
        let new_pending = s.pending();
        fn adj(c: &mut u32, was: bool, is: bool) {
            match (was, is) {
                (false, true) => *c += 1,
                (true, false) => *c -= 1,
                _ => {}
            }
        }
        adj(&mut self.sacked_out, old.sacked, new.sacked);
        adj(&mut self.lost_out, old.lost, new.lost);
        adj(&mut self.retrans_out, old.retrans, new.retrans);
        adj(&mut self.pending_out, old_pending, new_pending);
        let (tx, pos) = (s.tx_time, s.ts_pos);
        match (rack_candidate(old), rack_candidate(new)) {
            (true, false) => self.tsorted.unlink(pos),
            (false, true) => self.segs[i].ts_pos = self.tsorted.append(serial, tx),
            _ => {}
        }
        if new_pending && serial < self.pending_hint {
            self.pending_hint = serial;
        }
    }

    /// `tcp_mark_skb_lost`: a SACKed segment is never lost; a segment whose
    /// retransmission was in flight loses that retransmission too (it must be sent
    /// again). Returns whether this counts as a new loss (`tcp_sum_lost`: first
    /// marking, or a lost retransmission).
    pub fn mark_lost(&mut self, i: usize) -> bool {
        let f = self.segs[i].flags;
        if f.sacked {
            return false;
        }
        let newly = !f.lost || f.retrans;
        self.set_flags(i, SegFlags { sacked: false, lost: true, retrans: false });
        newly
    }

    /// SACK a segment (`tcp_sacktag_one`): clears LOST and SACKED_RETRANS. Returns
    /// false if it was already SACKed.
    pub fn mark_sacked(&mut self, i: usize) -> bool {
        if self.segs[i].flags.sacked {
            return false;
        }
        self.set_flags(i, SegFlags { sacked: true, lost: false, retrans: false });
        let end = self.segs[i].end_seq();
        if end > self.highest_sack_end {
            self.highest_sack_end = end;
        }
        true
    }

    /// Records a retransmission of segment `i`.
    pub fn mark_retransmitted(&mut self, i: usize, now: Nanos, rate: TxRateInfo) {
        let f = self.segs[i].flags;
        // The new send time first, so that re-entering the send log appends in order.
        if rack_candidate(f) {
            self.retime(i, now);
        } else {
            self.segs[i].tx_time = now;
        }
        self.set_flags(i, SegFlags { retrans: true, ..f });
        let s = &mut self.segs[i];
        s.marks |= EVER_RETRANS;
        s.rate = rate;
    }

    /// A new transmission time moves the segment to the tail of the send order
    /// (`list_move_tail` on `tsorted_sent_queue`).
    fn retime(&mut self, i: usize, now: Nanos) {
        let s = &mut self.segs[i];
        s.tx_time = now;
        if rack_candidate(s.flags) {
            let pos = s.ts_pos;
            self.tsorted.unlink(pos);
            let serial = self.serial(i);
            self.segs[i].ts_pos = self.tsorted.append(serial, now);
        }
    }

    /// A tail-loss-probe retransmission (`__tcp_retransmit_skb` without the
    /// `retrans_out` accounting): only the send time, rate snapshot and
    /// `EVER_RETRANS` change.
    pub fn mark_probe_retransmitted(&mut self, i: usize, now: Nanos, rate: TxRateInfo) {
        self.retime(i, now);
        let s = &mut self.segs[i];
        s.marks |= EVER_RETRANS;
        s.rate = rate;
    }

    pub fn seg_mut_rate(&mut self, i: usize) -> &mut TxRateInfo {
        &mut self.segs[i].rate
    }

    /// Removes and returns the head if it ends at or before `ack`; trims a partially
    /// acknowledged head (`tcp_trim_head`) and returns None.
    pub fn pop_acked(&mut self, ack: u64) -> Option<TxSeg> {
        let h = self.segs.front_mut()?;
        if h.end_seq() <= ack {
            let f = h.flags;
            // The head's skb goes (it always begins one); its successor now begins one.
            self.skbs = self.skbs - 1 + (self.segs.len() > 1 && !self.begins_skb(1)) as u32;
            // Clear the flags so the counters follow; "SACKed" takes it out of the send
            // log too, and the SACK count is then taken back.
            self.set_flags_counted(0, SegFlags { sacked: true, lost: false, retrans: false });
            self.sacked_out -= 1;
            let mut s = self.segs.pop_front().expect("head exists");
            self.front_serial += 1;
            s.flags = f;
            if self.segs.is_empty() {
                self.highest_sack_end = 0;
            }
            Some(s)
        } else {
            if h.seq < ack {
                h.len -= (ack - h.seq) as u32;
                h.seq = ack;
            }
            None
        }
    }

    /// First lost segment not yet retransmitted (`tcp_xmit_retransmit_queue`'s walk).
    pub fn next_pending(&mut self) -> Option<usize> {
        if self.pending_out == 0 {
            return None;
        }
        let start = (self.pending_hint.saturating_sub(self.front_serial) as usize).min(self.segs.len());
        let found = (start..self.segs.len()).find(|&i| self.segs[i].pending());
        match found {
            Some(i) => {
                self.pending_hint = self.serial(i);
                Some(i)
            }
            None => {
                // Hint was stale (a pending segment lies below it); rescan once.
                let i = (0..start).find(|&i| self.segs[i].pending());
                if let Some(i) = i {
                    self.pending_hint = self.serial(i);
                }
                i
            }
        }
    }

    /// Clears every LOST mark (`tcp_undo_cwnd_reduction(sk, true)`).
    pub fn unmark_all_lost(&mut self) {
        if self.lost_out == 0 {
            return;
        }
        for i in 0..self.segs.len() {
            let f = self.segs[i].flags;
            if f.lost {
                self.set_flags(i, SegFlags { lost: false, ..f });
            }
        }
    }

    /// Clears every SACK mark (receiver reneged; `tcp_timeout_mark_lost`).
    pub fn clear_all_sacked(&mut self) {
        for i in 0..self.segs.len() {
            let f = self.segs[i].flags;
            if f.sacked {
                self.set_flags(i, SegFlags { sacked: false, ..f });
            }
        }
        self.highest_sack_end = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sb(n: u64) -> Scoreboard {
        let mut s = Scoreboard::default();
        for i in 0..n {
            s.push(TxSeg::new(i * 100, 100, i, TxRateInfo::default(), true));
        }
        s
    }

    #[test]
    fn in_flight_follows_sack_loss_and_retransmission() {
        let mut s = sb(10);
        assert_eq!(s.in_flight(), 10);
        for i in 1..4 {
            assert!(s.mark_sacked(i));
        }
        assert!(s.mark_lost(0));
        assert_eq!((s.sacked_out, s.lost_out, s.in_flight()), (3, 1, 6));
        assert_eq!(s.next_pending(), Some(0));
        s.mark_retransmitted(0, 50, TxRateInfo::default());
        assert_eq!((s.retrans_out, s.in_flight()), (1, 7));
        assert_eq!(s.next_pending(), None);
        // The retransmission is lost again: counted as a new loss, pending again.
        assert!(s.mark_lost(0));
        assert_eq!((s.retrans_out, s.in_flight(), s.next_pending()), (0, 6, Some(0)));
    }

    #[test]
    fn cumulative_ack_clears_counters_and_trims() {
        let mut s = sb(4);
        s.mark_sacked(1);
        s.mark_lost(0);
        assert!(s.pop_acked(200).is_some());
        assert!(s.pop_acked(200).is_some());
        assert!(s.pop_acked(250).is_none());
        assert_eq!(s.head().unwrap().seq, 250);
        assert_eq!((s.sacked_out, s.lost_out, s.packets_out()), (0, 0, 2));
    }

    #[test]
    fn rack_walk_is_in_send_order_and_skips_sacked_and_pending() {
        let mut s = sb(6);
        for i in 1..5 {
            s.mark_sacked(i);
        }
        assert_eq!(walk(&mut s), vec![0, 5]);
        // Lost and awaiting retransmission: not examined; retransmitted: examined last.
        s.mark_lost(0);
        assert_eq!(walk(&mut s), vec![5]);
        s.mark_retransmitted(0, 1_000, TxRateInfo::default());
        assert_eq!(walk(&mut s), vec![5, 0]);
    }

    fn walk(s: &mut Scoreboard) -> Vec<usize> {
        let mut v = vec![];
        let mut cur = s.next_tsorted(None);
        while let Some((k, i)) = cur {
            v.push(i);
            cur = s.next_tsorted(Some(k));
        }
        v
    }

    #[test]
    fn undoing_lost_marks_puts_segments_back_in_send_order() {
        let mut s = sb(5);
        s.mark_lost(1);
        s.mark_lost(3);
        s.mark_retransmitted(3, 100, TxRateInfo::default());
        assert_eq!(walk(&mut s), vec![0, 2, 4, 3]);
        // Undo: segment 1 comes back at its original send time, before 2.
        s.unmark_all_lost();
        assert_eq!(walk(&mut s), vec![0, 1, 2, 4, 3]);
        // The cumulative ACK drains the log from the front.
        while s.pop_acked(300).is_some() {}
        assert_eq!(walk(&mut s), vec![1, 0]);
        assert_eq!((s.packets_out(), s.sacked_out, s.lost_out, s.retrans_out), (2, 0, 0, 1));
    }

    /// Linux's skbs for these segments counted from scratch: a new one at the first
    /// segment, at every change of SACK state, and at a not-SACKed segment that began
    /// one when (re)transmitted.
    fn skbs_recounted(s: &Scoreboard) -> u32 {
        let segs: Vec<&TxSeg> = s.segs.iter().collect();
        (0..segs.len())
            .filter(|&i| {
                i == 0 || segs[i - 1].flags.sacked != segs[i].flags.sacked || (!segs[i].flags.sacked && segs[i].skb_head())
            })
            .count() as u32
    }

    #[test]
    fn skbs_follow_chunks_sack_merges_and_cumulative_acks() {
        // Two TSO chunks of 4 segments: 2 skbs.
        let mut s = Scoreboard::default();
        for i in 0..8u64 {
            s.push(TxSeg::new(i * 100, 100, 0, TxRateInfo::default(), i % 4 == 0));
        }
        assert_eq!(s.skbs(), 2);
        // SACK of segment 1 cuts its chunk in three (`tcp_match_skb_to_sack`).
        s.mark_sacked(1);
        assert_eq!(s.skbs(), 4);
        // SACK of 2 and 3 shifts them into 1's skb, and SACK of 4 across the chunk
        // boundary too (`tcp_shift_skb_data`): [0] [1-4] [5-7].
        s.mark_sacked(2);
        s.mark_sacked(3);
        s.mark_sacked(4);
        assert_eq!(s.skbs(), 3);
        // A retransmission of 0 cut from nothing (it is whole): unchanged; marking 6
        // an skb of its own (its retransmission) adds one.
        s.set_skb_head(6, true);
        assert_eq!(s.skbs(), 4);
        // The cumulative ACK frees 0, then trims into the SACKed run.
        assert!(s.pop_acked(100).is_some());
        assert_eq!(s.skbs(), 3);
        assert!(s.pop_acked(250).is_some());
        assert_eq!(s.skbs(), skbs_recounted(&s));
        assert_eq!(s.skbs(), 3);
        while s.pop_acked(800).is_some() {}
        assert_eq!(s.skbs(), 0);
    }

    #[test]
    fn the_skb_count_agrees_with_a_recount_through_random_changes() {
        use rand::{Rng, SeedableRng};
        let mut r = crate::rng::Rng::seed_from_u64(7);
        let mut s = Scoreboard::default();
        let mut next = 0u64;
        for _ in 0..5_000 {
            match r.random_range(0..6) {
                0 | 1 => {
                    s.push(TxSeg::new(next, 100, 0, TxRateInfo::default(), r.random_bool(0.3)));
                    next += 100;
                }
                2 if !s.is_empty() => {
                    let i = r.random_range(0..s.len());
                    s.mark_sacked(i);
                }
                3 if !s.is_empty() => {
                    let i = r.random_range(0..s.len());
                    s.mark_lost(i);
                }
                4 if !s.is_empty() => {
                    let i = r.random_range(0..s.len());
                    s.set_skb_head(i, r.random_bool(0.5));
                }
                5 if !s.is_empty() => {
                    let ack = s.head().unwrap().seq + r.random_range(0..300);
                    while s.pop_acked(ack).is_some() {}
                }
                _ => {}
            }
            assert_eq!(s.skbs(), skbs_recounted(&s));
        }
        s.clear_all_sacked();
        assert_eq!(s.skbs(), skbs_recounted(&s));
    }

    #[test]
    fn index_lookups_agree_with_binary_search() {
        // Uniform segments (the O(1) path), then a short one in the middle and a
        // trimmed head (the fallback).
        let mut s = sb(8);
        let check = |s: &Scoreboard| {
            for seq in 0..1000 {
                assert_eq!(s.containing_or_after(seq), s.segs.partition_point(|x| x.end_seq() <= seq), "{seq}");
                assert_eq!(s.first_at_or_after(seq), s.segs.partition_point(|x| x.seq < seq), "{seq}");
            }
        };
        check(&s);
        s.push(TxSeg { seq: 800, len: 30, ..*s.get(0) });
        s.push(TxSeg { seq: 830, len: 100, ..*s.get(0) });
        check(&s);
        assert!(s.pop_acked(150).is_some());
        assert!(s.pop_acked(150).is_none());
        check(&s);
    }

    #[test]
    fn sacked_segment_cannot_be_marked_lost() {
        let mut s = sb(2);
        s.mark_sacked(0);
        assert!(!s.mark_lost(0));
        assert_eq!(s.lost_out, 0);
    }
}
