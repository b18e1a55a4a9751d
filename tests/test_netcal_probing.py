"""Probing: DF-GLS, runs test, sampling, extension and thinning, stop rule, planning."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.sandbox.stats.runs import runstest_1samp

from ccbench.netcal import (
    NetcalError,
    ProbingConfig,
    analyse_probes,
    analyse_train,
    check_samples,
    plan_probe_schedule,
    runs_test,
)
from ccbench.netcal.probing import sample_positions


def ar1(n, phi, rng, mean=0.02, sd=0.001):
    x = np.empty(n)
    x[0] = 0.0
    e = rng.normal(size=n)
    for i in range(1, n):
        x[i] = phi * x[i - 1] + e[i]
    return mean + sd * x


def test_runs_test_matches_statsmodels_on_continuous_data():
    rng = np.random.default_rng(0)
    for x in (rng.normal(size=500), np.sin(np.arange(400) / 7.0) + 0.1 * rng.normal(size=400)):
        z, p = runs_test(x)
        # statsmodels codes x >= median as 1; without ties that equals x > median
        # except at the median itself (odd n) — use an even n so no value equals it.
        z_sm, p_sm = runstest_1samp(x, cutoff="median", correction=False)
        assert z == pytest.approx(z_sm, rel=1e-9)
        assert p == pytest.approx(p_sm, rel=1e-9)


def test_runs_test_detects_dependence_and_handles_ties():
    rng = np.random.default_rng(1)
    assert runs_test(ar1(750, 0.95, rng))[1] < 1e-6
    assert runs_test(rng.normal(size=750))[1] > 1e-3
    # 90 % of the delays at the propagation delay: ties count as "below"
    x = np.where(rng.random(750) < 0.9, 0.01, 0.01 + rng.exponential(0.005, 750))
    z, p = runs_test(x)
    assert np.isfinite(z) and p > 1e-3
    assert runs_test(np.full(10, 1.0)) == (0.0, 1.0)


def test_stationarity_and_independence_decisions():
    rng = np.random.default_rng(2)
    iid = check_samples(0.02 + 0.001 * rng.normal(size=750))
    assert iid.stationary and iid.independent
    walk = check_samples(0.02 + 0.001 * np.cumsum(rng.normal(size=750)))
    assert not walk.stationary
    ramp = check_samples(0.02 + 1e-4 * np.arange(750) + 1e-3 * rng.random(750))
    assert not ramp.stationary  # overload: growing delays
    dep = check_samples(ar1(750, 0.9, rng))
    assert dep.stationary and not dep.independent
    const = check_samples(np.full(750, 0.05))
    assert const.stationary and const.independent and const.note == "constant samples"


def test_extension_and_thinning_keep_every_e_plus_1th_sample():
    rng = np.random.default_rng(3)
    delays = ar1(40_000, 0.9, rng)
    cfg = ProbingConfig(samples=300, sampling="systematic", mean_gap=1, warmup_fraction=0.0, seed=5)
    o = analyse_train(1e6, delays, 0.05, None, cfg)
    assert o.status == "accepted"
    assert o.extensions >= 1  # AR(0.9) consecutive samples are dependent
    e = o.extensions
    # Systematic sampling with gap 1 and offset 0: the (e+1)·I samples are the first
    # (e+1)·I packets, and the kept subset is every (e+1)-th, starting at index e.
    expected = delays[: (e + 1) * 300][e :: e + 1]
    np.testing.assert_array_equal(o.samples_s, expected)
    assert o.samples_s.size == 300
    assert o.quantile_s == np.sort(expected)[int(np.ceil(0.95 * 300)) - 1]
    of = analyse_train(1e6, delays, 0.05, None, ProbingConfig(
        samples=300, sampling="systematic", mean_gap=1, warmup_fraction=0.0, thinning="first"))
    assert of.accepted
    np.testing.assert_array_equal(of.samples_s, delays[: (of.extensions + 1) * 300][:: of.extensions + 1])
    # Without extensions allowed the same train is rejected as dependent.
    o0 = analyse_train(1e6, delays, 0.05, None, ProbingConfig(
        samples=300, sampling="systematic", mean_gap=1, warmup_fraction=0.0, max_extensions=0))
    assert o0.status == "dependent"
    oa = analyse_train(1e6, delays, 0.05, None, ProbingConfig(
        samples=300, sampling="systematic", mean_gap=1, warmup_fraction=0.0, max_extensions=0,
        on_exhausted="accept"))
    assert oa.status == "accepted_dependent" and oa.accepted


def test_too_short_train_and_geometric_sampling():
    rng = np.random.default_rng(4)
    cfg = ProbingConfig(samples=100)
    o = analyse_train(1e6, rng.normal(0.02, 0.001, 150), 0.05, None, cfg)
    assert o.status == "too_short" and not o.accepted and "too short" in o.reason
    pos = sample_positions(100_000, ProbingConfig(mean_gap=4.0), np.random.default_rng(0))
    assert np.all(np.diff(pos) >= 1) and pos[-1] < 100_000
    assert np.mean(np.diff(pos)) == pytest.approx(4.0, rel=0.03)


def test_warmup_is_dropped_by_send_time():
    # A slow-start-like transient in the first second must not enter the samples.
    t = np.arange(20_000) * 1e-3
    rng = np.random.default_rng(5)
    d = 0.02 + 0.001 * rng.random(t.size)
    d[t < 1.0] = 5.0
    o = analyse_train(1e6, d, 0.05, t, ProbingConfig(samples=200, warmup_fraction=0.0, warmup_s=1.0))
    assert o.accepted and o.quantile_s < 0.1
    o2 = analyse_train(1e6, d, 0.05, t, ProbingConfig(samples=200, warmup_fraction=0.0, warmup_s=0.0, seed=1))
    # without warm-up removal the first samples all fall into the transient
    assert o2.accepted and o2.quantile_s == 5.0


def test_stop_rule_and_rate_grid():
    rng = np.random.default_rng(6)
    n = 4000
    trains = {}
    for j in range(1, 6):
        if j <= 3:
            d = 0.01 + 0.002 * rng.random(n) * j
        else:  # overload: delays grow
            d = 0.01 + 1e-4 * j * np.arange(n) + 0.002 * rng.random(n)
        trains[j * 1e6] = (np.arange(n) * 0.001, d)
    res = analyse_probes(trains, 0.05, r_acc_bps=1e6, config=ProbingConfig(samples=300))
    assert [o.status for o in res.outcomes] == ["accepted"] * 3 + ["nonstationary", "not_analysed"]
    assert res.stop_rate_bps == 4e6
    assert res.eps == pytest.approx(0.15)
    est = res.estimate()
    np.testing.assert_allclose(est.rates_bps, [1e6, 2e6, 3e6])
    assert est.probing is res
    assert len(res.to_frame()) == 5
    with pytest.raises(NetcalError, match="expected 2e\\+06"):
        analyse_probes({1e6: trains[1e6], 3e6: trains[3e6]}, 0.05, r_acc_bps=1e6)
    # all rates stationary: the result warns that the range may be too small
    res2 = analyse_probes({1e6: trains[1e6], 2e6: trains[2e6]}, 0.05, config=ProbingConfig(samples=300))
    assert res2.stop_rate_bps is None and res2.warnings


def test_no_stationary_rate_at_all_is_an_error():
    n = 3000
    trains = {1e6: (None, 0.01 + 1e-3 * np.arange(n) + 1e-3 * np.random.default_rng(7).random(n))}
    res = analyse_probes(trains, 0.05, config=ProbingConfig(samples=300))
    with pytest.raises(NetcalError, match="no probe rate showed a stationary.*1e\\+06 bit/s was nonstationary"):
        res.estimate()


def test_config_validation():
    with pytest.raises(NetcalError, match="sampling"):
        ProbingConfig(sampling="poisson")
    with pytest.raises(NetcalError, match="mean_gap"):
        ProbingConfig(mean_gap=0.5)
    with pytest.raises(NetcalError, match="samples"):
        ProbingConfig(samples=5)
    with pytest.raises(NetcalError, match="alpha_stationarity"):
        ProbingConfig(alpha_stationarity=0.0)
    with pytest.raises(NetcalError, match="on_exhausted"):
        ProbingConfig(on_exhausted="maybe")
    with pytest.raises(NetcalError, match="thinning"):
        ProbingConfig(thinning="middle")
    with pytest.raises(NetcalError, match="runs_cutoff"):
        ProbingConfig(runs_cutoff="mode")


def test_plan_probe_schedule():
    cfg = ProbingConfig(samples=750, mean_gap=2.0, warmup_fraction=0.1)
    sched = plan_probe_schedule(1e6, 10.5e6, packet_bytes=1500, config=cfg, planned_extensions=4)
    np.testing.assert_allclose(sched.rates_bps, np.arange(1, 11) * 1e6)
    s1 = sched.steps[0]
    assert s1.interval_s == pytest.approx(0.012)
    assert s1.n_packets == int(np.ceil(750 * 2 * 5 * 1.2 / 0.9))
    assert s1.warmup_packets == int(np.ceil(0.1 * s1.n_packets))
    assert s1.duration_s == pytest.approx(s1.n_packets * 0.012)
    # A train planned this way holds enough samples for the planned extensions.
    pos = sample_positions(s1.n_packets - s1.warmup_packets, cfg, np.random.default_rng(0))
    assert pos.size >= 5 * 750
    long = plan_probe_schedule(1e6, 2e6, min_train_s=600.0)
    assert all(s.duration_s >= 600.0 for s in long.steps)
    assert len(sched.to_frame()) == 10 and sched.total_duration_s > 0
    with pytest.raises(NetcalError):
        plan_probe_schedule(1e6, 0.5e6)
    with pytest.raises(NetcalError):
        plan_probe_schedule(0.0, 1e6)


def test_stationarity_retries_recover_from_a_large_first_sample():
    # DF-GLS detrending leans on the first observation: one huge initial delay in an
    # otherwise i.i.d. train hides stationarity. The paper's rule (no retries) stops;
    # a retry thins to samples[1::2], which drops that observation.
    rng = np.random.default_rng(0)
    d = 0.02 + 0.001 * rng.random(3000)
    d[0] = 0.5
    base = dict(samples=300, sampling="systematic", mean_gap=1, warmup_fraction=0.0)
    strict = analyse_train(1e6, d, 0.05, None, ProbingConfig(stationarity_retries=0, **base))
    assert strict.status == "nonstationary" and strict.extensions == 0
    retry = analyse_train(1e6, d, 0.05, None, ProbingConfig(**base))
    assert retry.status == "accepted" and retry.extensions == 1
    np.testing.assert_array_equal(retry.samples_s, d[:600][1::2])
    # an overloaded train fails every retry
    ramp = 0.02 + 1e-4 * np.arange(3000) + 0.001 * rng.random(3000)
    o = analyse_train(1e6, ramp, 0.05, None, ProbingConfig(**base))
    assert o.status == "nonstationary" and o.extensions == 2
