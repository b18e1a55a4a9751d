//! `ccprobe client`: state machine of thesis Fig 4.15.
//!
//! Connect the control connection, wait for the StartPacket (or a StopPacket: refused),
//! send UDP test packets in the chosen pattern, log every report (losses, RTT = now -
//! timestamp of the triggering packet; the estimate is the minimum observed), then wait
//! `drain`, send StopPacket(0) and wait for the last report and the server's
//! StopPacket(0). An abnormal StopPacket from the server ends the run with an error and
//! no output (results discarded, as in the thesis).
//!
//! Patterns. smooth: paced CBR, packet i due at start + i/rate (a late sender may catch
//! up by at most 1 ms, never more, so it is never faster than the rate over any window
//! longer than 1 ms). bursty: TCP-like on/off; every `burst_period` (an "RTT",
//! default 100 ms) rate × period packets go back-to-back, then nothing until the next
//! period; the average rate over every period is exactly the configured rate.

use std::fs::File;
use std::io::{BufWriter, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::args::{check_range, Args};
use crate::auth::{self, Key, Nonce};
use crate::proto::{
    code, code_text, encode_udp, Ctrl, Rng, Side, UdpTest, MAX_MSG, T_CHALL, T_START, T_STOP, UDP_HEADER, UDP_MAX,
    VERSION,
};
use crate::server::TOKEN_ENV;
use crate::{check_rate_cap, wall_ns, DEFAULT_RATE, DEFAULT_SIZE, MAX_BURST_PERIOD_S, THESIS_MAX_RATE};

pub const CLIENT_USAGE: &str = "usage: ccprobe client --server HOST:PORT --out FILE [--packets N (10000)] \
[--size BYTES (48; 48-400)] [--rate PKT_PER_S (500)] [--pattern smooth|bursty] [--burst-period S (0.1)] \
[--max-rate PKT_PER_S (1000; above 1000 only to loopback)] [--format csv|jsonl (from --out)] \
[--summary FILE.json] [--drain S (0.5)] [--seed N] [--token T (or env CCBENCH_PROBE_TOKEN)] [--quiet]";

/// Most packets in one measurement (the client keeps 8 bytes per packet in memory).
pub const MAX_PACKETS: u64 = 100_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    Smooth,
    Bursty,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Csv,
    Jsonl,
}

#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub server_arg: String,
    pub server: SocketAddr,
    pub packets: u64,
    pub size: usize,
    pub rate: f64,
    pub max_rate: f64,
    pub pattern: Pattern,
    pub burst_period: Duration,
    pub out: PathBuf,
    pub format: Format,
    pub summary: Option<PathBuf>,
    pub drain: Duration,
    pub seed: u64,
    /// Shared token, if the server requires one.
    pub token: Option<Vec<u8>>,
    pub quiet: bool,
}

impl ClientConfig {
    pub fn from_args(argv: &[String]) -> Result<Self, String> {
        Self::from_args_env(argv, std::env::var(TOKEN_ENV).ok())
    }

    /// `env_token`: the value of [`TOKEN_ENV`], used when `--token` is not given.
    pub fn from_args_env(argv: &[String], env_token: Option<String>) -> Result<Self, String> {
        let a = Args::parse(
            argv,
            &[
                "--server",
                "--packets",
                "--size",
                "--rate",
                "--max-rate",
                "--pattern",
                "--burst-period",
                "--out",
                "--format",
                "--summary",
                "--drain",
                "--seed",
                "--token",
            ],
            &["--quiet"],
        )?;
        let server_arg = a.str("--server").ok_or("--server HOST:PORT is required")?.to_string();
        let server = resolve(&server_arg)?;
        let packets = a.u64_or("--packets", 10_000, "a number of packets")?;
        if packets == 0 || packets > MAX_PACKETS {
            return Err(format!("--packets: must be between 1 and {MAX_PACKETS}, got {packets}"));
        }
        let size = a.u64_or("--size", DEFAULT_SIZE as u64, "a packet size in bytes")?;
        if size < UDP_HEADER as u64 || size > UDP_MAX as u64 {
            return Err(format!(
                "--size: must be between {UDP_HEADER} (the header) and {UDP_MAX} bytes (thesis: no fragmentation at MTU 500), got {size}"
            ));
        }
        let max_rate = a.f64_or("--max-rate", THESIS_MAX_RATE, "packets per second")?;
        check_rate_cap(max_rate, server.ip())?;
        let rate = a.f64_or("--rate", DEFAULT_RATE, "packets per second")?;
        if rate <= 0.0 || rate.is_nan() {
            return Err(format!("--rate: must be a positive number of packets/s, got {rate}"));
        }
        if rate > max_rate {
            return Err(format!("--rate: {rate} packets/s is above the cap --max-rate {max_rate} packets/s"));
        }
        let pattern = match a.str("--pattern").unwrap_or("smooth") {
            "smooth" => Pattern::Smooth,
            "bursty" => Pattern::Bursty,
            other => return Err(format!("--pattern: expected smooth or bursty, got '{other}'")),
        };
        let period = a.f64_or("--burst-period", 0.1, "seconds")?;
        check_range("--burst-period", period, 0.001, MAX_BURST_PERIOD_S, "seconds")?;
        let out = PathBuf::from(a.str("--out").ok_or("--out FILE is required (.csv or .jsonl)")?);
        let format = match a.str("--format") {
            Some("csv") => Format::Csv,
            Some("jsonl") | Some("json") => Format::Jsonl,
            Some(other) => return Err(format!("--format: expected csv or jsonl, got '{other}'")),
            None => match out.extension().and_then(|e| e.to_str()) {
                Some("csv") => Format::Csv,
                Some("jsonl") | Some("json") => Format::Jsonl,
                _ => {
                    return Err(format!(
                        "--out: cannot tell the format of '{}': end it in .csv or .jsonl, or give --format",
                        out.display()
                    ))
                }
            },
        };
        let drain = a.f64_or("--drain", 0.5, "seconds")?;
        check_range("--drain", drain, 0.0, 60.0, "seconds")?;
        Ok(ClientConfig {
            server_arg,
            server,
            packets,
            size: size as usize,
            rate,
            max_rate,
            pattern,
            burst_period: Duration::from_secs_f64(period),
            out,
            format,
            summary: a.str("--summary").map(PathBuf::from),
            drain: Duration::from_secs_f64(drain),
            seed: a.u64_or("--seed", 1, "an integer seed")?,
            token: auth::token_from(a.str("--token"), env_token.as_deref())?,
            quiet: a.flag("--quiet"),
        })
    }
}

fn resolve(s: &str) -> Result<SocketAddr, String> {
    let (host, port) = s.rsplit_once(':').ok_or_else(|| format!("--server: expected HOST:PORT, got '{s}'"))?;
    if port.parse::<u16>().map(|p| p == 0).unwrap_or(true) {
        return Err(format!("--server: expected a port 1-65535 after ':', got '{port}'"));
    }
    if host.is_empty() {
        return Err(format!("--server: expected HOST:PORT, got '{s}'"));
    }
    s.to_socket_addrs()
        .map_err(|e| format!("--server: cannot resolve '{s}': {e}"))?
        .next()
        .ok_or_else(|| format!("--server: '{s}' resolves to no address"))
}

#[derive(Default)]
struct Shared {
    /// Loss ranges (first seq, count) as reported.
    losses: Vec<(u64, u64)>,
    /// (timestamp of the triggering packet, RTT ns)
    rtts: Vec<(u64, u64)>,
    rx: Vec<(u64, u64)>,
    ack: Option<u64>,
    stop: Option<u64>,
    error: Option<String>,
    reports: u64,
}

/// Client timebase: wall clock at start + monotonic time since.
#[derive(Clone, Copy)]
struct Clock {
    t0: Instant,
    wall0: u64,
}

impl Clock {
    fn now_ns(&self) -> u64 {
        self.wall0 + self.t0.elapsed().as_nanos() as u64
    }
}

fn reader(mut stream: TcpStream, shared: Arc<Mutex<Shared>>, clock: Clock) {
    // at most one unfinished message (< MAX_MSG bytes) plus one read
    let mut buf: Vec<u8> = Vec::with_capacity(MAX_MSG + 16384);
    let mut tmp = [0u8; 16384];
    loop {
        let n = match stream.read(&mut tmp) {
            Ok(0) => {
                let mut s = shared.lock().unwrap();
                if s.stop.is_none() {
                    s.error = Some("the server closed the control connection without a StopPacket".into());
                }
                return;
            }
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                let mut s = shared.lock().unwrap();
                if s.stop.is_none() {
                    s.error = Some(format!("control connection error: {e}"));
                }
                return;
            }
        };
        let now = clock.now_ns();
        buf.extend_from_slice(&tmp[..n]);
        let mut s = shared.lock().unwrap();
        let mut at = 0;
        loop {
            match Ctrl::parse(&buf[at..], Side::Server) {
                Ok(None) => break,
                Ok(Some((m, used))) => {
                    at += used;
                    match m {
                        Ctrl::Report(r) => {
                            s.reports += 1;
                            if r.ts_ns > 0 && now >= r.ts_ns {
                                s.rtts.push((r.ts_ns, now - r.ts_ns));
                            }
                            s.losses.extend(r.losses);
                            if r.ack.is_some() {
                                s.ack = r.ack.max(s.ack);
                            }
                        }
                        Ctrl::RxTimes(list) => s.rx.extend(list),
                        Ctrl::Stop { code } => {
                            s.stop = Some(code);
                            return;
                        }
                        other => {
                            s.error = Some(format!("protocol error: unexpected {other:?} while measuring"));
                            return;
                        }
                    }
                }
                Err(e) => {
                    s.error = Some(format!("protocol error from the server: {e}"));
                    return;
                }
            }
        }
        buf.drain(..at);
    }
}

fn read_exact_by(stream: &mut TcpStream, n: usize, deadline: Instant, what: &str) -> Result<Vec<u8>, String> {
    let left = deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1));
    stream.set_read_timeout(Some(left)).map_err(|e| e.to_string())?;
    let mut b = vec![0u8; n];
    stream.read_exact(&mut b).map_err(|e| match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => format!("no {what} within {} s", HANDSHAKE_S),
        ErrorKind::UnexpectedEof => format!("the server closed the connection before sending a {what}"),
        _ => format!("control connection error: {e}"),
    })?;
    Ok(b)
}

/// Why a StopPacket during the handshake ended the measurement.
fn refusal(server: &str, c: u64) -> String {
    match c {
        code::SERVER_FULL => {
            format!(
                "server {server} refused the measurement: it already serves its maximum number of clients; try later"
            )
        }
        code::AUTH => format!("server {server} rejected the token (wrong token; code {c})"),
        _ => format!("server {server} refused the measurement: {} (code {c})", code_text(c)),
    }
}

/// Seconds the whole handshake may take.
const HANDSHAKE_S: u64 = 10;

/// Protocol v2 handshake (see `proto`): returns the session id and datagram key.
fn handshake(ctrl: &mut TcpStream, cfg: &ClientConfig) -> Result<(u128, Key), String> {
    let server = &cfg.server_arg;
    let deadline = Instant::now() + Duration::from_secs(HANDSHAKE_S);
    let cn: Nonce = auth::random_bytes()?;
    let send = |ctrl: &mut TcpStream, m: Ctrl| {
        ctrl.write_all(&m.encode()).map_err(|e| format!("server {server}: control connection error: {e}"))
    };
    send(ctrl, Ctrl::Hello { version: VERSION, nonce: cn })?;
    let ctx = |e: String| format!("server {server}: {e}");
    let ty = read_exact_by(ctrl, 8, deadline, "challenge").map_err(ctx)?;
    let (version, sn, token_required) = match &ty[..] {
        t if t == T_START => {
            return Err(format!(
                "server {server} speaks probe protocol v1 (it sent a v1 StartPacket); this client speaks v{VERSION}: \
                 upgrade the server (cargo build --release -p ccprobe)"
            ))
        }
        t if t == T_STOP => {
            let c = read_exact_by(ctrl, 8, deadline, "StopPacket").map_err(ctx)?;
            return Err(refusal(server, u64::from_be_bytes(c.try_into().unwrap())));
        }
        t if t == T_CHALL => {
            let mut m = ty.clone();
            m.extend(read_exact_by(ctrl, 32, deadline, "challenge").map_err(ctx)?);
            match Ctrl::parse(&m, Side::Server) {
                Ok(Some((Ctrl::Challenge { version, nonce, token_required }, _))) => (version, nonce, token_required),
                Ok(_) => unreachable!("a 40-byte challenge parses"),
                Err(e) => return Err(format!("server {server}: protocol error: {e}")),
            }
        }
        _ => return Err(format!("server {server} is not a ccprobe server (unexpected first message)")),
    };
    if version != VERSION {
        return Err(format!("server {server} speaks probe protocol v{version}; this client speaks v{VERSION}"));
    }
    let token: &[u8] = match (token_required, cfg.token.as_deref()) {
        (true, None) => {
            return Err(format!("server {server} requires a token: give --token or set {TOKEN_ENV}"));
        }
        (false, Some(_)) => {
            return Err(format!(
                "server {server} does not use a token (started without --token): drop --token or unset {TOKEN_ENV}"
            ));
        }
        (_, t) => t.unwrap_or(b""),
    };
    send(ctrl, Ctrl::Auth { proof: auth::client_proof(token, &cn, &sn) })?;
    let ty = read_exact_by(ctrl, 8, deadline, "StartPacket").map_err(ctx)?;
    if ty == T_STOP {
        let c = read_exact_by(ctrl, 8, deadline, "StopPacket").map_err(ctx)?;
        return Err(refusal(server, u64::from_be_bytes(c.try_into().unwrap())));
    }
    if ty != T_START {
        return Err(format!("server {server}: protocol error: expected a StartPacket"));
    }
    let mut m = ty;
    m.extend(read_exact_by(ctrl, 32, deadline, "StartPacket").map_err(ctx)?);
    let Ok(Some((Ctrl::Start { sid, proof }, _))) = Ctrl::parse(&m, Side::Server) else {
        unreachable!("a 40-byte StartPacket parses")
    };
    if !auth::server_proof_ok(token, &cn, &sn, sid, &proof) {
        return Err(format!(
            "server {server} could not prove that it knows the token: not the server you meant (or a different token)"
        ));
    }
    ctrl.set_read_timeout(None).map_err(|e| e.to_string())?;
    Ok((sid, auth::session_key(token, &cn, &sn, sid)))
}

fn wait_until(due: Instant) {
    let now = Instant::now();
    if due > now {
        thread::sleep(due - now);
    }
}

/// Runs one measurement; writes the records (and the summary) and returns the summary.
pub fn run(cfg: ClientConfig) -> Result<serde_json::Value, String> {
    let server = &cfg.server_arg;
    let mut ctrl = TcpStream::connect_timeout(&cfg.server, Duration::from_secs(5))
        .map_err(|e| format!("cannot connect to the probe server at {server}: {e}"))?;
    let _ = ctrl.set_nodelay(true);
    let (sid, key) = handshake(&mut ctrl, &cfg)?;
    let local_ip = ctrl.local_addr().map_err(|e| e.to_string())?.ip();
    let udp = UdpSocket::bind((local_ip, 0)).map_err(|e| format!("cannot open a UDP socket: {e}"))?;
    udp.connect(cfg.server).map_err(|e| format!("cannot address UDP to {server}: {e}"))?;

    let clock = Clock { t0: Instant::now(), wall0: wall_ns() as u64 };
    let shared = Arc::new(Mutex::new(Shared::default()));
    let rh = {
        let st = ctrl.try_clone().map_err(|e| e.to_string())?;
        let sh = shared.clone();
        thread::spawn(move || reader(st, sh, clock))
    };
    if !cfg.quiet {
        eprintln!(
            "ccprobe client: session {:08x} at {server}: {} packets of {} B at {} packets/s ({:?})",
            (sid >> 96) as u32,
            cfg.packets,
            cfg.size,
            cfg.rate,
            cfg.pattern
        );
    }

    let mut rng = Rng::new(cfg.seed);
    let mut pkt = vec![0u8; cfg.size];
    let mut send_ns: Vec<u64> = Vec::with_capacity(cfg.packets.min(1 << 24) as usize);
    let interval = Duration::from_secs_f64(1.0 / cfg.rate);
    let slack = Duration::from_millis(1);
    let burst = ((cfg.rate * cfg.burst_period.as_secs_f64()).round() as u64).max(1);
    let period = Duration::from_secs_f64(burst as f64 / cfg.rate);
    let start = Instant::now();
    let mut due = start;
    let mut aborted: Option<String> = None;
    for seq in 0..cfg.packets {
        match cfg.pattern {
            Pattern::Smooth => {
                wait_until(due);
                due += interval;
                let now = Instant::now();
                if due + slack < now {
                    due = now - slack;
                }
            }
            Pattern::Bursty => {
                if seq % burst == 0 {
                    wait_until(start + period * (seq / burst) as u32);
                }
            }
        }
        if seq % 64 == 0 {
            let s = shared.lock().unwrap();
            if let Some(c) = s.stop {
                aborted =
                    Some(format!("the server stopped the measurement: {} (code {c}); results discarded", code_text(c)));
            } else if let Some(e) = &s.error {
                aborted = Some(e.clone());
            }
            if aborted.is_some() {
                break;
            }
        }
        let t = clock.t0.elapsed();
        encode_udp(&mut pkt, UdpTest { sid, seq, ts_ns: clock.wall0 + t.as_nanos() as u64 }, &key, &mut rng);
        send_ns.push(t.as_nanos() as u64);
        match udp.send(&pkt) {
            Ok(_) => {}
            // a full socket buffer or an ICMP error: the packet is lost on the path
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::ConnectionRefused) => {}
            Err(e) => {
                aborted = Some(format!("UDP send to {server} failed: {e}"));
                break;
            }
        }
    }
    if let Some(msg) = aborted {
        let _ = ctrl.write_all(&Ctrl::Stop { code: code::CLIENT_ABORT }.encode());
        return Err(msg);
    }
    let send_done = clock.t0.elapsed();
    thread::sleep(cfg.drain);
    if let Err(e) = ctrl.write_all(&Ctrl::Stop { code: code::NORMAL }.encode()) {
        return Err(format!("cannot send the StopPacket to {server}: {e}"));
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        {
            let s = shared.lock().unwrap();
            if s.stop.is_some() || s.error.is_some() {
                break;
            }
        }
        if Instant::now() > deadline {
            return Err(format!("server {server}: no final report within 10 s of the StopPacket"));
        }
        thread::sleep(Duration::from_millis(5));
    }
    let _ = rh.join();
    let s = shared.lock().unwrap();
    match (s.stop, &s.error) {
        (Some(0), _) => {}
        (Some(c), _) => {
            return Err(format!("the server stopped the measurement: {} (code {c}); results discarded", code_text(c)))
        }
        (None, Some(e)) => return Err(format!("server {server}: {e}")),
        (None, None) => unreachable!(),
    }

    // per-packet records
    let n = send_ns.len();
    let mut lost = vec![false; n];
    // ranges from the server, clamped to the packets actually sent
    for &(first, count) in &s.losses {
        let from = first.min(n as u64) as usize;
        let to = first.saturating_add(count).min(n as u64) as usize;
        lost[from..to].fill(true);
    }
    let tail_from = s.ack.map_or(0, |a| a as usize + 1);
    for l in lost.iter_mut().skip(tail_from) {
        *l = true;
    }
    let ts_of = |seq: usize| clock.wall0 + send_ns[seq];
    let mut rtt_sample = vec![f64::NAN; n];
    let mut rtt_min = f64::INFINITY;
    for &(ts, rtt) in &s.rtts {
        if ts < clock.wall0 {
            continue;
        }
        let rel = ts - clock.wall0;
        if let Ok(i) = send_ns.binary_search(&rel) {
            let r = rtt as f64 * 1e-9;
            rtt_sample[i] = if rtt_sample[i].is_nan() { r } else { rtt_sample[i].min(r) };
            rtt_min = rtt_min.min(r);
        }
    }
    let mut owd = vec![f64::NAN; n];
    for &(seq, rx) in &s.rx {
        if (seq as usize) < n && !lost[seq as usize] {
            owd[seq as usize] = (rx as f64 - ts_of(seq as usize) as f64) * 1e-9;
        }
    }
    write_records(&cfg, &send_ns, &lost, &rtt_sample, &owd)?;
    let n_lost = lost.iter().filter(|&&l| l).count();
    let summary = json!({
        "tool": "ccprobe",
        "version": env!("CARGO_PKG_VERSION"),
        "server": cfg.server_arg,
        "server_addr": cfg.server.to_string(),
        "server_is_loopback": cfg.server.ip().is_loopback(),
        "session_id": format!("{sid:032x}"),
        "protocol": VERSION,
        "authenticated": cfg.token.is_some(),
        "packets": n,
        "size_bytes": cfg.size,
        "rate_pps": cfg.rate,
        "max_rate_pps": cfg.max_rate,
        "pattern": match cfg.pattern { Pattern::Smooth => "smooth", Pattern::Bursty => "bursty" },
        "burst_period_s": if cfg.pattern == Pattern::Bursty { json!(period.as_secs_f64()) } else { json!(null) },
        "burst_packets": if cfg.pattern == Pattern::Bursty { json!(burst) } else { json!(null) },
        "lost": n_lost,
        "loss_rate": n_lost as f64 / n.max(1) as f64,
        "rtt_min_s": if rtt_min.is_finite() { json!(rtt_min) } else { json!(null) },
        "rtt_samples": s.rtts.len(),
        "reports": s.reports,
        "send_duration_s": send_done.as_secs_f64(),
        "achieved_rate_pps": if send_done.as_secs_f64() > 0.0 { n as f64 / send_done.as_secs_f64() } else { 0.0 },
        "start_unix_ns": clock.wall0.to_string(),
        "seed": cfg.seed,
        "records": cfg.out.display().to_string(),
        "format": match cfg.format { Format::Csv => "csv", Format::Jsonl => "jsonl" },
    });
    if let Some(p) = &cfg.summary {
        std::fs::write(p, serde_json::to_string_pretty(&summary).unwrap() + "\n")
            .map_err(|e| format!("--summary: cannot write {}: {e}", p.display()))?;
    }
    if !cfg.quiet {
        eprintln!(
            "ccprobe client: sent {n}, lost {n_lost} ({:.3} %), min RTT {}, records in {}",
            100.0 * n_lost as f64 / n.max(1) as f64,
            if rtt_min.is_finite() { format!("{:.3} ms", rtt_min * 1e3) } else { "unknown".into() },
            cfg.out.display()
        );
    }
    Ok(summary)
}

fn num(x: f64) -> String {
    if x.is_nan() {
        String::new()
    } else {
        format!("{x:.9}")
    }
}

fn write_records(cfg: &ClientConfig, send_ns: &[u64], lost: &[bool], rtt: &[f64], owd: &[f64]) -> Result<(), String> {
    let err = |e: std::io::Error| format!("--out: cannot write {}: {e}", cfg.out.display());
    let mut w = BufWriter::new(File::create(&cfg.out).map_err(err)?);
    let mut est = f64::NAN;
    if cfg.format == Format::Csv {
        writeln!(w, "seq,t_send_s,lost,rtt_sample_s,rtt_est_s,owd_s").map_err(err)?;
    }
    for i in 0..send_ns.len() {
        if !rtt[i].is_nan() {
            est = if est.is_nan() { rtt[i] } else { est.min(rtt[i]) };
        }
        let t = send_ns[i] as f64 * 1e-9;
        match cfg.format {
            Format::Csv => writeln!(w, "{i},{t:.9},{},{},{},{}", lost[i] as u8, num(rtt[i]), num(est), num(owd[i])),
            Format::Jsonl => {
                let f = |x: f64| if x.is_nan() { json!(null) } else { json!(x) };
                let v = json!({"seq": i, "t_send_s": t, "lost": lost[i], "rtt_sample_s": f(rtt[i]), "rtt_est_s": f(est), "owd_s": f(owd[i])});
                writeln!(w, "{v}")
            }
        }
        .map_err(err)?;
    }
    w.flush().map_err(err)
}
