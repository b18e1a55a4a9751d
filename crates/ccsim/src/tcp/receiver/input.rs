//! The arriving segment, as `tcp_input.c`: sequence checks, the in-order and
//! out-of-order queues, SACK and DSACK blocks, quick-ack mode and the decision to ACK
//! now or later (`__tcp_ack_snd_check`), the receiver's RTT estimate, and the ECN echo
//! (classic, and DCTCP's from `tcp_dctcp.c`).

use crate::tcp::segment::{SackBlock, Segment};
use crate::time::{Nanos, NS_PER_MS};

use super::{Arrival, EcnMode, TcpReceiver, TCP_FASTRETRANS_THRESH, TCP_NUM_SACKS, TCP_SACK_BLOCKS_EXPECTED};

impl TcpReceiver {
    /// Processes one arriving segment. `ce` is the IP-layer CE mark it carries.
    /// ACKs this triggers are queued for [`poll_ack`](Self::poll_ack) at this `now`.
    pub fn on_segment(&mut self, now: Nanos, seg: &Segment, ce: bool) -> Arrival {
        let mut arr = Arrival { rcv_nxt_before: self.rcv_nxt, rcv_nxt_after: self.rcv_nxt, ..Arrival::default() };
        let end = seg.end_seq();

        // `tcp_validate_incoming` → `tcp_sequence`: a segment wholly below the last ACK
        // sent, or starting beyond the window, is answered by an immediate duplicate
        // ACK (`tcp_send_dupack`) and dropped. (PAWS is not modelled: simulated
        // timestamps never go backwards for a retransmission.)
        if end < self.rcv_wup || seg.seq > self.rcv_nxt + self.receive_window() {
            arr.duplicate = seg.len > 0 && end <= self.rcv_nxt;
            arr.discarded = !arr.duplicate && seg.len > 0;
            self.send_dupack(now, seg);
            return arr;
        }

        // `tcp_ack(.., FLAG_UPDATE_TS_RECENT)` → `tcp_replace_ts_recent`: RFC 7323 §4.3
        // takes TS.Recent only from a segment that starts at or below the last ACK
        // sent, so a delayed ACK echoes the *earliest* unacknowledged segment and the
        // sender's RTT sample includes the delay.
        if self.cfg.timestamps && seg.seq <= self.rcv_wup && seg.tsval >= self.ts_recent {
            self.ts_recent = seg.tsval;
        }
        if self.cfg.timestamps {
            self.rcv_rtt_measure_ts(now, seg);
        }
        // `tcp_ack` → `tcp_ecn_accept_cwr`: the sender reacted, stop echoing. Its cwnd
        // may be as small as one segment, so data carrying CWR is ACKed at once. Linux
        // also accepts CWR on a segment without data, which RFC 3168 §6.1.2 does not
        // foresee (the sender "SHOULD set the CWR bit only on the first new data
        // packet"); we follow Linux.
        if self.cfg.ecn_mode != EcnMode::Off && seg.cwr {
            self.demand_cwr = false;
            if seg.len > 0 {
                self.ack_now = true;
            }
        }
        if seg.len == 0 {
            // `tcp_data_queue` ignores segments without payload.
            return arr;
        }

        self.data_queue(now, seg, ce, &mut arr);
        arr.rcv_nxt_after = self.rcv_nxt;

        // The application is woken by in-order data; a reader blocked in recv()
        // takes it before the ACK decision, so the window it frees counts there.
        let readable = self.unread_bytes();
        let copied = if self.cfg.app_reads_immediately && readable > 0 {
            self.copied_seq = self.rcv_nxt;
            readable
        } else {
            0
        };
        // `tcp_rcv_established` → `tcp_ack_snd_check`.
        self.ack_snd_check(now);
        if copied > 0 {
            // `tcp_recvmsg`: autotuning, then the ACK a read may owe.
            self.rcv_space_adjust(now);
            self.cleanup_rbuf(now, copied);
        }
        arr
    }

    /// `tcp_data_queue`.
    fn data_queue(&mut self, now: Nanos, seg: &Segment, ce: bool, arr: &mut Arrival) {
        let end = seg.end_seq();
        // A DSACK not yet sent is forgotten when the next data segment arrives.
        self.dsack = None;
        let win = self.receive_window();

        if seg.seq == self.rcv_nxt {
            if win == 0 {
                arr.discarded = true;
                self.out_of_window();
                return;
            }
            self.queue_and_out(now, seg, ce, arr);
        } else if end <= self.rcv_nxt {
            // "A retransmit, 2nd most common case. Force an immediate ack."
            arr.duplicate = true;
            self.dsack_set(seg.seq, end);
            self.out_of_window();
        } else if seg.seq >= self.rcv_nxt + win {
            // Beyond the right edge, e.g. a zero-window probe.
            arr.discarded = true;
            self.out_of_window();
        } else if seg.seq < self.rcv_nxt {
            // Partly old: report the old head as DSACK, keep the new tail.
            self.dsack_set(seg.seq, self.rcv_nxt);
            if win == 0 {
                arr.discarded = true;
                self.out_of_window();
                return;
            }
            self.queue_and_out(now, seg, ce, arr);
        } else {
            arr.out_of_order = true;
            self.data_queue_ofo(now, seg, ce, arr);
        }
    }

    /// `out_of_window:` in `tcp_data_queue`: duplicates and out-of-window data
    /// suggest our ACKs are lost or late, so ACK quickly for a while.
    fn out_of_window(&mut self) {
        self.enter_quickack_mode(self.cfg.quickack_segments);
        self.ack_scheduled = true;
    }

    /// In-order data (`queue_and_out:`), then pull what the hole was holding back.
    fn queue_and_out(&mut self, now: Nanos, seg: &Segment, ce: bool, arr: &mut Arrival) {
        let end = seg.end_seq();
        let start = seg.seq.max(self.rcv_nxt);
        arr.new_bytes = (end - start) - self.ofo_overlap(start, end);
        // `tcp_queue_rcv`.
        self.rcv_nxt = end;
        self.event_data_recv(now, seg, ce);
        if !self.ofo.is_empty() {
            self.ofo_queue();
            // RFC 5681 §4.2: ACK at once when a gap is filled. Linux forces it only
            // when the queue empties; a partial fill is ACKed at once by the
            // duplicate-ACK rule of `ack_snd_check` because `rcv_nxt` moved.
            if self.ofo.is_empty() {
                self.ack_now = true;
            }
        }
        if self.num_sacks > 0 {
            self.sack_remove();
        }
    }

    /// `tcp_ofo_queue`: move the intervals that now touch `rcv_nxt` into the stream.
    fn ofo_queue(&mut self) {
        while let Some(&b) = self.ofo.first() {
            if b.start > self.rcv_nxt {
                break;
            }
            self.ofo.remove(0);
            self.ofo_bytes -= b.end - b.start;
            if b.start < self.rcv_nxt {
                // Bytes received twice: the in-order segment overlapped queued data.
                // Linux reports `[skb.seq, rcv_nxt)` here, which can over-state the
                // overlap when one segment covers a whole queued one; we report the
                // true overlap.
                self.dsack_extend(b.start, b.end.min(self.rcv_nxt));
            }
            if b.end > self.rcv_nxt {
                self.rcv_nxt = b.end;
            }
        }
    }

    /// `tcp_data_queue_ofo`.
    fn data_queue_ofo(&mut self, now: Nanos, seg: &Segment, ce: bool, arr: &mut Arrival) {
        let (seq, end) = (seg.seq, seg.end_seq());
        self.ecn_check_ce(now, ce);
        // No quick-ack mode here: Linux entered it for out-of-order data until 4.18
        // ("tcp: do not force quickack when receiving out-of-order packets"); since
        // then the duplicate ACKs come from the out-of-order branch of
        // `ack_snd_check` (three at once, then SACK compression).
        self.ack_scheduled = true;

        if self.ofo.is_empty() {
            // "Initial out of order segment, build 1 SACK."
            if self.cfg.sack {
                self.sacks[0] = SackBlock { start: seq, end };
                self.num_sacks = 1;
            }
            self.ofo.push(SackBlock { start: seq, end });
            self.ofo_bytes += end - seq;
            arr.new_bytes = end - seq;
            self.rcvbuf_grow(self.rcvq_space);
            return;
        }

        // Parts already queued are duplicates (Linux: "All the bits are present",
        // "Partial overlap", and the overlaps removed in `merge_right:`).
        let mut dup = 0;
        let first = self.ofo.partition_point(|b| b.end <= seq);
        for i in first..self.ofo.len() {
            let b = self.ofo[i];
            if b.start >= end {
                break;
            }
            let (s, e) = (b.start.max(seq), b.end.min(end));
            if s < e {
                dup += e - s;
                self.dsack_extend(s, e);
            }
        }
        arr.new_bytes = (end - seq) - dup;
        arr.duplicate = arr.new_bytes == 0;
        self.ofo_insert(seq, end);
        if self.cfg.sack {
            self.sack_new_ofo_skb(now, seq, end);
        }
        // 6.16+: out-of-order data makes room too, so a loss does not stall the pipe.
        self.rcvbuf_grow(self.rcvq_space);
    }

    /// Bytes of `[start, end)` already in the out-of-order queue.
    fn ofo_overlap(&self, start: u64, end: u64) -> u64 {
        let first = self.ofo.partition_point(|b| b.end <= start);
        self.ofo[first..]
            .iter()
            .take_while(|b| b.start < end)
            .map(|b| b.end.min(end).saturating_sub(b.start.max(start)))
            .sum()
    }

    /// Adds `[start, end)` to the interval set, merging what it overlaps or touches.
    fn ofo_insert(&mut self, start: u64, end: u64) {
        let i = self.ofo.partition_point(|b| b.end < start);
        let mut j = i;
        let mut merged = SackBlock { start, end };
        while j < self.ofo.len() && self.ofo[j].start <= end {
            merged.start = merged.start.min(self.ofo[j].start);
            merged.end = merged.end.max(self.ofo[j].end);
            self.ofo_bytes -= self.ofo[j].end - self.ofo[j].start;
            j += 1;
        }
        self.ofo.splice(i..j, std::iter::once(merged));
        self.ofo_bytes += merged.end - merged.start;
    }

    /// `tcp_event_data_recv`: in-order data arrived.
    fn event_data_recv(&mut self, now: Nanos, seg: &Segment, ce: bool) {
        self.ack_scheduled = true;
        self.measure_rcv_mss(seg);
        self.rcv_rtt_measure(now);

        if self.ato == 0 {
            // The first data segment: start in quick-ack mode so a sender in slow
            // start is not held back by our delayed ACKs.
            self.incr_quickack(self.cfg.quickack_segments);
            self.ato = self.cfg.delack_min_ns;
        } else {
            // Adapt ato to the inter-arrival time m. On a kernel tick, in whole
            // jiffies as Linux keeps them (`tcp_jiffies32 - lrcvtime`, halving
            // rounds down); without one, in nanoseconds.
            let j = self.cfg.jiffy_ns;
            let m = if j == 0 {
                now.saturating_sub(self.lrcvtime)
            } else {
                let jiffies = |t: Nanos| crate::time::jiffies_at(t, j, self.cfg.jiffy_phase_ns);
                (jiffies(now) - jiffies(self.lrcvtime.min(now))) * j
            };
            let (half_min, rto) = (self.ato_half_min, self.ato_rto);
            // ato is a whole number of ticks: halving it rounds down to one
            let half_ato = if j == 0 { self.ato / 2 } else { self.ato / j / 2 * j };
            if m <= half_min {
                self.ato = half_ato + half_min;
            } else if m < self.ato {
                self.ato = (half_ato + m).min(rto);
            } else if m > rto {
                // "Too long gap. Apparently sender failed to restart window, so
                // that we send ACKs quickly."
                self.incr_quickack(self.cfg.quickack_segments);
            }
        }
        self.lrcvtime = now;
        self.ecn_check_ce(now, ce);
        if seg.len >= 128 {
            self.grow_window(seg.len);
        }
    }

    /// `tcp_sack_extend`: grow `b` by `[seq, end)` if they overlap or touch.
    fn sack_extend(b: &mut SackBlock, seq: u64, end: u64) -> bool {
        if seq <= b.end && b.start <= end {
            b.start = b.start.min(seq);
            b.end = b.end.max(end);
            true
        } else {
            false
        }
    }

    /// `tcp_dsack_set`.
    fn dsack_set(&mut self, seq: u64, end: u64) {
        if self.cfg.sack && self.cfg.dsack {
            self.dsack = Some(SackBlock { start: seq, end });
        }
    }

    /// `tcp_dsack_extend`: a second duplicate range joins the pending DSACK block if it
    /// touches it; otherwise it is not reported (one DSACK block per ACK).
    fn dsack_extend(&mut self, seq: u64, end: u64) {
        match self.dsack.as_mut() {
            None => self.dsack_set(seq, end),
            Some(b) => {
                Self::sack_extend(b, seq, end);
            }
        }
    }

    /// `tcp_sack_new_ofo_skb`: the block the new data joins moves to the front; a new
    /// block goes to the front; with four blocks remembered, the oldest is forgotten.
    fn sack_new_ofo_skb(&mut self, now: Nanos, seq: u64, end: u64) {
        let cur = self.num_sacks;
        for i in 0..cur {
            if Self::sack_extend(&mut self.sacks[i], seq, end) {
                if i >= TCP_SACK_BLOCKS_EXPECTED {
                    self.sack_compress_send_ack(now);
                }
                self.sacks[..=i].rotate_right(1);
                if cur > 1 {
                    self.sack_maybe_coalesce();
                }
                return;
            }
        }
        if cur >= TCP_SACK_BLOCKS_EXPECTED {
            self.sack_compress_send_ack(now);
        }
        let kept = cur.min(TCP_NUM_SACKS - 1);
        self.sacks.copy_within(0..kept, 1);
        self.sacks[0] = SackBlock { start: seq, end };
        self.num_sacks = kept + 1;
    }

    /// `tcp_sack_maybe_coalesce`: the front block may now cover others.
    fn sack_maybe_coalesce(&mut self) {
        let mut i = 1;
        while i < self.num_sacks {
            let b = self.sacks[i];
            if Self::sack_extend(&mut self.sacks[0], b.start, b.end) {
                self.sacks.copy_within(i + 1..self.num_sacks, i);
                self.num_sacks -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// `tcp_sack_remove`: blocks now below `rcv_nxt` are dropped.
    fn sack_remove(&mut self) {
        if self.ofo.is_empty() {
            self.num_sacks = 0;
            return;
        }
        let mut i = 0;
        while i < self.num_sacks {
            if self.sacks[i].start <= self.rcv_nxt {
                debug_assert!(self.sacks[i].end <= self.rcv_nxt, "rcv_nxt inside a SACK block");
                self.sacks.copy_within(i + 1..self.num_sacks, i);
                self.num_sacks -= 1;
            } else {
                i += 1;
            }
        }
    }

    /// `tcp_sack_compress_send_ack`: before the SACK array changes beyond the blocks
    /// the sender surely saw, flush the ACK that compression is holding back.
    fn sack_compress_send_ack(&mut self, now: Nanos) {
        if self.compressed_ack == 0 {
            return;
        }
        self.comp_at = None;
        self.compressed_ack = 0;
        self.send_ack(now);
    }

    /// `tcp_in_quickack_mode`; delayed ACKs off acts as the route's quickack metric.
    fn in_quickack_mode(&self) -> bool {
        !self.cfg.delayed_ack || self.quick > 0
    }

    /// `tcp_incr_quickack`: at most half the advertised window in segments of
    /// `rcv_mss`, at least 2.
    fn incr_quickack(&mut self, max_quickacks: u32) {
        let half_window_segs = self.rcv_wnd / (2 * self.rcv_mss as u64);
        let quickacks = if half_window_segs == 0 { 2 } else { half_window_segs.min(u32::MAX as u64) as u32 };
        let quickacks = quickacks.min(max_quickacks);
        if quickacks > self.quick {
            self.quick = quickacks;
        }
    }

    /// `tcp_enter_quickack_mode`.
    fn enter_quickack_mode(&mut self, max_quickacks: u32) {
        self.incr_quickack(max_quickacks);
        self.ato = self.cfg.delack_min_ns;
    }

    /// `__tcp_ack_snd_check` for a segment that scheduled an ACK.
    fn ack_snd_check(&mut self, now: Nanos) {
        if !self.ack_scheduled {
            return;
        }
        // More than one full-sized segment (`rcv_mss`, as estimated) unacknowledged,
        // and the window we would advertise is no smaller than the last one (else a
        // read will ACK).
        let more_than_one_mss = self.rcv_nxt - self.rcv_wup > self.rcv_mss as u64;
        let window_ok = more_than_one_mss && self.select_window_raw() >= self.rcv_wnd;
        if window_ok || self.in_quickack_mode() || self.ack_now {
            self.send_ack(now);
            return;
        }
        if self.ofo.is_empty() {
            self.send_delayed_ack(now);
            return;
        }
        // Out-of-order data: duplicate ACKs. The first three for a given rcv_nxt go at
        // once (the sender's fast-retransmit threshold); then SACK compression.
        if !self.cfg.sack || self.compressed_ack >= self.cfg.comp_sack_nr {
            self.send_ack(now);
            return;
        }
        if self.compressed_ack_rcv_nxt != self.rcv_nxt {
            self.compressed_ack_rcv_nxt = self.rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            self.send_ack(now);
            return;
        }
        self.compressed_ack += 1;
        if self.comp_at.is_some() {
            return;
        }
        // 5 % of the RTT, at most `tcp_comp_sack_delay_ns`.
        let mut rtt = self.rcv_rtt8 / 8;
        if let Some(srtt) = self.cfg.srtt_ns {
            if srtt > 0 && srtt < rtt {
                rtt = srtt;
            }
        }
        let delay = self.cfg.comp_sack_delay_ns.min(rtt / 20);
        self.comp_at = Some(now + delay);
    }

    /// `tcp_send_dupack`: immediate ACK for a segment outside the window; an old data
    /// segment also re-enters quick-ack mode and is reported as DSACK.
    fn send_dupack(&mut self, now: Nanos, seg: &Segment) {
        if seg.len > 0 && seg.seq < self.rcv_nxt {
            self.enter_quickack_mode(self.cfg.quickack_segments);
            let end = seg.end_seq().min(self.rcv_nxt);
            self.dsack_set(seg.seq, end);
        }
        self.send_ack(now);
    }

    /// `tcp_rcv_rtt_measure_ts`: a segment of at least `rcv_mss` echoing one of our
    /// timestamps tells how long ago we sent that ACK. Linux's TCP timestamps tick in
    /// milliseconds (`tcp_time_stamp_ts`), so echoes within one ms are one sample and
    /// the sample is whole ms; our TSval is the simulated clock, read here the same way.
    /// (With `rcv_mss` learnt, a stream of small messages gives samples too, so
    /// autotuning sees the path's RTT rather than the time to fill a window.)
    fn rcv_rtt_measure_ts(&mut self, now: Nanos, seg: &Segment) {
        let ms = |t: Nanos| t / NS_PER_MS;
        if seg.tsecr == 0 || ms(seg.tsecr) == ms(self.rcv_rtt_last_tsecr) {
            return;
        }
        self.rcv_rtt_last_tsecr = seg.tsecr;
        if seg.len >= self.rcv_mss && ms(now) > ms(seg.tsecr) {
            self.rcv_rtt_update((ms(now) - ms(seg.tsecr)) * NS_PER_MS, false);
        }
    }

    /// `tcp_rcv_rtt_measure`: time to receive one window of data (DRS), used when
    /// timestamps are off.
    fn rcv_rtt_measure(&mut self, now: Nanos) {
        if let Some(t) = self.rcv_rtt_time {
            if self.rcv_nxt < self.rcv_rtt_seq {
                return;
            }
            self.rcv_rtt_update(now.saturating_sub(t), true);
        }
        self.rcv_rtt_seq = self.rcv_nxt + self.rcv_wnd;
        self.rcv_rtt_time = Some(now);
    }

    /// `tcp_rcv_rtt_update`: a sample below the estimate replaces it at once; a larger
    /// one is smoothed in with gain 1/8, but only from timestamps and only when the
    /// application has read everything (window-based samples over-estimate when the
    /// sender stalls).
    fn rcv_rtt_update(&mut self, sample: Nanos, win_dep: bool) {
        let m = sample.max(1) * 8;
        if self.rcv_rtt8 == 0 || m < self.rcv_rtt8 {
            self.rcv_rtt8 = m;
        } else if !win_dep && self.rcv_nxt == self.copied_seq {
            self.rcv_rtt8 = self.rcv_rtt8 - self.rcv_rtt8 / 8 + sample.max(1);
        }
    }

    /// `__tcp_ecn_check_ce` for an ECT data segment (the simulator does not track
    /// non-ECT segments, so Linux's "not ECT after ECT: quick-ack" rule is not
    /// modelled).
    fn ecn_check_ce(&mut self, now: Nanos, ce: bool) {
        match self.cfg.ecn_mode {
            EcnMode::Off => {}
            EcnMode::Classic => {
                if ce && !self.demand_cwr {
                    // "Better not delay acks, sender can have a very low cwnd."
                    self.enter_quickack_mode(2);
                    self.demand_cwr = true;
                }
            }
            EcnMode::Dctcp => {
                // The CA hook runs first and sets DEMAND_CWR itself, so the
                // quick-ack entry of the classic path never fires for DCTCP.
                self.dctcp_ece_ack_update(now, ce);
            }
        }
    }

    /// `dctcp_ece_ack_update` (RFC 8257 §3.2): on a CE-state change, first send the
    /// delayed ACK still owed for the earlier segments with their old ECE value, then
    /// ACK at once with the new one, so the sender can count marked bytes exactly.
    fn dctcp_ece_ack_update(&mut self, now: Nanos, ce: bool) {
        if self.dctcp_ce_state != ce {
            if self.delack_at.is_some() {
                self.demand_cwr = self.dctcp_ce_state;
                let prior = self.dctcp_prior_rcv_nxt;
                self.send_ack_for(now, prior);
            }
            self.ack_now = true;
        }
        self.dctcp_prior_rcv_nxt = self.rcv_nxt;
        self.dctcp_ce_state = ce;
        self.demand_cwr = ce;
    }
}
