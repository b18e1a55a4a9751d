"""Checks of the Wei-thesis models (loss synchronisation, fairness bound, synchronised
throughput loss, FAST map, Vegas equilibrium).

Sources of reference numbers: the thesis text (/work/shared/seeds, Wei 2007), the study
note /work/shared/notes/wei-microscopic-congestion-control.md §9 (derived values), and
hand computations written out below.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from ccbench.models import wei_fast, wei_sync

runner = CliRunner()


def _app(fn):
    app = typer.Typer()
    app.command()(fn)
    return app


# ----------------------------------------------------------------------------- (3.1)-(3.6)


def test_overlap_distribution_sums_to_one_and_bounds():
    for S, M, K in [(2000, 32, 63), (2000, 2000, 63), (2000, 32, 2000), (100, 70, 60), (10, 10, 10), (50, 1, 1)]:
        k, P = wei_sync.overlap_distribution(S, M, K)
        assert P.sum() == pytest.approx(1.0, abs=1e-12)
        assert np.all(P >= 0)
        assert k[0] == max(0, M + K - S) and k[-1] == min(M, K)


def test_overlap_distribution_matches_uniform_placement_count():
    # Independent check of (3.2): place a K-burst and an M-burst uniformly on a ring of S
    # slots (S^2 equally likely start pairs) and count the overlap exactly.
    S, M, K = 40, 7, 12
    counts = {}
    for x in range(S):
        flow = {(x + i) % S for i in range(K)}
        for y in range(S):
            k = sum(((y + i) % S) in flow for i in range(M))
            counts[k] = counts.get(k, 0) + 1
    k, P = wei_sync.overlap_distribution(S, M, K)
    for kk, pp in zip(k, P):
        assert pp == pytest.approx(counts.get(int(kk), 0) / S**2, abs=1e-12)


def test_fig35_corner_values():
    # Thesis Fig. 3.5 (S = 2000, L = N = 32, w = 62.5): "highest achievable synchronization
    # rate ... 0.65" with pacing or RED. Study note §9: B ~ 0.638, C ~ 0.635, spread ~ 0.632,
    # bursty (M = 32, K = 63) ~ 0.047.
    c = wei_sync.fig35_corners(2000, 32)
    assert c["B_pacing"] == pytest.approx(0.638, abs=5e-4)
    assert c["C_red"] == pytest.approx(0.635, abs=5e-4)
    assert c["both_spread"] == pytest.approx(0.632, abs=5e-4)
    assert c["A_bursty"] == pytest.approx(0.047, abs=5e-4)
    # Pacing corner by hand: k = 32 with probability 1, 1 - (1 - 32*62.5/(32*2000))^32
    #   = 1 - 0.96875^32 = 1 - exp(32 ln 0.96875) = 1 - exp(-1.015962) = 1 - 0.362055 = 0.637945
    assert c["B_pacing"] == pytest.approx(0.637945, abs=1e-6)
    # the brief's "pacing about 0.64, RED about 0.63"
    assert abs(c["B_pacing"] - 0.64) < 0.005 and abs(c["C_red"] - 0.63) < 0.01
    # and all three spread corners stay below the thesis's "0.65"
    assert max(c["B_pacing"], c["C_red"], c["both_spread"]) < 0.65


def test_paced_asymptotics_match_general_model():
    # (3.5) is (3.3) at K = S, M = L exactly; (3.6) its first-order form.
    S, L, w = 3340, 16, 3340 / 16
    exact = wei_sync.sync_rate(S=S, M=16, K=S, L=L, w=w)
    assert wei_sync.sync_rate_paced(S=S, L=L, w=w) == pytest.approx(exact, rel=1e-12)
    assert wei_sync.sync_rate_paced_linear(S=20000, L=100, w=2) == pytest.approx(
        wei_sync.sync_rate_paced(S=20000, L=100, w=2), rel=0.01)


def test_bursty_asymptote():
    # (3.4): with M = L, K = w (integer), L >> w, the general model equals (L+w-1)/S
    S, L, w = 20000, 400, 10
    gen = wei_sync.sync_rate(S=S, M=L, K=w, L=L, w=w)
    assert gen == pytest.approx((L + w - 1) / S, rel=1e-12)
    assert wei_sync.sync_rate_bursty_asymptotic(S=S, L=L, w=w) == pytest.approx(gen, rel=1e-12)
    assert wei_sync.sync_rate_bursty_asymptotic(S=S, L=L, w=w, form="thesis") == pytest.approx(399 / 20000)
    # Fig. 3.10 message: with bursty TCP, lambda barely depends on w for large N
    lam1 = wei_sync.sync_rate(S=S, M=L, K=20, L=L, w=20)
    lam2 = wei_sync.sync_rate(S=S, M=L, K=5, L=L, w=5)
    assert abs(lam1 - lam2) / lam2 < 0.05
    with pytest.raises(ValueError, match="form='x'"):
        wei_sync.sync_rate_bursty_asymptotic(S=S, L=L, w=w, form="x")


def test_sync_errors():
    with pytest.raises(ValueError, match="M=3000"):
        wei_sync.overlap_distribution(2000, 3000, 10)
    with pytest.raises(ValueError, match="S=2.5"):
        wei_sync.overlap_distribution(2.5, 1, 1)
    with pytest.raises(ValueError, match=r"L\*w/\(M\*K\)"):
        wei_sync.sync_rate(S=2000, M=32, K=10, L=32, w=62.5)


# ----------------------------------------------------------------------------- (3.8)


def test_fairness_bound_table_of_note():
    # Study note §9: eq. (3.8) with (cd+B)/N = 1000.
    table = {0.1: 840.5, 0.2: 757.9, 0.3: 666.5, 0.5: 443.9, 0.6: 300.0, 0.7: 116.3}
    for lam, F in table.items():
        assert wei_sync.fairness_convergence_lower_bound(lam, 1000) == pytest.approx(F, abs=0.05)
    assert wei_sync.fairness_convergence_lower_bound(1e-9, 1000) == pytest.approx(916.3, abs=0.1)
    assert wei_sync.fairness_convergence_lower_bound(0.0, 1000) == pytest.approx(916.3, abs=0.1)
    for lam in (0.75, 0.8, 0.95, 1.0):
        assert wei_sync.fairness_convergence_lower_bound(lam, 1000) == 0.0
    # hand: lambda = 0.1: (ln 0.2 - ln(1 - 1/1.9)) / ln 0.95 * 0.1*1000/2
    #   = (-1.609438 + 0.747214) / (-0.051293) * 50 = 16.80969 * 50 = 840.48
    assert wei_sync.fairness_convergence_lower_bound(0.1, 1000, unit="loss_events") == pytest.approx(16.8097, abs=1e-4)
    assert wei_sync.fairness_convergence_lower_bound(0.1, 1000, unit="seconds", rtt_s=0.2) == pytest.approx(
        0.2 * 840.4837, rel=1e-5)
    v = wei_sync.fairness_convergence_lower_bound(np.array([0.1, 0.5]), 1000)
    assert v.shape == (2,) and v[0] > v[1]
    # with Table 3.1's measured lambda = 0.204 (bursty Reno), the bound is ~ 754 RTTs,
    # ~ 151 s at 200 ms: same order as the > 1500 RTTs the thesis measured
    assert 700 < wei_sync.fairness_convergence_lower_bound(0.2042152591, 1000) < 800


def test_fairness_errors():
    with pytest.raises(ValueError, match="lam=1.5"):
        wei_sync.fairness_convergence_lower_bound(1.5, 1000)
    with pytest.raises(ValueError, match="rtt_s=None"):
        wei_sync.fairness_convergence_lower_bound(0.1, 1000, unit="seconds")
    with pytest.raises(ValueError, match="unit='min'"):
        wei_sync.fairness_convergence_lower_bound(0.1, 1000, unit="min")


# ----------------------------------------------------------------------------- throughput loss


def test_synchronised_throughput_closed_forms():
    assert wei_sync.reno_sync_throughput().fraction == 0.75  # thesis: 75 % of capacity
    st = wei_sync.stcp_sync_throughput()
    # note §9: T_S ~ 13.42 RTTs, loss ~ 6.85 %. Hand: T_S = ln(8/7)/ln(1.01) = 0.133531/0.00995033 = 13.4198
    # fraction = (7/8)(8/7 - 1)/(0.01*13.4198) = 0.125/0.134198 = 0.931460
    assert st.epoch_rtts == pytest.approx(13.4198, abs=1e-4)
    assert st.loss == pytest.approx(0.068540, abs=1e-6)
    # HighSpeed: beta(38) = 0.5 -> fraction 0.75 (Reno-like); beta(83000) = 0.1 -> 0.95
    assert wei_sync.hstcp_sync_throughput(38).fraction == pytest.approx(0.75)
    hs = wei_sync.hstcp_sync_throughput(83000)
    assert hs.fraction == pytest.approx(0.95) and hs.loss == pytest.approx(0.05)
    # RFC 3649 Table: beta(w) at w = 1058 is about 0.33 (a(w) ~ 8)
    assert wei_sync.hstcp_decrease_factor(1058) == pytest.approx(0.33, abs=0.005)
    assert wei_sync.hstcp_increase_pkts(1058) == pytest.approx(8, abs=0.5)


def test_synchronised_throughput_with_buffer():
    # B -> 0 reproduces the closed forms (per-RTT discretisation only)
    bdp = 10440
    assert wei_sync.sync_throughput_with_buffer("reno", bdp_pkts=bdp, buffer_pkts=0).fraction == pytest.approx(0.75)
    assert wei_sync.sync_throughput_with_buffer("hstcp", bdp_pkts=bdp, buffer_pkts=0).fraction == pytest.approx(
        wei_sync.hstcp_sync_throughput(bdp).fraction, abs=0.005)
    assert wei_sync.sync_throughput_with_buffer("stcp", bdp_pkts=bdp, buffer_pkts=0).fraction == pytest.approx(
        wei_sync.stcp_sync_throughput().fraction, abs=0.01)
    # Independent fact: Reno with B >= BDP never drains the link (W/2 >= cd), fraction 1;
    # with B = BDP/2 the under-used part is a triangle: lost = (W*-W/2)^2/2 per epoch
    assert wei_sync.sync_throughput_with_buffer("reno", bdp_pkts=bdp, buffer_pkts=bdp).fraction == 1.0
    # hand (continuous): W = 1.5 bdp, w from 0.75 bdp to 1.5 bdp; slots = sum max(bdp, w)
    #   sent = 0.75*bdp*1.125*bdp = 0.84375 bdp^2; slots = 0.25 bdp*bdp + 0.5*bdp*1.25*bdp = 0.875 bdp^2
    #   fraction = 0.964286
    r = wei_sync.sync_throughput_with_buffer("reno", bdp_pkts=bdp, buffer_pkts=bdp / 2)
    assert r.fraction == pytest.approx(0.964286, abs=2e-4)
    # more buffer never hurts
    fr = [wei_sync.sync_throughput_with_buffer(a, bdp_pkts=1000, buffer_pkts=b).fraction
          for a in ("reno", "hstcp", "stcp") for b in (0, 100, 300)]
    assert fr[0] <= fr[1] <= fr[2] and fr[3] <= fr[4] <= fr[5] and fr[6] <= fr[7] <= fr[8]
    with pytest.raises(ValueError, match="algorithm='cubic'"):
        wei_sync.sync_throughput_with_buffer("cubic", bdp_pkts=1000, buffer_pkts=0)


# ----------------------------------------------------------------------------- FAST


def test_fast_map_converges_to_theorem_equilibrium():
    c, d = 10_000.0, 0.1  # cd = 1000 packets
    alphas = np.array([10.0, 20.0, 30.0, 140.0])
    w_star, q_star = wei_fast.fast_equilibrium(c, d, alphas)
    # Thm 2.2.3.2: (alpha_i/alpha)(alpha + cd), alpha = 200 -> 1200 * alpha_i/200
    assert np.allclose(w_star, [60, 120, 180, 840])
    assert q_star == pytest.approx(0.02)
    rng = np.random.default_rng(7)
    for gamma in (0.1, 0.5, 0.9, 1.0):
        w0 = rng.uniform(1, 2000, size=4)
        traj = wei_fast.fast_iterate(w0, c, d, alphas, gamma, steps=3000)
        assert np.allclose(traj[-1], w_star, rtol=1e-6), (gamma, traj[-1])
        assert traj[-1].sum() == pytest.approx(alphas.sum() + c * d, rel=1e-9)  # Thm 2.2.3.1


def test_fast_aggregate_geometric_convergence():
    # Starting above cd, the link stays fully used and W(t) - W* = (1-gamma)^t (W0 - W*).
    c, d, alphas, gamma = 5000.0, 0.2, [50.0, 150.0], 0.5
    traj = wei_fast.fast_iterate([900.0, 700.0], c, d, alphas, gamma, steps=30)
    W = traj.sum(axis=1)
    expect = wei_fast.fast_aggregate_closed_form(1600.0, c, d, 200.0, gamma, np.arange(31))
    assert np.allclose(W, expect, rtol=1e-12)
    # below cd the max-queue map grows each flow by gamma*alpha_i per RTT
    t2 = wei_fast.fast_iterate([1.0, 1.0], c, d, alphas, gamma, steps=1)
    assert np.allclose(t2[1] - t2[0], [25.0, 75.0])
    lin = wei_fast.fast_iterate([1.0, 1.0], c, d, alphas, gamma, steps=1, queue_model="linear")
    assert not np.allclose(lin[1], t2[1])


def test_fast_errors():
    with pytest.raises(ValueError, match="gamma=1.5"):
        wei_fast.fast_step([1.0], 1000, 0.1, [10], gamma=1.5)
    with pytest.raises(ValueError, match="alpha has 2 entries"):
        wei_fast.fast_step([1.0, 2.0, 3.0], 1000, 0.1, [10, 20])
    with pytest.raises(ValueError, match="queue_model='x'"):
        wei_fast.fast_queue_delay_s(10, 1000, 0.1, queue_model="x")


# ----------------------------------------------------------------------------- Vegas


def test_vegas_bounds_and_static_map():
    b = wei_fast.vegas_equilibrium_bounds(1000, 0.05, 60)  # cd = 50, alpha d = 3
    assert b["window"] == pytest.approx((52, 54)) and b["queue"] == pytest.approx((2, 4)) and b["exact"]
    with pytest.raises(ValueError, match="alpha=10"):
        wei_fast.vegas_equilibrium_bounds(1000, 0.05, 10)  # alpha d = 0.5 <= 1
    for c, d, alpha in [(1000, 0.05, 60), (1234.5, 0.0731, 47.3), (20000, 0.013, 111.0)]:
        bd = wei_fast.vegas_equilibrium_bounds(c, d, alpha)
        for w0 in (1, 3 * int(bd["w_star"])):
            w, q = wei_fast.vegas_iterate(w0, c, d, alpha, steps=3 * int(bd["w_star"]) + 50)
            tail = slice(-20, None)
            assert np.all((w[tail] > bd["window"][0]) & (w[tail] < bd["window"][1]))
            assert np.all((q[tail] > bd["queue"][0]) & (q[tail] < bd["queue"][1]))
            if bd["exact"]:
                assert np.all(w[tail] == round(bd["w_star"]))


@pytest.mark.parametrize("c,d,alpha,w0", [
    (1000.0, 0.05, 60.0, 1),        # cd + alpha d = 53 (integer): exact equilibrium
    (1234.5, 0.0731, 47.3, 1),      # non-integer: oscillation within the open interval
    (1234.5, 0.0731, 47.3, 140),    # start far above (big initial micro-burst)
    (800.0, 0.1, 25.0, 3),
])
def test_vegas_packet_level_enters_and_stays_in_bounds(c, d, alpha, w0):
    bd = wei_fast.vegas_equilibrium_bounds(c, d, alpha)
    tr = wei_fast.vegas_packet_level(c, d, alpha, w0=w0, n_packets=40_000)
    # model invariants: ACK pacing a(j) - a(j-1) >= 1/c (Thm 2.1.2.2), p(j) <= w(s(j)) (Thm 2.1.2.1)
    assert np.all(np.diff(tr.ack_time_s) >= 1 / c - 1e-12)
    assert np.all(tr.in_flight_pkts <= tr.window_at_send_pkts)
    lo, hi = bd["window"]
    w = tr.window_at_send_pkts
    inside = (w > lo) & (w < hi)
    assert inside.any()
    J = int(np.argmax(inside))
    assert J < len(w) // 2  # converged well within the run
    assert inside[J:].all()
    # the queue follows within one RTT (Thm 2.1.3.4): skip one window of packets after J
    settle = J + int(hi) + 1
    qlo, qhi = bd["queue"]
    bq = tr.backlog_pkts[settle:]
    assert np.all((bq > qlo - 1e-9) & (bq < qhi + 1e-9)), (bq.min(), bq.max())
    if bd["exact"]:
        assert np.all(w[J:] == round(bd["w_star"]))


def test_vegas_packet_level_delayed_ack_spacing():
    # thesis footnote: with delayed ACK tau_{k+1} = tau_k + 2w; the proofs still hold
    bd = wei_fast.vegas_equilibrium_bounds(1234.5, 0.0731, 47.3)
    tr = wei_fast.vegas_packet_level(1234.5, 0.0731, 47.3, w0=2, n_packets=40_000, decision_spacing="2w")
    w = tr.window_at_send_pkts[len(tr.window_at_send_pkts) // 2:]
    assert np.all((w > bd["window"][0]) & (w < bd["window"][1]))
    # decisions are about twice as far apart as with the default spacing
    gaps = np.diff(tr.decision_packets[-10:])
    assert np.all(gaps >= 2 * 93)


def test_vegas_packet_level_errors():
    with pytest.raises(ValueError, match="d=0.0001"):
        wei_fast.vegas_packet_level(1000, 1e-4, 60)
    with pytest.raises(ValueError, match="n_packets=0"):
        wei_fast.vegas_packet_level(1000, 0.05, 60, n_packets=0)
    with pytest.raises(ValueError, match="steps=-1"):
        wei_fast.vegas_iterate(1, 1000, 0.05, 60, steps=-1)
    with pytest.raises(ValueError, match="decision_spacing='3w'"):
        wei_fast.vegas_packet_level(1000, 0.05, 60, decision_spacing="3w")


# ----------------------------------------------------------------------------- CLIs


def test_cli_sync(tmp_path):
    out = tmp_path / "s.png"
    r = runner.invoke(_app(wei_sync.cli_sync), ["--S", "2000", "-N", "32", "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert "0.6379" in r.output and "0.6351" in r.output and out.exists()
    assert runner.invoke(_app(wei_sync.cli_sync), ["--S", "2000", "--M", "5000"]).exit_code != 0


def test_cli_fairness(tmp_path):
    out = tmp_path / "f.png"
    r = runner.invoke(_app(wei_sync.cli_fairness), ["--lam", "0.1", "--lam", "0.6", "--rtt-ms", "200",
                                                    "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert "840.5" in r.output and "300.0" in r.output and out.exists()
    assert runner.invoke(_app(wei_sync.cli_fairness), ["--lam", "2"]).exit_code != 0


def test_cli_throughput(tmp_path):
    out = tmp_path / "t.png"
    r = runner.invoke(_app(wei_sync.cli_throughput), ["--bdp", "1000", "--buffer", "0", "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert "0.7500" in r.output and "0.0685" in r.output and out.exists()


def test_cli_fast_and_vegas(tmp_path):
    r = runner.invoke(_app(wei_fast.cli_fast), ["--capacity-pps", "10000", "--delay-ms", "100", "--alpha", "100",
                                                "--alpha", "300", "--steps", "3000", "--plot", str(tmp_path / "a.png")])
    assert r.exit_code == 0, r.output
    assert "350.000" in r.output and "1050.000" in r.output  # (alpha_i/400)*(400 + 1000)
    r = runner.invoke(_app(wei_fast.cli_vegas), ["--capacity-pps", "1000", "--delay-ms", "50", "--alpha", "60",
                                                 "--plot", str(tmp_path / "v.png")])
    assert r.exit_code == 0, r.output
    assert "(52.000, 54.000)" in r.output
    assert runner.invoke(_app(wei_fast.cli_vegas), ["--alpha", "1"]).exit_code != 0
