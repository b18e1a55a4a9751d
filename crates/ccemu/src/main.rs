//! `ccemu` command line.
//!
//! ```text
//! ccemu check                         what this machine supports (JSON)
//! ccemu bottleneck --config SIM.json --flows FLOWS.json --srv-ns NS --cli-ns NS --out DIR
//!                  [--ifname ccb0] [--spin-us 50] [--rt-prio 0]
//! ccemu probe tcp-send|tcp-recv|udp-send|udp-recv [--key value ...]
//! ```
//!
//! `bottleneck` protocol on stdin/stdout (driven by `ccbench.emu.runner`): it creates
//! one TUN device in each namespace and prints `READY`; the caller configures addresses
//! and writes `START <t0_ns>` (the run origin, CLOCK_MONOTONIC); the bottleneck forwards
//! until stdin closes or it gets SIGINT/SIGTERM, then writes its logs into `--out` and
//! prints `DONE`.

use ccemu::bottleneck::{self, Direction, Logs};
use ccemu::packet::FlowSpec;
use ccemu::pipe::Pipe;
use ccemu::probe::{self, ProbeArgs};
use ccemu::{addr_pair, sys, watch};
use ccsim::config::{SimConfig, TopologyConfig};
use ccsim::qdisc::AnyQdisc;
use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

fn die(msg: impl std::fmt::Display) -> ! {
    eprintln!("ccemu: error: {msg}");
    std::process::exit(2);
}

fn parse_kv(args: &[String]) -> HashMap<String, String> {
    let mut m = HashMap::new();
    let mut i = 0;
    while i < args.len() {
        let k = args[i].strip_prefix("--").unwrap_or_else(|| die(format!("unexpected argument {:?}", args[i])));
        if i + 1 < args.len() && !args[i + 1].starts_with("--") {
            m.insert(k.to_string(), args[i + 1].clone());
            i += 2;
        } else {
            m.insert(k.to_string(), "true".to_string());
            i += 1;
        }
    }
    m
}

fn get<T: std::str::FromStr>(m: &HashMap<String, String>, k: &str) -> Option<T> {
    m.get(k).map(|v| v.parse().unwrap_or_else(|_| die(format!("--{k}: cannot parse {v:?}"))))
}

fn need(m: &HashMap<String, String>, k: &str) -> String {
    m.get(k).cloned().unwrap_or_else(|| die(format!("--{k} is required")))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("check") => check(),
        Some("bottleneck") => bottleneck_cmd(&parse_kv(&args[1..])),
        Some("probe") if args.len() >= 2 => probe_cmd(&args[1], &parse_kv(&args[2..])),
        Some("--version") => println!("ccemu {}", env!("CARGO_PKG_VERSION")),
        _ => {
            eprintln!("usage: ccemu check | bottleneck --config F --flows F --srv-ns NS --cli-ns NS --out DIR | probe KIND ...");
            std::process::exit(2);
        }
    }
}

fn check() {
    let root = unsafe { libc::geteuid() } == 0;
    let tun = std::path::Path::new("/dev/net/tun").exists();
    let cc = probe::available_cc();
    let j = serde_json::json!({
        "root": root,
        "tun": tun,
        "netns_dir": std::path::Path::new("/var/run/netns").exists(),
        "congestion_controls": cc.split_whitespace().collect::<Vec<_>>(),
    });
    println!("{j}");
}

fn probe_cmd(kind: &str, m: &HashMap<String, String>) {
    sys::die_with_parent(libc::SIGTERM);
    let a = ProbeArgs {
        bind: get(m, "bind"),
        connect: get(m, "connect"),
        start: get(m, "start").unwrap_or_else(sys::mono_ns),
        stop: get(m, "stop").unwrap_or(u64::MAX),
        end: get(m, "end").unwrap_or(u64::MAX),
        out: need(m, "out"),
        cc: m.get("cc").cloned(),
        nodelay: get(m, "nodelay").unwrap_or(false),
        mss: get(m, "mss"),
        bytes: get(m, "bytes"),
        app: m.get("app").map(|j| serde_json::from_str(j).unwrap_or_else(|e| die(format!("--app: {e}")))),
        seed: get(m, "seed").unwrap_or(0),
        label: m.get("label").cloned().unwrap_or_default(),
        info_ns: get(m, "info-interval").unwrap_or(1_000_000),
        log_reads: get(m, "log-reads").unwrap_or(false),
        udp_payload: get(m, "udp-payload").unwrap_or(0),
        connect_at_start: get(m, "connect-at-start").unwrap_or(false),
    };
    let r = match kind {
        "tcp-send" => probe::tcp_send(&a),
        "tcp-recv" => probe::tcp_recv(&a),
        "udp-send" => probe::udp_send(&a),
        "udp-recv" => probe::udp_recv(&a),
        // another program's socket (iperf3): --pid, --bind its local address
        "tcp-watch" => watch::tcp_watch(&a, get(m, "pid").unwrap_or_else(|| die("--pid is required")), get(m, "data-after").unwrap_or(0)),
        _ => die(format!("unknown probe {kind:?}; accepted tcp-send, tcp-recv, udp-send, udp-recv, tcp-watch")),
    };
    if let Err(e) = r {
        die(e);
    }
}

fn build_pipe(cfg: &SimConfig, link: &ccsim::config::LinkConfig, name: &str, field: &str, t0: u64) -> Pipe {
    let q = AnyQdisc::build(
        &link.queue,
        link.rate_bps,
        ccsim::rng::stream(cfg.seed, &format!("link/{name}/qdisc")),
        &format!("{field}.queue"),
    )
    .unwrap_or_else(|e| die(e));
    let loss = link.loss.as_ref().map(|l| {
        ccsim::loss::LossModel::new(
            l,
            ccsim::rng::stream(cfg.seed, &format!("link/{name}/loss")),
            &format!("{field}.loss"),
        )
        .unwrap_or_else(|e| die(e))
    });
    let sample = if link.monitor { cfg.queue_sample_ns } else { 0 };
    let rate = link
        .rate_var
        .as_ref()
        .map(|r| ccsim::link_rate::RateModel::new(r, &format!("{field}.rate")).unwrap_or_else(|e| die(e)));
    // The same random stream as the simulator's link, so both draw the same delays.
    let delay = link.jitter.as_ref().map(|j| {
        ccsim::link_jitter::DelayModel::new(
            j,
            link.delay_ns,
            ccsim::rng::stream(cfg.seed, &format!("link/{name}/jitter")),
            &format!("{field}.jitter"),
        )
        .unwrap_or_else(|e| die(e))
    });
    Pipe::new(q, loss, link.rate_bps, link.delay_ns, sample, t0).with_variation(rate, delay)
}

fn bottleneck_cmd(m: &HashMap<String, String>) {
    let cfg_text = std::fs::read_to_string(need(m, "config")).unwrap_or_else(|e| die(format!("--config: {e}")));
    let cfg: SimConfig =
        serde_json::from_str(&cfg_text).unwrap_or_else(|e| die(format!("invalid simulator config: {e}")));
    let flows: Vec<FlowSpec> = match m.get("flows") {
        Some(p) => serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| die(format!("--flows: {e}"))))
            .unwrap_or_else(|e| die(format!("--flows: {e}"))),
        None => Vec::new(),
    };
    let (pairs, bn, access) = match &cfg.topology {
        TopologyConfig::Dumbbell { pairs, bottleneck, access } => (*pairs, bottleneck.clone(), access.clone()),
        TopologyConfig::ParkingLot { .. } => {
            die("topology kind \"parking_lot\" is not supported by the emulator (accepted: dumbbell)")
        }
        TopologyConfig::Graph { .. } => {
            die("topology kind \"graph\" is not supported by the emulator (accepted: dumbbell)")
        }
        TopologyConfig::LeafSpine { .. } => {
            die("topology kind \"leaf_spine\" is not supported by the emulator (accepted: dumbbell)")
        }
        TopologyConfig::FatTree { .. } => {
            die("topology kind \"fat_tree\" is not supported by the emulator (accepted: dumbbell)")
        }
    };
    if pairs == 0 || pairs > ccemu::MAX_PAIRS {
        die(format!(
            "topology.pairs = {pairs}: the emulator supports 1..={} pairs (one /16 per side)",
            ccemu::MAX_PAIRS
        ));
    }
    ccemu::capture::check(&cfg.pcap).unwrap_or_else(|e| die(e));
    let out = PathBuf::from(need(m, "out"));
    std::fs::create_dir_all(&out).unwrap_or_else(|e| die(format!("--out: {e}")));
    let ifname = m.get("ifname").cloned().unwrap_or_else(|| "ccb0".into());
    let spin_ns = get::<u64>(m, "spin-us").unwrap_or(50) * 1000;
    let rt_prio: i32 = get(m, "rt-prio").unwrap_or(0);

    let srv_ns = need(m, "srv-ns");
    let cli_ns = need(m, "cli-ns");
    let srv_fd = sys::in_netns(&srv_ns, || sys::open_tun(&ifname)).unwrap_or_else(|e| die(e));
    let cli_fd = sys::in_netns(&cli_ns, || sys::open_tun(&ifname)).unwrap_or_else(|e| die(e));
    for fd in [&srv_fd, &cli_fd] {
        sys::set_nonblocking(fd.as_raw_fd()).unwrap_or_else(|e| die(e));
    }
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
    println!("READY");
    io::stdout().flush().ok();

    // Wait for "START <t0>".
    let stdin = io::stdin();
    let mut line = String::new();
    if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
        die("stdin closed before START");
    }
    let t0: u64 = line
        .trim()
        .strip_prefix("START")
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or_else(|| die(format!("expected `START <t0_ns>`, got {line:?}")));

    let srv_delay = {
        let pd = access.pair_delays_ns.clone();
        let d = access.delay_ns;
        move |a: u32| -> u64 {
            match addr_pair(a) {
                Some((1, i)) => pd.get(i as usize).copied().unwrap_or(d),
                _ => 0,
            }
        }
    };
    let cli_delay = {
        let d = access.delay_ns;
        move |a: u32| -> u64 {
            match addr_pair(a) {
                Some((2, _)) => d,
                _ => 0,
            }
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (captures, [tap_down, tap_up]) = ccemu::capture::start(&cfg.pcap).unwrap_or_else(|e| die(e));
    let down = Direction {
        link: 0,
        monitor: bn.down.monitor,
        in_fd: srv_fd.as_raw_fd(),
        out_fd: cli_fd.as_raw_fd(),
        pipe: build_pipe(&cfg, &bn.down, "bottleneck_down", "topology.bottleneck.down", t0),
        flows: flows.clone(),
        pre: Box::new(srv_delay.clone()),
        post: Box::new(cli_delay.clone()),
        spin_ns,
        t0,
        tap: tap_down,
    };
    let up = Direction {
        link: 1,
        monitor: bn.up.monitor,
        in_fd: cli_fd.as_raw_fd(),
        out_fd: srv_fd.as_raw_fd(),
        pipe: build_pipe(&cfg, &bn.up, "bottleneck_up", "topology.bottleneck.up", t0),
        flows,
        pre: Box::new(cli_delay),
        post: Box::new(srv_delay),
        spin_ns,
        t0,
        tap: tap_up,
    };
    let mut handles = Vec::new();
    for (name, d) in [("down", down), ("up", up)] {
        let s = stop.clone();
        handles.push((
            name,
            std::thread::Builder::new()
                .name(format!("ccemu-{name}"))
                .spawn(move || {
                    let mut realtime = false;
                    if rt_prio > 0 {
                        let p = libc::sched_param { sched_priority: rt_prio };
                        realtime = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } == 0;
                    }
                    let mut logs = bottleneck::run(d, s);
                    logs.realtime = realtime;
                    logs
                })
                .unwrap(),
        ));
    }
    // Run until stdin closes or a signal arrives.
    let fd0 = 0;
    let mut buf = [0u8; 256];
    while !STOP.load(Ordering::SeqCst) {
        if sys::poll_readable(fd0, 100_000_000) {
            let n = unsafe { libc::read(fd0, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            if n <= 0 {
                break;
            }
        }
    }
    stop.store(true, Ordering::SeqCst);
    let mut logs: Vec<(&str, Logs)> = Vec::new();
    for (name, h) in handles {
        logs.push((name, h.join().unwrap_or_else(|_| die("bottleneck thread panicked"))));
    }
    // the directions' taps went with their threads: the writers drain and end
    let pcap = ccemu::capture::finish(captures, t0);
    write_outputs(&out, &mut logs, t0, spin_ns, pairs, pcap).unwrap_or_else(|e| die(format!("writing logs: {e}")));
    drop(srv_fd);
    drop(cli_fd);
    println!("DONE");
}

fn write_outputs(
    out: &std::path::Path,
    logs: &mut [(&str, Logs)],
    t0: u64,
    spin_ns: u64,
    pairs: u32,
    pcap: Vec<serde_json::Value>,
) -> io::Result<()> {
    let mut q = Vec::new();
    let mut d = Vec::new();
    let mut t = Vec::new();
    let mut dirs = serde_json::Map::new();
    let qs = [0.0, 1.0, 10.0, 50.0, 90.0, 99.0, 99.9, 100.0];
    for (name, l) in logs.iter_mut() {
        for r in &l.queue {
            q.extend_from_slice(&r.t.to_le_bytes());
            q.extend_from_slice(&r.bytes.to_le_bytes());
            q.extend_from_slice(&r.link.to_le_bytes());
            q.extend_from_slice(&r.pkts.to_le_bytes());
        }
        for r in &l.drops {
            d.extend_from_slice(&r.t.to_le_bytes());
            d.extend_from_slice(&r.seq.to_le_bytes());
            d.extend_from_slice(&r.link.to_le_bytes());
            d.extend_from_slice(&r.flow.to_le_bytes());
            d.extend_from_slice(&[r.kind, r.reason, 0, 0, 0, 0, 0, 0]);
        }
        for r in &l.trace {
            t.extend_from_slice(&r.t.to_le_bytes());
            t.extend_from_slice(&r.start.to_le_bytes());
            t.extend_from_slice(&r.end.to_le_bytes());
            t.extend_from_slice(&r.flow.to_le_bytes());
            t.extend_from_slice(&r.kind.to_le_bytes());
        }
        let n = l.errors.len();
        let mean = if n > 0 { l.errors.iter().map(|&e| e as f64).sum::<f64>() / n as f64 } else { f64::NAN };
        let within =
            |lim: i64| if n > 0 { l.errors.iter().filter(|&&e| e <= lim).count() as f64 / n as f64 } else { f64::NAN };
        let (w10, w50, w120) = (within(10_000), within(50_000), within(120_000));
        let p = sys::percentiles(&mut l.errors, &qs);
        let pct: serde_json::Map<String, serde_json::Value> =
            qs.iter().zip(p).map(|(q, v)| (format!("p{q}"), serde_json::json!(v))).collect();
        dirs.insert(
            name.to_string(),
            serde_json::json!({
                "pkts_read": l.pkts_read, "pkts_written": l.pkts_written, "pkts_tx": l.pkts_tx,
                "pkts_dropped": l.pkts_dropped, "pkts_marked": l.pkts_marked,
                "pkts_unmapped": l.pkts_unmapped, "write_errors": l.write_errors,
                "max_pkt_bytes": l.max_pkt_bytes, "realtime": l.realtime,
                "timing_error_ns": { "count": n, "mean": mean, "percentiles": pct,
                    "frac_within_10us": w10, "frac_within_50us": w50, "frac_within_120us": w120 },
            }),
        );
    }
    std::fs::write(out.join("queue.bin"), q)?;
    std::fs::write(out.join("drops.bin"), d)?;
    std::fs::write(out.join("trace.bin"), t)?;
    let meta = serde_json::json!({
        "t0_ns": t0, "spin_ns": spin_ns, "pairs": pairs,
        "link_names": ["bottleneck_down", "bottleneck_up"],
        "reasons": bottleneck::reason_names(),
        "directions": dirs,
        "pcap": pcap,
    });
    std::fs::write(out.join("bottleneck.json"), serde_json::to_string_pretty(&meta)?)?;
    Ok(())
}
