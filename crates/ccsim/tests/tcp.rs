//! TCP flows through the whole engine.

mod common;
use ccsim::config::*;
use ccsim::qdisc::DropRule;
use ccsim::tcp::TcpConfig;
use common::*;

pub fn tcp_flow(name: &str, src: &str, dst: &str, cfg: TcpConfig, app: AppConfig) -> FlowConfig {
    flow(name, src, dst, TransportConfig::Tcp(cfg), app)
}

fn reno() -> TcpConfig {
    let mut c = TcpConfig::default();
    c.cc.name = "reno".into();
    c
}

fn dumbbell(rate_bps: u64, one_way_ns: u64, limit_pkts: u64) -> TopologyConfig {
    TopologyConfig::Dumbbell {
        pairs: 1,
        bottleneck: BottleneckConfig {
            down: link(rate_bps, one_way_ns, droptail(limit_pkts, DropRule::Packets)),
            up: link(rate_bps, one_way_ns, droptail(limit_pkts, DropRule::Packets)),
        },
        access: AccessConfig::default(),
    }
}

#[test]
fn one_reno_flow_fills_a_one_bdp_drop_tail_bottleneck() {
    // 10 Mbit/s, RTT 40 ms: BDP = 50 000 B = 33.3 packets of 1500 B -> 34-packet queue.
    let cfg = config(
        1,
        60 * SEC,
        dumbbell(10_000_000, 20 * MS, 34),
        vec![tcp_flow("bulk", "srv0", "cli0", reno(), AppConfig::Bulk { bytes: None })],
    );
    let mut sim = ccsim::Simulation::new(&cfg).unwrap();
    sim.run(&mut |_| true);
    let s = &sim.flow_summaries()[0];
    // Utilisation of the bottleneck after the first 5 s of slow start.
    let goodput = s.bytes_delivered as f64 * 8.0 / 60.0;
    let util_wire = sim.link_tx_pkts("bottleneck_down").unwrap() as f64 * 1500.0 * 8.0 / (60.0 * 10e6);
    println!(
        "goodput {:.3} Mbit/s, wire utilisation {:.4}, loss events {}, timeouts {}",
        goodput / 1e6,
        util_wire,
        s.loss_events,
        s.timeouts
    );
    assert!(util_wire >= 0.99, "utilisation {util_wire}");
    assert_eq!(s.timeouts, 0);
    assert!(s.loss_events > 5);
}
