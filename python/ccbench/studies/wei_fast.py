"""Wei thesis Chapter 2, FAST (§2.2, eqs. 2.24-2.29, Theorems 2.2.3.1-2): the equilibrium
(alpha packets queued per flow, windows in proportion to alpha_i) and the convergence of
the discrete model, against packet-level runs of ``cc = "fast"``, sample by sample.

Xiaoliang (David) Wei, "Microscopic Behavior of Internet Congestion Control", Caltech 2007
(notes §2.4). Path, bounds and traces: :mod:`ccbench.studies.wei_ch2_runs`; the model:
:mod:`ccbench.models.wei_fast`. The thesis prints no FAST numbers (its FAST results are
theorems, and "as extensively evaluated in [37, 17], FAST has achieved much better
responsiveness and maintained the same stability as TCP Vegas"), so the "thesis" column
holds what the theorems say for our path.

Experiments
-----------
* ``alpha``: N flows with one alpha (10, 20, 40 packets): total window ``cd + N alpha``
  and backlog ``N alpha`` (Thm 2.2.3.1), every sample of the last quarter within the
  integer dead band ``N/(2 gamma)`` of the rounded law (:func:`wei_ch2_runs.fast_bounds`);
* ``alpha_i``: three groups with alpha_i = 10, 20, 30: each flow's window
  ``(alpha_i/alpha)(alpha + cd)`` (Thm 2.2.3.2);
* ``gamma``: gamma = 0.25, 0.5, 0.75 from 1.5x the equilibrium window: the total window
  against the model's ``W(k) = W* + (1 - gamma)^k (W(0) - W*)`` (eqs. 2.27-2.29; time
  advances by the model's RTT d + q per step) and the time to settle within 5 % of the
  initial distance;
* ``vs-vegas``: the same start with Vegas (2.6.16, alpha = beta = 20): FAST "converges much
  faster" (§2.2.1).

Choices: the path of ``wei-vegas`` (1000-byte packets, one ACK per packet, lossless,
baseRTT measured: FAST uses the minimum RTT, footnote 7), gamma = 0.5 unless varied,
alpha = 20. Flows start in congestion avoidance (``init_ssthresh``) 40 packets below the
equilibrium (``alpha``, ``alpha_i``) or at 1.5x it (``gamma``, ``vs-vegas``). ``ccsim``'s
FAST updates once per RTT (the thesis's Algorithm 2: every other RTT) and walks to the
target over the round. Sizes: reduced N = 10 at 80 Mbit/s, 200 ms; full N = 100 at
800 Mbit/s (the Vegas figures' path); 40 s runs (vs-vegas: 120 s), last quarter measured.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path as FsPath
from typing import Callable, Optional

import numpy as np
import pandas as pd

from . import wei_ch2_runs as R

DESCRIPTION = (
    "Wei thesis Ch. 2: FAST TCP's equilibrium (alpha packets queued per flow, windows in proportion to "
    "alpha_i) and convergence vs the discrete model (eqs. 2.24-2.29), and vs Vegas; sample by sample"
)

ALPHA = 20
GAMMA = 0.5
ALPHAS = (10, 20, 40)
ALPHA_I = (10, 20, 30)
GAMMAS = (0.25, 0.5, 0.75)
SETTLE = 0.05  # settled: within 5 % of the initial distance to the equilibrium


@dataclass(frozen=True)
class Size:
    rate_bps: float
    n: int
    duration_s: float = 40.0
    vegas_duration_s: float = 120.0

    @property
    def path(self) -> R.Path:
        return R.Path(self.rate_bps, 0.2)


REDUCED = Size(80e6, 10)
FULL = Size(800e6, 100)


def _w_star(path: R.Path, alphas: list[float]) -> np.ndarray:
    from ccbench.models.wei_fast import fast_equilibrium

    return fast_equilibrium(path.c, path.d, alphas)[0]


def run_alpha(size: Size, alpha: int) -> tuple[R.Trace, dict]:
    p = size.path
    w = (p.cd + size.n * alpha) / size.n
    tr = R.simulate(p, [("fast", size.n, R.fast_cc(alpha, GAMMA), max(2, int(w - 40)))], size.duration_s)
    b = R.fast_bounds(p, [alpha] * size.n, GAMMA)
    s = R.summary(tr.window(0.75 * size.duration_s), b)
    return tr, s


def run_alpha_i(size: Size) -> tuple[R.Trace, list[dict]]:
    """Three groups of flows with alpha_i = 10, 20, 30 (N/3 each, the rest in the last)."""
    p = size.path
    k = len(ALPHA_I)
    counts = [size.n // k] * (k - 1) + [size.n - (k - 1) * (size.n // k)]
    alphas = [a for a, m in zip(ALPHA_I, counts) for _ in range(m)]
    w = _w_star(p, alphas)
    groups, i = [], 0
    for g, (a, m) in enumerate(zip(ALPHA_I, counts)):
        groups.append((f"fast{g}_", m, R.fast_cc(a, GAMMA), max(2, int(w[i] - 40))))
        i += m
    tr = R.simulate(p, groups, size.duration_s).window(0.75 * size.duration_s)
    A = float(sum(alphas))
    dq = (p.cd + A) / A  # D/q at the equilibrium: a flow's dead band in window units
    out, i = [], 0
    for a, m in zip(ALPHA_I, counts):
        cw = tr.cwnd[:, i:i + m]
        want = float(w[i])
        lo, hi = want - dq / (2 * GAMMA), want + dq / (2 * GAMMA)
        out.append({"alpha_i": a, "flows": m, "mean": float(cw.mean()), "want": want, "lo": lo, "hi": hi,
                    "frac": R.frac_open(cw, lo, hi)})
        i += m
    return tr, out


def run_start_high(size: Size, cc: dict, duration_s: float) -> tuple[R.Trace, float, float]:
    """All flows from 1.5x the equilibrium window; returns the trace, W(0) and W*."""
    p = size.path
    w = (p.cd + size.n * ALPHA) / size.n
    w0 = int(1.5 * w)
    tr = R.simulate(p, [("f", size.n, cc, w0)], duration_s)
    return tr, size.n * w0, size.n * w


def settle_s(t: np.ndarray, W: np.ndarray, W0: float, Wstar: float) -> float:
    return R.settle_time(t, np.abs(W - Wstar) <= SETTLE * abs(W0 - Wstar))


def model_total(path: R.Path, n: int, w0: float, gamma: float, t_end: float) -> tuple[np.ndarray, np.ndarray]:
    """Total window of n homogeneous flows in the discrete model (2.25)+(2.27), one step
    per model RTT d + q."""
    from ccbench.models.wei_fast import fast_queue_delay_s, fast_step

    w = np.full(n, float(w0))
    t, ts, Ws = 0.0, [0.0], [w.sum()]
    while t < t_end:
        q = fast_queue_delay_s(w.sum(), path.c, path.d)
        w = fast_step(w, path.c, path.d, ALPHA, gamma)
        t += path.d + q
        ts.append(t)
        Ws.append(w.sum())
    return np.array(ts), np.array(Ws)


def run(full: bool = False, out: Optional[FsPath] = None,
        progress: Optional[Callable[[int, int], None]] = None) -> pd.DataFrame:
    """Runs the four experiments; writes ``wei_fast.csv`` (ours vs the theorems), figures
    and ``choices.txt`` to ``out``."""
    size = FULL if full else REDUCED
    p, n = size.path, size.n
    t0 = time.perf_counter()
    total = len(ALPHAS) + 1 + len(GAMMAS) + 1
    k = 0

    def tick():
        nonlocal k
        if progress:
            progress(k, total)
        k += 1

    rows: list[dict] = []

    def row(exp, quantity, ours, theorem, bound="", in_bound=float("nan"), agrees="", note=""):
        rows.append({"experiment": exp, "quantity": quantity, "ours": ours, "theorem": theorem,
                     "bound": bound, "in_bound": in_bound, "agrees": agrees, "note": note})

    alpha_traces = {}
    for a in ALPHAS:
        tick()
        tr, s = run_alpha(size, a)
        alpha_traces[a] = tr
        b = R.fast_bounds(p, [a] * n, GAMMA)
        row("alpha", f"backlog / N, alpha = {a} [pkts per flow]", round(s["queue_mean"] / n, 3), a,
            f"[{b.queue[0] / n:.1f}, {b.queue[1] / n:.1f}] (dead band 1/(2 gamma))", s["frac_queue_in"],
            s["frac_queue_in"] == 1.0, "Thm 2.2.3.1: N alpha queued")
        row("alpha", f"total window, alpha = {a} [pkts]", R.fmt_range(s["total_min"], s["total_max"]),
            round(p.cd + n * a, 2), f"({b.total[0]:.1f}, {b.total[1]:.1f})", s["frac_total_in"],
            s["frac_total_in"] == 1.0, "W* = cd + N alpha")
    tick()
    tr_i, groups = run_alpha_i(size)
    for g in groups:
        row("alpha_i", f"mean window, alpha_i = {g['alpha_i']} ({g['flows']} flows) [pkts]", round(g["mean"], 2),
            round(g["want"], 2), f"({g['lo']:.1f}, {g['hi']:.1f})", g["frac"], g["frac"] == 1.0,
            "Thm 2.2.3.2: (alpha_i/alpha)(alpha + cd)")
    ratio = groups[-1]["mean"] / groups[0]["mean"]
    lo_r, hi_r = groups[-1]["lo"] / groups[0]["hi"], groups[-1]["hi"] / groups[0]["lo"]
    row("alpha_i", "window ratio alpha_i = 30 : 10", round(ratio, 3), round(groups[-1]["want"] / groups[0]["want"], 3),
        f"({lo_r:.2f}, {hi_r:.2f}) from the dead bands", agrees=lo_r < ratio < hi_r,
        note="each flow stops anywhere in its dead band, D/q/(2 gamma) packets wide: the ratio is 3 only on average")

    gamma_curves = {}
    for g in GAMMAS:
        tick()
        tr, W0, Ws = run_start_high(size, R.fast_cc(ALPHA, g), size.duration_s)
        mt, mW = model_total(p, n, W0 / n, g, size.duration_s)
        gamma_curves[g] = (tr, mt, mW, Ws)
        ours, model = settle_s(tr.t, tr.total, W0, Ws), settle_s(mt, mW, W0, Ws)
        row("gamma", f"time to settle, gamma = {g} [s]", ours, round(model, 2),
            f"model (2.27): (1 - gamma)^k", agrees=bool(np.isfinite(ours) and ours <= 3 * model + 2 * p.d),
            note=f"within {SETTLE:.0%} of the distance from W(0) = 1.5 W* to W*; ours updates once per RTT")
    tick()
    tr_v, W0, Ws = run_start_high(size, R.vegas_cc(ALPHA, True, p), size.vegas_duration_s)
    fast = settle_s(gamma_curves[GAMMA][0].t, gamma_curves[GAMMA][0].total, W0, Ws)
    veg = settle_s(tr_v.t, tr_v.total, W0, Ws)
    row("vs-vegas", "time to settle from 1.5 W*: FAST vs Vegas (2.6.16) [s]", f"{fast:.2f} vs {veg:.1f}",
        "FAST much faster", agrees=bool(np.isfinite(fast) and (not np.isfinite(veg) or veg > 5 * fast)),
        note="same path, alpha = 20; Vegas moves one packet per two rounds")
    if progress:
        progress(total, total)
    table = R.verdict_table(rows, t0)
    if out is not None:
        out = FsPath(out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "wei_fast.csv", index=False)
        plot(size, alpha_traces, gamma_curves, tr_v, out / "wei_fast.png")
        (out / "choices.txt").write_text(
            f"size: {'full' if full else 'reduced'} {size}\nwall time: {table.attrs['wall_s']:.1f} s\n"
            f"{n} flows; path: {p.label()}, c = {p.c:.0f} pkt/s, d = {p.d * 1e3:.4f} ms, cd = {p.cd:.2f}\n"
            "- see the module docstring (ccbench.studies.wei_fast) for the choices\n")
    return table


def plot(size: Size, alpha_traces: dict, gamma_curves: dict, tr_v: R.Trace, path: FsPath) -> None:
    from ccbench.plots import new_figure

    p, n = size.path, size.n
    fig, ax = new_figure(1, 3, figsize=(15, 4.2))
    for a, tr in alpha_traces.items():
        ax[0].plot(tr.tq, tr.backlog / n, lw=0.8, label=f"alpha = {a}")
        ax[0].axhline(a, ls=":", color="gray")
    ax[0].set_ylabel("backlog / N [pkts per flow]")
    ax[0].set_title("equilibrium: alpha packets queued per flow", fontsize="small")
    for g, (tr, mt, mW, Ws) in gamma_curves.items():
        line, = ax[1].plot(tr.t, tr.total, lw=0.9, label=f"ccbench, gamma = {g}")
        ax[1].plot(mt, mW, ls=":", marker=".", ms=3, color=line.get_color(), label=f"model (2.27), gamma = {g}")
    ax[1].axhline(p.cd + n * ALPHA, ls="--", color="gray", lw=0.8)
    ax[1].set_xlim(0, min(size.duration_s, 6.0))
    ax[1].set_ylabel("total window W [pkts]")
    ax[1].set_title("convergence from 1.5 W* (Thm 2.2.3.1)", fontsize="small")
    tr_f = gamma_curves[GAMMA][0]
    ax[2].plot(tr_f.t, tr_f.total / n, lw=0.9, label=f"FAST, gamma = {GAMMA}")
    ax[2].plot(tr_v.t, tr_v.total / n, lw=0.9, label="Vegas (2.6.16)")
    ax[2].axhline((p.cd + n * ALPHA) / n, ls="--", color="gray", lw=0.8)
    ax[2].set_ylabel("mean cwnd [pkts]")
    ax[2].set_title("FAST vs Vegas, same start", fontsize="small")
    for a in ax:
        a.set_xlabel("time [s]")
        a.grid(True, alpha=0.3)
        a.legend(fontsize="x-small")
    fig.suptitle(f"Wei §2.2: FAST, {n} flows, {p.label()}", fontsize="medium")
    fig.savefig(path, dpi=110)
