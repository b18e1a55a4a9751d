//! The receiving half of a simulated TCP connection, behaving like Linux
//! (`net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp_timer.c`, `tcp_dctcp.c`).
//!
//! Sans-IO: segments come in through [`TcpReceiver::on_segment`], ACKs go out through
//! [`TcpReceiver::poll_ack`], time is the `now` argument, and the one timer the
//! receiver needs (delayed ACK, or SACK compression) is exposed through
//! [`TcpReceiver::next_timer`] / [`TcpReceiver::on_timer`]. No payload is stored: the
//! out-of-order queue is a sorted set of byte intervals.
//!
//! The files follow Linux's: `input.rs` (tcp_input.c: the arriving segment, the
//! out-of-order queue, SACK and DSACK blocks, the ACK decision, the receiver's RTT,
//! ECN), `output.rs` (tcp_output.c: the window and the ACKs themselves), `timer.rs`
//! (tcp_timer.c: delayed ACK and SACK compression); this file holds the state and
//! the application's side (tcp.c's reads and `tcp_cleanup_rbuf`).
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
//! - receive-window growth (`window.rs`): `rcv_ssthresh` grows per in-order segment up
//!   to a clamp that receive-buffer autotuning raises once per RTT, and segments that
//!   grow it are ACKed at once (`tcp_grow_window`, `tcp_rcv_space_adjust`); the
//!   buffer's memory is charged with skb overhead (`scaling_ratio`).
//! - `rcv_mss` estimation (`rcvmss.rs`): the receiver learns the sender's segment
//!   size from arrivals, starting from 536 bytes (`tcp_initialize_rcv_mss`,
//!   `tcp_measure_rcv_mss`); it sets the ACK-every-two rule, the quick-ACK count,
//!   which segments give an RTT sample and silly-window avoidance; a segment of a new
//!   size re-measures `scaling_ratio` (one skb size for every segment); a sub-`rcv_mss`
//!   or PSH segment marks the ACK as pushed.
//!
//! Not modelled (each is a known difference from a real Linux receiver):
//! - window rounding to the window-scale unit (1 KB with the default buffers);
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

mod input;
mod output;
mod rcvmss;
mod window;
#[cfg(test)]
mod tests;
mod timer;

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
    /// Payload bytes of a full-sized segment the receiver announces (`tp->advmss`);
    /// the size it assumes for the sender's segments (`icsk_ack.rcv_mss`) is learnt
    /// from arrivals (`rcvmss.rs`). 1448 = 1500-byte MTU with timestamps.
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
    /// Largest receive buffer autotuning may reach (`net.ipv4.tcp_rmem[2]`: 32 MiB since Linux 6.18, 6 MiB before).
    /// As in Linux, it is memory: it holds `scaling_ratio / 256` of it in payload.
    pub rcvbuf_bytes: u64,
    /// Receive buffer at the start (`net.ipv4.tcp_rmem[1]` = 128 KiB).
    pub rcvbuf_initial_bytes: u64,
    /// Receive-buffer autotuning (`net.ipv4.tcp_moderate_rcvbuf` = 1).
    pub moderate_rcvbuf: bool,
    /// Payload share of receive-buffer memory, in 1/256 (`tp->scaling_ratio`, which
    /// Linux measures as segment length / skb truesize, `tcp_measure_rcv_mss`). 160:
    /// 1448-byte segments in 2304-byte skbs (a 2 KiB data buffer plus the `sk_buff`),
    /// which fits what the kernel showed through ccemu's tun device (window clamp
    /// 79 KB from a 128 KiB buffer, less the segment being queued). 256 charges no
    /// overhead.
    pub scaling_ratio: u32,
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
    /// The kernel's timer tick (`1 s / CONFIG_HZ`); 0 fires the delayed-ACK timer at
    /// its exact time instead. Linux's `icsk_delack_timer` is a jiffies timer
    /// (`sk_reset_timer(.., jiffies + ato)`): it fires on a tick, from just over
    /// `ato - 1 tick` to `ato` after it was armed, as the tick falls.
    pub jiffy_ns: Nanos,
    /// Where the ticks fall: at `jiffy_phase_ns + k * jiffy_ns`. A run's kernel
    /// ticks at a phase its packets do not know, drawn from the seed.
    pub jiffy_phase_ns: Nanos,
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
            rcvbuf_bytes: 33_554_432,
            rcvbuf_initial_bytes: 131_072,
            moderate_rcvbuf: true,
            scaling_ratio: 160,
            ecn_mode: EcnMode::Off,
            app_reads_immediately: true,
            comp_sack_nr: 44,
            comp_sack_delay_ns: NS_PER_MS,
            srtt_ns: None,
            jiffy_ns: 0,
            jiffy_phase_ns: 0,
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
        if self.scaling_ratio == 0 || self.scaling_ratio > 256 {
            return Err(ConfigError::new("tcp.rcv_scaling_ratio", "must be 1..=256 (256ths of the buffer that hold payload)"));
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
    /// `TCP_ATO_MIN / 2` and the RTO that bound `ato`'s adaptation, in whole ticks
    /// when the timer runs on one (`settle_jiffy_clock`: kept out of the per-segment
    /// path).
    ato_half_min: Nanos,
    ato_rto: Nanos,
    /// Arrival time of the last in-order data segment (`lrcvtime`).
    lrcvtime: Nanos,
    /// Quick ACKs left.
    quick: u32,
    /// `icsk_ack.rcv_mss`: the sender's segment size as estimated from arrivals.
    rcv_mss: u32,
    /// `icsk_ack.last_seg_size`: length of the last sub-`rcv_mss` segment that could
    /// be a full-sized one (0 if the last segment could not).
    last_seg_size: u32,

    // Receive window (`window.rs`).
    /// `tp->scaling_ratio`: payload share of buffer memory, in 1/256; starts at the
    /// configured one and is re-measured from segments of a new size.
    scaling_ratio: u32,
    /// `sk->sk_rcvbuf`: buffer memory, autotuned from `tcp_rmem[1]` up.
    sk_rcvbuf: u64,
    /// `tp->window_clamp`: the largest window, follows `sk_rcvbuf`.
    window_clamp: u64,
    /// `tp->rcv_ssthresh`: the window may open this far; grows per segment.
    rcv_ssthresh: u64,
    /// `tp->rcvq_space`: most bytes read in one receiver RTT so far, and where and
    /// when the current measurement started (the first one at ESTABLISHED).
    rcvq_space: u64,
    rcvq_seq: u64,
    rcvq_time: Nanos,

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
    /// Runs the delayed-ACK timer on a kernel tick of `hz` per second, the ticks
    /// falling at `phase_ns` past each multiple of the tick (see `jiffy_ns`).
    pub fn set_jiffy_clock(&mut self, hz: u32, phase_ns: Nanos) {
        self.cfg.jiffy_ns = crate::time::jiffy_ns(hz);
        self.cfg.jiffy_phase_ns = phase_ns;
        self.settle_jiffy_clock();
    }

    /// The passive side's handshake sample (SYN-ACK to ACK, `tcp_synack_rtt_meas`).
    pub fn set_handshake_srtt(&mut self, srtt_ns: Nanos) {
        self.cfg.srtt_ns = Some(srtt_ns.max(1));
        self.settle_jiffy_clock();
    }

    /// Keeps the tick's phase within one tick, and sets `TCP_ATO_MIN / 2` rounded down
    /// and the RTO rounded up to whole ticks (Linux keeps both in jiffies); in
    /// nanoseconds without a tick.
    fn settle_jiffy_clock(&mut self) {
        let j = self.cfg.jiffy_ns.max(1);
        self.cfg.jiffy_phase_ns %= j;
        self.ato_half_min = self.cfg.delack_min_ns / j / 2 * j;
        self.ato_rto = self.rto().div_ceil(j) * j;
    }

    pub fn new(cfg: ReceiverConfig) -> Self {
        let scaling_ratio = cfg.scaling_ratio;
        let mut r = TcpReceiver {
            cfg,
            rcv_nxt: 0,
            rcv_wup: 0,
            rcv_wnd: 0,
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
            ato_half_min: 0,
            ato_rto: 0,
            lrcvtime: 0,
            quick: 0,
            rcv_mss: 0,
            last_seg_size: 0,
            scaling_ratio,
            sk_rcvbuf: 0,
            window_clamp: 0,
            rcv_ssthresh: 0,
            rcvq_space: 0,
            rcvq_seq: 0,
            // `tcp_init_buffer_space` opens the first measurement at ESTABLISHED, and
            // ccemu's probes (whose kernel runs this models) connect at the run's start,
            // before any data: so the first adjust comes with the first read after the
            // receiver's first RTT sample, the first segment of the second flight. From
            // the first read instead, a sample 1 ms above the flight spacing (timestamps
            // are whole ms) pushed every later measurement into mid-flight, and the
            // buffer grew late for some flows (ten CUBIC flows: 4 of 10, then delayed
            // ACKs in their 4th round where the kernel's ACK every segment).
            rcvq_time: 0,
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
        };
        r.init_window();
        r.initialize_rcv_mss();
        r.settle_jiffy_clock();
        r
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

    /// Free receive buffer right now, in payload bytes (`tcp_space`).
    #[inline]
    pub fn free_space(&self) -> u64 {
        self.space()
    }

    /// `rcv_ssthresh`: how far the window may open now.
    #[inline]
    pub fn rcv_ssthresh(&self) -> u64 {
        self.rcv_ssthresh
    }

    /// `window_clamp`: the largest window the autotuned buffer allows now.
    #[inline]
    pub fn window_clamp(&self) -> u64 {
        self.window_clamp
    }

    /// `icsk_ack.rcv_mss`: the sender's segment size as the receiver estimates it.
    #[inline]
    pub fn rcv_mss(&self) -> u32 {
        self.rcv_mss
    }

    /// `tp->scaling_ratio`: payload share of receive-buffer memory, in 1/256.
    #[inline]
    pub fn scaling_ratio(&self) -> u32 {
        self.scaling_ratio
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

    /// The application reads up to `bytes` of delivered data. Returns the bytes read.
    /// Freeing buffer space may send a window update (`tcp_cleanup_rbuf`).
    pub fn read(&mut self, now: Nanos, bytes: u64) -> u64 {
        let n = bytes.min(self.unread_bytes());
        self.copied_seq += n;
        if n > 0 {
            self.rcv_space_adjust(now);
        }
        self.cleanup_rbuf(now, n);
        n
    }

    /// `tcp_cleanup_rbuf`: after the application read `copied` bytes.
    fn cleanup_rbuf(&mut self, now: Nanos, copied: u64) {
        let mut time_to_ack = false;
        if self.ack_scheduled {
            // "Once-per-two-segments ACK was not sent by tcp_input.c", or the read
            // drained the buffer after a small (pushed) segment: the sender may be
            // waiting for this ACK to send its next write.
            let drained = self.unread_bytes() == 0 && self.ofo.is_empty();
            if self.rcv_nxt - self.rcv_wup > self.rcv_mss as u64 || (copied > 0 && self.ack_pushed && drained) {
                time_to_ack = true;
            }
        }
        if copied > 0 && !time_to_ack {
            // Window update if the read at least doubled a window that had fallen to
            // half the buffer or less.
            let now_win = self.receive_window();
            if 2 * now_win <= self.window_clamp {
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
}
