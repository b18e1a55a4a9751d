//! Receiver tests: ACK timing, SACK and DSACK blocks, ECN echo and the window,
//! segment by segment.

use super::*;

const MSS: u64 = 1448;
/// Runs start at 1 s so that "RTT ago" timestamps stay positive.
const T0: Nanos = NS_PER_SEC;
const MS: Nanos = NS_PER_MS;
const NS_PER_US_TEST: Nanos = 1_000;

/// Full-sized segment number `i`, sent 25 ms before `now`, echoing an ACK the
/// receiver sent 50 ms ago (a 50 ms RTT as the receiver measures it).
fn seg_at(now: Nanos, i: u64) -> Segment {
    Segment { seq: i * MSS, len: MSS as u32, tsval: now - 25 * MS, tsecr: now - 50 * MS, ..Segment::default() }
}

/// The receiver most tests want: window fully grown, no skb overhead charged (so
/// `rcvbuf_bytes` is the window), as before the window-growth model; the ramp has
/// its own tests at the end.
fn grown(cfg: ReceiverConfig) -> TcpReceiver {
    TcpReceiver::with_grown_window(ReceiverConfig { scaling_ratio: 256, ..cfg })
}

fn acks(r: &mut TcpReceiver, now: Nanos) -> Vec<Segment> {
    std::iter::from_fn(|| r.poll_ack(now)).collect()
}

fn blocks(a: &Segment) -> Vec<(u64, u64)> {
    a.sacks().iter().map(|b| (b.start / MSS, b.end / MSS)).collect()
}

/// A receiver that has used up its initial quick ACKs: segments 0..16 arrived
/// 1 ms apart, each ACKed at once. Returns it and the time of the last arrival.
fn warmed(cfg: ReceiverConfig) -> (TcpReceiver, Nanos) {
    let mut r = grown(cfg);
    let mut now = T0;
    for i in 0..16 {
        now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1, "quick ACK for segment {i}");
        assert_eq!(a[0].ack, (i + 1) * MSS);
    }
    assert_eq!(r.quickacks_left(), 0);
    assert_eq!(r.ato(), 40 * MS);
    (r, now)
}

#[test]
fn quickack_mode_at_start_acks_each_of_the_first_16_segments() {
    let mut r = grown(ReceiverConfig::default());
    let mut per_segment = Vec::new();
    for i in 0..20 {
        let now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        per_segment.push(acks(&mut r, now).iter().map(|a| a.ack / MSS).collect::<Vec<_>>());
    }
    for (i, a) in per_segment.iter().enumerate().take(16) {
        assert_eq!(a, &vec![i as u64 + 1], "segment {i}");
    }
    // Quick-ack exhausted: back to one ACK per two full-sized segments.
    assert_eq!(per_segment[16], Vec::<u64>::new());
    assert_eq!(per_segment[17], vec![18]);
    assert_eq!(per_segment[18], Vec::<u64>::new());
    assert_eq!(per_segment[19], vec![20]);
}

#[test]
fn quickacks_are_bounded_by_half_the_window_in_segments() {
    // tcp_incr_quickack: rcv_wnd / (2 * mss) = 8688 / 2896 = 3.
    let cfg = ReceiverConfig { rcvbuf_bytes: 6 * MSS, ..ReceiverConfig::default() };
    let mut r = grown(cfg);
    r.on_segment(T0, &seg_at(T0, 0), false);
    assert_eq!(acks(&mut r, T0).len(), 1);
    assert_eq!(r.quickacks_left(), 2);
}

#[test]
fn in_order_data_with_delayed_ack_acks_every_second_segment() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let mut acked = Vec::new();
    for i in 16..24 {
        let now = last + (i - 15) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        let a = acks(&mut r, now);
        if i % 2 == 0 {
            assert!(a.is_empty(), "segment {i} alone is not ACKed");
            assert_eq!(r.next_timer(), Some(now + 40 * MS), "delayed-ACK timer armed");
        } else {
            assert_eq!(a.len(), 1);
            assert_eq!(r.next_timer(), None, "the ACK cancels the timer");
        }
        acked.extend(a.iter().map(|a| a.ack / MSS));
    }
    assert_eq!(acked, vec![18, 20, 22, 24]);
}

#[test]
fn lone_segment_is_acked_by_the_40ms_timer_which_then_inflates_ato() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + 85 * MS; // gap > ato: ato stays 40 ms
    r.on_segment(now, &seg_at(now, 16), false);
    assert!(acks(&mut r, now).is_empty());
    assert_eq!(r.next_timer(), Some(now + 40 * MS));
    assert!(r.poll_ack(now + 40 * MS - 1).is_none());
    let a = r.poll_ack(now + 40 * MS).expect("delayed ACK");
    assert_eq!(a.ack, 17 * MSS);
    assert_eq!(r.next_timer(), None);
    // tcp_delack_timer_handler: "Delayed ACK missed: inflate ATO."
    assert_eq!(r.ato(), 80 * MS);
}

#[test]
fn ato_follows_the_inter_arrival_time_up_to_200ms() {
    let (mut r, mut now) = warmed(ReceiverConfig::default());
    // Lone segments 30 ms apart: m = 30 ms < ato, ato = ato/2 + m → 35, 47.5, ...
    now += 30 * MS;
    r.on_segment(now, &seg_at(now, 16), false);
    assert_eq!(r.ato(), 20 * MS + 30 * MS);
    assert_eq!(r.next_timer(), Some(now + 50 * MS));
    // A timer that has not yet fired is kept (tcp_send_delayed_ack uses the
    // earlier deadline); the second segment ACKs anyway (two full segments).
    now += 30 * MS;
    r.on_segment(now, &seg_at(now, 17), false);
    assert_eq!(acks(&mut r, now).len(), 1);
    assert_eq!(r.ato(), 25 * MS + 30 * MS);
}

#[test]
fn long_idle_gap_reenters_quickack_mode() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + 1500 * MS; // longer than the 1 s RTO of a socket without RTT
    r.on_segment(now, &seg_at(now, 16), false);
    assert_eq!(acks(&mut r, now).len(), 1);
    assert_eq!(r.quickacks_left(), 15);
}

#[test]
fn delayed_ack_off_acks_every_segment() {
    let cfg = ReceiverConfig { delayed_ack: false, ..ReceiverConfig::default() };
    let mut r = grown(cfg);
    for i in 0..40 {
        let now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1, "segment {i}");
        assert_eq!(a[0].ack, (i + 1) * MSS);
        assert_eq!(r.next_timer(), None);
    }
}

#[test]
fn out_of_order_triggers_immediate_acks_with_most_recent_sack_block_first() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    // Segment 16 is lost; 17, 19 and 21 arrive (18 and 20 lost too).
    let mut got = Vec::new();
    for (k, i) in [17u64, 19, 21].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        let arr = r.on_segment(now, &seg_at(now, i), false);
        assert!(arr.out_of_order && !arr.duplicate);
        assert_eq!(arr.delivered(), 0, "held back behind the hole");
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1, "immediate duplicate ACK for segment {i}");
        assert_eq!(a[0].ack, 16 * MSS);
        assert!(!a[0].dsack);
        got.push(blocks(&a[0]));
    }
    assert_eq!(got[0], vec![(17, 18)]);
    assert_eq!(got[1], vec![(19, 20), (17, 18)]);
    assert_eq!(got[2], vec![(21, 22), (19, 20), (17, 18)]);
    // Contiguous arrival extends the block and moves it to the front.
    let now = last + 4 * MS;
    r.on_segment(now, &seg_at(now, 18), false);
    assert_eq!(r.ofo_intervals().len(), 2);
    let a = r.poll_ack(now + MS).expect("compressed ACK after 1 ms");
    assert_eq!(blocks(&a), vec![(17, 20), (21, 22)]);
}

#[test]
fn sack_compression_after_three_dupacks_waits_5_percent_of_rtt_at_most_1ms() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    for (k, i) in [17u64, 19, 21].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        assert_eq!(acks(&mut r, now).len(), 1);
    }
    let now = last + 4 * MS;
    r.on_segment(now, &seg_at(now, 23), false);
    assert!(acks(&mut r, now).is_empty(), "fourth duplicate ACK is compressed");
    // RTT 50 ms → 2.5 ms, capped by tcp_comp_sack_delay_ns = 1 ms.
    assert_eq!(r.next_timer(), Some(now + MS));
    let a = r.poll_ack(now + MS).expect("compressed ACK");
    assert_eq!(a.ack, 16 * MSS);
    // Four blocks remembered, three fit next to timestamps.
    assert_eq!(blocks(&a), vec![(23, 24), (21, 22), (19, 20)]);
}

#[test]
fn sack_compression_off_acks_every_out_of_order_segment() {
    let cfg = ReceiverConfig { comp_sack_nr: 0, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    for (k, i) in [17u64, 19, 21, 23, 25].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        assert_eq!(acks(&mut r, now).len(), 1, "segment {i}");
    }
}

#[test]
fn fifth_hole_forgets_the_oldest_sack_block() {
    let cfg = ReceiverConfig { timestamps: false, comp_sack_nr: 0, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    let mut a = Vec::new();
    for (k, i) in [17u64, 19, 21, 23, 25].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        a = acks(&mut r, now);
    }
    // Without timestamps four blocks fit; the fifth hole pushes out (17, 18).
    assert_eq!(blocks(&a[0]), vec![(25, 26), (23, 24), (21, 22), (19, 20)]);
    assert_eq!(r.ofo_intervals().len(), 5, "the data itself is kept");
}

#[test]
fn filling_the_hole_acks_immediately_and_releases_the_held_back_data() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    for (k, i) in [17u64, 18].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        acks(&mut r, now);
    }
    let now = last + 3 * MS;
    let arr = r.on_segment(now, &seg_at(now, 16), false); // the retransmission
    assert_eq!(arr.rcv_nxt_before, 16 * MSS);
    assert_eq!(arr.rcv_nxt_after, 19 * MSS);
    assert_eq!(arr.delivered(), 3 * MSS, "head-of-line release");
    assert_eq!(arr.new_bytes, MSS);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 19 * MSS);
    assert_eq!(a[0].n_sack, 0);
    assert_eq!(r.ofo_bytes(), 0);
}

#[test]
fn partial_hole_fill_acks_immediately_with_remaining_blocks() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    for (k, i) in [17u64, 19].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        acks(&mut r, now);
    }
    // Three quick ACKs are also unused here: delay the fill so `ato` is irrelevant.
    let now = last + 3 * MS;
    let arr = r.on_segment(now, &seg_at(now, 16), false);
    assert_eq!(arr.rcv_nxt_after, 18 * MSS);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 18 * MSS);
    assert_eq!(blocks(&a[0]), vec![(19, 20)]);
}

#[test]
fn duplicate_below_rcv_nxt_is_acked_at_once_with_a_dsack_block() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + MS;
    let arr = r.on_segment(now, &seg_at(now, 3), false);
    assert!(arr.duplicate);
    assert_eq!(arr.new_bytes, 0);
    assert_eq!(arr.delivered(), 0);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 16 * MSS);
    assert!(a[0].dsack);
    assert_eq!(blocks(&a[0]), vec![(3, 4)]);
    // Quick-ack mode was re-entered; the duplicate ACK itself covers no new data,
    // so it does not use up a quick ACK (`tcp_dec_quickack_mode`).
    assert_eq!(r.quickacks_left(), 16);
    let now = now + MS;
    r.on_segment(now, &seg_at(now, 16), false);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1, "quick ACK");
    assert!(!a[0].dsack && a[0].n_sack == 0, "a DSACK is reported once");
    assert_eq!(r.quickacks_left(), 15);
}

#[test]
fn duplicate_out_of_order_segment_gives_dsack_then_its_sack_block() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + MS;
    r.on_segment(now, &seg_at(now, 18), false);
    acks(&mut r, now);
    let now = now + MS;
    let arr = r.on_segment(now, &seg_at(now, 18), false);
    assert!(arr.duplicate && arr.out_of_order);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert!(a[0].dsack);
    assert_eq!(blocks(&a[0]), vec![(18, 19), (18, 19)]);
}

#[test]
fn dsack_takes_one_of_the_three_option_slots() {
    let cfg = ReceiverConfig { comp_sack_nr: 0, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    for (k, i) in [17u64, 19, 21].into_iter().enumerate() {
        let now = last + (k as u64 + 1) * MS;
        r.on_segment(now, &seg_at(now, i), false);
        acks(&mut r, now);
    }
    let now = last + 4 * MS;
    r.on_segment(now, &seg_at(now, 3), false);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert!(a[0].dsack);
    // DSACK first, then the two most recent SACK blocks (40 - 12 bytes of options).
    assert_eq!(blocks(&a[0]), vec![(3, 4), (21, 22), (19, 20)]);
}

#[test]
fn partly_old_segment_reports_the_old_head_as_dsack() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + MS;
    // Repacketised retransmission covering [15.5 MSS, 17 MSS).
    let seg = Segment { seq: 15 * MSS + 724, len: 724 + MSS as u32, ..seg_at(now, 0) };
    let arr = r.on_segment(now, &seg, false);
    assert_eq!(arr.new_bytes, MSS);
    assert_eq!(arr.rcv_nxt_after, 17 * MSS);
    // Not more than one MSS since the last ACK, no quick-ack: delayed, DSACK kept.
    assert!(acks(&mut r, now).is_empty());
    let a = r.poll_ack(now + 40 * MS).expect("delayed ACK");
    assert!(a.dsack);
    assert_eq!((a.sack[0].start, a.sack[0].end), (15 * MSS + 724, 16 * MSS));
}

#[test]
fn delayed_ack_echoes_tsval_of_the_earliest_unacked_segment() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let (t1, t2) = (last + MS, last + 2 * MS);
    let (s1, s2) = (seg_at(t1, 16), seg_at(t2, 17));
    r.on_segment(t1, &s1, false);
    r.on_segment(t2, &s2, false);
    let a = acks(&mut r, t2);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].tsecr, s1.tsval, "RFC 7323 §4.3: TS.Recent from the first");
    assert_eq!(a[0].tsval, t2);
}

#[test]
fn classic_ecn_echo_persists_until_cwr() {
    let cfg = ReceiverConfig { ecn_mode: EcnMode::Classic, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    let mut ece = Vec::new();
    let mut t = last;
    let mut feed = |r: &mut TcpReceiver, i: u64, ce: bool, cwr: bool| {
        t += MS;
        let s = Segment { cwr, ..seg_at(t, i) };
        r.on_segment(t, &s, ce);
        acks(r, t).iter().map(|a| (a.ack / MSS, a.ece)).collect::<Vec<_>>()
    };
    // CE: quick-ack for two segments (tcp_enter_quickack_mode(sk, 2)).
    ece.push(feed(&mut r, 16, true, false));
    ece.push(feed(&mut r, 17, false, false));
    // Back to delayed ACKs, still echoing.
    ece.push(feed(&mut r, 18, false, false));
    ece.push(feed(&mut r, 19, false, false));
    // CWR stops the echo and is ACKed at once.
    ece.push(feed(&mut r, 20, false, true));
    ece.push(feed(&mut r, 21, false, false));
    ece.push(feed(&mut r, 22, false, false));
    assert_eq!(
        ece,
        vec![
            vec![(17, true)],
            vec![(18, true)],
            vec![],
            vec![(20, true)],
            vec![(21, false)],
            vec![],
            vec![(23, false)],
        ]
    );
}

#[test]
fn ecn_off_ignores_ce() {
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + MS;
    r.on_segment(now, &seg_at(now, 16), true);
    assert!(acks(&mut r, now).is_empty(), "no quick-ack on CE without ECN");
}

#[test]
fn dctcp_acks_at_once_when_the_ce_state_changes() {
    let cfg = ReceiverConfig { ecn_mode: EcnMode::Dctcp, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    let mut t = last;
    let mut feed = |r: &mut TcpReceiver, i: u64, ce: bool| {
        t += MS;
        r.on_segment(t, &seg_at(t, i), ce);
        acks(r, t).iter().map(|a| (a.ack / MSS, a.ece)).collect::<Vec<_>>()
    };
    // Segment 16 unmarked: delayed ACK pending.
    assert_eq!(feed(&mut r, 16, false), vec![]);
    // 17 marked: the pending ACK for 16 goes out first with ECE=0, then 17 with ECE=1.
    assert_eq!(feed(&mut r, 17, true), vec![(17, false), (18, true)]);
    // Same state: normal delayed ACKs, ECE reflects the marks.
    assert_eq!(feed(&mut r, 18, true), vec![]);
    assert_eq!(feed(&mut r, 19, true), vec![(20, true)]);
    // Back to unmarked, no ACK pending: one immediate ACK with ECE=0.
    assert_eq!(feed(&mut r, 20, false), vec![(21, false)]);
    assert_eq!(feed(&mut r, 21, false), vec![]);
    assert_eq!(feed(&mut r, 22, false), vec![(23, false)]);
}

#[test]
fn rwnd_shrinks_when_the_app_does_not_read_and_reopens_on_read() {
    let cfg = ReceiverConfig {
        rcvbuf_bytes: 65_536,
        app_reads_immediately: false,
        delayed_ack: false,
        ..ReceiverConfig::default()
    };
    let mut r = grown(cfg);
    let mut now = T0;
    for i in 0..30 {
        now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        let a = acks(&mut r, now);
        assert_eq!(a[0].rwnd, 65_536 - (i + 1) * MSS, "segment {i}");
    }
    assert_eq!(r.unread_bytes(), 30 * MSS);
    // Reading a little does not double the window: no update.
    now += MS;
    assert_eq!(r.read(now, 1000), 1000);
    assert!(acks(&mut r, now).is_empty());
    // Reading the rest frees more than twice the open window: window update.
    assert_eq!(r.read(now, u64::MAX), 30 * MSS - 1000);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 30 * MSS);
    assert_eq!(a[0].rwnd, 65_536);
}

#[test]
fn full_buffer_advertises_zero_and_drops_data_beyond_it() {
    let cfg = ReceiverConfig {
        rcvbuf_bytes: 16 * MSS,
        app_reads_immediately: false,
        delayed_ack: false,
        ..ReceiverConfig::default()
    };
    let mut r = grown(cfg);
    let mut last = Segment::default();
    for i in 0..16 {
        let now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        last = acks(&mut r, now).pop().unwrap();
    }
    assert_eq!(last.rwnd, 0);
    let now = T0 + 20 * MS;
    let arr = r.on_segment(now, &seg_at(now, 16), false);
    assert!(arr.discarded);
    assert_eq!(arr.delivered(), 0);
    let a = acks(&mut r, now);
    assert_eq!((a[0].ack, a[0].rwnd), (16 * MSS, 0));
}

#[test]
fn zero_window_probe_is_answered_and_a_read_reopens_the_window() {
    let cfg = ReceiverConfig {
        rcvbuf_bytes: 16 * MSS,
        app_reads_immediately: false,
        delayed_ack: false,
        ..ReceiverConfig::default()
    };
    let mut r = grown(cfg);
    for i in 0..16 {
        let now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        acks(&mut r, now);
    }
    assert_eq!(r.advertised_window(), 0);
    // Linux probes a zero window with an old, empty segment (`tcp_xmit_probe_skb`).
    let now = T0 + 200 * MS;
    let probe = Segment { seq: 16 * MSS - 1, len: 0, ..seg_at(now, 0) };
    r.on_segment(now, &probe, false);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].ack, a[0].rwnd), (16 * MSS, 0));
    // A small read frees less than an MSS: still zero, no update (SWS avoidance).
    assert_eq!(r.read(now, 1000), 1000);
    assert!(acks(&mut r, now).is_empty());
    // Reading half the buffer opens the window: window update at once.
    r.read(now, 8 * MSS - 1000);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!((a[0].ack, a[0].rwnd), (16 * MSS, 8 * MSS));
}

#[test]
fn small_segment_is_acked_when_the_app_reads_it() {
    // tcp_cleanup_rbuf: a pushed (sub-MSS) segment drained by the reader is ACKed
    // without waiting for the delayed-ACK timer.
    let (mut r, last) = warmed(ReceiverConfig::default());
    let now = last + 20 * MS;
    let s = Segment { len: 160, ..seg_at(now, 16) };
    r.on_segment(now, &s, false);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 16 * MSS + 160);
    // A slow reader leaves it to the timer.
    let cfg = ReceiverConfig { app_reads_immediately: false, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    let now = last + 20 * MS;
    r.on_segment(now, &s, false);
    assert!(acks(&mut r, now).is_empty());
    assert_eq!(r.next_timer(), Some(now + 40 * MS));
}

#[test]
fn segment_beyond_the_window_is_dropped_with_an_immediate_ack() {
    let cfg = ReceiverConfig { rcvbuf_bytes: 32 * MSS, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    let now = last + MS;
    let arr = r.on_segment(now, &seg_at(now, 16 + 33), false);
    assert!(arr.discarded);
    assert_eq!(r.ofo_bytes(), 0);
    let a = acks(&mut r, now);
    assert_eq!(a.len(), 1);
    assert_eq!(a[0].ack, 16 * MSS);
}

#[test]
fn sack_off_sends_plain_duplicate_acks() {
    let cfg = ReceiverConfig { sack: false, ..ReceiverConfig::default() };
    let (mut r, last) = warmed(cfg);
    for k in 1..=6 {
        let now = last + k * MS;
        r.on_segment(now, &seg_at(now, 16 + k), false);
        let a = acks(&mut r, now);
        assert_eq!(a.len(), 1);
        assert_eq!((a[0].ack, a[0].n_sack), (16 * MSS, 0));
    }
    let now = last + 7 * MS;
    let a = r.on_segment(now, &seg_at(now, 3), false);
    assert!(a.duplicate);
    assert_eq!(acks(&mut r, now)[0].n_sack, 0, "no DSACK without SACK");
}

/// Deterministic xorshift64* for the property test (no dependency on run seeds).
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn random_loss_reordering_and_duplication_keep_the_receiver_consistent() {
    let (mut n_dsack, mut n_sack, mut n_timer_acks) = (0, 0, 0);
    for seed in 1..=20u64 {
        let n = 300u64;
        let mut rng = XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        // Arrival order: every segment once, some twice, with local reordering and
        // a few "lost" ones arriving much later (as retransmissions).
        let mut order: Vec<u64> = Vec::new();
        let mut late = Vec::new();
        for i in 0..n {
            match rng.below(20) {
                0 | 1 => late.push(i),
                2 => {
                    order.push(i);
                    order.push(i);
                }
                _ => order.push(i),
            }
        }
        for k in 1..order.len() {
            if rng.below(8) == 0 {
                order.swap(k - 1, k);
            }
        }
        for (k, i) in late.into_iter().enumerate() {
            let pos = (order.len()).min(k * 7 + 40 + rng.below(30) as usize);
            order.insert(pos, i);
        }

        let cfg = ReceiverConfig { comp_sack_nr: 3 + (seed % 3) as u32 * 20, ..ReceiverConfig::default() };
        let mut r = grown(cfg);
        let mut have = vec![false; n as usize];
        let (mut delivered, mut fresh, mut last_ack) = (0u64, 0u64, 0u64);
        let mut now = T0;
        for &i in &order {
            now += 100 * NS_PER_US_TEST;
            // Timers that expired before this arrival fire first.
            while let Some(t) = r.next_timer().filter(|&t| t <= now) {
                r.on_timer(t);
                for a in acks(&mut r, t) {
                    n_timer_acks += 1;
                    assert!(a.ack >= last_ack);
                    last_ack = a.ack;
                }
            }
            let was_dup = have[i as usize];
            let arr = r.on_segment(now, &seg_at(now, i), false);
            have[i as usize] = true;
            assert_eq!(arr.duplicate, was_dup, "seed {seed} segment {i}");
            delivered += arr.delivered();
            fresh += arr.new_bytes;
            let prefix = have.iter().take_while(|&&h| h).count() as u64;
            assert_eq!(r.rcv_nxt(), prefix * MSS, "seed {seed}");
            // The interval set holds exactly the received segments above rcv_nxt.
            let above: u64 = have[prefix as usize..].iter().filter(|&&h| h).count() as u64;
            assert_eq!(r.ofo_bytes(), above * MSS);
            for b in r.ofo_intervals() {
                assert!(b.start > r.rcv_nxt() && b.start < b.end);
                assert!((b.start / MSS..b.end / MSS).all(|j| have[j as usize]));
            }
            for a in acks(&mut r, now) {
                assert!(a.ack >= last_ack, "cumulative ACK never goes back");
                last_ack = a.ack;
                let sacks = &a.sacks()[usize::from(a.dsack)..];
                assert!(sacks.len() <= 3);
                for b in sacks {
                    assert!(b.start > a.ack, "SACK block above the cumulative ACK");
                    assert!((b.start / MSS..b.end.div_ceil(MSS)).all(|j| have[j as usize]));
                }
                n_sack += usize::from(!sacks.is_empty());
                if a.dsack {
                    n_dsack += 1;
                    let d = a.sack[0];
                    assert!((d.start / MSS..d.end.div_ceil(MSS)).all(|j| have[j as usize]));
                }
            }
        }
        assert_eq!(r.rcv_nxt(), n * MSS);
        assert_eq!(delivered, n * MSS);
        assert_eq!(fresh, n * MSS);
        // Whatever is still owed goes out with the timer; then the receiver is idle.
        let t = r.next_timer().unwrap_or(now);
        let rest = acks(&mut r, t);
        assert!(rest.iter().all(|a| a.ack == n * MSS));
        assert_eq!(r.next_timer(), None);
    }
    // The scenarios did exercise the paths checked above.
    assert!(n_dsack > 50 && n_sack > 500 && n_timer_acks > 10, "{n_dsack} {n_sack} {n_timer_acks}");
}

#[test]
fn config_validation_rejects_impossible_values() {
    assert!(ReceiverConfig::default().validate().is_ok());
    assert!(ReceiverConfig { mss: 0, ..ReceiverConfig::default() }.validate().is_err());
    assert!(ReceiverConfig { rcvbuf_bytes: 1000, ..ReceiverConfig::default() }.validate().is_err());
    let bad = ReceiverConfig { delack_min_ns: 300 * MS, ..ReceiverConfig::default() };
    assert!(bad.validate().is_err());
}

// The window's ramp (`window.rs`), with Linux's defaults: 128 KiB buffer at the start,
// scaling ratio 160.

#[test]
fn window_opens_from_64k_and_segments_that_grow_it_are_acked_at_once() {
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    // The clamp is what 128 KiB holds at ratio 160/256; the first window is
    // tcp_select_initial_window's 45 segments (65160 B, Linux's SYN-ACK).
    assert_eq!(r.window_clamp(), 131_072 * 160 / 256);
    assert_eq!(r.advertised_window(), 45 * MSS);
    let mut per_segment = Vec::new();
    let mut windows = Vec::new();
    for i in 0..30 {
        let now = T0 + i * MS;
        r.on_segment(now, &seg_at(now, i), false);
        let a = acks(&mut r, now);
        per_segment.push(a.len());
        windows.extend(a.iter().map(|a| a.rwnd));
    }
    // Each segment adds two MSS until the clamp (6 segments), and `quick |= 1` keeps
    // those ACKs from using up the 16 quick ACKs: 22 ACKs one by one, as the kernel
    // sends them through ccemu (same path), then one per two segments.
    assert_eq!(windows[0], 45 * MSS + 2 * MSS);
    // At most the clamp less the segment being queued (`tcp_space` when it grows).
    assert_eq!(windows[5], r.window_clamp() - MSS);
    assert!(per_segment[..22].iter().all(|&n| n == 1), "{per_segment:?}");
    assert_eq!(per_segment[22..30], [0, 1, 0, 1, 0, 1, 0, 1]);
}

#[test]
fn rcvbuf_grow_follows_the_kernel_trace() {
    // Linux 6.18's tcp_rcvbuf_grow against the kernel's own tcp_rcvbuf_grow trace
    // (tcp_rmem[2] = 67000000, scaling_ratio 219): (copied this RTT, copied the RTT
    // before) -> the buffer and clamp the next trace line shows.
    let cfg = ReceiverConfig { rcvbuf_bytes: 67_000_000, scaling_ratio: 219, ..ReceiverConfig::default() };
    let rows = [
        (86_016, 49_152, 502_741, 430_079),
        (139_264, 86_016, 728_690, 623_371),
        (307_200, 139_264, 2_450_338, 2_096_187),
        (618_496, 307_200, 4_376_503, 3_743_961),
        (1_261_568, 618_496, 9_082_648, 7_769_921),
    ];
    for (copied, before, rcvbuf, clamp) in rows {
        let mut r = TcpReceiver::new(cfg.clone());
        r.rcvq_space = copied;
        r.rcvbuf_grow(before);
        assert_eq!((r.sk_rcvbuf, r.window_clamp()), (rcvbuf, clamp), "copied {copied}");
    }
    // Capped by tcp_rmem[2], and off with tcp_moderate_rcvbuf = 0.
    let mut r = TcpReceiver::new(ReceiverConfig { rcvbuf_bytes: 1_000_000, ..cfg.clone() });
    r.rcvq_space = 1_261_568;
    r.rcvbuf_grow(618_496);
    assert_eq!(r.sk_rcvbuf, 1_000_000);
    let mut r = TcpReceiver::new(ReceiverConfig { moderate_rcvbuf: false, ..cfg });
    r.rcvq_space = 1_261_568;
    r.rcvbuf_grow(618_496);
    assert_eq!(r.sk_rcvbuf, 131_072);
}

#[test]
fn autotuning_lets_a_doubling_sender_through_and_stops_at_tcp_rmem_max() {
    // A sender in slow start: round k brings 10 * 2^k segments, back to back 0.1 ms
    // apart, one round per 50 ms (the receiver measures 50 ms from the timestamps).
    let cfg = ReceiverConfig { rcvbuf_bytes: 4 << 20, ..ReceiverConfig::default() };
    let max_window = (4u64 << 20) * 160 / 256;
    let mut r = TcpReceiver::new(cfg);
    let (mut seq, mut limited) = (0u64, 0);
    for round in 0..10u64 {
        let start = T0 + round * 50 * MS;
        for j in 0..(10u64 << round).min(3000) {
            let now = start + j * 100 * NS_PER_US_TEST;
            let edge = r.rcv_nxt() + r.advertised_window();
            if (seq + 1) * MSS > edge {
                limited += 1;
                break;
            }
            r.on_segment(now, &seg_at(now, seq), false);
            acks(&mut r, now);
            seq += 1;
        }
    }
    // The window kept ahead of the doubling until the buffer maximum, then held there.
    assert!(limited <= 2, "receive window limited the sender in {limited} rounds");
    assert_eq!(r.window_clamp(), max_window);
    assert!(r.advertised_window() <= max_window);
}

/// Segment `i` of a stream of `len`-byte segments (sent 25 ms before `now`, echoing
/// an ACK sent 50 ms ago), with or without PSH.
fn small_at(now: Nanos, i: u64, len: u32, psh: bool) -> Segment {
    Segment { seq: i * len as u64, len, psh, ..seg_at(now, 0) }
}

#[test]
fn rcv_mss_starts_at_536_and_is_learnt_from_arrivals() {
    // tcp_initialize_rcv_mss: min(advmss, rcv_wnd / 2, 536).
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    assert_eq!(r.rcv_mss(), 536);
    r.on_segment(T0, &seg_at(T0, 0), false);
    assert_eq!(r.rcv_mss(), 1448);
    // 1448 B in the configured skb keeps the configured ratio: bulk flows see no change.
    assert_eq!(r.scaling_ratio(), 160);

    // Pushed messages shorter than 536 B cannot be full-sized segments: rcv_mss stays.
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    for i in 0..5 {
        r.on_segment(T0 + i * MS, &small_at(T0 + i * MS, i, 200, true), false);
    }
    assert_eq!(r.rcv_mss(), 536);
    // Without PSH, two in a row of the same length make it the new rcv_mss.
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    r.on_segment(T0, &small_at(T0, 0, 200, false), false);
    assert_eq!(r.rcv_mss(), 536);
    r.on_segment(T0 + MS, &small_at(T0 + MS, 1, 200, false), false);
    assert_eq!(r.rcv_mss(), 200);
    // A different length in between starts the count again.
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    for (i, len) in [300u32, 400, 300].into_iter().enumerate() {
        let s = Segment { seq: 1000 * i as u64, len, ..seg_at(T0, 0) };
        r.on_segment(T0 + i as u64 * MS, &s, false);
    }
    assert_eq!(r.rcv_mss(), 536);
}

#[test]
fn half_mss_segments_remeasure_the_ratio_and_the_window_does_not_grow() {
    // A 724-byte segment in a 2316-byte skb: ratio 80/256, so the 128 KiB buffer's
    // clamp falls below the first window, and the window holds (the kernel through
    // ccemu advertised 63 KB for the whole of a 724-byte CBR flow).
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    let first = r.advertised_window();
    let mut windows = Vec::new();
    for i in 0..100 {
        let now = T0 + i * 5 * MS;
        r.on_segment(now, &small_at(now, i, 724, true), false);
        windows.extend(acks(&mut r, now).iter().map(|a| a.rwnd + a.ack - i * 724));
    }
    assert_eq!(r.rcv_mss(), 724);
    assert_eq!(r.scaling_ratio(), 724 * 256 / 2316);
    assert_eq!(r.window_clamp(), 131_072 * 80 / 256);
    // The right edge never moved beyond the first window's.
    assert!(windows.iter().all(|&edge| edge <= first + 724), "{windows:?}");
    // Every pushed message is ACKed on its own, as the kernel does.
    assert_eq!(r.acks_sent(), 100);
}

#[test]
fn a_stream_of_724_byte_segments_is_acked_every_second_segment_once_rcv_mss_is_learnt() {
    // Without PSH (a sender that is not at the end of a write), a 724-byte segment is
    // a full-sized one once rcv_mss = 724: __tcp_ack_snd_check ACKs when more than
    // 724 bytes are unacknowledged, i.e. every second segment (with the MSS from the
    // config it was "pushed", and the drained read ACKed each one).
    let mut r = grown(ReceiverConfig::default());
    let mut per_segment = Vec::new();
    for i in 0..40 {
        let now = T0 + i * MS;
        r.on_segment(now, &small_at(now, i, 724, false), false);
        per_segment.push(acks(&mut r, now).len());
    }
    assert_eq!(r.rcv_mss(), 724);
    assert_eq!(r.quickacks_left(), 0);
    assert_eq!(per_segment[20..40], [0, 1].repeat(10)[..], "{per_segment:?}");
    // The same stream with PSH on each segment (one message per write, TCP_NODELAY):
    // every segment is ACKed when the reader drains it (tcp_cleanup_rbuf).
    let mut r = grown(ReceiverConfig::default());
    for i in 0..40 {
        let now = T0 + i * MS;
        r.on_segment(now, &small_at(now, i, 724, true), false);
        assert_eq!(acks(&mut r, now).len(), 1, "segment {i}");
    }
}

#[test]
fn small_segments_grow_the_window_by_two_advmss() {
    // tcp_grow_window as the kernel did it through ccemu for 200-byte messages:
    // about 3 KB per segment (2 * advmss = 2896), not 2 * rcv_mss = 1072.
    let mut r = TcpReceiver::new(ReceiverConfig::default());
    let mut windows = Vec::new();
    for i in 0..4 {
        let now = T0 + i * 2 * MS;
        r.on_segment(now, &small_at(now, i, 200, true), false);
        windows.extend(acks(&mut r, now).iter().map(|a| a.rwnd));
    }
    assert_eq!(r.rcv_mss(), 536);
    let steps: Vec<u64> = windows.windows(2).map(|w| w[1] - w[0]).collect();
    assert_eq!(steps, vec![2 * MSS; 3]);
}

#[test]
fn autotuning_measures_flight_by_flight_from_establishment() {
    // Ten CUBIC flows through ccemu (Linux 6.18, tcp_rcv_space_adjust and
    // tcp_rcvbuf_grow traced): the first measurement opens at ESTABLISHED, so the
    // first adjust comes with the read of the first segment that carries an RTT
    // sample (the second flight's first: the initial window echoes no ACK yet), and
    // every later one a flight apart. All ten flows' buffers grew at segments 31, 71
    // and 151 (1-based) to 244,316, 556,032 and 1,112,064 bytes. Timestamp samples
    // are whole ms, so the first ones can read above the flights' spacing: here
    // flights of 10, 20, 40, 80, 160 segments 0.12 ms apart arrive 50.6 ms apart (the
    // RTT), and the first five samples read 51 ms. Measured from the first read, the
    // first adjust waited for the fifth segment of the second flight, and the buffer
    // then grew to 278,016 bytes at segment 31.
    let cfg = ReceiverConfig { rcvbuf_bytes: 6 << 20, ..ReceiverConfig::default() };
    let mut r = TcpReceiver::new(cfg);
    let mut rcvbuf = r.sk_rcvbuf;
    let (mut seq, mut grew) = (0u64, Vec::new());
    for flight in 0..5u64 {
        let start = T0 + flight * 50_600 * NS_PER_US_TEST;
        for j in 0..(10u64 << flight) {
            let now = start + j * 120 * NS_PER_US_TEST;
            let tsecr = if flight == 0 { 0 } else { now - 50_600 * NS_PER_US_TEST };
            r.on_segment(now, &Segment { seq: seq * MSS, len: MSS as u32, tsval: now - 25 * MS, tsecr, ..Segment::default() }, false);
            acks(&mut r, now);
            seq += 1;
            if r.sk_rcvbuf != rcvbuf {
                rcvbuf = r.sk_rcvbuf;
                grew.push((seq, rcvbuf));
            }
        }
    }
    assert_eq!(grew, vec![(31, 244_316), (71, 556_032), (151, 1_112_064)], "(segment, sk_rcvbuf) at each growth");
}

#[test]
fn delayed_ack_timer_fires_on_the_kernel_tick() {
    // HZ = 250: ticks every 4 ms, falling 1 ms past each multiple of 4 ms here.
    let tick = 4 * MS;
    let phase = MS;
    for offset_us in [0u64, 1, 1_000, 2_500, 3_999] {
        let (mut r, last) = warmed(ReceiverConfig::default());
        r.set_jiffy_clock(250, phase);
        // a lone segment after a pause longer than ato: ato stays 40 ms (10 ticks)
        let now = (last + 85 * MS) / tick * tick + phase + offset_us * NS_PER_US_TEST;
        r.on_segment(now, &seg_at(now, 16), false);
        assert!(acks(&mut r, now).is_empty());
        let fire = r.next_timer().expect("delayed-ACK timer armed");
        // `jiffies + ato`: on a tick, from just over 36 ms to 40 ms after arming
        assert_eq!((fire - phase) % tick, 0, "armed {offset_us} us into a tick: fires at {fire}, not on a tick");
        assert_eq!(fire, now - offset_us * NS_PER_US_TEST + 40 * MS, "armed {offset_us} us into a tick");
        assert!(r.poll_ack(fire - 1).is_none());
        assert_eq!(r.poll_ack(fire).expect("delayed ACK").ack, 17 * MSS);
    }
}

#[test]
fn delayed_ack_timer_without_a_tick_fires_exactly_ato_later() {
    let (mut r, last) = warmed(ReceiverConfig { jiffy_ns: 0, jiffy_phase_ns: 1_234_567, ..ReceiverConfig::default() });
    let now = last + 85 * MS + 777;
    r.on_segment(now, &seg_at(now, 16), false);
    assert_eq!(r.next_timer(), Some(now + 40 * MS));
}

#[test]
fn on_the_kernel_tick_ato_is_kept_in_whole_jiffies_as_linux_does() {
    // After a missed delayed ACK (ato 40 -> 80 ms) the next segment, 41 ms after the
    // last, keeps it at 20 ticks of 4 ms (`(ato >> 1) + m`, m = 10 ticks); closely
    // spaced segments then halve it back toward TCP_ATO_MIN in integer jiffies
    // (`(ato >> 1) + TCP_ATO_MIN / 2`): 15, 12, 11, 10 ticks. In nanoseconds it would
    // be 81, 60.5, 50.25, 45.1 ms and never reach 40.
    let (mut r, last) = warmed(ReceiverConfig::default());
    r.set_jiffy_clock(250, 0);
    let now = last + 85 * MS;
    r.on_segment(now, &seg_at(now, 16), false);
    let fire = r.next_timer().unwrap();
    r.poll_ack(fire).expect("delayed ACK");
    assert_eq!(r.ato(), 80 * MS);
    let mut seen = Vec::new();
    for i in 17..22 {
        let t = fire + (i - 16) * MS;
        r.on_segment(t, &seg_at(t, i), false);
        acks(&mut r, t);
        seen.push(r.ato() / MS);
    }
    assert_eq!(seen, vec![80, 60, 48, 44, 40]);
}
