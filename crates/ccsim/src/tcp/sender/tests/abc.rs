//! RFC 3465 byte counting versus packet and per-ACK counting (`TcpConfig::abc`):
//! the growth credit of single ACKs, the Linux 2.6 byte counter's rules, and the
//! end-to-end effect Brosh et al. measured (Sec. 6.3): a sender of sub-MSS segments
//! grows its window more slowly with byte counting.

use super::pipe::{Pipe, MS};
use super::reno;
use crate::tcp::cc::{CaState, INFINITE_SSTHRESH};
use crate::tcp::config::{AbcMode, TcpConfig};
use crate::tcp::sender::TcpSender;

const MSS: u64 = 1448;
/// Brosh et al.'s VoIP packet: 174 bytes.
const VOIP: u64 = 174;

fn sender(abc: AbcMode, cwnd: u32, ssthresh: u32) -> TcpSender {
    let mut s = TcpSender::from_config(&TcpConfig { abc, ..reno() }, 0, "t").unwrap();
    s.sk.cwnd = cwnd;
    s.sk.ssthresh = ssthresh;
    s.sk.is_cwnd_limited = true;
    s
}

#[test]
fn off_counts_segments_and_per_ack_counts_acks() {
    let mut s = sender(AbcMode::Off, 4, INFINITE_SSTHRESH);
    s.abc_count_acked(2 * VOIP);
    assert_eq!(s.abc_credit(2), Some(2), "today's Linux: a delayed ACK of two segments is worth two");
    let mut s = sender(AbcMode::PerAck, 4, INFINITE_SSTHRESH);
    assert_eq!(s.abc_credit(2), Some(1), "2.6 tcp_abc = 0: one per ACK");
    assert_eq!(s.bytes_acked, 0, "no byte counter outside l1/l2");
}

#[test]
fn slow_start_byte_counting_waits_for_a_full_smss_and_drops_the_rest() {
    // Delayed ACKs of two 174-byte segments: 348 bytes each.
    for abc in [AbcMode::L1, AbcMode::L2] {
        let mut s = sender(abc, 4, INFINITE_SSTHRESH);
        let mut credits = Vec::new();
        for _ in 0..9 {
            s.abc_count_acked(2 * VOIP);
            credits.push(s.abc_credit(2));
        }
        // 348 x 5 = 1740 >= 1448 at the 5th ACK; the 292-byte excess is dropped
        // (2.6 `tcp_slow_start` sets bytes_acked = 0), so the next +1 is 5 ACKs later.
        let want = [None, None, None, None, Some(1), None, None, None, None];
        assert_eq!(credits, want, "{abc:?}");
    }
    // Two full segments in one ACK: L = 2 SMSS gives +2, L = 1 SMSS +1.
    let mut s = sender(AbcMode::L2, 4, INFINITE_SSTHRESH);
    s.abc_count_acked(2 * MSS);
    assert_eq!(s.abc_credit(2), Some(2));
    let mut s = sender(AbcMode::L1, 4, INFINITE_SSTHRESH);
    s.abc_count_acked(2 * MSS);
    assert_eq!(s.abc_credit(2), Some(1));
    assert_eq!(s.bytes_acked, 0);
}

#[test]
fn congestion_avoidance_byte_counting_adds_one_per_window_of_bytes() {
    // cwnd 10 above ssthresh: +1 after 10 x 1448 bytes, whatever the segment size.
    let mut s = sender(AbcMode::L2, 10, 5);
    let mut acks = 0;
    while s.sk.cwnd == 10 {
        s.abc_count_acked(VOIP);
        if let Some(n) = s.abc_credit(1) {
            s.sk.reno_cong_avoid(n);
        }
        acks += 1;
        assert!(acks < 1000);
    }
    // 14480 / 174 = 83.2 -> the 84th single-segment ACK; packet counting needs 10.
    assert_eq!(acks, 84);
    let mut p = sender(AbcMode::Off, 10, 5);
    let mut acks = 0;
    while p.sk.cwnd == 10 {
        let n = p.abc_credit(1).unwrap();
        p.sk.reno_cong_avoid(n);
        acks += 1;
    }
    assert_eq!(acks, 10);
}

#[test]
fn byte_counter_follows_the_ca_state_and_waits_while_not_cwnd_limited() {
    let mut s = sender(AbcMode::L1, 10, 5);
    s.sk.ca_state = CaState::Recovery;
    s.abc_count_acked(5 * MSS);
    assert_eq!(s.bytes_acked, 0, "nothing counted in Recovery");
    s.sk.ca_state = CaState::Loss;
    s.abc_count_acked(5 * MSS);
    assert_eq!(s.bytes_acked, MSS, "one SMSS per ACK in Loss");
    s.sk.ca_state = CaState::Open;
    s.sk.is_cwnd_limited = false;
    s.sk.max_packets_out = 10;
    s.abc_count_acked(3 * MSS);
    assert_eq!(s.abc_credit(3), None, "not cwnd-limited: no growth");
    assert_eq!(s.bytes_acked, 4 * MSS, "the bytes wait in the counter");
    // A credit is at most one window per ACK.
    s.sk.is_cwnd_limited = true;
    s.bytes_acked = 25 * MSS;
    assert_eq!(s.abc_credit(1), Some(10));
    assert_eq!(s.bytes_acked, 15 * MSS);
}

#[test]
fn entering_recovery_or_loss_restarts_the_byte_counter() {
    let mut s = sender(AbcMode::L2, 10, 5);
    s.bytes_acked = 3 * MSS;
    s.enter_recovery(false);
    assert_eq!(s.bytes_acked, 0);
    s.bytes_acked = 3 * MSS;
    s.enter_loss();
    assert_eq!(s.bytes_acked, 0);
}

/// A CBR writer of 174-byte messages every `gap` ms, 100 ms RTT, the window starting
/// at 2 segments and cwnd-limited from the first RTT on: cwnd after `t_end`.
fn voip_cwnd(abc: AbcMode, gap_ms: u64, t_end_ms: u64) -> u32 {
    let cfg = TcpConfig { abc, init_cwnd: 2, nagle: false, ..reno() };
    let mut p = Pipe::new(cfg, 50 * MS, None);
    let mut t = 0;
    while t < t_end_ms {
        p.write_at(t * MS, VOIP);
        t += gap_ms;
    }
    p.run_until(t_end_ms * MS);
    p.s.state().cwnd
}

#[test]
fn small_segments_grow_the_window_slower_with_byte_counting() {
    // 174 B every 2 ms = 7.25 MSS of data per 100 ms RTT: a window of 2 is far too
    // small, so every ACK may grow cwnd. The test receiver ACKs every segment.
    let off = voip_cwnd(AbcMode::Off, 2, 1000);
    let per_ack = voip_cwnd(AbcMode::PerAck, 2, 1000);
    let l2 = voip_cwnd(AbcMode::L2, 2, 1000);
    let l1 = voip_cwnd(AbcMode::L1, 2, 1000);
    // One ACK per segment: packet and per-ACK counting are the same here.
    assert_eq!(off, per_ack);
    // Packet counting grows by one per (small) segment ACKed; byte counting by one per
    // 1448 ACKed bytes, at most ~500 x 174 B / 1448 B = 60 over the run.
    assert!(off > l2 + 5, "off {off} vs l2 {l2}");
    assert!(l2 <= 2 + 60, "l2 {l2}");
    assert!(l2 > 2, "byte counting still grows: {l2}");
    // Without delayed ACKs no ACK covers 2 SMSS, so L = 1 and L = 2 agree.
    assert_eq!(l1, l2);
}
