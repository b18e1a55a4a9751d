//! `ccprobe server`: state machine of thesis Fig 4.14, hardened for the open Internet
//! (protocol v2; README "Threat model").
//!
//! One thread runs everything: a `poll(2)` loop over the listening socket, the UDP
//! socket and every control connection, all non-blocking. Nothing grows with the number
//! of connection attempts: at most `max_clients` connections hold a slot (handshaking or
//! running), at most `max_per_source` of them from one address (IPv6: one /64), at most
//! [`MAX_CLOSING`] refused or finished connections linger to deliver their StopPacket,
//! and each connection buffers at most [`MAX_CLIENT_MSG`] bytes of input and about
//! [`OUT_HIGH`] of output.
//!
//! Handshake: Hello (version) → Challenge (server nonce, token required?) → Auth (proof)
//! → Start (128-bit session id from the CSPRNG, server proof); it must finish within
//! `handshake_timeout` or the connection gets StopPacket 6 (which a v1 client, waiting
//! for a StartPacket, prints as a protocol error).
//!
//! RUNNING: a datagram counts only if it names a running session, comes from the
//! control connection's IP address and carries the right tag; a wrong tag is dropped
//! and counted (it may be a forgery, so unlike v1 it cannot stop the session). Valid
//! datagrams go through the token bucket (rate `max_rate`, depth `BUCKET_S` seconds;
//! exceeding it is an abnormal stop) and the loss window. AbnormalStop: control socket
//! error, idle longer than `idle_timeout` (only valid datagrams and complete control
//! messages count as activity), longer than `max_duration`, rate exceeded, protocol
//! error, amplification bound, or output not drained for `idle_timeout`.

use std::collections::HashMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::args::{check_range, Args};
use crate::auth::{self, Nonce};
use crate::proto::{code, code_text, decode_udp, udp_tag_ok, Ctrl, Rng, Side, MAX_CLIENT_MSG, VERSION};
use crate::session::{Outbox, Session, OUT_HIGH};
use crate::{check_rate_cap, wall_ns, BUCKET_S, DEFAULT_IDLE_S, MAX_CLIENTS, MAX_JUMP, THESIS_MAX_RATE};

pub const SERVER_USAGE: &str = "usage: ccprobe server [--bind ADDR (127.0.0.1)] [--port N (9000; 0 = any free port)] \
[--token T (or env CCBENCH_PROBE_TOKEN; clients must know it)] \
[--max-clients N (10, at most 10)] [--max-per-source N (3)] [--max-rate PKT_PER_S (1000; above 1000 only on loopback)] \
[--idle-timeout S (10)] [--handshake-timeout S (5)] [--max-duration S (3600)] [--exit-after N] [--quiet] \
[test only: --debug-loss P --debug-seed S --debug-reorder P --debug-reorder-depth D (50, < 128)]";

/// Environment variable holding the shared token (server and client), so that it does
/// not appear in the process list.
pub const TOKEN_ENV: &str = "CCBENCH_PROBE_TOKEN";
/// Refused or finished connections kept open (at most this many) to deliver their last
/// bytes; more are closed at once.
pub const MAX_CLOSING: usize = 64;
/// How long a refused or finished connection may linger, and how much of its input it
/// reads and discards meanwhile (closing with unread input would reset the connection
/// and could destroy the StopPacket; an endless sender is cut off anyway).
const LINGER: Duration = Duration::from_millis(1500);
const LINGER_DISCARD: usize = 64 * 1024;
/// Most connections accepted, and datagrams read, per loop turn (fairness).
const ACCEPT_BATCH: usize = 64;
const UDP_BATCH: usize = 1024;
/// Loop wake-up period: the granularity of every timeout.
const TICK_MS: i32 = 20;

#[derive(Clone, Debug)]
pub struct ServerConfig {
    pub bind: IpAddr,
    pub port: u16,
    pub token: Option<Vec<u8>>,
    pub max_clients: usize,
    pub max_per_source: usize,
    pub max_rate: f64,
    pub idle_timeout: Duration,
    pub handshake_timeout: Duration,
    pub max_duration: Duration,
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
        Self::from_args_env(argv, std::env::var(TOKEN_ENV).ok())
    }

    /// `env_token`: the value of [`TOKEN_ENV`], used when `--token` is not given.
    pub fn from_args_env(argv: &[String], env_token: Option<String>) -> Result<Self, String> {
        let a = Args::parse(
            argv,
            &[
                "--bind",
                "--port",
                "--token",
                "--max-clients",
                "--max-per-source",
                "--max-rate",
                "--idle-timeout",
                "--handshake-timeout",
                "--max-duration",
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
        let token = auth::token_from(a.str("--token"), env_token.as_deref())?;
        let max_clients = a.u64_or("--max-clients", MAX_CLIENTS as u64, "a number of clients")?;
        if max_clients == 0 || max_clients > MAX_CLIENTS as u64 {
            return Err(format!("--max-clients: must be between 1 and {MAX_CLIENTS} (thesis §4.3), got {max_clients}"));
        }
        let per_source = a.u64_or("--max-per-source", 3.min(max_clients), "a number of connections")?;
        if per_source == 0 || per_source > max_clients {
            return Err(format!(
                "--max-per-source: must be between 1 and --max-clients ({max_clients}), got {per_source}"
            ));
        }
        let max_rate = a.f64_or("--max-rate", THESIS_MAX_RATE, "packets per second")?;
        check_rate_cap(max_rate, bind)?;
        let idle = a.f64_or("--idle-timeout", DEFAULT_IDLE_S, "seconds")?;
        check_range("--idle-timeout", idle, 0.05, 3600.0, "seconds")?;
        let hs = a.f64_or("--handshake-timeout", 5.0, "seconds")?;
        check_range("--handshake-timeout", hs, 0.05, 60.0, "seconds")?;
        let dur = a.f64_or("--max-duration", 3600.0, "seconds")?;
        check_range("--max-duration", dur, 1.0, 86400.0, "seconds")?;
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
            token,
            max_clients: max_clients as usize,
            max_per_source: per_source as usize,
            max_rate,
            idle_timeout: Duration::from_secs_f64(idle),
            handshake_timeout: Duration::from_secs_f64(hs),
            max_duration: Duration::from_secs_f64(dur),
            exit_after,
            quiet: a.flag("--quiet"),
            debug_loss,
            debug_seed: a.u64_or("--debug-seed", 1, "an integer seed")?,
            debug_reorder,
            debug_reorder_depth: depth,
        })
    }

    fn token(&self) -> &[u8] {
        self.token.as_deref().unwrap_or(b"")
    }
}

/// The per-source limit's key: the IPv4 address, or the /64 of an IPv6 address (one
/// subscriber typically holds a whole /64).
pub fn source_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
    }
}

enum Phase {
    /// Waiting for the client's Hello.
    Hello {
        sn: Nonce,
    },
    /// Challenge sent; waiting for Auth.
    Auth {
        cn: Nonce,
        sn: Nonce,
    },
    Running(Box<Session>),
    /// Writing out what is queued, then FIN; input is read and discarded until EOF or
    /// `until`.
    Closing {
        until: Instant,
        shut: bool,
    },
}

struct Conn {
    stream: TcpStream,
    peer: SocketAddr,
    /// Per-source key while the connection holds a slot.
    slot: Option<IpAddr>,
    phase: Phase,
    inbuf: Vec<u8>,
    out: Outbox,
    deadline: Instant,
    /// Bytes read and discarded while closing.
    discarded: usize,
}

impl Conn {
    /// Writes what it can without blocking; false if the connection failed.
    fn flush(&mut self, now: Instant) -> bool {
        let mut progress = false;
        while !self.out.buf.is_empty() {
            match self.stream.write(&self.out.buf) {
                Ok(0) => return false,
                Ok(n) => {
                    self.out.buf.drain(..n);
                    progress = true;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => return false,
            }
        }
        if self.out.buf.is_empty() || progress {
            self.out.stalled_since = None;
        } else {
            self.out.stalled_since.get_or_insert(now);
        }
        if self.out.buf.is_empty() {
            if let Phase::Closing { shut, .. } = &mut self.phase {
                if !*shut {
                    let _ = self.stream.shutdown(Shutdown::Write);
                    *shut = true;
                }
            }
        }
        true
    }

    fn session(&mut self) -> Option<&mut Session> {
        match &mut self.phase {
            Phase::Running(s) => Some(s),
            _ => None,
        }
    }
}

struct Server {
    cfg: ServerConfig,
    udp: UdpSocket,
    conns: Vec<Option<Conn>>,
    by_sid: HashMap<u128, usize>,
    per_source: HashMap<IpAddr, usize>,
    /// Sessions that ended (normal or abnormal).
    finished: u64,
    started: u64,
    depth: f64,
    /// Refusals logged in the current second (a connect burst logs a few, then a count).
    refusal_log: (Instant, u64),
}

/// Best-effort socket buffer size (the kernel doubles it and caps it at
/// net.core.{r,w}mem_max); a fixed size also turns off the kernel's autotuning.
fn set_buf(fd: &impl AsRawFd, opt: libc::c_int, bytes: i32) {
    // SAFETY: setsockopt with a valid descriptor and a pointer to an i32 of that size
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            opt,
            &bytes as *const i32 as *const libc::c_void,
            std::mem::size_of::<i32>() as libc::socklen_t,
        );
    }
}

/// Kernel buffers of a control connection: a client sends a few dozen bytes, and the
/// reports need far less than 64 KiB in flight (1000 packets/s × 37 B × 1 s RTT), so
/// a client that does not read backs up into the server's own bounded buffer at once
/// instead of into megabytes of autotuned kernel memory.
const CTRL_RCVBUF: i32 = 4096;
const CTRL_SNDBUF: i32 = 64 * 1024;

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
    set_buf(&udp, libc::SO_RCVBUF, 8 << 20);
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    udp.set_nonblocking(true).map_err(|e| e.to_string())?;
    auth::random_bytes::<1>()?; // fail now, not at the first client, without a CSPRNG
    println!("ccprobe server listening on {addr} (tcp control + udp probes, protocol v{VERSION})");
    let _ = std::io::stdout().flush();
    let depth = cfg.max_rate * BUCKET_S + 16.0;
    let mut srv = Server {
        cfg,
        udp,
        conns: Vec::new(),
        by_sid: HashMap::new(),
        per_source: HashMap::new(),
        finished: 0,
        started: 0,
        depth,
        refusal_log: (Instant::now(), 0),
    };
    if srv.cfg.token.is_none() && !srv.cfg.bind.is_loopback() {
        srv.log("no token (--token or CCBENCH_PROBE_TOKEN): anyone who reaches this address may measure (README \"Threat model\")");
    }
    let mut buf = vec![0u8; 2048];
    loop {
        if let Some(n) = srv.cfg.exit_after {
            // exit once the last session's final bytes are written
            if srv.finished >= n && srv.conns.iter().flatten().all(|c| c.out.buf.is_empty()) {
                return Ok(());
            }
        }
        let mut fds = vec![
            libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: srv.udp.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let mut idx = Vec::new();
        for (i, c) in srv.conns.iter().enumerate() {
            if let Some(c) = c {
                let mut ev = libc::POLLIN;
                if !c.out.buf.is_empty() {
                    ev |= libc::POLLOUT;
                }
                fds.push(libc::pollfd { fd: c.stream.as_raw_fd(), events: ev, revents: 0 });
                idx.push(i);
            }
        }
        // SAFETY: `fds` is a valid array of `fds.len()` pollfd structs for the call
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, TICK_MS) };
        if r < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() != ErrorKind::Interrupted {
                return Err(format!("poll failed: {e}"));
            }
            continue;
        }
        let now = Instant::now();
        if fds[1].revents != 0 {
            srv.read_datagrams(&mut buf, now);
        }
        if fds[0].revents != 0 {
            srv.accept_batch(&listener, now);
        }
        for (k, &i) in idx.iter().enumerate() {
            let ev = fds[k + 2].revents;
            if ev & libc::POLLOUT != 0 {
                srv.on_writable(i, now);
            }
            if ev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                srv.on_readable(i, now);
            }
        }
        srv.timers(Instant::now());
    }
}

impl Server {
    fn log(&self, msg: &str) {
        if !self.cfg.quiet {
            eprintln!("ccprobe server: {msg}");
        }
    }

    fn handshaking(&self) -> usize {
        self.conns.iter().flatten().filter(|c| matches!(c.phase, Phase::Hello { .. } | Phase::Auth { .. })).count()
    }

    fn closing(&self) -> usize {
        self.conns.iter().flatten().filter(|c| matches!(c.phase, Phase::Closing { .. })).count()
    }

    fn insert(&mut self, c: Conn) -> usize {
        if let Some(i) = self.conns.iter().position(|c| c.is_none()) {
            self.conns[i] = Some(c);
            i
        } else {
            self.conns.push(Some(c));
            self.conns.len() - 1
        }
    }

    fn release_slot(&mut self, i: usize) {
        if let Some(key) = self.conns[i].as_mut().and_then(|c| c.slot.take()) {
            if let Some(n) = self.per_source.get_mut(&key) {
                *n -= 1;
                if *n == 0 {
                    self.per_source.remove(&key);
                }
            }
        }
    }

    fn drop_conn(&mut self, i: usize) {
        self.release_slot(i);
        self.conns[i] = None;
    }

    fn accept_batch(&mut self, listener: &TcpListener, now: Instant) {
        for _ in 0..ACCEPT_BATCH {
            let (stream, peer) = match listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    // e.g. out of file descriptors: try again at the next turn
                    self.log(&format!("accept failed: {e}"));
                    return;
                }
            };
            if stream.set_nonblocking(true).is_err() {
                continue;
            }
            let _ = stream.set_nodelay(true);
            set_buf(&stream, libc::SO_RCVBUF, CTRL_RCVBUF);
            set_buf(&stream, libc::SO_SNDBUF, CTRL_SNDBUF);
            let key = source_key(peer.ip());
            let from_source = self.per_source.get(&key).copied().unwrap_or(0);
            let refusal = if self.by_sid.len() + self.handshaking() >= self.cfg.max_clients {
                Some((code::SERVER_FULL, format!("already serving {} clients (the limit)", self.cfg.max_clients)))
            } else if from_source >= self.cfg.max_per_source {
                Some((code::PER_SOURCE, format!("already {from_source} connections from {key} (--max-per-source)")))
            } else {
                None
            };
            let mut c = Conn {
                stream,
                peer,
                slot: None,
                phase: Phase::Closing { until: now + LINGER, shut: false },
                inbuf: Vec::new(),
                out: Outbox::default(),
                deadline: now + self.cfg.handshake_timeout,
                discarded: 0,
            };
            if let Some((stop, why)) = refusal {
                self.log_refusal(&peer, &why, now);
                c.out.force(&Ctrl::Stop { code: stop }.encode());
                // a fresh socket's send buffer takes 16 bytes at once
                c.flush(now);
                if self.closing() < MAX_CLOSING {
                    self.insert(c);
                }
                continue;
            }
            let sn = match auth::random_bytes::<16>() {
                Ok(sn) => sn,
                Err(e) => {
                    self.log(&e);
                    continue;
                }
            };
            c.phase = Phase::Hello { sn };
            c.slot = Some(key);
            *self.per_source.entry(key).or_insert(0) += 1;
            self.insert(c);
        }
    }

    fn log_refusal(&mut self, peer: &SocketAddr, why: &str, now: Instant) {
        if now.duration_since(self.refusal_log.0) >= Duration::from_secs(1) {
            if self.refusal_log.1 > 5 {
                self.log(&format!("... and {} more refusals", self.refusal_log.1 - 5));
            }
            self.refusal_log = (now, 0);
        }
        self.refusal_log.1 += 1;
        if self.refusal_log.1 <= 5 {
            self.log(&format!("refused {peer}: {why}"));
        }
    }

    fn on_writable(&mut self, i: usize, now: Instant) {
        let Some(c) = self.conns[i].as_mut() else { return };
        if !c.flush(now) {
            self.end(i, code::CONTROL_ERROR, false, "control socket write failed".into(), now);
            self.drop_conn(i);
        }
    }

    fn on_readable(&mut self, i: usize, now: Instant) {
        let mut tmp = [0u8; 512];
        for _ in 0..16 {
            let Some(c) = self.conns[i].as_mut() else { return };
            let closing = matches!(c.phase, Phase::Closing { .. });
            // never buffer more than one client message
            let room = if closing { tmp.len() } else { MAX_CLIENT_MSG - c.inbuf.len() };
            let n = match c.stream.read(&mut tmp[..room]) {
                Ok(0) => {
                    if closing {
                        self.drop_conn(i);
                    } else {
                        self.end(i, code::CONTROL_ERROR, false, "control connection closed by the client".into(), now);
                        self.drop_conn(i);
                    }
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    if !closing {
                        self.end(i, code::CONTROL_ERROR, false, format!("control socket error: {e}"), now);
                    }
                    self.drop_conn(i);
                    return;
                }
            };
            if closing {
                c.discarded += n;
                if c.discarded > LINGER_DISCARD {
                    self.drop_conn(i);
                    return;
                }
                continue;
            }
            c.inbuf.extend_from_slice(&tmp[..n]);
            loop {
                let Some(c) = self.conns[i].as_mut() else { return };
                if matches!(c.phase, Phase::Closing { .. }) {
                    break;
                }
                match Ctrl::parse(&c.inbuf, Side::Client) {
                    Ok(None) => break,
                    Ok(Some((m, used))) => {
                        c.inbuf.drain(..used);
                        c.out.received += used as u64;
                        self.on_message(i, m, now);
                    }
                    Err(e) => {
                        self.end(i, code::PROTOCOL, true, e, now);
                        break;
                    }
                }
            }
        }
    }

    fn on_message(&mut self, i: usize, m: Ctrl, now: Instant) {
        let token_required = self.cfg.token.is_some();
        let c = self.conns[i].as_mut().unwrap();
        match (&mut c.phase, m) {
            (Phase::Hello { sn }, Ctrl::Hello { version, nonce }) => {
                if version != VERSION {
                    let d = format!("client speaks probe protocol v{version}, this server v{VERSION}");
                    return self.end(i, code::VERSION, true, d, now);
                }
                let sn = *sn;
                c.out.queue(&Ctrl::Challenge { version: VERSION, nonce: sn, token_required });
                c.phase = Phase::Auth { cn: nonce, sn };
                if !c.flush(now) {
                    self.drop_conn(i);
                }
            }
            (Phase::Auth { cn, sn }, Ctrl::Auth { proof }) => {
                let (cn, sn) = (*cn, *sn);
                if token_required && !auth::client_proof_ok(self.cfg.token(), &cn, &sn, &proof) {
                    return self.end(i, code::AUTH, true, "wrong or missing token".into(), now);
                }
                let sid = loop {
                    match auth::new_session_id() {
                        Ok(id) if !self.by_sid.contains_key(&id) => break id,
                        Ok(_) => continue,
                        Err(e) => return self.end(i, code::CONTROL_ERROR, true, e, now),
                    }
                };
                let key = auth::session_key(self.cfg.token(), &cn, &sn, sid);
                let proof = auth::server_proof(self.cfg.token(), &cn, &sn, sid);
                let rng = Rng::new(self.cfg.debug_seed.wrapping_mul(0x9E37_79B9).wrapping_add(self.started));
                self.started += 1;
                let c = self.conns[i].as_mut().unwrap();
                c.out.queue(&Ctrl::Start { sid, proof });
                c.phase = Phase::Running(Box::new(Session::new(sid, key, now, self.depth, rng)));
                let peer = c.peer;
                let ok = c.flush(now);
                self.by_sid.insert(sid, i);
                self.log(&format!("session {:08x} from {peer}: started", (sid >> 96) as u32));
                if !ok {
                    self.end(i, code::CONTROL_ERROR, false, "control socket write failed".into(), now);
                    self.drop_conn(i);
                }
            }
            (Phase::Running(s), Ctrl::Stop { code: 0 }) => {
                s.last_activity = now;
                self.end(i, code::NORMAL, true, String::new(), now)
            }
            (_, Ctrl::Stop { code: c }) => {
                self.end(i, code::CLIENT_ABORT, false, format!("client stopped with code {c} ({})", code_text(c)), now)
            }
            (_, other) => self.end(i, code::PROTOCOL, true, format!("unexpected {other:?} from the client"), now),
        }
    }

    /// Ends whatever connection `i` is doing with `end`: a running session logs its
    /// counts (a normal end also sends its final report); `send_stop` queues a
    /// StopPacket. The connection then lingers to deliver it.
    fn end(&mut self, i: usize, end: u64, send_stop: bool, detail: String, now: Instant) {
        self.release_slot(i);
        let Some(c) = self.conns[i].as_mut() else { return };
        if matches!(c.phase, Phase::Closing { .. }) {
            return;
        }
        let phase = std::mem::replace(&mut c.phase, Phase::Closing { until: now + LINGER, shut: false });
        let peer = c.peer;
        let mut line = None;
        if let Phase::Running(mut s) = phase {
            if end == code::NORMAL {
                s.finish(&mut c.out);
            }
            let id = format!("{:08x}", (s.sid >> 96) as u32);
            line = Some(if end == code::NORMAL && s.abort.is_none() {
                format!("session {id} normal stop from {peer} {}", s.summary())
            } else {
                let end = s.abort.unwrap_or(end);
                let d = if detail.is_empty() { code_text(end).to_string() } else { detail.clone() };
                format!("session {id} abnormal stop (code {end}: {d}); results discarded; from {peer} {}", s.summary())
            });
            let end = if end == code::NORMAL { s.abort.unwrap_or(end) } else { end };
            self.by_sid.remove(&s.sid);
            self.finished += 1;
            if send_stop {
                c.out.force(&Ctrl::Stop { code: end }.encode());
            }
        } else {
            if send_stop {
                c.out.force(&Ctrl::Stop { code: end }.encode());
            }
            if end != code::CLIENT_ABORT {
                line = Some(format!("{peer}: handshake failed (code {end}: {detail})"));
            }
        }
        c.inbuf = Vec::new();
        let ok = c.flush(now);
        if let Some(l) = line {
            self.log(&l);
        }
        if !ok || self.closing() > MAX_CLOSING {
            self.drop_conn(i);
        }
    }

    fn read_datagrams(&mut self, buf: &mut [u8], now: Instant) {
        for _ in 0..UDP_BATCH {
            let (n, src) = match self.udp.recv_from(buf) {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e) => {
                    self.log(&format!("udp receive error: {e}"));
                    return;
                }
            };
            self.on_datagram(&buf[..n], src, now);
        }
    }

    fn on_datagram(&mut self, pkt: &[u8], src: SocketAddr, now: Instant) {
        let Ok(p) = decode_udp(pkt) else { return };
        let Some(&i) = self.by_sid.get(&p.sid) else { return };
        let cfg = &self.cfg;
        let Some(c) = self.conns[i].as_mut() else { return };
        if c.peer.ip() != src.ip() {
            return;
        }
        let backlog = c.out.buf.len() >= OUT_HIGH;
        let Phase::Running(s) = &mut c.phase else { return };
        if s.abort.is_some() {
            return;
        }
        if !udp_tag_ok(pkt, &s.key) {
            s.rejected += 1;
            return;
        }
        c.out.received += pkt.len() as u64;
        if backlog {
            s.backlogged += 1;
            return;
        }
        s.last_activity = now;
        if !s.take_token(now, cfg.max_rate, self.depth) {
            s.abort = Some(code::RATE_EXCEEDED);
            return;
        }
        if p.seq > s.window.highest().map_or(0, |h| h) + MAX_JUMP {
            s.abort = Some(code::PROTOCOL);
            return;
        }
        if cfg.debug_loss > 0.0 && s.rng.next_f64() < cfg.debug_loss {
            s.debug_dropped += 1;
            return;
        }
        let rx_ns = wall_ns() as u64;
        if cfg.debug_reorder > 0.0 && s.rng.next_f64() < cfg.debug_reorder {
            s.held.push((p, rx_ns, cfg.debug_reorder_depth));
            return;
        }
        s.deliver(&mut c.out, p, rx_ns);
        if !s.held.is_empty() {
            for h in s.held.iter_mut() {
                h.2 -= 1;
            }
            s.release_held(&mut c.out, false);
        }
        if !c.out.buf.is_empty() && !c.flush(now) {
            if let Some(s) = c.session() {
                s.abort.get_or_insert(code::CONTROL_ERROR);
            }
        }
    }

    fn timers(&mut self, now: Instant) {
        enum Act {
            Drop,
            End(u64, bool, String),
            EndDrop(u64, String),
        }
        for i in 0..self.conns.len() {
            let Some(c) = self.conns[i].as_ref() else { continue };
            let idle = self.cfg.idle_timeout;
            let stalled = c.out.stalled_since.is_some_and(|t| now.duration_since(t) > idle);
            let act = match &c.phase {
                Phase::Closing { until, .. } => (now > *until || stalled).then_some(Act::Drop),
                Phase::Hello { .. } | Phase::Auth { .. } => (now > c.deadline).then(|| {
                    let d = format!(
                        "no v2 handshake within {:.3} s (a protocol v1 client, or a stalled connection)",
                        self.cfg.handshake_timeout.as_secs_f64()
                    );
                    Act::End(code::PROTOCOL, true, d)
                }),
                Phase::Running(s) => {
                    if stalled {
                        let d =
                            format!("the client has not read its control connection for {:.3} s", idle.as_secs_f64());
                        Some(Act::EndDrop(code::CONTROL_ERROR, d))
                    } else if let Some(a) = s.abort {
                        Some(Act::End(a, true, String::new()))
                    } else if now.duration_since(s.last_activity) > idle {
                        Some(Act::End(code::IDLE, true, format!("idle for more than {:.3} s", idle.as_secs_f64())))
                    } else if now.duration_since(s.started) > self.cfg.max_duration {
                        let d = format!("longer than --max-duration {:.0} s", self.cfg.max_duration.as_secs_f64());
                        Some(Act::End(code::DURATION, true, d))
                    } else {
                        None
                    }
                }
            };
            match act {
                None => {}
                Some(Act::Drop) => self.drop_conn(i),
                Some(Act::End(code, stop, d)) => self.end(i, code, stop, d, now),
                Some(Act::EndDrop(code, d)) => {
                    self.end(i, code, false, d, now);
                    self.drop_conn(i);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_keys_group_ipv6_by_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::7".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(source_key(a), source_key(b));
        assert_ne!(source_key(a), source_key(c));
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(source_key(v4), v4);
        assert_eq!(source_key("::ffff:192.0.2.7".parse().unwrap()), v4);
    }

    #[test]
    fn token_from_option_or_environment() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let c = ServerConfig::from_args_env(&[], Some("from-the-env".into())).unwrap();
        assert_eq!(c.token.as_deref(), Some(&b"from-the-env"[..]));
        let c = ServerConfig::from_args_env(&v(&["--token", "from-option"]), Some("from-the-env".into())).unwrap();
        assert_eq!(c.token.as_deref(), Some(&b"from-option"[..]));
        assert!(ServerConfig::from_args_env(&[], None).unwrap().token.is_none());
        let e = ServerConfig::from_args_env(&[], Some("short".into())).unwrap_err();
        assert!(e.starts_with("CCBENCH_PROBE_TOKEN: a token must be 8 to 1024 bytes"), "{e}");
        let e = ServerConfig::from_args_env(&v(&["--max-per-source", "0"]), None).unwrap_err();
        assert!(e.contains("--max-per-source: must be between 1 and --max-clients (10)"), "{e}");
    }
}
