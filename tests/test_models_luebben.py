"""Checks of the Lübben & Fidler analytical references: static-window service curve
(Fig. 4) and the periodic-loss window model (2/3 threshold).

Sources: Lübben & Fidler Sec. III-C1 / Fig. 4 (C = 10 Mbit/s, T = 50 ms, w = 500 kbit and
2 Mbit: long-term rates 5 and 10 Mbit/s, latency 50 ms), Sec. V-B (2/3 threshold); the
study note /work/shared/notes/luebben-fidler-service-curve-benchmark.md §1.2, §1.8;
hand computations and an independent packet-level sawtooth integration below.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from ccbench.models import luebben

runner = CliRunner()

C, T = 10e6, 0.05
GRID = np.linspace(0, 40 * T, 8001)  # 20 RTTs, 0.25 ms steps


def _app(fn):
    app = typer.Typer()
    app.command()(fn)
    return app


def _S(w, t=GRID, **kw):
    return luebben.static_window_service_curve_bits(t, capacity_bps=C, one_way_delay_s=T, window_bits=w, **kw)


def test_static_window_curve_hand_values():
    # w = 500 kbit: nothing before T; rate C until w is out (T + w/C = 0.1 s); flat until 3T;
    # then rate C again until 2w at 0.2 s; flat until 5T ...
    pts = {0.0: 0, 0.05: 0, 0.075: 250e3, 0.1: 500e3, 0.12: 500e3, 0.15: 500e3, 0.175: 750e3, 0.2: 1e6,
           0.25: 1e6, 0.3: 1.5e6}
    for t, v in pts.items():
        assert _S(500e3, t) == pytest.approx(v, abs=1e-6), t
    # w = 2 Mbit >= C*RTT = 1 Mbit: S_app = S_net = C[t - T]^+
    assert np.allclose(_S(2e6), C * np.maximum(GRID - T, 0))
    assert luebben.static_window_long_term_rate_bps(capacity_bps=C, one_way_delay_s=T, window_bits=500e3) == 5e6
    assert luebben.static_window_long_term_rate_bps(capacity_bps=C, one_way_delay_s=T, window_bits=2e6) == 10e6


def test_paper_slope_collapses_to_latency_rate():
    # Study note §1.2 pitfall: with slope r = min(w/RTT, C) the printed formula is r[t-T]^+
    S_paper = _S(500e3, slope="paper")
    assert np.allclose(S_paper, 5e6 * np.maximum(GRID - T, 0))
    assert not np.allclose(S_paper, _S(500e3))
    with pytest.raises(ValueError, match="slope='r'"):
        _S(500e3, slope="r")


def test_fig4_benchmark_estimate_is_convex_minorant():
    # Lübben Fig. 4: r_acc = 1 Mbit/s, eps = 0. 500 kbit -> 5 Mbit/s long term, 2 Mbit -> 10;
    # latency 50 ms in both cases; the estimate equals the largest convex minorant of S_app
    # (500 kbit) and is exact for 2 Mbit.
    half = GRID.size // 2
    for w, rate in ((500e3, 5e6), (2e6, 10e6)):
        S = _S(w)
        est = luebben.benchmark_estimate(GRID, S, rate_step_bps=1e6)
        assert est.long_term_rate_bps == rate
        assert est.latency_s == pytest.approx(0.05, abs=1e-9)
        assert np.allclose(est.delays_s, 0.05)
        S_est = est.service_bits(GRID)
        minorant = luebben.largest_convex_minorant(GRID, S)
        # compare away from the end of the finite grid (hull end effects)
        assert np.allclose(S_est[:half], minorant[:half], atol=1e-3)
        assert np.allclose(minorant[:half], rate * np.maximum(GRID[:half] - T, 0), atol=1e-3)
        assert np.all(S_est <= S + 1e-6)  # a lower bound
    # exact for 2 Mbit, strictly below the stepped curve for 500 kbit
    assert np.allclose(luebben.benchmark_estimate(GRID, _S(2e6), rate_step_bps=1e6).service_bits(GRID), _S(2e6))
    gap = _S(500e3) - luebben.benchmark_estimate(GRID, _S(500e3), rate_step_bps=1e6).service_bits(GRID)
    assert gap.max() == pytest.approx(250e3, rel=1e-3)  # at t = 0.1 s: 500 kbit vs 5 Mbit/s * 50 ms


def test_cbr_delay_hand_values():
    S = _S(500e3)
    # rate 5 Mbit/s = long-term rate: delay stays at 50 ms; 6 Mbit/s grows with the horizon
    assert luebben.cbr_delay_s(5e6, GRID, S) == pytest.approx(0.05, abs=1e-9)
    d_half = luebben.cbr_delay_s(6e6, GRID[:4001], S[:4001])
    d_full = luebben.cbr_delay_s(6e6, GRID, S)
    assert d_full > d_half + 0.1
    with pytest.raises(ValueError, match="rate_bps=0"):
        luebben.cbr_delay_s(0, GRID, S)


def test_convex_minorant_simple():
    t = np.array([0.0, 1.0, 2.0, 3.0])
    y = np.array([0.0, 2.0, 1.0, 3.0])
    # hull: (0,0) -> (2,1) -> (3,3); at t = 1: 0.5
    assert np.allclose(luebben.largest_convex_minorant(t, y), [0.0, 0.5, 1.0, 3.0])
    with pytest.raises(ValueError, match="t is invalid"):
        luebben.largest_convex_minorant([1.0, 0.0], [0.0, 1.0])


# ----------------------------------------------------------------------------- periodic loss


def test_periodic_loss_window_formulas():
    m = luebben.periodic_loss_window(1e-3, 0.02)
    # hand: sqrt(8/0.003) = sqrt(2666.667) = 51.6398
    assert m.w_max_pkts == pytest.approx(51.6398, abs=1e-4)
    assert m.w_min_pkts == pytest.approx(25.8199, abs=1e-4)
    assert m.w_mean_pkts == pytest.approx(38.7298, abs=1e-4)
    assert m.long_term_rate_pkts_per_s == pytest.approx(38.7298 / 0.02, rel=1e-6)
    assert m.min_to_mean_ratio == pytest.approx(2 / 3)
    assert luebben.STACK_BUFFERING_THRESHOLD == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="p=0"):
        luebben.periodic_loss_window(0, 0.02)


def _sawtooth_simulation(p, rtt, cycles=14):
    """Independent packet-level integration: Reno congestion avoidance (w += 1/w per ACK),
    one loss every 1/p packets (halve), each packet takes RTT/w of time."""
    n_per_loss = int(round(1 / p))
    w = math.sqrt(8 / (3 * p)) / 2  # any start; the sawtooth settles within a few cycles
    ws, dts = [], []
    for k in range((cycles + 4) * n_per_loss):
        if k > 0 and k % n_per_loss == 0:
            w /= 2
        ws.append(w)
        dts.append(rtt / w)
        w += 1 / w
    ws = np.array(ws[4 * n_per_loss:])
    dts = np.array(dts[4 * n_per_loss:])
    return ws / rtt, dts


def test_periodic_loss_two_thirds_threshold_numerically():
    p, rtt = 2e-4, 0.02
    x, dt = _sawtooth_simulation(p, rtt)
    mean_rate = dt.size / dt.sum()  # packets per second, time average
    # W_max and the min/mean ratio of the simulated sawtooth
    assert x.max() * rtt == pytest.approx(math.sqrt(8 / (3 * p)), rel=0.01)
    assert x.min() / mean_rate == pytest.approx(2 / 3, rel=0.01)
    # fluid CBR source into the sender stack: backlog B' = a - x, B >= 0
    for u in (0.4, 0.6, 0.64, 0.7, 0.8, 0.9, 0.97):
        a = u * mean_rate
        B = 0.0
        busy = 0.0
        for xi, dti in zip(x, dt):
            B = max(0.0, B + (a - xi) * dti)
            if B > 0:
                busy += dti
        frac = busy / dt.sum()
        model = luebben.periodic_loss_buffering_probability(u)
        if u < 2 / 3 - 0.01:
            assert frac == 0.0 and model == 0.0
        else:
            assert frac == pytest.approx(model, abs=0.02), (u, frac, model)


def test_buffering_probability_shape():
    u = np.array([0.0, 0.5, 2 / 3, 0.75, 0.9, 1.0, 1.2])
    assert np.allclose(luebben.periodic_loss_buffering_probability(u), [0, 0, 0, 0.25, 0.7, 1.0, 1.0])
    with pytest.raises(ValueError, match="utilisation=-0.1"):
        luebben.periodic_loss_buffering_probability(-0.1)


# ----------------------------------------------------------------------------- CLIs


def test_cli_window(tmp_path):
    out = tmp_path / "w.png"
    r = runner.invoke(_app(luebben.cli_window), ["--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert "5.000" in r.output and "10.000" in r.output and "50.000" in r.output
    assert out.exists()
    assert runner.invoke(_app(luebben.cli_window), ["--capacity-mbps", "-1"]).exit_code != 0


def test_cli_periodic(tmp_path):
    out = tmp_path / "p.png"
    r = runner.invoke(_app(luebben.cli_periodic), ["--loss", "0.001", "-u", "0.9", "--plot", str(out)])
    assert r.exit_code == 0, r.output
    assert "51.6398" in r.output and "0.6667" in r.output and "0.7000" in r.output
    assert out.exists()
    assert runner.invoke(_app(luebben.cli_periodic), ["--loss", "0"]).exit_code != 0
