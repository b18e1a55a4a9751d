//! The TCP sender, sans-IO: time arrives as `now`, segments go out of
//! [`TcpSender::poll_transmit`] and ACKs come in through [`TcpSender::on_ack`]. The
//! simulator (or a test) owns the clock, the links and the timers; it asks
//! [`TcpSender::next_timer`] when to call [`TcpSender::on_timer`].
//!
//! It behaves like Linux (net/ipv4/tcp_input.c, tcp_output.c, tcp_timer.c,
//! tcp_recovery.c, tcp_rate.c), not like a textbook. Function names in comments are
//! the Linux functions each piece mirrors. Where Linux is:
//!
//! | behaviour | here | Linux |
//! |---|---|---|
//! | ACK processing order | [`TcpSender::on_ack`] | `tcp_ack` |
//! | SACK tagging, DSACK | `sacktag` | `tcp_sacktag_write_queue`, `tcp_check_dsack` |
//! | cumulative ACK, RTT samples (Karn) | `clean_rtx_queue` | `tcp_clean_rtx_queue`, `tcp_ack_update_rtt` |
//! | CA state machine | `fastretrans_alert` | `tcp_fastretrans_alert` |
//! | loss detection with SACK | `rack_*` | `tcp_rack_mark_lost`, `tcp_rack_detect_loss` (RFC 8985) |
//! | loss detection without SACK | `newreno_mark_lost` | `tcp_newreno_mark_lost` (RFC 6582) |
//! | PRR | `cwnd_reduction` | `tcp_cwnd_reduction` (RFC 6937, SSRB variant) |
//! | rate halving (2.6) | `cwnd_down` | 2.6 `tcp_cwnd_down` |
//! | undo | `try_undo_*`, `undo_cwnd_reduction` | same names |
//! | RTO | `retransmit_timer`, `enter_loss` | `tcp_retransmit_timer`, `tcp_enter_loss` |
//! | tail loss probe | `schedule_loss_probe`, `send_loss_probe`, `process_tlp_ack` | same names, `tcp_` prefix |
//! | cwnd validation | `cwnd_validate` | `tcp_cwnd_validate`, `tcp_cwnd_application_limited` |
//! | slow start after idle | `cwnd_restart` | `tcp_slow_start_after_idle_check`, `tcp_cwnd_restart` |
//! | Nagle | `nagle_holds` | `tcp_nagle_check` with Minshall's variant |
//! | pacing | `update_pacing_rate`, `after_send_pacing` | `tcp_update_pacing_rate`, `tcp_update_skb_after_send`; `pacing = "random"`: [`crate::tcp::pacing`] |
//! | ECN | `enter_cwr`, CWR flag | `tcp_enter_cwr`, `tcp_ecn_queue_cwr`, `tcp_ecn_send` |
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
//! Left out (Linux has them): TCP small queues and
//! autocorking, SACK reneging recovery beyond clearing marks on RTO, DSACK-driven
//! growth of RACK's reordering window, MTU probing.

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::tcp::cc::{
    AckFlags, AckSample, AnyCc, CaEvent, CaState, CcContext, RateSample, SockState, INFINITE_SSTHRESH,
};
use crate::tcp::config::{FastRecovery, RecoveryMode, TcpConfig};
use crate::tcp::pacing::{PacingMode, RandomPacer};
use crate::tcp::rate::RateSampler;
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::{Scoreboard, SegFlags, TxSeg};
use crate::tcp::segment::Segment;
use crate::time::{Nanos, NS_PER_MS, NS_PER_SEC, NS_PER_US};
use rand::SeedableRng;

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
/// `net.ipv4.tcp_max_reordering` = 300.
const TCP_MAX_REORDERING: u32 = 300;
/// Kernel timer tick (HZ = 1000) and `TCP_TIMEOUT_MIN` (2 ticks) for the RACK timer.
const JIFFY: Nanos = NS_PER_MS;
const TCP_TIMEOUT_MIN: Nanos = 2 * JIFFY;
/// Linux paces only after the first 10 data segments (`tcp_update_skb_after_send`).
const PACING_FREE_SEGS: u64 = 10;
/// `sysctl_tcp_pacing_ss_ratio` / `_ca_ratio`, percent.
const PACING_SS_RATIO: u64 = 200;
const PACING_CA_RATIO: u64 = 120;

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
    sack: bool,
    dsack: bool,
    nagle: bool,
    recovery: RecoveryMode,
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
    data_segs_out: u64,
    /// End of the last sub-MSS segment sent (`snd_sml`, Minshall's Nagle).
    snd_sml: u64,
    ecn_queue_cwr: bool,
    rcv_wnd_adv: u64,
    /// Echoed timestamp of the ACK being processed.
    last_tsecr: Nanos,
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
        sk.ecn_ok = cfg.ecn;
        let mut s = TcpSender {
            mss: cfg.mss,
            init_cwnd: cfg.init_cwnd,
            sndbuf: cfg.sndbuf_bytes,
            sack: cfg.sack,
            dsack: cfg.dsack,
            nagle: cfg.nagle,
            recovery: cfg.recovery,
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
            .with_mode(cfg.rto),
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
            data_segs_out: 0,
            snd_sml: 0,
            ecn_queue_cwr: false,
            rcv_wnd_adv: cfg.rcvbuf_bytes,
            last_tsecr: 0,
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
        s.with_cc(|cc, cx| cc.ops().init(cx));
        s
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

    // ------------------------------------------------------------------ application

    /// The application offers `bytes`; returns how many fit in the send buffer (the
    /// rest stays with the application). Before queueing, Linux checks whether the
    /// connection was idle longer than an RTO and if so restarts cwnd
    /// (`tcp_slow_start_after_idle_check`, RFC 2861/5681 §4.1).
    pub fn write(&mut self, now: Nanos, bytes: u64) -> u64 {
        self.now = now;
        if self.slow_start_after_idle && self.sb.packets_out() == 0 && !self.cc.has_cong_control() {
            let delta = now.saturating_sub(self.lsndtime);
            if delta > self.rtt.rto() && self.stats.segs_sent > 0 {
                self.cwnd_restart(delta);
            }
        }
        let used = self.write_seq - self.snd_una;
        let accepted = bytes.min(self.sndbuf.saturating_sub(used));
        self.write_seq += accepted;
        self.nospace = accepted < bytes;
        accepted
    }

    /// `tcp_cwnd_restart`: halve cwnd for every RTO of idleness, down to the initial
    /// window; ssthresh keeps at least 3/4 of the old window (`tcp_current_ssthresh`).
    fn cwnd_restart(&mut self, delta: Nanos) {
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

    // ------------------------------------------------------------------ transmit

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
        Some(self.send_new(len))
    }

    /// `tcp_nagle_check` with Minshall's variant, as Linux: a sub-MSS segment waits
    /// only while an earlier *sub-MSS* segment is unacknowledged (textbook Nagle waits
    /// for any unacknowledged data).
    fn nagle_holds(&self) -> bool {
        self.nagle && self.sb.packets_out() > 0 && self.snd_sml > self.snd_una && self.snd_sml <= self.snd_nxt
    }

    fn pacing_active(&self) -> bool {
        self.sk.pacing_needed || self.pacing_by_config
    }

    fn make_segment(&self, seq: u64, len: u32, retrans: bool, cwr: bool) -> Segment {
        Segment { seq, len, ack: 0, cwr, tsval: self.now, rwnd: self.rcv_wnd_adv, retrans, ..Default::default() }
    }

    fn send_new(&mut self, len: u32) -> Segment {
        let now = self.now;
        let prior_packets = self.sb.packets_out();
        self.event_data_sent();
        let rate = self.rate.on_send(now, prior_packets);
        let seq = self.snd_nxt;
        self.sb.push(TxSeg {
            seq,
            len,
            flags: SegFlags::default(),
            ever_retrans: false,
            tx_time: now,
            rate,
            ts_pos: 0,
        });
        self.snd_nxt += len as u64;
        self.batch_new += 1;
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

    /// `tcp_retransmit_skb` as called from `tcp_xmit_retransmit_queue`.
    fn retransmit(&mut self, i: usize) -> Segment {
        let now = self.now;
        self.event_data_sent();
        let rate = self.rate.on_send(now, self.sb.packets_out());
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
    fn event_data_sent(&mut self) {
        if self.sb.in_flight() == 0 {
            self.with_cc(|cc, cx| cc.ops().cwnd_event(cx, CaEvent::TxStart));
        }
        self.lsndtime = self.now;
    }

    fn after_send(&mut self, len: u32) {
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
        if self.burst_left > 0 && self.burst_at == self.now {
            self.burst_left -= 1;
        } else {
            self.burst_at = self.now;
            self.burst_left = self.tso_segs() - 1;
        }
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(self.now);
        let rate = self.sk.pacing_rate;
        if rate != u64::MAX && rate > 0 && self.data_segs_out >= PACING_FREE_SEGS {
            let mut len_ns = len as u64 * NS_PER_SEC / rate;
            let credit = self.wstamp - prior;
            len_ns -= (len_ns / 2).min(credit);
            self.wstamp += len_ns;
        }
    }

    /// `tcp_tso_autosize` (Linux 5.18+): about 1 ms of data at the pacing rate
    /// (`sk_pacing_shift` = 10), plus 64 KB >> (min RTT / 512 µs) on short paths
    /// (`tcp_tso_rtt_log` = 9), at most 64 KB (`sk_gso_max_size`), at least the CC's
    /// `min_tso_segs`. 1 when `tso_autosize` is off.
    fn tso_segs(&self) -> u32 {
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
        let is_cwnd_limited = self.sb.in_flight() >= self.sk.cwnd;
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

    // ------------------------------------------------------------------ timers

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

    fn rearm_rto(&mut self) {
        if self.sb.packets_out() == 0 {
            self.rto_deadline = None;
        } else {
            self.rearm_rto_always();
        }
    }

    fn rearm_rto_always(&mut self) {
        self.rto_deadline = Some(self.now + self.rtt.rto());
    }

    fn persist_timeout(&self) -> Nanos {
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

    /// `tcp_schedule_loss_probe`: probe after 2*srtt (plus a delayed-ACK allowance
    /// of `rto_min` when a single segment is out), but never later than the RTO.
    fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        if !self.tlp
            || !self.sack
            || self.sb.packets_out() == 0
            || !matches!(self.sk.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let mut timeout = if self.rtt.has_sample() {
            let two_srtt = (self.rtt.srtt() * 2).div_ceil(JIFFY) * JIFFY;
            two_srtt + if self.sb.packets_out() == 1 { self.min_rto } else { TCP_TIMEOUT_MIN }
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
    fn send_loss_probe(&mut self) -> Option<Segment> {
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
    fn process_tlp_ack(&mut self, ack: u64, flag: u32) {
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

    /// `tcp_enter_loss`: everything not SACKed (and not sent within the last RTT) is
    /// lost; cwnd = in-flight + 1, so go-back-N retransmission starts with one segment
    /// and slow start rebuilds the window.
    fn enter_loss(&mut self) {
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

    // ------------------------------------------------------------------ ACK input

    /// Processes one ACK from the receiver (`tcp_ack`).
    pub fn on_ack(&mut self, now: Nanos, seg: &Segment) {
        self.now = now;
        self.last_tsecr = seg.tsecr;
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
        }
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
                    if !s.ever_retrans {
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
                    self.rack_advance(s.ever_retrans, s.end_seq(), s.tx_time);
                    self.rate.on_delivered(rs, self.sb.seg_mut_rate(i), s.tx_time, s.end_seq(), s.ever_retrans, true);
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
            if self.sb.get(i).ever_retrans && self.undo_retrans > 0 {
                self.undo_retrans -= 1;
            }
            i += 1;
        }
    }

    /// `tcp_check_sack_reordering`: a never-retransmitted segment below the highest
    /// SACK was delivered, so the network reorders by at least that distance.
    fn check_sack_reordering(&mut self, low_seq: u64, fack: u64) {
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
            if s.ever_retrans {
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
                if !(s.ever_retrans && seg.tsecr != 0 && seg.tsecr < s.tx_time) {
                    self.rack_advance(s.ever_retrans, s.end_seq(), s.tx_time);
                }
            }
            pkts_acked += 1;
            let (tx, end, rt) = (s.tx_time, s.end_seq(), s.ever_retrans);
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
    fn add_reno_sack(&mut self, num_dupack: u32, ece: bool) {
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

    // ------------------------------------------------------------------ CA state machine

    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.sk.ca_state, CaState::Cwr | CaState::Recovery)
    }

    fn set_state(&mut self, new: CaState) {
        if new == self.sk.ca_state {
            return;
        }
        self.with_cc(|cc, cx| cc.ops().set_state(cx, new));
        self.sk.ca_state = new;
    }

    fn any_retrans_done(&self) -> bool {
        self.sb.retrans_out > 0 || self.sb.head().is_some_and(|h| h.ever_retrans)
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

    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.tlp_high_seq = None;
        self.sk.cwnd_cnt = 0;
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

    fn end_cwnd_reduction(&mut self) {
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

    fn try_keep_open(&mut self) {
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

    fn enter_recovery(&mut self, ece_ack: bool) {
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

    /// `tcp_newreno_mark_lost` (RFC 6582): the head is lost after `reordering`
    /// dupACKs, and in Recovery every partial ACK exposes the next hole, one per RTT.
    fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
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

    /// `tcp_fastretrans_alert`: the CA state machine, run on every dubious ACK.
    fn fastretrans_alert(&mut self, prior_snd_una: u64, num_dupack: u32, flag: &mut u32) {
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

    // ------------------------------------------------------------------ RACK

    /// `tcp_rack_advance`: remember the most recently sent delivered segment.
    fn rack_advance(&mut self, ever_retrans: bool, end_seq: u64, tx_time: Nanos) {
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
    fn rack_skb_timeout(&self, i: usize, reo_wnd: Nanos) -> i128 {
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
    fn rack_mark_lost(&mut self) {
        if !self.rack.advanced {
            return;
        }
        self.rack.advanced = false;
        let timeout = self.rack_detect_loss();
        if timeout > 0 {
            self.reo_deadline = Some(self.now + timeout.div_ceil(JIFFY) * JIFFY + TCP_TIMEOUT_MIN);
        }
    }

    /// `tcp_rack_reo_timeout`: the reordering window expired.
    fn rack_reo_timeout(&mut self) {
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
            self.reo_deadline = Some(self.now + timeout.div_ceil(JIFFY) * JIFFY + TCP_TIMEOUT_MIN);
        }
        if self.rto_deadline.is_none() {
            self.rearm_rto();
        }
    }

    // ------------------------------------------------------------------ window

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
            self.with_cc(|cc, cx| cc.cong_avoid(cx, delivered));
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
    fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, flag: u32) {
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

    // ------------------------------------------------------------------ CC plumbing

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

    // ------------------------------------------------------------------ observation

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
        self.sndbuf.saturating_sub(self.backlog_bytes())
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
