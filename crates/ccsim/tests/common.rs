//! Builders shared by the integration tests.
#![allow(dead_code)]

use ccsim::config::*;
use ccsim::qdisc::{DropRule, DropTailConfig, QdiscConfig};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;

pub fn link(rate_bps: u64, delay_ns: u64, queue: QdiscConfig) -> LinkConfig {
    LinkConfig { queue, monitor: true, ..LinkConfig::plain(rate_bps, delay_ns) }
}

pub fn droptail(limit: u64, rule: DropRule) -> QdiscConfig {
    QdiscConfig::Droptail(DropTailConfig { limit, rule, count_in_service: false })
}

/// A two-node graph `a -> b` (and `b -> a`) with the given forward link.
pub fn two_nodes(fwd: LinkConfig) -> TopologyConfig {
    let back = LinkConfig { monitor: false, ..fwd.clone() };
    TopologyConfig::Graph {
        nodes: vec!["a".into(), "b".into()],
        links: vec![
            GraphLink { name: Some("fwd".into()), from: "a".into(), to: "b".into(), link: fwd },
            GraphLink { name: Some("back".into()), from: "b".into(), to: "a".into(), link: back },
        ],
        routes: vec![],
    }
}

/// A flow starting at 0 with one connection.
pub fn flow(name: &str, src: &str, dst: &str, transport: TransportConfig, app: AppConfig) -> FlowConfig {
    FlowConfig {
        name: name.into(),
        src: src.into(),
        dst: dst.into(),
        transport,
        app,
        start_ns: 0,
        stop_ns: None,
        split: 1,
        connections: 1,
        scheduler: Default::default(),
    }
}

pub fn udp_flow(name: &str, src: &str, dst: &str, app: AppConfig) -> FlowConfig {
    flow(name, src, dst, TransportConfig::Udp { header_bytes: 0 }, app)
}

pub fn cbr(size_bytes: u32, interval_ns: u64, jitter: Jitter) -> AppConfig {
    AppConfig::Cbr { size_bytes, interval_ns, jitter, size_dist: SizeDist::Fixed }
}

pub fn config(seed: u64, duration_ns: u64, topology: TopologyConfig, flows: Vec<FlowConfig>) -> SimConfig {
    SimConfig {
        seed,
        duration_ns,
        queue_sample_ns: 10 * MS,
        state_sample_ns: 10 * MS,
        state_on_change: false,
        log_links: vec![],
        pcap: vec![],
        topology,
        flows,
    }
}

pub fn run(cfg: &SimConfig) -> ccsim::Simulation {
    let mut sim = ccsim::Simulation::new(cfg).expect("valid config");
    sim.run(&mut |_| true);
    sim
}

/// One-way delays (ns) of the delivered messages of flow `f`.
pub fn delays(sim: &ccsim::Simulation, f: u32) -> Vec<u64> {
    let p = &sim.traces.packets;
    (0..p.len())
        .filter(|&i| p.flow[i] == f && p.t_arrive[i] != u64::MAX)
        .map(|i| p.t_arrive[i] - p.t_write[i])
        .collect()
}

/// A greedy TCP flow with congestion control `cc` (registry name, default parameters).
pub fn bulk_tcp(name: &str, src: &str, dst: &str, cc: &str) -> FlowConfig {
    let mut t = ccsim::tcp::TcpConfig::default();
    t.cc.name = cc.into();
    flow(name, src, dst, TransportConfig::Tcp(t), AppConfig::Bulk { bytes: None })
}

/// A dumbbell of `pairs` pairs whose downstream bottleneck has `queue`; the upstream
/// direction (the ACKs) has a deep drop-tail buffer.
pub fn dumbbell_q(pairs: u32, rate_bps: u64, one_way_ns: u64, queue: ccsim::qdisc::QdiscConfig) -> TopologyConfig {
    TopologyConfig::Dumbbell {
        pairs,
        bottleneck: BottleneckConfig {
            down: link(rate_bps, one_way_ns, queue),
            up: link(rate_bps, one_way_ns, droptail(100_000, DropRule::Packets)),
        },
        access: AccessConfig::default(),
    }
}
