//! UDP over the engine: exact delays, queueing theory, determinism.

mod common;
use ccsim::config::*;
use ccsim::qdisc::DropRule;
use common::*;

#[test]
fn idle_path_delay_is_propagation_plus_serialisation() {
    // Dumbbell: 10 Gbit/s access links with 1 ms, bottleneck 1.5 Mbit/s with 50 ms.
    // A 186-byte datagram every 20 ms never queues, so each one sees exactly
    //   access:     186*8/10e9 s = 148.8 ns -> 149 ns (rounded up) + 1 ms
    //   bottleneck: 186*8/1.5e6 s = 992 us + 50 ms
    //   access:     149 ns + 1 ms
    let topo = TopologyConfig::Dumbbell {
        pairs: 1,
        bottleneck: BottleneckConfig {
            down: link(1_500_000, 50 * MS, droptail(20_000, DropRule::BytesStrict)),
            up: link(256_000, 50 * MS, droptail(20_000, DropRule::BytesStrict)),
        },
        access: AccessConfig { delay_ns: MS, ..Default::default() },
    };
    let cfg = config(1, 10 * SEC, topo, vec![udp_flow("cbr", "srv0", "cli0", cbr(186, 20 * MS, Jitter::None))]);
    let sim = run(&cfg);
    let d = delays(&sim, 0);
    let expect = 149 + MS + 992_000 + 50 * MS + 149 + MS;
    // Every datagram written early enough to arrive before the end arrived.
    let arrivable = sim.traces.packets.t_write.iter().filter(|&&t| t + expect <= 10 * SEC).count();
    assert_eq!(d.len(), arrivable);
    assert!(arrivable >= 497);
    assert!(d.iter().all(|&x| x == expect), "delays {:?} != {expect}", &d[..3]);
}

#[test]
fn burst_drains_at_exactly_the_link_rate() {
    // 20 back-to-back 1500-byte packets (a CBR with a 1 ns interval for 20 ns) into a
    // 100 Mbit/s link with 10 ms delay: packet k (0-based) arrives at
    // k*1 ns (write) ... serialisation ends at (k+1)*120 us, so its delay is
    // (k+1)*120_000 - k + 10 ms.
    let fwd = link(100_000_000, 10 * MS, droptail(100, DropRule::Packets));
    let mut flow = udp_flow("burst", "a", "b", cbr(1500, 1, Jitter::None));
    flow.stop_ns = Some(20);
    let sim = run(&config(1, SEC, two_nodes(fwd), vec![flow]));
    let d = delays(&sim, 0);
    assert_eq!(d.len(), 20);
    for (k, &x) in d.iter().enumerate() {
        let k = k as u64;
        assert_eq!(x, (k + 1) * 120_000 - k + 10 * MS, "packet {k}");
    }
    // Departure spacing on the wire is exactly one serialisation time.
    let p = &sim.traces.packets;
    for k in 1..20 {
        assert_eq!(p.t_arrive[k] - p.t_arrive[k - 1], 120_000);
    }
}

#[test]
fn drop_tail_limit_drops_the_excess_of_a_burst() {
    // 30 packets at once into a 10-packet queue: the first goes straight into
    // service, 10 wait, the remaining 19 are dropped.
    let fwd = link(100_000_000, 0, droptail(10, DropRule::Packets));
    let mut flow = udp_flow("burst", "a", "b", cbr(1500, 1, Jitter::None));
    flow.stop_ns = Some(30);
    let sim = run(&config(1, SEC, two_nodes(fwd), vec![flow]));
    assert_eq!(delays(&sim, 0).len(), 11);
    assert_eq!(sim.traces.drops.t.len(), 19);
}

/// Mean waiting time in queue of a Poisson stream over a link, measured as
/// delay minus the packet's own serialisation.
fn mean_wait(load: f64, exp_sizes: bool, seed: u64) -> (f64, f64) {
    let rate = 100_000_000u64;
    let size = 1000u32;
    let service_s = size as f64 * 8.0 / rate as f64; // 80 us
    let interval = (service_s / load * 1e9).round() as u64;
    let fwd = link(rate, 0, droptail(1_000_000, DropRule::Packets));
    let app = AppConfig::Cbr {
        size_bytes: size,
        interval_ns: interval,
        jitter: Jitter::Exponential,
        size_dist: if exp_sizes { SizeDist::Exponential } else { SizeDist::Fixed },
    };
    let sim = run(&config(seed, 400 * SEC, two_nodes(fwd), vec![udp_flow("poisson", "a", "b", app)]));
    let p = &sim.traces.packets;
    let mut sum = 0.0;
    let mut n = 0.0;
    for i in 0..p.len() {
        if p.t_arrive[i] != u64::MAX {
            let own = ccsim::time::tx_time_ns(p.bytes[i], rate) as f64;
            sum += (p.t_arrive[i] - p.t_write[i]) as f64 - own;
            n += 1.0;
        }
    }
    (sum / n * 1e-9, service_s)
}

#[test]
fn mm1_and_md1_mean_waiting_time_match_closed_forms() {
    // M/M/1: Wq = rho/(mu - lambda) = rho * S / (1 - rho).
    // M/D/1: Wq = rho * S / (2 (1 - rho)) (Pollaczek-Khinchine).
    // 400 s at 100 Mbit/s with 1000-byte packets is 2.5M (50%) to 4.5M (90%)
    // packets; at rho = 0.9 the relative standard error of the mean wait over such
    // a run is below 1% (waits are correlated over ~1/(1-rho)^2 = 100 service
    // times), so 2% is a fair bound.
    for (load, exp_sizes) in [(0.5, true), (0.9, true), (0.5, false), (0.9, false)] {
        let (w, s) = mean_wait(load, exp_sizes, 11);
        let theory = if exp_sizes { load * s / (1.0 - load) } else { load * s / (2.0 * (1.0 - load)) };
        let rel = (w - theory).abs() / theory;
        println!(
            "load {load} {}: Wq = {:.3} us, theory {:.3} us, rel err {:.4}",
            if exp_sizes { "M/M/1" } else { "M/D/1" },
            w * 1e6,
            theory * 1e6,
            rel
        );
        assert!(rel < 0.02, "load {load} exp {exp_sizes}: {w} vs {theory}");
    }
}

#[test]
fn same_seed_same_run_different_seed_different_run() {
    let mk = |seed| {
        let fwd = link(10_000_000, MS, droptail(20, DropRule::Packets));
        let app = cbr(1000, 900_000, Jitter::Exponential);
        run(&config(seed, 5 * SEC, two_nodes(fwd), vec![udp_flow("p", "a", "b", app)]))
    };
    let (a, b, c) = (mk(1), mk(1), mk(2));
    assert_eq!(a.traces.packets.t_arrive, b.traces.packets.t_arrive);
    assert_eq!(a.traces.drops.t, b.traces.drops.t);
    assert_ne!(a.traces.packets.t_write, c.traces.packets.t_write);
}

#[test]
fn adding_a_flow_does_not_change_another_flows_randomness() {
    let fwd = link(1_000_000_000, MS, droptail(1000, DropRule::Packets));
    let a = udp_flow("a", "a", "b", cbr(100, MS, Jitter::Exponential));
    let b = udp_flow("b", "a", "b", cbr(100, MS, Jitter::Exponential));
    let one = run(&config(5, SEC, two_nodes(fwd.clone()), vec![a.clone()]));
    let two = run(&config(5, SEC, two_nodes(fwd), vec![b, a]));
    let writes = |s: &ccsim::Simulation, f: u32| -> Vec<u64> {
        let p = &s.traces.packets;
        (0..p.len()).filter(|&i| p.flow[i] == f).map(|i| p.t_write[i]).collect()
    };
    assert_eq!(writes(&one, 0), writes(&two, 1));
}
