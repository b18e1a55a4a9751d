//! TCP configuration: one struct for sender and receiver, every field defaulted to
//! what a current Linux kernel does out of the box (sysctl defaults cited per field).
//!
//! There is no handshake in the simulator: a connection starts ESTABLISHED with both
//! sides already agreeing on MSS, SACK, timestamps and ECN as configured here.

use crate::error::ConfigError;
use crate::tcp::cc;
use crate::tcp::pacing::PacingMode;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How cwnd is brought down during fast recovery and ECN-triggered CWR.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryMode {
    /// Proportional Rate Reduction (RFC 6937), Linux >= 3.2 `tcp_cwnd_reduction`.
    #[default]
    Prr,
    /// Linux 2.6-era rate halving (`tcp_cwnd_down`): cwnd drops by one segment every
    /// second ACK until it reaches ssthresh/2, and never exceeds in-flight + 1.
    RateHalving,
}

/// What the send buffer (`sndbuf_bytes`) limits.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SndbufMode {
    /// Linux's (`tcp_sendmsg_locked`), for a writer that blocks or polls: a soft limit.
    /// The buffer is checked only when a write needs a new skb, so what the window can
    /// send at once passes a full buffer; a write refused by it resumes when the
    /// socket is writable again, queued <= 2/3 of the buffer (`sk_stream_write_space`).
    #[default]
    Linux,
    /// A hard cap on unacknowledged data that the writer keeps topped up: the window
    /// limit W_max = sndbuf of the analytical models and of ns-2's `window_`.
    Window,
}

/// How an ACK turns into congestion-window growth: which "acked" count the
/// congestion control's `cong_avoid` sees (RFC 3465, Appropriate Byte Counting).
///
/// cwnd is counted in segments throughout (as Linux's `snd_cwnd`); the modes differ
/// in how much one ACK is worth, which matters for senders of sub-MSS segments (VoIP:
/// a 174-byte segment is "one packet" for packet counting but 0.12 MSS for ABC):
///
/// | mode | per ACK, slow start | per ACK, congestion avoidance | Linux |
/// |---|---|---|---|
/// | `off` (default) | + segments it (S)ACKs | `snd_cwnd_cnt` += segments it (S)ACKs | today: ABC removed in 3.9; `tcp_slow_start(tp, acked)` / `tcp_cong_avoid_ai(tp, w, acked)` count packets since 3.18 |
/// | `per-ack` | + 1 | `snd_cwnd_cnt` += 1 | 2.6 with `net.ipv4.tcp_abc` = 0 (off; the default of the kernels Brosh et al. measured, per their Sec. 6.3): the paper's "ACK counting" |
/// | `l1` | + 1 once the cumulatively ACKed bytes since the last increase reach 1 SMSS (remainder dropped) | + 1 per cwnd x SMSS ACKed bytes | 2.6 to 3.8 `tcp_abc` = 1 (RFC 3465 L = 1 SMSS) |
/// | `l2` | as `l1`, but + 2 when they reach 2 SMSS (delayed ACKs) | as `l1` | `tcp_abc` = 2 (RFC 3465 §2.2 L = 2 SMSS) |
///
/// For `l1`/`l2` the byte count is Linux 2.6's `tp->bytes_acked`: the cumulative ACK's
/// advance while Open or Disorder, at most one SMSS per ACK in Loss, nothing in
/// Recovery or CWR, reset on entering Recovery, CWR and Loss (`tcp_ack`,
/// `tcp_enter_cwr`, `tcp_enter_loss`, `tcp_fastretrans_alert`). SACKed bytes do not
/// count (RFC 3465 counts acknowledged bytes, Linux counted `ack - prior_snd_una`).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum AbcMode {
    /// Packet counting, as current Linux.
    #[default]
    Off,
    /// One unit per ACK, whatever it covers (Linux 2.6 with `tcp_abc` = 0).
    PerAck,
    /// RFC 3465 byte counting with L = 1 SMSS (Linux 2.6 `tcp_abc` = 1).
    L1,
    /// RFC 3465 byte counting with L = 2 SMSS (Linux 2.6 `tcp_abc` = 2).
    L2,
}

/// How the retransmission timeout is computed from the RTT samples.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RtoMode {
    /// Linux `tcp_rtt_estimator` / `__tcp_set_rto`: `SRTT + max(4*mdev, rto_min)`
    /// with the per-RTT `mdev_max` decay (see [`crate::tcp::rtt`]).
    #[default]
    Linux,
    /// RFC 6298 §2 as textbook stacks and ns-2 compute it: symmetric RTTVAR,
    /// `RTO = max(min_rto, SRTT + max(G, 4*RTTVAR))` with G = 1 ms, so the minimum
    /// bounds the sum, not the variance term.
    Rfc6298,
}

/// What a partial ACK does in fast recovery without SACK.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum FastRecovery {
    /// RFC 6582 NewReno (Linux `tcp_newreno_mark_lost`): each partial ACK retransmits
    /// the next hole and recovery lasts until all data sent before it is ACKed.
    #[default]
    Newreno,
    /// RFC 5681 Reno as ns-2's `Agent/TCP/Reno` (with `bugFix_`): the first partial
    /// ACK ends recovery (cwnd = ssthresh); duplicate ACKs for data below the old
    /// recovery point start no new fast retransmit (RFC 6582 §4.1's check), so a
    /// second loss in the window waits for the RTO.
    Reno,
}

/// Which congestion control and its parameters.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CcConfig {
    /// Registered name (see [`cc::registry`]); Linux's default, `cubic`, when absent.
    #[serde(default = "default_cc_name")]
    pub name: String,
    /// Algorithm tunables by Linux module-parameter name; absent ones take Linux's
    /// default.
    #[serde(default)]
    pub params: BTreeMap<String, serde_json::Value>,
}

/// Linux's default congestion control (`net.ipv4.tcp_congestion_control` = cubic).
fn default_cc_name() -> String {
    "cubic".to_string()
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig { name: default_cc_name(), params: BTreeMap::new() }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Payload bytes per full segment. 1448 = 1500-byte MTU minus IP (20), TCP (20)
    /// and the timestamps option (12), as Linux computes `mss_cache`.
    #[serde(default = "d_mss")]
    pub mss: u32,
    /// Header bytes per packet (IP + TCP + options other than SACK).
    #[serde(default = "d_header_bytes")]
    pub header_bytes: u32,
    /// Initial congestion window in segments (`TCP_INIT_CWND` = 10, RFC 6928).
    #[serde(default = "d_init_cwnd")]
    pub init_cwnd: u32,
    /// Initial slow-start threshold in segments, as the `ssthresh` route metric sets it
    /// (`ip route ... ssthresh N`, read by `tcp_init_metrics`); 0 = none (Linux's default,
    /// `TCP_INFINITE_SSTHRESH`). With `init_ssthresh <= init_cwnd` a flow starts in
    /// congestion avoidance (Wei's Ch. 2 model starts there).
    #[serde(default)]
    pub init_ssthresh: u32,
    /// Send buffer: bytes the application may have written and not yet had
    /// acknowledged (`net.ipv4.tcp_wmem` max = 4194304).
    #[serde(default = "d_sndbuf")]
    pub sndbuf_bytes: u64,
    /// How the send buffer limits the writer ([`SndbufMode`]; Linux's by default).
    #[serde(default)]
    pub sndbuf_mode: SndbufMode,
    /// Send-buffer memory each skb costs beyond its payload (`skb->truesize - len`:
    /// the `sk_buff`, the head with room for headers, `skb_shared_info`), which Linux
    /// charges to `sk_wmem_queued` against `sk_sndbuf`. 832 bytes on Linux 6.18
    /// (bpftrace on `net:net_dev_queue`: truesize - len = 780 B for every size of
    /// skb, the 52 header bytes sitting in the head). 0 counts payload only. Used
    /// with `sndbuf_mode = "linux"`.
    #[serde(default = "d_skb_overhead")]
    pub skb_overhead_bytes: u64,
    /// Receive buffer (`net.ipv4.tcp_rmem` max: 33554432 since Linux 6.18, 6291456 before); used by the receiver. Memory,
    /// as in Linux: the window it allows is `rcv_scaling_ratio / 256` of it.
    #[serde(default = "d_rcvbuf")]
    pub rcvbuf_bytes: u64,
    /// Receive buffer at the start (`net.ipv4.tcp_rmem[1]` = 131072), before autotuning.
    #[serde(default = "d_rcvbuf_initial")]
    pub rcvbuf_initial_bytes: u64,
    /// Receive-buffer autotuning (`net.ipv4.tcp_moderate_rcvbuf` = 1).
    #[serde(default = "d_true")]
    pub moderate_rcvbuf: bool,
    /// Payload share of receive-buffer memory in 1/256 (Linux's `scaling_ratio`, which
    /// it measures per path as segment length / skb truesize; 160 for 1448-byte segments in 2304-byte skbs, as on ccemu's tun path).
    #[serde(default = "d_rcv_scaling_ratio")]
    pub rcv_scaling_ratio: u32,
    /// Selective acknowledgements (`net.ipv4.tcp_sack` = 1).
    #[serde(default = "d_true")]
    pub sack: bool,
    /// Duplicate SACK (`net.ipv4.tcp_dsack` = 1).
    #[serde(default = "d_true")]
    pub dsack: bool,
    /// Nagle's algorithm (on unless the application sets `TCP_NODELAY`).
    #[serde(default = "d_true")]
    pub nagle: bool,
    /// Receiver delays ACKs (Linux always does, outside quick-ack mode).
    #[serde(default = "d_true")]
    pub delayed_ack: bool,
    /// Segments ACKed at once at the start of a connection (`TCP_MAX_QUICKACKS` = 16).
    #[serde(default = "d_quickack")]
    pub quickack_segments: u32,
    /// RFC 3168 ECN. Linux's `tcp_ecn` = 2 only accepts ECN when the peer asks; an
    /// actively opened connection does not use it, so the default is off.
    #[serde(default)]
    pub ecn: bool,
    #[serde(default)]
    pub recovery: RecoveryMode,
    /// Window growth per ACK: packet counting (today's Linux), per-ACK counting or
    /// RFC 3465 byte counting (see [`AbcMode`]).
    #[serde(default)]
    pub abc: AbcMode,
    /// Partial-ACK handling without SACK (with SACK, RACK decides).
    #[serde(default)]
    pub fast_recovery: FastRecovery,
    /// RTO estimator: Linux's (default) or RFC 6298's (legacy/textbook stacks).
    #[serde(default)]
    pub rto: RtoMode,
    /// Tail loss probes (RFC 8985 §7; `net.ipv4.tcp_early_retrans` = 3 enables them).
    /// Only with SACK, as in Linux.
    #[serde(default = "d_true")]
    pub tlp: bool,
    /// F-RTO spurious-timeout detection (RFC 5682; `net.ipv4.tcp_frto` = 2).
    #[serde(default = "d_true")]
    pub frto: bool,
    /// A paced flow (`fq` pacing or BBR) sends `tcp_tso_autosize` segments per pacing
    /// slot, back to back, as Linux's GSO skbs (TCP always builds them since 4.19):
    /// about 1 ms of data at the pacing rate, at least 2 segments (BBR: 1 below
    /// 1.2 Mbit/s), at most 64 KB. `false`: one segment per slot.
    #[serde(default = "d_true")]
    pub tso_autosize: bool,
    /// TSO deferral (`tcp_tso_should_defer`, Linux 6.18 rule): an unpaced sender whose
    /// room in the window is less than one autosized skb holds it back while the next
    /// ACK is due within min(1 ms, srtt/2), so it sends whole skbs (4-5 segments at 50
    /// Mbit/s) where a segment-at-a-time sender sends 2 per ACK. Needs `tso_autosize`.
    #[serde(default = "d_true")]
    pub tso_defer: bool,
    /// `net.ipv4.tcp_slow_start_after_idle` = 1.
    #[serde(default = "d_true")]
    pub slow_start_after_idle: bool,
    /// Pacing (see [`PacingMode`]): `false`/`"off"`, `true`/`"fq"` (every flow paced at
    /// Linux's `tcp_update_pacing_rate` rate, as with the `fq` qdisc), or `"random"`
    /// (Wei's randomized pacing, thesis Algorithm 4). Off by default: Linux only paces
    /// with fq or when the CC asks (BBR, which paces at its own rate in every mode).
    #[serde(default)]
    pub pacing: PacingMode,
    /// `TCP_RTO_MIN` = 200 ms.
    #[serde(default = "d_min_rto")]
    pub min_rto_ms: u64,
    /// `TCP_RTO_MAX` = 120 s.
    #[serde(default = "d_max_rto")]
    pub max_rto_ms: u64,
    /// `TCP_TIMEOUT_INIT` = 1 s (RFC 6298 §2.1), used until the first RTT sample.
    #[serde(default = "d_initial_rto")]
    pub initial_rto_ms: u64,
    /// The RTT of the SYN exchange, µs; 0 = none. The simulator has no handshake, but
    /// a Linux connection starts with one RTT sample from it (`tcp_synack_rtt_meas`,
    /// `tcp_ack_update_rtt` on the SYN-ACK): srtt, rttvar, the RTO and the min-RTT
    /// filter are set before the first data segment, so a lost first flight is
    /// recovered after a TLP/RTO of a few hundred ms, not `TCP_TIMEOUT_INIT`'s 1 s, and
    /// the passive side has an srtt for its delayed-ACK bound. The congestion control
    /// never sees it (Linux initialises it after the handshake, `tcp_init_transfer`).
    /// A fixed sample; see `handshake_rtt` for one measured on the path.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub syn_rtt_us: u64,
    /// Take the SYN exchange's sample from the path when the flow starts: propagation,
    /// the serialisation of a 60-byte SYN and SYN-ACK on every link, and the backlog
    /// each would wait behind at that moment (a flow joining a full queue measures it,
    /// as the kernel's SYN does). Ignored when `syn_rtt_us` is set. On by default, as
    /// every Linux connection has a handshake (`transport.syn_rtt = "path"`).
    #[serde(default = "d_true")]
    pub handshake_rtt: bool,
    /// Whether that sample includes the backlog on the path when the flow starts (a
    /// connection opened then) or not (one opened earlier on an idle path: a pooled
    /// connection, or ccemu's probes, which connect before the run).
    #[serde(default = "d_true")]
    pub handshake_queues: bool,
    /// The kernel's timer frequency (`CONFIG_HZ`; mainline's default, and Debian's,
    /// is 250). TCP's timers run in its ticks (jiffies): the RTO is rounded up to one
    /// (`__tcp_set_rto`), and the tail-loss-probe and RACK reordering timers add
    /// `TCP_TIMEOUT_MIN` = 2 ticks (8 ms at 250 Hz, 2 ms at 1000). Measured on the
    /// emulator's kernel: every RTO in `TCP_INFO` is a multiple of 4 ms. CUBIC's and
    /// BIC's jiffies clocks (the epoch, `HZ/32` between cnt updates) follow it too;
    /// H-TCP's and Westwood's still count at 1000 Hz.
    #[serde(default = "d_kernel_hz")]
    pub kernel_hz: u32,
    /// `TCP_DELACK_MIN` = 40 ms.
    #[serde(default = "d_delack_min")]
    pub delack_min_ms: u64,
    /// `TCP_DELACK_MAX` = 200 ms.
    #[serde(default = "d_delack_max")]
    pub delack_max_ms: u64,
    #[serde(default)]
    pub cc: CcConfig,
}

fn d_mss() -> u32 {
    1448
}
fn d_header_bytes() -> u32 {
    52
}
fn d_init_cwnd() -> u32 {
    10
}
fn d_skb_overhead() -> u64 {
    832
}

fn d_sndbuf() -> u64 {
    4_194_304
}
fn d_rcvbuf() -> u64 {
    33_554_432
}
fn d_rcvbuf_initial() -> u64 {
    131_072
}
fn d_rcv_scaling_ratio() -> u32 {
    160
}
fn d_true() -> bool {
    true
}
fn d_quickack() -> u32 {
    16
}
fn d_min_rto() -> u64 {
    200
}
fn d_max_rto() -> u64 {
    120_000
}
fn d_kernel_hz() -> u32 {
    250
}
fn is_zero(v: &u64) -> bool {
    *v == 0
}
fn d_initial_rto() -> u64 {
    1000
}
fn d_delack_min() -> u64 {
    40
}
fn d_delack_max() -> u64 {
    200
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            mss: d_mss(),
            header_bytes: d_header_bytes(),
            init_cwnd: d_init_cwnd(),
            init_ssthresh: 0,
            sndbuf_bytes: d_sndbuf(),
            sndbuf_mode: SndbufMode::Linux,
            skb_overhead_bytes: d_skb_overhead(),
            rcvbuf_bytes: d_rcvbuf(),
            rcvbuf_initial_bytes: d_rcvbuf_initial(),
            moderate_rcvbuf: true,
            rcv_scaling_ratio: d_rcv_scaling_ratio(),
            sack: true,
            dsack: true,
            nagle: true,
            delayed_ack: true,
            quickack_segments: d_quickack(),
            ecn: false,
            recovery: RecoveryMode::Prr,
            abc: AbcMode::Off,
            rto: RtoMode::Linux,
            fast_recovery: FastRecovery::Newreno,
            tlp: true,
            tso_autosize: true,
            tso_defer: true,
            frto: true,
            slow_start_after_idle: true,
            pacing: PacingMode::Off,
            min_rto_ms: d_min_rto(),
            max_rto_ms: d_max_rto(),
            initial_rto_ms: d_initial_rto(),
            syn_rtt_us: 0,
            handshake_rtt: true,
            handshake_queues: true,
            kernel_hz: d_kernel_hz(),
            delack_min_ms: d_delack_min(),
            delack_max_ms: d_delack_max(),
            cc: CcConfig::default(),
        }
    }
}

/// Largest IP packet; MSS plus headers must fit.
const MAX_IP_PACKET: u32 = 65_535;

impl TcpConfig {
    /// Checks every value; `field` is the dotted path of this struct in the scenario
    /// (e.g. `flows.0.transport`), so errors name e.g. `flows.0.transport.mss`.
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let f = |name: &str| format!("{field}.{name}");
        if self.header_bytes < 40 || self.header_bytes > 120 {
            return Err(ConfigError::new(
                f("header_bytes"),
                format!(
                    "{} bytes cannot hold IP (20) + TCP (20) headers plus at most 80 option bytes; accepted: 40..=120",
                    self.header_bytes
                ),
            ));
        }
        let max_mss = MAX_IP_PACKET - self.header_bytes;
        if self.mss == 0 || self.mss > max_mss {
            return Err(ConfigError::new(
                f("mss"),
                format!("MSS {} is not a usable segment size; accepted: 1..={max_mss} bytes", self.mss),
            ));
        }
        if !matches!(self.kernel_hz, 100 | 250 | 300 | 1000) {
            return Err(ConfigError::new(
                f("kernel_hz"),
                format!("{} Hz is not a kernel timer frequency; accepted: 100, 250, 300 or 1000 (CONFIG_HZ)", self.kernel_hz),
            ));
        }
        if self.init_cwnd == 0 {
            return Err(ConfigError::new(
                f("init_cwnd"),
                "initial window 0 would never send; accepted: 1 or more segments (Linux: 10)",
            ));
        }
        if self.sndbuf_bytes < self.mss as u64 {
            return Err(ConfigError::new(
                f("sndbuf_bytes"),
                format!(
                    "send buffer {} B is smaller than one MSS ({} B); accepted: at least one MSS (Linux max: 4194304)",
                    self.sndbuf_bytes, self.mss
                ),
            ));
        }
        if self.rcvbuf_bytes < self.mss as u64 {
            return Err(ConfigError::new(
                f("rcvbuf_bytes"),
                format!(
                    "receive buffer {} B is smaller than one MSS ({} B); accepted: at least one MSS (Linux max: 33554432)",
                    self.rcvbuf_bytes, self.mss
                ),
            ));
        }
        if self.rcvbuf_initial_bytes < self.mss as u64 {
            return Err(ConfigError::new(
                f("rcvbuf_initial_bytes"),
                format!(
                    "initial receive buffer {} B is smaller than one MSS ({} B); accepted: at least one MSS (Linux: 131072)",
                    self.rcvbuf_initial_bytes, self.mss
                ),
            ));
        }
        if self.rcv_scaling_ratio == 0 || self.rcv_scaling_ratio > 256 {
            return Err(ConfigError::new(
                f("rcv_scaling_ratio"),
                format!("{}; accepted: 1..=256 (256ths of receive-buffer memory that hold payload)", self.rcv_scaling_ratio),
            ));
        }
        if self.min_rto_ms == 0 {
            return Err(ConfigError::new(f("min_rto_ms"), "0 ms; accepted: 1 ms or more (Linux: 200)"));
        }
        if self.max_rto_ms < self.min_rto_ms {
            return Err(ConfigError::new(
                f("max_rto_ms"),
                format!("{} ms is below min_rto_ms ({} ms); accepted: >= min_rto_ms", self.max_rto_ms, self.min_rto_ms),
            ));
        }
        if self.initial_rto_ms == 0 || self.initial_rto_ms > self.max_rto_ms {
            return Err(ConfigError::new(
                f("initial_rto_ms"),
                format!("{} ms; accepted: 1..={} ms (max_rto_ms)", self.initial_rto_ms, self.max_rto_ms),
            ));
        }
        if self.delack_min_ms == 0 || self.delack_max_ms < self.delack_min_ms {
            return Err(ConfigError::new(
                f("delack_min_ms"),
                format!(
                    "delayed-ACK bounds {}..{} ms; accepted: 1 <= delack_min_ms <= delack_max_ms",
                    self.delack_min_ms, self.delack_max_ms
                ),
            ));
        }
        cc::validate(&self.cc, &f("cc"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_linux_and_valid() {
        let c = TcpConfig::default();
        assert_eq!((c.mss, c.header_bytes, c.init_cwnd), (1448, 52, 10));
        assert_eq!((c.min_rto_ms, c.max_rto_ms, c.initial_rto_ms), (200, 120_000, 1000));
        assert!(c.validate("tcp").is_ok());
        let parsed: TcpConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(parsed, c);
    }

    #[test]
    fn unknown_field_is_rejected_by_serde() {
        assert!(serde_json::from_str::<TcpConfig>(r#"{"msss": 1000}"#).is_err());
        assert!(serde_json::from_str::<TcpConfig>(r#"{"sndbuf_bytes": -1}"#).is_err());
    }

    #[test]
    fn pacing_accepts_the_old_bool_and_mode_names() {
        let c: TcpConfig = serde_json::from_str(r#"{"pacing": true}"#).unwrap();
        assert_eq!(c.pacing, PacingMode::Fq);
        let c: TcpConfig = serde_json::from_str(r#"{"pacing": "random"}"#).unwrap();
        assert_eq!(c.pacing, PacingMode::Random);
        assert!(serde_json::from_str::<TcpConfig>(r#"{"pacing": "sometimes"}"#).is_err());
    }

    #[test]
    fn recovery_mode_parses_kebab_case() {
        let c: TcpConfig = serde_json::from_str(r#"{"recovery": "rate-halving"}"#).unwrap();
        assert_eq!(c.recovery, RecoveryMode::RateHalving);
    }

    #[test]
    fn sndbuf_mode_defaults_to_linux_and_parses_window() {
        assert_eq!(TcpConfig::default().sndbuf_mode, SndbufMode::Linux);
        let c: TcpConfig = serde_json::from_str(r#"{"sndbuf_mode": "window"}"#).unwrap();
        assert_eq!(c.sndbuf_mode, SndbufMode::Window);
        assert!(serde_json::from_str::<TcpConfig>(r#"{"sndbuf_mode": "soft"}"#).is_err());
    }

    #[test]
    fn rto_mode_defaults_to_linux_and_parses_rfc6298() {
        assert_eq!(TcpConfig::default().rto, RtoMode::Linux);
        let c: TcpConfig = serde_json::from_str(r#"{"rto": "rfc6298"}"#).unwrap();
        assert_eq!(c.rto, RtoMode::Rfc6298);
        assert!(serde_json::from_str::<TcpConfig>(r#"{"rto": "bsd"}"#).is_err());
    }

    #[test]
    fn abc_defaults_off_and_parses_every_mode() {
        assert_eq!(TcpConfig::default().abc, AbcMode::Off);
        for (name, mode) in
            [("off", AbcMode::Off), ("per-ack", AbcMode::PerAck), ("l1", AbcMode::L1), ("l2", AbcMode::L2)]
        {
            let c: TcpConfig = serde_json::from_str(&format!(r#"{{"abc": "{name}"}}"#)).unwrap();
            assert_eq!(c.abc, mode);
        }
        assert!(serde_json::from_str::<TcpConfig>(r#"{"abc": 2}"#).is_err());
        assert!(serde_json::from_str::<TcpConfig>(r#"{"abc": "bytes"}"#).is_err());
    }

    #[test]
    fn fast_recovery_defaults_to_newreno() {
        assert_eq!(TcpConfig::default().fast_recovery, FastRecovery::Newreno);
        let c: TcpConfig = serde_json::from_str(r#"{"fast_recovery": "reno"}"#).unwrap();
        assert_eq!(c.fast_recovery, FastRecovery::Reno);
    }

    #[test]
    fn validation_names_field_value_and_accepted_range() {
        let c = TcpConfig { mss: 0, ..Default::default() };
        let e = c.validate("flows.0.tcp").unwrap_err();
        assert_eq!(e.field, "flows.0.tcp.mss");
        assert!(e.msg.contains("MSS 0") && e.msg.contains("1..=65483"), "{}", e.msg);

        let c = TcpConfig { sndbuf_bytes: 0, ..Default::default() };
        let e = c.validate("t").unwrap_err();
        assert_eq!(e.field, "t.sndbuf_bytes");
        assert!(e.msg.contains("0 B"));

        let c = TcpConfig { rcvbuf_bytes: 0, ..Default::default() };
        assert_eq!(c.validate("t").unwrap_err().field, "t.rcvbuf_bytes");
    }

    #[test]
    fn unknown_cc_lists_registry() {
        let c = TcpConfig { cc: CcConfig { name: "vegass".into(), params: BTreeMap::new() }, ..Default::default() };
        let e = c.validate("t").unwrap_err();
        assert_eq!(e.field, "t.cc.name");
        assert!(e.msg.contains("vegass") && e.msg.contains("reno") && e.msg.contains("newreno"), "{}", e.msg);
    }

    #[test]
    fn unknown_cc_param_lists_algorithm_params() {
        let mut params = BTreeMap::new();
        params.insert("beta".to_string(), serde_json::json!(0.7));
        let c = TcpConfig { cc: CcConfig { name: "reno".into(), params }, ..Default::default() };
        let e = c.validate("t").unwrap_err();
        assert_eq!(e.field, "t.cc.params.beta");
        assert!(e.msg.contains("reno") && e.msg.contains("no parameters"), "{}", e.msg);
    }
}
