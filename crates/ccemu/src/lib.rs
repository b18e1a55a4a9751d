//! ccemu: the ccbench emulator's userspace bottleneck and probe programs.
//!
//! - [`pipe`]: one direction of the bottleneck as a pure event machine (access delays,
//!   the ccsim qdisc, the link transmitter, the ccsim loss model, propagation delay);
//! - [`bottleneck`]: the real-time I/O thread driving a pipe between two TUN devices;
//! - [`packet`]: IPv4/TCP/UDP inspection and the 5-tuple -> scenario flow map;
//! - [`probe`]: TCP/UDP senders and receivers with `TCP_INFO` sampling;
//! - [`sys`]: clock, precise waiting, netns and TUN system calls.
//!
//! Addressing convention shared with `python/ccbench/backends/emu.py`: in a dumbbell,
//! host `srv{i}` is `10.77.1.{i+1}` in the server namespace and `cli{i}` is
//! `10.77.2.{i+1}` in the client namespace; each namespace has one TUN device.

pub mod bottleneck;
pub mod packet;
pub mod pipe;
pub mod probe;
pub mod sys;

/// Address of dumbbell host `srv{i}` (`side = 1`) or `cli{i}` (`side = 2`).
pub fn host_addr(side: u8, i: u32) -> std::net::Ipv4Addr {
    std::net::Ipv4Addr::new(10, 77, side, (i + 1) as u8)
}

/// Pair index of a host address, and its side (1 = server, 2 = client).
pub fn addr_pair(a: u32) -> Option<(u8, u32)> {
    let o = a.to_be_bytes();
    if o[0] == 10 && o[1] == 77 && (o[2] == 1 || o[2] == 2) && o[3] >= 1 {
        Some((o[2], o[3] as u32 - 1))
    } else {
        None
    }
}
