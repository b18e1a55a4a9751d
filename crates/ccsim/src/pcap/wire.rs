//! IPv4 (RFC 791), TCP (RFC 9293) and UDP (RFC 768) headers with valid checksums, for
//! packets whose payload bytes are all zero: a simulated packet has a size but no
//! contents. Zero bytes add nothing to the Internet checksum (RFC 1071), so the
//! transport checksum covers the payload without it ever being built; only its
//! length enters, through the pseudo-header.

pub const IP_HEADER: u32 = 20;
pub const TCP_HEADER: u32 = 20;
pub const UDP_HEADER: u32 = 8;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
/// The IPv4 total length field is 16 bits.
pub const MAX_IP_PACKET: u32 = 65_535;
/// TCP options end at data offset 15 (60-byte header).
pub const MAX_TCP_OPTIONS: u32 = 40;

/// ECN field of the IP header (RFC 3168 §5).
pub const ECN_NOT_ECT: u8 = 0b00;
pub const ECN_ECT0: u8 = 0b10;
pub const ECN_CE: u8 = 0b11;

/// TCP flags (RFC 9293 §3.1, RFC 3168 §6.1 for ECE and CWR).
pub const TCP_PSH: u8 = 0x08;
pub const TCP_ACK: u8 = 0x10;
pub const TCP_ECE: u8 = 0x40;
pub const TCP_CWR: u8 = 0x80;

const OPT_NOP: u8 = 1;
const OPT_SACK: u8 = 5;
const OPT_TIMESTAMPS: u8 = 8;

/// Addresses and ECN codepoint of an IPv4 packet.
#[derive(Clone, Copy, Debug)]
pub struct Ip {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    pub ecn: u8,
}

/// The TCP header fields a capture shows.
#[derive(Clone, Copy, Debug, Default)]
pub struct Tcp<'a> {
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
    /// Timestamps option (RFC 7323 §3): TSval, TSecr.
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (RFC 2018), left and right edges.
    pub sacks: &'a [(u32, u32)],
    /// Further option bytes (NOPs), a multiple of 4: option space a simulated header
    /// counts beyond timestamps and SACK.
    pub pad: u32,
}

impl Tcp<'_> {
    /// Option bytes as written: NOP NOP TS (12), the padding, NOP NOP SACK (4 + 8 per
    /// block, as Linux lays them out in `tcp_options_write`). Padding and then SACK
    /// blocks from the last give way when more than 40 bytes are asked for.
    fn layout(&self) -> (u32, u32, usize) {
        let ts = if self.timestamps.is_some() { 12 } else { 0 };
        let mut pad = self.pad / 4 * 4;
        let mut n = self.sacks.len();
        let sack = |n: usize| if n > 0 { 4 + 8 * n as u32 } else { 0 };
        while ts + pad + sack(n) > MAX_TCP_OPTIONS {
            if pad > 0 {
                pad -= 4;
            } else {
                n -= 1;
            }
        }
        (ts + pad + sack(n), pad, n)
    }

    /// Header length (20 + options) as written.
    pub fn header_len(&self) -> u32 {
        TCP_HEADER + self.layout().0
    }
}

/// Adds `data` to a one's-complement sum as big-endian 16-bit words (RFC 1071); an
/// odd last byte is padded with zero.
pub fn sum16(mut sum: u32, data: &[u8]) -> u32 {
    let mut words = data.chunks_exact(2);
    for w in &mut words {
        sum += u16::from_be_bytes([w[0], w[1]]) as u32;
    }
    if let [b] = words.remainder() {
        sum += (*b as u32) << 8;
    }
    sum
}

/// The checksum field for a one's-complement sum.
pub fn checksum(mut sum: u32) -> u16 {
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn ipv4(buf: &mut Vec<u8>, ip: &Ip, proto: u8, total_len: u32) {
    let start = buf.len();
    buf.extend_from_slice(&[0x45, ip.ecn & 0b11]);
    buf.extend_from_slice(&(total_len as u16).to_be_bytes());
    // ID 0 with DF: an atomic datagram (RFC 6864 §4.1), as Linux sends TCP/PMTU.
    buf.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    buf.extend_from_slice(&ip.src);
    buf.extend_from_slice(&ip.dst);
    let c = checksum(sum16(0, &buf[start..]));
    buf[start + 10..start + 12].copy_from_slice(&c.to_be_bytes());
}

/// Sum of the pseudo-header (RFC 9293 §3.1: addresses, protocol, segment length).
fn pseudo(ip: &Ip, proto: u8, len: u32) -> u32 {
    let s = sum16(sum16(0, &ip.src), &ip.dst);
    s + proto as u32 + len
}

/// Appends an IPv4 + TCP header for a segment with `payload` zero bytes; returns the
/// IP packet's total length (the payload is clamped so that it fits in 65535).
pub fn tcp_packet(buf: &mut Vec<u8>, ip: &Ip, tcp: &Tcp, payload: u32) -> u32 {
    let (opts, pad, n_sack) = tcp.layout();
    let hlen = TCP_HEADER + opts;
    let total = (IP_HEADER + hlen + payload).min(MAX_IP_PACKET);
    ipv4(buf, ip, PROTO_TCP, total);
    let start = buf.len();
    buf.extend_from_slice(&tcp.sport.to_be_bytes());
    buf.extend_from_slice(&tcp.dport.to_be_bytes());
    buf.extend_from_slice(&tcp.seq.to_be_bytes());
    buf.extend_from_slice(&tcp.ack.to_be_bytes());
    buf.extend_from_slice(&[((hlen / 4) as u8) << 4, tcp.flags]);
    buf.extend_from_slice(&tcp.window.to_be_bytes());
    buf.extend_from_slice(&[0, 0, 0, 0]); // checksum, urgent pointer
    if let Some((val, ecr)) = tcp.timestamps {
        buf.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_TIMESTAMPS, 10]);
        buf.extend_from_slice(&val.to_be_bytes());
        buf.extend_from_slice(&ecr.to_be_bytes());
    }
    buf.resize(buf.len() + pad as usize, OPT_NOP);
    if n_sack > 0 {
        buf.extend_from_slice(&[OPT_NOP, OPT_NOP, OPT_SACK, 2 + 8 * n_sack as u8]);
        for &(l, r) in &tcp.sacks[..n_sack] {
            buf.extend_from_slice(&l.to_be_bytes());
            buf.extend_from_slice(&r.to_be_bytes());
        }
    }
    let len = total - IP_HEADER;
    let c = checksum(sum16(pseudo(ip, PROTO_TCP, len), &buf[start..]));
    buf[start + 16..start + 18].copy_from_slice(&c.to_be_bytes());
    total
}

/// Appends an IPv4 + UDP header for a datagram of `payload` zero bytes; returns the IP
/// packet's total length (clamped to 65535: larger datagrams would be fragmented).
pub fn udp_packet(buf: &mut Vec<u8>, ip: &Ip, sport: u16, dport: u16, payload: u32) -> u32 {
    let total = (IP_HEADER + UDP_HEADER + payload).min(MAX_IP_PACKET);
    ipv4(buf, ip, PROTO_UDP, total);
    let start = buf.len();
    let len = total - IP_HEADER;
    buf.extend_from_slice(&sport.to_be_bytes());
    buf.extend_from_slice(&dport.to_be_bytes());
    buf.extend_from_slice(&(len as u16).to_be_bytes());
    buf.extend_from_slice(&[0, 0]);
    // A computed 0 is sent as all ones: 0 means "no checksum" (RFC 768).
    let c = match checksum(sum16(pseudo(ip, PROTO_UDP, len), &buf[start..])) {
        0 => 0xffff,
        c => c,
    };
    buf[start + 6..start + 8].copy_from_slice(&c.to_be_bytes());
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    const IP: Ip = Ip { src: [10, 78, 0, 1], dst: [10, 79, 0, 1], ecn: ECN_ECT0 };

    /// Verifies a checksum the way a receiver does: the sum over the covered bytes,
    /// checksum included, folds to all ones.
    fn verifies(sum: u32) -> bool {
        checksum(sum) == 0
    }

    #[test]
    fn rfc1071_example_sum() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum (with carries) to ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        assert_eq!(checksum(sum16(0, &data)), !0xddf2);
    }

    #[test]
    fn tcp_segment_with_timestamps_is_a_1500_byte_packet_with_valid_checksums() {
        let tcp = Tcp {
            sport: 20000,
            dport: 30000,
            seq: 14480,
            ack: 1,
            flags: TCP_ACK | TCP_CWR,
            window: 502,
            timestamps: Some((1234, 1200)),
            ..Default::default()
        };
        let mut buf = Vec::new();
        let total = tcp_packet(&mut buf, &IP, &tcp, 1448);
        assert_eq!(total, 1500);
        assert_eq!(buf.len(), 52);
        assert_eq!(u16::from_be_bytes([buf[2], buf[3]]), 1500);
        assert_eq!(buf[1], ECN_ECT0);
        assert!(verifies(sum16(0, &buf[..20])), "IP header checksum");
        // The payload is 1448 zero bytes: they add nothing, the length does.
        assert!(verifies(sum16(pseudo(&IP, PROTO_TCP, 1480), &buf[20..])), "TCP checksum");
        assert_eq!(buf[32] >> 4, 8, "data offset: 32-byte header");
        assert_eq!(buf[33], TCP_ACK | TCP_CWR);
        assert_eq!(&buf[40..44], &[1, 1, 8, 10]);
        assert_eq!(u32::from_be_bytes(buf[44..48].try_into().unwrap()), 1234);
    }

    #[test]
    fn sack_blocks_follow_timestamps_and_give_way_beyond_40_option_bytes() {
        let sacks = [(1, 2), (3, 4), (5, 6), (7, 8)];
        let tcp = Tcp { timestamps: Some((0, 0)), sacks: &sacks, ..Default::default() };
        let mut buf = Vec::new();
        tcp_packet(&mut buf, &IP, &tcp, 0);
        // 12 (timestamps) + 4 + 3 * 8 = 40: the fourth block does not fit (RFC 2018 §3)
        assert_eq!(buf.len(), 20 + 20 + 40);
        assert_eq!(&buf[52..56], &[1, 1, 5, 26]);
        assert!(verifies(sum16(pseudo(&IP, PROTO_TCP, 60), &buf[20..])));
        let one = Tcp { sacks: &sacks[..1], pad: 8, ..Default::default() };
        assert_eq!(one.header_len(), 20 + 8 + 12);
    }

    #[test]
    fn udp_checksum_covers_the_zero_payload_length() {
        let mut buf = Vec::new();
        let total = udp_packet(&mut buf, &Ip { ecn: ECN_NOT_ECT, ..IP }, 20001, 30001, 160);
        assert_eq!(total, 188);
        assert_eq!(u16::from_be_bytes([buf[24], buf[25]]), 168);
        assert!(verifies(sum16(pseudo(&IP, PROTO_UDP, 168), &buf[20..])));
        assert!(verifies(sum16(0, &buf[..20])));
    }

    #[test]
    fn odd_payload_lengths_and_ce_marks() {
        let mut buf = Vec::new();
        let ip = Ip { ecn: ECN_CE, ..IP };
        let total = tcp_packet(&mut buf, &ip, &Tcp { flags: TCP_ACK | TCP_ECE, ..Default::default() }, 1);
        assert_eq!(total, 41);
        assert_eq!(buf[1] & 0b11, ECN_CE);
        assert!(verifies(sum16(pseudo(&ip, PROTO_TCP, 21), &buf[20..])));
    }
}
