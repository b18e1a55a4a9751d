//! Property-based fuzzing of the probe's parsers and its loss accounting (issue 19,
//! item 6): control messages of both directions, probe datagrams, and the server's
//! session (loss window + reports) under arbitrary sequence numbers.
//!
//! CI runs [`CI_CASES`] cases per property; a longer run for developers:
//!     PROPTEST_CASES=100000 cargo test --release -p ccprobe --test fuzz_parsers

use std::time::Instant;

use ccprobe::proto::{
    decode_udp, encode_udp, udp_tag_ok, Ctrl, Report, Rng, Side, UdpTest, MAX_CLIENT_MSG, MAX_MSG, MAX_RANGES, MAX_RX,
    UDP_HEADER, UDP_MAX,
};
use ccprobe::session::{Outbox, Session, AMP_SLACK};
use ccprobe::window::{expand, WINDOW};
use ccprobe::MAX_JUMP;
use proptest::prelude::*;

const CI_CASES: u32 = 512;

fn cases() -> ProptestConfig {
    let n = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(CI_CASES);
    ProptestConfig { cases: n, failure_persistence: None, ..ProptestConfig::default() }
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Client), Just(Side::Server)]
}

/// A valid message of either direction.
fn message() -> impl Strategy<Value = (Side, Ctrl)> {
    let ranges = prop::collection::vec((0u64..1 << 20, 1u64..1000), 0..=MAX_RANGES).prop_map(|v| {
        // ascending, disjoint
        let mut at = 0u64;
        v.into_iter()
            .map(|(gap, n)| {
                let r = (at + gap, n);
                at = r.0 + n;
                r
            })
            .collect::<Vec<_>>()
    });
    prop_oneof![
        (any::<u64>(), any::<[u8; 16]>()).prop_map(|(version, nonce)| (Side::Client, Ctrl::Hello { version, nonce })),
        any::<[u8; 16]>().prop_map(|proof| (Side::Client, Ctrl::Auth { proof })),
        any::<u64>().prop_map(|code| (Side::Client, Ctrl::Stop { code })),
        (any::<u64>(), any::<[u8; 16]>(), any::<bool>())
            .prop_map(|(version, nonce, t)| (Side::Server, Ctrl::Challenge { version, nonce, token_required: t })),
        (any::<u128>(), any::<[u8; 16]>()).prop_map(|(sid, proof)| (Side::Server, Ctrl::Start { sid, proof })),
        any::<u64>().prop_map(|code| (Side::Server, Ctrl::Stop { code })),
        (any::<u64>(), prop::option::of(0u64..u64::MAX), ranges)
            .prop_map(|(ts_ns, ack, losses)| (Side::Server, Ctrl::Report(Report { ts_ns, ack, losses }))),
        prop::collection::vec(any::<(u64, u64)>(), 0..=MAX_RX).prop_map(|l| (Side::Server, Ctrl::RxTimes(l))),
    ]
}

/// Whatever a parser returns for `buf` must be consistent: a message re-encodes to
/// exactly the bytes it consumed, "need more" only below the longest message, an error
/// is one line.
fn parse_is_sound(buf: &[u8], side: Side) -> Result<(), TestCaseError> {
    match Ctrl::parse(buf, side) {
        Ok(Some((m, used))) => {
            prop_assert!(used <= buf.len() && used <= MAX_MSG);
            prop_assert_eq!(&m.encode()[..], &buf[..used]);
            if side == Side::Client {
                prop_assert!(used <= MAX_CLIENT_MSG);
            }
        }
        Ok(None) => {
            let longest = if side == Side::Client { MAX_CLIENT_MSG } else { MAX_MSG };
            prop_assert!(buf.len() < longest);
        }
        Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n')),
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases())]

    #[test]
    fn fuzz_control_arbitrary_bytes(buf in prop::collection::vec(any::<u8>(), 0..1200), side in side()) {
        parse_is_sound(&buf, side)?;
    }

    /// Valid types with arbitrary bodies: the parser's length and range checks.
    #[test]
    fn fuzz_control_typed_garbage(ty in 0usize..7, body in prop::collection::vec(any::<u8>(), 0..1200), side in side()) {
        let types: [&[u8; 8]; 7] = [b"CCPHELLO", b"CCPCHALL", b"CCP_AUTH", b"STARTUDP", b"STOP_UDP", b"L_REPORT", b"RX_TIMES"];
        let mut buf = types[ty].to_vec();
        buf.extend(body);
        parse_is_sound(&buf, side)?;
    }

    /// A stream of valid messages cut anywhere parses back to the same messages, and
    /// every mutation of one byte is either refused or still sound.
    #[test]
    fn fuzz_control_stream_split_and_mutated(
        msgs in prop::collection::vec(message(), 1..6),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        flip in (any::<usize>(), 1u8..),
    ) {
        for side in [Side::Client, Side::Server] {
            let want: Vec<Ctrl> = msgs.iter().filter(|(s, _)| *s == side).map(|(_, m)| m.clone()).collect();
            let stream: Vec<u8> = want.iter().flat_map(|m| m.encode()).collect();
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (stream.len() + 1)).collect();
            cuts.push(stream.len());
            cuts.sort_unstable();
            // feed chunk by chunk, as reads from a socket would
            let (mut buf, mut got, mut fed) = (Vec::new(), Vec::new(), 0);
            for c in cuts {
                buf.extend_from_slice(&stream[fed..c]);
                fed = c;
                while let Some((m, used)) = Ctrl::parse(&buf, side).unwrap() {
                    buf.drain(..used);
                    got.push(m);
                }
                prop_assert!(buf.len() < MAX_MSG);
            }
            prop_assert!(buf.is_empty());
            prop_assert_eq!(got, want);
            if !stream.is_empty() {
                let mut bad = stream.clone();
                let n = bad.len();
                bad[flip.0 % n] ^= flip.1;
                parse_is_sound(&bad, side)?;
            }
        }
    }

    /// Any bytes as a datagram: decoding never panics, a decoded header round-trips, and
    /// no datagram without the key carries a valid tag.
    #[test]
    fn fuzz_datagram_arbitrary_bytes(buf in prop::collection::vec(any::<u8>(), 0..450), key in any::<[u8; 32]>()) {
        if let Ok(h) = decode_udp(&buf) {
            prop_assert!((UDP_HEADER..=UDP_MAX).contains(&buf.len()));
            prop_assert_eq!(&buf[4..20], &h.sid.to_be_bytes()[..]);
            prop_assert!(!udp_tag_ok(&buf, &key));
        }
    }

    /// A valid datagram with any one byte changed fails its tag (or is not a probe).
    #[test]
    fn fuzz_datagram_mutations_fail_the_tag(
        size in UDP_HEADER..=UDP_MAX,
        sid in any::<u128>(), seq in any::<u64>(), ts in any::<u64>(),
        key in any::<[u8; 32]>(), at in any::<usize>(), x in 1u8..,
    ) {
        let mut buf = vec![0u8; size];
        let p = UdpTest { sid, seq, ts_ns: ts };
        encode_udp(&mut buf, p, &key, &mut Rng::new(seq));
        prop_assert_eq!(decode_udp(&buf), Ok(p));
        prop_assert!(udp_tag_ok(&buf, &key));
        buf[at % size] ^= x;
        prop_assert!(decode_udp(&buf).is_err() || !udp_tag_ok(&buf, &key));
    }

    /// The server's session under arbitrary arrivals (jumps up to the limit, reordering,
    /// duplicates): every message it queues parses, loss ranges stay ascending and
    /// capped, the accounting matches a brute-force model, and it never sends more than
    /// it received plus the slack.
    #[test]
    fn fuzz_session_reports_and_amplification(steps in prop::collection::vec((0u8..4, 0u64..300), 1..400), size in UDP_HEADER..=UDP_MAX) {
        let now = Instant::now();
        let mut s = Session::new(1, [0; 32], now, 1e12, Rng::new(1));
        let mut out = Outbox::default();
        let mut hi: Option<u64> = None;
        let mut arrivals = Vec::new();
        for (kind, x) in steps {
            let seq = match (kind, hi) {
                (_, None) => x,
                (0, Some(h)) => h + 1 + x,                // ahead
                (1, Some(h)) => h + MAX_JUMP.min(1 + x * (MAX_JUMP / 300)), // far ahead
                (2, Some(h)) => h.saturating_sub(x % (2 * WINDOW)), // reordered or late
                (_, Some(h)) => h,                        // duplicate
            };
            hi = Some(hi.map_or(seq, |h| h.max(seq)));
            arrivals.push(seq);
            out.received += size as u64;
            s.deliver(&mut out, UdpTest { sid: 1, seq, ts_ns: 1 }, 1);
        }
        out.received += 16; // the client's StopPacket
        s.finish(&mut out);
        prop_assert_eq!(s.abort, None);
        prop_assert!(out.queued <= out.received + AMP_SLACK);
        // parse everything the client would read
        let (mut buf, mut losses, mut rx) = (&out.buf[..], Vec::new(), 0usize);
        while !buf.is_empty() {
            let (m, used) = Ctrl::parse(buf, Side::Server).unwrap().expect("complete message");
            match m {
                Ctrl::Report(r) => {
                    prop_assert!(r.losses.len() <= MAX_RANGES);
                    losses.extend(r.losses);
                }
                Ctrl::RxTimes(l) => rx += l.len(),
                other => prop_assert!(false, "unexpected {:?}", other),
            }
            buf = &buf[used..];
        }
        for w in losses.windows(2) {
            prop_assert!(w[0].0 + w[0].1 <= w[1].0, "ranges not ascending: {:?}", w);
        }
        // brute force (window semantics of `window.rs`): lost = never received before a
        // number >= it + 128 arrived, or never received at all
        let top = *arrivals.iter().max().unwrap();
        let total_lost: u64 = losses.iter().map(|r| r.1).sum();
        prop_assert_eq!(total_lost, s.window.lost);
        prop_assert_eq!(rx as u64, s.window.received);
        prop_assert_eq!(s.window.received + s.window.lost, top + 1);
        if top < 20_000 {
            let mut seen = vec![false; top as usize + 1];
            let mut lost = vec![false; top as usize + 1];
            let mut h: i64 = -1;
            for &q in &arrivals {
                if q as i64 > h {
                    for (i, l) in lost.iter_mut().enumerate().take((q as i64 - WINDOW as i64 + 1).max(0) as usize) {
                        if !seen[i] { *l = true; }
                    }
                    h = q as i64;
                }
                if !lost[q as usize] { seen[q as usize] = true; }
            }
            let want: Vec<u64> = (0..=top).filter(|&i| !seen[i as usize]).collect();
            prop_assert_eq!(expand(&losses), want);
        }
    }
}
