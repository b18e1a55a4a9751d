//! IPv4 packet inspection: the 5-tuple, mapped to the scenario's flow index, TCP
//! sequence numbers relative to the connection's initial sequence number, the probe's
//! message number in UDP payloads, and ECN (ECT test, CE marking).

use serde::Deserialize;
use std::collections::HashMap;
use std::net::Ipv4Addr;

pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

/// Fields read from one IPv4 packet.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Parsed {
    pub proto: u8,
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    /// IP total length.
    pub ip_len: u32,
    pub ect: bool,
    /// TCP sequence number, payload length and flags.
    pub seq: u32,
    pub payload: u32,
    pub syn: bool,
    /// First 8 bytes of a UDP payload (the probe's message number), if present.
    pub udp_msg: Option<u64>,
}

pub fn parse(buf: &[u8]) -> Option<Parsed> {
    if buf.len() < 20 || buf[0] >> 4 != 4 {
        return None;
    }
    let ihl = ((buf[0] & 0x0f) as usize) * 4;
    let ip_len = u16::from_be_bytes([buf[2], buf[3]]) as u32;
    let mut p = Parsed {
        proto: buf[9],
        src: u32::from_be_bytes([buf[12], buf[13], buf[14], buf[15]]),
        dst: u32::from_be_bytes([buf[16], buf[17], buf[18], buf[19]]),
        ip_len,
        ect: buf[1] & 0x03 != 0,
        ..Default::default()
    };
    let l4 = buf.get(ihl..)?;
    match p.proto {
        PROTO_TCP if l4.len() >= 20 => {
            p.sport = u16::from_be_bytes([l4[0], l4[1]]);
            p.dport = u16::from_be_bytes([l4[2], l4[3]]);
            p.seq = u32::from_be_bytes([l4[4], l4[5], l4[6], l4[7]]);
            let doff = ((l4[12] >> 4) as u32) * 4;
            p.syn = l4[13] & 0x02 != 0;
            p.payload = ip_len.saturating_sub(ihl as u32 + doff);
        }
        PROTO_UDP if l4.len() >= 8 => {
            p.sport = u16::from_be_bytes([l4[0], l4[1]]);
            p.dport = u16::from_be_bytes([l4[2], l4[3]]);
            p.payload = ip_len.saturating_sub(ihl as u32 + 8);
            if l4.len() >= 16 {
                p.udp_msg = Some(u64::from_le_bytes(l4[8..16].try_into().unwrap()));
            }
        }
        _ => {}
    }
    Some(p)
}

/// Sets CE on an ECT packet and fixes the IPv4 header checksum. Returns false for a
/// Not-ECT packet (left unchanged).
pub fn set_ce(buf: &mut [u8]) -> bool {
    use ccsim::pcap::wire::{checksum, sum16};
    if buf.len() < 20 || buf[1] & 0x03 == 0 {
        return false;
    }
    buf[1] |= 0x03;
    let ihl = ((buf[0] & 0x0f) as usize) * 4;
    buf[10] = 0;
    buf[11] = 0;
    let c = checksum(sum16(0, &buf[..ihl.min(buf.len())]));
    buf[10..12].copy_from_slice(&c.to_be_bytes());
    true
}

/// One flow of the scenario as the Python side placed it (data direction).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub flow: u32,
    pub proto: String,
    pub src: Ipv4Addr,
    pub sport: u16,
    pub dst: Ipv4Addr,
    pub dport: u16,
    /// Record first-transmission / arrival traces (message timestamps).
    #[serde(default)]
    pub trace: bool,
}

/// Sequence state of one direction of a TCP connection.
#[derive(Clone, Copy, Debug, Default)]
struct SeqState {
    base: Option<u32>,
    last: u64,
    /// Highest relative byte seen at ingress (first transmissions).
    max_seen: u64,
}

impl SeqState {
    /// Relative 64-bit sequence number (first data byte = 0), unwrapped near `last`.
    fn rel(&mut self, seq: u32, syn: bool) -> u64 {
        if syn {
            self.base = Some(seq.wrapping_add(1));
            return 0;
        }
        let base = *self.base.get_or_insert(seq);
        let r32 = seq.wrapping_sub(base) as u64;
        let hi = self.last & !0xffff_ffff;
        let mut best = hi | r32;
        for cand in [best.wrapping_add(1 << 32), best.wrapping_sub(1 << 32)] {
            if cand.abs_diff(self.last) < best.abs_diff(self.last) && cand < (1 << 62) {
                best = cand;
            }
        }
        if best > self.last {
            self.last = best;
        }
        best
    }
}

/// Result of classifying a packet.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Class {
    /// Scenario flow index, or -1 when the packet belongs to no flow (e.g. ICMP).
    pub flow: i32,
    /// The packet travels in the flow's data direction.
    pub data_dir: bool,
    /// Relative TCP sequence number of the first byte, or the UDP message number.
    pub seq: u64,
    pub end: u64,
    pub trace: bool,
    pub tcp: bool,
    pub has_data: bool,
}

#[derive(Default)]
pub struct FlowMap {
    /// (proto, src, sport, dst, dport) -> (flow, data direction, trace)
    map: HashMap<(u8, u32, u16, u32, u16), (u32, bool, bool)>,
    seq: HashMap<(u32, bool), SeqState>,
}

impl FlowMap {
    pub fn new(specs: &[FlowSpec]) -> Self {
        let mut m = FlowMap::default();
        for s in specs {
            let proto = if s.proto == "udp" { PROTO_UDP } else { PROTO_TCP };
            let (a, b) = (u32::from(s.src), u32::from(s.dst));
            m.map.insert((proto, a, s.sport, b, s.dport), (s.flow, true, s.trace));
            m.map.insert((proto, b, s.dport, a, s.sport), (s.flow, false, s.trace));
        }
        m
    }

    pub fn classify(&mut self, p: &Parsed) -> Class {
        let Some(&(flow, data_dir, trace)) = self.map.get(&(p.proto, p.src, p.sport, p.dst, p.dport)) else {
            return Class { flow: -1, data_dir: false, seq: 0, end: 0, trace: false, tcp: false, has_data: false };
        };
        if p.proto == PROTO_TCP {
            let st = self.seq.entry((flow, data_dir)).or_default();
            let seq = st.rel(p.seq, p.syn);
            Class {
                flow: flow as i32,
                data_dir,
                seq,
                end: seq + p.payload as u64,
                trace,
                tcp: true,
                has_data: p.payload > 0,
            }
        } else {
            let m = p.udp_msg.unwrap_or(0);
            Class { flow: flow as i32, data_dir, seq: m, end: m, trace, tcp: false, has_data: true }
        }
    }

    /// For a traced TCP data packet seen at ingress: the part `[from, end)` that was never
    /// seen before (a first transmission), if any.
    pub fn first_tx(&mut self, c: &Class) -> Option<(u64, u64)> {
        let st = self.seq.get_mut(&(c.flow as u32, true))?;
        if c.end > st.max_seen {
            let from = c.seq.max(st.max_seen);
            st.max_seen = c.end;
            Some((from, c.end))
        } else {
            None
        }
    }
}

/// FNV-1a over the 5-tuple, for per-flow queues (FQ-CoDel).
pub fn flow_hash(p: &Parsed) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    let mut eat = |b: u8| {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    };
    eat(p.proto);
    p.src.to_be_bytes().into_iter().for_each(&mut eat);
    p.dst.to_be_bytes().into_iter().for_each(&mut eat);
    p.sport.to_be_bytes().into_iter().for_each(&mut eat);
    p.dport.to_be_bytes().into_iter().for_each(&mut eat);
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_pkt(seq: u32, payload: usize, syn: bool) -> Vec<u8> {
        let mut b = vec![0u8; 40 + payload];
        b[0] = 0x45;
        b[1] = 0x02; // ECT(0)
        let len = (40 + payload) as u16;
        b[2..4].copy_from_slice(&len.to_be_bytes());
        b[9] = PROTO_TCP;
        b[12..16].copy_from_slice(&[10, 77, 1, 1]);
        b[16..20].copy_from_slice(&[10, 77, 2, 1]);
        b[20..22].copy_from_slice(&20000u16.to_be_bytes());
        b[22..24].copy_from_slice(&30000u16.to_be_bytes());
        b[24..28].copy_from_slice(&seq.to_be_bytes());
        b[32] = 5 << 4;
        b[33] = if syn { 0x02 } else { 0x10 };
        b
    }

    fn map() -> FlowMap {
        FlowMap::new(&[FlowSpec {
            flow: 3,
            proto: "tcp".into(),
            src: "10.77.1.1".parse().unwrap(),
            sport: 20000,
            dst: "10.77.2.1".parse().unwrap(),
            dport: 30000,
            trace: true,
        }])
    }

    #[test]
    fn relative_seq_after_syn_and_wrap() {
        let mut m = map();
        let isn = u32::MAX - 100;
        let c = m.classify(&parse(&tcp_pkt(isn, 0, true)).unwrap());
        assert_eq!((c.flow, c.data_dir, c.seq), (3, true, 0));
        let c = m.classify(&parse(&tcp_pkt(isn.wrapping_add(1), 1000, false)).unwrap());
        assert_eq!((c.seq, c.end, c.has_data), (0, 1000, true));
        assert_eq!(m.first_tx(&c), Some((0, 1000)));
        let c = m.classify(&parse(&tcp_pkt(isn.wrapping_add(1001), 1000, false)).unwrap());
        assert_eq!(c.seq, 1000);
        // retransmission of old data is not a first transmission
        let c = m.classify(&parse(&tcp_pkt(isn.wrapping_add(1), 1000, false)).unwrap());
        assert_eq!(c.seq, 0);
        assert_eq!(m.first_tx(&c), None);
    }

    #[test]
    fn reverse_direction_maps_to_same_flow() {
        let mut m = map();
        let mut b = tcp_pkt(5, 0, false);
        b[12..16].copy_from_slice(&[10, 77, 2, 1]);
        b[16..20].copy_from_slice(&[10, 77, 1, 1]);
        b[20..22].copy_from_slice(&30000u16.to_be_bytes());
        b[22..24].copy_from_slice(&20000u16.to_be_bytes());
        let c = m.classify(&parse(&b).unwrap());
        assert_eq!((c.flow, c.data_dir), (3, false));
    }

    #[test]
    fn ce_mark_keeps_checksum_valid() {
        let mut b = tcp_pkt(1, 0, false);
        assert!(set_ce(&mut b));
        assert_eq!(b[1] & 3, 3);
        let mut sum: u32 = 0;
        for i in (0..20).step_by(2) {
            sum += u16::from_be_bytes([b[i], b[i + 1]]) as u32;
        }
        while sum >> 16 != 0 {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        assert_eq!(sum, 0xffff);
    }
}
