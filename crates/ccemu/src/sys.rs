//! Thin wrappers over the system calls the emulator needs: the monotonic clock,
//! precise waiting (sleep, then spin), TUN devices created inside a network namespace.

use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// CLOCK_MONOTONIC in nanoseconds (one clock for the whole host, all namespaces).
#[inline]
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CLOCK_REALTIME at the moment CLOCK_MONOTONIC read `mono`: the offset between the
/// clocks is read once per process (a wall-clock step during a run does not bend the
/// capture's timeline).
pub fn realtime_from_mono(mono: u64) -> u64 {
    static OFFSET: std::sync::OnceLock<i128> = std::sync::OnceLock::new();
    let off = *OFFSET.get_or_init(|| {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        let m0 = mono_ns();
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
        ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128 - m0 as i128
    });
    (mono as i128 + off).max(0) as u64
}

/// Timer slack of the calling thread (1 ns: wake-ups as precise as the kernel allows).
pub fn set_timer_slack_ns(ns: u64) {
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong, 0, 0, 0) };
}

/// Ask the kernel to send `sig` to this process when its parent dies.
pub fn die_with_parent(sig: i32) {
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, sig as libc::c_ulong, 0, 0, 0) };
}

/// Sleeps with `clock_nanosleep` until `deadline - spin_ns`, then spins on the clock.
/// Returns the time at which it returned.
pub fn wait_until(deadline: u64, spin_ns: u64) -> u64 {
    loop {
        let now = mono_ns();
        if now >= deadline {
            return now;
        }
        if deadline - now > spin_ns {
            let t = deadline - spin_ns;
            let ts = libc::timespec {
                tv_sec: (t / 1_000_000_000) as libc::time_t,
                tv_nsec: (t % 1_000_000_000) as libc::c_long,
            };
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
        } else {
            std::hint::spin_loop();
        }
    }
}

/// Waits for `fd` to become readable for at most `timeout_ns` (ppoll: ns resolution).
/// Returns true when readable (or at end of file / error: a read will not block).
pub fn poll_readable(fd: RawFd, timeout_ns: u64) -> bool {
    let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
    let ts = libc::timespec {
        tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
    };
    let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    r > 0 && pfd.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0
}

pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if fl < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_NONBLOCK) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Runs `f` with the calling thread inside the network namespace `/var/run/netns/<name>`
/// (`ip netns add <name>`), then returns the thread to its original namespace.
pub fn in_netns<T>(name: &str, f: impl FnOnce() -> io::Result<T>) -> io::Result<T> {
    let orig = File::open("/proc/thread-self/ns/net")?;
    let target = File::open(format!("/var/run/netns/{name}")).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("network namespace {name:?} not found ({e}); create it with `ip netns add {name}`"),
        )
    })?;
    if unsafe { libc::setns(target.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::new(
            io::ErrorKind::Other,
            format!("setns into {name:?}: {}", io::Error::last_os_error()),
        ));
    }
    let r = f();
    if unsafe { libc::setns(orig.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        panic!("cannot return to the original network namespace: {}", io::Error::last_os_error());
    }
    r
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

/// Creates TUN device `ifname` (no packet-info header) in the current network namespace.
/// Offloads are explicitly off (`TUNSETOFFLOAD 0`): the kernel segments and checksums
/// in software before the packet reaches us, so the bottleneck sees wire-size packets.
pub fn open_tun(ifname: &str) -> io::Result<OwnedFd> {
    if ifname.len() >= 16 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "interface name longer than 15 bytes"));
    }
    let fd = unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("cannot open /dev/net/tun: {e}")));
    }
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut req = IfReq { name: [0; 16], flags: IFF_TUN | IFF_NO_PI, _pad: [0; 22] };
    req.name[..ifname.len()].copy_from_slice(ifname.as_bytes());
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF as _, &mut req) } < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUNSETIFF {ifname}: {e}")));
    }
    if unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETOFFLOAD as _, 0 as libc::c_ulong) } < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUNSETOFFLOAD {ifname}: {e}")));
    }
    Ok(fd)
}

/// Percentiles (nearest rank) of a sample, sorted in place.
pub fn percentiles(v: &mut [i64], qs: &[f64]) -> Vec<Option<i64>> {
    v.sort_unstable();
    qs.iter()
        .map(|q| {
            if v.is_empty() {
                None
            } else {
                let k = ((q / 100.0) * (v.len() - 1) as f64).round() as usize;
                Some(v[k.min(v.len() - 1)])
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_nearest_rank() {
        let mut v: Vec<i64> = (0..=100).rev().collect();
        assert_eq!(percentiles(&mut v, &[0.0, 50.0, 99.0, 100.0]), vec![Some(0), Some(50), Some(99), Some(100)]);
        assert_eq!(percentiles(&mut [], &[50.0]), vec![None]);
    }

    #[test]
    fn wait_until_is_never_early() {
        for _ in 0..20 {
            let d = mono_ns() + 200_000;
            let t = wait_until(d, 30_000);
            assert!(t >= d);
        }
    }
}
