"""Analytical references of Lübben & Fidler, "A benchmark for the performance of
time-varying closed-loop flow control with application to TCP" (study note §1.2, §1.8).

1. **Static-window service curve** (Sec. III-A, closed form after Agrawal et al. [16]).
   Window flow control with a static window w over a latency-rate network
   S_net = C[t - T]^+ and a pure-delay ACK path T (RTT = 2T) has the service curve

       S_app(t) = min_{n >= 0} { C [t - (2n+1)T]^+ + n w }                 (Sec. III-A)

   (network service convolved with the sub-additive closure of the feedback loop). It
   rises at rate C, stays flat until the next RTT, and has long-term rate
   min(w/RTT, C). If w >= C RTT it equals S_net.

   *Pitfall (study note §1.2)*: the paper writes the segments with slope
   r = min(w/RTT, C); with that slope the minimum collapses to the latency-rate curve
   r[t - T]^+, not the stepped curve of its Fig. 4a. ``slope="C"`` (default) gives the
   stepped curve; ``slope="paper"`` gives the formula as printed.

   The deterministic benchmark estimate (eq. (7) with eps = 0) is the largest convex
   minorant of S_app (Legendre-Fenchel bi-conjugate): for C = 10 Mbit/s, T = 50 ms it is
   5 Mbit/s [t - 50 ms]^+ for w = 500 kbit and exactly 10 Mbit/s [t - 50 ms]^+ for
   w = 2 Mbit (Lübben Fig. 4). :func:`cbr_delay_s`, :func:`benchmark_estimate` and
   :func:`largest_convex_minorant` compute this numerically.

2. **Periodic-loss window model** (Sec. V-B, after Mathis et al.): with one loss every
   1/p packets the window is a sawtooth between W_max/2 and W_max,
   W_max = sqrt(8/(3 b p)) (b = 1 in the paper), mean 3 W_max/4; the minimum rate
   W_max/(2 RTT) is 2/3 of the long-term rate 3 W_max/(4 RTT), so the model predicts no
   sender-stack buffering below 2/3 utilisation.

   :func:`periodic_loss_buffering_probability` extends this [derived, not in the paper]:
   for a fluid CBR source at utilisation u (rate u x long-term rate) the sender-stack
   backlog is non-zero a fraction max(0, min(1, 3u - 2)) of the time (the backlog built
   while the window is below the source rate drains before the next loss for u < 1).

Units: rates in bit/s, sizes in bits, times in seconds (``*_bps``, ``*_bits``, ``*_s``);
windows of the periodic-loss model in packets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, List, Optional

import numpy as np
import typer

__all__ = [
    "static_window_service_curve_bits",
    "static_window_long_term_rate_bps",
    "largest_convex_minorant",
    "cbr_delay_s",
    "benchmark_estimate",
    "BenchmarkEstimate",
    "PeriodicLossWindow",
    "periodic_loss_window",
    "STACK_BUFFERING_THRESHOLD",
    "periodic_loss_buffering_probability",
    "cli_window",
    "cli_periodic",
    "cli",
]

#: Utilisation below which the periodic-loss model predicts no sender-stack buffering.
STACK_BUFFERING_THRESHOLD = 2.0 / 3.0

_SLOPES = ("C", "paper")


def _pos(name, v, allow_inf=False):
    ok = isinstance(v, (int, float, np.integer, np.floating)) and not math.isnan(v) and v > 0 and (
        allow_inf or math.isfinite(v))
    if not ok:
        raise ValueError(f"{name}={v!r} is invalid: expected a number > 0" + ("" if allow_inf else ", finite"))
    return float(v)


# ----------------------------------------------------------------------------- static window


def static_window_long_term_rate_bps(*, capacity_bps: float, one_way_delay_s: float, window_bits: float) -> float:
    """Long-term rate min(w/RTT, C) of static-window flow control, RTT = 2T (Sec. III-A)."""
    C = _pos("capacity_bps", capacity_bps)
    T = _pos("one_way_delay_s", one_way_delay_s)
    w = _pos("window_bits", window_bits)
    return min(w / (2 * T), C)


def static_window_service_curve_bits(t_s, *, capacity_bps: float, one_way_delay_s: float, window_bits: float,
                                     slope: str = "C"):
    """S_app(t) = min_n { s [t - (2n+1)T]^+ + n w }, s = C (``slope="C"``, default) or
    s = min(w/RTT, C) (``slope="paper"``, the formula as printed). Bits; vectorised in t."""
    if slope not in _SLOPES:
        raise ValueError(f"slope={slope!r} is invalid: expected one of {_SLOPES}")
    C = _pos("capacity_bps", capacity_bps)
    T = _pos("one_way_delay_s", one_way_delay_s)
    w = _pos("window_bits", window_bits)
    t = np.asarray(t_s, dtype=float)
    if np.any(np.isnan(t) | (t < 0)):
        raise ValueError("t_s is invalid: expected times >= 0 [s]")
    s = C if slope == "C" else min(w / (2 * T), C)
    tmax = float(np.max(t)) if t.size else 0.0
    n_max = int(math.ceil(tmax / (2 * T))) + 1  # beyond this the n w term exceeds every earlier segment
    out = np.full(t.shape, np.inf)
    for n in range(n_max + 1):
        out = np.minimum(out, s * np.maximum(t - (2 * n + 1) * T, 0.0) + n * w)
    return float(out) if out.ndim == 0 else out


def largest_convex_minorant(t, y) -> np.ndarray:
    """Largest convex minorant of the points (t_i, y_i) (lower convex hull), evaluated at t.

    ``t`` must be increasing. Used as the reference for the deterministic benchmark
    estimate (the bi-conjugate of S, study note §1.4).
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.shape != y.shape or t.ndim != 1 or t.size < 2 or np.any(np.diff(t) <= 0):
        raise ValueError("t is invalid: expected a strictly increasing 1-D grid of the same length as y (>= 2)")
    hull: list[int] = []
    for i in range(t.size):
        while len(hull) >= 2:
            i0, i1 = hull[-2], hull[-1]
            # keep i1 only if it lies strictly below the chord i0 -> i
            cross = (t[i1] - t[i0]) * (y[i] - y[i0]) - (y[i1] - y[i0]) * (t[i] - t[i0])
            if cross <= 0:
                hull.pop()
            else:
                break
        hull.append(i)
    return np.interp(t, t[hull], y[hull])


def cbr_delay_s(rate_bps: float, t_s, service_bits) -> float:
    """Steady-state delay of CBR arrivals A(t) = r t through a service curve S given on a grid:
    the horizontal deviation sup_u { S^{-1}(r u) - u } over the grid (Sec. III-B, eq. (6)).

    Arrivals r u >= S(t_end) are served after the grid horizon and are left out; returns
    ``inf`` only if no arrival is served within the grid.
    """
    r = _pos("rate_bps", rate_bps)
    t = np.asarray(t_s, dtype=float)
    S = np.asarray(service_bits, dtype=float)
    if t.shape != S.shape or np.any(np.diff(S) < 0):
        raise ValueError("service_bits is invalid: expected a non-decreasing curve on the grid t_s")
    need = r * t
    # upper pseudo-inverse S^{-1}(x) = inf{t : S(t) > x} (the bit after x is served then),
    # with S piecewise linear between grid points; at x = 0 it gives the latency.
    idx = np.searchsorted(S, need, side="right")
    delays = np.empty(t.shape)
    ok = idx < t.size
    i = idx[ok]
    lo = np.maximum(i - 1, 0)
    dS = S[i] - S[lo]
    frac = np.where(dS > 0, (need[ok] - S[lo]) / np.where(dS > 0, dS, 1.0), 1.0)
    t_reach = np.where(i == 0, t[0], t[lo] + frac * (t[i] - t[lo]))
    delays[ok] = t_reach - t[ok]
    if not np.any(ok):
        return math.inf
    # arrivals whose service lies beyond the grid horizon are left out (not known here);
    # unbounded delay shows as growth with the horizon (see benchmark_estimate)
    return float(np.max(delays[ok]))


@dataclass(frozen=True)
class BenchmarkEstimate:
    """Deterministic version of the estimator (eq. (7), eps = 0): accepted probe rates
    r_j [bit/s], their delays Delta_j [s], and S~(t) = max_j r_j [t - Delta_j]^+."""

    rates_bps: np.ndarray
    delays_s: np.ndarray

    def service_bits(self, t_s):
        t = np.asarray(t_s, dtype=float)[..., None]
        return np.max(self.rates_bps * np.maximum(t - self.delays_s, 0.0), axis=-1)

    @property
    def long_term_rate_bps(self) -> float:
        return float(self.rates_bps[-1]) if self.rates_bps.size else 0.0

    @property
    def latency_s(self) -> float:
        return float(self.delays_s.min()) if self.delays_s.size else math.inf


def benchmark_estimate(t_s, service_bits, *, rate_step_bps: float, max_rate_bps: Optional[float] = None,
                       growth_tol_s: Optional[float] = None) -> BenchmarkEstimate:
    """Probe rates r_j = j r_acc (Sec. III-C: linear increments) and stop at the first rate
    whose delay is not stationary - numerically: the delay over the whole grid exceeds the
    delay over the first half by more than ``growth_tol_s`` (it keeps growing). The default
    tolerance is two grid steps (discretisation noise); a rate above the long-term rate
    grows by (r - rho)/r x half the horizon, far more on any reasonable grid."""
    step = _pos("rate_step_bps", rate_step_bps)
    t = np.asarray(t_s, dtype=float)
    if growth_tol_s is None:
        growth_tol_s = 2.0 * float(np.max(np.diff(t)))
    S = np.asarray(service_bits, dtype=float)
    half = t.size // 2
    rates, delays = [], []
    j = 1
    while True:
        r = j * step
        if max_rate_bps is not None and r > max_rate_bps:
            break
        d_full = cbr_delay_s(r, t, S)
        d_half = cbr_delay_s(r, t[: half + 1], S[: half + 1])
        if not math.isfinite(d_full) or d_full > d_half + growth_tol_s:
            break
        rates.append(r)
        delays.append(d_full)
        j += 1
    return BenchmarkEstimate(np.array(rates), np.array(delays))


# ----------------------------------------------------------------------------- periodic loss


@dataclass(frozen=True)
class PeriodicLossWindow:
    """Periodic-loss sawtooth (Lübben Sec. V-B): windows in packets, rates in packets/s."""

    w_max_pkts: float
    w_min_pkts: float
    w_mean_pkts: float
    min_rate_pkts_per_s: float
    long_term_rate_pkts_per_s: float

    @property
    def min_to_mean_ratio(self) -> float:
        return self.min_rate_pkts_per_s / self.long_term_rate_pkts_per_s


def periodic_loss_window(p: float, rtt_s: float, *, b: float = 1.0) -> PeriodicLossWindow:
    """W_max = sqrt(8/(3 b p)), W_min = W_max/2, mean 3 W_max/4, min rate W_max/(2 RTT),
    long-term rate 3 W_max/(4 RTT) (Lübben Sec. V-B with b = 1; Mathis Sec. 2 for b)."""
    if not (isinstance(p, (int, float)) and 0 < p <= 1):
        raise ValueError(f"p={p!r} is invalid: expected a loss probability in (0, 1]")
    rtt = _pos("rtt_s", rtt_s)
    if not (isinstance(b, (int, float)) and b >= 1):
        raise ValueError(f"b={b!r} is invalid: expected packets per ACK >= 1")
    W = math.sqrt(8.0 / (3.0 * b * p))
    return PeriodicLossWindow(W, W / 2, 0.75 * W, W / (2 * rtt), 0.75 * W / rtt)


def periodic_loss_buffering_probability(utilisation):
    """Fraction of time a fluid CBR source at ``utilisation`` u (of the long-term rate) has a
    non-empty sender-stack backlog under the periodic-loss sawtooth: clip(3u - 2, 0, 1).

    Derivation [ours]: in a cycle of length tau the rate rises linearly from x0 = 2/3 m to
    2 x0 (m = long-term rate). A source at a = u m builds backlog from the loss instant
    while x < a and has drained it at t_d = 2 (a - x0)/k (k = x0/tau); t_d < tau iff u < 1,
    so the busy fraction is t_d/tau = 2(a - x0)/x0 = 3u - 2. Zero for u <= 2/3 (the paper's
    threshold), 1 at u = 1.
    """
    u = np.asarray(utilisation, dtype=float)
    if np.any(np.isnan(u) | (u < 0)):
        raise ValueError(f"utilisation={utilisation!r} is invalid: expected a fraction >= 0")
    out = np.clip(3.0 * u - 2.0, 0.0, 1.0)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------- CLIs


def cli_window(
    capacity_mbps: Annotated[float, typer.Option("--capacity-mbps", help="network capacity C [Mbit/s]")] = 10.0,
    delay_ms: Annotated[float, typer.Option("--delay-ms", help="one-way delay T [ms] (RTT = 2T)")] = 50.0,
    window_kbit: Annotated[List[float], typer.Option("--window-kbit", help="static window w [kbit]; repeatable")] = [500.0, 2000.0],
    rate_step_mbps: Annotated[float, typer.Option("--rate-step-mbps", help="probe-rate increment r_acc [Mbit/s]")] = 1.0,
    slope: Annotated[str, typer.Option("--slope", help="'C' (stepped curve) or 'paper' (slope min(w/RTT, C))")] = "C",
    horizon_rtts: Annotated[int, typer.Option("--horizon-rtts", help="time horizon of the numerical grid [RTTs]")] = 20,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write S_app(t) and its estimate to this path")] = None,
) -> None:
    """Lübben & Fidler Sec. III-C1: static-window service curve and its benchmark estimate (Fig. 4)."""
    from rich.console import Console
    from rich.table import Table

    C = capacity_mbps * 1e6
    T = delay_ms / 1000
    try:
        _pos("horizon_rtts", horizon_rtts)
        t = np.linspace(0, horizon_rtts * 2 * T, horizon_rtts * 400 + 1)
        rows, curves = [], []
        for wk in window_kbit:
            S = static_window_service_curve_bits(t, capacity_bps=C, one_way_delay_s=T, window_bits=wk * 1e3,
                                                 slope=slope)
            est = benchmark_estimate(t, S, rate_step_bps=rate_step_mbps * 1e6)
            lt = static_window_long_term_rate_bps(capacity_bps=C, one_way_delay_s=T, window_bits=wk * 1e3)
            rows.append((wk, lt, est))
            curves.append((wk, S, est.service_bits(t)))
    except ValueError as e:
        raise typer.BadParameter(str(e))
    table = Table(title=f"Static window, C={capacity_mbps:g} Mbit/s, T={delay_ms:g} ms (RTT {2 * delay_ms:g} ms)")
    for col in ("w [kbit]", "min(w/RTT,C) [Mbit/s]", "est. rate [Mbit/s]", "est. latency [ms]", "rates"):
        table.add_column(col, justify="right")
    for wk, lt, est in rows:
        table.add_row(f"{wk:g}", f"{lt / 1e6:.3f}", f"{est.long_term_rate_bps / 1e6:.3f}", f"{est.latency_s * 1e3:.3f}",
                      str(est.rates_bps.size))
    Console().print(table)
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(figsize=(6, 4))
        for wk, S, Se in curves:
            ax.plot(t, S / 1e6, label=f"S_app, w={wk:g} kbit")
            ax.plot(t, Se / 1e6, "--", label=f"estimate, w={wk:g} kbit")
        x_hi = min(t[-1], 10 * 2 * T)
        ax.set_xlim(0, x_hi)
        ax.set_ylim(0, 1.05 * max(float(np.max(S[t <= x_hi])) for _, S, _ in curves))
        ax.set_xlabel("t [s]")
        ax.set_ylabel("service [Mbit]")
        ax.legend(fontsize=8)
        fig.savefig(plot)


def cli_periodic(
    loss: Annotated[float, typer.Option("--loss", "-p", help="loss probability p (one loss every 1/p packets)")] = 1e-3,
    rtt_ms: Annotated[float, typer.Option("--rtt-ms", help="round-trip time [ms]")] = 20.0,
    mss: Annotated[int, typer.Option("--mss", help="segment size [bytes]")] = 1448,
    utilisation: Annotated[Optional[List[float]], typer.Option("--utilisation", "-u", help="CBR utilisation(s) of the long-term rate; repeatable")] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write P(sender-stack buffering) vs utilisation to this path")] = None,
) -> None:
    """Lübben & Fidler Sec. V-B: periodic-loss window model and its 2/3 utilisation threshold."""
    from rich.console import Console
    from rich.table import Table

    us = utilisation or [0.3, 0.5, 2 / 3, 0.8, 0.9, 1.0]
    try:
        m = periodic_loss_window(loss, rtt_ms / 1000)
        probs = [periodic_loss_buffering_probability(u) for u in us]
    except ValueError as e:
        raise typer.BadParameter(str(e))
    t = Table(title=f"Periodic-loss model: p={loss:g}, RTT={rtt_ms:g} ms, MSS={mss} B")
    t.add_column("quantity")
    t.add_column("value", justify="right")
    t.add_column("unit")
    to_mbps = mss * 8 / 1e6
    for name, v, unit in (
        ("W_max = sqrt(8/(3p))", m.w_max_pkts, "packets"),
        ("W_min = W_max/2", m.w_min_pkts, "packets"),
        ("mean window 3 W_max/4", m.w_mean_pkts, "packets"),
        ("minimum rate W_max/(2 RTT)", m.min_rate_pkts_per_s * to_mbps, "Mbit/s"),
        ("long-term rate 3 W_max/(4 RTT)", m.long_term_rate_pkts_per_s * to_mbps, "Mbit/s"),
        ("min/long-term ratio (buffering threshold)", m.min_to_mean_ratio, ""),
    ):
        t.add_row(name, f"{v:.4f}", unit)
    for u, pr in zip(us, probs):
        t.add_row(f"P(stack buffering) at u={u:.3f}", f"{pr:.4f}", "")
    Console().print(t)
    if plot is not None:
        grid = np.linspace(0, 1, 201)
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(figsize=(6, 4))
        ax.plot(grid, periodic_loss_buffering_probability(grid))
        ax.axvline(STACK_BUFFERING_THRESHOLD, ls=":", color="gray")
        ax.set_xlabel("utilisation")
        ax.set_ylabel("P[buffering in sender stack]")
        fig.savefig(plot)


cli = cli_window
