use super::*;
use crate::rng::Rng;
use crate::tcp::cc::SockState;
use rand::SeedableRng;

fn sk() -> SockState {
    let mut s = SockState::new(1448, 10);
    s.pacing_rate = 0;
    s
}

#[test]
fn gains_are_linux_fixed_point() {
    assert_eq!(HIGH_GAIN, 739); // 2/ln2 * 256 = 738.6, +1
    assert_eq!(DRAIN_GAIN, 88); // ln2/2 * 256 = 88.7
    assert_eq!(PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(CWND_GAIN, 512);
}

#[test]
fn pacing_rate_is_gain_times_bw_one_percent_below() {
    // 100 Mbit/s of 1448-byte payloads = 8633 segments/s = 0.008633 /µs.
    let bw = 8633u64 * BW_UNIT / 1_000_000;
    let r = Bbr::rate_bytes_per_sec(1448, bw, BBR_UNIT);
    let want = 8633.0 * 1448.0 * 0.99;
    assert!((r as f64 - want).abs() / want < 1e-3, "{r} vs {want}");
    let r2 = Bbr::rate_bytes_per_sec(1448, bw, HIGH_GAIN);
    assert!((r2 as f64 / r as f64 - 739.0 / 256.0).abs() < 1e-3);
}

#[test]
fn bdp_rounds_up_and_is_init_cwnd_before_an_rtt() {
    let mut b = Bbr::new(true);
    assert_eq!(b.bdp(1 << 20, BBR_UNIT), 10);
    b.min_rtt_us = 40_000;
    // 1/16 packet per µs * 40 ms = 2500 packets; times gain 2 = 5000.
    assert_eq!(b.bdp(1 << 20, BBR_UNIT), 2500);
    assert_eq!(b.bdp(1 << 20, CWND_GAIN), 5000);
    assert_eq!(b.bdp((1 << 20) + 1, BBR_UNIT), 2501);
}

#[test]
fn full_pipe_after_three_rounds_without_25_percent_growth() {
    let mut b = Bbr::new(true);
    let rs = RateSample::default();
    b.round_start = true;
    for (bw, reached) in [(100, false), (130, false), (140, false), (150, false), (160, true)] {
        b.bw.reset(0, bw);
        b.check_full_bw_reached(&rs);
        assert_eq!(b.full_bw_reached, reached, "bw {bw}");
    }
    // 100 -> 130 is growth (>= 125), then 140, 150, 160 < 162.5: three rounds.
    assert_eq!(b.full_bw, 130);
}

#[test]
fn probe_bw_starts_in_a_random_phase_other_than_drain() {
    let mut seen = [false; CYCLE_LEN as usize];
    let mut s = sk();
    for seed in 0..200 {
        let mut rng = Rng::seed_from_u64(seed);
        let mut cx = CcContext { now: 0, sk: &mut s, rng: &mut rng };
        let mut b = Bbr::new(true);
        b.reset_probe_bw_mode(&mut cx);
        seen[b.cycle_idx as usize] = true;
    }
    assert!(!seen[1], "never starts in the 3/4 phase");
    assert!(seen.iter().enumerate().all(|(i, &s)| s || i == 1), "{seen:?}");
}

#[test]
fn probe_rtt_caps_cwnd_at_four_and_restores_after_200ms_and_a_round() {
    let mut s = sk();
    s.cwnd = 100;
    s.in_flight = 100;
    let mut rng = Rng::seed_from_u64(1);
    let mut b = Bbr::new(true);
    b.min_rtt_us = 40_000;
    b.full_bw_reached = true;
    b.set_mode(0, Mode::ProbeBw);
    let t0 = MIN_RTT_WIN + 1;
    let rs = RateSample { rtt_us: 50_000, delivered: 1, interval_us: 1000, acked_sacked: 1, ..Default::default() };
    let mut cx = CcContext { now: t0, sk: &mut s, rng: &mut rng };
    b.cong_control(&mut cx, &rs);
    assert_eq!(b.mode, Mode::ProbeRtt);
    assert_eq!(b.prior_cwnd, 100);
    assert_eq!(cx.sk.cwnd, CWND_MIN_TARGET);
    assert_eq!(b.min_rtt_us, 50_000, "expired filter takes the fresh sample");
    // In-flight drains to 4: the 200 ms start.
    cx.sk.in_flight = 4;
    cx.now = t0 + 1_000_000;
    b.cong_control(&mut cx, &rs);
    assert_eq!(b.probe_rtt_done_stamp, t0 + 1_000_000 + PROBE_RTT_MODE);
    // A round passes, then the 200 ms: back to PROBE_BW with the old cwnd.
    cx.sk.delivered = 10;
    let rs2 = RateSample { prior_delivered: 10, ..rs };
    cx.now = t0 + 2_000_000;
    b.cong_control(&mut cx, &rs2);
    assert_eq!(b.mode, Mode::ProbeRtt, "round done, 200 ms not yet");
    cx.now = t0 + 202_000_000;
    b.cong_control(&mut cx, &rs2);
    assert_eq!(b.mode, Mode::ProbeBw);
    assert!(cx.sk.cwnd >= 100);
}

/// A policer: two sampling intervals of 4+ rounds, each ending at a loss with >= 20%
/// of the delivered packets lost, at rates within 1/8 of each other -> BBR adopts
/// their average as its bandwidth (`lt_use_bw`) and paces at gain 1.
#[test]
fn lt_bw_detects_a_policer_after_two_consistent_lossy_intervals() {
    for enabled in [true, false] {
        let mut s = sk();
        let mut rng = Rng::seed_from_u64(1);
        let mut b = Bbr::new(enabled);
        b.set_mode(0, Mode::ProbeBw);
        let mut now = 0;
        let lossy = RateSample { losses: 1, delivered: 1, interval_us: 1000, ..Default::default() };
        // The first loss starts sampling.
        let mut cx = CcContext { now, sk: &mut s, rng: &mut rng };
        b.lt_bw_sampling(&mut cx, &lossy);
        for interval in 0..2 {
            for _ in 0..4 {
                b.round_start = true;
                now += 10_000_000;
                cx.now = now;
                // 100 delivered and 30 lost per 10 ms round: 10 packets/ms.
                cx.sk.delivered += 100;
                cx.sk.lost += 30;
                let rs = RateSample { losses: 0, ..lossy };
                b.lt_bw_sampling(&mut cx, &rs);
            }
            b.round_start = false;
            b.lt_bw_sampling(&mut cx, &lossy);
            if interval == 0 && enabled {
                assert!(!b.lt_use_bw && b.lt_bw > 0, "first interval only records lt_bw");
            }
        }
        if enabled {
            assert!(b.lt_use_bw);
            // 400 packets in 40 ms = 0.01 packets/µs.
            let want = BW_UNIT / 100;
            assert!((b.lt_bw as i64 - want as i64).abs() * 100 < want as i64, "lt_bw {} vs {want}", b.lt_bw);
            assert_eq!(b.bw(), b.lt_bw);
        } else {
            assert!(!b.lt_use_bw && b.lt_bw == 0, "lt_bw = false disables the detector");
        }
    }
}
