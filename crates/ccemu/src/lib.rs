//! ccemu: the ccbench emulator's userspace bottleneck and probe programs.
//!
//! - [`pipe`]: one direction of the bottleneck as a pure event machine (access delays,
//!   the ccsim qdisc, the link transmitter, the ccsim loss model, propagation delay);
//! - [`bottleneck`]: the real-time I/O thread driving a pipe between two TUN devices;
//! - [`capture`]: pcap files of the packets leaving the bottleneck;
//! - [`packet`]: IPv4/TCP/UDP inspection and the 5-tuple -> scenario flow map;
//! - [`probe`]: TCP/UDP senders and receivers with `TCP_INFO` sampling;
//! - [`sys`]: clock, precise waiting, netns and TUN system calls.
//!
//! Addressing convention shared with `python/ccbench/emu/addresses.py`: in a dumbbell,
//! host `srv{i}` is host number `i + 1` of `10.78.0.0/16` in the server namespace and
//! `cli{i}` host number `i + 1` of `10.79.0.0/16` in the client namespace (`srv0` =
//! 10.78.0.1, `srv255` = 10.78.1.0, ...), so up to [`MAX_PAIRS`] host pairs; each
//! namespace has one TUN device.

pub mod bottleneck;
pub mod capture;
pub mod packet;
pub mod pipe;
pub mod probe;
pub mod sys;
pub mod watch;

/// Host pairs the addressing plan holds: hosts 1 ..= 65534 of a /16 (0 is the network,
/// 65535 the broadcast address).
pub const MAX_PAIRS: u32 = 65534;

/// Second octet of each side's /16: `side = 1` (servers) -> 10.78/16, `side = 2`
/// (clients) -> 10.79/16.
const SIDE_OCTET: [u8; 2] = [78, 79];

/// Address of dumbbell host `srv{i}` (`side = 1`) or `cli{i}` (`side = 2`); `i < MAX_PAIRS`.
pub fn host_addr(side: u8, i: u32) -> std::net::Ipv4Addr {
    assert!((1..=2).contains(&side) && i < MAX_PAIRS, "host {i} of side {side} is outside the plan");
    let n = i + 1;
    std::net::Ipv4Addr::new(10, SIDE_OCTET[side as usize - 1], (n >> 8) as u8, (n & 0xff) as u8)
}

/// Pair index of a host address, and its side (1 = server, 2 = client).
pub fn addr_pair(a: u32) -> Option<(u8, u32)> {
    let o = a.to_be_bytes();
    let side = SIDE_OCTET.iter().position(|&x| x == o[1])? as u8 + 1;
    let n = u32::from(o[2]) << 8 | u32::from(o[3]);
    if o[0] == 10 && (1..=MAX_PAIRS).contains(&n) {
        Some((side, n - 1))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_round_trip_beyond_254_pairs() {
        for side in [1u8, 2] {
            for i in [0u32, 1, 253, 254, 255, 256, 1000, MAX_PAIRS - 1] {
                let a = host_addr(side, i);
                assert_eq!(addr_pair(u32::from(a)), Some((side, i)), "{a}");
            }
        }
        assert_eq!(host_addr(1, 0).to_string(), "10.78.0.1");
        assert_eq!(host_addr(2, 254).to_string(), "10.79.0.255");
        assert_eq!(host_addr(1, 255).to_string(), "10.78.1.0");
    }

    #[test]
    fn network_broadcast_and_foreign_addresses_are_no_host() {
        for a in ["10.78.0.0", "10.79.255.255", "10.77.1.1", "192.168.0.1", "11.78.0.1"] {
            let a: std::net::Ipv4Addr = a.parse().unwrap();
            assert_eq!(addr_pair(u32::from(a)), None, "{a}");
        }
    }
}
