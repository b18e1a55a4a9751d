//! `ccprobe server`: state machine of thesis Fig 4.14.
//!
//! Threads: one accepts control connections (refusing beyond `max_clients` with a
//! StopPacket carrying [`code::SERVER_FULL`]); one receives all UDP test packets; per
//! client one reads its control connection (StopPacket, idle and abort checks) and one
//! writes to it (StartPacket, reports, StopPacket).
//!
//! RUNNING: every valid UDPPacket of the client (right request id, from the control
//! connection's IP address) goes through the client's token bucket (rate `max_rate`,
//! depth `BUCKET_S` seconds; exceeding it is an abnormal stop) and the 128-packet loss
//! window; a report goes out after more than 10 received packets or more than 128
//! detected losses. StopPacket(0) from the client: last report, StopPacket(0), done.
//! AbnormalStop (StopPacket with the error code; results discarded): control socket
//! error, corrupted UDP packet, idle longer than `idle_timeout`, rate exceeded,
//! protocol error.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::args::{check_range, Args};
use crate::proto::{code, code_text, decode_udp, Ctrl, Report, Rng, UdpError, UdpTest};
use crate::window::{Arrival, LossWindow};
use crate::{check_rate_cap, wall_ns, BUCKET_S, DEFAULT_IDLE_S, MAX_CLIENTS, MAX_JUMP, THESIS_MAX_RATE};

pub const SERVER_USAGE: &str = "usage: ccprobe server [--bind ADDR (127.0.0.1)] [--port N (9000; 0 = any free port)] \
[--max-clients N (10, at most 10)] [--max-rate PKT_PER_S (1000; above 1000 only on loopback)] \
[--idle-timeout S (10)] [--exit-after N] [--quiet] \
[test only: --debug-loss P --debug-seed S --debug-reorder P --debug-reorder-depth D (50, < 128)]";

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub bind: IpAddr,
    pub port: u16,
    pub max_clients: usize,
    pub max_rate: f64,
    pub idle_timeout: Duration,
    pub exit_after: Option<u64>,
    pub quiet: bool,
    /// Test only: drop each received test packet with this probability (seeded).
    pub debug_loss: f64,
    pub debug_seed: u64,
    /// Test only: hold back each received packet with this probability until
    /// `debug_reorder_depth` later packets have been processed.
    pub debug_reorder: f64,
    pub debug_reorder_depth: u64,
}

impl ServerConfig {
    pub fn from_args(argv: &[String]) -> Result<Self, String> {
        let a = Args::parse(
            argv,
            &[
                "--bind",
                "--port",
                "--max-clients",
                "--max-rate",
                "--idle-timeout",
                "--exit-after",
                "--debug-loss",
                "--debug-seed",
                "--debug-reorder",
                "--debug-reorder-depth",
            ],
            &["--quiet"],
        )?;
        let bind_s = a.str("--bind").unwrap_or("127.0.0.1");
        let bind: IpAddr =
            bind_s.parse().map_err(|_| format!("--bind: expected an IP address such as 127.0.0.1, got '{bind_s}'"))?;
        let port = a.u64_or("--port", 9000, "a port number 0-65535")?;
        if port > 65535 {
            return Err(format!("--port: expected a port number 0-65535, got {port}"));
        }
        let max_clients = a.u64_or("--max-clients", MAX_CLIENTS as u64, "a number of clients")?;
        if max_clients == 0 || max_clients > MAX_CLIENTS as u64 {
            return Err(format!("--max-clients: must be between 1 and {MAX_CLIENTS} (thesis §4.3), got {max_clients}"));
        }
        let max_rate = a.f64_or("--max-rate", THESIS_MAX_RATE, "packets per second")?;
        check_rate_cap(max_rate, bind)?;
        let idle = a.f64_or("--idle-timeout", DEFAULT_IDLE_S, "seconds")?;
        check_range("--idle-timeout", idle, 0.05, 3600.0, "seconds")?;
        let exit_after = match a.str("--exit-after") {
            None => None,
            Some(_) => Some(a.u64_or("--exit-after", 0, "a number of sessions")?),
        };
        let debug_loss =
            check_range("--debug-loss", a.f64_or("--debug-loss", 0.0, "a probability")?, 0.0, 1.0, "a probability")?;
        let debug_reorder = check_range(
            "--debug-reorder",
            a.f64_or("--debug-reorder", 0.0, "a probability")?,
            0.0,
            1.0,
            "a probability",
        )?;
        let depth = a.u64_or("--debug-reorder-depth", 50, "a number of packets")?;
        if depth == 0 || depth > 1000 {
            return Err(format!("--debug-reorder-depth: must be between 1 and 1000 packets, got {depth}"));
        }
        Ok(ServerConfig {
            bind,
            port: port as u16,
            max_clients: max_clients as usize,
            max_rate,
            idle_timeout: Duration::from_secs_f64(idle),
            exit_after,
            quiet: a.flag("--quiet"),
            debug_loss,
            debug_seed: a.u64_or("--debug-seed", 1, "an integer seed")?,
            debug_reorder,
            debug_reorder_depth: depth,
        })
    }
}

struct Session {
    peer: String,
    peer_ip: IpAddr,
    tx: SyncSender<Vec<u8>>,
    window: LossWindow,
    since_report: u32,
    last_activity: Instant,
    tokens: f64,
    tokens_t: Instant,
    rng: Rng,
    held: Vec<(UdpTest, u128, u64)>,
    rx_times: Vec<(u64, u128)>,
    last_ts: u128,
    aborted: Option<u64>,
    debug_dropped: u64,
    started: Instant,
}

impl Session {
    fn send(&mut self, m: &Ctrl) {
        match self.tx.try_send(m.encode()) {
            Ok(()) => {}
            Err(TrySendError::Full(_)) | Err(TrySendError::Disconnected(_)) => {
                self.aborted.get_or_insert(code::CONTROL_ERROR);
            }
        }
    }

    fn report(&mut self, ts_ns: u128) {
        let r = Report { ts_ns, ack: self.window.highest(), losses: self.window.take_pending() };
        self.send(&Ctrl::Report(r));
        let rx = std::mem::take(&mut self.rx_times);
        self.send(&Ctrl::RxTimes(rx));
        self.since_report = 0;
    }

    fn deliver(&mut self, p: UdpTest, rx_ns: u128) {
        if matches!(self.window.on_seq(p.seq), Arrival::New | Arrival::Reordered) {
            self.rx_times.push((p.seq, rx_ns));
            self.since_report += 1;
        }
        self.last_ts = p.ts_ns;
        if self.since_report > 10 || self.window.pending_len() > 128 {
            self.report(p.ts_ns);
        }
    }

    fn release_held(&mut self, all: bool) {
        let mut i = 0;
        while i < self.held.len() {
            if all || self.held[i].2 == 0 {
                let (p, rx, _) = self.held.remove(i);
                self.deliver(p, rx);
            } else {
                i += 1;
            }
        }
    }
}

struct Shared {
    cfg: ServerConfig,
    sessions: Mutex<HashMap<u64, Session>>,
    finished: AtomicU64,
}

impl Shared {
    fn log(&self, msg: &str) {
        if !self.cfg.quiet {
            eprintln!("ccprobe server: {msg}");
        }
    }
}

fn set_rcvbuf(sock: &UdpSocket, bytes: i32) {
    use std::os::fd::AsRawFd;
    // best effort: the kernel caps it at net.core.rmem_max
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            &bytes as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

fn bind_pair(cfg: &ServerConfig) -> Result<(TcpListener, UdpSocket), String> {
    let tries = if cfg.port == 0 { 20 } else { 1 };
    let mut last = String::new();
    for _ in 0..tries {
        let l = TcpListener::bind((cfg.bind, cfg.port))
            .map_err(|e| format!("cannot listen on {}:{}: {e}", cfg.bind, cfg.port))?;
        let port = l.local_addr().map_err(|e| e.to_string())?.port();
        match UdpSocket::bind((cfg.bind, port)) {
            Ok(u) => return Ok((l, u)),
            Err(e) => last = format!("cannot bind UDP {}:{port}: {e}", cfg.bind),
        }
    }
    Err(last)
}

/// Runs the server until `exit_after` sessions have ended (forever without it).
pub fn run(cfg: ServerConfig) -> Result<(), String> {
    let (listener, udp) = bind_pair(&cfg)?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    set_rcvbuf(&udp, 8 << 20);
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    println!("ccprobe server listening on {addr} (tcp control + udp probes)");
    let _ = std::io::stdout().flush();
    let shared = Arc::new(Shared { cfg, sessions: Mutex::new(HashMap::new()), finished: AtomicU64::new(0) });
    {
        let sh = shared.clone();
        thread::spawn(move || udp_loop(sh, udp));
    }
    let mut ids = Rng::new(wall_ns() as u64 ^ ((std::process::id() as u64) << 32));
    let mut started = 0u64;
    loop {
        if let Some(n) = shared.cfg.exit_after {
            if shared.finished.load(Ordering::SeqCst) >= n {
                return Ok(());
            }
        }
        match listener.accept() {
            Ok((stream, peer)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                let mut sessions = shared.sessions.lock().unwrap();
                if sessions.len() >= shared.cfg.max_clients {
                    drop(sessions);
                    let sh = shared.clone();
                    thread::spawn(move || refuse(stream, &sh, &peer.to_string()));
                    continue;
                }
                let mut id = ids.next_u64();
                while id == 0 || sessions.contains_key(&id) {
                    id = ids.next_u64();
                }
                let (tx, rx) = sync_channel::<Vec<u8>>(8192);
                let writer = match stream.try_clone() {
                    Ok(w) => w,
                    Err(e) => {
                        shared.log(&format!("cannot clone control socket of {peer}: {e}"));
                        continue;
                    }
                };
                let now = Instant::now();
                let mut s = Session {
                    peer: peer.to_string(),
                    peer_ip: peer.ip(),
                    tx,
                    window: LossWindow::new(),
                    since_report: 0,
                    last_activity: now,
                    tokens: shared.cfg.max_rate * BUCKET_S + 16.0,
                    tokens_t: now,
                    rng: Rng::new(shared.cfg.debug_seed.wrapping_mul(0x9E37_79B9).wrapping_add(started)),
                    held: Vec::new(),
                    rx_times: Vec::new(),
                    last_ts: 0,
                    aborted: None,
                    debug_dropped: 0,
                    started: now,
                };
                s.send(&Ctrl::Start { id });
                sessions.insert(id, s);
                drop(sessions);
                started += 1;
                shared.log(&format!("session {id:016x} from {peer}: started"));
                let sh = shared.clone();
                let wsh = shared.clone();
                let wh = thread::spawn(move || writer_loop(wsh, id, writer, rx));
                thread::spawn(move || control_loop(sh, id, stream, wh));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => thread::sleep(Duration::from_millis(5)),
            Err(e) => {
                shared.log(&format!("accept failed: {e}"));
                thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

fn refuse(mut stream: TcpStream, shared: &Shared, peer: &str) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let _ = stream.write_all(&Ctrl::Stop { code: code::SERVER_FULL }.encode());
    let _ = stream.shutdown(Shutdown::Write);
    // let the client read the StopPacket before the socket goes away
    let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
    let mut b = [0u8; 64];
    let _ = stream.read(&mut b);
    shared.log(&format!("refused {peer}: already serving {} clients (the limit)", shared.cfg.max_clients));
}

fn writer_loop(shared: Arc<Shared>, id: u64, mut stream: TcpStream, rx: Receiver<Vec<u8>>) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(5)));
    while let Ok(buf) = rx.recv() {
        if stream.write_all(&buf).is_err() {
            if let Some(s) = shared.sessions.lock().unwrap().get_mut(&id) {
                s.aborted.get_or_insert(code::CONTROL_ERROR);
            }
            break;
        }
    }
    let _ = stream.shutdown(Shutdown::Write);
}

fn control_loop(shared: Arc<Shared>, id: u64, mut stream: TcpStream, writer: thread::JoinHandle<()>) {
    let _ = stream.set_read_timeout(Some(Duration::from_millis(50)));
    let mut buf: Vec<u8> = Vec::new();
    let mut tmp = [0u8; 4096];
    // (stop code, whether to send a StopPacket, detail)
    let (end, send_stop, detail): (u64, bool, String) = loop {
        match stream.read(&mut tmp) {
            Ok(0) => break (code::CONTROL_ERROR, false, "control connection closed by the client".into()),
            Ok(n) => {
                buf.extend_from_slice(&tmp[..n]);
                if let Some(s) = shared.sessions.lock().unwrap().get_mut(&id) {
                    s.last_activity = Instant::now();
                }
                // every message a client may send ends the session
                match Ctrl::parse(&buf) {
                    Ok(None) => {}
                    Ok(Some((Ctrl::Stop { code: 0 }, _))) => break (code::NORMAL, true, String::new()),
                    Ok(Some((Ctrl::Stop { code: c }, _))) => {
                        break (code::CLIENT_ABORT, false, format!("client stopped with code {c} ({})", code_text(c)))
                    }
                    Ok(Some((other, _))) => {
                        break (code::PROTOCOL, true, format!("unexpected {other:?} from the client"))
                    }
                    Err(e) => break (code::PROTOCOL, true, e),
                }
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted) => {}
            Err(e) => break (code::CONTROL_ERROR, false, format!("control socket error: {e}")),
        }
        let sessions = shared.sessions.lock().unwrap();
        let Some(s) = sessions.get(&id) else {
            break (code::CONTROL_ERROR, false, "session vanished".into());
        };
        if let Some(c) = s.aborted {
            break (c, true, String::new());
        }
        if s.last_activity.elapsed() > shared.cfg.idle_timeout {
            break (code::IDLE, true, format!("idle for more than {:.3} s", shared.cfg.idle_timeout.as_secs_f64()));
        }
    };
    let summary = {
        let mut sessions = shared.sessions.lock().unwrap();
        let mut summary = String::new();
        if let Some(mut s) = sessions.remove(&id) {
            if end == code::NORMAL {
                s.release_held(true);
                s.window.flush();
                let ts = s.last_ts;
                s.report(ts);
            }
            if send_stop {
                s.send(&Ctrl::Stop { code: end });
            }
            let w = &s.window;
            summary = format!(
                "from {} after {:.2} s: received {}, lost {}, reordered {}, late {}, duplicates {}{}",
                s.peer,
                s.started.elapsed().as_secs_f64(),
                w.received,
                w.lost,
                w.reordered,
                w.late,
                w.duplicates,
                if s.debug_dropped > 0 { format!(", debug-dropped {}", s.debug_dropped) } else { String::new() }
            );
            // dropping `s` closes the writer's channel: it sends what is queued, then shuts down
        }
        summary
    };
    let _ = writer.join();
    if end == code::NORMAL {
        shared.log(&format!("session {id:016x} normal stop {summary}"));
    } else {
        let d = if detail.is_empty() { code_text(end).to_string() } else { detail };
        shared.log(&format!("session {id:016x} abnormal stop (code {end}: {d}); results discarded; {summary}"));
    }
    if end != code::NORMAL {
        // give the client a moment to read the StopPacket, then close
        let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
        let _ = stream.read(&mut tmp);
    }
    let _ = stream.shutdown(Shutdown::Both);
    shared.finished.fetch_add(1, Ordering::SeqCst);
}

fn udp_loop(shared: Arc<Shared>, sock: UdpSocket) {
    let cfg = shared.cfg.clone();
    let depth = cfg.max_rate * BUCKET_S + 16.0;
    let mut buf = vec![0u8; 65536];
    loop {
        let (n, src) = match sock.recv_from(&mut buf) {
            Ok(x) => x,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                shared.log(&format!("udp receive error: {e}"));
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let rx_ns = wall_ns();
        let mut sessions = shared.sessions.lock().unwrap();
        match decode_udp(&buf[..n]) {
            Err(UdpError::NotProbe) => {}
            Err(UdpError::BadChecksum { id }) => {
                if let Some(s) = sessions.get_mut(&id) {
                    if s.peer_ip == src.ip() {
                        s.aborted.get_or_insert(code::CORRUPT);
                    }
                }
            }
            Ok(p) => {
                let Some(s) = sessions.get_mut(&p.id) else { continue };
                if s.peer_ip != src.ip() || s.aborted.is_some() {
                    continue;
                }
                let now = Instant::now();
                s.last_activity = now;
                s.tokens = (s.tokens + cfg.max_rate * now.duration_since(s.tokens_t).as_secs_f64()).min(depth);
                s.tokens_t = now;
                if s.tokens < 1.0 {
                    s.aborted = Some(code::RATE_EXCEEDED);
                    continue;
                }
                s.tokens -= 1.0;
                if p.seq > s.window.highest().map_or(0, |h| h) + MAX_JUMP {
                    s.aborted = Some(code::PROTOCOL);
                    continue;
                }
                if cfg.debug_loss > 0.0 && s.rng.next_f64() < cfg.debug_loss {
                    s.debug_dropped += 1;
                    continue;
                }
                if cfg.debug_reorder > 0.0 && s.rng.next_f64() < cfg.debug_reorder {
                    s.held.push((p, rx_ns, cfg.debug_reorder_depth));
                    continue;
                }
                s.deliver(p, rx_ns);
                if !s.held.is_empty() {
                    for h in s.held.iter_mut() {
                        h.2 -= 1;
                    }
                    s.release_held(false);
                }
            }
        }
    }
}
