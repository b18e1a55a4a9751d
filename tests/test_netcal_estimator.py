"""Estimator: quantiles, S̃^ε, pseudo-inverse, α̃, ε bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench.netcal import (
    NetcalError,
    ServiceCurveEstimate,
    attainable_rate,
    delay_quantile,
    estimate_service_curve,
    log_time_grid,
    service_curve,
    service_curve_inverse,
)


def test_quantile_is_the_ceil_order_statistic():
    x = np.arange(1, 101, dtype=float)[::-1]  # 100 … 1, unsorted on purpose
    assert delay_quantile(x, 0.05) == 95.0  # ⌈0.95·100⌉ = 95th smallest
    assert delay_quantile(x, 0.01) == 99.0
    assert delay_quantile(x, 0.5) == 50.0
    assert delay_quantile(x, 0.001) == 100.0  # ξ < 1/n: the maximum
    # 750 samples at ξ = 0.05: the 713th order statistic (note §4.7)
    y = np.random.default_rng(0).permutation(750).astype(float)
    assert delay_quantile(y, 0.05) == 712.0


def test_quantile_is_an_empirical_one_minus_xi_quantile():
    rng = np.random.default_rng(1)
    x = rng.exponential(size=1001)
    for xi in (0.3, 0.05, 0.01):
        q = delay_quantile(x, xi)
        assert np.mean(x <= q) >= 1 - xi
        assert np.mean(x < q) < 1 - xi


@pytest.mark.parametrize("xi", [0.0, 1.0, -0.1, 1.5, float("nan"), "a"])
def test_xi_outside_open_unit_interval_is_rejected(xi):
    with pytest.raises(NetcalError, match="xi"):
        delay_quantile([1.0, 2.0], xi)
    with pytest.raises(NetcalError, match="xi"):
        estimate_service_curve([1e6], [0.01], xi)


def test_service_curve_is_max_of_latency_rate_segments():
    rates = [1e6, 4e6]
    d = [0.01, 0.05]
    t = np.array([0.0, 0.005, 0.01, 0.02, 0.05, 0.06, 0.1, 1.0])
    expected = np.maximum(np.maximum(1e6 * (t - 0.01), 4e6 * (t - 0.05)), 0.0)
    np.testing.assert_allclose(service_curve(t, rates, d), expected)
    # crossing point: 1e6(t − .01) = 4e6(t − .05) → t = 0.19/3
    tc = 0.19 / 3
    assert service_curve([tc - 1e-3], rates, d)[0] == pytest.approx(1e6 * (tc - 1e-3 - 0.01))
    assert service_curve([tc + 1e-3], rates, d)[0] == pytest.approx(4e6 * (tc + 1e-3 - 0.05))


def test_pseudo_inverse_matches_a_numeric_inverse():
    rates = [1e6, 3e6, 8e6]
    d = [0.02, 0.04, 0.1]
    x = np.array([0.0, 1.0, 1e3, 3e4, 2e5, 1e6, 5e6])
    inv = service_curve_inverse(x, rates, d)
    grid = np.linspace(0, 5, 500_001)
    s = service_curve(grid, rates, d)
    numeric = grid[np.searchsorted(s, x, side="left")]
    numeric[x <= 0] = 0.0
    np.testing.assert_allclose(inv, numeric, atol=2e-5)
    # S(S^{-1}(x)) = x for x > 0
    np.testing.assert_allclose(service_curve(inv[1:], rates, d), x[1:], rtol=1e-9)


def test_attainable_rate_and_estimate_bookkeeping():
    est = estimate_service_curve([3e6, 1e6, 2e6], [0.04, 0.03, 0.035], xi=0.05)
    assert isinstance(est, ServiceCurveEstimate)
    np.testing.assert_allclose(est.rates_bps, [1e6, 2e6, 3e6])  # sorted with their quantiles
    np.testing.assert_allclose(est.delay_quantiles_s, [0.03, 0.035, 0.04])
    assert est.n_rates == 3 and est.xi == 0.05
    assert est.eps == pytest.approx(0.15)
    assert not est.vacuous
    assert est.latency_s == 0.03
    assert est.long_term_rate_bps == 3e6
    # curve on the default log grid
    assert np.all(np.diff(np.log(est.t_grid_s)) > 0)
    np.testing.assert_allclose(est.curve_bits, service_curve(est.t_grid_s, est.rates_bps, est.delay_quantiles_s))
    np.testing.assert_allclose(est.alpha_bps[est.t_grid_s > 0], est.curve_bits[est.t_grid_s > 0] / est.t_grid_s[est.t_grid_s > 0])
    assert np.all(est.alpha([0.01, 0.03]) == 0.0)
    assert est.alpha([1e4])[0] == pytest.approx(3e6, rel=1e-4)
    assert np.all(np.diff(est.alpha(log_time_grid(0.031, 100, 50))) >= -1e-9)  # α̃ non-decreasing here
    f = est.to_frame()
    assert list(f.columns) == ["t_s", "S_bits", "alpha_bps"]
    assert "eps=0.15" in est.summary()
    assert attainable_rate([0.0], [1e6], [0.0])[0] == 0.0


def test_eps_can_exceed_one_and_is_flagged():
    est = estimate_service_curve(np.arange(1, 41) * 1e5, np.full(40, 0.01), xi=0.05)
    assert est.eps == pytest.approx(2.0)
    assert est.vacuous


def test_bad_curve_inputs():
    with pytest.raises(NetcalError):
        estimate_service_curve([], [], 0.1)
    with pytest.raises(NetcalError, match="length"):
        estimate_service_curve([1e6, 2e6], [0.1], 0.1)
    with pytest.raises(NetcalError, match="positive"):
        estimate_service_curve([-1e6], [0.1], 0.1)
    with pytest.raises(NetcalError, match="distinct"):
        estimate_service_curve([1e6, 1e6], [0.1, 0.2], 0.1)
    with pytest.raises(NetcalError):
        log_time_grid(0.0, 1.0)
