use super::*;
use crate::rng::Rng;
use crate::tcp::cc::SockState;
use rand::SeedableRng;

fn v3() -> Bbr3 {
    Bbr3::new(BBR_UNIT * 2 / 100, BBR_UNIT * 70 / 100, true)
}

#[test]
fn gains_are_the_published_v3_values_in_fixed_point() {
    assert_eq!(STARTUP_PACING_GAIN, 710); // 2.77 * 256 = 709.1, +1
    assert_eq!(DRAIN_GAIN, 88); // 0.35
    assert_eq!(DOWN_GAIN, 230); // 0.9
    assert_eq!((UP_GAIN, UP_CWND_GAIN), (320, 576)); // 1.25, 2.25
    let b = v3();
    assert_eq!((b.loss_thresh, b.beta), (5, 179)); // 2 %, 0.7
}

#[test]
fn inflight_too_high_above_two_percent_of_tx_in_flight() {
    let b = v3();
    let rs = RateSample { delivered: 100, ..Default::default() };
    // 5/256 = 1.95 %: 2 lost of 100 in flight is above, 1 of 100 is not
    assert!(b.is_inflight_too_high(&rs, 2, 100));
    assert!(!b.is_inflight_too_high(&rs, 1, 100));
    assert!(!b.is_inflight_too_high(&rs, 0, 100));
}

#[test]
fn ecn_counts_only_on_short_paths_and_above_half_marked() {
    let mut b = v3();
    let rs = RateSample { delivered: 10, delivered_ce: 6, ..Default::default() };
    b.min_rtt_us = 40_000;
    assert!(!b.is_inflight_too_high(&rs, 0, 10), "v3 ignores ECN above 5 ms min_rtt");
    b.min_rtt_us = 1_000;
    assert!(b.is_inflight_too_high(&rs, 0, 10));
    let half = RateSample { delivered: 10, delivered_ce: 5, ..Default::default() };
    assert!(!b.is_inflight_too_high(&half, 0, 10));
}

#[test]
fn headroom_leaves_fifteen_percent_of_inflight_hi() {
    let mut b = v3();
    assert_eq!(b.inflight_with_headroom(), INF);
    b.inflight_hi = 100;
    assert_eq!(b.inflight_with_headroom(), 86); // 100 - floor(100 * 38 / 256) = 100 - 14
    b.inflight_hi = 4;
    assert_eq!(b.inflight_with_headroom(), MIN_PIPE_CWND);
}

#[test]
fn a_round_with_loss_cuts_the_lower_bounds_to_beta_or_the_latest_sample() {
    let mut s = SockState::new(1448, 100);
    let mut rng = Rng::seed_from_u64(1);
    let cx = CcContext { now: 0, sk: &mut s, rng: &mut rng };
    let mut b = v3();
    b.state = State::Cruise;
    b.bw_hi = [1000, 0];
    b.loss_in_round = true;
    b.bw_latest = 500;
    b.inflight_latest = 80;
    b.adapt_lower_bounds(&cx);
    assert_eq!(b.bw_lo, 699); // max(500, 1000 * 179 / 256)
    assert_eq!(b.inflight_lo, 80); // max(80, 100 * 0.7 = 69)
                                   // while probing (UP) the bounds are left alone
    let mut p = v3();
    p.state = State::Up;
    p.loss_in_round = true;
    p.adapt_lower_bounds(&cx);
    assert_eq!((p.bw_lo, p.inflight_lo), (u64::MAX, INF));
}

#[test]
fn lost_and_tx_in_flight_are_rebuilt_from_the_send_time_snapshot() {
    let mut s = SockState::new(1448, 10);
    let mut rng = Rng::seed_from_u64(1);
    let mut b = v3();
    // ACK 1: delivered 100, lost 3 (the sampled packet will be sent after this ACK)
    s.delivered = 100;
    s.lost = 3;
    let rs0 = RateSample { delivered: -1, ..Default::default() };
    b.sample_losses(&CcContext { now: 0, sk: &mut s, rng: &mut rng }, &rs0);
    s.delivered = 150;
    s.lost = 5;
    b.sample_losses(&CcContext { now: 0, sk: &mut s, rng: &mut rng }, &rs0);
    // a round later: delivered 200, lost 9; the sample was sent at delivered = 100
    s.delivered = 200;
    s.lost = 9;
    let rs = RateSample { delivered: 100, prior_delivered: 100, prior_mstamp: Some(1), ..Default::default() };
    let (lost, tx) = b.sample_losses(&CcContext { now: 0, sk: &mut s, rng: &mut rng }, &rs);
    assert_eq!((lost, tx), (6, 106));
}

#[test]
fn inflight_hi_grows_one_two_four_per_round_while_probing_up() {
    let mut s = SockState::new(1448, 100);
    s.is_cwnd_limited = true;
    let mut rng = Rng::seed_from_u64(1);
    let cx = CcContext { now: 0, sk: &mut s, rng: &mut rng };
    let mut b = v3();
    b.inflight_hi = 100;
    b.state = State::Up;
    b.raise_inflight_hi_slope(&cx); // round 1: +1 per 100 ACKed
    assert_eq!(b.probe_up_cnt, 100);
    b.raise_inflight_hi_slope(&cx); // round 2: +2
    assert_eq!(b.probe_up_cnt, 50);
    b.raise_inflight_hi_slope(&cx);
    assert_eq!(b.probe_up_cnt, 25);
    let rs = RateSample { acked_sacked: 50, ..Default::default() };
    b.probe_inflight_hi_upward(&cx, &rs);
    assert_eq!(b.inflight_hi, 102);
}

#[test]
fn probe_bw_waits_two_to_three_seconds_between_probes() {
    let mut s = SockState::new(1448, 10);
    for seed in 0..50 {
        let mut rng = Rng::seed_from_u64(seed);
        let mut cx = CcContext { now: 5, sk: &mut s, rng: &mut rng };
        let mut b = v3();
        b.start_down(&mut cx);
        assert!(b.bw_probe_wait >= 2_000_000_000 && b.bw_probe_wait < 3_000_000_000);
        assert!(b.rounds_since_probe <= 1);
        assert_eq!(b.state, State::Down);
    }
}
