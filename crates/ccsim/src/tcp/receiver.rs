//! The receiving half of a simulated TCP connection, behaving like Linux
//! (`net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp_timer.c`, `tcp_dctcp.c`).
//!
//! Sans-IO: segments come in through [`TcpReceiver::on_segment`], ACKs go out through
//! [`TcpReceiver::poll_ack`], time is the `now` argument, and the one timer the
//! receiver needs (delayed ACK, or SACK compression) is exposed through
//! [`TcpReceiver::next_timer`] / [`TcpReceiver::on_timer`]. No payload is stored: the
//! out-of-order queue is a sorted set of byte intervals.
//!
//! What is modelled, each after the Linux function named in the code:
//! - cumulative ACK and in-order delivery (`tcp_data_queue`, `tcp_ofo_queue`): data
//!   reaches the application only when `rcv_nxt` advances, so a hole holds back
//!   everything above it (head-of-line blocking, Lübben note §1.7, `Δ_rcv`);
//! - SACK blocks kept apart from the out-of-order queue, most recent first, at most
//!   four remembered and three sent with timestamps (`tcp_sack_new_ofo_skb`,
//!   `tcp_sack_remove`, `tcp_established_options`; RFC 2018 §4);
//! - DSACK for duplicates, sent first (`tcp_dsack_set`, `tcp_dsack_extend`,
//!   `tcp_send_dupack`; RFC 2883 §4);
//! - delayed ACK: ACK when more than one MSS is unacknowledged and the window does
//!   not shrink, otherwise a timer of `ato` (40..200 ms) that adapts to the
//!   inter-arrival time (`__tcp_ack_snd_check`, `tcp_event_data_recv`,
//!   `tcp_send_delayed_ack`, `tcp_delack_timer_handler`);
//! - quick-ack mode (up to 16 ACKs without delay) at the start, after a long idle
//!   gap, after a duplicate or out-of-window segment, and (2 ACKs) on a new CE mark
//!   (`tcp_incr_quickack`, `tcp_enter_quickack_mode`, `tcp_dec_quickack_mode`);
//! - SACK compression: after three immediate duplicate ACKs for the same `rcv_nxt`,
//!   further out-of-order arrivals are ACKed by a short timer (`__tcp_ack_snd_check`,
//!   `tcp_compressed_ack_kick`; sysctls `tcp_comp_sack_nr`, `tcp_comp_sack_delay_ns`);
//! - receive window = free receive buffer, never shrinking its right edge, with
//!   receiver silly-window avoidance (`tcp_select_window`, `__tcp_select_window`);
//!   a slow reader and the window-update ACKs its reads cause (`tcp_cleanup_rbuf`);
//! - ECN: RFC 3168 ECE until CWR (`tcp_ecn_check_ce`, `tcp_ecn_accept_cwr`), and the
//!   DCTCP receiver of RFC 8257 §3.2 (`dctcp_ece_ack_update` in `tcp_dctcp.c`);
//! - timestamps: `TSecr = TS.Recent`, updated only from segments at or below the
//!   last ACK sent (`tcp_replace_ts_recent`, RFC 7323 §4.3).
//!
//! Not modelled (each is a known difference from a real Linux receiver):
//! - receive-window growth: Linux starts advertising about 64 KB and raises
//!   `rcv_ssthresh` per segment up to a `window_clamp` that receive-buffer autotuning
//!   (`tcp_grow_window`, `tcp_rcv_space_adjust`) moves towards `tcp_rmem[2]`; while it
//!   grows, `tcp_grow_window` also sets `quick |= 1`, so most segments of a ramping
//!   flow are ACKed one by one. Here the window is the free part of `rcvbuf_bytes`
//!   from the start, skb overhead (`scaling_ratio`) is not charged, and the window is
//!   not rounded to the window-scale unit;
//! - `rcv_mss` estimation: the MSS is taken from the config; a segment shorter than it
//!   counts as pushed (end of a write), since segments carry no PSH bit;
//! - ping-pong (interactive) mode, which needs data flowing back from the receiver;
//! - PAWS, memory-pressure pruning and collapsing, FIN, urgent data, GRO/LRO
//!   aggregation (Linux ACKs per aggregated packet);
//! - the quick-ack Linux enters when a non-ECT segment follows ECT ones (a classic-ECN
//!   retransmission): the simulator does not tell us the ECT codepoint.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::segment::{SackBlock, Segment, MAX_SACK_BLOCKS};
use crate::error::ConfigError;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC};

/// `TCP_MAX_QUICKACKS` (include/net/tcp.h): ACKs sent without delay in quick-ack mode.
pub const TCP_MAX_QUICKACKS: u32 = 16;
/// `TCP_FASTRETRANS_THRESH`: duplicate ACKs sent at once before SACK compression starts.
const TCP_FASTRETRANS_THRESH: u32 = 3;
/// `TCP_NUM_SACKS`: SACK blocks Linux remembers (`tp->selective_acks[4]`).
const TCP_NUM_SACKS: usize = 4;
/// `TCP_SACK_BLOCKS_EXPECTED`: touching a block beyond the first two flushes a
/// pending compressed ACK first, so the sender does not miss a block.
const TCP_SACK_BLOCKS_EXPECTED: usize = 2;
/// `TCP_TIMEOUT_INIT`: the RTO of a socket that has no RTT sample (1 s, RFC 6298 §2.1).
const TCP_TIMEOUT_INIT: Nanos = NS_PER_SEC;
/// `TCP_RTO_MIN`: 200 ms.
const TCP_RTO_MIN: Nanos = 200 * NS_PER_MS;
/// `max_ato = HZ / 2` in `tcp_send_delayed_ack` when neither ping-pong nor pushed.
const MAX_ATO_BULK: Nanos = 500 * NS_PER_MS;

/// How the receiver answers CE marks.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum EcnMode {
    /// ECN not negotiated: CE marks are ignored and ECE is never set.
    #[default]
    Off,
    /// RFC 3168 §6.1.3: ECE on every ACK from the first CE until a segment with CWR.
    Classic,
    /// RFC 8257 §3.2: ECE mirrors the CE bit of the segments an ACK covers; an ACK is
    /// sent at once whenever the CE state flips (Linux `tcp_dctcp.c`).
    Dctcp,
}

/// Receiver knobs, with the defaults of a current Linux kernel. The sender's
/// `TcpConfig` carries the same names; [`ReceiverConfig::default`] is what a Linux
/// receiver does out of the box.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ReceiverConfig {
    /// Payload bytes of a full-sized segment (`icsk_ack.rcv_mss`; Linux estimates it
    /// from arrivals, we take it as given). 1448 = 1500-byte MTU with timestamps.
    pub mss: u32,
    /// SACK negotiated (`net.ipv4.tcp_sack = 1`).
    pub sack: bool,
    /// DSACK reported (`net.ipv4.tcp_dsack = 1`); needs `sack`.
    pub dsack: bool,
    /// Timestamps negotiated (`net.ipv4.tcp_timestamps = 1`). They take 12 option
    /// bytes, which leaves room for 3 SACK blocks instead of 4.
    pub timestamps: bool,
    /// Delayed ACKs. `false` acts like the per-route `quickack 1` metric
    /// (`RTAX_QUICKACK`): every data segment is ACKed at once.
    pub delayed_ack: bool,
    /// ACKs sent without delay in quick-ack mode (`TCP_MAX_QUICKACKS` = 16), also
    /// bounded by half the receive window in segments as in `tcp_incr_quickack`.
    pub quickack_segments: u32,
    /// Lower bound and starting value of the delayed-ACK timeout (`TCP_ATO_MIN`,
    /// `TCP_DELACK_MIN`: 40 ms).
    pub delack_min_ns: Nanos,
    /// Upper bound of the delayed-ACK timeout (`TCP_DELACK_MAX`: 200 ms).
    pub delack_max_ns: Nanos,
    /// Receive buffer in payload bytes (`net.ipv4.tcp_rmem[2]` = 6 MiB). The
    /// advertised window is the free part of it.
    pub rcvbuf_bytes: u64,
    pub ecn_mode: EcnMode,
    /// The application reads delivered data as soon as it arrives. If `false`, data
    /// stays in the buffer until [`TcpReceiver::read`] and the window closes.
    pub app_reads_immediately: bool,
    /// `net.ipv4.tcp_comp_sack_nr` (44): most duplicate ACKs folded into one by SACK
    /// compression; 0 turns compression off (every out-of-order segment is ACKed).
    pub comp_sack_nr: u32,
    /// `net.ipv4.tcp_comp_sack_delay_ns` (1 ms): upper bound of the SACK-compression
    /// timer, which is otherwise 5 % of the RTT.
    pub comp_sack_delay_ns: Nanos,
    /// The receiving socket's own smoothed RTT. Linux measures it on the passive side
    /// from the handshake (SYN-ACK to ACK); it bounds the delayed-ACK timeout and sets
    /// the RTO that caps `ato`. `None`: no sample (we simulate no handshake), so
    /// RTO = 1 s as for a socket without one.
    pub srtt_ns: Option<Nanos>,
}

impl Default for ReceiverConfig {
    fn default() -> Self {
        ReceiverConfig {
            mss: 1448,
            sack: true,
            dsack: true,
            timestamps: true,
            delayed_ack: true,
            quickack_segments: TCP_MAX_QUICKACKS,
            delack_min_ns: 40 * NS_PER_MS,
            delack_max_ns: 200 * NS_PER_MS,
            rcvbuf_bytes: 6_291_456,
            ecn_mode: EcnMode::Off,
            app_reads_immediately: true,
            comp_sack_nr: 44,
            comp_sack_delay_ns: NS_PER_MS,
            srtt_ns: None,
        }
    }
}

impl ReceiverConfig {
    /// Checks the values a run cannot work with; called when a simulation is built.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mss == 0 {
            return Err(ConfigError::new("tcp.mss", "must be at least 1 byte"));
        }
        if self.rcvbuf_bytes < 2 * self.mss as u64 {
            return Err(ConfigError::new("tcp.rcvbuf_bytes", "must hold at least two full-sized segments"));
        }
        if self.delack_min_ns == 0 || self.delack_min_ns > self.delack_max_ns {
            return Err(ConfigError::new("tcp.delack_min_ns", "must be positive and no larger than tcp.delack_max_ns"));
        }
        Ok(())
    }

    /// SACK blocks that fit in the 40 option bytes: 4, or 3 next to timestamps
    /// (`tcp_established_options`: (40 - 12 - 4) / 8).
    fn max_sack_blocks(&self) -> usize {
        if self.timestamps {
            3
        } else {
            MAX_SACK_BLOCKS
        }
    }
}

/// What one arriving segment did, for the caller's traces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Arrival {
    /// `rcv_nxt` before the segment. Bytes `[rcv_nxt_before, rcv_nxt_after)` were
    /// delivered in order to the application at this instant.
    pub rcv_nxt_before: u64,
    pub rcv_nxt_after: u64,
    /// Payload bytes this segment brought that the receiver did not hold before.
    pub new_bytes: u64,
    /// The segment carried data and all of it was already received.
    pub duplicate: bool,
    /// The segment was queued above a hole (out of order).
    pub out_of_order: bool,
    /// The segment was thrown away as outside the receive window (or it arrived
    /// into a zero window).
    pub discarded: bool,
}

impl Arrival {
    /// Bytes delivered in order by this arrival (head-of-line release included).
    #[inline]
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt_after - self.rcv_nxt_before
    }
}

/// The receiver state of one connection.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    cfg: ReceiverConfig,
    /// Next byte expected in order.
    rcv_nxt: u64,
    /// `rcv_nxt` when the last window was advertised (the last ACK sent).
    rcv_wup: u64,
    /// Window advertised with the last ACK, relative to `rcv_wup`.
    rcv_wnd: u64,
    /// First byte the application has not read yet.
    copied_seq: u64,
    /// Out-of-order data: disjoint, non-adjacent `[start, end)` intervals, sorted.
    ofo: Vec<SackBlock>,
    ofo_bytes: u64,
    /// `tp->selective_acks`: what we report, most recent first. Kept apart from `ofo`
    /// because Linux forgets the oldest block when a fifth hole appears.
    sacks: [SackBlock; TCP_NUM_SACKS],
    num_sacks: usize,
    /// `tp->duplicate_sack[0]`, pending until the next ACK.
    dsack: Option<SackBlock>,

    // Delayed-ACK engine (`icsk->icsk_ack`).
    /// `ICSK_ACK_SCHEDULED`: data arrived that no ACK has covered yet.
    ack_scheduled: bool,
    /// `ICSK_ACK_NOW`: a one-time immediate ACK is owed.
    ack_now: bool,
    /// `ICSK_ACK_PUSHED`: a sub-MSS segment (end of an application write) arrived.
    ack_pushed: bool,
    /// `ICSK_ACK_TIMER` with its expiry.
    delack_at: Option<Nanos>,
    /// Delayed-ACK timeout estimate; 0 until the first data segment.
    ato: Nanos,
    /// Arrival time of the last in-order data segment (`lrcvtime`).
    lrcvtime: Nanos,
    /// Quick ACKs left.
    quick: u32,

    // SACK compression.
    compressed_ack: u32,
    compressed_ack_rcv_nxt: u64,
    dup_ack_counter: u32,
    comp_at: Option<Nanos>,
    /// Receiver-side RTT estimate, ×8 as `rcv_rtt_est.rtt_us` (`tcp_rcv_rtt_update`).
    rcv_rtt8: u64,
    rcv_rtt_last_tsecr: Nanos,
    /// Window-based RTT measurement without timestamps (`tcp_rcv_rtt_measure`).
    rcv_rtt_seq: u64,
    rcv_rtt_time: Option<Nanos>,

    /// RFC 7323 TS.Recent.
    ts_recent: Nanos,

    // ECN.
    /// `TCP_ECN_DEMAND_CWR`: set ECE on outgoing ACKs.
    demand_cwr: bool,
    /// DCTCP: CE bit of the last data segment, and `rcv_nxt` after it.
    dctcp_ce_state: bool,
    dctcp_prior_rcv_nxt: u64,

    out: VecDeque<Segment>,
    acks_sent: u64,
}

impl TcpReceiver {
    pub fn new(cfg: ReceiverConfig) -> Self {
        let rcv_wnd = cfg.rcvbuf_bytes;
        TcpReceiver {
            cfg,
            rcv_nxt: 0,
            rcv_wup: 0,
            rcv_wnd,
            copied_seq: 0,
            ofo: Vec::new(),
            ofo_bytes: 0,
            sacks: [SackBlock::default(); TCP_NUM_SACKS],
            num_sacks: 0,
            dsack: None,
            ack_scheduled: false,
            ack_now: false,
            ack_pushed: false,
            delack_at: None,
            ato: 0,
            lrcvtime: 0,
            quick: 0,
            compressed_ack: 0,
            compressed_ack_rcv_nxt: 0,
            dup_ack_counter: 0,
            comp_at: None,
            rcv_rtt8: 0,
            rcv_rtt_last_tsecr: 0,
            rcv_rtt_seq: 0,
            rcv_rtt_time: None,
            ts_recent: 0,
            demand_cwr: false,
            dctcp_ce_state: false,
            dctcp_prior_rcv_nxt: 0,
            out: VecDeque::new(),
            acks_sent: 0,
        }
    }

    pub fn config(&self) -> &ReceiverConfig {
        &self.cfg
    }

    /// Next byte expected in order: everything below it has been delivered.
    #[inline]
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Delivered bytes the application has not read yet.
    #[inline]
    pub fn unread_bytes(&self) -> u64 {
        self.rcv_nxt - self.copied_seq
    }

    /// Bytes held in the out-of-order queue.
    #[inline]
    pub fn ofo_bytes(&self) -> u64 {
        self.ofo_bytes
    }

    /// The out-of-order intervals, lowest first.
    pub fn ofo_intervals(&self) -> &[SackBlock] {
        &self.ofo
    }

    /// Window advertised on the last ACK (bytes beyond its `ack`).
    #[inline]
    pub fn advertised_window(&self) -> u64 {
        self.rcv_wnd
    }

    /// Free receive buffer right now.
    #[inline]
    pub fn free_space(&self) -> u64 {
        self.cfg.rcvbuf_bytes.saturating_sub(self.unread_bytes() + self.ofo_bytes)
    }

    /// Current delayed-ACK timeout estimate (0 before the first data segment).
    #[inline]
    pub fn ato(&self) -> Nanos {
        self.ato
    }

    /// Quick ACKs left before delayed ACKs resume.
    #[inline]
    pub fn quickacks_left(&self) -> u32 {
        self.quick
    }

    /// ACKs generated so far.
    #[inline]
    pub fn acks_sent(&self) -> u64 {
        self.acks_sent
    }

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
            self.cleanup_rbuf(now, copied);
        }
        arr
    }

    /// The application reads up to `bytes` of delivered data. Returns the bytes read.
    /// Freeing buffer space may send a window update (`tcp_cleanup_rbuf`).
    pub fn read(&mut self, now: Nanos, bytes: u64) -> u64 {
        let n = bytes.min(self.unread_bytes());
        self.copied_seq += n;
        self.cleanup_rbuf(now, n);
        n
    }

    /// The next ACK to send at `now`, if one is due: queued by an arrival or a read,
    /// or produced by a timer that has expired. Call until it returns `None`
    /// (DCTCP can emit two ACKs for one arrival).
    pub fn poll_ack(&mut self, now: Nanos) -> Option<Segment> {
        if self.out.is_empty() && self.next_timer().is_some_and(|t| t <= now) {
            self.on_timer(now);
        }
        crate::fifo::pop_front_rewind(&mut self.out)
    }

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
                    self.ato = (self.ato * 2).min(self.rto());
                    self.send_ack(now);
                }
            }
        }
    }

    // ---------------------------------------------------------------------------
    // Data path
    // ---------------------------------------------------------------------------

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
        // `tcp_measure_rcv_mss`, simplified: a segment shorter than the MSS ends an
        // application write (Linux also learns a smaller rcv_mss from repeated equal
        // sizes, and marks full-sized segments carrying PSH; we carry no PSH bit).
        if seg.len < self.cfg.mss {
            self.ack_pushed = true;
        }
        self.rcv_rtt_measure(now);

        if self.ato == 0 {
            // The first data segment: start in quick-ack mode so a sender in slow
            // start is not held back by our delayed ACKs.
            self.incr_quickack(self.cfg.quickack_segments);
            self.ato = self.cfg.delack_min_ns;
        } else {
            // Adapt ato to the inter-arrival time m.
            let m = now.saturating_sub(self.lrcvtime);
            let half_min = self.cfg.delack_min_ns / 2;
            if m <= half_min {
                self.ato = self.ato / 2 + half_min;
            } else if m < self.ato {
                self.ato = (self.ato / 2 + m).min(self.rto());
            } else if m > self.rto() {
                // "Too long gap. Apparently sender failed to restart window, so
                // that we send ACKs quickly."
                self.incr_quickack(self.cfg.quickack_segments);
            }
        }
        self.lrcvtime = now;
        self.ecn_check_ce(now, ce);
    }

    // ---------------------------------------------------------------------------
    // SACK / DSACK bookkeeping
    // ---------------------------------------------------------------------------

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

    // ---------------------------------------------------------------------------
    // ACK decisions
    // ---------------------------------------------------------------------------

    /// `tcp_in_quickack_mode`; delayed ACKs off acts as the route's quickack metric.
    fn in_quickack_mode(&self) -> bool {
        !self.cfg.delayed_ack || self.quick > 0
    }

    /// `tcp_incr_quickack`: at most half the advertised window in segments, at least 2.
    fn incr_quickack(&mut self, max_quickacks: u32) {
        let half_window_segs = self.rcv_wnd / (2 * self.cfg.mss as u64);
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
        // More than one full-sized segment unacknowledged, and the window we would
        // advertise is no smaller than the last one (else a read will ACK).
        let more_than_one_mss = self.rcv_nxt - self.rcv_wup > self.cfg.mss as u64;
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

    /// `tcp_send_delayed_ack`.
    fn send_delayed_ack(&mut self, now: Nanos) {
        let min = self.cfg.delack_min_ns;
        let mut ato = self.ato;
        if ato > min {
            // Slow path: the inter-segment interval is "high".
            let mut max_ato = if self.ack_pushed { self.cfg.delack_max_ns } else { MAX_ATO_BULK };
            if let Some(srtt) = self.cfg.srtt_ns {
                let rtt = srtt.max(min);
                if rtt < max_ato {
                    max_ato = rtt;
                }
            }
            ato = ato.min(max_ato);
        }
        ato = ato.min(self.cfg.delack_max_ns);
        let mut timeout = now + ato;
        if let Some(old) = self.delack_at {
            // "If delack timer is about to expire, send ACK now."
            if old <= now + ato / 4 {
                self.send_ack(now);
                return;
            }
            // Use the new timeout only if it is earlier.
            timeout = timeout.min(old);
        }
        self.ack_scheduled = true;
        self.delack_at = Some(timeout);
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

    /// `tcp_cleanup_rbuf`: after the application read `copied` bytes.
    fn cleanup_rbuf(&mut self, now: Nanos, copied: u64) {
        let mut time_to_ack = false;
        if self.ack_scheduled {
            // "Once-per-two-segments ACK was not sent by tcp_input.c", or the read
            // drained the buffer after a small (pushed) segment: the sender may be
            // waiting for this ACK to send its next write.
            let drained = self.unread_bytes() == 0 && self.ofo.is_empty();
            if self.rcv_nxt - self.rcv_wup > self.cfg.mss as u64 || (copied > 0 && self.ack_pushed && drained) {
                time_to_ack = true;
            }
        }
        if copied > 0 && !time_to_ack {
            // Window update if the read at least doubled a window that had fallen to
            // half the buffer or less.
            let now_win = self.receive_window();
            if 2 * now_win <= self.cfg.rcvbuf_bytes {
                let new_win = self.select_window_raw();
                if new_win > 0 && new_win >= 2 * now_win {
                    time_to_ack = true;
                }
            }
        }
        if time_to_ack {
            self.send_ack(now);
        }
    }

    // ---------------------------------------------------------------------------
    // Window
    // ---------------------------------------------------------------------------

    /// `tcp_receive_window`: what is left of the last advertised window.
    fn receive_window(&self) -> u64 {
        (self.rcv_wup + self.rcv_wnd).saturating_sub(self.rcv_nxt)
    }

    /// `__tcp_select_window`: the window the free buffer allows. Below half the buffer
    /// quick-ack mode ends, and receiver silly-window avoidance (RFC 1122 §4.2.3.3)
    /// advertises zero rather than less than one MSS or 1/16 of the buffer.
    /// (Linux also caps it by `rcv_ssthresh`, which grows during the connection,
    /// and rounds to the window-scale unit; neither is modelled.)
    fn select_window_raw(&mut self) -> u64 {
        let full = self.cfg.rcvbuf_bytes;
        let free = self.free_space();
        if free < full / 2 {
            self.quick = 0;
            if free < full / 16 || free < self.cfg.mss as u64 {
                return 0;
            }
        }
        free
    }

    /// `tcp_select_window`: the window to put on an ACK. The right edge never moves
    /// left (RFC 9293 §3.8.6: a receiver should not shrink the window).
    fn select_window(&mut self) -> u64 {
        let cur = self.receive_window();
        let new = self.select_window_raw().max(cur);
        self.rcv_wnd = new;
        self.rcv_wup = self.rcv_nxt;
        new
    }

    // ---------------------------------------------------------------------------
    // RTT seen by the receiver (for the SACK-compression delay)
    // ---------------------------------------------------------------------------

    /// `tcp_rcv_rtt_measure_ts`: a full-sized segment echoing one of our timestamps
    /// tells how long ago we sent that ACK. Our TSval is the simulated clock.
    fn rcv_rtt_measure_ts(&mut self, now: Nanos, seg: &Segment) {
        if seg.tsecr == 0 || seg.tsecr == self.rcv_rtt_last_tsecr {
            return;
        }
        self.rcv_rtt_last_tsecr = seg.tsecr;
        if seg.len >= self.cfg.mss && now >= seg.tsecr {
            self.rcv_rtt_update(now - seg.tsecr, false);
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

    /// `tcp_rcv_rtt_update`: timestamp samples are smoothed with gain 1/8; window-based
    /// samples only ever lower the estimate (they over-estimate when the sender stalls).
    fn rcv_rtt_update(&mut self, sample: Nanos, win_dep: bool) {
        let sample = sample.max(1);
        if self.rcv_rtt8 == 0 {
            self.rcv_rtt8 = sample * 8;
        } else if !win_dep {
            self.rcv_rtt8 = self.rcv_rtt8 - self.rcv_rtt8 / 8 + sample;
        } else if sample * 8 < self.rcv_rtt8 {
            self.rcv_rtt8 = sample * 8;
        }
    }

    /// The receiving socket's RTO: from its handshake RTT sample if it has one
    /// (`tcp_rtt_estimator` first sample: RTO = srtt + max(2·srtt, 200 ms)), else 1 s.
    fn rto(&self) -> Nanos {
        match self.cfg.srtt_ns {
            Some(s) if s > 0 => s + (2 * s).max(TCP_RTO_MIN),
            _ => TCP_TIMEOUT_INIT,
        }
    }

    // ---------------------------------------------------------------------------
    // ECN
    // ---------------------------------------------------------------------------

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

    // ---------------------------------------------------------------------------
    // Building ACKs
    // ---------------------------------------------------------------------------

    fn send_ack(&mut self, now: Nanos) {
        self.send_ack_for(now, self.rcv_nxt);
    }

    /// `__tcp_send_ack` + `tcp_established_options` + `tcp_event_ack_sent`.
    fn send_ack_for(&mut self, now: Nanos, ack: u64) {
        let rwnd = self.select_window();
        let mut seg = Segment {
            ack,
            rwnd,
            tsval: if self.cfg.timestamps { now } else { 0 },
            tsecr: if self.cfg.timestamps { self.ts_recent } else { 0 },
            ece: self.cfg.ecn_mode != EcnMode::Off && self.demand_cwr,
            ..Segment::default()
        };
        if self.cfg.sack {
            // DSACK first (RFC 2883 §4), then the SACK blocks, as many as fit.
            let max = self.cfg.max_sack_blocks();
            let mut n = 0;
            if let Some(d) = self.dsack.take() {
                seg.sack[0] = d;
                seg.dsack = true;
                n = 1;
            }
            for b in &self.sacks[..self.num_sacks] {
                if n == max {
                    break;
                }
                seg.sack[n] = *b;
                n += 1;
            }
            seg.n_sack = n as u8;
        }
        self.out.push_back(seg);
        self.acks_sent += 1;

        // `tcp_event_ack_sent`.
        if self.compressed_ack > 0 {
            self.compressed_ack = 0;
            self.comp_at = None;
        }
        if ack != self.rcv_nxt {
            // DCTCP's extra ACK for earlier data: the pending ACK is still owed.
            return;
        }
        // `tcp_dec_quickack_mode`: only ACKs covering new data use up a quick ACK.
        if self.quick > 0 && self.ack_scheduled {
            self.quick -= 1;
            if self.quick == 0 {
                // "Leaving quickack mode we deflate ATO."
                self.ato = self.cfg.delack_min_ns;
            }
        }
        self.ack_scheduled = false;
        self.ack_now = false;
        self.ack_pushed = false;
        self.delack_at = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1448;
    /// Runs start at 1 s so that "RTT ago" timestamps stay positive.
    const T0: Nanos = NS_PER_SEC;
    const MS: Nanos = NS_PER_MS;
    const NS_PER_US_TEST: Nanos = 1_000;

    /// Full-sized segment number `i`, sent 25 ms before `now`, echoing an ACK the
    /// receiver sent 50 ms ago (a 50 ms RTT as the receiver measures it).
    fn seg_at(now: Nanos, i: u64) -> Segment {
        Segment { seq: i * MSS, len: MSS as u32, tsval: now - 25 * MS, tsecr: now - 50 * MS, ..Segment::default() }
    }

    fn acks(r: &mut TcpReceiver, now: Nanos) -> Vec<Segment> {
        std::iter::from_fn(|| r.poll_ack(now)).collect()
    }

    fn blocks(a: &Segment) -> Vec<(u64, u64)> {
        a.sacks().iter().map(|b| (b.start / MSS, b.end / MSS)).collect()
    }

    /// A receiver that has used up its initial quick ACKs: segments 0..16 arrived
    /// 1 ms apart, each ACKed at once. Returns it and the time of the last arrival.
    fn warmed(cfg: ReceiverConfig) -> (TcpReceiver, Nanos) {
        let mut r = TcpReceiver::new(cfg);
        let mut now = T0;
        for i in 0..16 {
            now = T0 + i * MS;
            r.on_segment(now, &seg_at(now, i), false);
            let a = acks(&mut r, now);
            assert_eq!(a.len(), 1, "quick ACK for segment {i}");
            assert_eq!(a[0].ack, (i + 1) * MSS);
        }
        assert_eq!(r.quickacks_left(), 0);
        assert_eq!(r.ato(), 40 * MS);
        (r, now)
    }

    #[test]
    fn quickack_mode_at_start_acks_each_of_the_first_16_segments() {
        let mut r = TcpReceiver::new(ReceiverConfig::default());
        let mut per_segment = Vec::new();
        for i in 0..20 {
            let now = T0 + i * MS;
            r.on_segment(now, &seg_at(now, i), false);
            per_segment.push(acks(&mut r, now).iter().map(|a| a.ack / MSS).collect::<Vec<_>>());
        }
        for (i, a) in per_segment.iter().enumerate().take(16) {
            assert_eq!(a, &vec![i as u64 + 1], "segment {i}");
        }
        // Quick-ack exhausted: back to one ACK per two full-sized segments.
        assert_eq!(per_segment[16], Vec::<u64>::new());
        assert_eq!(per_segment[17], vec![18]);
        assert_eq!(per_segment[18], Vec::<u64>::new());
        assert_eq!(per_segment[19], vec![20]);
    }

    #[test]
    fn quickacks_are_bounded_by_half_the_window_in_segments() {
        // tcp_incr_quickack: rcv_wnd / (2 * mss) = 8688 / 2896 = 3.
        let cfg = ReceiverConfig { rcvbuf_bytes: 6 * MSS, ..ReceiverConfig::default() };
        let mut r = TcpReceiver::new(cfg);
        r.on_segment(T0, &seg_at(T0, 0), false);
        assert_eq!(acks(&mut r, T0).len(), 1);
        assert_eq!(r.quickacks_left(), 2);
    }

    #[test]
    fn in_order_data_with_delayed_ack_acks_every_second_segment() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let mut acked = Vec::new();
        for i in 16..24 {
            let now = last + (i - 15) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            let a = acks(&mut r, now);
            if i % 2 == 0 {
                assert!(a.is_empty(), "segment {i} alone is not ACKed");
                assert_eq!(r.next_timer(), Some(now + 40 * MS), "delayed-ACK timer armed");
            } else {
                assert_eq!(a.len(), 1);
                assert_eq!(r.next_timer(), None, "the ACK cancels the timer");
            }
            acked.extend(a.iter().map(|a| a.ack / MSS));
        }
        assert_eq!(acked, vec![18, 20, 22, 24]);
    }

    #[test]
    fn lone_segment_is_acked_by_the_40ms_timer_which_then_inflates_ato() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + 85 * MS; // gap > ato: ato stays 40 ms
        r.on_segment(now, &seg_at(now, 16), false);
        assert!(acks(&mut r, now).is_empty());
        assert_eq!(r.next_timer(), Some(now + 40 * MS));
        assert!(r.poll_ack(now + 40 * MS - 1).is_none());
        let a = r.poll_ack(now + 40 * MS).expect("delayed ACK");
        assert_eq!(a.ack, 17 * MSS);
        assert_eq!(r.next_timer(), None);
        // tcp_delack_timer_handler: "Delayed ACK missed: inflate ATO."
        assert_eq!(r.ato(), 80 * MS);
    }

    #[test]
    fn ato_follows_the_inter_arrival_time_up_to_200ms() {
        let (mut r, mut now) = warmed(ReceiverConfig::default());
        // Lone segments 30 ms apart: m = 30 ms < ato, ato = ato/2 + m → 35, 47.5, ...
        now += 30 * MS;
        r.on_segment(now, &seg_at(now, 16), false);
        assert_eq!(r.ato(), 20 * MS + 30 * MS);
        assert_eq!(r.next_timer(), Some(now + 50 * MS));
        // A timer that has not yet fired is kept (tcp_send_delayed_ack uses the
        // earlier deadline); the second segment ACKs anyway (two full segments).
        now += 30 * MS;
        r.on_segment(now, &seg_at(now, 17), false);
        assert_eq!(acks(&mut r, now).len(), 1);
        assert_eq!(r.ato(), 25 * MS + 30 * MS);
    }

    #[test]
    fn long_idle_gap_reenters_quickack_mode() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + 1500 * MS; // longer than the 1 s RTO of a socket without RTT
        r.on_segment(now, &seg_at(now, 16), false);
        assert_eq!(acks(&mut r, now).len(), 1);
        assert_eq!(r.quickacks_left(), 15);
    }

    #[test]
    fn delayed_ack_off_acks_every_segment() {
        let cfg = ReceiverConfig { delayed_ack: false, ..ReceiverConfig::default() };
        let mut r = TcpReceiver::new(cfg);
        for i in 0..40 {
            let now = T0 + i * MS;
            r.on_segment(now, &seg_at(now, i), false);
            let a = acks(&mut r, now);
            assert_eq!(a.len(), 1, "segment {i}");
            assert_eq!(a[0].ack, (i + 1) * MSS);
            assert_eq!(r.next_timer(), None);
        }
    }

    #[test]
    fn out_of_order_triggers_immediate_acks_with_most_recent_sack_block_first() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        // Segment 16 is lost; 17, 19 and 21 arrive (18 and 20 lost too).
        let mut got = Vec::new();
        for (k, i) in [17u64, 19, 21].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            let arr = r.on_segment(now, &seg_at(now, i), false);
            assert!(arr.out_of_order && !arr.duplicate);
            assert_eq!(arr.delivered(), 0, "held back behind the hole");
            let a = acks(&mut r, now);
            assert_eq!(a.len(), 1, "immediate duplicate ACK for segment {i}");
            assert_eq!(a[0].ack, 16 * MSS);
            assert!(!a[0].dsack);
            got.push(blocks(&a[0]));
        }
        assert_eq!(got[0], vec![(17, 18)]);
        assert_eq!(got[1], vec![(19, 20), (17, 18)]);
        assert_eq!(got[2], vec![(21, 22), (19, 20), (17, 18)]);
        // Contiguous arrival extends the block and moves it to the front.
        let now = last + 4 * MS;
        r.on_segment(now, &seg_at(now, 18), false);
        assert_eq!(r.ofo_intervals().len(), 2);
        let a = r.poll_ack(now + MS).expect("compressed ACK after 1 ms");
        assert_eq!(blocks(&a), vec![(17, 20), (21, 22)]);
    }

    #[test]
    fn sack_compression_after_three_dupacks_waits_5_percent_of_rtt_at_most_1ms() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        for (k, i) in [17u64, 19, 21].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            assert_eq!(acks(&mut r, now).len(), 1);
        }
        let now = last + 4 * MS;
        r.on_segment(now, &seg_at(now, 23), false);
        assert!(acks(&mut r, now).is_empty(), "fourth duplicate ACK is compressed");
        // RTT 50 ms → 2.5 ms, capped by tcp_comp_sack_delay_ns = 1 ms.
        assert_eq!(r.next_timer(), Some(now + MS));
        let a = r.poll_ack(now + MS).expect("compressed ACK");
        assert_eq!(a.ack, 16 * MSS);
        // Four blocks remembered, three fit next to timestamps.
        assert_eq!(blocks(&a), vec![(23, 24), (21, 22), (19, 20)]);
    }

    #[test]
    fn sack_compression_off_acks_every_out_of_order_segment() {
        let cfg = ReceiverConfig { comp_sack_nr: 0, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        for (k, i) in [17u64, 19, 21, 23, 25].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            assert_eq!(acks(&mut r, now).len(), 1, "segment {i}");
        }
    }

    #[test]
    fn fifth_hole_forgets_the_oldest_sack_block() {
        let cfg = ReceiverConfig { timestamps: false, comp_sack_nr: 0, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        let mut a = Vec::new();
        for (k, i) in [17u64, 19, 21, 23, 25].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            a = acks(&mut r, now);
        }
        // Without timestamps four blocks fit; the fifth hole pushes out (17, 18).
        assert_eq!(blocks(&a[0]), vec![(25, 26), (23, 24), (21, 22), (19, 20)]);
        assert_eq!(r.ofo_intervals().len(), 5, "the data itself is kept");
    }

    #[test]
    fn filling_the_hole_acks_immediately_and_releases_the_held_back_data() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        for (k, i) in [17u64, 18].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            acks(&mut r, now);
        }
        let now = last + 3 * MS;
        let arr = r.on_segment(now, &seg_at(now, 16), false); // the retransmission
        assert_eq!(arr.rcv_nxt_before, 16 * MSS);
        assert_eq!(arr.rcv_nxt_after, 19 * MSS);
        assert_eq!(arr.delivered(), 3 * MSS, "head-of-line release");
        assert_eq!(arr.new_bytes, MSS);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 19 * MSS);
        assert_eq!(a[0].n_sack, 0);
        assert_eq!(r.ofo_bytes(), 0);
    }

    #[test]
    fn partial_hole_fill_acks_immediately_with_remaining_blocks() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        for (k, i) in [17u64, 19].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            acks(&mut r, now);
        }
        // Three quick ACKs are also unused here: delay the fill so `ato` is irrelevant.
        let now = last + 3 * MS;
        let arr = r.on_segment(now, &seg_at(now, 16), false);
        assert_eq!(arr.rcv_nxt_after, 18 * MSS);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 18 * MSS);
        assert_eq!(blocks(&a[0]), vec![(19, 20)]);
    }

    #[test]
    fn duplicate_below_rcv_nxt_is_acked_at_once_with_a_dsack_block() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + MS;
        let arr = r.on_segment(now, &seg_at(now, 3), false);
        assert!(arr.duplicate);
        assert_eq!(arr.new_bytes, 0);
        assert_eq!(arr.delivered(), 0);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 16 * MSS);
        assert!(a[0].dsack);
        assert_eq!(blocks(&a[0]), vec![(3, 4)]);
        // Quick-ack mode was re-entered; the duplicate ACK itself covers no new data,
        // so it does not use up a quick ACK (`tcp_dec_quickack_mode`).
        assert_eq!(r.quickacks_left(), 16);
        let now = now + MS;
        r.on_segment(now, &seg_at(now, 16), false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1, "quick ACK");
        assert!(!a[0].dsack && a[0].n_sack == 0, "a DSACK is reported once");
        assert_eq!(r.quickacks_left(), 15);
    }

    #[test]
    fn duplicate_out_of_order_segment_gives_dsack_then_its_sack_block() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + MS;
        r.on_segment(now, &seg_at(now, 18), false);
        acks(&mut r, now);
        let now = now + MS;
        let arr = r.on_segment(now, &seg_at(now, 18), false);
        assert!(arr.duplicate && arr.out_of_order);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert!(a[0].dsack);
        assert_eq!(blocks(&a[0]), vec![(18, 19), (18, 19)]);
    }

    #[test]
    fn dsack_takes_one_of_the_three_option_slots() {
        let cfg = ReceiverConfig { comp_sack_nr: 0, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        for (k, i) in [17u64, 19, 21].into_iter().enumerate() {
            let now = last + (k as u64 + 1) * MS;
            r.on_segment(now, &seg_at(now, i), false);
            acks(&mut r, now);
        }
        let now = last + 4 * MS;
        r.on_segment(now, &seg_at(now, 3), false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert!(a[0].dsack);
        // DSACK first, then the two most recent SACK blocks (40 - 12 bytes of options).
        assert_eq!(blocks(&a[0]), vec![(3, 4), (21, 22), (19, 20)]);
    }

    #[test]
    fn partly_old_segment_reports_the_old_head_as_dsack() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + MS;
        // Repacketised retransmission covering [15.5 MSS, 17 MSS).
        let seg = Segment { seq: 15 * MSS + 724, len: 724 + MSS as u32, ..seg_at(now, 0) };
        let arr = r.on_segment(now, &seg, false);
        assert_eq!(arr.new_bytes, MSS);
        assert_eq!(arr.rcv_nxt_after, 17 * MSS);
        // Not more than one MSS since the last ACK, no quick-ack: delayed, DSACK kept.
        assert!(acks(&mut r, now).is_empty());
        let a = r.poll_ack(now + 40 * MS).expect("delayed ACK");
        assert!(a.dsack);
        assert_eq!((a.sack[0].start, a.sack[0].end), (15 * MSS + 724, 16 * MSS));
    }

    #[test]
    fn delayed_ack_echoes_tsval_of_the_earliest_unacked_segment() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let (t1, t2) = (last + MS, last + 2 * MS);
        let (s1, s2) = (seg_at(t1, 16), seg_at(t2, 17));
        r.on_segment(t1, &s1, false);
        r.on_segment(t2, &s2, false);
        let a = acks(&mut r, t2);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].tsecr, s1.tsval, "RFC 7323 §4.3: TS.Recent from the first");
        assert_eq!(a[0].tsval, t2);
    }

    #[test]
    fn classic_ecn_echo_persists_until_cwr() {
        let cfg = ReceiverConfig { ecn_mode: EcnMode::Classic, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        let mut ece = Vec::new();
        let mut t = last;
        let mut feed = |r: &mut TcpReceiver, i: u64, ce: bool, cwr: bool| {
            t += MS;
            let s = Segment { cwr, ..seg_at(t, i) };
            r.on_segment(t, &s, ce);
            acks(r, t).iter().map(|a| (a.ack / MSS, a.ece)).collect::<Vec<_>>()
        };
        // CE: quick-ack for two segments (tcp_enter_quickack_mode(sk, 2)).
        ece.push(feed(&mut r, 16, true, false));
        ece.push(feed(&mut r, 17, false, false));
        // Back to delayed ACKs, still echoing.
        ece.push(feed(&mut r, 18, false, false));
        ece.push(feed(&mut r, 19, false, false));
        // CWR stops the echo and is ACKed at once.
        ece.push(feed(&mut r, 20, false, true));
        ece.push(feed(&mut r, 21, false, false));
        ece.push(feed(&mut r, 22, false, false));
        assert_eq!(
            ece,
            vec![
                vec![(17, true)],
                vec![(18, true)],
                vec![],
                vec![(20, true)],
                vec![(21, false)],
                vec![],
                vec![(23, false)],
            ]
        );
    }

    #[test]
    fn ecn_off_ignores_ce() {
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + MS;
        r.on_segment(now, &seg_at(now, 16), true);
        assert!(acks(&mut r, now).is_empty(), "no quick-ack on CE without ECN");
    }

    #[test]
    fn dctcp_acks_at_once_when_the_ce_state_changes() {
        let cfg = ReceiverConfig { ecn_mode: EcnMode::Dctcp, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        let mut t = last;
        let mut feed = |r: &mut TcpReceiver, i: u64, ce: bool| {
            t += MS;
            r.on_segment(t, &seg_at(t, i), ce);
            acks(r, t).iter().map(|a| (a.ack / MSS, a.ece)).collect::<Vec<_>>()
        };
        // Segment 16 unmarked: delayed ACK pending.
        assert_eq!(feed(&mut r, 16, false), vec![]);
        // 17 marked: the pending ACK for 16 goes out first with ECE=0, then 17 with ECE=1.
        assert_eq!(feed(&mut r, 17, true), vec![(17, false), (18, true)]);
        // Same state: normal delayed ACKs, ECE reflects the marks.
        assert_eq!(feed(&mut r, 18, true), vec![]);
        assert_eq!(feed(&mut r, 19, true), vec![(20, true)]);
        // Back to unmarked, no ACK pending: one immediate ACK with ECE=0.
        assert_eq!(feed(&mut r, 20, false), vec![(21, false)]);
        assert_eq!(feed(&mut r, 21, false), vec![]);
        assert_eq!(feed(&mut r, 22, false), vec![(23, false)]);
    }

    #[test]
    fn rwnd_shrinks_when_the_app_does_not_read_and_reopens_on_read() {
        let cfg = ReceiverConfig {
            rcvbuf_bytes: 65_536,
            app_reads_immediately: false,
            delayed_ack: false,
            ..ReceiverConfig::default()
        };
        let mut r = TcpReceiver::new(cfg);
        let mut now = T0;
        for i in 0..30 {
            now = T0 + i * MS;
            r.on_segment(now, &seg_at(now, i), false);
            let a = acks(&mut r, now);
            assert_eq!(a[0].rwnd, 65_536 - (i + 1) * MSS, "segment {i}");
        }
        assert_eq!(r.unread_bytes(), 30 * MSS);
        // Reading a little does not double the window: no update.
        now += MS;
        assert_eq!(r.read(now, 1000), 1000);
        assert!(acks(&mut r, now).is_empty());
        // Reading the rest frees more than twice the open window: window update.
        assert_eq!(r.read(now, u64::MAX), 30 * MSS - 1000);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 30 * MSS);
        assert_eq!(a[0].rwnd, 65_536);
    }

    #[test]
    fn full_buffer_advertises_zero_and_drops_data_beyond_it() {
        let cfg = ReceiverConfig {
            rcvbuf_bytes: 16 * MSS,
            app_reads_immediately: false,
            delayed_ack: false,
            ..ReceiverConfig::default()
        };
        let mut r = TcpReceiver::new(cfg);
        let mut last = Segment::default();
        for i in 0..16 {
            let now = T0 + i * MS;
            r.on_segment(now, &seg_at(now, i), false);
            last = acks(&mut r, now).pop().unwrap();
        }
        assert_eq!(last.rwnd, 0);
        let now = T0 + 20 * MS;
        let arr = r.on_segment(now, &seg_at(now, 16), false);
        assert!(arr.discarded);
        assert_eq!(arr.delivered(), 0);
        let a = acks(&mut r, now);
        assert_eq!((a[0].ack, a[0].rwnd), (16 * MSS, 0));
    }

    #[test]
    fn zero_window_probe_is_answered_and_a_read_reopens_the_window() {
        let cfg = ReceiverConfig {
            rcvbuf_bytes: 16 * MSS,
            app_reads_immediately: false,
            delayed_ack: false,
            ..ReceiverConfig::default()
        };
        let mut r = TcpReceiver::new(cfg);
        for i in 0..16 {
            let now = T0 + i * MS;
            r.on_segment(now, &seg_at(now, i), false);
            acks(&mut r, now);
        }
        assert_eq!(r.advertised_window(), 0);
        // Linux probes a zero window with an old, empty segment (`tcp_xmit_probe_skb`).
        let now = T0 + 200 * MS;
        let probe = Segment { seq: 16 * MSS - 1, len: 0, ..seg_at(now, 0) };
        r.on_segment(now, &probe, false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].ack, a[0].rwnd), (16 * MSS, 0));
        // A small read frees less than an MSS: still zero, no update (SWS avoidance).
        assert_eq!(r.read(now, 1000), 1000);
        assert!(acks(&mut r, now).is_empty());
        // Reading half the buffer opens the window: window update at once.
        r.read(now, 8 * MSS - 1000);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].ack, a[0].rwnd), (16 * MSS, 8 * MSS));
    }

    #[test]
    fn small_segment_is_acked_when_the_app_reads_it() {
        // tcp_cleanup_rbuf: a pushed (sub-MSS) segment drained by the reader is ACKed
        // without waiting for the delayed-ACK timer.
        let (mut r, last) = warmed(ReceiverConfig::default());
        let now = last + 20 * MS;
        let s = Segment { len: 160, ..seg_at(now, 16) };
        r.on_segment(now, &s, false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 16 * MSS + 160);
        // A slow reader leaves it to the timer.
        let cfg = ReceiverConfig { app_reads_immediately: false, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        let now = last + 20 * MS;
        r.on_segment(now, &s, false);
        assert!(acks(&mut r, now).is_empty());
        assert_eq!(r.next_timer(), Some(now + 40 * MS));
    }

    #[test]
    fn segment_beyond_the_window_is_dropped_with_an_immediate_ack() {
        let cfg = ReceiverConfig { rcvbuf_bytes: 32 * MSS, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        let now = last + MS;
        let arr = r.on_segment(now, &seg_at(now, 16 + 33), false);
        assert!(arr.discarded);
        assert_eq!(r.ofo_bytes(), 0);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].ack, 16 * MSS);
    }

    #[test]
    fn sack_off_sends_plain_duplicate_acks() {
        let cfg = ReceiverConfig { sack: false, ..ReceiverConfig::default() };
        let (mut r, last) = warmed(cfg);
        for k in 1..=6 {
            let now = last + k * MS;
            r.on_segment(now, &seg_at(now, 16 + k), false);
            let a = acks(&mut r, now);
            assert_eq!(a.len(), 1);
            assert_eq!((a[0].ack, a[0].n_sack), (16 * MSS, 0));
        }
        let now = last + 7 * MS;
        let a = r.on_segment(now, &seg_at(now, 3), false);
        assert!(a.duplicate);
        assert_eq!(acks(&mut r, now)[0].n_sack, 0, "no DSACK without SACK");
    }

    /// Deterministic xorshift64* for the property test (no dependency on run seeds).
    struct XorShift(u64);
    impl XorShift {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    #[test]
    fn random_loss_reordering_and_duplication_keep_the_receiver_consistent() {
        let (mut n_dsack, mut n_sack, mut n_timer_acks) = (0, 0, 0);
        for seed in 1..=20u64 {
            let n = 300u64;
            let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            // Arrival order: every segment once, some twice, with local reordering and
            // a few "lost" ones arriving much later (as retransmissions).
            let mut order: Vec<u64> = Vec::new();
            let mut late = Vec::new();
            for i in 0..n {
                match rng.below(20) {
                    0 | 1 => late.push(i),
                    2 => {
                        order.push(i);
                        order.push(i);
                    }
                    _ => order.push(i),
                }
            }
            for k in 1..order.len() {
                if rng.below(8) == 0 {
                    order.swap(k - 1, k);
                }
            }
            for (k, i) in late.into_iter().enumerate() {
                let pos = (order.len()).min(k * 7 + 40 + rng.below(30) as usize);
                order.insert(pos, i);
            }

            let cfg = ReceiverConfig { comp_sack_nr: 3 + (seed % 3) as u32 * 20, ..ReceiverConfig::default() };
            let mut r = TcpReceiver::new(cfg);
            let mut have = vec![false; n as usize];
            let (mut delivered, mut fresh, mut last_ack) = (0u64, 0u64, 0u64);
            let mut now = T0;
            for &i in &order {
                now += 100 * NS_PER_US_TEST;
                // Timers that expired before this arrival fire first.
                while let Some(t) = r.next_timer().filter(|&t| t <= now) {
                    r.on_timer(t);
                    for a in acks(&mut r, t) {
                        n_timer_acks += 1;
                        assert!(a.ack >= last_ack);
                        last_ack = a.ack;
                    }
                }
                let was_dup = have[i as usize];
                let arr = r.on_segment(now, &seg_at(now, i), false);
                have[i as usize] = true;
                assert_eq!(arr.duplicate, was_dup, "seed {seed} segment {i}");
                delivered += arr.delivered();
                fresh += arr.new_bytes;
                let prefix = have.iter().take_while(|&&h| h).count() as u64;
                assert_eq!(r.rcv_nxt(), prefix * MSS, "seed {seed}");
                // The interval set holds exactly the received segments above rcv_nxt.
                let above: u64 = have[prefix as usize..].iter().filter(|&&h| h).count() as u64;
                assert_eq!(r.ofo_bytes(), above * MSS);
                for b in r.ofo_intervals() {
                    assert!(b.start > r.rcv_nxt() && b.start < b.end);
                    assert!((b.start / MSS..b.end / MSS).all(|j| have[j as usize]));
                }
                for a in acks(&mut r, now) {
                    assert!(a.ack >= last_ack, "cumulative ACK never goes back");
                    last_ack = a.ack;
                    let sacks = &a.sacks()[usize::from(a.dsack)..];
                    assert!(sacks.len() <= 3);
                    for b in sacks {
                        assert!(b.start > a.ack, "SACK block above the cumulative ACK");
                        assert!((b.start / MSS..b.end.div_ceil(MSS)).all(|j| have[j as usize]));
                    }
                    n_sack += usize::from(!sacks.is_empty());
                    if a.dsack {
                        n_dsack += 1;
                        let d = a.sack[0];
                        assert!((d.start / MSS..d.end.div_ceil(MSS)).all(|j| have[j as usize]));
                    }
                }
            }
            assert_eq!(r.rcv_nxt(), n * MSS);
            assert_eq!(delivered, n * MSS);
            assert_eq!(fresh, n * MSS);
            // Whatever is still owed goes out with the timer; then the receiver is idle.
            let t = r.next_timer().unwrap_or(now);
            let rest = acks(&mut r, t);
            assert!(rest.iter().all(|a| a.ack == n * MSS));
            assert_eq!(r.next_timer(), None);
        }
        // The scenarios did exercise the paths checked above.
        assert!(n_dsack > 50 && n_sack > 500 && n_timer_acks > 10, "{n_dsack} {n_sack} {n_timer_acks}");
    }

    #[test]
    fn config_validation_rejects_impossible_values() {
        assert!(ReceiverConfig::default().validate().is_ok());
        assert!(ReceiverConfig { mss: 0, ..ReceiverConfig::default() }.validate().is_err());
        assert!(ReceiverConfig { rcvbuf_bytes: 1000, ..ReceiverConfig::default() }.validate().is_err());
        let bad = ReceiverConfig { delack_min_ns: 300 * MS, ..ReceiverConfig::default() };
        assert!(bad.validate().is_err());
    }
}
