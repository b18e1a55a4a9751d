"""Bounds: per-packet delay and backlog bounds, empirical envelope, envelope bounds."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ccbench.netcal import (
    NetcalError,
    delay_bounds,
    empirical_envelope,
    envelope_backlog_bound,
    envelope_delay_bound,
    estimate_service_curve,
    per_packet_backlog_bound,
    per_packet_delay_bound,
)

RATES = np.array([1e6, 3e6, 6e6])
DELAYS = np.array([0.01, 0.03, 0.08])


def S(u):
    u = np.asarray(u, dtype=float)
    return np.max(np.maximum(RATES[:, None] * (u[None, :] - DELAYS[:, None]), 0.0), axis=0)


def brute_force(t, b_bytes):
    """Delay and backlog bounds from the definitions, on a fine time grid per packet.

    Delay: the smallest d (grid 1 µs) with inf_τ {A(τ) + S(a_k + d − τ)} ≥ C_k, the
    infimum taken over τ at every arrival instant and just before it.
    """
    bits = 8.0 * np.asarray(b_bytes, dtype=float)
    cum = np.cumsum(bits)
    n = t.size
    A_at = lambda tau: np.array([bits[t <= x].sum() for x in tau])  # right-continuous A
    taus = np.unique(np.concatenate([t, t - 1e-12, [0.0]]))
    A_tau = A_at(taus)
    delay = np.zeros(n)
    backlog = np.zeros(n)
    for k in range(n):
        x = cum[k]
        d_grid = np.arange(0, 2.0, 1e-6)
        # departures lower bound at a_k + d for all d (vectorised over tau ≤ a_k + d)
        lo, hi = 0, d_grid.size - 1
        while lo < hi:  # binary search on the monotone departure bound
            mid = (lo + hi) // 2
            tt = t[k] + d_grid[mid]
            m = taus <= tt
            dep = np.min(A_tau[m] + S(tt - taus[m]))
            if dep >= x - 1e-6:
                hi = mid
            else:
                lo = mid + 1
        delay[k] = d_grid[lo]
        m = taus <= t[k]
        backlog[k] = max(0.0, np.max(A_at([t[k]])[0] - A_tau[m] - S(t[k] - taus[m])))
    return delay, backlog


def test_per_packet_bounds_match_the_definition():
    rng = np.random.default_rng(0)
    t = np.sort(rng.uniform(0, 0.5, 60))
    t[10:14] = t[10]  # a burst at one instant
    b = rng.integers(200, 1500, t.size)
    d_ref, b_ref = brute_force(t, b)
    d = per_packet_delay_bound(t, b, (RATES, DELAYS))
    np.testing.assert_allclose(d, d_ref, atol=2e-6)
    bl = per_packet_backlog_bound(t, b, (RATES, DELAYS))
    # right after a burst instant all its packets are in: compare the last of a group
    last = np.concatenate([t[1:] != t[:-1], [True]])
    np.testing.assert_allclose(bl[last], b_ref[last], rtol=1e-9, atol=1e-6)


def test_divide_and_conquer_equals_quadratic_formula_on_larger_traces():
    rng = np.random.default_rng(1)
    for _ in range(3):
        n = 1500
        t = np.cumsum(rng.exponential(1e-3, n))
        t[rng.integers(1, n, 50)] = t[rng.integers(1, n, 50)]  # some ties
        t = np.sort(t)
        b = rng.integers(100, 1500, n).astype(float)
        bits = 8 * b
        cum = np.cumsum(bits)
        first = np.searchsorted(t, t, side="left")
        before = (cum - bits)[first]
        x = cum[:, None] - before[None, :]
        inv = np.min(DELAYS[:, None, None] + x[None] / RATES[:, None, None], axis=0)
        full = inv - (t[:, None] - t[None, :])
        full[np.triu_indices(n, 1)] = -np.inf
        ref = np.maximum(full.max(axis=1), 0.0)
        np.testing.assert_allclose(per_packet_delay_bound(t, b, (RATES, DELAYS)), ref, rtol=1e-12, atol=1e-12)


def test_periodic_trace_through_latency_rate_curve_closed_form():
    # b bits every p seconds through R[t − T]^+ with b/R < p: every packet's bound is
    # T + b/R; backlog bound b(⌊T/p⌋ + 1); envelope bound the same as per packet.
    R, T, p, size = 10e6, 0.02, 0.004, 1250  # 10 kbit packets, 2.5 Mbit/s
    t = np.arange(500) * p
    b = np.full(t.size, size)
    d = per_packet_delay_bound(t, b, ([R], [T]))
    np.testing.assert_allclose(d, T + 8 * size / R, rtol=1e-12)
    env = empirical_envelope(t, b, lags_s=np.arange(0, 600) * p / 4)
    assert envelope_delay_bound(env, ([R], [T])) == pytest.approx(T + 8 * size / R)
    expected_backlog = 8 * size * (np.floor(T / p + 1e-9) + 1)
    assert per_packet_backlog_bound(t, b, ([R], [T])).max() == pytest.approx(expected_backlog)
    assert envelope_backlog_bound(env, ([R], [T])) == pytest.approx(expected_backlog)
    # a burst of 5 packets at one instant: the k-th waits for k packets
    tb = np.zeros(5)
    np.testing.assert_allclose(per_packet_delay_bound(tb, np.full(5, size), ([R], [T])),
                               T + 8 * size * np.arange(1, 6) / R)


def test_envelope_matches_brute_force_and_dominates_per_packet_bounds():
    rng = np.random.default_rng(2)
    t = np.sort(rng.uniform(0, 2.0, 400))
    b = rng.integers(100, 1500, t.size)
    lags = np.linspace(0, 2.0, 101)
    env = empirical_envelope(t, b, lags_s=lags)
    bits = 8.0 * b
    for u, e in zip(lags, env.bits):
        ref = max(bits[(t >= s) & (t <= s + u)].sum() for s in t)
        assert e == pytest.approx(ref)
    assert np.all(np.diff(env.bits) >= 0)
    assert env(0.0) == env.bits[0]
    assert env(lags[3] + 1e-9) == env.bits[4]  # conservative between grid points
    curve = estimate_service_curve(RATES, DELAYS, xi=0.01)
    res = delay_bounds(t, b, curve)
    assert res.eps == pytest.approx(0.03)
    assert res.envelope_delay_s >= res.max_per_packet_delay_s - 1e-12
    assert res.envelope_backlog_bits >= res.backlog_bits - 1e-6
    # finer grids tighten the (conservative) envelope bound towards the exact one
    coarse = envelope_delay_bound(empirical_envelope(t, b, n_lags=16), curve)
    fine = envelope_delay_bound(empirical_envelope(t, b, n_lags=2048), curve)
    assert coarse >= fine - 1e-12 >= res.max_per_packet_delay_s - 1e-9


def test_forty_thousand_packet_trace_runs_in_seconds():
    rng = np.random.default_rng(3)
    n = 40_000
    # VBR-like: 2000 packets/s on average, bursty frame arrivals, ~4.6 Mbit/s
    t = np.sort(np.repeat(np.arange(n // 8) * 0.004, 8) + rng.exponential(2e-4, n))
    b = rng.integers(100, 1500, n)
    curve = estimate_service_curve(np.arange(1, 10) * 1e6, np.linspace(0.03, 0.2, 9), xi=0.01)
    t0 = time.perf_counter()
    d = per_packet_delay_bound(t, b, curve)
    t_pp = time.perf_counter() - t0
    t0 = time.perf_counter()
    res = delay_bounds(t, b, curve)
    t_all = time.perf_counter() - t0
    assert d.shape == (n,) and np.all(np.isfinite(d)) and np.all(d >= 0.03)
    assert t_pp < 5.0, f"per-packet bound took {t_pp:.2f} s"
    assert t_all < 10.0, f"all bounds took {t_all:.2f} s"
    # spot-check a few packets against the O(k) formula
    bits = 8.0 * b
    cum = np.cumsum(bits)
    first = np.searchsorted(t, t, side="left")
    before = (cum - bits)[first]
    for k in rng.integers(0, n, 5):
        inv = curve.inverse(cum[k] - before[: k + 1]) - (t[k] - t[: k + 1])
        assert d[k] == pytest.approx(max(0.0, inv.max()), abs=1e-12)
    assert res.envelope_delay_s >= d.max() - 1e-12


def test_bad_trace_inputs():
    with pytest.raises(NetcalError, match="unsorted timestamps"):
        per_packet_delay_bound([0.0, 0.2, 0.1], [100, 100, 100], (RATES, DELAYS))
    with pytest.raises(NetcalError, match="positive"):
        per_packet_delay_bound([0.0, 0.1], [100, 0], (RATES, DELAYS))
    with pytest.raises(NetcalError, match="empty"):
        per_packet_delay_bound([], [], (RATES, DELAYS))
    with pytest.raises(NetcalError, match="ServiceCurveEstimate"):
        per_packet_delay_bound([0.0], [100], 5.0)
