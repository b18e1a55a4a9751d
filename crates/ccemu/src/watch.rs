//! `ccemu probe tcp-watch`: samples `TCP_INFO` of a TCP socket that another program
//! owns (a traffic source ccbench does not write, e.g. iperf3), into the very record
//! files `tcp-send` writes (`<out>.info.bin`, `<out>.json`), so the Python side reads
//! both alike.
//!
//! The socket is found by its local address (`--bind ADDR:PORT`, the port the source
//! was told to bind, iperf3's `--cport`) among the file descriptors of process `--pid`,
//! and duplicated into this process with pidfd_getfd(2) (Linux 5.6; needs
//! PTRACE_MODE_ATTACH_REALCREDS rights on the target: root). A duplicate shares the
//! open file, so `getsockopt(TCP_INFO)` on it reads the source's own connection; it
//! holds the socket open until `--end` (a close by the source then sends no FIN before
//! the run's end, which is after the measured window anyway).

use crate::probe::{err, final_counters, get_cc, tcp_info, write_info, ProbeArgs};
use crate::sys::{self, mono_ns};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::net::SocketAddrV4;
use std::os::fd::RawFd;

fn pidfd_open(pid: i32) -> io::Result<RawFd> {
    let r = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if r < 0 {
        return Err(err(format!("pidfd_open({pid}): {}", io::Error::last_os_error())));
    }
    Ok(r as RawFd)
}

/// The local IPv4 address of socket `fd`, if it is a TCP socket bound to one.
fn local_tcp_addr(fd: RawFd) -> Option<SocketAddrV4> {
    let mut ty: libc::c_int = 0;
    let mut len = 4 as libc::socklen_t;
    let r = unsafe { libc::getsockopt(fd, libc::SOL_SOCKET, libc::SO_TYPE, &mut ty as *mut _ as *mut libc::c_void, &mut len) };
    if r < 0 || ty != libc::SOCK_STREAM {
        return None;
    }
    let mut sa: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    let r = unsafe { libc::getsockname(fd, &mut sa as *mut _ as *mut libc::sockaddr, &mut len) };
    if r < 0 || sa.sin_family != libc::AF_INET as libc::sa_family_t {
        return None;
    }
    Some(SocketAddrV4::new(u32::from_be(sa.sin_addr.s_addr).into(), u16::from_be(sa.sin_port)))
}

/// Duplicates the TCP socket of process `pid` bound to `want`, if it has one yet.
fn find_socket(pid: i32, pidfd: RawFd, want: &SocketAddrV4) -> Option<RawFd> {
    let dir = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?;
    for e in dir.flatten() {
        let is_socket = std::fs::read_link(e.path()).map(|l| l.to_string_lossy().starts_with("socket:")).unwrap_or(false);
        let Some(target) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if !is_socket {
            continue;
        }
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd, target, 0) } as RawFd;
        if fd < 0 {
            continue; // closed meanwhile
        }
        if local_tcp_addr(fd).as_ref() == Some(want) {
            return Some(fd);
        }
        unsafe { libc::close(fd) };
    }
    None
}

fn alive(pid: i32) -> bool {
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Waits for process `pid` to own a TCP socket bound to `--bind`, then samples it every
/// `--info-interval` until `--end`. `data_after` bytes sent before the transfer proper
/// (iperf3's stream cookie) are not data: `t_first_data` is the first sample past them.
pub fn tcp_watch(a: &ProbeArgs, pid: i32, data_after: u64) -> io::Result<()> {
    let want = a.bind.ok_or_else(|| err("--bind is required (the watched socket's local address)"))?;
    let pidfd = pidfd_open(pid)?;
    let fd = loop {
        if let Some(fd) = find_socket(pid, pidfd, &want) {
            break Some(fd);
        }
        if mono_ns() >= a.end || !alive(pid) {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_micros(500));
    };
    unsafe { libc::close(pidfd) };
    let t_found = mono_ns();
    let mut w = BufWriter::with_capacity(1 << 20, File::create(format!("{}.info.bin", a.out))?);
    let (mut t_first_data, mut samples) = (0u64, 0u64);
    let mut fin = Default::default();
    let mut cc = String::new();
    if let Some(fd) = fd {
        sys::set_timer_slack_ns(1000);
        let mut t = mono_ns();
        while t < a.end {
            if let Ok(ti) = tcp_info(fd) {
                let now = mono_ns();
                if t_first_data == 0 && ti.bytes_sent > data_after {
                    t_first_data = now;
                }
                write_info(&mut w, now, &ti)?;
                samples += 1;
            }
            t += a.info_ns.max(1);
            sys::wait_until(t, 0);
        }
        fin = tcp_info(fd).unwrap_or_default();
        // read last: the socket is found once bound, before the source sets TCP_CONGESTION
        cc = get_cc(fd);
        unsafe { libc::close(fd) };
    }
    w.flush()?;
    let mut summary = final_counters(&fin);
    for (k, v) in [
        ("kind", serde_json::json!("tcp-watch")),
        ("found", serde_json::json!(fd.is_some())),
        ("cc", serde_json::json!(cc)),
        ("t_found", serde_json::json!(t_found)),
        ("t_first_data", serde_json::json!(t_first_data)),
        ("samples", serde_json::json!(samples)),
    ] {
        summary.insert(k.into(), v);
    }
    std::fs::write(format!("{}.json", a.out), serde_json::Value::Object(summary).to_string())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_and_samples_a_socket_of_this_process() {
        // a listening socket of our own process stands in for the source's socket
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let SocketAddr::V4(addr) = l.local_addr().unwrap() else { panic!() };
        let pid = std::process::id() as i32;
        let Ok(pidfd) = pidfd_open(pid) else { return }; // kernel without pidfd_open
        let fd = find_socket(pid, pidfd, &addr);
        unsafe { libc::close(pidfd) };
        let Some(fd) = fd else { return }; // pidfd_getfd refused (no ptrace rights here)
        assert_eq!(local_tcp_addr(fd), Some(addr));
        assert!(tcp_info(fd).is_ok());
        unsafe { libc::close(fd) };
        let other = SocketAddrV4::new(*addr.ip(), addr.port().wrapping_add(1));
        let pidfd = pidfd_open(pid).unwrap();
        assert_eq!(find_socket(pid, pidfd, &other), None);
        unsafe { libc::close(pidfd) };
    }

    use std::net::SocketAddr;
}
