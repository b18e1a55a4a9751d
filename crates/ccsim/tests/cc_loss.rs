//! Loss-based congestion control through the whole engine: one bulk flow over a
//! dumbbell whose bottleneck drops every n-th packet (no queue build-up: ample
//! capacity and buffer), traced at every cwnd change.

mod common;
use ccsim::config::*;
use ccsim::loss::{LossAction, LossConfig};
use ccsim::qdisc::DropRule;
use ccsim::tcp::TcpConfig;
use common::*;

const RECOVERY: u8 = 3;

fn flow(cc: &str, params: serde_json::Value) -> FlowConfig {
    let mut c = TcpConfig::default();
    c.cc.name = cc.into();
    if let serde_json::Value::Object(m) = params {
        c.cc.params = m.into_iter().collect();
    }
    FlowConfig {
        name: "bulk".into(),
        src: "srv0".into(),
        dst: "cli0".into(),
        transport: TransportConfig::Tcp(c),
        app: AppConfig::Bulk { bytes: None },
        start_ns: 0,
        stop_ns: None,
    }
}

/// Bottleneck `rate_bps`, RTT 2 x `one_way_ns`, a `limit`-packet drop-tail queue,
/// every `every`-th data packet dropped.
fn path(rate_bps: u64, one_way_ns: u64, limit: u64, every: Option<u64>) -> TopologyConfig {
    let mut down = link(rate_bps, one_way_ns, droptail(limit, DropRule::Packets));
    down.loss = every.map(|every| LossConfig::Periodic { every, offset: None, action: LossAction::Drop });
    TopologyConfig::Dumbbell {
        pairs: 1,
        bottleneck: BottleneckConfig { down, up: link(rate_bps, one_way_ns, droptail(limit, DropRule::Packets)) },
        access: AccessConfig::default(),
    }
}

fn run_traced(cc: &str, params: serde_json::Value, duration_ns: u64, topo: TopologyConfig) -> ccsim::Simulation {
    let mut cfg = config(1, duration_ns, topo, vec![flow(cc, params)]);
    cfg.state_on_change = true;
    cfg.state_sample_ns = 100 * MS;
    run(&cfg)
}

/// (cwnd just before, ssthresh set, cwnd when recovery ended) for every fast-recovery
/// episode, from the state trace.
fn reductions(sim: &ccsim::Simulation) -> Vec<(f64, f64, f64)> {
    let st = &sim.traces.state;
    let mut out = vec![];
    let mut i = 1;
    while i < st.t.len() {
        if st.ca_state[i] == RECOVERY && st.ca_state[i - 1] < RECOVERY {
            let before = st.cwnd_pkts[i - 1];
            let ss = st.ssthresh_pkts[i];
            let mut j = i;
            while j < st.t.len() && st.ca_state[j] == RECOVERY {
                j += 1;
            }
            if j < st.t.len() && st.ca_state[j] < RECOVERY {
                out.push((before, ss, st.cwnd_pkts[j]));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Every reduction in steady state (after the first `skip`) cuts to `beta(cwnd)`
/// within integer rounding; returns the mean ratio.
fn check_beta(name: &str, sim: &ccsim::Simulation, skip: usize, beta: impl Fn(f64) -> f64) -> f64 {
    let r = reductions(sim);
    assert!(r.len() > skip + 3, "{name}: only {} reductions", r.len());
    let mut sum = 0.0;
    for &(before, ss, after) in &r[skip..] {
        let want = beta(before);
        assert!((ss - want * before).abs() <= 1.0, "{name}: ssthresh {ss} after cwnd {before}, want {want}");
        assert!((after - ss).abs() <= 1.0, "{name}: cwnd {after} at the end of recovery, ssthresh {ss}");
        sum += after / before;
    }
    let mean = sum / (r.len() - skip) as f64;
    println!("{name}: {} reductions, mean cwnd after/before {mean:.4}", r.len() - skip);
    mean
}

#[test]
fn reno_and_cubic_reduce_by_beta_in_the_simulator() {
    // 1 Gbit/s, RTT 40 ms, 1/2000 loss: cwnd well above every algorithm's low window.
    let topo = || path(100_000_000, 20 * MS, 2000, Some(2000));
    let sim = run_traced("reno", serde_json::json!({}), 10 * SEC, topo());
    let m = check_beta("reno", &sim, 1, |_| 0.5);
    assert!((m - 0.5).abs() < 0.02);
    let sim = run_traced("cubic", serde_json::json!({}), 10 * SEC, topo());
    let m = check_beta("cubic", &sim, 1, |_| 717.0 / 1024.0);
    assert!((m - 0.7).abs() < 0.01);
}
