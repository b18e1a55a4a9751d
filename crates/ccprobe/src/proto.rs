//! Message formats (Wei thesis §4.3). All integers are big-endian. Every message starts
//! with an 8-byte ASCII type identifier.
//!
//! | message  | bytes |
//! |----------|-------|
//! | StartPacket  | `"STARTUDP"` (8), request id (8) |
//! | StopPacket   | `"STOP_UDP"` (8), error code (8); 0 = normal, see [`code`] |
//! | UDPPacket    | `"UDP_TEST"` (8), request id (8), seq (8), timestamp (16), checksum (8), random padding |
//! | ReportPacket | `"L_REPORT"` (8), timestamp of the triggering UDPPacket (16), ack seq (8) = highest received (`u64::MAX`: none yet), #losses (8), loss seqs (8 × #losses) |
//! | RxTimes      | `"RX_TIMES"` (8), count (8), count × (seq (8), server receive time (16)) — not in the thesis: lets the client compute one-way delays |
//!
//! Timestamps are nanoseconds since the Unix epoch (u128). The client's timestamps are
//! its wall clock at start plus its monotonic clock since, so they never jump.
//! The UDPPacket checksum is FNV-1a 64 over the whole packet with the checksum field
//! taken as zero. Control messages travel over TCP (reliable, checksummed by TCP).

pub const T_START: &[u8; 8] = b"STARTUDP";
pub const T_STOP: &[u8; 8] = b"STOP_UDP";
pub const T_UDP: &[u8; 8] = b"UDP_TEST";
pub const T_REPORT: &[u8; 8] = b"L_REPORT";
pub const T_RXTIMES: &[u8; 8] = b"RX_TIMES";

/// Header size of a UDPPacket; also the smallest packet (no padding).
pub const UDP_HEADER: usize = 48;
/// Largest UDPPacket: the thesis keeps packets at or below 400 bytes so that they are not
/// fragmented at an MTU of 500.
pub const UDP_MAX: usize = 400;
/// Largest number of entries accepted in one ReportPacket or RxTimes message.
pub const MAX_LIST: u64 = 1 << 22;

/// StopPacket error codes.
pub mod code {
    pub const NORMAL: u64 = 0;
    pub const CONTROL_ERROR: u64 = 1;
    pub const IDLE: u64 = 2;
    pub const CORRUPT: u64 = 3;
    pub const SERVER_FULL: u64 = 4;
    pub const RATE_EXCEEDED: u64 = 5;
    pub const PROTOCOL: u64 = 6;
    pub const CLIENT_ABORT: u64 = 7;
}

pub fn code_text(c: u64) -> &'static str {
    match c {
        code::NORMAL => "normal stop",
        code::CONTROL_ERROR => "control connection error",
        code::IDLE => "idle for longer than the server's idle timeout",
        code::CORRUPT => "corrupted UDP test packet (bad checksum)",
        code::SERVER_FULL => "server full: it already serves its maximum number of clients",
        code::RATE_EXCEEDED => "client sent faster than the server's per-client rate limit",
        code::PROTOCOL => "protocol error (unexpected message or sequence number)",
        code::CLIENT_ABORT => "client aborted",
        _ => "unknown error code",
    }
}

/// splitmix64: small, seedable, good enough for padding and test-only loss injection.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x243F_6A88_85A3_08D3)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

fn fnv1a(h: u64, bytes: &[u8]) -> u64 {
    let mut h = h;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    h
}

/// FNV-1a 64 over the whole packet with bytes 40..48 (the checksum field) taken as zero.
pub fn checksum(pkt: &[u8]) -> u64 {
    let h = fnv1a(0xCBF2_9CE4_8422_2325, &pkt[..40.min(pkt.len())]);
    let h = fnv1a(h, &[0u8; 8]);
    if pkt.len() > UDP_HEADER {
        fnv1a(h, &pkt[UDP_HEADER..])
    } else {
        h
    }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}
fn u128_at(b: &[u8], at: usize) -> u128 {
    u128::from_be_bytes(b[at..at + 16].try_into().unwrap())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpTest {
    pub id: u64,
    pub seq: u64,
    pub ts_ns: u128,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdpError {
    /// Not a UDPPacket at all (wrong type or shorter than the header): ignored.
    NotProbe,
    /// A UDPPacket whose checksum does not match: the session is stopped abnormally.
    BadChecksum { id: u64 },
}

/// Fills `buf` (its whole length is the packet) with a UDPPacket: header, random padding
/// from `rng`, checksum.
pub fn encode_udp(buf: &mut [u8], p: UdpTest, rng: &mut Rng) {
    assert!(buf.len() >= UDP_HEADER);
    buf[0..8].copy_from_slice(T_UDP);
    buf[8..16].copy_from_slice(&p.id.to_be_bytes());
    buf[16..24].copy_from_slice(&p.seq.to_be_bytes());
    buf[24..40].copy_from_slice(&p.ts_ns.to_be_bytes());
    buf[40..48].fill(0);
    rng.fill(&mut buf[UDP_HEADER..]);
    let c = checksum(buf);
    buf[40..48].copy_from_slice(&c.to_be_bytes());
}

pub fn decode_udp(buf: &[u8]) -> Result<UdpTest, UdpError> {
    if buf.len() < UDP_HEADER || &buf[0..8] != T_UDP {
        return Err(UdpError::NotProbe);
    }
    let id = u64_at(buf, 8);
    if checksum(buf) != u64_at(buf, 40) {
        return Err(UdpError::BadChecksum { id });
    }
    Ok(UdpTest { id, seq: u64_at(buf, 16), ts_ns: u128_at(buf, 24) })
}

/// A loss report. `ack = None` (encoded `u64::MAX`) if nothing was received yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub ts_ns: u128,
    pub ack: Option<u64>,
    pub losses: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ctrl {
    Start { id: u64 },
    Stop { code: u64 },
    Report(Report),
    RxTimes(Vec<(u64, u128)>),
}

impl Ctrl {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(16);
        match self {
            Ctrl::Start { id } => {
                v.extend_from_slice(T_START);
                v.extend_from_slice(&id.to_be_bytes());
            }
            Ctrl::Stop { code } => {
                v.extend_from_slice(T_STOP);
                v.extend_from_slice(&code.to_be_bytes());
            }
            Ctrl::Report(r) => {
                v.extend_from_slice(T_REPORT);
                v.extend_from_slice(&r.ts_ns.to_be_bytes());
                v.extend_from_slice(&r.ack.unwrap_or(u64::MAX).to_be_bytes());
                v.extend_from_slice(&(r.losses.len() as u64).to_be_bytes());
                for s in &r.losses {
                    v.extend_from_slice(&s.to_be_bytes());
                }
            }
            Ctrl::RxTimes(list) => {
                v.extend_from_slice(T_RXTIMES);
                v.extend_from_slice(&(list.len() as u64).to_be_bytes());
                for (s, t) in list {
                    v.extend_from_slice(&s.to_be_bytes());
                    v.extend_from_slice(&t.to_be_bytes());
                }
            }
        }
        v
    }

    /// Parses one message from the front of `buf`: `Ok(None)` if more bytes are needed,
    /// `Ok(Some((msg, used)))`, or an error for an unknown type / oversized list.
    pub fn parse(buf: &[u8]) -> Result<Option<(Ctrl, usize)>, String> {
        if buf.len() < 8 {
            return Ok(None);
        }
        let ty: &[u8] = &buf[0..8];
        let need = |n: usize| buf.len() >= n;
        if ty == T_START || ty == T_STOP {
            if !need(16) {
                return Ok(None);
            }
            let x = u64_at(buf, 8);
            let m = if ty == T_START { Ctrl::Start { id: x } } else { Ctrl::Stop { code: x } };
            return Ok(Some((m, 16)));
        }
        if ty == T_REPORT {
            if !need(40) {
                return Ok(None);
            }
            let n = u64_at(buf, 32);
            if n > MAX_LIST {
                return Err(format!("report with {n} losses (limit {MAX_LIST})"));
            }
            let total = 40 + 8 * n as usize;
            if !need(total) {
                return Ok(None);
            }
            let ack = u64_at(buf, 24);
            let losses = (0..n as usize).map(|i| u64_at(buf, 40 + 8 * i)).collect();
            let r = Report { ts_ns: u128_at(buf, 8), ack: (ack != u64::MAX).then_some(ack), losses };
            return Ok(Some((Ctrl::Report(r), total)));
        }
        if ty == T_RXTIMES {
            if !need(16) {
                return Ok(None);
            }
            let n = u64_at(buf, 8);
            if n > MAX_LIST {
                return Err(format!("receive-time list of {n} entries (limit {MAX_LIST})"));
            }
            let total = 16 + 24 * n as usize;
            if !need(total) {
                return Ok(None);
            }
            let list = (0..n as usize).map(|i| (u64_at(buf, 16 + 24 * i), u128_at(buf, 24 + 24 * i))).collect();
            return Ok(Some((Ctrl::RxTimes(list), total)));
        }
        Err(format!("unknown control message type {:?}", String::from_utf8_lossy(ty)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn udp_roundtrip_and_sizes() {
        let mut rng = Rng::new(1);
        for size in [UDP_HEADER, 100, UDP_MAX] {
            let mut buf = vec![0u8; size];
            let p = UdpTest { id: 7, seq: 123456, ts_ns: 1_700_000_000_123_456_789 };
            encode_udp(&mut buf, p, &mut rng);
            assert_eq!(&buf[0..8], b"UDP_TEST");
            assert_eq!(decode_udp(&buf), Ok(p));
        }
    }

    #[test]
    fn corrupted_packet_is_detected_anywhere() {
        let mut rng = Rng::new(2);
        let mut buf = vec![0u8; 120];
        encode_udp(&mut buf, UdpTest { id: 9, seq: 1, ts_ns: 5 }, &mut rng);
        for at in [16, 30, 44, 60, 119] {
            let mut b = buf.clone();
            b[at] ^= 0x10;
            assert!(matches!(decode_udp(&b), Err(UdpError::BadChecksum { .. })), "flip at {at}");
        }
        assert_eq!(decode_udp(&buf[..40]), Err(UdpError::NotProbe));
        assert_eq!(decode_udp(b"STOP_UDP00000000xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), Err(UdpError::NotProbe));
    }

    #[test]
    fn control_roundtrip_and_partial() {
        let msgs = vec![
            Ctrl::Start { id: 42 },
            Ctrl::Stop { code: code::IDLE },
            Ctrl::Report(Report { ts_ns: 99, ack: Some(1000), losses: vec![3, 5, 900] }),
            Ctrl::Report(Report { ts_ns: 0, ack: None, losses: vec![] }),
            Ctrl::RxTimes(vec![(1, 10), (2, 20)]),
        ];
        let mut stream = Vec::new();
        for m in &msgs {
            stream.extend(m.encode());
        }
        assert_eq!(Ctrl::Stop { code: 0 }.encode().len(), 16);
        let mut got = Vec::new();
        let mut at = 0;
        while at < stream.len() {
            // a partial message is never parsed
            assert_eq!(Ctrl::parse(&stream[at..at + 7]).unwrap(), None);
            let (m, used) = Ctrl::parse(&stream[at..]).unwrap().unwrap();
            assert_eq!(Ctrl::parse(&stream[at..at + used - 1]).unwrap(), None);
            got.push(m);
            at += used;
        }
        assert_eq!(got, msgs);
        assert!(Ctrl::parse(b"GARBAGE!12345678").is_err());
    }
}
