//! The pre-flight estimate: memory and events of a run, from its config alone,
//! in time linear in the number of flows and without building anything. A run
//! that would not fit in the machine's available memory is refused before it
//! allocates, with the estimate and what to change in the message (a 1 ns
//! sampling interval or a million flows must not end in the kernel's OOM killer).
//!
//! The figures are estimates: per-object sizes were measured (`ccbench bench -w
//! scale`) and trace rows follow from the sampling intervals and the applications'
//! rates; TCP traffic is assumed to fill the topology's narrow links.

use crate::config::{AppConfig, PeriodDist, SimConfig, TopologyConfig, TransportConfig};
use crate::error::ConfigError;

/// Heap bytes per link (link, qdisc, spec, name) and per node (name, index,
/// route entry): measured on a 10,000-pair dumbbell.
const LINK_BYTES: f64 = 600.0;
const NODE_BYTES: f64 = 120.0;
/// Per flow (config, sender, receiver, scoreboard, app): measured.
const TCP_FLOW_BYTES: f64 = 6_500.0;
const UDP_FLOW_BYTES: f64 = 1_000.0;
/// Bytes of one row of each trace, summed over its columns.
const STATE_ROW: f64 = 95.0;
const PACKET_ROW: f64 = 48.0;
const QUEUE_ROW: f64 = 24.0;
/// Traces grow by doubling (on average 1.5x their size); handing them to Python
/// copies every column once into numpy and once more into the tables.
const VEC_SLACK: f64 = 1.5;
const PYTHON_COPIES: f64 = 2.0;
/// Packet size assumed where a rate becomes packets (a full Ethernet frame).
const PKT_BYTES: f64 = 1500.0;

/// What a run will cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Estimate {
    pub nodes: u64,
    pub links: u64,
    pub flows: u64,
    /// Rows of the traces.
    pub state_rows: f64,
    pub packet_rows: f64,
    pub queue_rows: f64,
    /// Bytes of the simulator's structures (topology, routes, flows).
    pub setup_bytes: f64,
    /// Bytes of the traces in the engine.
    pub trace_bytes: f64,
    /// Peak bytes of a run through Python (engine + tables).
    pub total_bytes: f64,
    /// Data packets the topology can carry in the run, and events for them.
    pub packets: f64,
    pub events: f64,
}

impl Estimate {
    pub fn of(cfg: &SimConfig) -> Estimate {
        let dur = cfg.duration_ns as f64;
        let (nodes, links, core, hops, capacity_bps) = shape(&cfg.topology);
        let mut e = Estimate { nodes, links, flows: cfg.flows.len() as u64, ..Default::default() };
        let mut offered_bps = 0.0;
        let mut flow_bytes = 0.0;
        for f in &cfg.flows {
            let start = f.start_ns.min(cfg.duration_ns) as f64;
            let stop = f.stop_ns.unwrap_or(cfg.duration_ns).min(cfg.duration_ns) as f64;
            let active = (stop - start).max(0.0);
            let (msgs_per_ns, bps) = app_rate(&f.app, active);
            if let TransportConfig::Tcp(_) = f.transport {
                flow_bytes += TCP_FLOW_BYTES * f.connections as f64;
                if cfg.state_sample_ns > 0 {
                    // TCP is sampled from its start to the run's end.
                    e.state_rows += f.connections as f64 * ((dur - start).max(0.0) / cfg.state_sample_ns as f64).ceil();
                }
            } else {
                flow_bytes += UDP_FLOW_BYTES;
            }
            e.packet_rows += msgs_per_ns * active;
            offered_bps += bps.min(capacity_bps);
        }
        e.packets = offered_bps.min(capacity_bps) * dur * 1e-9 / (8.0 * PKT_BYTES);
        e.events = e.packets * (hops + 1.0);
        if cfg.state_on_change {
            // About one cwnd change per ACK, one ACK per two data packets.
            e.state_rows += e.packets / 2.0;
        }
        if cfg.queue_sample_ns > 0 {
            // Samples at 0, s, 2s, ... before the end.
            e.queue_rows = monitored(&cfg.topology) as f64 * (dur / cfg.queue_sample_ns as f64).ceil();
        }
        e.setup_bytes = LINK_BYTES * links as f64 + NODE_BYTES * nodes as f64 + 12.0 * (core as f64).powi(2) + flow_bytes;
        let rows = e.state_rows * STATE_ROW + e.packet_rows * PACKET_ROW + e.queue_rows * QUEUE_ROW;
        e.trace_bytes = rows * VEC_SLACK;
        e.total_bytes = e.setup_bytes + e.trace_bytes + rows * PYTHON_COPIES;
        e
    }

    /// Refuses a run that would not fit in `available` bytes, naming what to change.
    pub fn check(&self, cfg: &SimConfig, available: f64) -> Result<(), ConfigError> {
        if self.total_bytes <= available {
            return Ok(());
        }
        let parts = [
            (self.state_rows * STATE_ROW, "run.state_sample", "TCP state samples"),
            (self.packet_rows * PACKET_ROW, "flows", "message rows"),
            (self.queue_rows * QUEUE_ROW, "run.queue_sample", "queue samples"),
            (self.setup_bytes, "flows", "topology and flows"),
        ];
        let (_, field, what) = parts.iter().cloned().fold((0.0, "", ""), |a, b| if b.0 > a.0 { b } else { a });
        let advice = match field {
            "run.state_sample" => format!(
                "raise run.state_sample (now {}), shorten run.duration (now {}) or use fewer TCP flows",
                fmt_ns(cfg.state_sample_ns),
                fmt_ns(cfg.duration_ns)
            ),
            "run.queue_sample" => format!(
                "raise run.queue_sample (now {}) or shorten run.duration (now {})",
                fmt_ns(cfg.queue_sample_ns),
                fmt_ns(cfg.duration_ns)
            ),
            _ => format!("use fewer flows or hosts, or shorten run.duration (now {})", fmt_ns(cfg.duration_ns)),
        };
        Err(ConfigError::new(
            field,
            format!(
                "this run needs about {} of memory ({what}: the largest part; {}) but {} is available: {advice}",
                fmt_bytes(self.total_bytes),
                self.summary(),
                fmt_bytes(available)
            ),
        ))
    }

    /// One line: what the run will hold and do.
    pub fn summary(&self) -> String {
        format!(
            "{} nodes, {} links, {} flows; {:.3e} state rows, {:.3e} message rows, {:.3e} queue rows; ~{:.2e} events",
            self.nodes, self.links, self.flows, self.state_rows, self.packet_rows, self.queue_rows, self.events
        )
    }
}

/// Messages per ns and bits per second an application offers while active.
fn app_rate(app: &AppConfig, active_ns: f64) -> (f64, f64) {
    let per_msg = |size: f64, gap_ns: f64| {
        let gap = gap_ns.max(1.0);
        (1.0 / gap, size * 8.0 / gap * 1e9)
    };
    match app {
        AppConfig::Cbr { size_bytes, interval_ns, .. } => per_msg(*size_bytes as f64, *interval_ns as f64),
        AppConfig::OnOff { size_bytes, peak_rate_bps, on, off } => {
            let mean = |p: &PeriodDist| match p {
                PeriodDist::Exponential { mean_ns } | PeriodDist::Pareto { mean_ns, .. } => *mean_ns as f64,
            };
            let duty = mean(on) / (mean(on) + mean(off)).max(1.0);
            let bps = *peak_rate_bps as f64 * duty;
            (bps / 8.0 / (*size_bytes as f64).max(1.0) * 1e-9, bps)
        }
        // A greedy sender writes no message rows; a sized one offers its bytes.
        AppConfig::Bulk { bytes: None } => (0.0, f64::INFINITY),
        AppConfig::Bulk { bytes: Some(b) } => (0.0, *b as f64 * 8.0 / active_ns.max(1.0) * 1e9),
        // At most one response per think time.
        AppConfig::Web { size_bytes, think_ns, .. } => per_msg(*size_bytes as f64, *think_ns as f64),
        AppConfig::Trace { times_ns, sizes_bytes, repeat } => {
            let span = times_ns.last().copied().unwrap_or(0) as f64;
            let bytes: f64 = sizes_bytes.iter().map(|&s| s as f64).sum();
            let n = times_ns.len() as f64;
            if *repeat && span > 0.0 {
                (n / span, bytes * 8.0 / span * 1e9)
            } else {
                (n / active_ns.max(1.0), bytes * 8.0 / active_ns.max(1.0) * 1e9)
            }
        }
    }
}

/// (nodes, links, core routers, hops of a typical path, bits/s the narrow links carry).
fn shape(t: &TopologyConfig) -> (u64, u64, u64, f64, f64) {
    match t {
        TopologyConfig::Dumbbell { pairs, bottleneck, .. } => {
            let p = *pairs as u64;
            (2 + 2 * p, 2 + 4 * p, 2, 3.0, bottleneck.down.rate_bps as f64 + bottleneck.up.rate_bps as f64)
        }
        TopologyConfig::ParkingLot { hops, hop_links, reverse_links, .. } => {
            let k = *hops as u64;
            let cap: f64 = hop_links.iter().chain(reverse_links).map(|l| l.rate_bps as f64).sum();
            (3 * k + 3, 6 * k + 4, k + 1, k as f64 + 2.0, cap)
        }
        TopologyConfig::Graph { nodes, links, .. } => {
            let cap: f64 = links.iter().map(|l| l.link.rate_bps as f64).sum();
            (nodes.len() as u64, links.len() as u64, nodes.len() as u64, 3.0, cap)
        }
        TopologyConfig::LeafSpine { leaves, spines, hosts_per_leaf, host_link, .. } => {
            let (l, s, h) = (*leaves as u64, *spines as u64, (*leaves as u64) * (*hosts_per_leaf as u64));
            (h + l + s, 2 * h + 2 * l * s, l + s, 4.0, h as f64 * host_link.rate_bps as f64)
        }
        TopologyConfig::FatTree { k, host_link, .. } => {
            let (k, half) = (*k as u64, *k as u64 / 2);
            let hosts = k * half * half;
            (hosts + 5 * k * k / 4, 2 * hosts + 4 * k * half * half, 5 * k * k / 4, 6.0, hosts as f64 * host_link.rate_bps as f64)
        }
    }
}

/// Links whose queue is sampled.
fn monitored(t: &TopologyConfig) -> u64 {
    match t {
        TopologyConfig::Dumbbell { bottleneck, .. } => bottleneck.down.monitor as u64 + bottleneck.up.monitor as u64,
        TopologyConfig::ParkingLot { hops, hop_links, reverse_links, .. } => {
            let per = |v: &Vec<crate::config::LinkConfig>| {
                if v.len() == 1 {
                    v[0].monitor as u64 * *hops as u64
                } else {
                    v.iter().filter(|l| l.monitor).count() as u64
                }
            };
            per(hop_links) + per(reverse_links)
        }
        TopologyConfig::Graph { links, .. } => links.iter().filter(|l| l.link.monitor).count() as u64,
        TopologyConfig::LeafSpine { .. } | TopologyConfig::FatTree { .. } => {
            let (_, links, _, _, _) = shape(t);
            let (host, fabric) = match t {
                TopologyConfig::LeafSpine { host_link, fabric_link, .. }
                | TopologyConfig::FatTree { host_link, fabric_link, .. } => (host_link.monitor, fabric_link.monitor),
                _ => unreachable!(),
            };
            let hosts = match t {
                TopologyConfig::LeafSpine { leaves, hosts_per_leaf, .. } => *leaves as u64 * *hosts_per_leaf as u64,
                TopologyConfig::FatTree { k, .. } => *k as u64 * (*k as u64 / 2).pow(2),
                _ => unreachable!(),
            };
            host as u64 * hosts + fabric as u64 * (links - 2 * hosts)
        }
    }
}

/// Bytes of memory the kernel could give this process now (`MemAvailable`), or
/// None where /proc/meminfo does not say.
pub fn available_memory() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024.0)
}

pub fn fmt_bytes(b: f64) -> String {
    match b {
        b if b >= 1e12 => format!("{:.1} TB", b / 1e12),
        b if b >= 1e9 => format!("{:.1} GB", b / 1e9),
        b if b >= 1e6 => format!("{:.0} MB", b / 1e6),
        b => format!("{:.0} kB", b / 1e3),
    }
}

fn fmt_ns(ns: u64) -> String {
    match ns {
        0 => "0s".into(),
        n if n % 1_000_000_000 == 0 => format!("{}s", n / 1_000_000_000),
        n if n % 1_000_000 == 0 => format!("{}ms", n / 1_000_000),
        n if n % 1_000 == 0 => format!("{}us", n / 1_000),
        n => format!("{n}ns"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dumbbell(pairs: u32, state_sample_ns: u64) -> SimConfig {
        let json = format!(
            r#"{{"seed": 1, "duration_ns": 1000000000, "state_sample_ns": {state_sample_ns},
            "topology": {{"kind": "dumbbell", "pairs": {pairs},
              "bottleneck": {{"down": {{"rate_bps": 10000000000, "delay_ns": 10000000}},
                             "up": {{"rate_bps": 10000000000, "delay_ns": 10000000}}}}}},
            "flows": [{{"name": "f", "src": "srv0", "dst": "cli0", "transport": {{"kind": "tcp"}},
                       "app": {{"kind": "bulk"}}}}]}}"#
        );
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn estimate_grows_linearly_and_names_the_sampling_interval() {
        let small = Estimate::of(&dumbbell(1_000, 10_000_000));
        let big = Estimate::of(&dumbbell(100_000, 10_000_000));
        let ratio = big.setup_bytes / small.setup_bytes;
        assert!((90.0..101.0).contains(&ratio), "{ratio}");
        let cfg = dumbbell(1, 1);
        let e = Estimate::of(&cfg);
        assert!((e.state_rows - 1e9).abs() < 10.0, "{}", e.state_rows);
        let err = e.check(&cfg, 8e9).unwrap_err();
        assert_eq!(err.field, "run.state_sample");
        assert!(err.msg.contains("now 1ns") && err.msg.contains("GB"), "{}", err.msg);
        assert!(Estimate::of(&dumbbell(10, 10_000_000)).check(&cfg, 8e9).is_ok());
    }
}
