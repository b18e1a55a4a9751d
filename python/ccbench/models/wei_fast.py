"""Wei (Caltech PhD thesis 2007), Chapter 2: delay-based control with micro-bursts.

Units: capacity ``c`` in packets/s, round-trip propagation delay ``d`` in seconds,
windows and queues in packets, Vegas ``alpha`` in packets/s (thesis footnote: Vegas's
alpha has rate units, alpha = beta), FAST ``alpha_i`` in packets.

**FAST, homogeneous discrete model** (Sec. 2.2.3):

* (2.25) q(t) = max{(sum_i w_i(t) - cd)/c, 0}   (queue at equilibrium within one RTT)
* (2.27) w_i(t) = gamma (w_i(t-1) d/(q(t-1)+d) + alpha_i) + (1-gamma) w_i(t-1)
* (2.28) q(t) = sum_i w_i(t)/c - d   at full utilisation;  (2.29) W(t) = sum_i w_i(t)
* Thm 2.2.3.1: for gamma in (0, 1), W(t) -> alpha + cd (alpha = sum alpha_i) globally
  and exponentially; substituting (2.28) into the sum of (2.27) gives
  W(t) - (cd+alpha) = (1-gamma)^t (W(0) - (cd+alpha)).
* Thm 2.2.3.2: w_i -> (alpha_i/alpha)(alpha + cd).

**Vegas** (Sec. 2.1.5): response (2.23) +1 if w/d - w/D < alpha, -1 if > alpha and w > 1,
0 otherwise, with D = d + b/c. Thm 2.1.5: if alpha d > 1, eventually
cd + alpha d - 1 < w < cd + alpha d + 1 and alpha d - 1 < b < alpha d + 1 (exactly
w = cd + alpha d, b = alpha d if cd + alpha d is an integer), for any c and d.
Two executable models are provided:

* :func:`vegas_iterate` - the RTT-level map with the static queue b = max(w - cd, 0)
  that Thm 2.1.4.3 justifies;
* :func:`vegas_packet_level` - the single-flow packet-level ack-clocking model of
  Sec. 2.1 (eqs. (2.3)-(2.6): micro-bursts, per-packet backlog b(j) and ACK times
  a(j) = s(j) + d + b(j)/c) with RTT-timescale decisions (2.17)-(2.20).

Documented choices (each with a switch):

* FAST queue: ``queue_model="max"`` (default) uses (2.25), so the map is defined also
  when the link is under-used; ``"linear"`` uses (2.28) (can go negative below cd).
* Vegas comparison at exact equality w/d - w/D = alpha is decided with a relative
  tolerance ``rtol`` (default 1e-12) so that the integer equilibrium cd + alpha d is a
  fixed point despite floating-point rounding.
* Vegas decision spacing (2.19): tau_{k+1} = tau_k + w + max(dw, 0) (default); the
  thesis footnote's Linux delayed-ACK spacing tau_k + 2w is ``decision_spacing="2w"``.
* The thesis's Figs. 2.1/2.2 (800 Mbit/s, 200 ms, 1000 B) cannot both match their
  captions (study note §9.1), so no test uses their windows; the theorem is checked by
  iterating the models instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, List, Optional

import numpy as np
import typer

__all__ = [
    "fast_queue_delay_s",
    "fast_step",
    "fast_iterate",
    "fast_equilibrium",
    "fast_aggregate_closed_form",
    "vegas_equilibrium_bounds",
    "vegas_response",
    "vegas_iterate",
    "VegasPacketTrace",
    "vegas_packet_level",
    "cli_fast",
    "cli_vegas",
    "cli",
]


def _pos(name, v, allow_zero=False):
    ok = isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        raise ValueError(f"{name}={v!r} is invalid: expected a finite number {'>= 0' if allow_zero else '> 0'}")
    return float(v)


def _gamma(g):
    if not (isinstance(g, (int, float)) and 0 < g <= 1):
        raise ValueError(f"gamma={g!r} is invalid: expected a gain in (0, 1] (Thm 2.2.3.1 covers (0, 1))")
    return float(g)


def _alphas(alpha) -> np.ndarray:
    a = np.atleast_1d(np.asarray(alpha, dtype=float))
    if a.ndim != 1 or a.size == 0 or np.any(~np.isfinite(a) | (a <= 0)):
        raise ValueError(f"alpha={alpha!r} is invalid: expected per-flow targets alpha_i > 0 [packets]")
    return a


_QMODELS = ("max", "linear")


def fast_queue_delay_s(W, c: float, d: float, *, queue_model: str = "max"):
    """Queueing delay q for aggregate window W: (2.25) max{(W - cd)/c, 0}, or (2.28) W/c - d."""
    if queue_model not in _QMODELS:
        raise ValueError(f"queue_model={queue_model!r} is invalid: expected one of {_QMODELS}")
    c, d = _pos("c", c), _pos("d", d)
    q = np.asarray(W, dtype=float) / c - d
    if queue_model == "max":
        q = np.maximum(q, 0.0)
    return float(q) if q.ndim == 0 else q


def fast_step(w, c: float, d: float, alpha, gamma: float = 0.5, *, queue_model: str = "max") -> np.ndarray:
    """One RTT of the FAST map (2.27) with the queue of (2.25)/(2.28)."""
    w = np.asarray(w, dtype=float)
    a = _alphas(alpha)
    if a.size == 1 and w.size > 1:
        a = np.full(w.shape, a[0])
    if a.shape != w.shape:
        raise ValueError(f"alpha has {a.size} entries but w has {w.size}: expected one alpha_i per flow")
    g = _gamma(gamma)
    q = fast_queue_delay_s(w.sum(), c, d, queue_model=queue_model)
    return g * (w * d / (q + d) + a) + (1 - g) * w


def fast_iterate(w0, c: float, d: float, alpha, gamma: float = 0.5, steps: int = 100, *,
                 queue_model: str = "max") -> np.ndarray:
    """Iterate (2.27) ``steps`` times from ``w0``; returns the (steps+1, N) trajectory."""
    if not (isinstance(steps, (int, np.integer)) and steps >= 0):
        raise ValueError(f"steps={steps!r} is invalid: expected an integer >= 0")
    w = np.atleast_1d(np.asarray(w0, dtype=float))
    if np.any(~np.isfinite(w) | (w <= 0)):
        raise ValueError(f"w0={w0!r} is invalid: expected windows > 0 [packets]")
    out = np.empty((steps + 1, w.size))
    out[0] = w
    for t in range(steps):
        w = fast_step(w, c, d, alpha, gamma, queue_model=queue_model)
        out[t + 1] = w
    return out


def fast_equilibrium(c: float, d: float, alpha):
    """Equilibrium of the FAST map (Thms 2.2.3.1-2): w_i* = (alpha_i/alpha)(alpha + cd),
    W* = alpha + cd, queueing delay q* = alpha/c. Returns ``(w_star, q_star_s)``."""
    c, d = _pos("c", c), _pos("d", d)
    a = _alphas(alpha)
    A = a.sum()
    return a / A * (A + c * d), A / c


def fast_aggregate_closed_form(W0: float, c: float, d: float, alpha_total: float, gamma: float, t):
    """W(t) = cd + alpha + (1-gamma)^t (W(0) - cd - alpha), valid while the link is fully used
    (our derivation from (2.27)+(2.28), study note §2.4)."""
    g = _gamma(gamma)
    t = np.asarray(t, dtype=float)
    eq = c * d + alpha_total
    out = eq + (1 - g) ** t * (W0 - eq)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------- Vegas


def vegas_equilibrium_bounds(c: float, d: float, alpha: float) -> dict:
    """Thm 2.1.5: open intervals for the eventual window and queue of one Vegas flow.

    Requires alpha d > 1. Returns ``{"window": (lo, hi), "queue": (lo, hi), "exact": bool,
    "w_star": cd + alpha d, "b_star": alpha d}``; ``exact`` is True when cd + alpha d is an
    integer (then w = w_star and b = b_star exactly).
    """
    c, d, alpha = _pos("c", c), _pos("d", d), _pos("alpha", alpha)
    if alpha * d <= 1:
        raise ValueError(f"alpha={alpha!r} is invalid with d={d}: Thm 2.1.5 needs alpha*d > 1 (got {alpha * d:g})")
    ws = c * d + alpha * d
    return {
        "window": (ws - 1, ws + 1),
        "queue": (alpha * d - 1, alpha * d + 1),
        "exact": abs(ws - round(ws)) < 1e-9,
        "w_star": ws,
        "b_star": alpha * d,
    }


def vegas_response(w: float, D: float, d: float, alpha: float, *, rtol: float = 1e-12) -> int:
    """Vegas response R of (2.23): +1 if w/d - w/D < alpha, -1 if > alpha and w > 1, else 0."""
    diff = w / d - w / D
    tol = rtol * max(abs(alpha), abs(w / d))
    if diff < alpha - tol:
        return 1
    if diff > alpha + tol and w > 1:
        return -1
    return 0


def vegas_iterate(w0: int, c: float, d: float, alpha: float, steps: int = 1000, *, rtol: float = 1e-12):
    """RTT-level Vegas map with the static queue b = max(w - cd, 0) (Thm 2.1.4.3).

    Returns ``(w, b)`` arrays of length steps+1 (window and queue at each decision).
    """
    c, d, alpha = _pos("c", c), _pos("d", d), _pos("alpha", alpha)
    if not (isinstance(w0, (int, np.integer)) and w0 >= 1):
        raise ValueError(f"w0={w0!r} is invalid: expected an integer window >= 1 [packets]")
    if not (isinstance(steps, (int, np.integer)) and steps >= 0):
        raise ValueError(f"steps={steps!r} is invalid: expected an integer >= 0")
    w = np.empty(steps + 1)
    b = np.empty(steps + 1)
    cur = int(w0)
    for k in range(steps + 1):
        q = max(cur - c * d, 0.0)
        w[k], b[k] = cur, q
        cur += vegas_response(cur, d + q / c, d, alpha, rtol=rtol)
    return w, b


@dataclass
class VegasPacketTrace:
    """Output of :func:`vegas_packet_level` (times in s, windows/backlogs in packets)."""

    send_time_s: np.ndarray  # s(j)
    ack_time_s: np.ndarray  # a(j)
    backlog_pkts: np.ndarray  # b(j)
    in_flight_pkts: np.ndarray  # p(j), right after j is sent
    window_at_send_pkts: np.ndarray  # w(s(j))
    decision_packets: np.ndarray  # tau_k
    decision_windows: np.ndarray  # w after decision k


def vegas_packet_level(c: float, d: float, alpha: float, *, w0: int = 1, n_packets: int = 50_000,
                       decision_spacing: str = "w", rtol: float = 1e-12) -> VegasPacketTrace:
    """Single Vegas flow in the packet-level ack-clocking model (thesis Sec. 2.1).

    Bottleneck with deterministic capacity ``c`` and infinite buffer, no loss, constant
    round-trip propagation delay ``d`` (including the 1/c processing time, so d >= 1/c),
    one ACK per packet, micro-bursts sent instantaneously (Algorithm 1):
    b(j) = max{b(j-1) + 1 - (s(j)-s(j-1)) c, 0} (2.5), a(j) = s(j) + d + b(j)/c (2.6).
    Decisions (2.17)-(2.20) at packets tau_k, tau_0 = w0: on the ACK of tau_k the RTT
    sample D = a - s gives dw = R(w, D) (2.23), w += dw, and
    tau_{k+1} = tau_k + w_old + max(dw, 0) (2.19), or tau_k + 2 w_old with
    ``decision_spacing="2w"``.
    """
    c, d, alpha = _pos("c", c), _pos("d", d), _pos("alpha", alpha)
    if d < 1 / c:
        raise ValueError(f"d={d!r} is invalid: the model needs d >= 1/c = {1 / c:g} s (d includes processing)")
    if not (isinstance(w0, (int, np.integer)) and w0 >= 1):
        raise ValueError(f"w0={w0!r} is invalid: expected an integer window >= 1 [packets]")
    if decision_spacing not in ("w", "2w"):
        raise ValueError(f"decision_spacing={decision_spacing!r} is invalid: expected 'w' or '2w'")
    if not (isinstance(n_packets, (int, np.integer)) and n_packets >= 1):
        raise ValueError(f"n_packets={n_packets!r} is invalid: expected an integer >= 1")
    n = int(n_packets)
    s = np.zeros(n)
    a = np.zeros(n)
    b = np.zeros(n)
    p = np.zeros(n, dtype=np.int64)
    wsend = np.zeros(n)
    dec_pk: list[int] = []
    dec_w: list[float] = []
    w = int(w0)
    nxt = 0  # next packet index to send
    inflight = 0
    tau = w0 - 1  # 0-based index of the first decision packet (thesis: tau_0 = w(0))

    def send_until_window(t):
        nonlocal nxt, inflight
        while inflight < w and nxt < n:
            j = nxt
            s[j] = t
            if j == 0:
                b[j] = 0.0
            else:
                b[j] = max(b[j - 1] + 1 - (s[j] - s[j - 1]) * c, 0.0)
            a[j] = s[j] + d + b[j] / c
            inflight += 1
            p[j] = inflight
            wsend[j] = w
            nxt += 1

    send_until_window(0.0)
    i = 0  # next ACK to process (ACKs return in order, Cor. 2.1.2.2)
    while i < nxt:
        t = a[i]
        inflight -= 1
        if i == tau:
            D = a[i] - s[i]
            dw = vegas_response(w, D, d, alpha, rtol=rtol)
            old = w
            w = max(1, w + dw)
            dec_pk.append(i)
            dec_w.append(w)
            tau = i + (old + max(dw, 0) if decision_spacing == "w" else 2 * old)
        send_until_window(t)
        i += 1
    m = nxt
    return VegasPacketTrace(s[:m], a[:m], b[:m], p[:m], wsend[:m], np.array(dec_pk), np.array(dec_w))


# ----------------------------------------------------------------------------- CLIs


def cli_fast(
    capacity_pps: Annotated[float, typer.Option("--capacity-pps", help="bottleneck capacity c [packets/s]")] = 10_000.0,
    delay_ms: Annotated[float, typer.Option("--delay-ms", help="round-trip propagation delay d [ms]")] = 100.0,
    alpha: Annotated[Optional[List[float]], typer.Option("--alpha", help="alpha_i per flow [packets]; repeat per flow")] = None,
    w0: Annotated[Optional[List[float]], typer.Option("--w0", help="initial window per flow [packets]; repeat per flow")] = None,
    gamma: Annotated[float, typer.Option("--gamma", help="FAST gain gamma in (0, 1]")] = 0.5,
    steps: Annotated[int, typer.Option("--steps", help="number of RTT updates to iterate")] = 60,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write the window trajectories to this path")] = None,
) -> None:
    """Wei thesis eqs. (2.25)-(2.29): FAST discrete map, iterated, vs the equilibrium of Thms 2.2.3.1-2."""
    from rich.console import Console
    from rich.table import Table

    alphas = alpha or [200.0, 100.0]
    w_init = w0 or [1.0] * len(alphas)
    d = delay_ms / 1000.0
    try:
        if len(w_init) != len(alphas):
            raise ValueError(f"w0 has {len(w_init)} entries but alpha has {len(alphas)}: expected one per flow")
        traj = fast_iterate(w_init, capacity_pps, d, alphas, gamma, steps)
        w_star, q_star = fast_equilibrium(capacity_pps, d, alphas)
    except ValueError as e:
        raise typer.BadParameter(str(e))
    t = Table(title=f"FAST map: c={capacity_pps:g} pkts/s, d={delay_ms:g} ms, gamma={gamma:g}, {steps} RTTs")
    for col in ("flow", "alpha_i [pkts]", "w_i(0)", f"w_i({steps})", "w_i* (Thm 2.2.3.2)"):
        t.add_column(col, justify="right")
    for i, a in enumerate(alphas):
        t.add_row(str(i), f"{a:g}", f"{w_init[i]:g}", f"{traj[-1, i]:.3f}", f"{w_star[i]:.3f}")
    t.add_row("sum", f"{sum(alphas):g}", f"{sum(w_init):g}", f"{traj[-1].sum():.3f}", f"{w_star.sum():.3f}")
    Console().print(t)
    Console().print(f"equilibrium queueing delay alpha/c = {q_star * 1000:.3f} ms")
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(figsize=(6, 4))
        for i in range(traj.shape[1]):
            ax.plot(traj[:, i], label=f"flow {i}")
            ax.axhline(w_star[i], ls=":", color="gray")
        ax.set_xlabel("RTT")
        ax.set_ylabel("window [packets]")
        ax.legend()
        fig.savefig(plot)


def cli_vegas(
    capacity_pps: Annotated[float, typer.Option("--capacity-pps", help="bottleneck capacity c [packets/s]")] = 1000.0,
    delay_ms: Annotated[float, typer.Option("--delay-ms", help="round-trip propagation delay d [ms] (includes 1/c)")] = 50.0,
    alpha: Annotated[float, typer.Option("--alpha", help="Vegas alpha [packets/s] (needs alpha*d > 1)")] = 60.0,
    w0: Annotated[int, typer.Option("--w0", help="initial window [packets]")] = 1,
    packets: Annotated[int, typer.Option("--packets", help="packets to simulate in the packet-level model")] = 20_000,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write window and backlog vs packet index to this path")] = None,
) -> None:
    """Wei thesis Thm 2.1.5: Vegas equilibrium bounds, checked with the packet-level ack-clocking model."""
    from rich.console import Console
    from rich.table import Table

    d = delay_ms / 1000.0
    try:
        bounds = vegas_equilibrium_bounds(capacity_pps, d, alpha)
        tr = vegas_packet_level(capacity_pps, d, alpha, w0=w0, n_packets=packets)
    except ValueError as e:
        raise typer.BadParameter(str(e))
    tail = slice(len(tr.send_time_s) // 2, None)
    t = Table(title=f"Vegas: c={capacity_pps:g} pkts/s, d={delay_ms:g} ms, alpha={alpha:g} pkts/s")
    for col in ("quantity", "Thm 2.1.5 interval", "packet model, 2nd half: min", "max"):
        t.add_column(col, justify="right")
    wl, wh = bounds["window"]
    ql, qh = bounds["queue"]
    t.add_row("window [pkts]", f"({wl:.3f}, {wh:.3f})", f"{tr.window_at_send_pkts[tail].min():g}",
              f"{tr.window_at_send_pkts[tail].max():g}")
    t.add_row("backlog [pkts]", f"({ql:.3f}, {qh:.3f})", f"{tr.backlog_pkts[tail].min():.3f}",
              f"{tr.backlog_pkts[tail].max():.3f}")
    Console().print(t)
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(2, 1, figsize=(6, 5), sharex=True)
        ax[0].plot(tr.window_at_send_pkts)
        ax[0].axhspan(wl, wh, color="green", alpha=0.2)
        ax[0].set_ylabel("window [pkts]")
        ax[1].plot(tr.backlog_pkts)
        ax[1].axhspan(ql, qh, color="green", alpha=0.2)
        ax[1].set_ylabel("backlog [pkts]")
        ax[1].set_xlabel("packet index j")
        fig.savefig(plot)


cli = cli_fast
