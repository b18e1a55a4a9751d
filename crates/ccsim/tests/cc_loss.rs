//! Loss-based congestion control through the whole engine: one bulk flow over a
//! dumbbell whose bottleneck drops every n-th packet (no queue build-up: ample
//! capacity and buffer), traced at every cwnd change.

mod common;
use ccsim::config::*;
use ccsim::loss::{LossAction, LossConfig};
use ccsim::qdisc::DropRule;
use ccsim::tcp::TcpConfig;
use common::*;

const RECOVERY: u8 = 3;

fn flow(cc: &str, params: serde_json::Value) -> FlowConfig {
    flow_with(cc, params, TcpConfig::default())
}

fn flow_with(cc: &str, params: serde_json::Value, mut c: TcpConfig) -> FlowConfig {
    c.cc.name = cc.into();
    if let serde_json::Value::Object(m) = params {
        c.cc.params = m.into_iter().collect();
    }
    FlowConfig {
        name: "bulk".into(),
        src: "srv0".into(),
        dst: "cli0".into(),
        transport: TransportConfig::Tcp(c),
        app: AppConfig::Bulk { bytes: None },
        start_ns: 0,
        stop_ns: None,
        split: 1,
        connections: 1,
        scheduler: Default::default(),
    }
}

/// Bottleneck `rate_bps`, RTT 2 x `one_way_ns`, a `limit`-packet drop-tail queue,
/// every `every`-th data packet dropped.
fn path(rate_bps: u64, one_way_ns: u64, limit: u64, every: Option<u64>) -> TopologyConfig {
    let mut down = link(rate_bps, one_way_ns, droptail(limit, DropRule::Packets));
    down.loss = every.map(|every| LossConfig::Periodic { every, offset: None, action: LossAction::Drop });
    TopologyConfig::Dumbbell {
        pairs: 1,
        bottleneck: BottleneckConfig { down, up: link(rate_bps, one_way_ns, droptail(limit, DropRule::Packets)) },
        access: AccessConfig::default(),
    }
}

fn run_traced(cc: &str, params: serde_json::Value, duration_ns: u64, topo: TopologyConfig) -> ccsim::Simulation {
    run_flow(flow(cc, params), duration_ns, topo)
}

fn run_flow(f: FlowConfig, duration_ns: u64, topo: TopologyConfig) -> ccsim::Simulation {
    let mut cfg = config(1, duration_ns, topo, vec![f]);
    cfg.state_on_change = true;
    cfg.state_sample_ns = 100 * MS;
    run(&cfg)
}

/// (cwnd just before, ssthresh set, cwnd when recovery ended) for every fast-recovery
/// episode, from the state trace.
fn reductions(sim: &ccsim::Simulation) -> Vec<(f64, f64, f64)> {
    let st = &sim.traces.state;
    let mut out = vec![];
    let mut i = 1;
    while i < st.t.len() {
        if st.ca_state[i] == RECOVERY && st.ca_state[i - 1] < RECOVERY {
            let before = st.cwnd_pkts[i - 1];
            let ss = st.ssthresh_pkts[i];
            let mut j = i;
            while j < st.t.len() && st.ca_state[j] == RECOVERY {
                j += 1;
            }
            if j < st.t.len() && st.ca_state[j] < RECOVERY {
                out.push((before, ss, st.cwnd_pkts[j]));
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// Every reduction in steady state (after the first `skip`) sets ssthresh, the cwnd
/// recovery ends with, to `beta(cwnd)` x cwnd within integer rounding; returns the
/// mean ratio ssthresh / cwnd before.
fn check_beta(name: &str, sim: &ccsim::Simulation, skip: usize, beta: impl Fn(f64) -> f64) -> f64 {
    let r = reductions(sim);
    assert!(r.len() > skip + 3, "{name}: only {} reductions", r.len());
    let mut sum = 0.0;
    for &(before, ss, after) in &r[skip..] {
        let want = beta(before);
        assert!((ss - want * before).abs() <= 1.0, "{name}: ssthresh {ss} after cwnd {before}, want {want}");
        // Recovery ends with cwnd = ssthresh (tcp_end_cwnd_reduction), and the same
        // ACK, which cumulatively covers the SACKed window, may already grow it.
        assert!(
            after >= ss - 1.0 && after <= ss * 1.1 + 2.0,
            "{name}: cwnd {after} at the end of recovery, ssthresh {ss}"
        );
        sum += ss / before;
    }
    let mean = sum / (r.len() - skip) as f64;
    println!("{name}: {} reductions, mean ssthresh/cwnd before {mean:.4}", r.len() - skip);
    mean
}

/// Every `every`-th packet dropped from packet 100 on (slow start ends early).
fn lossy_path(rate_bps: u64, one_way_ns: u64, limit: u64, every: u64) -> TopologyConfig {
    let mut topo = path(rate_bps, one_way_ns, limit, None);
    if let TopologyConfig::Dumbbell { bottleneck, .. } = &mut topo {
        bottleneck.down.loss = Some(LossConfig::Periodic { every, offset: Some(100), action: LossAction::Drop });
    }
    topo
}

#[test]
fn loss_based_algorithms_reduce_by_their_beta_in_the_simulator() {
    use ccsim::tcp::cc::highspeed::AIMD;
    // 1 Gbit/s, RTT 10 ms, one drop per 3000 packets: windows of 40-400 segments,
    // far below the 830-segment BDP, so the queue stays empty (RTT = min RTT).
    let topo = || lossy_path(1_000_000_000, 5 * MS, 20_000, 3000);
    let hs_beta = |w: f64| {
        let row = AIMD.iter().position(|r| w as u32 <= r.0).unwrap_or(AIMD.len() - 1);
        1.0 - AIMD[row].1 as f64 / 256.0
    };
    type Beta = Box<dyn Fn(f64) -> f64>;
    let cases: Vec<(&str, Beta, f64)> = vec![
        ("reno", Box::new(|_| 0.5), 0.5),
        ("cubic", Box::new(|_| 717.0 / 1024.0), 0.7002),
        ("bic", Box::new(|w| if w <= 14.0 { 0.5 } else { 819.0 / 1024.0 }), 0.7998),
        ("highspeed", Box::new(hs_beta), 0.0),
        ("scalable", Box::new(|_| 0.875), 0.875),
        // No queueing: minRTT/maxRTT ~ 1, clamped to 0.8 (102/128).
        ("htcp", Box::new(|_| 102.0 / 128.0), 0.797),
        // No queueing delay: beta min, cut by 1/8.
        ("illinois", Box::new(|_| 0.875), 0.875),
        ("hybla", Box::new(|_| 0.5), 0.5),
    ];
    for (name, beta, mean_want) in cases {
        // H-TCP's backoff is only adaptive when minRTT > 10 ms: 40 ms for it.
        let (topo, secs) =
            if name == "htcp" { (lossy_path(1_000_000_000, 20 * MS, 20_000, 3000), 16) } else { (topo(), 8) };
        // Segments clocked out per ACK: Linux's TSO deferral would send 45-segment skbs
        // at 1 Gbit/s, whose queueing delay moves Illinois' beta off its minimum.
        let no_defer = TcpConfig { tso_defer: false, ..TcpConfig::default() };
        let sim = run_flow(flow_with(name, serde_json::json!({}), no_defer), secs * SEC, topo);

        // Skip the first three: H-TCP's first backoff is always 0.5 and its bandwidth
        // switch needs two stable throughput measurements (0.5, 0.49, 0.49, then 0.79).
        let m = check_beta(name, &sim, 3, beta);
        if mean_want > 0.0 {
            assert!((m - mean_want).abs() < 0.01, "{name}: mean ratio {m}");
        }
    }
}

#[test]
fn westwood_keeps_the_pipe_full_under_random_loss() {
    // Same lossy but uncongested path: the loss says nothing about capacity, and
    // Westwood+ resumes at BWE x RTTmin, about the window it had, where Reno halves.
    let sim = run_traced("westwood", serde_json::json!({}), 8 * SEC, lossy_path(1_000_000_000, 5 * MS, 20_000, 3000));
    let r = reductions(&sim);
    assert!(r.len() > 5);
    let mean = r[2..].iter().map(|&(b, _, a)| a / b).sum::<f64>() / (r.len() - 2) as f64;
    println!("westwood: {} reductions, mean cwnd after/before {mean:.3}", r.len() - 2);
    assert!(mean > 0.75, "{mean}");
}

/// Time-average of cwnd over whole loss cycles: from the first entry into recovery
/// after `from_ns` to the last one. Returns (mean, cycles, peak cwnd of the last cycle).
fn mean_cwnd_over_cycles(sim: &ccsim::Simulation, from_ns: u64) -> (f64, usize, f64) {
    let st = &sim.traces.state;
    let starts: Vec<usize> = (1..st.t.len())
        .filter(|&i| st.ca_state[i] == RECOVERY && st.ca_state[i - 1] < RECOVERY && st.t[i] >= from_ns)
        .collect();
    assert!(starts.len() > 3, "only {} loss events", starts.len());
    let (a, b) = (starts[0], *starts.last().unwrap());
    let mut area = 0.0;
    for i in a..b {
        area += st.cwnd_pkts[i] * (st.t[i + 1] - st.t[i]) as f64;
    }
    (area / (st.t[b] - st.t[a]) as f64, starts.len() - 1, st.cwnd_pkts[b - 1])
}

/// `w(p)` of the deterministic AIMD model (one loss per `n` segments, found one RTT
/// after it is sent, one ACK per segment, one recovery RTT at the new window) with
/// Linux's per-ACK use of the table: a(w) per RTT and b(w) from the row `cwnd` is in.
/// Returns the mean window per RTT over the periodic orbit.
fn highspeed_model(n: u64, w0: u32, warmup: u32, counted: u32) -> f64 {
    use ccsim::tcp::cc::highspeed::AIMD;
    let row = |w: u32, mut ai: usize| {
        while ai < AIMD.len() - 1 && w > AIMD[ai].0 {
            ai += 1;
        }
        while ai > 0 && w <= AIMD[ai - 1].0 {
            ai -= 1;
        }
        ai
    };
    let (mut w, mut cnt, mut ai, mut sent, mut cycles) = (w0, 0u32, row(w0, 0), 0u64, 0);
    let (mut area, mut rtts, mut pending) = (0u64, 0u64, false);
    while cycles < warmup + counted {
        let counting = cycles >= warmup;
        if pending {
            // Detected: reduce, then one recovery RTT at the new window.
            w = (w - ((w as u64 * AIMD[ai].1 as u64) >> 8) as u32).max(2);
            cnt = 0;
            cycles += 1;
            pending = false;
            sent += w as u64;
            if counting {
                area += w as u64;
                rtts += 1;
            }
            continue;
        }
        if sent + w as u64 >= n {
            sent = sent + w as u64 - n;
            pending = true;
        } else {
            sent += w as u64;
        }
        if counting {
            area += w as u64;
            rtts += 1;
        }
        let acks = w; // one RTT: the ACKs of the window sent a round ago
        for _ in 0..acks {
            ai = row(w, ai);
            cnt += ai as u32 + 1;
            if cnt >= w {
                cnt -= w;
                w += 1;
            }
        }
    }
    area as f64 / rtts as f64
}

#[test]
fn highspeed_response_function_matches_rfc_3649() {
    // RFC 3649 section 5: w(p) = 0.12 / p^0.835 for p <= 10^-3 (w >= 38), where w is
    // the average window of a flow losing one packet in every 1/p, one ACK per
    // segment (the RFC's Standard-TCP reference 1.2/sqrt(p) is the deterministic
    // sawtooth's time average without delayed ACKs). So: no delayed ACKs, periodic
    // loss, a 10 Gbit/s path with a 10 ms RTT that never queues (cwnd/RTT stays far
    // below capacity, so the time-average of cwnd is the per-RTT window), averaged
    // over whole loss cycles after the start-up ones. The first drop comes early
    // (packet 200) so that slow start does not overshoot far above the orbit.
    let mut rows = vec![];
    for (n, secs) in [(1000u64, 5u64), (10_000, 6), (50_000, 8)] {
        let p = 1.0 / n as f64;
        let mut topo = path(10_000_000_000, 5 * MS, 100_000, Some(n));
        if let TopologyConfig::Dumbbell { bottleneck, .. } = &mut topo {
            bottleneck.down.loss = Some(LossConfig::Periodic { every: n, offset: Some(200), action: LossAction::Drop });
        }
        let tcp = TcpConfig { delayed_ack: false, ..TcpConfig::default() };
        let sim = run_flow(flow_with("highspeed", serde_json::json!({}), tcp), secs * SEC, topo);
        let (w, cycles, peak) = mean_cwnd_over_cycles(&sim, secs * SEC / 2);
        let rfc = 0.12 / p.powf(0.835);
        let model = highspeed_model(n, 10, 40, 40);
        println!(
            "p = {p:.0e}: mean cwnd {w:.1} (peak {peak}) over {cycles} cycles; table model {model:.1} ({:+.2}%); RFC 3649 w(p) = {rfc:.1} ({:+.2}%)",
            (w - model) / model * 100.0,
            (w - rfc) / rfc * 100.0
        );
        rows.push((p, w, model, rfc));
    }
    for (p, w, model, _) in &rows {
        assert!(((w - model) / model).abs() < 0.02, "p = {p}: simulated {w} vs model {model}");
    }
    // Linux applies each row's a(w), b(w) (computed by the RFC at the row's upper
    // bound) to the whole row: more aggressive than the continuous response function
    // where rows are wide relative to w, converging to it as w grows.
    let errs: Vec<f64> = rows.iter().map(|(_, w, _, rfc)| (w - rfc) / rfc).collect();
    assert!(errs.windows(2).all(|e| e[1] < e[0]), "{errs:?}");
    // RFC 3649 Table row p = 10^-6 (w 12279), too long to simulate here: the same
    // model, which the runs above validate, is within 3% of the RFC there (+2.2%; at
    // 10^-7 it is +1.1%, 84903 vs 83981, left out for time).
    let (n, rfc_table) = (1_000_000u64, 12279.0);
    let model = highspeed_model(n, rfc_table as u32, 20, 10);
    let err = (model - rfc_table) / rfc_table;
    println!("p = {:.0e}: table model {model:.0}, RFC 3649 table {rfc_table} ({:+.2}%)", 1.0 / n as f64, err * 100.0);
    assert!(err.abs() < 0.03, "p = 1/{n}: model {model} vs RFC {rfc_table}");
}

#[test]
fn htcp_backoff_adapts_to_the_rtt_ratio() {
    // 20 Mbit/s, RTT 40 ms (BDP 67 packets) and a drop-tail queue of `limit` packets:
    // losses come when the queue is full, maxRTT = 40 ms + limit x 0.6 ms, and H-TCP
    // backs off by minRTT/maxRTT (within [0.5, 0.8]), which leaves the queue draining
    // just to empty.
    for limit in [20u64, 33, 100] {
        let want = 40.0 / (40.0 + limit as f64 * 0.6);
        let sim = run_traced("htcp", serde_json::json!({}), 30 * SEC, path(20_000_000, 20 * MS, limit, None));
        let r = reductions(&sim);
        assert!(r.len() > 6, "{} reductions", r.len());
        let ratios: Vec<f64> = r[3..].iter().map(|&(b, ss, _)| ss / b).collect();
        let mean = ratios.iter().sum::<f64>() / ratios.len() as f64;
        println!(
            "htcp, {limit}-packet queue: {} reductions, ssthresh/cwnd {mean:.3} (RTT ratio {want:.3}) {ratios:.3?}",
            ratios.len()
        );
        assert!((mean - want.clamp(0.5, 0.8)).abs() < 0.04, "{mean} vs {want}");
    }
}

#[test]
fn cubic_epoch_follows_w_of_t_in_the_simulator() {
    // One drop (packet 400) ends slow start; then a lossless 1 Gbit/s path with a
    // 100 ms RTT and no queue: the epoch after that loss should trace
    // W(t) = C (t - K)^3 + W_max, K = cbrt(W_max (1 - beta) / C), t from the end of
    // recovery (the first ACK of the epoch).
    let mut topo = path(1_000_000_000, 50 * MS, 20_000, None);
    if let TopologyConfig::Dumbbell { bottleneck, .. } = &mut topo {
        bottleneck.down.loss = Some(LossConfig::Trace { indices: vec![400], action: LossAction::Drop });
    }
    let sim = run_traced("cubic", serde_json::json!({}), 12 * SEC, topo);
    let st = &sim.traces.state;
    let r = reductions(&sim);
    assert_eq!(r.len(), 1, "{r:?}");
    let w_max = r[0].0;
    let i_exit = (1..st.t.len()).find(|&i| st.ca_state[i - 1] == RECOVERY && st.ca_state[i] < RECOVERY).unwrap();
    let t0 = st.t[i_exit] as f64 / 1e9;
    let (c, beta) = (0.4, 717.0 / 1024.0);
    let k = (w_max * (1.0 - beta) / c).cbrt();
    let rtt = 0.1;
    let w = |t: f64| c * (t - k).powi(3) + w_max;
    let (mut dev_now, mut dev_band, mut dev_first, mut dev_late, mut n) = (0f64, 0f64, 0f64, 0f64, 0);
    for i in i_exit..st.t.len() {
        let t = st.t[i] as f64 / 1e9 - t0;
        if t > 1.5 * k {
            break;
        }
        let cw = st.cwnd_pkts[i];
        let out = (w(t) - cw).max(cw - w(t + rtt)).max(0.0);
        if t < 4.0 * rtt {
            // The first RTTs after recovery are ACKs of the PRR-limited flight sent
            // during recovery: fewer ACKs, slower growth, caught up by t = 0.4 s.
            dev_first = dev_first.max(out);
            continue;
        }
        dev_now = dev_now.max((cw - w(t)).abs());
        if t > 1.0 {
            dev_late = dev_late.max(out);
        }
        dev_band = dev_band.max(out);
        n += 1;
    }
    println!(
        "W_max {w_max}, K {k:.2} s: {n} samples from 4 RTTs to 1.5 K: max |cwnd - W(t)| {dev_now:.2}, \
         outside [W(t), W(t+RTT)] by {dev_band:.2}; first 4 RTTs: {dev_first:.2}; after 1 s: {dev_late:.2}"
    );
    // The lag built up in the first RTTs (PRR-shaped ACK clock, delayed ACKs) is
    // worked off within ~1 s; from then on cwnd stays within ~1 packet of the band
    // (1.23 measured since the receiver ACKs each segment while its window grows, 1.10
    // before; the hook-level test with an ideal ACK clock gets 0.94).
    assert!(n > 100 && dev_first <= 4.0 && dev_band <= 2.0 && dev_late <= 1.3, "{dev_first} {dev_band} {dev_late}");
}

/// CUBIC's slow-start exit against the kernel (Linux 6.18 through ccemu, the same
/// paths): HyStart leaves slow start at (cwnd, time) = (59, 147 ms) on 10 Mbit/s,
/// 40 ms RTT, 34-packet buffer, and (246, 557 ms) on 20 Mbit/s, 100 ms, 167 packets —
/// by delay on the first, by ACK train on the second. Both need HyStart's rounds to
/// start at a flight's first ACK (the round reset runs below `hystart_low_window`
/// too) and the receiver's segment-by-segment ACKs while its window grows. Times are
/// from the flow's start here and from the first data segment on the kernel; this
/// harness's access links add a little to the RTT, hence 25 ms.
#[test]
fn cubic_leaves_slow_start_where_the_kernel_does() {
    for (rate, one_way, limit, want_cwnd, want_ms) in
        [(10_000_000, 20 * MS, 34, 59.0, 147.0), (20_000_000, 50 * MS, 167, 246.0, 557.0)]
    {
        let sim = run_traced("cubic", serde_json::json!({}), SEC, path(rate, one_way, limit, None));
        let st = &sim.traces.state;
        let i = (0..st.t.len()).find(|&i| st.ssthresh_pkts[i] < 1e6).expect("slow start ended");
        let (cwnd, t_ms) = (st.ssthresh_pkts[i], st.t[i] as f64 / 1e6);
        println!("{rate} b/s: slow start left at cwnd {cwnd} at {t_ms:.1} ms (kernel {want_cwnd} at {want_ms} ms)");
        assert!((cwnd - want_cwnd).abs() <= 0.05 * want_cwnd, "cwnd {cwnd} vs kernel {want_cwnd}");
        assert!((t_ms - want_ms).abs() <= 25.0, "{t_ms} ms vs kernel {want_ms} ms");
    }
}
