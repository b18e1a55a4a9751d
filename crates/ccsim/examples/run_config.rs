//! Runs a simulator config (the JSON `Scenario.to_sim_config` writes) and prints run
//! statistics: the engine alone, for profiling (`valgrind --tool=callgrind`, `perf`).
//!
//!     cargo run --release -p ccsim --example run_config -- config.json [--digest]
//!
//! `--digest` also prints every flow's summary and a checksum of the packet, drop and
//! state traces: two builds that print the same digest ran the same simulation (for
//! checking that an optimisation changed nothing).

use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).unwrap_or_else(|| {
        eprintln!("usage: run_config CONFIG.json");
        std::process::exit(2)
    });
    let json = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        eprintln!("error: {path}: {e}");
        std::process::exit(2)
    });
    let start = Instant::now();
    match ccsim::run_json(&json, &mut |_| true) {
        Ok((sim, stats)) => {
            let wall = start.elapsed().as_secs_f64();
            if std::env::args().any(|a| a == "--digest") {
                print_digest(&sim);
            }
            println!(
                "events {} wall {:.3}s ({:.2} M events/s), bottleneck packets {} ({:.0}/s, {} dropped), link packets {}, flows {}",
                stats.events,
                wall,
                stats.events as f64 / wall / 1e6,
                stats.monitored_tx_pkts,
                stats.monitored_tx_pkts as f64 / wall,
                stats.monitored_drops,
                stats.link_tx_pkts,
                sim.flow_names().len()
            );
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2)
        }
    }
}

fn print_digest(sim: &ccsim::Simulation) {
    for f in sim.flow_summaries() {
        println!(
            "{} sent {} delivered {} pkts {} dropped {} retrans {} loss_events {} rto {} rtt50 {} rtt95 {}",
            f.name,
            f.bytes_sent,
            f.bytes_delivered,
            f.pkts_sent,
            f.pkts_dropped,
            f.retrans_bytes,
            f.loss_events,
            f.timeouts,
            f.rtt_p50_ns,
            f.rtt_p95_ns
        );
    }
    // FNV-1a over the traces' columns.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
    };
    let tr = &sim.traces;
    for i in 0..tr.packets.len() {
        eat(tr.packets.t_first_tx[i]);
        eat(tr.packets.t_arrive[i]);
        eat(tr.packets.t_deliver[i]);
    }
    for i in 0..tr.drops.t.len() {
        eat(tr.drops.t[i]);
        eat(tr.drops.seq[i]);
    }
    for i in 0..tr.state.t.len() {
        eat(tr.state.t[i]);
        eat(tr.state.cwnd_pkts[i].to_bits());
    }
    println!(
        "trace digest {h:016x} (packets {}, drops {}, state {})",
        tr.packets.len(),
        tr.drops.t.len(),
        tr.state.t.len()
    );
}
