//! Congestion control, split the way Linux splits it (`struct tcp_congestion_ops`,
//! include/net/tcp.h; `net/ipv4/tcp_cong.c`).
//!
//! The socket owns cwnd (in segments, with `snd_cwnd_cnt` credit), ssthresh, the CA
//! state, `prior_cwnd`, in-flight accounting and the RTT estimator: all of it lives in
//! [`SockState`]. An algorithm owns only its private state (Linux's `icsk_ca_priv`)
//! and reads or writes the socket through a [`CcContext`] passed to every hook. This
//! is what lets the shared helpers ([`SockState::slow_start`],
//! [`SockState::cong_avoid_ai`], [`SockState::reno_undo_cwnd`]) be reused exactly as
//! CUBIC, HighSpeed, ... reuse `tcp_slow_start`/`tcp_cong_avoid_ai` in Linux.
//!
//! Hooks, when the sender calls them, and their Linux counterparts:
//! - [`CongestionOps::init`]: once, when the sender is built (`tcp_init_congestion_control`).
//! - [`CongestionOps::ssthresh`]: on entering Recovery, CWR or Loss; returns the new
//!   ssthresh, the socket stores it.
//! - [`CongAvoid::cong_avoid`] *or* [`CongControl::cong_control`]: once per ACK
//!   (`tcp_cong_control`). A `cong_avoid` algorithm is only called outside CWR/Recovery
//!   and only when the ACK acknowledged new data; the socket does PRR itself. A
//!   `cong_control` algorithm (BBR) is called on every ACK with a delivery-rate sample
//!   and sets cwnd and `pacing_rate` itself; the socket then neither runs PRR nor
//!   computes a pacing rate.
//! - [`CongestionOps::undo_cwnd`]: when a reduction is found spurious (DSACK, timestamps).
//! - [`CongestionOps::set_state`]: *before* the CA state changes (`tcp_set_ca_state`).
//! - [`CongestionOps::cwnd_event`]: TX_START, CWND_RESTART, COMPLETE_CWR, LOSS.
//! - [`CongestionOps::in_ack_event`]: each ACK, before SACK/ACK processing of the
//!   retransmission queue (DCTCP's ECE accounting).
//! - [`CongestionOps::pkts_acked`]: each ACK that (S)ACKed data, with the RTT sample
//!   (Vegas, FAST, HyStart).
//!
//! Units follow Linux where an algorithm's integer arithmetic depends on them: cwnd in
//! segments, RTTs in microseconds, rates in bytes per second.

pub mod aimd;
pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod compound;
pub mod copa;
pub mod cubic;
pub mod dctcp;
pub mod fast;
pub mod highspeed;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod reno;
pub mod scalable;
#[cfg(test)]
pub(crate) mod testkit;
pub mod vegas;
pub mod vivace;
pub mod westwood;

use crate::error::ConfigError;
use crate::rng::Rng;
use crate::tcp::config::CcConfig;
use crate::time::Nanos;
use std::collections::BTreeMap;

/// Linux `TCP_INFINITE_SSTHRESH`.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Congestion-avoidance state (`enum tcp_ca_state`), ordered as in Linux so that
/// `state >= CaState::Recovery` reads like the kernel's comparisons.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum CaState {
    #[default]
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

impl CaState {
    pub fn as_str(self) -> &'static str {
        match self {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Cwr => "cwr",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        }
    }
}

/// `enum tcp_ca_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// First transmission when nothing is in flight.
    TxStart,
    /// Congestion window restarted after idle (slow start after idle).
    CwndRestart,
    /// End of a CWR or Recovery episode.
    CompleteCwr,
    /// RTO fired, entering Loss.
    Loss,
    /// Receiver-side ECN events (DCTCP's receiver); the sender never raises them.
    EcnNoCe,
    EcnIsCe,
}

/// `CA_ACK_*` flags passed to `in_ack_event`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AckFlags(pub u8);

impl AckFlags {
    /// Not the header-prediction fast path (SACK, dupack, ECE, window change...).
    pub const SLOWPATH: u8 = 1 << 0;
    /// The ACK updated the send window.
    pub const WIN_UPDATE: u8 = 1 << 1;
    /// The ACK carried ECN-Echo.
    pub const ECE: u8 = 1 << 2;

    pub fn has(self, bit: u8) -> bool {
        self.0 & bit != 0
    }
}

/// Per-ACK sample for `pkts_acked` (`struct ack_sample`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct AckSample {
    /// Segments newly cumulatively acknowledged.
    pub pkts_acked: u32,
    /// RTT of the most recently sent segment this ACK (S)ACKed, µs; -1 if none
    /// (Karn's rule excluded every candidate).
    pub rtt_us: i64,
    /// Bytes in flight when the acknowledged segment was sent, as recent Linux computes
    /// it: `mss * (delivered - rs.prior_delivered)`.
    pub in_flight: u32,
}

/// Delivery-rate sample (`struct rate_sample`, net/ipv4/tcp_rate.c).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct RateSample {
    /// `delivered_mstamp` of the sampled segment at its send time; `None` = no sample.
    pub prior_mstamp: Option<Nanos>,
    /// Socket `delivered` when the sampled segment was sent.
    pub prior_delivered: u64,
    /// Low 32 bits of the socket's `delivered_ce` then (differences are modulo 2^32).
    pub prior_delivered_ce: u64,
    /// Segments delivered over the interval; -1 = invalid.
    pub delivered: i64,
    pub delivered_ce: i64,
    /// max(send interval, ACK interval), µs; -1 = invalid.
    pub interval_us: i64,
    pub snd_interval_us: i64,
    pub rcv_interval_us: i64,
    /// RTT of the last (S)ACKed segment, µs, -1 if none.
    pub rtt_us: i64,
    /// Segments newly marked lost by this ACK.
    pub losses: u32,
    /// Segments newly (S)ACKed by this ACK.
    pub acked_sacked: u32,
    /// In-flight segments before this ACK.
    pub prior_in_flight: u32,
    /// `end_seq` of the sampled segment (tie-break for send time).
    pub last_end_seq: u64,
    /// The sample was taken while the sender was application-limited.
    pub is_app_limited: bool,
    /// The sampled segment was a retransmission.
    pub is_retrans: bool,
    /// The ACK may have been delayed by the receiver.
    pub is_ack_delayed: bool,
}

/// The socket state congestion control sees and edits (the parts of `struct tcp_sock`
/// a `tcp_congestion_ops` module touches). The sender refreshes the read-only fields
/// before every hook; the writable ones are cwnd, `cwnd_cnt`, ssthresh, `cwnd_clamp`
/// and `pacing_rate`/`pacing_needed`.
#[derive(Clone, Debug, PartialEq)]
pub struct SockState {
    /// `snd_cwnd`, segments.
    pub cwnd: u32,
    /// `snd_cwnd_cnt`: additive-increase credit.
    pub cwnd_cnt: u32,
    /// `snd_ssthresh`, segments.
    pub ssthresh: u32,
    /// `snd_cwnd_clamp`.
    pub cwnd_clamp: u32,
    /// cwnd before the last reduction (set by the socket, read by `undo_cwnd`).
    pub prior_cwnd: u32,
    pub ca_state: CaState,
    /// `mss_cache`, bytes.
    pub mss: u32,
    /// Smoothed RTT, µs, unscaled (Linux keeps 8x; divide its `srtt_us >> 3` here), 0
    /// before the first sample.
    pub srtt_us: u32,
    /// Windowed minimum RTT (`tcp_min_rtt`), µs; `u32::MAX` before the first sample.
    pub min_rtt_us: u32,
    /// `packets_out`: segments sent and not cumulatively ACKed.
    pub packets_out: u32,
    /// `tcp_packets_in_flight()`.
    pub in_flight: u32,
    /// `max_packets_out` in the current window (for `tcp_is_cwnd_limited`).
    pub max_packets_out: u32,
    /// `is_cwnd_limited`: the last transmit attempt was stopped by cwnd.
    pub is_cwnd_limited: bool,
    /// Segments delivered (SACKed or ACKed) since the start.
    pub delivered: u64,
    /// Of those, delivered with ECE set on the ACK (DCTCP).
    pub delivered_ce: u64,
    /// Segments marked lost since the start (`tp->lost`).
    pub lost: u64,
    /// `tp->app_limited`: nonzero while the delivery-rate sampler is in an
    /// application-limited phase (the `delivered` value that ends it).
    pub app_limited: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Time of the last data transmission (`lsndtime`; CUBIC shifts its epoch by
    /// the idle time on TX_START, which is raised before this is updated).
    pub lsndtime: Nanos,
    /// ECN negotiated.
    pub ecn_ok: bool,
    /// `sk_pacing_rate`, bytes per second; `u64::MAX` = unlimited.
    pub pacing_rate: u64,
    /// The CC asks for pacing (BBR sets `sk_pacing_status = SK_PACING_NEEDED`).
    pub pacing_needed: bool,
    /// The kernel's tick rate (`CONFIG_HZ`) for jiffies-based CC state (CUBIC, BIC);
    /// the socket sets it from `TcpConfig::kernel_hz`, the unit-test kit keeps 1000.
    pub hz: u32,
}

impl SockState {
    pub fn new(mss: u32, init_cwnd: u32) -> Self {
        SockState {
            cwnd: init_cwnd,
            cwnd_cnt: 0,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_clamp: u32::MAX,
            prior_cwnd: 0,
            ca_state: CaState::Open,
            mss,
            srtt_us: 0,
            min_rtt_us: u32::MAX,
            packets_out: 0,
            in_flight: 0,
            max_packets_out: 0,
            is_cwnd_limited: false,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            app_limited: 0,
            snd_una: 0,
            snd_nxt: 0,
            lsndtime: 0,
            ecn_ok: false,
            pacing_rate: u64::MAX,
            pacing_needed: false,
            hz: 1000,
        }
    }

    /// `tcp_in_slow_start`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_is_cwnd_limited`: grow cwnd only when the sender used it. In slow start,
    /// Linux also allows growth while cwnd < 2 * max_packets_out, so that a sender
    /// that filled half its window still doubles it each RTT.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        if self.in_slow_start() {
            return self.cwnd < 2 * self.max_packets_out;
        }
        false
    }

    /// `tcp_slow_start`: grow cwnd by one per ACKed segment, but not past ssthresh;
    /// returns the ACKed segments left over after reaching ssthresh, for congestion
    /// avoidance to use (RFC 5681 with RFC 3465 byte counting, L = unlimited as Linux
    /// counts `acked` in segments of the stretch ACK).
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let used = cwnd.saturating_sub(self.cwnd);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        acked - used.min(acked)
    }

    /// `tcp_cong_avoid_ai`: additive increase of 1 segment per `w` ACKed segments,
    /// with the credit kept in `cwnd_cnt`. The first test catches up when `w` shrank
    /// since the credit was accumulated (Linux's comment: "If credits accumulated at a
    /// higher w, apply them gently now").
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd = self.cwnd.saturating_add(1);
        }
        self.cwnd_cnt = self.cwnd_cnt.saturating_add(acked);
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd = self.cwnd.saturating_add(delta);
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }

    /// The head every Linux `cong_avoid` hook shares: nothing unless cwnd-limited
    /// (`tcp_is_cwnd_limited`), slow start first (`tcp_slow_start`); returns the ACKed
    /// segments left for congestion avoidance (0: nothing more to do).
    pub fn acked_for_cong_avoid(&mut self, acked: u32) -> u32 {
        if !self.is_cwnd_limited() {
            return 0;
        }
        if self.in_slow_start() {
            self.slow_start(acked)
        } else {
            acked
        }
    }

    /// `tcp_reno_cong_avoid`: slow start, then +1 segment per window of ACKed segments.
    pub fn reno_cong_avoid(&mut self, acked: u32) {
        let acked = self.acked_for_cong_avoid(acked);
        if acked > 0 {
            let w = self.cwnd;
            self.cong_avoid_ai(w, acked);
        }
    }

    /// `tcp_reno_undo_cwnd`: never undo to less than the current cwnd.
    pub fn reno_undo_cwnd(&self) -> u32 {
        self.cwnd.max(self.prior_cwnd)
    }

    /// `tcp_current_ssthresh`: outside a reduction, the ssthresh a new reduction would
    /// restore on undo is at least 3/4 of cwnd.
    pub fn current_ssthresh(&self) -> u32 {
        if matches!(self.ca_state, CaState::Cwr | CaState::Recovery) {
            self.ssthresh
        } else {
            self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
        }
    }
}

/// What every hook receives: the time, the socket, and a seeded random stream (for
/// algorithms that randomise, e.g. BBR's initial ProbeBW phase).
pub struct CcContext<'a> {
    pub now: Nanos,
    pub sk: &'a mut SockState,
    pub rng: &'a mut Rng,
}

/// Hooks every algorithm has (Linux requires `ssthresh` and `undo_cwnd`; the rest
/// default to no-ops as NULL function pointers do).
pub trait CongestionOps {
    /// Registered name.
    fn name(&self) -> &'static str;
    fn init(&mut self, _cx: &mut CcContext<'_>) {}
    /// Slow-start threshold after a congestion event (returned, not stored).
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32;
    /// cwnd to restore when a reduction turns out spurious.
    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32;
    /// Called before `sk.ca_state` becomes `new`.
    fn set_state(&mut self, _cx: &mut CcContext<'_>, _new: CaState) {}
    fn cwnd_event(&mut self, _cx: &mut CcContext<'_>, _ev: CaEvent) {}
    fn in_ack_event(&mut self, _cx: &mut CcContext<'_>, _flags: AckFlags) {}
    fn pkts_acked(&mut self, _cx: &mut CcContext<'_>, _sample: &AckSample) {}
    /// Whether ECT must be set on retransmissions too (Linux `TCP_CONG_NEEDS_ECN`,
    /// DCTCP).
    fn needs_ecn(&self) -> bool {
        false
    }
    /// Fewest segments per TSO/GSO burst (`min_tso_segs`; without the hook Linux uses
    /// `net.ipv4.tcp_min_tso_segs` = 2). `pacing_rate` in bytes per second.
    fn min_tso_segs(&self, _pacing_rate: u64) -> u32 {
        2
    }
}

/// Classic window-based algorithms: `cong_avoid(sk, ack, acked)`.
pub trait CongAvoid: CongestionOps {
    /// Grow cwnd for `acked` newly delivered segments (called only outside CWR and
    /// Recovery, and only for ACKs that acknowledged new data).
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32);
}

/// Model-based algorithms: `cong_control(sk, rs)`; they set cwnd and pacing rate.
pub trait CongControl: CongestionOps {
    fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample);
}

/// Declares [`AnyCc`] and its dispatch. Each variant says which window hook its type
/// implements (`avoid` or `control`), so the compiler enforces "exactly one of
/// `cong_avoid` or `cong_control`" like `tcp_register_congestion_control` does at
/// registration time. To add an algorithm: one line here and one entry in
/// [`registry`].
macro_rules! any_cc {
    ($($variant:ident($ty:ty) => $hook:ident),+ $(,)?) => {
        /// A congestion-control instance, dispatched statically for the built-in
        /// algorithms (no `Box` on the per-ACK path); the two `Custom*` variants take
        /// any boxed implementation, for experiments and tests.
        pub enum AnyCc { $($variant($ty)),+ }

        impl AnyCc {
            pub fn ops(&mut self) -> &mut dyn CongestionOps {
                match self { $(AnyCc::$variant(c) => c),+ }
            }
            pub fn ops_ref(&self) -> &dyn CongestionOps {
                match self { $(AnyCc::$variant(c) => c),+ }
            }
            /// True for model-based algorithms (`cong_control`).
            pub fn has_cong_control(&self) -> bool {
                match self { $(AnyCc::$variant(_) => any_cc!(@is_control $hook)),+ }
            }
            /// The per-ACK window update (`tcp_cong_control` minus the socket's own
            /// PRR, which the sender runs for `cong_avoid` algorithms).
            pub fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
                match self { $(AnyCc::$variant(c) => any_cc!(@avoid $hook c cx acked)),+ }
            }
            pub fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
                match self { $(AnyCc::$variant(c) => any_cc!(@control $hook c cx rs)),+ }
            }
        }
    };
    (@is_control avoid) => { false };
    (@is_control control) => { true };
    (@avoid avoid $c:ident $cx:ident $a:ident) => { CongAvoid::cong_avoid($c, $cx, $a) };
    (@avoid control $c:ident $cx:ident $a:ident) => { { let _ = ($c, $cx, $a); } };
    (@control control $c:ident $cx:ident $rs:ident) => { CongControl::cong_control($c, $cx, $rs) };
    (@control avoid $c:ident $cx:ident $rs:ident) => { { let _ = ($c, $cx, $rs); } };
}

any_cc! {
    Reno(reno::Reno) => avoid,
    Cubic(cubic::Cubic) => avoid,
    HighSpeed(highspeed::HighSpeed) => avoid,
    Scalable(scalable::Scalable) => avoid,
    Bic(bic::Bic) => avoid,
    Htcp(htcp::Htcp) => avoid,
    Westwood(westwood::Westwood) => avoid,
    Hybla(hybla::Hybla) => avoid,
    Illinois(illinois::Illinois) => avoid,
    Vegas(vegas::Vegas) => avoid,
    Fast(fast::Fast) => avoid,
    Bbr(bbr::Bbr) => control,
    Bbr3(bbr3::Bbr3) => control,
    Copa(copa::Copa) => control,
    Vivace(vivace::Vivace) => control,
    Aimd(aimd::Aimd) => control,
    Dctcp(dctcp::Dctcp) => avoid,
    Compound(compound::Compound) => avoid,
    CustomAvoid(Box<dyn CongAvoid + Send>) => avoid,
    CustomControl(Box<dyn CongControl + Send>) => control,
}

impl AnyCc {
    pub fn name(&self) -> &'static str {
        self.ops_ref().name()
    }
}

impl std::fmt::Debug for AnyCc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AnyCc({})", self.name())
    }
}

// Boxed algorithms forward every hook, so `Box<dyn CongAvoid>` is itself an
// algorithm (this is what the `Custom*` variants rely on).
impl<T: CongestionOps + ?Sized> CongestionOps for Box<T> {
    fn name(&self) -> &'static str {
        (**self).name()
    }
    fn init(&mut self, cx: &mut CcContext<'_>) {
        (**self).init(cx)
    }
    fn ssthresh(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (**self).ssthresh(cx)
    }
    fn undo_cwnd(&mut self, cx: &mut CcContext<'_>) -> u32 {
        (**self).undo_cwnd(cx)
    }
    fn set_state(&mut self, cx: &mut CcContext<'_>, new: CaState) {
        (**self).set_state(cx, new)
    }
    fn cwnd_event(&mut self, cx: &mut CcContext<'_>, ev: CaEvent) {
        (**self).cwnd_event(cx, ev)
    }
    fn in_ack_event(&mut self, cx: &mut CcContext<'_>, flags: AckFlags) {
        (**self).in_ack_event(cx, flags)
    }
    fn pkts_acked(&mut self, cx: &mut CcContext<'_>, sample: &AckSample) {
        (**self).pkts_acked(cx, sample)
    }
    fn needs_ecn(&self) -> bool {
        (**self).needs_ecn()
    }
    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        (**self).min_tso_segs(pacing_rate)
    }
}

impl<T: CongAvoid + ?Sized> CongAvoid for Box<T> {
    fn cong_avoid(&mut self, cx: &mut CcContext<'_>, acked: u32) {
        (**self).cong_avoid(cx, acked)
    }
}

impl<T: CongControl + ?Sized> CongControl for Box<T> {
    fn cong_control(&mut self, cx: &mut CcContext<'_>, rs: &RateSample) {
        (**self).cong_control(cx, rs)
    }
}

/// A parameter's default value and type.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl std::fmt::Display for ParamValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamValue::Int(v) => write!(f, "{v}"),
            ParamValue::Float(v) => write!(f, "{v}"),
            ParamValue::Bool(v) => write!(f, "{v}"),
        }
    }
}

/// One tunable (a Linux module parameter).
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub default: ParamValue,
    pub doc: &'static str,
}

/// One registered algorithm: what `ccbench cc list` prints and how to build it.
pub struct CcSpec {
    pub name: &'static str,
    pub summary: &'static str,
    /// Where the behaviour comes from (Linux file, RFC, paper).
    pub source: &'static str,
    pub params: &'static [ParamSpec],
    pub build: fn(&Params<'_>) -> Result<AnyCc, ConfigError>,
}

static REGISTRY: &[CcSpec] = &[
    CcSpec {
        name: "reno",
        summary: "Reno/NewReno AIMD: slow start, +1 segment per RTT, halve on loss",
        source: "Linux net/ipv4/tcp_cong.c tcp_reno_*",
        params: reno::PARAMS,
        build: reno::build,
    },
    // Linux has one `reno` module; "NewReno" is that module plus the NewReno loss
    // recovery the socket runs when SACK is off (RFC 6582). CC and recovery stay
    // orthogonal here too: `newreno` is the same algorithm, and the recovery used
    // follows the `sack` switch of the TCP configuration.
    CcSpec {
        name: "newreno",
        summary: "alias of reno (recovery follows the `sack` setting, as in Linux)",
        source: "Linux net/ipv4/tcp_cong.c tcp_reno_*",
        params: reno::PARAMS,
        build: reno::build,
    },
    CcSpec {
        name: "cubic",
        summary: "CUBIC: W(t) = C(t-K)^3 + W_max, beta 0.7, TCP-friendly region, HyStart",
        source: "Linux net/ipv4/tcp_cubic.c (v2.3, Linux 5.7+); Ha, Rhee, Xu 2008; RFC 9438",
        params: cubic::PARAMS,
        build: cubic::build,
    },
    CcSpec {
        name: "highspeed",
        summary: "HighSpeed TCP: a(w), b(w) from RFC 3649's table above 38 segments, Reno below",
        source: "Linux net/ipv4/tcp_highspeed.c; RFC 3649",
        params: highspeed::PARAMS,
        build: highspeed::build,
    },
    CcSpec {
        name: "scalable",
        summary: "Scalable TCP: MIMD, +0.01 per ACKed segment above 100 segments (Reno below), x7/8 on loss",
        source: "Linux net/ipv4/tcp_scalable.c; Kelly, CCR 2003",
        params: scalable::PARAMS,
        build: scalable::build,
    },
    CcSpec {
        name: "bic",
        summary: "BIC-TCP: binary search towards W_max, then max probing; beta 0.8, Reno below 14 segments",
        source: "Linux net/ipv4/tcp_bic.c; Xu, Harfoush, Rhee, INFOCOM 2004",
        params: bic::PARAMS,
        build: bic::build,
    },
    CcSpec {
        name: "htcp",
        summary: "H-TCP: alpha grows with time since the last loss, adaptive backoff minRTT/maxRTT in [0.5, 0.8]",
        source: "Linux net/ipv4/tcp_htcp.c; Leith, Shorten, PFLDnet 2004",
        params: htcp::PARAMS,
        build: htcp::build,
    },
    CcSpec {
        name: "westwood",
        summary: "Westwood+: Reno probing; after a loss ssthresh = cwnd = bandwidth estimate x RTTmin",
        source: "Linux net/ipv4/tcp_westwood.c; Grieco, Mascolo, CCR 2004",
        params: westwood::PARAMS,
        build: westwood::build,
    },
    CcSpec {
        name: "hybla",
        summary: "Hybla: slow start x2^rho and +rho^2 per RTT, rho = RTT/RTT0 (25 ms); Reno on loss",
        source: "Linux net/ipv4/tcp_hybla.c; Caini, Firrincieli, IJSCN 2004",
        params: hybla::PARAMS,
        build: hybla::build,
    },
    CcSpec {
        name: "illinois",
        summary: "TCP-Illinois: loss-based AIMD, alpha 10..0.3 and beta 1/8..1/2 from the average queueing delay",
        source: "Linux net/ipv4/tcp_illinois.c; Liu, Basar, Srikant, Perf. Eval. 2008",
        params: illinois::PARAMS,
        build: illinois::build,
    },
    CcSpec {
        name: "vegas",
        summary: "delay-based: keep alpha..beta segments queued, one cwnd step per RTT",
        source: "Linux net/ipv4/tcp_vegas.c; Brakmo & Peterson, JSAC 1995",
        params: vegas::PARAMS,
        build: vegas::build,
    },
    CcSpec {
        name: "fast",
        summary: "FAST TCP: w <- min(2w, (1-gamma)w + gamma(baseRTT/RTT w + alpha)) per RTT",
        source: "Wei, Caltech PhD thesis 2007, Algorithm 2 / Eq. 2.24; Jin, Wei, Low, INFOCOM 2004",
        params: fast::PARAMS,
        build: fast::build,
    },
    CcSpec {
        name: "bbr",
        summary: "BBR v1: pace at the max delivery rate, cap in-flight at 2 BDP, probe RTT every 10 s",
        source: "Linux net/ipv4/tcp_bbr.c; Cardwell et al., ACM Queue 2016",
        params: bbr::PARAMS,
        build: bbr::build,
    },
    CcSpec {
        name: "bbr3",
        summary: "BBR v3: v1's model bounded by loss/ECN (inflight_hi at 2 % loss, beta 0.7), ProbeBW DOWN/CRUISE/REFILL/UP",
        source: "Google BBR v3 (github.com/google/bbr v3 tcp_bbr.c); draft-ietf-ccwg-bbr",
        params: bbr3::PARAMS,
        build: bbr3::build,
    },
    CcSpec {
        name: "copa",
        summary: "Copa: rate toward 1/(delta d_q), +-v/(delta cwnd) per ACK with velocity v; ~1/delta packets queued per flow",
        source: "Arun & Balakrishnan, NSDI 2018, Sec. 2 (default mode)",
        params: copa::PARAMS,
        build: copa::build,
    },
    CcSpec {
        name: "vivace",
        summary: "PCC Vivace: rate by gradient ascent on u = x^0.9 - b x dRTT/dT - c x L over monitor intervals",
        source: "Dong et al., PCC Vivace, NSDI 2018, Sec. 3-4",
        params: vivace::PARAMS,
        build: vivace::build,
    },
    CcSpec {
        name: "dctcp",
        summary: "DCTCP: cut cwnd by alpha/2 per window of ECN marks, alpha = EWMA of the marked fraction",
        source: "Linux net/ipv4/tcp_dctcp.c; RFC 8257",
        params: dctcp::PARAMS,
        build: dctcp::build,
    },
    CcSpec {
        name: "compound",
        summary: "Compound TCP: Reno window + delay-based dwnd that grows while < gamma packets queue",
        source: "Tan, Song, Zhang, Sridharan, INFOCOM 2006 (the Windows CTCP design)",
        params: compound::PARAMS,
        build: compound::build,
    },
    CcSpec {
        name: "aimd",
        summary: "textbook AIMD of the analytical models: real w, +a/w per ACK, x b on every echoed mark (not Linux)",
        source: "Lübben & Fidler Sec. III-C2; Ott, Kemperman, Mathis 1996 (mean window 1.31/sqrt(p))",
        params: aimd::PARAMS,
        build: aimd::build,
    },
];

/// Every registered algorithm, in listing order.
pub fn registry() -> &'static [CcSpec] {
    REGISTRY
}

/// Whether the receiver must echo each segment's CE bit exactly (RFC 8257 §3.2) rather
/// than RFC 3168's "ECE until CWR": DCTCP estimates the marked fraction from the
/// echoes, and the textbook `aimd` reacts to every mark.
pub fn accurate_ecn(name: &str) -> bool {
    matches!(name, "dctcp" | "aimd")
}

/// `tcp_ca_find`.
pub fn find(name: &str) -> Option<&'static CcSpec> {
    REGISTRY.iter().find(|s| s.name == name)
}

fn names() -> String {
    REGISTRY.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}

/// Validated access to an algorithm's parameters; absent ones take the default.
pub struct Params<'a> {
    spec: &'static CcSpec,
    values: &'a BTreeMap<String, serde_json::Value>,
    field: &'a str,
}

impl Params<'_> {
    fn spec_of(&self, name: &str) -> &'static ParamSpec {
        self.spec
            .params
            .iter()
            .find(|p| p.name == name)
            .unwrap_or_else(|| panic!("{} asked for undeclared parameter {name}", self.spec.name))
    }

    fn type_err(&self, name: &str, want: &str, got: &serde_json::Value) -> ConfigError {
        ConfigError::new(
            format!("{}.params.{name}", self.field),
            format!("{got} is not {want}; {} default: {}", self.spec.name, self.spec_of(name).default),
        )
    }

    pub fn int(&self, name: &str) -> Result<i64, ConfigError> {
        match (self.values.get(name), self.spec_of(name).default) {
            (None, ParamValue::Int(d)) => Ok(d),
            (Some(v), _) => v.as_i64().ok_or_else(|| self.type_err(name, "an integer", v)),
            (None, d) => panic!("parameter {name} declared as {d:?}, read as int"),
        }
    }

    pub fn float(&self, name: &str) -> Result<f64, ConfigError> {
        match (self.values.get(name), self.spec_of(name).default) {
            (None, ParamValue::Float(d)) => Ok(d),
            (Some(v), _) => v.as_f64().ok_or_else(|| self.type_err(name, "a number", v)),
            (None, d) => panic!("parameter {name} declared as {d:?}, read as float"),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, ConfigError> {
        match (self.values.get(name), self.spec_of(name).default) {
            (None, ParamValue::Bool(d)) => Ok(d),
            (Some(v), _) => v.as_bool().ok_or_else(|| self.type_err(name, "true or false", v)),
            (None, d) => panic!("parameter {name} declared as {d:?}, read as bool"),
        }
    }
}

/// Builds the algorithm `cfg` names. `field` is the config path of `cfg` (e.g.
/// `flows.0.transport.cc`). Unknown names list the registry; unknown parameters list
/// the algorithm's parameters.
pub fn build(cfg: &CcConfig, field: &str) -> Result<AnyCc, ConfigError> {
    let spec = find(&cfg.name).ok_or_else(|| {
        ConfigError::new(
            format!("{field}.name"),
            format!("unknown congestion control {:?}; registered: {}", cfg.name, names()),
        )
    })?;
    for key in cfg.params.keys() {
        if !spec.params.iter().any(|p| p.name == key) {
            let accepted = if spec.params.is_empty() {
                format!("{} has no parameters", spec.name)
            } else {
                format!(
                    "{} accepts: {}",
                    spec.name,
                    spec.params
                        .iter()
                        .map(|p| format!("{} (default {})", p.name, p.default))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(ConfigError::new(
                format!("{field}.params.{key}"),
                format!("unknown parameter {key:?}; {accepted}"),
            ));
        }
    }
    (spec.build)(&Params { spec, values: &cfg.params, field })
}

/// Checks `cfg` without keeping the instance.
pub fn validate(cfg: &CcConfig, field: &str) -> Result<(), ConfigError> {
    build(cfg, field).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sk(cwnd: u32, ssthresh: u32) -> SockState {
        let mut s = SockState::new(1448, cwnd);
        s.ssthresh = ssthresh;
        s
    }

    #[test]
    fn registry_names_are_unique() {
        let mut n: Vec<_> = registry().iter().map(|s| s.name).collect();
        n.sort();
        n.dedup();
        assert_eq!(n.len(), registry().len());
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_leftover() {
        let mut s = sk(10, 14);
        assert_eq!(s.slow_start(3), 0);
        assert_eq!(s.cwnd, 13);
        // 13 + 5 capped at 14: one used, four left for congestion avoidance.
        assert_eq!(s.slow_start(5), 4);
        assert_eq!(s.cwnd, 14);
    }

    #[test]
    fn cong_avoid_ai_adds_one_segment_per_window_of_acks() {
        let mut s = sk(10, 5);
        for _ in 0..9 {
            s.cong_avoid_ai(10, 1);
        }
        assert_eq!((s.cwnd, s.cwnd_cnt), (10, 9));
        s.cong_avoid_ai(10, 1);
        assert_eq!((s.cwnd, s.cwnd_cnt), (11, 0));
        // A stretch ACK of 25 at w = 11: two increments, 3 credit left.
        s.cong_avoid_ai(11, 25);
        assert_eq!((s.cwnd, s.cwnd_cnt), (13, 3));
    }

    #[test]
    fn cong_avoid_ai_applies_credit_from_a_larger_w_gently() {
        let mut s = sk(10, 5);
        s.cwnd_cnt = 30;
        s.cong_avoid_ai(10, 1);
        // Linux: the stale credit gives +1 and resets, then the new ACK counts.
        assert_eq!((s.cwnd, s.cwnd_cnt), (11, 1));
    }

    #[test]
    fn cwnd_limited_in_slow_start_uses_twice_max_packets_out() {
        let mut s = sk(10, INFINITE_SSTHRESH);
        s.max_packets_out = 5;
        assert!(!s.is_cwnd_limited());
        s.max_packets_out = 6;
        assert!(s.is_cwnd_limited());
        s.ssthresh = 8; // congestion avoidance: only the flag counts
        assert!(!s.is_cwnd_limited());
    }

    #[test]
    fn reno_undo_never_lowers_cwnd() {
        let mut s = sk(5, 5);
        s.prior_cwnd = 20;
        assert_eq!(s.reno_undo_cwnd(), 20);
        s.cwnd = 30;
        assert_eq!(s.reno_undo_cwnd(), 30);
    }

    #[test]
    fn build_rejects_bad_names_with_the_list() {
        let e = build(&CcConfig { name: "cubik".into(), params: BTreeMap::new() }, "f.cc").unwrap_err();
        assert_eq!(e.field, "f.cc.name");
        assert!(e.msg.contains("registered: reno, newreno, cubic"), "{}", e.msg);
        assert_eq!(build(&CcConfig::default(), "f").unwrap().name(), "cubic");
    }
}
