"""Lübben & Fidler Fig. 4: static window over a latency-rate network.

C = 10 Mbit/s, T = 50 ms (RTT 100 ms), w = 500 kbit and 2 Mbit. The delays that
constant-rate probes see are computed here from the system's definition (paper Eqs. 2
and 3, a fluid model) by an independent helper; the estimate must equal the largest
convex minorant of the analytical service curve min_n {C[t − (2n+1)T]^+ + n·w}:
(w/RTT)[t − T]^+ = 5 Mbit/s after 50 ms for w = 500 kbit, and exactly C[t − T]^+ =
10 Mbit/s after 50 ms for w = 2 Mbit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.netcal import estimate_from_frame

C = 10e6
T = 0.05
PKT_BITS = 12_000.0  # 1500 B probe packets
DT = 1e-4


def static_window_departures(rate: float, w: float, horizon: float):
    """Fluid solution of Eqs. (2)-(3) with S_net(τ,t) = C[t−τ−T]^+ and ACK delay T.

    A_net(t) = min(r t, D([t−T]^+) + w), the network link is a fluid queue of rate C
    followed by propagation delay T: Q(t) = inf_{τ≤t} {A_net(τ) + C(t−τ)},
    D(t) = Q(t − T). D(t − T) = Q(t − 2T), so A_net on [k·2T, (k+1)·2T) needs Q only
    from the previous block, and each block is vectorised.
    """
    lag = int(round(T / DT))
    block = 2 * lag
    n = int(np.ceil(horizon / DT)) + 1
    n = ((n + block - 1) // block) * block
    t = np.arange(n) * DT
    q = np.zeros(n)
    a_net = np.zeros(n)
    run_min = 0.0  # running min of A_net(τ) − Cτ (A_net(0) = 0)
    for s in range(0, n, block):
        idx = np.arange(s, s + block)
        back = idx - block
        q_back = np.where(back >= 0, q[np.maximum(back, 0)], 0.0)
        a_net[idx] = np.minimum(rate * t[idx], q_back + w)
        m = np.minimum.accumulate(np.minimum(a_net[idx] - C * t[idx], run_min))
        run_min = m[-1]
        q[idx] = C * t[idx] + m
    d = np.concatenate([np.zeros(lag), q[:-lag]])
    return t, d


def probe_frame(rates, w: float, n_packets: int = 1800) -> pd.DataFrame:
    rows = []
    for r in rates:
        send_end = n_packets * PKT_BITS / r
        long_term = min(C, w / (2 * T))
        horizon = send_end * max(1.0, r / long_term) + 4 * T + 0.5
        t, d = static_window_departures(r, w, horizon)
        x = PKT_BITS * np.arange(1, n_packets + 1)  # last bit of each packet
        t_send = x / r  # fluid CBR: the last bit is written at x / r
        j = np.searchsorted(d, x - 1e-6, side="left")
        ok = j < d.size
        j = j[ok]
        # D is linear within a grid step, so linear interpolation is exact.
        lo = d[j - 1]
        frac = (x[ok] - lo) / (d[j] - lo)
        t_recv = t[j - 1] + frac * DT
        recv = np.full(n_packets, np.nan)
        recv[ok] = t_recv
        rows.append(pd.DataFrame({
            "rate_bps": r, "seq": np.arange(n_packets), "bytes": PKT_BITS / 8,
            "t_send_s": t_send, "t_recv_s": recv,
        }))
    return pd.concat(rows, ignore_index=True)


def analytic_static_window(t, w):
    n = np.arange(0, 200)[:, None]
    return np.min(C * np.maximum(t[None, :] - (2 * n + 1) * T, 0.0) + n * w, axis=0)


def lower_convex_hull(x, y):
    """Largest convex minorant of points (x ascending), evaluated at x (monotone chain)."""
    hull: list[int] = []
    for i in range(x.size):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(x, x[hull], y[hull])


def test_helper_reproduces_the_window_limit():
    # Independent check of the helper: at 8 Mbit/s and w = 500 kbit the long-term
    # departure rate is w/RTT = 5 Mbit/s.
    t, d = static_window_departures(8e6, 500e3, 3.0)
    m = (t > 1.0) & (t < 2.0)
    slope = (d[m][-1] - d[m][0]) / (t[m][-1] - t[m][0])
    assert slope == pytest.approx(5e6, rel=0.01)


@pytest.mark.parametrize(
    "w, long_term, n_rates",
    [(500e3, 5e6, 5), (2e6, 10e6, 10)],
)
def test_static_window_estimate_is_the_convex_minorant(w, long_term, n_rates):
    rates = [j * 1e6 for j in range(1, n_rates + 2)]  # one rate above the attainable rate
    df = probe_frame(rates, w)
    est = estimate_from_frame(df, xi=0.05, r_acc_bps=1e6)
    res = est.probing
    assert [o.status for o in res.outcomes][-1] == "nonstationary"
    assert res.stop_rate_bps == pytest.approx((n_rates + 1) * 1e6)
    np.testing.assert_allclose(est.rates_bps, np.arange(1, n_rates + 1) * 1e6)
    np.testing.assert_allclose(est.delay_quantiles_s, T, atol=1e-9)
    assert est.long_term_rate_bps == pytest.approx(long_term)
    assert est.latency_s == pytest.approx(T, abs=1e-9)
    assert est.eps == pytest.approx(n_rates * 0.05)

    horizon = 41 * T  # ends at a corner (2n+1)T of the stepped curve
    grid = np.linspace(0.0, horizon, 4101)
    minorant = lower_convex_hull(grid, analytic_static_window(grid, w))
    np.testing.assert_allclose(est.S(grid), minorant, atol=1.0, rtol=1e-9)
    if w >= C * 2 * T:
        # w >= C·RTT: the service is the network's latency-rate curve itself (exact).
        np.testing.assert_allclose(est.S(grid), analytic_static_window(grid, w), atol=1.0)
    else:
        # The window steps make the true curve non-convex; the estimate lies below it.
        assert np.all(est.S(grid) <= analytic_static_window(grid, w) + 1.0)
        assert np.max(analytic_static_window(grid, w) - est.S(grid)) > 0.1 * w
    # α̃ on a log axis: 0 up to 50 ms, then rising to the long-term rate.
    assert est.alpha([0.01, 0.05])[0] == 0.0
    assert est.alpha([1e3])[0] == pytest.approx(long_term, rel=1e-3)
