//! Wire format, protocol v2 (after Wei thesis §4.3; v1 was the thesis's layout). All
//! integers are big-endian; every control message starts with an 8-byte ASCII type.
//!
//! Control connection (TCP):
//!
//! | message   | dir | bytes |
//! |-----------|-----|-------|
//! | Hello     | C→S | `"CCPHELLO"`, version (8) = 2, client nonce (16) |
//! | Challenge | S→C | `"CCPCHALL"`, version (8) = 2, server nonce (16), token required (8: 0 or 1) |
//! | Auth      | C→S | `"CCP_AUTH"`, proof (16) = HMAC(token, label, cn, sn) truncated |
//! | Start     | S→C | `"STARTUDP"`, session id (16), server proof (16) |
//! | Stop      | both| `"STOP_UDP"`, error code (8); 0 = normal, see [`code`] |
//! | Report    | S→C | `"L_REPORT"`, timestamp of the triggering probe (8), ack = highest seq received (8; `u64::MAX`: none), #ranges (8, ≤ [`MAX_RANGES`]), ranges of lost seqs (first (8), count (8)) |
//! | RxTimes   | S→C | `"RX_TIMES"`, count (8, ≤ [`MAX_RX`]), count × (seq (8), server receive time (8)) |
//!
//! Probe datagram (UDP, client → server), 48 bytes without padding:
//! `"CPU2"` (4), session id (16), seq (8), timestamp (8), tag (12), random padding;
//! tag = HMAC-SHA256(session key, bytes 0..36 ‖ padding) truncated to 96 bits.
//!
//! Timestamps are ns since the Unix epoch (u64: good until 2554). Every message has a
//! bounded length ([`MAX_MSG`]), so a reader never buffers more than that; a loss report
//! carries ranges (a jump of 2^20 sequence numbers is one 16-byte range, not 8 MB).

use crate::auth::{self, Key, Nonce, Proof, TAG_LEN};

pub const VERSION: u64 = 2;

pub const T_HELLO: &[u8; 8] = b"CCPHELLO";
pub const T_CHALL: &[u8; 8] = b"CCPCHALL";
pub const T_AUTH: &[u8; 8] = b"CCP_AUTH";
pub const T_START: &[u8; 8] = b"STARTUDP";
pub const T_STOP: &[u8; 8] = b"STOP_UDP";
pub const T_REPORT: &[u8; 8] = b"L_REPORT";
pub const T_RXTIMES: &[u8; 8] = b"RX_TIMES";
pub const T_UDP: &[u8; 4] = b"CPU2";
/// Type of a v1 (thesis layout) probe datagram: recognised only to be counted.
pub const T_UDP_V1: &[u8; 8] = b"UDP_TEST";

/// Header size of a probe datagram; also the smallest probe (the thesis's 48 bytes).
pub const UDP_HEADER: usize = 48;
/// Largest probe: the thesis keeps packets at or below 400 bytes so that they are not
/// fragmented at an MTU of 500.
pub const UDP_MAX: usize = 400;
const TAG_AT: usize = UDP_HEADER - TAG_LEN;
/// Most loss ranges in one Report (1 KiB of ranges): more pending go in further reports.
pub const MAX_RANGES: usize = 64;
/// Most entries in one RxTimes message.
pub const MAX_RX: usize = 64;
/// Longest control message of either direction: a reader's buffer never holds more.
pub const MAX_MSG: usize = 32 + 16 * MAX_RANGES;
/// Longest message a client may send (Hello); the server buffers no more per connection.
pub const MAX_CLIENT_MSG: usize = 32;

/// StopPacket error codes (0-7 as v1).
pub mod code {
    pub const NORMAL: u64 = 0;
    pub const CONTROL_ERROR: u64 = 1;
    pub const IDLE: u64 = 2;
    pub const CORRUPT: u64 = 3;
    pub const SERVER_FULL: u64 = 4;
    pub const RATE_EXCEEDED: u64 = 5;
    pub const PROTOCOL: u64 = 6;
    pub const CLIENT_ABORT: u64 = 7;
    pub const VERSION: u64 = 8;
    pub const AUTH: u64 = 9;
    pub const PER_SOURCE: u64 = 10;
    pub const DURATION: u64 = 11;
    pub const AMPLIFICATION: u64 = 12;
}

pub fn code_text(c: u64) -> &'static str {
    match c {
        code::NORMAL => "normal stop",
        code::CONTROL_ERROR => "control connection error",
        code::IDLE => "idle for longer than the server's idle timeout",
        code::CORRUPT => "corrupted UDP test packet",
        code::SERVER_FULL => "server full: it already serves its maximum number of clients",
        code::RATE_EXCEEDED => "client sent faster than the server's per-client rate limit",
        code::PROTOCOL => "protocol error (unexpected message or sequence number, or no v2 handshake in time)",
        code::CLIENT_ABORT => "client aborted",
        code::VERSION => "protocol version mismatch (this server speaks probe protocol v2)",
        code::AUTH => "authentication failed: wrong or missing token",
        code::PER_SOURCE => "too many connections from your address",
        code::DURATION => "the measurement exceeded the server's maximum session duration",
        code::AMPLIFICATION => "the server would have sent more than it received (amplification bound)",
        _ => "unknown error code",
    }
}

/// splitmix64: small, seedable, good enough for padding and test-only loss injection
/// (never for anything an attacker must not predict: see [`crate::auth`]).
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

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}
fn u128_at(b: &[u8], at: usize) -> u128 {
    u128::from_be_bytes(b[at..at + 16].try_into().unwrap())
}
fn arr16(b: &[u8], at: usize) -> [u8; 16] {
    b[at..at + 16].try_into().unwrap()
}

/// The header of a probe datagram (its tag not yet checked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpTest {
    pub sid: u128,
    pub seq: u64,
    pub ts_ns: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UdpKind {
    /// Not a probe (wrong type or size): ignored.
    NotProbe,
    /// A protocol v1 probe: ignored, counted.
    V1,
}

/// Fills `buf` (its whole length is the datagram) with a probe: header, random padding
/// from `rng`, tag under `key`.
pub fn encode_udp(buf: &mut [u8], p: UdpTest, key: &Key, rng: &mut Rng) {
    assert!((UDP_HEADER..=UDP_MAX).contains(&buf.len()));
    buf[0..4].copy_from_slice(T_UDP);
    buf[4..20].copy_from_slice(&p.sid.to_be_bytes());
    buf[20..28].copy_from_slice(&p.seq.to_be_bytes());
    buf[28..36].copy_from_slice(&p.ts_ns.to_be_bytes());
    rng.fill(&mut buf[UDP_HEADER..]);
    let tag = auth::datagram_tag(key, &buf[..TAG_AT], &buf[UDP_HEADER..]);
    buf[TAG_AT..UDP_HEADER].copy_from_slice(&tag);
}

/// The header of a probe datagram, without checking its tag (the session it names
/// holds the key: [`udp_tag_ok`]).
pub fn decode_udp(buf: &[u8]) -> Result<UdpTest, UdpKind> {
    if buf.len() >= 8 && &buf[0..8] == T_UDP_V1 {
        return Err(UdpKind::V1);
    }
    if buf.len() < UDP_HEADER || buf.len() > UDP_MAX || &buf[0..4] != T_UDP {
        return Err(UdpKind::NotProbe);
    }
    Ok(UdpTest { sid: u128_at(buf, 4), seq: u64_at(buf, 20), ts_ns: u64_at(buf, 28) })
}

/// Whether a datagram's tag is right under `key` (constant-time comparison).
pub fn udp_tag_ok(buf: &[u8], key: &Key) -> bool {
    buf.len() >= UDP_HEADER && auth::datagram_tag_ok(key, &buf[..TAG_AT], &buf[UDP_HEADER..], &buf[TAG_AT..UDP_HEADER])
}

/// A loss report. `ack = None` (encoded `u64::MAX`) if nothing was received yet; losses
/// as ascending ranges (first seq, count ≥ 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub ts_ns: u64,
    pub ack: Option<u64>,
    pub losses: Vec<(u64, u64)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ctrl {
    Hello { version: u64, nonce: Nonce },
    Challenge { version: u64, nonce: Nonce, token_required: bool },
    Auth { proof: Proof },
    Start { sid: u128, proof: Proof },
    Stop { code: u64 },
    Report(Report),
    RxTimes(Vec<(u64, u64)>),
}

/// Which side's messages a parser accepts: the server takes only what a client may send,
/// and decides after the 8-byte type, so a client cannot make it wait for a long message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

impl Ctrl {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(40);
        let u = |v: &mut Vec<u8>, x: u64| v.extend_from_slice(&x.to_be_bytes());
        match self {
            Ctrl::Hello { version, nonce } => {
                v.extend_from_slice(T_HELLO);
                u(&mut v, *version);
                v.extend_from_slice(nonce);
            }
            Ctrl::Challenge { version, nonce, token_required } => {
                v.extend_from_slice(T_CHALL);
                u(&mut v, *version);
                v.extend_from_slice(nonce);
                u(&mut v, *token_required as u64);
            }
            Ctrl::Auth { proof } => {
                v.extend_from_slice(T_AUTH);
                v.extend_from_slice(proof);
            }
            Ctrl::Start { sid, proof } => {
                v.extend_from_slice(T_START);
                v.extend_from_slice(&sid.to_be_bytes());
                v.extend_from_slice(proof);
            }
            Ctrl::Stop { code } => {
                v.extend_from_slice(T_STOP);
                u(&mut v, *code);
            }
            Ctrl::Report(r) => {
                assert!(r.losses.len() <= MAX_RANGES);
                v.extend_from_slice(T_REPORT);
                u(&mut v, r.ts_ns);
                u(&mut v, r.ack.unwrap_or(u64::MAX));
                u(&mut v, r.losses.len() as u64);
                for &(first, n) in &r.losses {
                    u(&mut v, first);
                    u(&mut v, n);
                }
            }
            Ctrl::RxTimes(list) => {
                assert!(list.len() <= MAX_RX);
                v.extend_from_slice(T_RXTIMES);
                u(&mut v, list.len() as u64);
                for &(s, t) in list {
                    u(&mut v, s);
                    u(&mut v, t);
                }
            }
        }
        v
    }

    /// Parses one message from the front of `buf`: `Ok(None)` if more bytes are needed
    /// (never once `buf` holds [`MAX_MSG`] bytes), `Ok(Some((msg, used)))`, or a
    /// one-line error (unknown or wrong-direction type, oversized list, bad range).
    pub fn parse(buf: &[u8], from: Side) -> Result<Option<(Ctrl, usize)>, String> {
        if buf.len() < 8 {
            return Ok(None);
        }
        let ty: &[u8; 8] = buf[0..8].try_into().unwrap();
        let client_msg = ty == T_HELLO || ty == T_AUTH || ty == T_STOP;
        let server_msg = [T_CHALL, T_START, T_STOP, T_REPORT, T_RXTIMES].contains(&ty);
        let allowed = match from {
            Side::Client => client_msg,
            Side::Server => server_msg,
        };
        if !allowed {
            let who = if from == Side::Client { "client" } else { "server" };
            return Err(if client_msg || server_msg {
                format!("a {who} may not send {:?}", String::from_utf8_lossy(ty))
            } else {
                format!("unknown control message type {:?}", String::from_utf8_lossy(ty))
            });
        }
        let fixed = match ty {
            t if t == T_HELLO => 32,
            t if t == T_CHALL => 40,
            t if t == T_AUTH => 24,
            t if t == T_START => 40,
            t if t == T_STOP => 16,
            t if t == T_REPORT => 32,
            _ => 16, // RxTimes header
        };
        if buf.len() < fixed {
            return Ok(None);
        }
        let m = match ty {
            t if t == T_HELLO => Ctrl::Hello { version: u64_at(buf, 8), nonce: arr16(buf, 16) },
            t if t == T_CHALL => {
                let flag = u64_at(buf, 32);
                if flag > 1 {
                    return Err(format!("challenge with token flag {flag} (expected 0 or 1)"));
                }
                Ctrl::Challenge { version: u64_at(buf, 8), nonce: arr16(buf, 16), token_required: flag == 1 }
            }
            t if t == T_AUTH => Ctrl::Auth { proof: arr16(buf, 8) },
            t if t == T_START => Ctrl::Start { sid: u128_at(buf, 8), proof: arr16(buf, 24) },
            t if t == T_STOP => Ctrl::Stop { code: u64_at(buf, 8) },
            t if t == T_REPORT => {
                let n = u64_at(buf, 24);
                if n > MAX_RANGES as u64 {
                    return Err(format!("report with {n} loss ranges (limit {MAX_RANGES})"));
                }
                let total = 32 + 16 * n as usize;
                if buf.len() < total {
                    return Ok(None);
                }
                let ack = u64_at(buf, 16);
                let mut losses = Vec::with_capacity(n as usize);
                let mut next = 0u64;
                for i in 0..n as usize {
                    let (first, cnt) = (u64_at(buf, 32 + 16 * i), u64_at(buf, 40 + 16 * i));
                    let end = first.checked_add(cnt).filter(|_| cnt > 0 && first >= next);
                    let Some(end) = end else {
                        return Err(format!("report with a bad loss range ({first}, {cnt}): ranges must be non-empty, ascending and below 2^64"));
                    };
                    next = end;
                    losses.push((first, cnt));
                }
                return Ok(Some((
                    Ctrl::Report(Report { ts_ns: u64_at(buf, 8), ack: (ack != u64::MAX).then_some(ack), losses }),
                    total,
                )));
            }
            _ => {
                let n = u64_at(buf, 8);
                if n > MAX_RX as u64 {
                    return Err(format!("receive-time list of {n} entries (limit {MAX_RX})"));
                }
                let total = 16 + 16 * n as usize;
                if buf.len() < total {
                    return Ok(None);
                }
                let list = (0..n as usize).map(|i| (u64_at(buf, 16 + 16 * i), u64_at(buf, 24 + 16 * i))).collect();
                return Ok(Some((Ctrl::RxTimes(list), total)));
            }
        };
        Ok(Some((m, fixed)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: Key = [7u8; 32];

    #[test]
    fn udp_roundtrip_and_sizes() {
        let mut rng = Rng::new(1);
        for size in [UDP_HEADER, 100, UDP_MAX] {
            let mut buf = vec![0u8; size];
            let p = UdpTest { sid: 0xDEAD_BEEF << 70 | 7, seq: 123456, ts_ns: 1_700_000_000_123_456_789 };
            encode_udp(&mut buf, p, &KEY, &mut rng);
            assert_eq!(&buf[0..4], b"CPU2");
            assert_eq!(decode_udp(&buf), Ok(p));
            assert!(udp_tag_ok(&buf, &KEY));
            assert!(!udp_tag_ok(&buf, &[8u8; 32]));
        }
    }

    #[test]
    fn any_flipped_bit_fails_the_tag() {
        let mut rng = Rng::new(2);
        let mut buf = vec![0u8; 120];
        encode_udp(&mut buf, UdpTest { sid: 9, seq: 1, ts_ns: 5 }, &KEY, &mut rng);
        for at in 0..buf.len() {
            let mut b = buf.clone();
            b[at] ^= 0x10;
            assert!(decode_udp(&b).is_err() || !udp_tag_ok(&b, &KEY), "flip at {at}");
        }
        assert_eq!(decode_udp(&buf[..40]), Err(UdpKind::NotProbe));
        assert_eq!(decode_udp(b"UDP_TEST00000000xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"), Err(UdpKind::V1));
    }

    #[test]
    fn control_roundtrip_and_partial() {
        let server = vec![
            Ctrl::Challenge { version: 2, nonce: [3; 16], token_required: true },
            Ctrl::Start { sid: u128::MAX - 5, proof: [9; 16] },
            Ctrl::Stop { code: code::IDLE },
            Ctrl::Report(Report { ts_ns: 99, ack: Some(1000), losses: vec![(3, 1), (5, 2), (900, 1 << 20)] }),
            Ctrl::Report(Report { ts_ns: 0, ack: None, losses: vec![] }),
            Ctrl::RxTimes(vec![(1, 10), (2, 20)]),
        ];
        let client =
            vec![Ctrl::Hello { version: 2, nonce: [1; 16] }, Ctrl::Auth { proof: [4; 16] }, Ctrl::Stop { code: 0 }];
        for (msgs, from) in [(server, Side::Server), (client, Side::Client)] {
            let mut stream = Vec::new();
            for m in &msgs {
                stream.extend(m.encode());
            }
            let mut got = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                assert_eq!(Ctrl::parse(&stream[at..at + 7], from).unwrap(), None);
                let (m, used) = Ctrl::parse(&stream[at..], from).unwrap().unwrap();
                assert_eq!(Ctrl::parse(&stream[at..at + used - 1], from).unwrap(), None);
                assert!(used <= MAX_MSG && (from == Side::Server || used <= MAX_CLIENT_MSG));
                got.push(m);
                at += used;
            }
            assert_eq!(got, msgs);
        }
        assert!(Ctrl::parse(b"GARBAGE!12345678", Side::Server).is_err());
        // the server refuses a report-sized message from a client after 8 bytes
        assert!(Ctrl::parse(b"L_REPORT", Side::Client).unwrap_err().contains("may not send"));
        assert!(Ctrl::parse(b"CCPHELLO", Side::Server).is_err());
    }

    #[test]
    fn bad_reports_are_refused() {
        let mut r = Ctrl::Report(Report { ts_ns: 1, ack: Some(9), losses: vec![(5, 1), (3, 1)] }).encode();
        assert!(Ctrl::parse(&r, Side::Server).unwrap_err().contains("ascending"));
        r = Ctrl::Report(Report { ts_ns: 1, ack: Some(9), losses: vec![(u64::MAX, 2)] }).encode();
        assert!(Ctrl::parse(&r, Side::Server).is_err());
        r[24..32].copy_from_slice(&(1u64 << 40).to_be_bytes());
        assert!(Ctrl::parse(&r[..32], Side::Server).unwrap_err().contains("limit 64"));
    }
}
