"""Tests of the Weigle et al. (2009) LB-CC stochastic transfer-time model."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from ccbench.models.weigle import (
    WeigleParams,
    build_chain,
    cli,
    find_n_eps,
    hstcp_a_b,
    hstcp_gamma,
    make_protocol,
    n_delta,
    q_hat,
    simulate_chain,
    table1_computed_pt,
    timeout_duration,
    transfer_time,
    window_grid,
)

# --------------------------------------------------------------------------------------
# recursion vs an independent Monte Carlo of the same semi-Markov chain
# --------------------------------------------------------------------------------------

MC_CASES = {
    # the note's prototype check (Section 2.10): Reno, Delta = 0.05, K = L = 20
    "reno-note": dict(protocol="reno", loss=0.02, rtt_s=0.1, t0_s=1.0, w_max=20, rate_bps=10e6, grid_step=0.05),
    "reno-threshold-exit": dict(protocol="reno", loss=0.05, rtt_s=0.1, t0_s=1.0, w_max=15, ss_exit="threshold",
                                grid_step=0.3),
    "tahoe-corrected": dict(protocol="tahoe", loss=0.03, rtt_s=0.1, t0_s=0.5, w_max=30, grid_step=0.5),
    "tahoe-printed": dict(protocol="tahoe", semantics="printed", loss=0.03, rtt_s=0.1, t0_s=0.5, w_max=30,
                          grid_step=0.5),
    "scalable": dict(protocol="scalable", loss=0.01, rtt_s=0.05, t0_s=0.5, w_max=60, low_window=10,
                     grid_step=0.25),
    "highspeed-printed": dict(protocol="highspeed", semantics="printed", loss=0.005, rtt_s=0.05, t0_s=0.5,
                              w_max=120, low_window=20, grid_step=0.5),
    "reno-default-grid": dict(protocol="reno", loss=0.01, rtt_s=0.1, t0_s=1.0, w_max=40, rate_bps=5e6),
    "srf-observed-pT": dict(protocol="srf", loss=0.01, p_timeout=0.003, rtt_s=0.05, t0_s=0.5, w_max=80,
                            low_window=25, grid_step=0.5, rate_bps=50e6),
}


@pytest.mark.parametrize("case", sorted(MC_CASES))
def test_recursion_matches_monte_carlo(case):
    params = WeigleParams(**MC_CASES[case])
    # n = 700 > the history-buffer compaction interval (>= 257 levels) for the Tahoe case
    checkpoints = [5, 40, 700] if case == "tahoe-corrected" else [5, 40, 150]
    res = transfer_time(params, max(checkpoints))
    mc = simulate_chain(params, checkpoints, runs=20_000, seed=12345)
    mean = res.mean_s[np.array(checkpoints) - 1]
    var = res.var_s2[np.array(checkpoints) - 1]
    z_mean = (mc.mean_s - mean) / mc.se_mean
    z_var = (mc.var_s2 - var) / mc.se_var
    assert np.all(np.abs(z_mean) < 3.0), (case, z_mean)
    assert np.all(np.abs(z_var) < 3.0), (case, z_var)


def test_note_prototype_numbers():
    """Section 2.10 prototype: mean 2.279 s, variance 2.280 s^2 at n = 100."""
    res = transfer_time(WeigleParams(**MC_CASES["reno-note"]), 100)
    assert res.mean_at(100) == pytest.approx(2.279, abs=0.001)
    assert res.var_at(100) == pytest.approx(2.280, abs=0.001)


def test_lossless_closed_form():
    """p = 0: deterministic slow start 1, 2, ..., K then CA at K; T_n = sum alpha(w_k), V = 0."""
    params = WeigleParams(protocol="reno", loss=0.0, rtt_s=0.1, t0_s=1.0, w_max=50, rate_bps=10e6, grid_step=0.5)
    res = transfer_time(params, 300)
    w = np.minimum(np.arange(1, 301), 50.0)
    expected = np.cumsum(np.maximum(0.1 / w, 8 * 1460 / 10e6))
    np.testing.assert_allclose(res.mean_s, expected, rtol=1e-12)
    assert np.max(np.abs(res.var_s2)) < 1e-9


def test_solvers_agree():
    params = WeigleParams(protocol="scalable", loss=0.01, rtt_s=0.05, t0_s=0.5, w_max=200, low_window=16)
    a = transfer_time(params, 2000, solver="doubling")
    b = transfer_time(params, 2000, solver="lu")
    assert a.solver == "doubling" and b.solver == "lu"
    np.testing.assert_allclose(a.mean_s, b.mean_s, rtol=1e-11)
    np.testing.assert_allclose(a.var_s2, b.var_s2, rtol=1e-8)


# --------------------------------------------------------------------------------------
# Table 1 and the timeout formulas
# --------------------------------------------------------------------------------------

# Fig., observed p (%), computed p_T (%), observed p_T (%)
TABLE1 = [(1, 0.994, 0.059, 0.983), (2, 0.994, 0.059, 0.077), (3, 0.989, 0.058, 0.063), (4, 0.991, 0.058, 0.186),
          (5, 0.093, 0.001, 0.002), (6, 2.938, 0.479, 0.370), (7, 4.961, 1.306, 0.960)]


def test_table1_computed_pt_column():
    """Table 1's "computed p_T" is p * Qhat(w) for large w, p (1 - (1-p)^6).

    The printed column is reproduced to within 2 units of its last printed digit
    (0.002 percentage points) in every row; exactly (after rounding to 3 decimals)
    in row 5.  No window reproduces row 6 exactly: p * Qhat(w) > p (1 - (1-p)^6)
    = 0.4813 % for every w, above the printed 0.479 %.
    """
    diffs = []
    for fig, p_obs, pt_printed, _ in TABLE1:
        pt = 100 * table1_computed_pt(p_obs / 100)
        diffs.append(round(pt, 3) - pt_printed)
        assert abs(pt - pt_printed) <= 0.0025, (fig, pt, pt_printed)
    assert round(100 * table1_computed_pt(0.00093), 3) == 0.001
    # the bound behind row 6: Qhat(w) > 1 - (1-p)^6 for all w
    p = 0.02938
    w = np.arange(4, 5000)
    assert np.all(q_hat(w, p) >= (1 - (1 - p) ** 6) * (1 - 1e-12))
    assert np.all(q_hat(w[:500], p) > 1 - (1 - p) ** 6)
    assert 100 * p * (1 - (1 - p) ** 6) > 0.479
    # computed p_T is far below the observed p_T at 56 kbit/s (Fig. 1) where windows are tiny:
    # there p_T(w) = p * Qhat(1) = p, i.e. every loss is a timeout
    assert q_hat(np.array([1.0, 2.0, 3.0]), 0.00994).tolist() == [1.0, 1.0, 1.0]
    assert max(abs(d) for d in diffs) <= 0.0021


def test_qhat_and_tto():
    p = 0.01
    # Eq. 19 large-w limit and ~3/w behaviour for moderate w
    assert q_hat(np.array([1e6]), p)[0] == pytest.approx(1 - (1 - p) ** 6, rel=1e-9)
    assert q_hat(np.array([30.0]), 0.001)[0] == pytest.approx(3 / 30, rel=0.1)
    # Eq. 20
    assert timeout_duration(1.0, 0.0) == 1.0
    assert timeout_duration(2.0, 0.1) == pytest.approx(
        2.0 * (1 + 0.1 + 2e-2 + 4e-3 + 8e-4 + 16e-5 + 32e-6) / 0.9)


# --------------------------------------------------------------------------------------
# protocol library
# --------------------------------------------------------------------------------------

def test_hstcp_matches_rfc3649():
    """RFC 3649 table rows (w, a(w), b(w)): (38, 1, .50), (118, 2, .44), (221, 3, .41)."""
    a, b = hstcp_a_b(np.array([38.0001, 118.0, 221.0]))
    np.testing.assert_allclose(a, [1, 2, 3], atol=0.06)
    np.testing.assert_allclose(b, [0.50, 0.44, 0.41], atol=0.005)
    # per-ACK gamma = a(w)/w and continuity with Reno's 1/w at L = 38
    w = np.array([200.0, 1000.0])
    np.testing.assert_allclose(hstcp_gamma(w), hstcp_a_b(w)[0] / w, rtol=1e-12)
    assert hstcp_gamma(np.array([38.0]))[0] == pytest.approx(1 / 38, rel=0.06)
    corr = make_protocol("highspeed", "corrected")
    prin = make_protocol("highspeed", "printed")
    w = np.array([1000.0])
    _, bw = hstcp_a_b(w)
    assert corr.dup_ca_w(w)[0] == pytest.approx((1 - bw[0]) * 1000)   # keeps 1 - b(w)
    assert prin.dup_ca_w(w)[0] == pytest.approx(bw[0] * 1000)         # literal lambda(W) W cut


def test_protocol_semantics():
    w = np.array([10.0, 100.0, 400.0])
    st_c, st_p = make_protocol("scalable", "corrected"), make_protocol("scalable", "printed")
    np.testing.assert_allclose(st_c.dup_ca_w(w), [5.0, 87.5, 350.0])
    np.testing.assert_allclose(st_p.dup_ca_w(w), [5.0, 12.5, 50.0])
    np.testing.assert_allclose(st_c.to_ca_s(w), [5.0, 16.0, 16.0])        # min{W/2, L}
    np.testing.assert_allclose(st_p.to_ca_s(w), [5.0, 84.0, 384.0])       # W - min{W/2, L}
    srf = make_protocol("srf")
    assert srf.low_window == pytest.approx(900.0)
    np.testing.assert_allclose(srf.dup_ca_w(np.array([900.0, 1e4])), [450.0, 1e4 - 1500.0])
    tc, tp = make_protocol("tahoe", "corrected"), make_protocol("tahoe", "printed")
    assert tc.dup_to_slow_start and not tp.dup_to_slow_start
    assert make_protocol("reno", w_max=64).low_window == 64


def test_semantics_change_results_in_expected_direction():
    base = dict(loss=0.02, rtt_s=0.1, t0_s=1.0, w_max=40, grid_step=0.5)
    t_c = transfer_time(WeigleParams(protocol="tahoe", semantics="corrected", **base), 500).mean_at(500)
    t_p = transfer_time(WeigleParams(protocol="tahoe", semantics="printed", **base), 500).mean_at(500)
    assert t_c < t_p          # (1, W/2) slow start beats congestion avoidance from (1, 1)
    base = dict(loss=0.001, rtt_s=0.05, t0_s=1.0, w_max=300, low_window=16)
    s_c = transfer_time(WeigleParams(protocol="scalable", semantics="corrected", **base), 5000).mean_at(5000)
    s_p = transfer_time(WeigleParams(protocol="scalable", semantics="printed", **base), 5000).mean_at(5000)
    assert s_c < s_p          # keeping 0.875 W beats keeping 0.125 W


def test_window_grid_and_chain():
    g = window_grid(1000, None)
    assert g[0] == 1 and g[-1] == 1000 and np.all(np.diff(g) > 0) and np.diff(g).max() < 0.0105 * 1000
    u = window_grid(100, 0.5)
    assert u.size == 199 and np.allclose(np.diff(u), 0.5)
    ch = build_chain(WeigleParams(protocol="reno", w_max=100, loss=0.01))
    assert ch.c_max == 100 and ch.initial_entry >= 0
    ch = build_chain(WeigleParams(protocol="highspeed", w_max=1000, loss=0.01))
    assert ch.c_max == 38


# --------------------------------------------------------------------------------------
# early stopping, N_eps, Theta_n, N_delta
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("proto,K,p", [("reno", 86, 0.01), ("tahoe", 40, 0.03)])
def test_early_stop_extrapolation_within_0p1_percent(proto, K, p):
    params = WeigleParams(protocol=proto, loss=p, rtt_s=0.1, t0_s=1.0, w_max=K, rate_bps=10e6)
    full = transfer_time(params, 10_000)
    es = transfer_time(params, 10_000, early_stop=True)
    assert es.n_eps is not None and es.n_eps < 10_000 and es.n_computed == es.n_eps
    assert es.n_eps == full.n_eps == find_n_eps(full.mean_s)
    assert abs(es.mean_at(10_000) / full.mean_at(10_000) - 1) < 1e-3
    assert abs(es.var_at(10_000) / full.var_at(10_000) - 1) < 1e-3


def test_theta_and_n_delta():
    params = WeigleParams(protocol="reno", loss=0.01, rtt_s=0.1, t0_s=1.0, w_max=86, rate_bps=10e6)
    res = transfer_time(params, 10_000, early_stop=True)
    theta = res.theta_bps()
    assert theta[-1] == pytest.approx(8 * 1460 * 10_000 / res.mean_at(10_000))
    nd = [n_delta(res, d) for d in (0.01, 0.03, 0.05, 0.1)]
    assert nd == sorted(nd, reverse=True) and nd[-1] > 1
    rel = np.abs(theta[: 10_000] - theta[9_999]) / theta[9_999]
    assert np.all(rel[nd[-1] - 1:] < 0.1) and rel[nd[-1] - 2] >= 0.1
    with pytest.raises(ValueError, match="delta"):
        n_delta(res, 1.5)
    # switches for the printed readings: absolute N_delta in bit/s, signed N_eps test
    nd_abs = n_delta(res, 0.05 * theta[9_999], relative=False)
    assert nd_abs == n_delta(res, 0.05)
    assert find_n_eps(res.mean_s, 1e-12, "signed", eps_run=1) == 3     # fires during slow start
    assert transfer_time(params, 10_000, early_stop=True, eps_test="signed", eps_run=1).n_computed == 3


def test_single_eps_test_fires_at_a_turning_point():
    """psi_n has a minimum after slow start; the paper's single test (eps_run=1) stops there."""
    params = WeigleParams(protocol="srf", semantics="printed", loss=1e-4, rtt_s=0.1, t0_s=1.0, w_max=1000,
                          rate_bps=1e9)
    full = transfer_time(params, 10_000)
    n1 = find_n_eps(full.mean_s, 1e-12, eps_run=1)
    assert n1 is not None and 900 < n1 < 1100
    assert find_n_eps(full.mean_s, 1e-12) is None          # default eps_run=10 does not fire
    es = transfer_time(params, 10_000, early_stop=True, eps_run=1)
    assert es.n_eps == n1
    assert abs(es.mean_at(10_000) / full.mean_at(10_000) - 1) > 0.05   # premature stop is badly off
    with pytest.raises(ValueError, match="eps_run"):
        transfer_time(params, 10, eps_run=0)


# --------------------------------------------------------------------------------------
# input validation
# --------------------------------------------------------------------------------------

@pytest.mark.parametrize("kw,name", [
    (dict(loss=1.2), "loss"), (dict(rtt_s=0), "rtt_s"), (dict(t0_s=-1), "t0_s"), (dict(w_max=0.5), "w_max"),
    (dict(protocol="cubic"), "protocol"), (dict(semantics="literal"), "semantics"),
    (dict(ss_exit="middle"), "ss_exit"), (dict(p_timeout=0.5, loss=0.01), "p_timeout"),
    (dict(rate_bps=-1), "rate_bps"), (dict(low_window=0), "low_window"), (dict(grid_step=0), "grid_step"),
])
def test_validation_messages(kw, name):
    with pytest.raises(ValueError) as exc:
        WeigleParams(**kw)
    msg = str(exc.value)
    assert msg.startswith(f"{name}=") and "accepted" in msg


def test_validation_n_bytes_and_printed_pt():
    with pytest.raises(ValueError, match=r"n=0 is invalid"):
        transfer_time(WeigleParams(), 0)
    params, n = WeigleParams.from_bytes(1_000_000, mss_bytes=1460)
    assert n == math.ceil(1_000_000 / 1460)
    with pytest.raises(ValueError, match="timeout_prob"):
        transfer_time(WeigleParams(timeout_prob="printed", loss=0.01), 10)


# --------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------

def _app():
    app = typer.Typer()
    app.command()(cli)
    return app


def test_cli_table_and_plot(tmp_path):
    out = tmp_path / "t.png"
    r = CliRunner().invoke(_app(), ["--protocol", "reno", "--loss", "0.01", "--rtt-s", "0.1", "--t0-s", "1",
                                    "--segments", "1000", "--w-max", "86", "--rate-bps", "10e6",
                                    "--semantics", "corrected", "--plot", str(out)])
    assert r.exit_code == 0, r.output
    for key in ("E[T_n]", "sd[T_n]", "Theta_n", "N_eps", "N_delta"):
        assert key in r.output
    expected = transfer_time(WeigleParams(loss=0.01, w_max=86, rate_bps=10e6), 1000).mean_at(1000)
    assert f"{expected:.6g}" in r.output
    assert out.exists() and out.stat().st_size > 1000
    svg = tmp_path / "t.svg"
    r = CliRunner().invoke(_app(), ["--protocol", "tahoe", "--semantics", "printed", "--bytes", "146000",
                                    "--plot", str(svg)])
    assert r.exit_code == 0, r.output
    assert "100" in r.output and svg.read_text().lstrip().startswith("<?xml")


def test_cli_rejects_bad_values(tmp_path):
    r = CliRunner().invoke(_app(), ["--loss", "1.5"])
    assert r.exit_code != 0 and "loss=1.5" in r.output
    r = CliRunner().invoke(_app(), ["--protocol", "vegas"])
    assert r.exit_code != 0
    r = CliRunner().invoke(_app(), ["--plot", str(tmp_path / "x.pdf")])
    assert r.exit_code != 0 and ".png" in r.output


# --------------------------------------------------------------------------------------
# performance
# --------------------------------------------------------------------------------------

def test_performance_moderate():
    params = WeigleParams(protocol="reno", loss=0.01, rtt_s=0.1, t0_s=1.0, w_max=1000, rate_bps=1e9)
    c0 = time.process_time()
    res = transfer_time(params, 20_000)
    cpu = time.process_time() - c0
    assert np.all(np.diff(res.mean_s) > 0)
    assert cpu < 6.0, cpu


@pytest.mark.slow
def test_performance_100k_segments_k1000():
    params = WeigleParams(protocol="reno", loss=0.01, rtt_s=0.1, t0_s=1.0, w_max=1000, rate_bps=1e9)
    c0 = time.process_time()
    res = transfer_time(params, 100_000)
    cpu = time.process_time() - c0
    assert res.mean_s.size == 100_000 and np.isfinite(res.var_at(100_000))
    assert cpu < 15.0, cpu
