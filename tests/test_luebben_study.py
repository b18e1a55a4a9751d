"""Lübben & Fidler study (ccbench.studies.luebben*): the qualitative results it pins,
each from short simulations or the exact window model."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from ccbench.netcal.estimator import delay_quantile, estimate_service_curve
from ccbench.studies import luebben as L
from ccbench.studies import luebben_metrics as M
from ccbench.studies import luebben_runs as R
from ccbench.studies import luebben_setups as S


@functools.lru_cache(maxsize=None)
def _fixed(config, rate, measure_s=30.0, seed=1, cwnd=False):
    # cached: several tests read the same short runs
    return R.task_fixed_rate({"config": config, "rate_bps": rate, "measure_s": measure_s, "seed": seed, "cwnd": cwnd})


def test_static_window_estimate_is_the_convex_minorant_or_exact():
    rows, curves = L.fig4()
    got = {(r["setting"], r["quantity"]): r for r in rows}
    assert got[("w = 500 kbit", "long-term attainable rate")]["ours"] == pytest.approx(5.0)
    assert got[("w = 2000 kbit", "long-term attainable rate")]["ours"] == pytest.approx(10.0)
    for r in rows:
        assert r["agrees"] == "yes", r
    # the analytic stepped curve lies on or above the estimate everywhere (it is a lower bound)
    t, a, analytic, _ = curves[500e3]
    assert np.all(analytic >= a - 1e-6 * 5e6)


def test_window_model_matches_closed_form_when_not_window_limited():
    # below the long-term rate and with w >= C*RTT the delay is T plus one packet's service
    d = S.window_delays(100.0, 200, 1000.0, 0.05, 500)
    assert d.max() == pytest.approx(0.051)


def test_estimated_quantiles_rise_with_rate_up_to_the_attainable_rate():
    q = [delay_quantile(_fixed("droptail-167", r)["total"], 0.05) for r in (1e6, 5e6, 9e6)]
    assert q[0] < q[1] < q[2]
    # the lowest rate sees the propagation (10 ms) plus up to the full 20 ms buffer
    assert 0.010 < q[0] < 0.06


def test_sender_buffering_rises_with_utilisation_and_exists_below_two_thirds():
    p = [float(np.mean(_fixed("droptail-167", r)["sender"] > 1e-6)) for r in (1e6, 5e6, 9e6)]
    assert p[0] < p[1] < p[2]
    assert p[1] > 0.05  # u = 0.53 < 2/3: the periodic-loss model says none
    from ccbench.models.luebben import periodic_loss_buffering_probability

    assert periodic_loss_buffering_probability(0.53) == 0.0


def test_delay_bound_is_at_least_the_observed_quantile():
    # an estimate from three probe trains (q95 at 2, 5, 8 Mbit/s) and a 4 Mbit/s VBR stream:
    # the per-frame bound from the estimate is not below the video's delays through the same
    # system for the large majority of frames (it is a 0.85-bound: eps = 3 * 0.05)
    rates = (2e6, 5e6, 8e6)
    est = estimate_service_curve(rates, [delay_quantile(_fixed("droptail-167", r)["total"], 0.05) for r in rates], 0.05)
    from ccbench.netcal.bounds import per_packet_delay_bound

    t, b = S.video_frames(4e6, 40.0)
    bound = per_packet_delay_bound(t, b, est)
    assert np.all(bound > 0.0)
    d = S.testbed_dict("droptail-167", None, 30.0, seed=3)
    d["flows"].insert(0, {"name": "probe", "transport": dict(S.PROBE_TCP), "app": S.video_app(4e6, 40.0),
                          "stop": "40000ms"})
    d["topology"]["access"]["pair_delays"] = d["topology"]["access"]["pair_delays"][-1:] + \
        d["topology"]["access"]["pair_delays"][:-1]
    p = R._simulate(d, 3).packets
    p = p[(p["flow"] == "probe") & (p["t_write"] >= S.WARMUP_S)]
    obs = (p["t_deliver"] - p["t_write"]).to_numpy()
    bnd = bound[t >= S.WARMUP_S - 1e-9][: obs.size]
    assert np.mean(bnd >= obs[: bnd.size]) >= 0.85


def test_red_and_codel_delay_less_than_droptail():
    # Mean over eight seeds: one 30 s run's p95 is a coin flip between the three (with
    # one seed CoDel was above drop-tail at seeds 1 and 4, RED at 2 and 3), and four
    # seeds put CoDel and drop-tail within 1 % (0.143 / 0.141; eight: 0.139 / 0.165).
    q = {c: np.mean([np.percentile(_fixed(c, 5e6, seed=seed)["total"], 95) for seed in range(1, 9)])
         for c in ("droptail-167", "red-20", "codel")}
    assert q["red-20"] < q["droptail-167"]
    assert q["codel"] < q["droptail-167"]


def test_periodic_mark_calibration_matches_the_window_model():
    from ccbench.models.luebben import periodic_loss_window

    w = periodic_loss_window(1.0 / L.PERIODIC_MARK_EVERY, 0.02)
    assert w.long_term_rate_pkts_per_s * L.PKT == pytest.approx(S.FAIR_SHARE_BPS, rel=0.02)
    assert w.w_min_pkts > L.CWND_NEEDED_PKTS  # the sawtooth never drops below what 5 Mbit/s needs


def test_periodic_loss_buffers_less_than_bernoulli_at_the_same_throughput():
    pb = {c: float(np.mean(_fixed(c, 7e6, measure_s=60.0)["sender"] > 1e-6)) for c in ("bernoulli", "periodic")}
    assert pb["periodic"] < pb["bernoulli"]
    # Sec. V-C: the AIMD window under periodic marks never drops below what 5 Mbit/s needs
    a = {k: R.task_aimd_cwnd({"kind": k, "p": L.BERNOULLI_MARK_P, "every": L.PERIODIC_MARK_EVERY, "rate_bps": 5e6,
                              "measure_s": 60.0, "seed": 1}) for k in ("bernoulli", "periodic")}
    assert np.mean(a["periodic"]["cwnd"] < L.CWND_NEEDED_PKTS) < 0.01
    assert M.longest_run_below(a["bernoulli"]["cwnd"], L.CWND_NEEDED_PKTS, 0.01) >= 0.1


def test_calibrated_synthetic_losses_give_the_fair_share():
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    for c in ("bernoulli", "periodic"):
        d = S.testbed_dict(c, None, 60.0, seed=1, greedy_probe=True)
        f = simulate(Scenario.from_dict(d), seed=1).flows
        assert float(f[f.flow == "probe"].goodput_bps.iloc[0]) == pytest.approx(S.FAIR_SHARE_BPS, rel=0.15), c


def test_video_source_rate_and_gop():
    t, b = S.video_frames(4e6, 120.0)
    assert np.diff(t).min() == pytest.approx(1 / 25)
    assert b.sum() * 8 / 120.0 == pytest.approx(4e6, rel=0.05)
    gop = S.VIDEO["gop"]
    kinds = np.array([gop[i % len(gop)] for i in range(b.size)])
    means = {k: b[kinds == k].mean() for k in "IPB"}
    assert means["I"] > means["P"] > means["B"]


def test_static_alpha_is_the_latency_rate_minorant():
    t = np.logspace(-3, 2, 500)
    a = M.static_alpha(t, 41, 0.005, 1.0)
    assert a[t < 0.005].max() == 0.0
    assert a[-1] == pytest.approx(4100, rel=0.01)
    assert np.all(np.diff(a) >= -1e-6)  # a latency-rate curve's S(t)/t never falls


def test_convergence_time_and_autocorrelation_helpers():
    est = estimate_service_curve([1e6, 2e6], [0.01, 0.1], 0.05)
    t90 = M.convergence_time(est)
    assert float(est.alpha([t90])[0]) == pytest.approx(0.9 * 2e6)
    x = np.sin(np.arange(1000) * 2 * math.pi / 100)
    acf = M.autocorrelation(x, 100)
    assert acf[0] == pytest.approx(1.0)
    assert acf[100] > 0.8 and acf[50] < -0.8
    assert M.decorrelation_lag(acf, 0.01) == pytest.approx(0.17, abs=0.02)


def test_top_k_and_merge_give_the_order_statistic():
    rng = np.random.default_rng(1)
    m = rng.random((4000, 3))
    k = L._top_k(4000)
    blocks = [{"top": np.sort(m[i:i + 1000], axis=0)[-k:], "reps": 1000} for i in range(0, 4000, 1000)]
    top, reps = R.merge_top(blocks, k)
    assert reps == 4000
    want = [delay_quantile(m[:, j], L.FIG6_EPS) for j in range(3)]
    assert np.allclose(top[0], want)


def test_pmap_keeps_order_in_a_pool():
    out = R.pmap(_square, [{"x": i} for i in range(5)], jobs=2)
    assert [o["y"] for o in out] == [0, 1, 4, 9, 16]


def test_pmap_names_a_bad_dask_scheduler(monkeypatch):
    from ccbench.sweep.spec import SweepError

    monkeypatch.setenv(R.DASK_ENV, "tcp://127.0.0.1:1")
    monkeypatch.setattr(R, "DASK_TIMEOUT_S", 1)
    with pytest.raises(SweepError, match="CCBENCH_DASK_SCHEDULER: cannot connect"):
        R.pmap(_square, [{"x": 1}])


def _square(task):
    return {"y": task["x"] ** 2}


def test_summary_reads_our_table_through_the_claims_extractor():
    import pandas as pd

    from ccbench.studies.catalogue import PAPERS
    from ccbench.studies.summary import _claims

    df = pd.DataFrame([
        {"item": "8", "quantity": "a", "setting": "", "ours": 1.0, "paper": 1.0, "unit": "", "agrees": "yes"},
        {"item": "8", "quantity": "b", "setting": "x", "ours": 2.0, "paper": "> 3", "unit": "", "agrees": "no"},
        {"item": "17", "quantity": "c", "setting": "", "ours": 2.0, "paper": "", "unit": "ms", "agrees": ""},
    ])
    status, text = _claims(df, "8")
    assert status == "partly" and "b (x): 2" in text
    assert _claims(df, "17")[0] == "not yet"
    # every catalogue key of the study names items the study writes
    keys = [it.key for p in PAPERS for it in p.items if it.study == "luebben"]
    assert keys and all(k.startswith("claims:") for k in keys)
    written = {"2", "4", "5a", "5b", "6", "8", "10", "11", "12", "13", "14a", "14b", "15a", "15b", "15d", "16a", "16b",
               "17"}
    assert {i for k in keys for i in k.split(":", 1)[1].split("|")} <= written


def test_full_plan_has_the_papers_sizes():
    full = L.plan(True)
    assert {t["fn"] for t in full} == set(R.TASKS)
    assert all(t["samples"] == 750 for t in full if t["fn"] == "estimate")
    assert sum(len(t["seeds"]) for t in full if t["fn"] == "video") == 150_000
    assert {t["r_acc_pps"] for t in full if t["fn"] == "ecn"} == {100, 800}
    assert len({(t["config"], t["seed"]) for t in full if t["fn"] == "fixed" and t.get("cwnd")}) == 20 * len(L.ACF_CONFIGS)
