//! Delay-based and model-based congestion control through the whole engine: Vegas
//! (Wei thesis Theorem 2.1.5), FAST (Theorems 2.2.3.1-2), BBR, DCTCP, Compound.

mod common;
use ccsim::config::*;
use ccsim::qdisc::DropRule;
use ccsim::tcp::TcpConfig;
use common::*;

fn tcp_flow(name: &str, src: &str, dst: &str, cfg: TcpConfig) -> FlowConfig {
    FlowConfig {
        name: name.into(),
        src: src.into(),
        dst: dst.into(),
        transport: TransportConfig::Tcp(cfg),
        app: AppConfig::Bulk { bytes: None },
        start_ns: 0,
        stop_ns: None,
        split: 1,
        connections: 1,
        scheduler: Default::default(),
    }
}

fn cc(name: &str, params: &[(&str, serde_json::Value)]) -> TcpConfig {
    let mut c = TcpConfig::default();
    c.cc.name = name.into();
    for (k, v) in params {
        c.cc.params.insert(k.to_string(), v.clone());
    }
    c
}

/// Wire bytes of a full segment: 1448 payload + 52 header.
const PKT: f64 = 1500.0;

/// `(c, d, cd)`: capacity in packets/s, propagation RTT in s as the thesis defines it
/// (it includes the 1/c transmission time of the data packet, §2.1 assumption 2; we also
/// add the ACK's transmission time on the reverse link and the four 10 Gbit/s access
/// hops, all small), and their product in packets.
fn path(rate_bps: u64, one_way_ns: u64) -> (f64, f64, f64) {
    let c = rate_bps as f64 / (PKT * 8.0);
    let d = 2.0 * one_way_ns as f64 / 1e9
        + PKT * 8.0 / rate_bps as f64
        + 52.0 * 8.0 / rate_bps as f64
        + 2.0 * (PKT + 52.0) * 8.0 / 10e9;
    (c, d, c * d)
}

/// Samples of flow `f`'s cwnd after `from_ns`.
fn cwnd_after(sim: &ccsim::Simulation, f: u32, from_ns: u64) -> Vec<f64> {
    let s = &sim.traces.state;
    (0..s.t.len()).filter(|&i| s.flow[i] == f && s.t[i] >= from_ns).map(|i| s.cwnd_pkts[i]).collect()
}

/// Backlog samples (packets, waiting and in service) of the bottleneck after `from_ns`.
fn queue_after(sim: &ccsim::Simulation, from_ns: u64) -> Vec<u32> {
    let id = sim.link_names().iter().position(|n| n == "bottleneck_down").unwrap() as u32;
    let q = &sim.traces.queue;
    (0..q.t.len()).filter(|&i| q.link[i] == id && q.t[i] >= from_ns).map(|i| q.backlog_pkts[i]).collect()
}

fn min_max<T: PartialOrd + Copy>(v: &[T]) -> (T, T) {
    let mut lo = v[0];
    let mut hi = v[0];
    for &x in v {
        if x < lo {
            lo = x;
        }
        if x > hi {
            hi = x;
        }
    }
    (lo, hi)
}

// ------------------------------------------------------------------------------ Vegas

/// Wei thesis Theorem 2.1.5: one Vegas flow with `alpha*d > 1` ends with
/// `cd + alpha*d - 1 < w < cd + alpha*d + 1` and backlog `alpha*d - 1 < b < alpha*d + 1`.
///
/// Mapping. The thesis's response compares `w/d - w/D` (packets/s) with one threshold
/// `alpha` (its footnote: alpha = beta), so `alpha*d` is the number of packets the flow
/// keeps queued. Linux compares the integer `diff = cwnd*(rtt - baseRTT)/baseRTT` with
/// `alpha` and `beta` (packets). We set Linux `alpha = beta = A` and read the theorem
/// with `alpha*d = A` and `d = baseRTT`, the propagation RTT including the packet's own
/// transmission time (the thesis pins baseRTT to it, §2.3; here baseRTT is measured, and
/// the first packet sees an empty queue). The backlog `b` is the packets waiting ahead
/// of an arrival, which is what the queue trace samples (the packet in service is part
/// of `cd`). The thesis assumes one ACK per packet: `delayed_ack = false`.
///
/// Where modern Linux differs (measured here, and why): the theorem's controller decides
/// on the RTT of the first packet sent after the previous decision. Linux decides on
/// the *minimum* RTT of the round, whose packets were mostly sent under the window
/// before the previous decision, so the loop has one extra round of delay and settles
/// into a 4-round cycle over three windows `w*, w*+1, w*+2, w*+1` instead of two
/// (10 Mbit/s, 40 ms RTT: cd = 34.4, A = 3, cwnd 37..39, mean 38.0; backlog 2..5,
/// mean 3.7). When the fixed point is hit exactly (`diff == A`) the window stops
/// (12 Mbit/s, 80 ms RTT, A = 4: cwnd 85, backlog 4). The 2.6.16 Vegas the thesis ran compared against the previous round's cwnd
/// (`beg_snd_cwnd`), which removed that delay; `legacy_2_6 = true` runs that decision
/// (next test). So we check the theorem's bounds on the
/// time averages, and on the samples with the one packet the extra delay adds on top.
/// Also, Linux's truncating `diff` equals `b*D/d = b + b^2/(cd)`, not `b`, which moves
/// the fixed point down by less than a packet while `cd > A^2`.
#[test]
fn vegas_single_flow_settles_where_wei_theorem_2_1_5_says() {
    for (rate, owd, a) in [(10_000_000u64, 20 * MS, 3i64), (12_000_000, 40 * MS, 4), (4_000_000, 10 * MS, 2)] {
        let (cd, a, w, q) = vegas_equilibrium(rate, owd, a, false);
        let ((wlo, whi, wm), (qlo, qhi, qm)) = (w, q);
        assert!(wm > cd + a - 1.0 && wm < cd + a + 1.0, "mean cwnd {wm}, cd + A = {:.2}", cd + a);
        assert!(qm > a - 1.0 && qm < a + 1.0, "mean backlog {qm}, A = {a}");
        assert!(
            wlo > cd + a - 1.0 && whi < cd + a + 2.0 && whi - wlo <= 2.0,
            "cwnd {wlo}..{whi}, cd + A = {:.2}",
            cd + a
        );
        assert!(qlo as f64 >= a - 2.0 && (qhi as f64) <= a + 2.0, "backlog {qlo}..{qhi}, A = {a}");
    }
}

/// With the 2.6.16-era decision (`legacy_2_6`, the Vegas the thesis measured) the
/// theorem holds sample by sample: every cwnd sample in (cd + A - 1, cd + A + 1).
/// Its `diff = w - w*baseRTT/rtt` is Brakmo's estimate of the queued segments, so the
/// backlog settles at A (within the half-segment resolution).
#[test]
fn vegas_2_6_16_meets_theorem_2_1_5_sample_by_sample() {
    for (rate, owd, a) in [(10_000_000u64, 20 * MS, 3i64), (12_000_000, 40 * MS, 4), (4_000_000, 10 * MS, 2)] {
        let (cd, a, w, q) = vegas_equilibrium(rate, owd, a, true);
        let ((wlo, whi, _), (qlo, qhi, qm)) = (w, q);
        assert!(wlo > cd + a - 1.0 && whi < cd + a + 1.0, "cwnd {wlo}..{whi}, cd + A = {:.2}", cd + a);
        assert!(qm > a - 1.0 && qm < a + 1.0, "mean backlog {qm}, A = {a}");
        assert!(qlo as f64 >= a - 1.0 && (qhi as f64) <= a + 1.0, "backlog {qlo}..{qhi}, A = {a}");
    }
}

/// One Vegas flow with `alpha = beta = a` alone on a drop-tail path for 100 s; returns
/// `cd`, `a` and (min, max, mean) of the cwnd and backlog samples of the last 20 s.
#[allow(clippy::type_complexity)]
fn vegas_equilibrium(rate: u64, owd: u64, a: i64, legacy: bool) -> (f64, f64, (f64, f64, f64), (u32, u32, f64)) {
    let (_c, _d, cd) = path(rate, owd);
    let mut t = cc("vegas", &[("alpha", a.into()), ("beta", a.into()), ("legacy_2_6", legacy.into())]);
    t.delayed_ack = false;
    // Vegas leaves slow start late (the same lagged minimum RTT) and then comes down
    // one segment per RTT: give it 80 s, measure the last 20 s.
    let dur = 100 * SEC;
    let cfg = config(
        1,
        dur,
        dumbbell_q(1, rate, owd, droptail(100_000, DropRule::Packets)),
        vec![tcp_flow("v", "srv0", "cli0", t)],
    );
    let sim = run(&cfg);
    let a = a as f64;
    let w = cwnd_after(&sim, 0, 80 * SEC);
    let q = queue_after(&sim, 80 * SEC);
    let (wlo, whi) = min_max(&w);
    let (qlo, qhi) = min_max(&q);
    let wm = w.iter().sum::<f64>() / w.len() as f64;
    let qm = q.iter().sum::<u32>() as f64 / q.len() as f64;
    println!(
        "{} Mbit/s, one-way {} ms, A = {a}, legacy {legacy}: cd = {cd:.2}; cwnd {wlo}..{whi} mean {wm:.2} (theorem: {:.2}..{:.2}); backlog {qlo}..{qhi} mean {qm:.2}",
        rate / 1_000_000,
        owd / MS,
        cd + a - 1.0,
        cd + a + 1.0
    );
    (cd, a, (wlo, whi, wm), (qlo, qhi, qm))
}

/// Linux's defaults (alpha 2, beta 4) leave a dead band: once `diff` is in [2, 4] the
/// window stops moving, so a lone flow holds a constant window with 2 to 4 (plus the
/// `b^2/(cd)` term, under one packet) of its packets queued.
#[test]
fn vegas_linux_defaults_hold_the_window_with_alpha_to_beta_packets_queued() {
    let (rate, owd) = (10_000_000u64, 20 * MS);
    let (_c, _d, cd) = path(rate, owd);
    let mut t = cc("vegas", &[]);
    t.delayed_ack = false;
    let cfg = config(
        1,
        40 * SEC,
        dumbbell_q(1, rate, owd, droptail(100_000, DropRule::Packets)),
        vec![tcp_flow("v", "srv0", "cli0", t)],
    );
    let sim = run(&cfg);
    let (wlo, whi) = min_max(&cwnd_after(&sim, 0, 30 * SEC));
    let q = queue_after(&sim, 30 * SEC);
    let qm = q.iter().sum::<u32>() as f64 / q.len() as f64;
    println!("defaults: cd = {cd:.2}, cwnd {wlo}..{whi}, backlog mean {qm:.2}");
    assert_eq!(wlo, whi, "the window is constant in the dead band");
    assert!(wlo >= cd + 2.0 - 1.0 && wlo <= cd + 5.0, "cwnd {wlo}, cd = {cd:.2}");
    assert!((2.0 - 1.0..5.0).contains(&qm), "backlog {qm}");
}

// ------------------------------------------------------------------------------- FAST

/// Wei thesis Theorems 2.2.3.1-2: flows sharing one bottleneck, each with its own
/// `alpha_i`, converge to `W = alpha + cd` in total and `w_i = (alpha_i/alpha)(alpha + cd)`
/// each (alpha = sum of the alpha_i): every flow keeps `alpha_i` packets queued.
/// 20 Mbit/s, 40 ms RTT (cd = 68.7), alpha_i = 10, 20, 30: measured 23, 41, 65 against
/// 21.3, 42.6, 63.9; total 129 against 127.7; queue 61.3 against 60.
#[test]
fn fast_flows_converge_to_alpha_proportional_windows() {
    let (rate, owd) = (20_000_000u64, 20 * MS);
    let (_c, _d, cd) = path(rate, owd);
    let alphas = [10i64, 20, 30];
    let flows = alphas
        .iter()
        .enumerate()
        .map(|(i, &a)| {
            let mut t = cc("fast", &[("alpha", a.into())]);
            t.delayed_ack = false;
            // All start at once: their first packets interleave at the bottleneck, so
            // each flow's baseRTT is off by at most two packet times (1.2 ms). A flow
            // starting later would never see the propagation delay (FAST's known
            // baseRTT problem): the queue never empties again.
            tcp_flow(&format!("f{i}"), &format!("srv{i}"), &format!("cli{i}"), t)
        })
        .collect();
    let cfg = config(1, 30 * SEC, dumbbell_q(3, rate, owd, droptail(100_000, DropRule::Packets)), flows);
    let sim = run(&cfg);
    let alpha: f64 = alphas.iter().sum::<i64>() as f64;
    let mut total = 0.0;
    for (i, &a) in alphas.iter().enumerate() {
        let w = cwnd_after(&sim, i as u32, 20 * SEC);
        let wm = w.iter().sum::<f64>() / w.len() as f64;
        let want = a as f64 / alpha * (alpha + cd);
        let (lo, hi) = min_max(&w);
        println!("flow {i}: alpha {a}, cwnd mean {wm:.2} ({lo}..{hi}), theorem {want:.2}");
        // The window is an integer and the law rounds to the nearest segment, so a flow
        // stops once `|alpha_i - w q/D| < 1/(2 gamma)` = 1 packet: a dead band of
        // `D/q` (about 2.1 segments here) around the theorem's value. Algorithm 2's
        // `|dw| >= 1` rule has the same band.
        assert!((wm - want).abs() < 2.5, "flow {i}: {wm:.2} vs {want:.2}");
        total += wm;
    }
    let q = queue_after(&sim, 20 * SEC);
    let qm = q.iter().sum::<u32>() as f64 / q.len() as f64;
    println!("total cwnd {total:.2} vs alpha + cd = {:.2}; queue mean {qm:.2} vs alpha = {alpha}", alpha + cd);
    assert!((total - (alpha + cd)).abs() < 0.03 * (alpha + cd), "W = {total:.2}");
    assert!((qm - alpha).abs() < 0.1 * alpha, "queue {qm:.2}");
}

// -------------------------------------------------------------------------------- BBR

/// One BBR flow, 100 Mbit/s, 40 ms RTT, lossless 4-BDP drop-tail buffer.
#[test]
fn bbr_fills_the_pipe_with_a_small_standing_queue_and_cycles_through_its_states() {
    use ccsim::tcp::cc::bbr::Mode;
    use ccsim::tcp::cc::AnyCc;
    let (rate, owd) = (100_000_000u64, 20 * MS);
    let bdp = rate as f64 * 0.04 / 8.0 / PKT; // 333 packets
    let limit = (4.0 * bdp).ceil() as u64;
    let dur = 12 * SEC;
    let cfg = config(
        1,
        dur,
        dumbbell_q(1, rate, owd, droptail(limit, DropRule::Packets)),
        vec![tcp_flow("b", "srv0", "cli0", cc("bbr", &[]))],
    );
    let sim = run(&cfg);
    let s = &sim.flow_summaries()[0];
    assert_eq!(s.pkts_dropped, 0, "lossless");

    // Utilisation of the bottleneck from 2 s on (after startup and drain), PROBE_RTT
    // included: data delivered, in wire bytes.
    let st = &sim.traces.state;
    let at = |t: u64| (0..st.t.len()).find(|&i| st.t[i] >= t).map(|i| st.delivered_pkts[i]).unwrap();
    let pkts = at(dur - 10 * MS) - at(2 * SEC);
    let util = pkts as f64 * PKT * 8.0 / ((dur - 10 * MS - 2 * SEC) as f64 / 1e9 * rate as f64);
    let mut q = queue_after(&sim, 2 * SEC);
    let qm = q.iter().sum::<u32>() as f64 / q.len() as f64;
    q.sort_unstable();
    let (q10, q50, q99) = (q[q.len() / 10], q[q.len() / 2], q[q.len() * 99 / 100]);
    let AnyCc::Bbr(b) = sim.tcp_sender(0).unwrap().cc() else { panic!("not bbr") };
    let log: Vec<(f64, Mode)> = b.mode_log().iter().map(|&(t, m)| (t as f64 / 1e9, m)).collect();
    println!(
        "utilisation {util:.4}; queue mean {qm:.1}, p10 {q10}, p50 {q50}, p99 {q99} (BDP {bdp:.0}); modes {log:?}"
    );
    assert!(util >= 0.95, "utilisation {util}");
    assert!((q10 as f64) < bdp && qm < bdp && (q99 as f64) < bdp, "standing queue p10 {q10} mean {qm}");
    let modes: Vec<Mode> = log.iter().map(|&(_, m)| m).collect();
    assert_eq!(&modes[..3], &[Mode::Startup, Mode::Drain, Mode::ProbeBw]);
    assert!(log[1].0 < 1.0 && log[2].0 < 1.5, "startup and drain end within ~20 RTTs: {log:?}");
    // The first PROBE_RTT comes once the min-RTT estimate is 10 s old (it was last
    // refreshed in startup) and lasts 200 ms plus a round trip.
    let i = modes.iter().position(|&m| m == Mode::ProbeRtt).expect("a probe_rtt");
    assert!(log[i].0 > 10.0 && log[i].0 < 11.0, "{log:?}");
    assert_eq!(modes.get(i + 1), Some(&Mode::ProbeBw));
    let held = log[i + 1].0 - log[i].0;
    assert!(held > 0.2 && held < 0.35, "probe_rtt lasted {held}");
}

// ------------------------------------------------------------------------------ DCTCP

/// One DCTCP flow through a step-marking queue (RED on the instantaneous queue,
/// `w_q` = 1, with `min_th = K - 1`, `max_th = K`, ECN: our RED wants `max_th > min_th`,
/// and on integer backlogs this marks exactly the packets that find K or more ahead): alpha tracks the fraction of marked
/// packets and the queue oscillates around K without drops.
#[test]
fn dctcp_alpha_tracks_the_marked_fraction_and_the_queue_sits_at_k() {
    use ccsim::qdisc::{QdiscConfig, RedConfig, RedUnit};
    use ccsim::tcp::cc::AnyCc;
    let (rate, owd, k) = (100_000_000u64, 5 * MS, 20.0);
    let red = QdiscConfig::Red(RedConfig {
        limit: 1000 * 1500,
        unit: RedUnit::Packets,
        min_th: Some(k - 1.0),
        max_th: Some(k),
        max_p: 1.0,
        w_q: Some(1.0),
        ecn: true,
        ..Default::default()
    });
    let mut t = cc("dctcp", &[]);
    t.ecn = true;
    // The fluid model below has the sender clock out segments per ACK; Linux's TSO
    // deferral sends ~10-segment skbs at this rate, which deepens the sawtooth's
    // trough by about a burst (measured with it: queue 8..22).
    t.tso_defer = false;
    let dur = 30 * SEC;
    let sim = run(&config(1, dur, dumbbell_q(1, rate, owd, red), vec![tcp_flow("d", "srv0", "cli0", t)]));
    let s = &sim.flow_summaries()[0];
    let AnyCc::Dctcp(d) = sim.tcp_sender(0).unwrap().cc() else { panic!("not dctcp") };
    let (windows, mean_alpha, mean_f) = d.window_stats();
    let q = queue_after(&sim, 2 * SEC);
    let (qlo, qhi) = min_max(&q);
    let qm = q.iter().sum::<u32>() as f64 / q.len() as f64;
    let util = sim.link_tx_pkts("bottleneck_down").unwrap() as f64 * PKT * 8.0 / (dur as f64 / 1e9 * rate as f64);
    let (_c, _d, cd) = path(rate, owd);
    println!(
        "{windows} windows: mean alpha {mean_alpha:.4}, mean F {mean_f:.4}, final alpha {:.4} (sqrt(2/(cd+K)) = {:.4}); \
         queue {qlo}..{qhi} mean {qm:.1} (K = {k}); utilisation {util:.4}; drops {}, ecn cuts {}",
        d.alpha() as f64 / 1024.0,
        (2.0 / (cd + k)).sqrt(),
        s.pkts_dropped,
        sim.tcp_sender(0).unwrap().stats().ecn_reductions
    );
    assert_eq!(s.pkts_dropped, 0);
    assert!(windows > 500);
    // Summing the EWMA a_n = (1-g) a_{n-1} + g F_n over N windows gives exactly
    // mean(a) - mean(F) = (1-g)/g (a_0 - a_N)/N: the only gap between the two means is
    // the start from alpha_on_init = 1, plus Linux's fixed point: with g = 1/16 the
    // decrement `alpha >> 4` truncates, so a steady alpha only satisfies
    // floor(alpha*1024/16) = floor(64 F), a band of 1/64 above F (measured: 0.0047).
    let a_n = d.alpha() as f64 / 1024.0;
    let start_term = 15.0 * (1.0 - a_n) / windows as f64;
    println!("mean alpha - mean F = {:.4}, start-up term {start_term:.4}", mean_alpha - mean_f);
    let gap = mean_alpha - mean_f - start_term;
    assert!((-0.002..1.0 / 64.0).contains(&gap), "alpha {mean_alpha} vs F {mean_f}");
    assert!(mean_f > 0.02 && mean_f < 0.5);
    // Alizadeh et al. (SIGCOMM 2010, §3.3) for N = 1 flow: the queue peaks at K + N
    // and the sawtooth's amplitude is A = (cd + K) alpha / 2 = sqrt((cd + K)/2) (7.2
    // packets here). Measured: 11..22, mean 16.8 with K = 20. The +2 and -3 allow for
    // the ACK clock's one-segment steps and for delayed ACKs.
    let amp = ((cd + k) / 2.0).sqrt();
    assert!((qhi as f64) <= k + 2.0 && (qlo as f64) >= k - amp - 3.0, "queue {qlo}..{qhi}, A = {amp:.1}");
    assert!(qm > k - amp && qm < k, "queue mean {qm}");
    assert!(util > 0.97, "utilisation {util}");
}

// --------------------------------------------------------------------------- Compound

fn ctcp_log(sim: &ccsim::Simulation, flow: usize) -> Vec<(u32, u32, u32)> {
    use ccsim::tcp::cc::AnyCc;
    let AnyCc::Compound(c) = sim.tcp_sender(flow).unwrap().cc() else { panic!("not compound") };
    c.round_log().to_vec()
}

/// A long fat pipe with a buffer smaller than gamma: the queue estimate stays below
/// gamma, dwnd grows every round, and CTCP refills the pipe after a loss far faster
/// than Reno's one segment per RTT (100 Mbit/s, 100 ms RTT, 25-packet buffer).
#[test]
fn compound_dwnd_grows_below_gamma_and_fills_a_long_fat_pipe() {
    let (rate, owd) = (100_000_000u64, 50 * MS); // BDP 833 packets
    let dur = 30 * SEC;
    let util = |name: &str| {
        // Segments clocked out per ACK, as the CTCP paper's sender: Linux's TSO
        // deferral would send 10-segment skbs into the 25-packet buffer (measured with
        // it: Compound 0.51, Reno 0.25; the gap holds, the loss count rises).
        let mut t = cc(name, &[]);
        t.tso_defer = false;
        let cfg = config(
            1,
            dur,
            dumbbell_q(1, rate, owd, droptail(25, DropRule::Packets)),
            vec![tcp_flow("f", "srv0", "cli0", t)],
        );
        let sim = run(&cfg);
        (sim.link_tx_pkts("bottleneck_down").unwrap() as f64 * PKT * 8.0 / (dur as f64 / 1e9 * rate as f64), sim)
    };
    let (u_reno, _) = util("reno");
    let (u_ctcp, sim) = util("compound");
    let log = ctcp_log(&sim, 0);
    let below = log.iter().filter(|r| r.0 < 30).count();
    let grew = log.iter().filter(|r| r.0 < 30 && r.2 > r.1).count();
    let max_dwnd = log.iter().map(|r| r.2).max().unwrap();
    println!("utilisation reno {u_reno:.3}, compound {u_ctcp:.3}; {} rounds, {below} below gamma, {grew} grew dwnd; max dwnd {max_dwnd}", log.len());
    assert!(below as f64 > 0.95 * log.len() as f64);
    assert!(grew as f64 > 0.9 * below as f64, "dwnd grows in the rounds below gamma");
    assert!(max_dwnd > 300);
    // Measured: Reno 0.25 (one loss after slow start, then +1 segment per RTT for the
    // rest of the run), Compound 0.64 (8 losses, each followed by win/2 and a fast
    // dwnd ramp).
    assert!(u_ctcp > u_reno + 0.25 && u_ctcp > 0.55, "compound {u_ctcp} vs reno {u_reno}");
}

/// With a large buffer shared with Reno, the queue exceeds gamma most of the time:
/// dwnd shrinks whenever the estimate is above gamma, stays near zero, and CTCP
/// shares like Reno.
#[test]
fn compound_backs_off_to_reno_when_the_path_queues() {
    let (rate, owd) = (20_000_000u64, 20 * MS); // BDP 67 packets
    let dur = 60 * SEC;
    let flows =
        vec![tcp_flow("ctcp", "srv0", "cli0", cc("compound", &[])), tcp_flow("reno", "srv1", "cli1", cc("reno", &[]))];
    let sim = run(&config(1, dur, dumbbell_q(2, rate, owd, droptail(200, DropRule::Packets)), flows));
    let log = ctcp_log(&sim, 0);
    let above: Vec<_> = log.iter().filter(|r| r.0 >= 30).collect();
    let shrank = above.iter().filter(|r| r.2 < r.1 || r.1 == 0).count();
    let zero = log.iter().filter(|r| r.2 == 0).count();
    let s = sim.flow_summaries();
    let share = s[0].bytes_delivered as f64 / s[1].bytes_delivered as f64;
    println!(
        "{} rounds: {} above gamma ({shrank} shrank dwnd or it was 0), dwnd 0 after {zero}; throughput ctcp/reno {share:.3}",
        log.len(),
        above.len()
    );
    assert!(above.len() as f64 > 0.5 * log.len() as f64, "the queue is above gamma most of the time");
    assert_eq!(shrank, above.len(), "every round above gamma shrinks dwnd");
    assert!(zero as f64 > 0.5 * log.len() as f64, "dwnd is zero most of the time");
    assert!(share > 0.75 && share < 1.33, "ctcp/reno {share}");
}
