"""Validity of the estimate on a latency-rate server with random service.

The server is slotted (1 ms): in each slot it serves c_on = 20 Mbit/s with
probability 1/2 and nothing otherwise (mean 10 Mbit/s), then adds a fixed latency of
L = 10 slots. Its service process is S(m, n) = U_{n−L} − U_m (m ≤ n − L, else 0), with
U the cumulative service. For every repetition the probing runs on fresh constant-rate
trains through this server; the ε-effective curve must then satisfy the sample-path
definition (paper Eq. 4), S(m, n) ≥ S̃(n − m) for all m ≤ n, on an independent
realisation with probability ≥ 1 − ε.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from ccbench.netcal import ProbingConfig, analyse_probes, delay_quantile, service_curve

DELTA = 1e-3
L = 10
C_ON = 20e6
P_ON = 0.5


def service_increments(n, rng):
    return C_ON * DELTA * (rng.random(n) < P_ON)


def cbr_delays(rate, n, rng):
    """Delays of the bits that arrive in each slot of a CBR train at ``rate``.

    Discrete-time min-plus: D_n = min_{m ≤ n} {A_m + S(m, n)} = G_{n−L} with
    G_k = U_k + min_{m ≤ k} (A_m − U_m); the delay of slot n's arrivals is
    min{d : D_{n+d} ≥ A_n}.
    """
    u = np.concatenate([[0.0], np.cumsum(service_increments(n, rng))])
    a = rate * DELTA * np.arange(n + 1)
    g = u + np.minimum.accumulate(a - u)
    d = np.concatenate([np.zeros(L), g[: n + 1 - L]])
    j = np.searchsorted(d, a - 1e-6, side="left")
    ok = j <= n
    ok[0] = False  # A_0 = 0: no bits arrive in slot 0
    idx = np.arange(n + 1)[ok]
    return idx * DELTA, (j[ok] - idx) * DELTA


def violates(rates, quantiles, rng, n=5000):
    """Does a fresh service path break S(m, n) ≥ S̃(n − m) for some m?"""
    u = np.concatenate([[0.0], np.cumsum(service_increments(n, rng))])
    m = np.arange(n + 1)
    s = np.where(m <= n - L, u[n - L] - u[np.minimum(m, n - L)], 0.0)
    return bool(np.any(s < service_curve((n - m) * DELTA, rates, quantiles) - 1e-6))


def run_repetitions(n_rep, seed):
    rng = np.random.default_rng(seed)
    cfg = ProbingConfig(samples=250, mean_gap=4, warmup_fraction=0.05, max_extensions=15, seed=seed)
    xi = 0.01
    bad = bad_median = 0
    eps, long_term = [], []
    for _ in range(n_rep):
        trains = {j * 1e6: cbr_delays(j * 1e6, 20_000, rng) for j in range(1, 12)}
        res = analyse_probes(trains, xi, 1e6, cfg)
        est = res.estimate()
        eps.append(est.eps)
        long_term.append(est.long_term_rate_bps)
        assert est.eps == pytest.approx(xi * est.n_rates)
        assert est.latency_s >= L * DELTA  # every delay includes the fixed latency
        path_seed = rng.integers(2**63)
        bad += violates(est.rates_bps, est.delay_quantiles_s, np.random.default_rng(path_seed))
        # The same samples with medians instead of (1 − ξ)-quantiles: far too optimistic.
        med = [delay_quantile(o.samples_s, 0.5) for o in res.accepted]
        bad_median += violates(est.rates_bps, med, np.random.default_rng(path_seed))
    return bad, bad_median, float(np.mean(eps)), np.array(long_term)


def _check(n_rep, seed):
    bad, bad_median, eps, long_term = run_repetitions(n_rep, seed)
    # Violations are Binomial(n_rep, p) with p ≤ ε: reject only far in the tail.
    assert bad <= stats.binom.ppf(0.999, n_rep, eps), (bad, n_rep, eps)
    # The check has power: the median curve is violated much more often.
    assert bad_median >= 0.5 * n_rep > bad
    # Not a trivial bound: most repetitions reach 7-9 Mbit/s (mean capacity 10).
    assert np.median(long_term) >= 7e6
    assert np.all(long_term <= 10e6)


def test_estimate_is_a_valid_lower_bound_at_stated_eps():
    _check(n_rep=30, seed=11)


@pytest.mark.slow
def test_estimate_is_a_valid_lower_bound_many_repetitions():
    _check(n_rep=400, seed=12)
