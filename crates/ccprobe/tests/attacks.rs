//! Attack scripts against a real `ccprobe server` process on 127.0.0.1 (issue 19): each
//! runs for a few seconds, stops by itself, and checks that the server's resident memory
//! stays under [`RSS_BOUND_KIB`], that it keeps one thread, and that an honest client
//! measuring at the same time is served with no loss.
//!
//! Attackers use other loopback source addresses (127.0.0.2 ...; Linux routes all of
//! 127/8 to lo) so that the per-source limit separates them from the honest client.

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpStream, UdpSocket};
use std::os::fd::FromRawFd;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ccprobe::auth::{self, Key};
use ccprobe::proto::{encode_udp, Ctrl, Rng, Side, UdpTest, MAX_MSG, VERSION};
use ccprobe::session::AMP_SLACK;
use ccprobe::MAX_JUMP;

/// The stated bound on the server's resident memory under every attack below. An idle
/// server holds about 2 MiB; each of its at most 10 sessions buffers at most
/// `OUT_HIGH` (64 KiB) + one turn's output, every other connection at most 32 bytes.
const RSS_BOUND_KIB: u64 = 10 * 1024;

struct Server {
    child: Child,
    addr: SocketAddrV4,
    log: PathBuf,
}

impl Server {
    fn start(extra: &[&str], token: Option<&str>) -> Server {
        let log = std::env::temp_dir().join(format!(
            "ccprobe-attack-{}-{}.log",
            std::process::id(),
            auth::new_session_id().unwrap() as u32
        ));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccprobe"));
        cmd.args(["server", "--port", "0", "--max-rate", "50000"]).args(extra);
        cmd.env_remove("CCBENCH_PROBE_TOKEN");
        if let Some(t) = token {
            cmd.env("CCBENCH_PROBE_TOKEN", t);
        }
        let mut child =
            cmd.stdout(Stdio::piped()).stderr(std::fs::File::create(&log).unwrap()).spawn().expect("ccprobe binary");
        let mut out = child.stdout.take().unwrap();
        let mut line = Vec::new();
        let mut b = [0u8; 1];
        while out.read(&mut b).unwrap() == 1 && b[0] != b'\n' {
            line.push(b[0]);
        }
        let line = String::from_utf8(line).unwrap();
        let addr = line.split("listening on ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
        Server { child, addr, log }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Samples VmRSS and the thread count every 20 ms until `stop`: (max KiB, max threads).
    fn monitor(&self, stop: Arc<AtomicBool>) -> thread::JoinHandle<(u64, u64)> {
        let pid = self.child.id();
        thread::spawn(move || {
            let (mut rss, mut threads) = (0, 0);
            while !stop.load(Ordering::SeqCst) {
                let s = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
                for l in s.lines() {
                    let v = || l.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
                    if l.starts_with("VmRSS:") {
                        rss = rss.max(v());
                    } else if l.starts_with("Threads:") {
                        threads = threads.max(v());
                    }
                }
                thread::sleep(Duration::from_millis(20));
            }
            (rss, threads)
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

/// A TCP connection from a chosen loopback source address.
fn connect_from(src: Ipv4Addr, to: SocketAddrV4) -> std::io::Result<TcpStream> {
    connect_with(src, to, None)
}

/// ... with a receive buffer of `rcvbuf` bytes (set before connecting, so the window is
/// small from the start).
fn connect_with(src: Ipv4Addr, to: SocketAddrV4, rcvbuf: Option<i32>) -> std::io::Result<TcpStream> {
    let sa = |ip: Ipv4Addr, port: u16| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(ip).to_be() },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls on a descriptor this function owns (wrapped at once)
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let s = TcpStream::from_raw_fd(fd);
        if let Some(b) = rcvbuf {
            let sz = std::mem::size_of::<i32>() as libc::socklen_t;
            libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, &b as *const i32 as *const libc::c_void, sz);
        }
        let a = sa(src, 0);
        if libc::bind(fd, &a as *const _ as *const libc::sockaddr, len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let b = sa(*to.ip(), to.port());
        if libc::connect(fd, &b as *const _ as *const libc::sockaddr, len) != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(s)
    }
}

fn read_msg(s: &mut TcpStream, buf: &mut Vec<u8>) -> std::io::Result<Option<Ctrl>> {
    loop {
        match Ctrl::parse(buf, Side::Server) {
            Ok(Some((m, used))) => {
                buf.drain(..used);
                return Ok(Some(m));
            }
            Ok(None) => {}
            Err(e) => panic!("server sent a malformed message: {e}"),
        }
        assert!(buf.len() < MAX_MSG);
        let mut tmp = [0u8; 4096];
        let n = s.read(&mut tmp)?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&tmp[..n]);
    }
}

/// The v2 handshake by hand: (session id, datagram key).
fn handshake(s: &mut TcpStream, token: &[u8]) -> (u128, Key) {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let cn = auth::random_bytes::<16>().unwrap();
    s.write_all(&Ctrl::Hello { version: VERSION, nonce: cn }.encode()).unwrap();
    let mut buf = Vec::new();
    let Some(Ctrl::Challenge { nonce: sn, .. }) = read_msg(s, &mut buf).unwrap() else { panic!("no challenge") };
    s.write_all(&Ctrl::Auth { proof: auth::client_proof(token, &cn, &sn) }.encode()).unwrap();
    let m = read_msg(s, &mut buf).unwrap();
    let Some(Ctrl::Start { sid, .. }) = m else { panic!("no start: {m:?}") };
    (sid, auth::session_key(token, &cn, &sn, sid))
}

/// Runs the real client binary: Ok((packets, lost)) or its error line.
fn honest_client(
    addr: SocketAddrV4,
    packets: u32,
    token: Option<&str>,
) -> thread::JoinHandle<Result<(u64, u64), String>> {
    let token = token.map(str::to_string);
    thread::spawn(move || {
        let dir = std::env::temp_dir();
        let tag = auth::new_session_id().unwrap() as u32;
        let out = dir.join(format!("ccprobe-honest-{tag}.csv"));
        let summ = dir.join(format!("ccprobe-honest-{tag}.json"));
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_ccprobe"));
        cmd.args(["client", "--server", &addr.to_string(), "--rate", "2000", "--max-rate", "5000", "--drain", "0.2"]);
        cmd.args(["--quiet", "--packets", &packets.to_string(), "--out"]).arg(&out).arg("--summary").arg(&summ);
        cmd.env_remove("CCBENCH_PROBE_TOKEN");
        if let Some(t) = token {
            cmd.env("CCBENCH_PROBE_TOKEN", t);
        }
        let o = cmd.output().unwrap();
        let _ = std::fs::remove_file(&out);
        if !o.status.success() {
            return Err(String::from_utf8_lossy(&o.stderr).into_owned());
        }
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&summ).unwrap()).unwrap();
        let _ = std::fs::remove_file(&summ);
        Ok((v["packets"].as_u64().unwrap(), v["lost"].as_u64().unwrap()))
    })
}

/// The honest client finished its measurement. Loopback loses nothing by itself, but a
/// CI machine may stall the server long enough for the kernel's UDP buffer (capped by
/// net.core.rmem_max) to overflow under an attacker's flood: up to 1 % is tolerated.
fn served(h: thread::JoinHandle<Result<(u64, u64), String>>, packets: u64) {
    match h.join().unwrap() {
        Ok((n, lost)) => assert!(n == packets && lost * 100 <= packets, "honest client: {lost} of {n} lost"),
        Err(e) => panic!("the honest client was not served: {e}"),
    }
}

/// Reads everything the server sends until it closes: (bytes, last stop code).
fn drain(mut s: TcpStream, limit: Duration) -> (u64, Option<u64>) {
    s.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let end = Instant::now() + limit;
    let (mut total, mut all) = (0u64, Vec::new());
    let mut tmp = [0u8; 65536];
    while Instant::now() < end {
        match s.read(&mut tmp) {
            Ok(0) => break,
            Ok(n) => {
                total += n as u64;
                all.extend_from_slice(&tmp[..n]);
            }
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
            Err(_) => break,
        }
    }
    let mut buf = all;
    let mut stop = None;
    while let Ok(Some((m, used))) = Ctrl::parse(&buf, Side::Server) {
        if let Ctrl::Stop { code } = m {
            stop = Some(code);
        }
        buf.drain(..used);
    }
    (total, stop)
}

/// Sequence numbers jumping 2^20 ahead at 10,000 datagrams/s from a client that never
/// reads its control connection: v1 built multi-megabyte reports and queued them until
/// it aborted. v2: one 16-byte range per jump, the output stalls at the kernel's socket
/// buffers, the server stops processing the datagrams and cuts the client off after the
/// idle timeout; what it sent stays under the amplification bound.
#[test]
fn jumps_far_ahead_from_a_client_that_never_reads() {
    let srv = Server::start(&["--idle-timeout", "1"], None);
    let stop = Arc::new(AtomicBool::new(false));
    let mon = srv.monitor(stop.clone());
    let src = Ipv4Addr::new(127, 0, 0, 2);
    let mut c = connect_with(src, srv.addr, Some(4096)).unwrap();
    let (sid, key) = handshake(&mut c, b"");
    let honest = honest_client(srv.addr, 3000, None);
    let u = UdpSocket::bind((src, 0)).unwrap();
    let mut pkt = [0u8; 48];
    let mut rng = Rng::new(1);
    let t0 = Instant::now();
    let mut sent_bytes = 56u64; // Hello + Auth
    let mut seq = 0u64;
    while t0.elapsed() < Duration::from_secs(3) {
        for _ in 0..10 {
            encode_udp(&mut pkt, UdpTest { sid, seq, ts_ns: 1 }, &key, &mut rng);
            if u.send_to(&pkt, srv.addr).is_ok() {
                sent_bytes += 48;
            }
            seq += MAX_JUMP;
        }
        thread::sleep(Duration::from_millis(1));
    }
    served(honest, 3000);
    thread::sleep(Duration::from_millis(1500));
    let (got, _) = drain(c, Duration::from_secs(3));
    stop.store(true, Ordering::SeqCst);
    let (rss, threads) = mon.join().unwrap();
    let log = srv.log();
    eprintln!(
        "jump attack: {} datagrams, {sent_bytes} B sent, {got} B received back; server max VmRSS {rss} KiB, {threads} thread(s)",
        seq / MAX_JUMP
    );
    assert!(rss > 0 && rss < RSS_BOUND_KIB, "VmRSS {rss} KiB");
    assert_eq!(threads, 1);
    assert!(got <= sent_bytes + AMP_SLACK + 16, "amplification: {got} B back for {sent_bytes} B");
    let line = log.lines().find(|l| l.contains("abnormal stop")).unwrap_or_else(|| panic!("{log}"));
    eprintln!("{line}");
    // backpressure: datagrams left unprocessed, then cut off for not reading
    assert!(line.contains("has not read its control connection") && line.contains("backlogged"), "{line}");
}

/// A burst of 300 connects, slow connections that trickle a Hello byte by byte, and
/// sessions that go silent, all from attacker addresses; the honest client gets a slot
/// (per-source limit), every attacker connection ends (refusal, handshake or idle
/// timeout) and the server keeps one thread.
#[test]
fn connect_bursts_and_slow_connections() {
    let srv = Server::start(&["--idle-timeout", "1", "--handshake-timeout", "0.5"], None);
    let stop = Arc::new(AtomicBool::new(false));
    let mon = srv.monitor(stop.clone());
    let codes: Arc<std::sync::Mutex<Vec<Option<u64>>>> = Arc::default();
    let mut hs = Vec::new();
    // slow: one byte of a Hello every 100 ms (never completes within 0.5 s)
    for _ in 0..3 {
        let (addr, codes) = (srv.addr, codes.clone());
        hs.push(thread::spawn(move || {
            let mut c = connect_from(Ipv4Addr::new(127, 0, 0, 3), addr).unwrap();
            let hello = Ctrl::Hello { version: VERSION, nonce: [0; 16] }.encode();
            for b in &hello[..20] {
                if c.write_all(&[*b]).is_err() {
                    break;
                }
                thread::sleep(Duration::from_millis(100));
            }
            codes.lock().unwrap().push(drain(c, Duration::from_secs(3)).1);
        }));
    }
    // silent: complete the handshake, then send nothing
    for _ in 0..3 {
        let (addr, codes) = (srv.addr, codes.clone());
        hs.push(thread::spawn(move || {
            let mut c = connect_from(Ipv4Addr::new(127, 0, 0, 4), addr).unwrap();
            handshake(&mut c, b"");
            codes.lock().unwrap().push(drain(c, Duration::from_secs(4)).1);
        }));
    }
    thread::sleep(Duration::from_millis(100));
    // burst: 300 connects from four threads (one address: with the slow and silent
    // ones it holds 9 of the 10 slots, the per-source limit keeps one for the honest client)
    let refused = Arc::new(AtomicU64::new(0));
    for _ in 0..4 {
        let (addr, refused) = (srv.addr, refused.clone());
        hs.push(thread::spawn(move || {
            let mut open = Vec::new();
            for _ in 0..75 {
                if let Ok(c) = connect_from(Ipv4Addr::new(127, 0, 0, 5), addr) {
                    open.push(c);
                }
            }
            for c in open {
                if matches!(drain(c, Duration::from_secs(3)).1, Some(4) | Some(10) | Some(6)) {
                    refused.fetch_add(1, Ordering::SeqCst);
                }
            }
        }));
    }
    let honest = honest_client(srv.addr, 3000, None);
    served(honest, 3000);
    for h in hs {
        h.join().unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    let (rss, threads) = mon.join().unwrap();
    let codes = codes.lock().unwrap().clone();
    eprintln!(
        "connection attacks: {} of 300 burst connections refused or timed out, slow/silent codes {codes:?}; \
         server max VmRSS {rss} KiB, {threads} thread(s)",
        refused.load(Ordering::SeqCst)
    );
    assert!(rss > 0 && rss < RSS_BOUND_KIB, "VmRSS {rss} KiB");
    assert_eq!(threads, 1);
    let mut c = codes.clone();
    c.sort();
    // slow ones: handshake timeout (6); silent ones: idle timeout (2)
    assert_eq!(c, vec![Some(2), Some(2), Some(2), Some(6), Some(6), Some(6)]);
    assert!(refused.load(Ordering::SeqCst) >= 290, "{}", srv.log());
}

/// A huge unfinished control message: a report-sized header claiming 2^22 entries
/// followed by 64 MB, 64 MB of garbage, and a Hello that never completes. The server
/// buffers at most one client message (32 bytes) and ends each connection.
#[test]
fn huge_unfinished_control_messages() {
    let srv = Server::start(&["--handshake-timeout", "0.5"], None);
    let stop = Arc::new(AtomicBool::new(false));
    let mon = srv.monitor(stop.clone());
    let honest = honest_client(srv.addr, 3000, None);
    let mut hs = Vec::new();
    for (k, prefix) in [
        Ctrl::Hello { version: VERSION, nonce: [0; 16] }
            .encode()
            .into_iter()
            .chain(*b"L_REPORT")
            .chain((1u64 << 22).to_be_bytes())
            .collect::<Vec<u8>>(),
        b"GARBAGE!".to_vec(),
        Ctrl::Hello { version: VERSION, nonce: [0; 16] }.encode()[..31].to_vec(),
    ]
    .into_iter()
    .enumerate()
    {
        let addr = srv.addr;
        hs.push(thread::spawn(move || {
            let mut c = connect_from(Ipv4Addr::new(127, 0, 0, 6 + k as u8), addr).unwrap();
            c.write_all(&prefix).unwrap();
            let mut written = prefix.len() as u64;
            if k < 2 {
                let chunk = vec![0x5Au8; 1 << 20];
                c.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
                for _ in 0..64 {
                    match c.write(&chunk) {
                        Ok(n) => written += n as u64,
                        Err(_) => break,
                    }
                }
            }
            (written, drain(c, Duration::from_secs(2)).1)
        }));
    }
    let res: Vec<(u64, Option<u64>)> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    served(honest, 3000);
    stop.store(true, Ordering::SeqCst);
    let (rss, threads) = mon.join().unwrap();
    eprintln!("huge messages: (bytes written, stop code) {res:?}; server max VmRSS {rss} KiB, {threads} thread(s)");
    assert!(rss > 0 && rss < RSS_BOUND_KIB, "VmRSS {rss} KiB");
    assert_eq!(threads, 1);
    // the writers were cut off long before 64 MB (the kernel's buffers and what the
    // server discards while it delivers its StopPacket)
    assert!(res[0].0 < 16 << 20 && res[1].0 < 16 << 20, "{res:?}");
    assert_eq!(res[2].1, Some(6), "an unfinished Hello ends at the handshake timeout");
    let log = srv.log();
    assert!(
        log.contains("a client may not send \"L_REPORT\"") && log.contains("unknown control message type"),
        "{log}"
    );
}

/// An attacker who knows a victim's session id (an on-path observer sees it in every
/// datagram) but not the token forges datagrams from the victim's own address: to hide
/// its losses, to jump far ahead (v1: abnormal stop), to exceed the rate cap. Every one
/// is dropped; the victim's measurement ends normally with exactly its own losses.
#[test]
fn forged_packets_against_another_session() {
    let token = "a shared secret token";
    let srv = Server::start(&["--max-per-source", "4"], Some(token));
    let mut victim = connect_from(Ipv4Addr::LOCALHOST, srv.addr).unwrap();
    let (sid, key) = handshake(&mut victim, token.as_bytes());
    let honest = honest_client(srv.addr, 3000, Some(token));
    let u = UdpSocket::bind("127.0.0.1:0").unwrap();
    let forger = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = Rng::new(3);
    let mut pkt = [0u8; 64];
    let wrong: Key = auth::session_key(b"guessed token", &[0; 16], &[0; 16], sid);
    let skip = [5u64, 17, 100];
    let mut forged = 0u64;
    for seq in 0..300u64 {
        if !skip.contains(&seq) {
            encode_udp(&mut pkt, UdpTest { sid, seq, ts_ns: 1 }, &key, &mut rng);
            u.send_to(&pkt, srv.addr).unwrap();
        }
        // forgeries: the skipped numbers, a far jump, and a flood (20 per real packet)
        for k in 0..20u64 {
            let fseq = match k {
                0..=2 => skip[k as usize],
                3 => seq + (1 << 40),
                _ => seq + k,
            };
            encode_udp(&mut pkt, UdpTest { sid, seq: fseq, ts_ns: 1 }, &wrong, &mut rng);
            forger.send_to(&pkt, srv.addr).unwrap();
            forged += 1;
        }
        thread::sleep(Duration::from_millis(1));
    }
    // and random session ids, as an off-path attacker would have to guess
    for _ in 0..1000 {
        encode_udp(&mut pkt, UdpTest { sid: auth::new_session_id().unwrap(), seq: 1, ts_ns: 1 }, &wrong, &mut rng);
        forger.send_to(&pkt, srv.addr).unwrap();
    }
    thread::sleep(Duration::from_millis(300));
    victim.write_all(&Ctrl::Stop { code: 0 }.encode()).unwrap();
    let mut buf = Vec::new();
    let (mut losses, mut ack, mut end) = (Vec::new(), None, None);
    while let Some(m) = read_msg(&mut victim, &mut buf).unwrap() {
        match m {
            Ctrl::Report(r) => {
                losses.extend(r.losses);
                ack = r.ack.or(ack);
            }
            Ctrl::Stop { code } => {
                end = Some(code);
                break;
            }
            _ => {}
        }
    }
    served(honest, 3000);
    thread::sleep(Duration::from_millis(100));
    let log = srv.log();
    eprintln!("forgery: {forged} forged datagrams on the victim's session; victim's losses {losses:?}");
    assert_eq!(end, Some(0), "{log}");
    assert_eq!(losses, vec![(5, 1), (17, 1), (100, 1)]);
    assert_eq!(ack, Some(299));
    let rejected: u64 = log
        .split("rejected (bad tag) ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(rejected > forged * 9 / 10 && rejected <= forged, "rejected {rejected} of {forged}: {log}");
}
