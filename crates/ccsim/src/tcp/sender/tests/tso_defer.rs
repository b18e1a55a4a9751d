//! TSO deferral (`tcp_tso_should_defer`, Linux 6.18): an unpaced sender holds back a
//! partial skb while the next ACK is due within min(1 ms, srtt/2), so it sends whole
//! autosized skbs where a segment-at-a-time sender answers every ACK.

use super::pipe::{Pipe, MS};
use super::{reno, MSS};
use crate::tcp::config::TcpConfig;

/// One Reno flow in congestion avoidance from the start (cwnd 400 = ssthresh) on a
/// path of `rate` with a 100 ms RTT; the test receiver ACKs every segment.
fn ca_flow(rate_bps: u64, defer: bool) -> Pipe {
    // The handshake's RTT sample (100 ms), as every Linux connection has one before data.
    let cfg = TcpConfig { init_cwnd: 400, init_ssthresh: 400, tso_defer: defer, sndbuf_bytes: 1 << 30, syn_rtt_us: 100_000, ..reno() };
    let mut p = Pipe::new(cfg, 50 * MS, Some(rate_bps));
    p.write_at(0, 40_000 * MSS);
    p
}

/// The same flow with and without deferral, each run to `until`.
fn with_and_without(rate_bps: u64, until: u64) -> (Pipe, Pipe) {
    let mut p = ca_flow(rate_bps, true);
    p.run_until(until);
    let mut q = ca_flow(rate_bps, false);
    q.run_until(until);
    (p, q)
}

/// Sizes of the bursts sent between 1 s and 2 s (segments leaving at one instant).
fn burst_sizes(p: &Pipe) -> Vec<usize> {
    p.tx_bursts().into_iter().filter(|&(t, _)| (1000 * MS..2000 * MS).contains(&t)).map(|(_, n)| n).collect()
}

#[test]
fn deferral_sends_whole_skbs_on_a_fast_ack_clock() {
    // 100 Mbit/s: an ACK every 0.12 ms frees one segment. The pacing rate (1.2 x cwnd
    // / srtt, about 55 Mbit/s) makes skbs of 4 segments, so the sender waits for four
    // ACKs' room and sends the skb whole.
    let (p, q) = with_and_without(100_000_000, 2000 * MS);
    let b = burst_sizes(&p);
    let whole = b.iter().filter(|&&n| n >= 4).count();
    let mut hist = [0usize; 8];
    b.iter().for_each(|&n| hist[n.min(7)] += 1);
    assert!(whole * 10 >= b.len() * 8, "burst sizes 0..7+: {hist:?}");
    // Without deferral every ACK's one segment of room goes out at once.
    let b = burst_sizes(&q);
    assert!(b.iter().filter(|&&n| n == 1).count() * 10 >= b.len() * 9, "bursts {:?}", &b[..b.len().min(40)]);
}

#[test]
fn no_deferral_when_the_next_ack_is_more_than_a_millisecond_away() {
    // 5 Mbit/s: ACKs 2.3 ms apart. Waiting for one would idle the sender past the
    // 1 ms Linux allows, so the sender does exactly what it does without deferral.
    let (p, q) = with_and_without(5_000_000, 2000 * MS);
    assert!(burst_sizes(&p).len() > 300);
    let (a, b) = (p.tx_bursts(), q.tx_bursts());
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(first.is_none() && a.len() == b.len(), "first difference at {first:?}: {:?} vs {:?}", first.map(|i| &a[i.saturating_sub(2)..i + 3]), first.map(|i| &b[i.saturating_sub(2)..i + 3]));
}

#[test]
fn deferral_does_not_slow_congestion_avoidance() {
    // cwnd grows in congestion avoidance only while the sender is cwnd-limited
    // (`tcp_is_cwnd_limited`); a sender waiting for room for a whole skb still is
    // (`tcp_tso_should_defer` reports the limit it waited on), so Reno's window grows
    // one segment per round as without deferral.
    let (p, q) = with_and_without(100_000_000, 3000 * MS);
    let (with, without) = (p.s.state().cwnd, q.s.state().cwnd);
    assert!(with > 410 && with.abs_diff(without) <= 2, "cwnd {with} with deferral, {without} without");
}

#[test]
fn an_skb_takes_at_most_half_of_cwnd() {
    // `tcp_cwnd_test`: "ensure we have at least 2 GSO packets in flight". On a LAN path
    // (100 µs handshake RTT) autosizing allows 45-segment skbs, so the initial window of
    // 10 would leave as one skb; Linux sends two of 5. Both leave at once.
    use crate::tcp::segment::Segment;
    use crate::tcp::TcpSender;
    let cfg = TcpConfig { syn_rtt_us: 100, nagle: false, ..reno() };
    let mut s = TcpSender::from_config(&cfg, 0, "t").unwrap();
    s.on_ack(0, &Segment { ack: 0, rwnd: 1 << 20, ..Default::default() });
    assert!(s.tso_segs() >= 10, "autosized skbs of {} segments", s.tso_segs());
    s.write(0, 100 * MSS);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(0)).count(), 10);
    assert_eq!(s.sb.skbs(), 2);
}
