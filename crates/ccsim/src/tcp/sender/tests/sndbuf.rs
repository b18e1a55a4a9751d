//! Linux's send buffer as the application sees it (`tcp_sendmsg_locked`): a soft limit
//! that what the window can send at once passes, and a writer refused by it resumes
//! only when the socket is writable again (queued <= 2/3 of `sk_sndbuf`); and what
//! it counts as queued, the data plus each skb's truesize overhead.

use super::{reno, seg, MSS};
use crate::tcp::config::{SndbufMode, TcpConfig};
use crate::tcp::segment::Segment;
use crate::tcp::TcpSender;

/// The rule alone, counting data only (no skb overhead).
fn sender(sndbuf_segs: u64) -> TcpSender {
    let cfg = TcpConfig { sndbuf_bytes: sndbuf_segs * MSS, nagle: false, skb_overhead_bytes: 0, ..reno() };
    TcpSender::from_config(&cfg, 0, "t").unwrap()
}

fn ack(a: u64) -> Segment {
    Segment { ack: a, rwnd: 1 << 30, ..Segment::default() }
}

#[test]
fn a_full_send_buffer_passes_what_the_window_sends_at_once() {
    // Buffer of 5 segments, initial window of 10: the tail skb is transmitted while
    // the write copies into it, so the whole window's room is taken, not 5.
    let mut s = sender(5);
    assert_eq!(s.write(0, 100 * MSS), 10 * MSS);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(0)).count(), 10);
    // The write was cut short: the writer waits for the socket to become writable.
    assert_eq!(s.write(0, 100 * MSS), 0);
}

#[test]
fn a_refused_writer_resumes_when_two_thirds_of_the_buffer_are_free() {
    let mut s = sender(30);
    assert_eq!(s.write(0, 100 * MSS), 30 * MSS);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(0)).count(), 10);
    // One segment acknowledged: room under the limit, but the socket is not writable
    // (29 segments queued > 2/3 of 30), so a blocked writer is not woken; a hard cap
    // would have taken one segment here.
    s.on_ack(100_000_000, &ack(seg(1)));
    assert_eq!(s.write(100_000_000, 100 * MSS), 0);
    // Ten acknowledged: 20 queued = 2/3 of the buffer, writable; it fills to the limit
    // (the window's room, 10 segments of slow start, is smaller).
    s.on_ack(100_000_000, &ack(seg(10)));
    assert_eq!(s.write(100_000_000, 100 * MSS), 10 * MSS);
}

#[test]
fn a_writer_that_fits_is_never_held() {
    // Small writes into an ample buffer: every one is taken whole, as before.
    let mut s = sender(100);
    for i in 0..50 {
        assert_eq!(s.write(i * 1000, MSS), MSS);
    }
}

#[test]
fn window_mode_is_a_hard_cap_topped_up_at_once() {
    // The analytical models' W_max: never more than the buffer unacknowledged, and
    // every byte of room taken as soon as it frees.
    let cfg = TcpConfig { sndbuf_bytes: 5 * MSS, sndbuf_mode: SndbufMode::Window, nagle: false, ..reno() };
    let mut s = TcpSender::from_config(&cfg, 0, "t").unwrap();
    assert_eq!(s.write(0, 100 * MSS), 5 * MSS);
    assert_eq!(std::iter::from_fn(|| s.poll_transmit(0)).count(), 5);
    s.on_ack(100_000_000, &ack(seg(1)));
    assert_eq!(s.write(100_000_000, 100 * MSS), MSS);
}

#[test]
fn queued_memory_is_the_data_plus_832_bytes_per_skb() {
    // Linux charges `sk_wmem_queued` each skb's truesize: its payload plus 832 B.
    let cfg = TcpConfig { nagle: false, ..reno() };
    assert_eq!(cfg.skb_overhead_bytes, 832);
    let mut s = TcpSender::from_config(&cfg, 0, "t").unwrap();
    s.on_ack(0, &ack(0));
    // 100 segments written: unsent, in skbs of the size goal (45 segments of 64 KB).
    assert_eq!(s.write(0, 100 * MSS), 100 * MSS);
    assert_eq!(s.wmem_queued(), 100 * MSS + 3 * 832);
    // The initial window goes out as TSO chunks, one skb each; the rest stays unsent.
    let sent = std::iter::from_fn(|| s.poll_transmit(0)).count() as u64;
    assert_eq!(sent, 10);
    let chunks = u64::from(s.sb.skbs());
    assert!((1..=10).contains(&chunks), "{chunks}");
    assert_eq!(s.wmem_queued(), 100 * MSS + (chunks + 90u64.div_ceil(45)) * 832);
    // Without the overhead the data alone is counted.
    let cfg = TcpConfig { skb_overhead_bytes: 0, ..cfg };
    let mut s = TcpSender::from_config(&cfg, 0, "t").unwrap();
    s.write(0, 100 * MSS);
    assert_eq!(s.wmem_queued(), 100 * MSS);
}
