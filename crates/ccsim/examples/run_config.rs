//! Runs a simulator config (the JSON `Scenario.to_sim_config` writes) and prints run
//! statistics: the engine alone, for profiling (`valgrind --tool=callgrind`, `perf`).
//!
//!     cargo run --release -p ccsim --example run_config -- config.json

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
