//! Probe programs run inside the namespaces (`ip netns exec NS ccemu probe ...`):
//! TCP bulk and CBR senders, a TCP receiver, UDP CBR sender and receiver, and the
//! `TCP_INFO` sampler. Every time is CLOCK_MONOTONIC in ns (one host clock, so one-way
//! delays between namespaces are exact).
//!
//! Output files (little-endian records; `python/ccbench/emu/tables.py` reads them):
//! - `<out>.send.bin`  per message written: msg u64, t_write u64, offset u64, bytes u32, pad u32
//! - `<out>.recv.bin`  TCP: per read: t u64, cumulative bytes u64;
//!                     UDP: per datagram: t u64, msg u64
//! - `<out>.info.bin`  TCP_INFO samples, [`INFO_REC`] bytes each (see `write_info`)
//! - `<out>.json`      summary (bytes, first/last times, final TCP_INFO counters, cc used)

use crate::sys::{self, mono_ns};
use ccsim::app::{App, Emit};
use ccsim::config::AppConfig;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::SocketAddrV4;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `struct tcp_info` from `linux/tcp.h` (fields up to `tcpi_snd_wnd`).
#[repr(C)]
#[derive(Clone, Copy, Default, Debug)]
pub struct TcpInfo {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub options: u8,
    pub wscale: u8,
    pub flags: u8,
    pub rto: u32,
    pub ato: u32,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub fackets: u32,
    pub last_data_sent: u32,
    pub last_ack_sent: u32,
    pub last_data_recv: u32,
    pub last_ack_recv: u32,
    pub pmtu: u32,
    pub rcv_ssthresh: u32,
    pub rtt: u32,
    pub rttvar: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub advmss: u32,
    pub reordering: u32,
    pub rcv_rtt: u32,
    pub rcv_space: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub max_pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub notsent_bytes: u32,
    pub min_rtt: u32,
    pub data_segs_in: u32,
    pub data_segs_out: u32,
    pub delivery_rate: u64,
    pub busy_time: u64,
    pub rwnd_limited: u64,
    pub sndbuf_limited: u64,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub bytes_sent: u64,
    pub bytes_retrans: u64,
    pub dsack_dups: u32,
    pub reord_seen: u32,
    pub rcv_ooopack: u32,
    pub snd_wnd: u32,
}

pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    let mut ti = TcpInfo::default();
    let mut len = std::mem::size_of::<TcpInfo>() as libc::socklen_t;
    let r = unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, &mut ti as *mut _ as *mut libc::c_void, &mut len)
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(ti)
}

/// Bytes per TCP_INFO sample record.
pub const INFO_REC: usize = 80;

/// t u64, pacing_rate u64, delivered u64, bytes_retrans u64, cwnd u32, ssthresh u32,
/// srtt_us u32, rttvar_us u32, rto_us u32, inflight u32, sacked u32, lost u32,
/// retrans u32, min_rtt_us u32, ca_state u8, pad 7  (80 bytes)
pub(crate) fn write_info(w: &mut impl Write, t: u64, ti: &TcpInfo) -> io::Result<()> {
    let inflight = (ti.unacked + ti.retrans).saturating_sub(ti.sacked + ti.lost);
    let mut b = [0u8; INFO_REC];
    b[0..8].copy_from_slice(&t.to_le_bytes());
    b[8..16].copy_from_slice(&ti.pacing_rate.to_le_bytes());
    b[16..24].copy_from_slice(&(ti.delivered as u64).to_le_bytes());
    b[24..32].copy_from_slice(&ti.bytes_retrans.to_le_bytes());
    for (i, v) in
        [ti.snd_cwnd, ti.snd_ssthresh, ti.rtt, ti.rttvar, ti.rto, inflight, ti.sacked, ti.lost, ti.retrans, ti.min_rtt]
            .iter()
            .enumerate()
    {
        b[32 + 4 * i..36 + 4 * i].copy_from_slice(&v.to_le_bytes());
    }
    b[72] = ti.ca_state;
    w.write_all(&b)
}

pub(crate) fn err(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::Other, msg.into())
}

fn check(r: libc::c_int, what: &str) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(err(format!("{what}: {}", io::Error::last_os_error())))
    } else {
        Ok(r)
    }
}

fn sockaddr(a: &SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(*a.ip()).to_be() },
        sin_zero: [0; 8],
    }
}

fn setopt_int(fd: RawFd, level: i32, opt: i32, v: i32, what: &str) -> io::Result<()> {
    check(unsafe { libc::setsockopt(fd, level, opt, &v as *const i32 as *const libc::c_void, 4) }, what).map(|_| ())
}

pub fn available_cc() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .unwrap_or_default()
        .trim()
        .to_string()
}

fn set_cc(fd: RawFd, cc: &str) -> io::Result<()> {
    let r = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            cc.as_ptr() as *const libc::c_void,
            cc.len() as u32,
        )
    };
    if r < 0 {
        return Err(err(format!(
            "congestion control {cc:?} is not offered by this kernel ({}); available: {}",
            io::Error::last_os_error(),
            available_cc()
        )));
    }
    Ok(())
}

pub(crate) fn get_cc(fd: RawFd) -> String {
    let mut buf = [0u8; 32];
    let mut len = 32 as libc::socklen_t;
    unsafe {
        libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_CONGESTION, buf.as_mut_ptr() as *mut libc::c_void, &mut len)
    };
    String::from_utf8_lossy(&buf[..len as usize]).trim_end_matches('\0').to_string()
}

fn bind_to(fd: RawFd, a: &SocketAddrV4) -> io::Result<()> {
    setopt_int(fd, libc::SOL_SOCKET, libc::SO_REUSEADDR, 1, "SO_REUSEADDR")?;
    let sa = sockaddr(a);
    check(
        unsafe { libc::bind(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) },
        &format!("bind {a}"),
    )?;
    Ok(())
}

/// Options common to the probes, parsed from `--key value` pairs.
#[derive(Clone, Debug, Default)]
pub struct ProbeArgs {
    pub bind: Option<SocketAddrV4>,
    pub connect: Option<SocketAddrV4>,
    pub start: u64,
    pub stop: u64,
    pub end: u64,
    pub out: String,
    pub cc: Option<String>,
    pub nodelay: bool,
    pub mss: Option<u32>,
    pub bytes: Option<u64>,
    /// Message source (cbr or on_off), the simulator's own `AppConfig`.
    pub app: Option<AppConfig>,
    pub seed: u64,
    pub label: String,
    pub info_ns: u64,
    pub log_reads: bool,
    pub udp_payload: u32,
    pub connect_at_start: bool,
}

/// A message source: the simulator's application code (`ccsim::app::App`) with the
/// simulator's random stream for the flow (`rng::stream(seed, "flow/<name>/app")`), so
/// sizes and gaps are the very ones the simulator draws for the same seed.
pub struct Source {
    app: App,
    rng: ccsim::rng::Rng,
}

impl Source {
    pub fn new(cfg: &AppConfig, seed: u64, label: &str) -> io::Result<Self> {
        let app = App::build(cfg, "app").map_err(|e| err(e.to_string()))?;
        if app.is_bulk() {
            return Err(err("a bulk app has no message schedule"));
        }
        Ok(Source { app, rng: ccsim::rng::stream(seed, label) })
    }
    /// First write time at or after `start` (absolute ns).
    pub fn first(&mut self, start: u64) -> u64 {
        self.app.first_wake(start, &mut self.rng)
    }
    /// The message written at the scheduled time `now`, and the next write time.
    pub fn emit(&mut self, now: u64) -> Emit {
        self.app.emit(now, &mut self.rng)
    }
}

fn rec_send(w: &mut impl Write, msg: u64, t: u64, off: u64, bytes: u32) -> io::Result<()> {
    w.write_all(&msg.to_le_bytes())?;
    w.write_all(&t.to_le_bytes())?;
    w.write_all(&off.to_le_bytes())?;
    w.write_all(&bytes.to_le_bytes())?;
    w.write_all(&0u32.to_le_bytes())
}

/// Waits until the socket is writable, or `deadline` passes (then false).
///
/// Writable is `POLLOUT`: Linux's `sk_stream_is_writeable`, free send-buffer space at
/// least half of what is queued (queued <= 2/3 of `sk_sndbuf`). A writer blocked in
/// `write()` wakes at the same point (`sk_stream_write_space`), and so does one on
/// poll/epoll: the probe writes as they do. It used to retry on a 50 ms timer
/// whatever `poll` said, and a retry passes `tcp_sendmsg_locked`'s check as soon as
/// the queue drops below `sk_sndbuf`, so on send-buffer-limited paths the probe kept
/// more data queued than an application would.
fn wait_writable(fd: RawFd, deadline: u64) -> bool {
    loop {
        let now = mono_ns();
        if now >= deadline {
            return false;
        }
        let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
        let ms = ((deadline - now) / 1_000_000).clamp(1, 50) as i32;
        let r = unsafe { libc::poll(&mut pfd, 1, ms) };
        if r > 0 && pfd.revents & (libc::POLLOUT | libc::POLLERR | libc::POLLHUP) != 0 {
            return true;
        }
    }
}

/// Writes all of `buf` unless `deadline` passes; returns the bytes written.
fn write_all_until(fd: RawFd, buf: &[u8], deadline: u64) -> usize {
    let mut done = 0;
    while done < buf.len() {
        let r = unsafe {
            libc::send(fd, buf[done..].as_ptr() as *const libc::c_void, buf.len() - done, libc::MSG_NOSIGNAL)
        };
        if r > 0 {
            done += r as usize;
        } else if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock {
            if !wait_writable(fd, deadline) {
                break;
            }
        } else {
            break;
        }
    }
    done
}

/// TCP sender: bulk (greedy, or `--bytes`) or CBR (`--size`, `--interval`).
pub fn tcp_send(a: &ProbeArgs) -> io::Result<()> {
    let fd = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) }, "socket")?;
    if let Some(cc) = &a.cc {
        set_cc(fd, cc)?;
    }
    if a.nodelay {
        setopt_int(fd, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1, "TCP_NODELAY")?;
    }
    if let Some(m) = a.mss {
        setopt_int(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, m as i32, "TCP_MAXSEG")?;
    }
    if let Some(b) = &a.bind {
        bind_to(fd, b)?;
    }
    let dst = a.connect.ok_or_else(|| err("--connect is required"))?;
    // Connect at once and start writing at `--start`: the handshake happens before the
    // flow's start, as in the simulator (which has no handshake). `--connect-at-start`
    // waits for the start time before connecting instead.
    if a.connect_at_start {
        sys::wait_until(a.start, 0);
    }
    let sa = sockaddr(&dst);
    let t_connect = mono_ns();
    loop {
        let r =
            unsafe { libc::connect(fd, &sa as *const _ as *const libc::sockaddr, std::mem::size_of_val(&sa) as u32) };
        if r == 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if mono_ns() > t_connect + 2_000_000_000 || e.raw_os_error() != Some(libc::ECONNREFUSED) {
            return Err(err(format!("connect {dst}: {e}")));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let t_established = mono_ns();
    // Everything but the writes is set up before the start: spawning the sampler and
    // creating its file took 1.6-3 ms on a loaded host, by which the first write of a
    // short transfer came late (its completion time, counted from the start, with it).
    sys::set_nonblocking(fd)?;
    let cc_used = get_cc(fd);
    // TCP_INFO sampler thread: samples from the flow's start.
    let stop_flag = Arc::new(AtomicBool::new(false));
    let sampler = if a.info_ns > 0 {
        let out = format!("{}.info.bin", a.out);
        let (stop2, every, end, start) = (stop_flag.clone(), a.info_ns, a.end, a.start);
        Some(std::thread::spawn(move || -> io::Result<()> {
            sys::set_timer_slack_ns(1000);
            let mut w = BufWriter::with_capacity(1 << 20, File::create(out)?);
            let mut t = sys::wait_until(start, 0);
            while !stop2.load(Ordering::Relaxed) && t < end {
                if let Ok(ti) = tcp_info(fd) {
                    write_info(&mut w, mono_ns(), &ti)?;
                }
                t += every;
                sys::wait_until(t, 0);
            }
            w.flush()
        }))
    } else {
        None
    };
    sys::wait_until(a.start, 0);
    let stop_at = a.stop.min(a.end);
    let mut written: u64 = 0;
    let mut msgs: u64 = 0;
    let mut t_first_write = 0u64;
    let mut t_last_write = 0u64;
    if let Some(app) = a.app.as_ref().filter(|c| !matches!(c, AppConfig::Bulk { .. })) {
        // Messages (cbr / on_off) over TCP: one write per message, stamped with the
        // monotonic clock; the schedule is the simulator's, in absolute time.
        let mut w = BufWriter::new(File::create(format!("{}.send.bin", a.out))?);
        let mut src = Source::new(app, a.seed, &a.label)?;
        let buf = vec![0x5au8; 1 << 16];
        let mut next = src.first(a.start.max(t_established));
        loop {
            sys::wait_until(next, 0);
            if next >= stop_at {
                break;
            }
            let e = src.emit(next);
            let size = e.bytes as usize;
            let t = mono_ns();
            if t_first_write == 0 {
                t_first_write = t;
            }
            let mut left = size;
            while left > 0 {
                let n = write_all_until(fd, &buf[..left.min(buf.len())], a.end);
                if n == 0 {
                    break;
                }
                left -= n;
            }
            let n = size - left;
            rec_send(&mut w, msgs, t, written, n as u32)?;
            written += n as u64;
            msgs += 1;
            t_last_write = mono_ns();
            if left > 0 {
                break;
            }
            next = e.next_wake;
        }
        w.flush()?;
    } else {
        // Bulk: greedy writes of 64 KiB until stop (or --bytes).
        let buf = vec![0x5au8; 1 << 16];
        t_first_write = mono_ns();
        loop {
            let want = match a.bytes {
                Some(b) if written >= b => break,
                Some(b) => ((b - written) as usize).min(buf.len()),
                None => buf.len(),
            };
            if mono_ns() >= stop_at {
                break;
            }
            let r = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, want, libc::MSG_NOSIGNAL) };
            if r > 0 {
                written += r as u64;
                msgs += 1;
            } else if r < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock {
                wait_writable(fd, stop_at);
            } else {
                break;
            }
        }
        t_last_write = mono_ns();
    }
    unsafe { libc::shutdown(fd, libc::SHUT_WR) };
    // Keep sampling until the run ends so the tail of the transfer is recorded.
    sys::wait_until(a.end, 0);
    let fin = tcp_info(fd).unwrap_or_default();
    stop_flag.store(true, Ordering::Relaxed);
    if let Some(h) = sampler {
        h.join().map_err(|_| err("sampler panicked"))??;
    }
    let mut summary = final_counters(&fin);
    for (k, v) in [
        ("kind", serde_json::json!("tcp-send")),
        ("cc", serde_json::json!(cc_used)),
        ("t_connect", serde_json::json!(t_connect)),
        ("t_established", serde_json::json!(t_established)),
        ("t_first_write", serde_json::json!(t_first_write)),
        ("t_last_write", serde_json::json!(t_last_write)),
        ("bytes_written", serde_json::json!(written)),
        ("writes", serde_json::json!(msgs)),
    ] {
        summary.insert(k.into(), v);
    }
    std::fs::write(format!("{}.json", a.out), serde_json::Value::Object(summary).to_string())?;
    unsafe { libc::close(fd) };
    Ok(())
}

/// A sender's final `TCP_INFO` counters, as its summary JSON names them.
pub(crate) fn final_counters(fin: &TcpInfo) -> serde_json::Map<String, serde_json::Value> {
    let v = serde_json::json!({
        "bytes_acked": fin.bytes_acked,
        "bytes_sent": fin.bytes_sent,
        "bytes_retrans": fin.bytes_retrans,
        "total_retrans": fin.total_retrans,
        "min_rtt_us": fin.min_rtt,
        "srtt_us": fin.rtt,
        "snd_mss": fin.snd_mss,
        "delivered": fin.delivered,
        "data_segs_out": fin.data_segs_out,
        "segs_out": fin.segs_out,
        "delivered_ce": fin.delivered_ce,
        // tcp_get_info's chrono stats (us): sending, limited by the peer's window, by the send buffer
        "busy_time_us": fin.busy_time,
        "rwnd_limited_us": fin.rwnd_limited,
        "sndbuf_limited_us": fin.sndbuf_limited,
    });
    match v {
        serde_json::Value::Object(m) => m,
        _ => unreachable!("a json! object literal"),
    }
}

/// Prints `LISTENING` on stdout once the socket listens (the orchestrator waits for it).
fn announce() {
    let mut o = io::stdout();
    let _ = writeln!(o, "LISTENING");
    let _ = o.flush();
}

/// TCP receiver: accepts one connection and reads until EOF or `--end`.
pub fn tcp_recv(a: &ProbeArgs) -> io::Result<()> {
    let lfd = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) }, "socket")?;
    bind_to(lfd, &a.bind.ok_or_else(|| err("--bind is required"))?)?;
    check(unsafe { libc::listen(lfd, 4) }, "listen")?;
    announce();
    sys::set_nonblocking(lfd)?;
    let fd = loop {
        let r = unsafe { libc::accept4(lfd, std::ptr::null_mut(), std::ptr::null_mut(), libc::SOCK_CLOEXEC) };
        if r >= 0 {
            break Some(r);
        }
        if mono_ns() >= a.end {
            break None;
        }
        sys::poll_readable(lfd, 20_000_000);
    };
    let mut total: u64 = 0;
    let (mut t_first, mut t_last) = (0u64, 0u64);
    let mut reads = 0u64;
    let mut log = if a.log_reads {
        Some(BufWriter::with_capacity(1 << 20, File::create(format!("{}.recv.bin", a.out))?))
    } else {
        None
    };
    let mut eof = false;
    if let Some(fd) = fd {
        sys::set_nonblocking(fd)?;
        let mut buf = vec![0u8; 1 << 18];
        loop {
            let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
            let t = mono_ns();
            if r > 0 {
                total += r as u64;
                reads += 1;
                if t_first == 0 {
                    t_first = t;
                }
                t_last = t;
                if let Some(w) = log.as_mut() {
                    w.write_all(&t.to_le_bytes())?;
                    w.write_all(&total.to_le_bytes())?;
                }
            } else if r == 0 {
                eof = true;
                break;
            } else if io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock {
                if t >= a.end {
                    break;
                }
                sys::poll_readable(fd, (a.end - t).min(20_000_000));
            } else {
                break;
            }
        }
        unsafe { libc::close(fd) };
    }
    if let Some(mut w) = log {
        w.flush()?;
    }
    let summary = serde_json::json!({
        "kind": "tcp-recv", "accepted": fd.is_some(), "bytes": total, "reads": reads,
        "t_first": t_first, "t_last": t_last, "eof": eof,
    });
    std::fs::write(format!("{}.json", a.out), summary.to_string())?;
    Ok(())
}

/// UDP CBR sender: each datagram carries msg u64 and t_write u64 (LE) at the start of
/// its payload.
pub fn udp_send(a: &ProbeArgs) -> io::Result<()> {
    let fd = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) }, "socket")?;
    if let Some(b) = &a.bind {
        bind_to(fd, b)?;
    }
    let dst = sockaddr(&a.connect.ok_or_else(|| err("--connect is required"))?);
    check(
        unsafe { libc::connect(fd, &dst as *const _ as *const libc::sockaddr, std::mem::size_of_val(&dst) as u32) },
        "connect",
    )?;
    let mut w = BufWriter::new(File::create(format!("{}.send.bin", a.out))?);
    let app = a.app.as_ref().ok_or_else(|| err("--app is required (the simulator's app JSON: cbr or on_off)"))?;
    let mut src = Source::new(app, a.seed, &a.label)?;
    let mut buf = vec![0u8; 65_536];
    let mut next = src.first(a.start);
    let stop_at = a.stop.min(a.end);
    let (mut msgs, mut bytes, mut errors) = (0u64, 0u64, 0u64);
    loop {
        sys::wait_until(next, 0);
        if next >= stop_at {
            break;
        }
        // `size` is what the queue sees; the payload is size minus the 28-byte IP+UDP
        // header (`--udp-payload` gives it directly), at least the 16 stamp bytes.
        let e = src.emit(next);
        let size = e.bytes;
        let payload =
            if a.udp_payload > 0 { a.udp_payload } else { size.saturating_sub(28) }.clamp(16, 65_000) as usize;
        let t = mono_ns();
        buf[0..8].copy_from_slice(&msgs.to_le_bytes());
        buf[8..16].copy_from_slice(&t.to_le_bytes());
        let r = unsafe { libc::send(fd, buf.as_ptr() as *const libc::c_void, payload, 0) };
        if r < 0 {
            errors += 1;
        }
        rec_send(&mut w, msgs, t, bytes, size)?;
        bytes += size as u64;
        msgs += 1;
        next = e.next_wake;
    }
    w.flush()?;
    let summary = serde_json::json!({"kind": "udp-send", "msgs": msgs, "bytes": bytes, "send_errors": errors});
    std::fs::write(format!("{}.json", a.out), summary.to_string())?;
    Ok(())
}

/// UDP receiver: logs (t_receive, msg) per datagram until `--end`.
pub fn udp_recv(a: &ProbeArgs) -> io::Result<()> {
    let fd = check(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) }, "socket")?;
    bind_to(fd, &a.bind.ok_or_else(|| err("--bind is required"))?)?;
    sys::set_nonblocking(fd)?;
    announce();
    let mut w = BufWriter::with_capacity(1 << 20, File::create(format!("{}.recv.bin", a.out))?);
    let mut buf = vec![0u8; 65_536];
    let (mut n, mut bytes) = (0u64, 0u64);
    loop {
        let r = unsafe { libc::recv(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len(), 0) };
        let t = mono_ns();
        if r >= 16 {
            w.write_all(&t.to_le_bytes())?;
            w.write_all(&buf[0..8])?;
            n += 1;
            bytes += r as u64;
            continue;
        }
        if t >= a.end {
            break;
        }
        sys::poll_readable(fd, (a.end - t).min(20_000_000));
    }
    w.flush()?;
    let summary = serde_json::json!({"kind": "udp-recv", "msgs": n, "payload_bytes": bytes});
    std::fs::write(format!("{}.json", a.out), summary.to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_info_layout_matches_kernel_offsets() {
        // Offsets from linux/tcp.h: tcpi_rto at 8, tcpi_snd_cwnd at 80,
        // tcpi_pacing_rate at 104, tcpi_delivered at 192, tcpi_bytes_retrans at 208.
        let ti = TcpInfo::default();
        let base = &ti as *const _ as usize;
        assert_eq!(&ti.rto as *const _ as usize - base, 8);
        assert_eq!(&ti.snd_cwnd as *const _ as usize - base, 80);
        assert_eq!(&ti.pacing_rate as *const _ as usize - base, 104);
        assert_eq!(&ti.delivered as *const _ as usize - base, 192);
        assert_eq!(&ti.bytes_retrans as *const _ as usize - base, 208);
        assert_eq!(std::mem::size_of::<TcpInfo>(), 232);
    }

    #[test]
    fn a_full_socket_is_not_written_again_before_it_is_writable() {
        // A stream socket whose peer does not read: fill it, then wait. The probe used
        // to return after one 50 ms poll whatever poll said; an application does not
        // write again until POLLOUT.
        let mut fds = [0; 2];
        assert_eq!(unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM, 0, fds.as_mut_ptr()) }, 0);
        let (w, r) = (fds[0], fds[1]);
        sys::set_nonblocking(w).unwrap();
        let buf = [0u8; 4096];
        while unsafe { libc::send(w, buf.as_ptr() as *const libc::c_void, buf.len(), libc::MSG_NOSIGNAL) } > 0 {}
        let t0 = mono_ns();
        assert!(!wait_writable(w, t0 + 120_000_000), "not writable while the peer reads nothing");
        assert!(mono_ns() - t0 >= 120_000_000);
        // the peer drains it: writable at once
        let mut sink = [0u8; 65536];
        while unsafe { libc::recv(r, sink.as_mut_ptr() as *mut libc::c_void, sink.len(), libc::MSG_DONTWAIT) } > 0 {}
        assert!(wait_writable(w, mono_ns() + 1_000_000_000));
        unsafe {
            libc::close(w);
            libc::close(r);
        }
    }

    #[test]
    fn source_follows_the_simulator_schedule() {
        let cfg: AppConfig = serde_json::from_str(
            r#"{"kind": "cbr", "size_bytes": 186, "interval_ns": 20000000, "jitter": {"dist": "normal", "sd_ns": 1000000}}"#,
        )
        .unwrap();
        let mut src = Source::new(&cfg, 1, "flow/x/app").unwrap();
        let mut app = App::build(&cfg, "app").unwrap();
        let mut rng = ccsim::rng::stream(1, "flow/x/app");
        let (mut a, mut b) = (src.first(5), app.first_wake(5, &mut rng));
        for _ in 0..100 {
            assert_eq!(a, b);
            let (ea, eb) = (src.emit(a), app.emit(b, &mut rng));
            assert_eq!(ea, eb);
            assert_eq!(ea.bytes, 186);
            (a, b) = (ea.next_wake, eb.next_wake);
        }
        let bulk: AppConfig = serde_json::from_str(r#"{"kind": "bulk"}"#).unwrap();
        assert!(Source::new(&bulk, 1, "x").is_err());
    }
}
