//! The TCP sender, sans-IO: time arrives as `now`, segments go out of
//! [`TcpSender::poll_transmit`] and ACKs come in through [`TcpSender::on_ack`]. The
//! simulator (or a test) owns the clock, the links and the timers; it asks
//! [`TcpSender::next_timer`] when to call [`TcpSender::on_timer`].
//!
//! It behaves like Linux (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c,
//! tcp_recovery.c, tcp_rate.c), not like a textbook. Function names in comments are
//! the Linux functions each piece mirrors. The files follow Linux's: `output.rs`
//! (tcp_output.c), `input.rs` (tcp_input.c's ACK path and the window change an ACK
//! makes), `fastretrans.rs` (tcp_input.c's congestion-avoidance state machine and
//! undo), `recovery.rs` (tcp_recovery.c: RACK, NewReno marking, and the tail loss
//! probe RFC 8985 pairs with RACK) and `timer.rs` (tcp_timer.c); this file holds the
//! state, the application's side (tcp.c) and the glue to the congestion control.
//! Where Linux is:
//!
//! | behaviour | here | file | Linux |
//! |---|---|---|---|
//! | application writes | [`TcpSender::write`] | `mod.rs` | `tcp_sendmsg` (tcp.c) |
//! | transmit loop | [`TcpSender::poll_transmit`] | `output.rs` | `tcp_write_xmit`, `tcp_xmit_retransmit_queue` |
//! | ACK processing order | [`TcpSender::on_ack`] | `input.rs` | `tcp_ack` |
//! | SACK tagging, DSACK | `sacktag` | `input.rs` | `tcp_sacktag_write_queue`, `tcp_check_dsack` |
//! | cumulative ACK, RTT samples (Karn) | `clean_rtx_queue` | `input.rs` | `tcp_clean_rtx_queue`, `tcp_ack_update_rtt` |
//! | CA state machine | `fastretrans_alert` | `fastretrans.rs` | `tcp_fastretrans_alert` |
//! | loss detection with SACK | `rack_*` | `recovery.rs` | `tcp_rack_mark_lost`, `tcp_rack_detect_loss` (RFC 8985) |
//! | loss detection without SACK | `newreno_mark_lost` | `recovery.rs` | `tcp_newreno_mark_lost` (RFC 6582) |
//! | PRR | `cwnd_reduction` | `input.rs` | `tcp_cwnd_reduction` (RFC 6937, SSRB variant) |
//! | rate halving (2.6) | `cwnd_down` | `input.rs` | 2.6 `tcp_cwnd_down` |
//! | undo | `try_undo_*`, `undo_cwnd_reduction` | `fastretrans.rs` | same names |
//! | RTO | `retransmit_timer`, `enter_loss` | `timer.rs`, `fastretrans.rs` | `tcp_retransmit_timer`, `tcp_enter_loss` |
//! | tail loss probe | `schedule_loss_probe`, `send_loss_probe`, `process_tlp_ack` | `recovery.rs` | same names, `tcp_` prefix |
//! | cwnd validation | `cwnd_validate` | `output.rs` | `tcp_cwnd_validate`, `tcp_cwnd_application_limited` |
//! | slow start after idle | `cwnd_restart` | `output.rs` | `tcp_slow_start_after_idle_check`, `tcp_cwnd_restart` |
//! | Nagle | `nagle_holds` | `output.rs` | `tcp_nagle_check` with Minshall's variant |
//! | pacing | `update_pacing_rate`, `after_send_pacing` | `input.rs`, `output.rs` | `tcp_update_pacing_rate`, `tcp_update_skb_after_send`; `pacing = "random"`: [`crate::tcp::pacing`] |
//! | ECN | `enter_cwr`, CWR flag | `fastretrans.rs`, `output.rs` | `tcp_enter_cwr`, `tcp_ecn_queue_cwr`, `tcp_ecn_send` |
//!
//! **Lost retransmissions** are detected the way Linux does today, by time (RACK,
//! RFC 8985): a segment, original or retransmission, is lost once a segment sent
//! *after* it has been delivered and one RTT plus the reordering window has passed
//! since it was sent. Wei's TCP-Linux `Scoreboard1` instead tagged each retransmission
//! with `snd_nxt` and a retransmission counter and declared it lost when data three
//! segments beyond that was (S)ACKed; RACK needs no such tags, covers
//! retransmissions and originals with one rule, and is what Linux has run by default
//! since 4.18, so a single lost retransmission recovers without an RTO as in Linux.
//! Reordering window: 0 once three segments are SACKed above a hole or in Recovery
//! (the `3 dupacks` rule, `tcp_rack_reo_wnd`), else min_rtt/4, and min_rtt/4 always
//! once reordering has been seen.
//!
//! **Limited transmit** (RFC 3042) is not a separate rule in Linux and not here:
//! SACKed segments (or duplicate ACKs without SACK) leave `in_flight`, which lets
//! new segments out in the Disorder state.
//!
//! **No handshake**: the connection starts established, sequence numbers start at 0,
//! the RTO is `initial_rto_ms` until the first RTT sample (Linux would have one from
//! the SYN exchange), and the peer's receive window is assumed to be
//! `rcvbuf_bytes` until the first ACK reports it.
//!
//! **Tail loss probes** (TLP, RFC 8985 §7) are on by default as in Linux
//! (`tcp_early_retrans` = 3) and switchable (`tlp`). One deviation: Linux arms the
//! probe timer *instead of* the RTO on an ACK and later derives the RTO from the
//! head's send time; here the RTO stays armed from the ACK, which differs by at most
//! the ACK's delay.
//!
//! **Spurious RTOs** are undone two ways, as in Linux: by timestamps (the ACK echoes
//! a send time older than the retransmission, `tcp_packet_delayed`) and by F-RTO
//! (RFC 5682, `tcp_process_loss`), which after an RTO sends new data instead of
//! retransmitting and undoes if never-retransmitted data is then acknowledged.
//!
//! **TSO autosizing**: a paced sender (fq pacing or BBR) lets `tcp_tso_autosize`
//! segments through the pacing gate at once, as Linux's GSO skbs (TCP always builds
//! them since 4.19), and the departure time advances per segment; `tso_autosize =
//! false` paces single segments.
//!
//! **TSO deferral** (`tso_defer`, on by default): with room for less than one
//! autosized skb, the sender waits for the ACK due within min(1 ms, srtt/2), as
//! Linux 6.18's `tcp_tso_should_defer` (`output.rs`); at 50 Mbit/s an unpaced CUBIC
//! flow then sends 4-segment skbs as the kernel does, not 2 per ACK.
//!
//! Left out (Linux has them): TCP small queues and
//! autocorking, SACK reneging recovery beyond clearing marks on RTO, DSACK-driven
//! growth of RACK's reordering window, MTU probing.

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::tcp::cc::{AnyCc, CaState, CcContext, SockState};
use crate::tcp::config::{AbcMode, FastRecovery, RecoveryMode, SndbufMode, TcpConfig};
use crate::tcp::pacing::{PacingMode, RandomPacer};
use crate::tcp::rate::RateSampler;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::segment::Segment;
use crate::time::{Nanos, NS_PER_MS};
use rand::SeedableRng;

mod abc;
mod fastretrans;
mod input;
mod output;
mod recovery;
#[cfg(test)]
mod tests;
mod timer;

// `tcp_ack` flags (net/ipv4/tcp_input.c).
const FLAG_DATA_ACKED: u32 = 0x04; // new data cumulatively acknowledged
const FLAG_RETRANS_DATA_ACKED: u32 = 0x08;
const FLAG_WIN_UPDATE: u32 = 0x02;
const FLAG_DATA_SACKED: u32 = 0x20;
const FLAG_ECE: u32 = 0x40;
const FLAG_LOST_RETRANS: u32 = 0x80;
const FLAG_SND_UNA_ADVANCED: u32 = 0x400;
const FLAG_DSACKING_ACK: u32 = 0x800;
const FLAG_SET_XMIT_TIMER: u32 = 0x1000;
const FLAG_ORIG_SACK_ACKED: u32 = 0x200;
const FLAG_ACKED: u32 = FLAG_DATA_ACKED;
/// The peer sends no data in the simulator, so `FLAG_DATA` never appears.
const FLAG_NOT_DUP: u32 = FLAG_WIN_UPDATE | FLAG_ACKED;
const FLAG_CA_ALERT: u32 = FLAG_DATA_SACKED | FLAG_ECE | FLAG_DSACKING_ACK;
const FLAG_FORWARD_PROGRESS: u32 = FLAG_ACKED | FLAG_DATA_SACKED;
/// 2.6-era `FLAG_ANY_PROGRESS`, for rate halving.
const FLAG_ANY_PROGRESS: u32 = FLAG_FORWARD_PROGRESS | FLAG_SND_UNA_ADVANCED;

/// `net.ipv4.tcp_reordering` = 3: initial reordering degree (the dupack threshold).
const TCP_REORDERING: u32 = 3;

/// The pacing state of one GSO skb while its segments are sent (see
/// `TcpSender::burst_pace`).
#[derive(Clone, Copy, Debug)]
struct BurstPace {
    /// `tcp_wstamp_ns` when the skb left: the later of the scheduled departure and now.
    base: Nanos,
    /// The skb's length so far at the pacing rate.
    len_ns: u64,
    /// How late (or idle) the skb left against its schedule.
    credit: u64,
}

/// The retransmission being sent as one skb (see `TcpSender::split_for_retransmit`):
/// when it started, how many more segments it may take, the sequence number that
/// continues it, and whether the segment there was made an skb boundary by it.
#[derive(Clone, Copy, Debug, Default)]
struct RtxChunk {
    at: Nanos,
    left: u32,
    next_seq: u64,
    split_set: bool,
}

/// RACK state (`tp->rack`).
#[derive(Clone, Copy, Debug, Default)]
struct Rack {
    /// Send time and end of the most recently sent segment delivered so far.
    mstamp: Nanos,
    end_seq: u64,
    /// RTT of the last delivered segment (ns).
    rtt: Nanos,
    /// A new delivery arrived since the last detection pass.
    advanced: bool,
}

/// Snapshot for traces (`tcp_info`-like). Times in ns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SenderState {
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt: Nanos,
    /// RFC 6298 RTTVAR (Linux `mdev`).
    pub rttvar: Nanos,
    pub rto: Nanos,
    pub in_flight: u32,
    pub packets_out: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans_out: u32,
    pub ca_state: CaState,
    /// `sk_pacing_rate` in bit/s (0 = not yet known / unlimited); computed whether or
    /// not pacing is enforced, as `tcp_info` reports it.
    pub pacing_rate_bps: u64,
    pub delivered: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
}

/// Counters for the flow summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SenderStats {
    /// Payload bytes transmitted, retransmissions included.
    pub bytes_sent: u64,
    pub retrans_bytes: u64,
    pub segs_sent: u64,
    pub retrans_segs: u64,
    /// Congestion episodes: entries into Recovery plus RTOs outside Recovery/Loss.
    pub loss_events: u64,
    /// RTO expirations (each backoff counts).
    pub timeouts: u64,
    /// Entries into fast recovery.
    pub fast_recoveries: u64,
    /// ECN-triggered window reductions (entries into CWR).
    pub ecn_reductions: u64,
    /// Reductions undone as spurious (DSACK or timestamps).
    pub undos: u64,
    /// Tail loss probes sent.
    pub tlp_probes: u64,
    /// Every RTT sample fed to the estimator, µs.
    pub rtt_samples_us: Vec<u32>,
}

pub struct TcpSender {
    mss: u32,
    init_cwnd: u32,
    sndbuf: u64,
    sndbuf_mode: SndbufMode,
    sack: bool,
    dsack: bool,
    nagle: bool,
    recovery: RecoveryMode,
    /// Window growth per ACK (RFC 3465 byte counting or not, `abc.rs`).
    abc: AbcMode,
    /// Linux 2.6's `tp->bytes_acked` for byte counting (0 unless `abc` is l1/l2).
    bytes_acked: u64,
    /// Reno's partial-ACK exit (`fast_recovery = "reno"`, without SACK only).
    reno_exit: bool,
    /// Reno: no fast retransmit until `snd_una` passes this (ns-2's `recover_`).
    reno_recover: u64,
    slow_start_after_idle: bool,
    pacing_cfg: PacingMode,
    /// The configuration asks for pacing and the CC does not pace by itself: fixed for
    /// the connection, so `pacing_active` (several calls per ACK) needs no CC dispatch.
    pacing_by_config: bool,
    /// Wei's randomized pacer (`pacing = "random"`).
    rpacer: RandomPacer,
    cc: AnyCc,
    sk: SockState,
    rng: Rng,
    rtt: RttEstimator,
    rate: RateSampler,
    sb: Scoreboard,
    now: Nanos,

    snd_una: u64,
    snd_nxt: u64,
    write_seq: u64,
    snd_wnd: u64,
    /// `high_seq`: snd_nxt when the current CA episode began.
    high_seq: u64,
    /// Total segments marked lost (`tp->lost`).
    lost_total: u64,

    undo_marker: Option<u64>,
    undo_retrans: i32,
    prior_ssthresh: u32,
    /// Time of the first retransmission of the episode (`retrans_stamp`).
    retrans_stamp: Option<Nanos>,
    prr_delivered: u32,
    prr_out: u32,
    rack: Rack,
    reordering: u32,
    reord_seen: bool,

    cwnd_usage_seq: u64,
    snd_cwnd_used: u32,
    snd_cwnd_stamp: Nanos,
    lsndtime: Nanos,
    /// The application's last write did not fit (`SOCK_NOSPACE`).
    nospace: bool,
    batch_sent: u32,

    /// `icsk_retransmits`: RTOs since the last forward progress.
    rto_retries: u32,
    rto_deadline: Option<Nanos>,
    reo_deadline: Option<Nanos>,
    persist_deadline: Option<Nanos>,
    persist_backoff: u32,
    probe_pending: bool,

    wstamp: Nanos,
    /// `TcpConfig::tso_autosize`.
    tso_autosize: bool,
    /// The GSO burst being sent: when it started and how many more segments it may
    /// take past the pacing gate at that same instant.
    burst_at: Nanos,
    burst_left: u32,
    /// The pacing of the GSO burst being sent, one skb to Linux: the departure time
    /// it started from, its length at the pacing rate so far, and the idle credit
    /// taken when it started (`tcp_update_skb_after_send` works per skb).
    burst_pace: Option<BurstPace>,
    /// `TcpConfig::tso_defer` (off without `tso_autosize`: every skb is one segment).
    tso_defer: bool,
    /// `max_window`: the largest window the peer has offered (bounds skb size).
    max_snd_wnd: u64,
    /// `tcp_xmit_size_goal` for `max_snd_wnd` (`output::size_goal`).
    size_goal: u64,
    /// The chunk `tcp_tso_should_defer` let go: when, how many segments are left, and
    /// whether its first segment is still to be sent.
    tso_chunk_at: Nanos,
    tso_chunk_left: u32,
    tso_chunk_fresh: bool,
    /// Without deferral, the chunk of new data being sent (when, segments left).
    skb_chunk: (Nanos, u32),
    /// The retransmission being sent as one skb.
    rtx_chunk: RtxChunk,
    /// `sk_wmem_queued` charged per skb beyond its payload (`TcpConfig::skb_overhead_bytes`).
    skb_overhead: u64,
    data_segs_out: u64,
    /// End of the last sub-MSS segment sent (`snd_sml`, Minshall's Nagle).
    snd_sml: u64,
    ecn_queue_cwr: bool,
    rcv_wnd_adv: u64,
    /// Echoed timestamp of the ACK being processed.
    last_tsecr: Nanos,
    /// RFC 7323 TS.Recent: the receiver's newest TSval, echoed as TSecr on data.
    ts_recent: Nanos,
    /// Send times of the first and last never-retransmitted segments newly SACKed by
    /// the ACK being processed.
    sackt: (Option<Nanos>, Option<Nanos>),
    /// Non-DSACK blocks of the previous SACK-carrying ACK (`recv_sack_cache`).
    sack_cache: Vec<(u64, u64)>,
    /// Spare buffer `sacktag` fills and swaps with `sack_cache`.
    sack_cache_next: Vec<(u64, u64)>,

    /// F-RTO (`net.ipv4.tcp_frto` = 2): configured, and active in this Loss episode.
    frto_cfg: bool,
    frto: bool,
    /// F-RTO step 2.b asked for new data before any further retransmission
    /// (`REXMIT_NEW` in `tcp_xmit_recovery`), for the ACK being processed.
    frto_rexmit_new: bool,
    /// Tail loss probe (RFC 8985 §7, Linux `tcp_early_retrans` = 3).
    tlp: bool,
    tlp_deadline: Option<Nanos>,
    /// `tlp_high_seq`: snd_nxt when the outstanding probe was sent.
    tlp_high_seq: Option<u64>,
    /// The outstanding probe was a retransmission (not new data).
    tlp_retrans: bool,
    /// A probe decided by the timer, emitted by the next `poll_transmit`.
    tlp_pending: bool,
    min_rto: Nanos,
    initial_rto: Nanos,
    /// New-data segments sent in the current transmit burst.
    batch_new: u32,

    stats: SenderStats,
}

impl TcpSender {
    /// Builds a sender from a validated configuration and a congestion control built
    /// from `cfg.cc` (see [`crate::tcp::cc::build`]). Calls the CC's `init`.
    pub fn new(cfg: &TcpConfig, cc: AnyCc, now: Nanos) -> Self {
        let mut sk = SockState::new(cfg.mss, cfg.init_cwnd);
        if cfg.init_ssthresh > 0 {
            // `tcp_init_metrics`: the route's ssthresh metric.
            sk.ssthresh = cfg.init_ssthresh;
        }
        sk.ecn_ok = cfg.ecn;
        sk.hz = cfg.kernel_hz;
        let mut s = TcpSender {
            mss: cfg.mss,
            init_cwnd: cfg.init_cwnd,
            sndbuf: cfg.sndbuf_bytes,
            sndbuf_mode: cfg.sndbuf_mode,
            sack: cfg.sack,
            dsack: cfg.dsack,
            nagle: cfg.nagle,
            recovery: cfg.recovery,
            abc: cfg.abc,
            bytes_acked: 0,
            reno_exit: cfg.fast_recovery == FastRecovery::Reno && !cfg.sack,
            reno_recover: 0,
            slow_start_after_idle: cfg.slow_start_after_idle,
            pacing_cfg: cfg.pacing,
            pacing_by_config: cfg.pacing != PacingMode::Off && !cc.has_cong_control(),
            rpacer: RandomPacer::default(),
            cc,
            sk,
            rng: Rng::seed_from_u64(0),
            rtt: RttEstimator::new(
                cfg.initial_rto_ms * NS_PER_MS,
                cfg.min_rto_ms * NS_PER_MS,
                cfg.max_rto_ms * NS_PER_MS,
            )
            .with_mode(cfg.rto)
            .with_jiffy(crate::time::jiffy_ns(cfg.kernel_hz)),
            rate: RateSampler::default(),
            sb: Scoreboard::default(),
            now,
            snd_una: 0,
            snd_nxt: 0,
            write_seq: 0,
            snd_wnd: cfg.rcvbuf_bytes,
            high_seq: 0,
            lost_total: 0,
            undo_marker: None,
            undo_retrans: 0,
            prior_ssthresh: 0,
            retrans_stamp: None,
            prr_delivered: 0,
            prr_out: 0,
            rack: Rack::default(),
            reordering: TCP_REORDERING,
            reord_seen: false,
            cwnd_usage_seq: 0,
            snd_cwnd_used: 0,
            snd_cwnd_stamp: now,
            lsndtime: now,
            nospace: false,
            batch_sent: 0,
            rto_retries: 0,
            rto_deadline: None,
            reo_deadline: None,
            persist_deadline: None,
            persist_backoff: 0,
            probe_pending: false,
            wstamp: now,
            tso_autosize: cfg.tso_autosize,
            burst_at: 0,
            burst_left: 0,
            burst_pace: None,
            tso_defer: cfg.tso_defer && cfg.tso_autosize,
            max_snd_wnd: cfg.rcvbuf_bytes,
            size_goal: output::size_goal(cfg.rcvbuf_bytes, cfg.mss),
            tso_chunk_at: 0,
            tso_chunk_left: 0,
            tso_chunk_fresh: false,
            skb_chunk: (0, 0),
            rtx_chunk: RtxChunk::default(),
            skb_overhead: cfg.skb_overhead_bytes,
            data_segs_out: 0,
            snd_sml: 0,
            ecn_queue_cwr: false,
            rcv_wnd_adv: cfg.rcvbuf_bytes,
            last_tsecr: 0,
            ts_recent: 0,
            sackt: (None, None),
            sack_cache: Vec::new(),
            sack_cache_next: Vec::new(),
            frto_cfg: cfg.frto,
            frto: false,
            frto_rexmit_new: false,
            tlp: cfg.tlp,
            tlp_deadline: None,
            tlp_high_seq: None,
            tlp_retrans: false,
            tlp_pending: false,
            min_rto: cfg.min_rto_ms * NS_PER_MS,
            initial_rto: cfg.initial_rto_ms * NS_PER_MS,
            batch_new: 0,
            stats: SenderStats::default(),
        };
        if cfg.syn_rtt_us > 0 {
            s.handshake_sample(now, cfg.syn_rtt_us);
        }
        s.with_cc(|cc, cx| cc.ops().init(cx));
        s
    }

    /// The SYN exchange's RTT sample (`TcpConfig::syn_rtt_us`, `handshake_rtt`): srtt,
    /// rttvar, RTO and the min-RTT filter, as `tcp_ack_update_rtt` on the SYN-ACK. Not
    /// a sample of the flow's data (`stats.rtt_samples_us`), and the CC never sees it.
    pub fn handshake_sample(&mut self, now: Nanos, rtt_us: u64) {
        self.rtt.on_sample(now, rtt_us.max(1), rtt_us.max(1), 0, 0);
    }

    /// Builds the CC from `cfg.cc` and the sender in one step.
    pub fn from_config(cfg: &TcpConfig, now: Nanos, field: &str) -> Result<Self, ConfigError> {
        cfg.validate(field)?;
        let cc = crate::tcp::cc::build(&cfg.cc, &format!("{field}.cc"))?;
        Ok(TcpSender::new(cfg, cc, now))
    }

    /// Reseeds the random stream handed to the congestion control (derive it from the
    /// run seed and the flow's label, see [`crate::rng`]).
    pub fn set_rng(&mut self, rng: Rng) {
        self.rng = rng;
    }

    /// The application offers `bytes`; returns how many the socket takes (the rest
    /// stays with the application). Before queueing, Linux checks whether the
    /// connection was idle longer than an RTO and if so restarts cwnd
    /// (`tcp_slow_start_after_idle_check`, RFC 2861/5681 §4.1).
    ///
    /// The send buffer is Linux's, a soft limit (`tcp_sendmsg_locked`):
    /// - `sk_stream_memory_free` (queued < `sk_sndbuf`) is checked only when a write
    ///   needs a new skb. Data copied into the tail skb is not checked, and while the
    ///   tail is being transmitted (`tcp_push_one` sends one TSO chunk of it and leaves
    ///   the rest, which has room again) a writer keeps going past the limit. So what
    ///   the connection can send at once, its window's room, passes a full buffer.
    ///   Traced on the kernel (bpftrace, `tcp:tcp_sendmsg_locked`): a 64 KiB writer's
    ///   queue reached 13 MB against a 4 MiB `sk_sndbuf` at 100 Mbit/s, 100 ms.
    /// - A write that meets the check with a full buffer fails (`SOCK_NOSPACE`), and
    ///   the writer, blocking or polling, resumes only when the socket is writable
    ///   again (`sk_stream_write_space`: free space at least half the queued bytes,
    ///   i.e. queued <= 2/3 of `sk_sndbuf`).
    pub fn write(&mut self, now: Nanos, bytes: u64) -> u64 {
        self.now = now;
        if self.slow_start_after_idle && self.sb.packets_out() == 0 && !self.cc.has_cong_control() {
            let delta = now.saturating_sub(self.lsndtime);
            if delta > self.rtt.rto() && self.stats.segs_sent > 0 {
                self.cwnd_restart(delta);
            }
        }
        let accepted = match self.sndbuf_mode {
            SndbufMode::Window => bytes.min(self.sndbuf.saturating_sub(self.write_seq - self.snd_una)),
            SndbufMode::Linux => {
                // A refused writer waits for the queue to fall to 2/3 of the buffer; the
                // data alone, a lower bound of what is queued, settles it on most ACKs
                // without counting skbs.
                let above_two_thirds = |queued: u64| queued.saturating_mul(3) > self.sndbuf.saturating_mul(2);
                if self.nospace && above_two_thirds(self.write_seq - self.snd_una) {
                    return 0;
                }
                let used = self.wmem_queued();
                if self.nospace && above_two_thirds(used) {
                    return 0;
                }
                let fits = self.sndbuf.saturating_sub(used);
                let passes = self.sendable_now().saturating_sub(self.write_seq - self.snd_nxt);
                bytes.min(fits.max(passes))
            }
        };
        self.write_seq += accepted;
        self.nospace = accepted < bytes;
        accepted
    }

    /// Bytes the connection could put on the wire now: the room in cwnd and in the
    /// peer's window; one TSO chunk at most when paced (`tcp_push_one` sends one skb,
    /// and the pacing timer holds the next), none while the pacing timer runs.
    fn sendable_now(&self) -> u64 {
        let mss = self.mss as u64;
        let cwnd_room = self.sk.cwnd.saturating_sub(self.sb.in_flight()) as u64 * mss;
        let wnd_room = (self.snd_una + self.snd_wnd).saturating_sub(self.snd_nxt);
        let room = cwnd_room.min(wnd_room);
        if !self.pacing_active() {
            return room;
        }
        if self.now < self.wstamp {
            return 0;
        }
        room.min(self.tso_segs() as u64 * mss)
    }

    fn sync_sk(&mut self) {
        let sk = &mut self.sk;
        sk.packets_out = self.sb.packets_out();
        sk.in_flight = self.sb.in_flight();
        sk.delivered = self.rate.delivered;
        sk.delivered_ce = self.rate.delivered_ce;
        sk.lost = self.lost_total;
        sk.app_limited = self.rate.app_limited;
        sk.snd_una = self.snd_una;
        sk.snd_nxt = self.snd_nxt;
        sk.srtt_us = (self.rtt.srtt_us8() >> 3) as u32;
        sk.min_rtt_us = self.rtt.min_rtt_us();
        sk.lsndtime = self.lsndtime;
    }

    fn with_cc<R>(&mut self, f: impl FnOnce(&mut AnyCc, &mut CcContext<'_>) -> R) -> R {
        self.sync_sk();
        let app_limited = self.sk.app_limited;
        let mut cx = CcContext { now: self.now, sk: &mut self.sk, rng: &mut self.rng };
        let r = f(&mut self.cc, &mut cx);
        self.sk.cwnd = self.sk.cwnd.max(1);
        // BBR's PROBE_RTT marks the socket application-limited (`tp->app_limited = ...`
        // in `bbr_update_min_rtt`) so that its low-rate samples do not enter the
        // bandwidth filter: a CC's write to `app_limited` reaches the rate sampler.
        if self.sk.app_limited != app_limited {
            self.rate.app_limited = self.sk.app_limited;
        }
        r
    }

    pub fn state(&self) -> SenderState {
        SenderState {
            cwnd: self.sk.cwnd,
            ssthresh: self.sk.ssthresh,
            srtt: self.rtt.srtt(),
            rttvar: self.rtt.mdev(),
            rto: self.rtt.rto(),
            in_flight: self.sb.in_flight(),
            packets_out: self.sb.packets_out(),
            sacked: self.sb.sacked_out,
            lost: self.sb.lost_out,
            retrans_out: self.sb.retrans_out,
            ca_state: self.sk.ca_state,
            pacing_rate_bps: if self.sk.pacing_rate == u64::MAX { 0 } else { self.sk.pacing_rate.saturating_mul(8) },
            delivered: self.rate.delivered,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
        }
    }

    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }

    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Sequence number after the last byte the application wrote (its byte offset).
    pub fn write_seq(&self) -> u64 {
        self.write_seq
    }

    /// Bytes written and not yet acknowledged (sent or not).
    pub fn backlog_bytes(&self) -> u64 {
        self.write_seq - self.snd_una
    }

    /// Bytes written and not yet sent.
    pub fn unsent_bytes(&self) -> u64 {
        self.write_seq - self.snd_nxt
    }

    /// Free space in the send buffer.
    pub fn sndbuf_space(&self) -> u64 {
        self.sndbuf.saturating_sub(self.wmem_queued())
    }

    /// What the send buffer holds as Linux counts it (`sk_wmem_queued`): the bytes
    /// written and not acknowledged plus each skb's overhead, for the skbs of the
    /// retransmission queue ([`Scoreboard::skbs`]) and the unsent data's skbs of
    /// `tcp_xmit_size_goal` bytes. 832 B per skb, measured; on the kernel a CUBIC
    /// flow's queue is 1.045-1.06 x its data in slow start (10-19-segment chunks) and
    /// 1.065-1.08 x as recovery starts (100 Mbit/s, 200 ms), 1.07-1.12 x in congestion
    /// avoidance's smaller chunks, so a 4 MiB buffer holds 5-10 % less data than 4 MiB.
    pub fn wmem_queued(&self) -> u64 {
        let data = self.write_seq - self.snd_una;
        if self.skb_overhead == 0 {
            return data;
        }
        let unsent = self.write_seq - self.snd_nxt;
        let unsent_skbs = if unsent == 0 { 0 } else { unsent.div_ceil(self.size_goal) };
        data + (self.sb.skbs() as u64 + unsent_skbs) * self.skb_overhead
    }

    /// The RTO fired and the lost data is not yet recovered (CA state Loss).
    pub fn in_rto(&self) -> bool {
        self.sk.ca_state == CaState::Loss
    }

    /// Whether a data segment leaves with ECT set (RFC 3168 §6.1.5: not on
    /// retransmissions, unless the CC needs ECN everywhere, like DCTCP).
    pub fn ect(&self, seg: &Segment) -> bool {
        self.sk.ecn_ok && seg.len > 0 && (!seg.retrans || self.cc.ops_ref().needs_ecn())
    }

    pub fn cc(&self) -> &AnyCc {
        &self.cc
    }

    /// RACK's current reordering degree estimate in segments.
    pub fn reordering(&self) -> u32 {
        self.reordering
    }

    /// Delivery rate of the last kept rate sample, bit/s.
    pub fn delivery_rate_bps(&self) -> u64 {
        self.rate.rate_bps(self.mss)
    }
}
