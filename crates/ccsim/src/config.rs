//! The simulator's input: a fully resolved scenario with every unit converted to
//! integers (nanoseconds, bits per second, bytes). The Python `Scenario` produces
//! this as JSON (`Scenario.to_sim_config`); Rust tests build it directly.
//!
//! Unknown keys are errors everywhere (`deny_unknown_fields`), so a typo in a
//! scenario never silently falls back to a default.

use crate::link_jitter::JitterConfig;
use crate::link_rate::RateVarConfig;
use crate::loss::LossConfig;
use crate::qdisc::QdiscConfig;
use crate::tcp::TcpConfig;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    pub seed: u64,
    pub duration_ns: u64,
    /// Queue occupancy of monitored links is sampled at this interval (0 = never).
    #[serde(default = "default_queue_sample")]
    pub queue_sample_ns: u64,
    /// TCP state (cwnd, srtt, ...) is sampled at this interval (0 = never).
    #[serde(default = "default_state_sample")]
    pub state_sample_ns: u64,
    /// Also record a TCP state sample at every change of cwnd or CA state.
    #[serde(default)]
    pub state_on_change: bool,
    /// Links (by name) whose every packet departure is logged (packet-level checks
    /// such as ACK clocking; off by default because it grows with every packet).
    #[serde(default)]
    pub log_links: Vec<String>,
    /// Packet captures (pcap files) of links; none by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pcap: Vec<PcapConfig>,
    pub topology: TopologyConfig,
    pub flows: Vec<FlowConfig>,
}

/// A packet capture file of one or more links: every packet that leaves their
/// transmitters, in time order, with IPv4/TCP/UDP headers built from the simulated
/// packet (`crate::pcap`). Both directions of a link in one file are a tap on it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcapConfig {
    /// Link names, as in the `queue` and `drops` tables.
    pub links: Vec<String>,
    /// File to write (created or truncated).
    pub path: String,
    /// Bytes kept of each packet (headers first, then zero-filled payload).
    #[serde(default = "default_snaplen")]
    pub snaplen: u32,
    /// The file stops growing at this size (0 = no limit).
    #[serde(default)]
    pub max_bytes: u64,
}

fn default_snaplen() -> u32 {
    96
}

fn default_queue_sample() -> u64 {
    10_000_000
}
fn default_state_sample() -> u64 {
    10_000_000
}

/// One direction of a link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkConfig {
    pub rate_bps: u64,
    pub delay_ns: u64,
    #[serde(default)]
    pub queue: QdiscConfig,
    #[serde(default)]
    pub loss: Option<LossConfig>,
    /// Sample this link's queue into the `queue` table.
    #[serde(default)]
    pub monitor: bool,
    /// A time-varying rate (Mahimahi trace or schedule) instead of `rate_bps`, which
    /// then holds its long-run mean (what queue disciplines and models read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_var: Option<RateVarConfig>,
    /// Random delay around `delay_ns` (netem's jitter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterConfig>,
}

impl LinkConfig {
    /// A constant-rate link with a constant delay, a default queue and no loss.
    pub fn plain(rate_bps: u64, delay_ns: u64) -> LinkConfig {
        LinkConfig {
            rate_bps,
            delay_ns,
            queue: Default::default(),
            loss: None,
            monitor: false,
            rate_var: None,
            jitter: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BottleneckConfig {
    /// Server side to client side (`rtr_srv -> rtr_cli`), the ADSL downstream.
    pub down: LinkConfig,
    /// Client side to server side, the ADSL upstream.
    pub up: LinkConfig,
}

/// Access links between each host and its router (both directions alike).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessConfig {
    #[serde(default = "default_access_rate")]
    pub rate_bps: u64,
    /// One-way delay of every access link, unless `pair_delays_ns` gives one per pair.
    #[serde(default)]
    pub delay_ns: u64,
    /// Per-pair one-way access delay on the server side (index = pair).
    #[serde(default)]
    pub pair_delays_ns: Vec<u64>,
    #[serde(default = "default_access_queue")]
    pub queue: QdiscConfig,
    /// Random delay around the access delay, drawn per packet and per link (each
    /// direction of each host's access link its own stream): the hosts' stack and
    /// NIC latency, which keeps real senders from the exact phase lock a
    /// deterministic network shows (Floyd and Jacobson's phase effects).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<JitterConfig>,
}

fn default_access_rate() -> u64 {
    10_000_000_000
}
fn default_access_queue() -> QdiscConfig {
    QdiscConfig::Droptail(crate::qdisc::DropTailConfig { limit: 100_000, ..Default::default() })
}

impl Default for AccessConfig {
    fn default() -> Self {
        AccessConfig {
            rate_bps: default_access_rate(),
            delay_ns: 0,
            pair_delays_ns: Vec::new(),
            queue: default_access_queue(),
            jitter: None,
        }
    }
}

/// Topology. Node names the flows refer to:
/// - dumbbell: hosts `srv0..srv{N-1}` (server/Internet side) and `cli0..cli{N-1}`
///   (client/home side), routers `rtr_srv` and `rtr_cli`; the bottleneck `down` link is
///   `rtr_srv -> rtr_cli`. Link names: `bottleneck_down`, `bottleneck_up`,
///   `srv{i}_up`/`srv{i}_down` (host to router / router to host), `cli{i}_up`/`cli{i}_down`.
/// - parking lot with K bottlenecks: routers `r0..rK`, bottleneck `i` is `r{i} -> r{i+1}`
///   (link `hop{i}_fwd`, reverse `hop{i}_rev`); host `long_src` at `r0`, `long_dst` at
///   `rK`; cross-traffic hosts `x{i}_src` at `r{i}` and `x{i}_dst` at `r{i+1}`.
/// - graph: the nodes and links as given; routes by shortest propagation delay unless
///   listed explicitly.
/// - leaf-spine and fat tree: see `fabric.rs` for node and link names; routes by ECMP
///   (per-flow hashing over every shortest path).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    Dumbbell {
        pairs: u32,
        bottleneck: BottleneckConfig,
        #[serde(default)]
        access: AccessConfig,
    },
    ParkingLot {
        hops: u32,
        /// Forward bottleneck links, one per hop (or one, used for every hop).
        hop_links: Vec<LinkConfig>,
        /// Reverse direction links (ACK path), one per hop or one for all.
        reverse_links: Vec<LinkConfig>,
        #[serde(default)]
        access: AccessConfig,
    },
    Graph {
        nodes: Vec<String>,
        links: Vec<GraphLink>,
        #[serde(default)]
        routes: Vec<RouteConfig>,
    },
    /// Two-tier Clos: every leaf joined to every spine, `hosts_per_leaf` hosts per leaf.
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        /// Switch to host (the edge port, where incast queues); the host's NIC sends
        /// back at the same rate and delay through `nic_queue`.
        host_link: LinkConfig,
        /// Between switches, both directions.
        fabric_link: LinkConfig,
        /// The host NIC's queue (never the bottleneck by default).
        #[serde(default = "default_access_queue")]
        nic_queue: QdiscConfig,
    },
    /// Al-Fares et al.'s k-ary fat tree (SIGCOMM 2008): k pods of k/2 edge and k/2
    /// aggregation switches, (k/2)^2 core switches, k^3/4 hosts.
    FatTree {
        k: u32,
        host_link: LinkConfig,
        fabric_link: LinkConfig,
        #[serde(default = "default_access_queue")]
        nic_queue: QdiscConfig,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLink {
    #[serde(default)]
    pub name: Option<String>,
    pub from: String,
    pub to: String,
    #[serde(flatten)]
    pub link: LinkConfig,
}

/// Static route: at node `at`, packets for `dst` leave on the link to `next`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteConfig {
    pub at: String,
    pub dst: String,
    pub next: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub name: String,
    pub src: String,
    pub dst: String,
    pub transport: TransportConfig,
    pub app: AppConfig,
    #[serde(default)]
    pub start_ns: u64,
    /// The application stops generating data at this time (None = run end).
    #[serde(default)]
    pub stop_ns: Option<u64>,
    /// Split-N: each message is written as this many pieces back to back (TCP only).
    #[serde(default = "one")]
    pub split: u32,
    /// Parallel connections carrying this flow's messages (TCP only); the receiver
    /// delivers messages in message order across connections.
    #[serde(default = "one")]
    pub connections: u32,
    #[serde(default)]
    pub scheduler: Scheduler,
}

fn one() -> u32 {
    1
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TransportConfig {
    Udp {
        /// IP + UDP header bytes added to each datagram payload (0: `size_bytes` is
        /// the whole IP packet, as the Stewart study counts its 186-byte CBR packets).
        #[serde(default)]
        header_bytes: u32,
    },
    Tcp(TcpConfig),
}

/// Distribution of the time between successive writes of a CBR source.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum Jitter {
    /// Exactly `interval_ns` apart.
    None,
    /// Normal around the interval (Stewart: N(20 ms, 1 ms)), truncated at 0.
    Normal { sd_ns: u64 },
    /// Exponential with mean `interval_ns`: a Poisson process.
    Exponential,
    /// Uniform on `[interval - width/2, interval + width/2]`.
    Uniform { width_ns: u64 },
    /// The gap itself drawn from an empirical distribution given by its quantile
    /// function (linear between the points), e.g. fitted to a published table.
    Empirical { quantiles: Quantiles },
}

/// An empirical distribution by points of its quantile function: `value[i]` is the
/// `p[i]`-quantile; `p` runs from 0 to 1 and both are non-decreasing. Sampling draws
/// u ~ U(0,1) and interpolates linearly.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Quantiles {
    pub p: Vec<f64>,
    pub value: Vec<f64>,
}

impl Default for Jitter {
    fn default() -> Self {
        Jitter::None
    }
}

/// Distribution of message sizes.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Default)]
#[serde(rename_all = "snake_case")]
pub enum SizeDist {
    #[default]
    Fixed,
    /// Exponential with mean `size_bytes` (rounded, at least 1 byte): M/M/1 arrivals.
    Exponential,
    /// Pareto with mean `size_bytes` and this shape (> 1): heavy-tailed web responses.
    Pareto { shape: f64 },
    /// Lognormal with mean `size_bytes` and this sigma of the underlying normal.
    Lognormal { sigma: f64 },
    /// Empirical quantile function (bytes), e.g. fitted to a published table.
    Empirical { quantiles: Quantiles },
}

/// Distribution of on/off period lengths.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(tag = "dist", rename_all = "snake_case", deny_unknown_fields)]
pub enum PeriodDist {
    Exponential {
        mean_ns: u64,
    },
    /// Pareto with the given mean and shape (> 1).
    Pareto {
        mean_ns: u64,
        shape: f64,
    },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppConfig {
    /// Constant bit rate: a message of `size_bytes` every `interval_ns` (with jitter).
    Cbr {
        size_bytes: u32,
        interval_ns: u64,
        #[serde(default)]
        jitter: Jitter,
        #[serde(default)]
        size_dist: SizeDist,
    },
    /// On/off source: while on, `size_bytes` packets at `peak_rate_bps`.
    OnOff { size_bytes: u32, peak_rate_bps: u64, on: PeriodDist, off: PeriodDist },
    /// Greedy (or `bytes` then stop) sender.
    Bulk {
        #[serde(default)]
        bytes: Option<u64>,
    },
    /// Request/response sessions over one TCP connection: a response of a size drawn
    /// from `size_dist` (mean `size_bytes`), and when it has been delivered a think
    /// time (exponential, mean `think_ns`) before the next one.
    Web {
        size_bytes: u32,
        #[serde(default)]
        size_dist: SizeDist,
        think_ns: u64,
    },
    /// Replay of a trace of message times (from the flow's start) and sizes, e.g. the
    /// frames of a VBR video.
    Trace {
        times_ns: Vec<u64>,
        sizes_bytes: Vec<u32>,
        /// Start again from the beginning when the trace ends.
        #[serde(default)]
        repeat: bool,
    },
}

/// How a multi-connection flow picks the connection for each message (Brosh et al.).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// Message i goes to connection i mod N.
    #[default]
    RoundRobin,
    /// The connection with the least unsent-plus-unacknowledged data, skipping
    /// connections in RTO recovery ("intelligent" parallel connections).
    LeastBacklog,
}
