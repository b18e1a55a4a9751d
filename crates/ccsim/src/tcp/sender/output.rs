//! Sending, as `tcp_output.c`: `tcp_write_xmit`'s loop (lost segments first, then
//! new data under cwnd, the peer's window, Nagle and the pacing gate), the per-send
//! bookkeeping, pacing departures with TSO autosizing, cwnd validation at the end of a
//! burst, and the restart of cwnd after idle.

use crate::tcp::cc::{CaEvent, CaState};
use crate::tcp::pacing::PacingMode;
use crate::tcp::scoreboard::TxSeg;
use crate::tcp::segment::Segment;
use crate::time::{Nanos, NS_PER_SEC};

use super::{BurstPace, TcpSender};

/// Linux paces only after the first 10 data segments (`tcp_update_skb_after_send`).
const PACING_FREE_SEGS: u64 = 10;

/// `tcp_xmit_size_goal`: the payload `tcp_sendmsg` puts in one skb, the GSO maximum
/// less `MAX_TCP_HEADER`, at most half the largest window the peer offered, in whole
/// segments.
pub(super) fn size_goal(max_snd_wnd: u64, mss: u32) -> u64 {
    const GSO_MAX: u64 = 65_536 - 320;
    let mss = mss as u64;
    GSO_MAX.min(max_snd_wnd / 2).max(mss) / mss * mss
}

impl TcpSender {
    /// `tcp_cwnd_restart`: halve cwnd for every RTO of idleness, down to the initial
    /// window; ssthresh keeps at least 3/4 of the old window (`tcp_current_ssthresh`).
    pub(super) fn cwnd_restart(&mut self, delta: Nanos) {
        self.with_cc(|cc, cx| cc.ops().cwnd_event(cx, CaEvent::CwndRestart));
        self.sk.ssthresh = self.sk.current_ssthresh();
        let restart = self.init_cwnd.min(self.sk.cwnd);
        let mut cwnd = self.sk.cwnd;
        let rto = self.rtt.rto() as i128;
        let mut d = delta as i128;
        loop {
            d -= rto;
            if d <= 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        self.sk.cwnd = cwnd.max(restart);
        self.snd_cwnd_stamp = self.now;
        self.snd_cwnd_used = 0;
    }

    /// Next segment to put on the wire now, or None. Call until None after every
    /// `write`, `on_ack` and `on_timer`. Lost segments go first
    /// (`tcp_xmit_retransmit_queue`), then new data (`tcp_write_xmit`).
    pub fn poll_transmit(&mut self, now: Nanos) -> Option<Segment> {
        self.now = now;
        if self.probe_pending {
            self.probe_pending = false;
            return Some(self.make_segment(self.snd_una, 0, false, false));
        }
        if self.tlp_pending {
            self.tlp_pending = false;
            if let Some(seg) = self.send_loss_probe() {
                return Some(seg);
            }
        }
        if self.pacing_active() && now < self.wstamp && !(self.burst_left > 0 && self.burst_at == now) {
            // `tcp_write_xmit` breaks out of its loop on `tcp_pacing_check` and still
            // runs its tail: cwnd validation and the loss probe for what went out.
            if self.batch_sent > 0 || self.sb.in_flight() >= self.sk.cwnd {
                self.end_batch();
            }
            return None;
        }
        if self.frto_rexmit_new {
            // `tcp_xmit_recovery(REXMIT_NEW)`: new data first, Nagle off; if any went
            // out, retransmissions wait for the next ACK.
            let unsent = self.write_seq - self.snd_nxt;
            let len = unsent.min(self.mss as u64) as u32;
            if unsent > 0
                && self.sb.in_flight() < self.sk.cwnd
                && self.snd_nxt + len as u64 <= self.snd_una + self.snd_wnd
            {
                return Some(self.send_new(len));
            }
            self.frto_rexmit_new = false;
            if self.snd_nxt > self.high_seq {
                self.end_batch();
                return None;
            }
            self.frto = false;
        }
        if let Some(i) = self.sb.next_pending() {
            if self.sb.in_flight() >= self.sk.cwnd {
                self.end_batch();
                return None;
            }
            return Some(self.retransmit(i));
        }
        let unsent = self.write_seq - self.snd_nxt;
        if unsent == 0 {
            // `tcp_rate_check_app_limited`: the application did not keep the pipe full.
            self.rate.check_app_limited(unsent, self.mss, self.sb.in_flight(), self.sk.cwnd, self.sb.lost_out);
            self.end_batch();
            return None;
        }
        if self.sb.in_flight() >= self.sk.cwnd {
            self.end_batch();
            return None;
        }
        let len = unsent.min(self.mss as u64) as u32;
        // `tcp_snd_wnd_test`: the whole segment must fit in the peer's window.
        if self.snd_nxt + len as u64 > self.snd_una + self.snd_wnd {
            if self.sb.packets_out() == 0 && self.persist_deadline.is_none() {
                self.persist_deadline = Some(now + self.persist_timeout());
            }
            self.end_batch();
            return None;
        }
        if len < self.mss && self.nagle_holds() {
            self.rate.check_app_limited(unsent, self.mss, self.sb.in_flight(), self.sk.cwnd, self.sb.lost_out);
            self.end_batch();
            return None;
        }
        if self.tso_defer && !(self.tso_chunk_left > 0 && self.tso_chunk_at == now) {
            match self.tso_chunk(unsent) {
                Ok(segs) => {
                    self.tso_chunk_left = segs;
                    self.tso_chunk_at = now;
                    self.tso_chunk_fresh = true;
                }
                Err(cwnd_limited) => {
                    // `tcp_tso_should_defer` tells `tcp_write_xmit` which limit it
                    // waited on, so cwnd validation still sees a cwnd-limited sender
                    self.end_batch_limited(cwnd_limited);
                    return None;
                }
            }
        }
        Some(self.send_new(len))
    }

    /// The segments `tcp_write_xmit` sends now from the skb at `snd_nxt`, or, when
    /// `tcp_tso_should_defer` holds it back, whether it waited on cwnd. `tcp_sendmsg` builds skbs of up to 64 KB
    /// (`tcp_xmit_size_goal`: the GSO maximum, at most half the peer's window) and
    /// `tcp_write_xmit` splits them into `tcp_tso_segs` chunks as it sends, so the skb at
    /// `snd_nxt` is large unless it is the last one the application wrote; a one-segment
    /// skb goes to Nagle's test instead, as in Linux.
    fn tso_chunk(&self, unsent: u64) -> Result<u32, bool> {
        let mss = self.mss as u64;
        let skb_len = unsent.min(self.size_goal);
        if skb_len <= mss {
            return Ok(1);
        }
        let max_segs = self.tso_segs();
        let cong_win = self.sk.cwnd.saturating_sub(self.sb.in_flight()) as u64 * mss;
        let send_win = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let limit = cong_win.min(send_win);
        if self.tso_should_defer(unsent, skb_len, limit, max_segs) {
            return Err(cong_win < send_win && cong_win <= skb_len);
        }
        // `tcp_mss_split_point`: the whole skb when it fits (a sub-MSS tail included;
        // Nagle then has its say on that segment), else what fits in whole segments;
        // at most `max_segs`, and at most half of cwnd (`tcp_cwnd_test`: "ensure we
        // have at least 2 GSO packets in flight")
        let fit = if limit >= skb_len { skb_len.div_ceil(mss) } else { limit / mss };
        let quota = max_segs.min((self.sk.cwnd >> 1).max(1));
        Ok(fit.clamp(1, quota as u64) as u32)
    }

    /// `tcp_tso_should_defer` (Linux 6.18, after "tcp: fix tcp_tso_should_defer() vs
    /// large RTT"): wait for the next ACK to make room for a whole skb, but only when
    /// it is due within min(1 ms, srtt/2), the last send was within 1 ms, and neither
    /// a full skb nor a third of the window fits.
    fn tso_should_defer(&self, unsent: u64, skb_len: u64, limit: u64, max_segs: u32) -> bool {
        const MS: Nanos = 1_000_000;
        let mss = self.mss as u64;
        if self.sk.ca_state >= CaState::Recovery {
            return false;
        }
        // `tcp_wstamp_ns`: the last departure, or a paced sender's next one
        let last = if self.pacing_active() { self.wstamp.max(self.lsndtime) } else { self.lsndtime };
        if self.now > last + MS {
            return false;
        }
        if limit >= max_segs as u64 * mss {
            return false;
        }
        // an skb in the middle of the queue gets no more data: send it if it fits
        let is_tail = unsent <= skb_len;
        if !is_tail && limit >= skb_len {
            return false;
        }
        // `tcp_tso_win_divisor` = 3
        if limit >= self.snd_wnd.min(self.sk.cwnd as u64 * mss) / 3 {
            return false;
        }
        let Some(head) = self.sb.head() else {
            return false;
        };
        let srtt = self.rtt.srtt();
        let expected_ack = head.tx_time + srtt;
        expected_ack <= self.now + (srtt / 2).min(MS)
    }

    /// `tcp_nagle_check` with Minshall's variant, as Linux: a sub-MSS segment waits
    /// only while an earlier *sub-MSS* segment is unacknowledged (textbook Nagle waits
    /// for any unacknowledged data).
    fn nagle_holds(&self) -> bool {
        self.nagle && self.sb.packets_out() > 0 && self.snd_sml > self.snd_una && self.snd_sml <= self.snd_nxt
    }

    pub(super) fn pacing_active(&self) -> bool {
        self.sk.pacing_needed || self.pacing_by_config
    }

    pub(super) fn make_segment(&self, seq: u64, len: u32, retrans: bool, cwr: bool) -> Segment {
        // TSecr: the receiver measures its RTT from it (`tcp_rcv_rtt_measure_ts`), which
        // paces its receive-buffer autotuning. PSH (`tcp_push` → `tcp_mark_push`): on the
        // segment that reaches the end of what the application wrote (the forced push of
        // `forced_push` is not modelled).
        let psh = len > 0 && seq + len as u64 == self.write_seq;
        Segment {
            seq,
            len,
            ack: 0,
            cwr,
            tsval: self.now,
            tsecr: self.ts_recent,
            rwnd: self.rcv_wnd_adv,
            retrans,
            psh,
            ..Default::default()
        }
    }

    pub(super) fn send_new(&mut self, len: u32) -> Segment {
        let now = self.now;
        let prior_packets = self.sb.packets_out();
        self.event_data_sent();
        let rate = self.rate.on_send(now, prior_packets);
        let seq = self.snd_nxt;
        let skb_head = self.new_chunk_begins(now);
        self.sb.push(TxSeg::new(seq, len, now, rate, skb_head));
        self.snd_nxt += len as u64;
        self.batch_new += 1;
        if self.tso_defer {
            self.tso_chunk_left = self.tso_chunk_left.saturating_sub(1);
        }
        if len < self.mss {
            self.snd_sml = self.snd_nxt;
        }
        // `tcp_event_new_data_sent`: the RTO starts with the first segment in flight.
        if prior_packets == 0 {
            self.rearm_rto();
        }
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        // `tcp_ecn_send`: CWR rides on the next new data segment after a reduction.
        let cwr = std::mem::take(&mut self.ecn_queue_cwr);
        self.after_send(len);
        self.make_segment(seq, len, false, cwr)
    }

    /// Whether a new-data segment sent now begins an skb of the retransmission queue:
    /// `tcp_write_xmit` cuts one skb per chunk it sends (`tso_fragment`), the chunk
    /// `tcp_tso_should_defer` let go, or without deferral up to `tcp_tso_segs`
    /// segments sent at one instant.
    fn new_chunk_begins(&mut self, now: Nanos) -> bool {
        if self.tso_defer {
            let fresh = std::mem::take(&mut self.tso_chunk_fresh);
            return fresh || !(self.tso_chunk_left > 0 && self.tso_chunk_at == now);
        }
        let (at, left) = self.skb_chunk;
        if left > 0 && at == now {
            self.skb_chunk.1 -= 1;
            return false;
        }
        self.skb_chunk = (now, self.tso_segs() - 1);
        true
    }

    /// The skbs a retransmission leaves (`__tcp_retransmit_skb`): segments
    /// retransmitted together at one instant, up to `tcp_tso_segs`, are one skb, cut
    /// from the rest of the lost skb by `tcp_fragment`.
    fn split_for_retransmit(&mut self, i: usize, now: Nanos) {
        let seq = self.sb.get(i).seq;
        let r = self.rtx_chunk;
        if r.left > 0 && r.at == now && r.next_seq == seq {
            self.rtx_chunk.left -= 1;
            if r.split_set {
                self.sb.set_skb_head(i, false);
            }
        } else {
            (self.rtx_chunk.at, self.rtx_chunk.left) = (now, self.tso_segs() - 1);
            self.sb.set_skb_head(i, true);
        }
        let next = i + 1;
        let split = next < self.sb.len() && !self.sb.get(next).skb_head();
        if split {
            self.sb.set_skb_head(next, true);
        }
        let r = &mut self.rtx_chunk;
        r.split_set = split;
        r.next_seq = self.sb.get(i).end_seq();
    }

    /// `tcp_retransmit_skb` as called from `tcp_xmit_retransmit_queue`.
    fn retransmit(&mut self, i: usize) -> Segment {
        let now = self.now;
        self.event_data_sent();
        let rate = self.rate.on_send(now, self.sb.packets_out());
        self.split_for_retransmit(i, now);
        self.sb.mark_retransmitted(i, now, rate);
        let seg = *self.sb.get(i);
        if self.retrans_stamp.is_none() {
            self.retrans_stamp = Some(now);
        }
        if self.undo_retrans < 0 {
            self.undo_retrans = 0;
        }
        self.undo_retrans += 1;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        // Retransmitting the head restarts the RTO (unless RACK's timer runs).
        if i == 0 && self.reo_deadline.is_none() {
            self.rearm_rto_always();
        }
        self.stats.retrans_bytes += seg.len as u64;
        self.stats.retrans_segs += 1;
        self.after_send(seg.len);
        self.make_segment(seg.seq, seg.len, true, false)
    }

    /// `tcp_event_data_sent`: the CC learns when a flight starts from idle.
    pub(super) fn event_data_sent(&mut self) {
        if self.sb.in_flight() == 0 {
            self.with_cc(|cc, cx| cc.ops().cwnd_event(cx, CaEvent::TxStart));
        }
        self.lsndtime = self.now;
    }

    pub(super) fn after_send(&mut self, len: u32) {
        self.stats.bytes_sent += len as u64;
        self.stats.segs_sent += 1;
        self.data_segs_out += 1;
        self.batch_sent += 1;
        self.persist_deadline = None;
        self.after_send_pacing(len);
    }

    /// `tcp_update_skb_after_send`: the next departure is `len / rate` later, minus
    /// up to half of that as credit for time the sender sat idle.
    fn after_send_pacing(&mut self, len: u32) {
        if !self.pacing_active() {
            return;
        }
        if self.pacing_cfg == PacingMode::Random && !self.sk.pacing_needed {
            // Wei's Algorithm 4 (see `tcp::pacing`): a grid of srtt/cwnd with random
            // offsets, once an RTT is known (before that, no pacing). The window is
            // the one the flow can use: cwnd, or the peer's window if smaller.
            let srtt = self.rtt.srtt();
            if srtt > 0 {
                let rwnd = (self.snd_wnd / self.mss as u64).clamp(1, u32::MAX as u64) as u32;
                let (cwnd, ssthresh) = (self.sk.cwnd.min(rwnd), self.sk.ssthresh);
                self.wstamp = self.rpacer.next_departure(self.now, srtt, cwnd, ssthresh, 1, &mut self.rng);
            }
            return;
        }
        // One GSO skb of `tso_segs` segments leaves at once (its segments pass the
        // gate at the same instant); the departure time advances per segment, which
        // adds up to Linux's `skb->len / rate` for the skb.
        let same_skb = self.burst_left > 0 && self.burst_at == self.now;
        if same_skb {
            self.burst_left -= 1;
        } else {
            self.burst_at = self.now;
            self.burst_left = self.tso_segs() - 1;
            self.burst_pace = None;
        }
        let rate = self.sk.pacing_rate;
        if rate == u64::MAX || rate == 0 || self.data_segs_out < PACING_FREE_SEGS {
            self.wstamp = self.wstamp.max(self.now);
            return;
        }
        // Linux paces the skb as a whole: the next departure is its `len / rate` after
        // this one, less up to half of that as credit for the time the sender was late
        // or idle. Taken per segment, the credit would shorten only the first
        // segment's share: after an idle period a 2-segment skb's successor would
        // leave 3/4 of the skb's time later instead of 1/2, and a BBR flow's first
        // round samples a lower delivery rate than the kernel's.
        let pace = self.burst_pace.get_or_insert_with(|| {
            let prior = self.wstamp;
            let base = self.wstamp.max(self.now);
            BurstPace { base, len_ns: 0, credit: base - prior }
        });
        pace.len_ns += len as u64 * NS_PER_SEC / rate;
        self.wstamp = pace.base + pace.len_ns - (pace.len_ns / 2).min(pace.credit);
    }

    /// `tcp_tso_autosize` (Linux 5.18+): about 1 ms of data at the pacing rate
    /// (`sk_pacing_shift` = 10), plus 64 KB >> (min RTT / 512 µs) on short paths
    /// (`tcp_tso_rtt_log` = 9), at most 64 KB (`sk_gso_max_size`), at least the CC's
    /// `min_tso_segs`. 1 when `tso_autosize` is off.
    pub(super) fn tso_segs(&self) -> u32 {
        const GSO_MAX: u64 = 65_536;
        if !self.tso_autosize {
            return 1;
        }
        let rate = self.sk.pacing_rate;
        let mut bytes = if rate == u64::MAX { GSO_MAX } else { rate >> 10 };
        let min_rtt = self.rtt.min_rtt_us();
        if min_rtt != u32::MAX {
            let r = min_rtt >> 9;
            if r < 32 {
                bytes += GSO_MAX >> r;
            }
        }
        let segs = (bytes.min(GSO_MAX) / self.mss.max(1) as u64) as u32;
        segs.max(self.cc.ops_ref().min_tso_segs(rate)).max(1)
    }

    /// End of a transmit burst: `tcp_cwnd_validate` (RFC 7661-style bookkeeping of
    /// whether cwnd was the limit).
    fn end_batch(&mut self) {
        self.end_batch_limited(false);
    }

    /// `end_batch`, told whether the attempt also stopped on cwnd without filling it
    /// (`deferred_on_cwnd`: TSO deferral waited for room in cwnd).
    fn end_batch_limited(&mut self, deferred_on_cwnd: bool) {
        let is_cwnd_limited = deferred_on_cwnd || self.sb.in_flight() >= self.sk.cwnd;
        if self.batch_sent > 0 || is_cwnd_limited {
            self.cwnd_validate(is_cwnd_limited);
        }
        // `tcp_write_xmit`: after new data, one loss probe per tail-loss episode.
        if self.batch_new > 0 {
            self.schedule_loss_probe(false);
        }
        self.batch_sent = 0;
        self.batch_new = 0;
    }

    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        let packets_out = self.sb.packets_out();
        if self.snd_una >= self.cwnd_usage_seq
            || is_cwnd_limited
            || (!self.sk.is_cwnd_limited && packets_out > self.sk.max_packets_out)
        {
            self.sk.is_cwnd_limited = is_cwnd_limited;
            self.sk.max_packets_out = packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        if self.sk.is_cwnd_limited() {
            self.snd_cwnd_used = 0;
            self.snd_cwnd_stamp = self.now;
        } else {
            self.snd_cwnd_used = self.snd_cwnd_used.max(packets_out);
            if self.slow_start_after_idle
                && self.now.saturating_sub(self.snd_cwnd_stamp) >= self.rtt.rto()
                && !self.cc.has_cong_control()
            {
                self.cwnd_application_limited();
            }
        }
    }

    /// `tcp_cwnd_application_limited` (RFC 2861): after an RTO's worth of not using
    /// the window, shrink cwnd halfway to what was used.
    fn cwnd_application_limited(&mut self) {
        if self.sk.ca_state == CaState::Open && !self.nospace {
            let win_used = self.snd_cwnd_used.max(self.init_cwnd);
            if win_used < self.sk.cwnd {
                self.sk.ssthresh = self.sk.current_ssthresh();
                self.sk.cwnd = (self.sk.cwnd + win_used) >> 1;
            }
            self.snd_cwnd_used = 0;
        }
        self.snd_cwnd_stamp = self.now;
    }
}
