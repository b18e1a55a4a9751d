"""Wei (Caltech PhD thesis 2007), Chapter 3: loss synchronisation of loss-based TCP.

Three groups of formulas; equation numbers are the thesis's.

1. **Signal-sampling model of the loss synchronisation rate** (Sec. 3.1.4, Fig. 3.4).
   In the congestion RTT, S packets pass the router. Flow i's w_i packets lie in a
   burst of K consecutive slots; the L drops lie in a burst of M slots; both bursts start
   uniformly at random (with wrap-around). With overlap k:

   * (3.1) P(hit_i | k) = 1 - (1 - L w_i / (M K))^k
   * (3.2) P(k) over k in [k_lo, k_hi], k_lo = max(0, M+K-S), k_hi = min(M, K):
     2/S inside, (max(M,K) - k_hi + 1)/S at k_hi, 1 - (max(M,K) + k_hi - 2 k_lo - 1)/S
     at k_lo, and 1 if k_lo = k_hi.
   * (3.3) lambda_i = sum_k P(hit_i | k) P(k)
   * Asymptotics (large N): (3.4) bursty TCP + DropTail (M = L, K = w_i, L >> w_i);
     (3.5) paced TCP + DropTail (K = S, M = L): 1 - (1 - w_i/S)^L; (3.6) ~ w_i L / S.
   * Fig. 3.5 parameters: L = N = 32, S = cd + B + L = 2000, w_i = S/N = 62.5.

2. **Fairness convergence** (Sec. 3.2.1): lower bound (3.8) on the time F of (3.7) for
   Reno, as a function of the synchronisation rate lambda and the mean window at a loss
   event (cd+B)/N.

3. **Throughput loss of fully synchronised flows** (Sec. 3.2.3.1, Fig. 3.15): Reno 3/4
   of capacity (Baccelli & Hong eq. (7), p = 1, thesis footnote 9); HighSpeed TCP
   (2 - beta(w))/2; Scalable TCP (1-beta_S)[(1+alpha_S)^T_S - 1]/(alpha_S T_S) with
   T_S = -log(1-beta_S)/log(1+alpha_S).

Documented choices for the ambiguities in the study note (§9), each with a switch:

* Eq. (3.4): the thesis writes lambda_i ~ (L-1)/S; the exact sum of its simplified P(k)
  is (L + w_i - 1)/S. :func:`sync_rate_bursty_asymptotic` returns the exact sum by
  default (``form="sum"``); ``form="thesis"`` gives (L-1)/S.
* Eq. (3.8) does not state its unit. We read it as RTTs: the log ratio counts loss
  events, and each loss epoch lasts lambda (cd+B)/(2N) RTTs (the aggregate window lost
  at an event, refilled at N packets per RTT). ``unit="rtts"`` (default), ``"seconds"``
  (needs ``rtt_s``) or ``"loss_events"`` (the bare log ratio).
* HighSpeed TCP: the thesis calls (2-beta)/2 "the loss of aggregate throughput"; it is
  the *achieved fraction*, the loss is beta/2. :class:`SyncThroughput` reports both
  ``fraction`` and ``loss`` explicitly.
* M, K, S must be integers (the model counts packet slots); w_i and L may be real.
  L w_i / (M K) must be <= 1 (a probability); otherwise ``ValueError``.
* beta(w) of HighSpeed TCP is RFC 3649's (W_low = 38, W_high = 83000, beta_high = 0.1),
  the parameters of the Linux module the thesis ran.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, List, Optional

import numpy as np
import typer

__all__ = [
    "overlap_distribution",
    "hit_probability",
    "sync_rate",
    "sync_rate_bursty_asymptotic",
    "sync_rate_paced",
    "sync_rate_paced_linear",
    "fig35_corners",
    "fairness_convergence_lower_bound",
    "SyncThroughput",
    "reno_sync_throughput",
    "hstcp_decrease_factor",
    "hstcp_increase_pkts",
    "hstcp_sync_throughput",
    "stcp_epoch_rtts",
    "stcp_sync_throughput",
    "sync_throughput_with_buffer",
    "cli_sync",
    "cli_fairness",
    "cli_throughput",
    "cli",
]


def _int_param(name, v, lo=1):
    if not (isinstance(v, (int, np.integer)) and v >= lo):
        raise ValueError(f"{name}={v!r} is invalid: expected an integer number of packet slots >= {lo}")
    return int(v)


def _pos(name, v, allow_zero=False):
    ok = isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(v) and (v >= 0 if allow_zero else v > 0)
    if not ok:
        raise ValueError(f"{name}={v!r} is invalid: expected a finite number {'>= 0' if allow_zero else '> 0'}")
    return float(v)


# ----------------------------------------------------------------------------- (3.1)-(3.6)


def overlap_distribution(S: int, M: int, K: int):
    """P(k) of thesis eq. (3.2): returns ``(k, P)`` arrays for k = k_lo..k_hi.

    k_lo = max(0, M+K-S), k_hi = min(M, K); requires M, K <= S.
    """
    S = _int_param("S", S)
    M = _int_param("M", M)
    K = _int_param("K", K)
    if M > S:
        raise ValueError(f"M={M} is invalid: expected M <= S={S} (the loss burst lies within the congestion RTT)")
    if K > S:
        raise ValueError(f"K={K} is invalid: expected K <= S={S} (the flow's burst lies within the congestion RTT)")
    k_lo, k_hi = max(0, M + K - S), min(M, K)
    k = np.arange(k_lo, k_hi + 1)
    if k_lo == k_hi:
        return k, np.ones(1)
    P = np.full(k.shape, 2.0 / S)
    P[-1] = (max(M, K) - k_hi + 1) / S
    P[0] = 1.0 - (max(M, K) + k_hi - 2 * k_lo - 1) / S
    return k, P


def hit_probability(k, *, L: float, w: float, M: int, K: int):
    """P(hit_i | k) = 1 - (1 - L w_i/(M K))^k (thesis eq. (3.1))."""
    L = _pos("L", L)
    w = _pos("w", w)
    x = L * w / (M * K)
    if x > 1:
        raise ValueError(
            f"L*w/(M*K)={x:.4g} is invalid (L={L}, w={w}, M={M}, K={K}): expected <= 1, "
            "a per-slot hit probability"
        )
    return 1.0 - (1.0 - x) ** np.asarray(k, dtype=float)


def sync_rate(*, S: int, M: int, K: int, L: float, w: float) -> float:
    """Loss synchronisation rate lambda_i of flow i (thesis eq. (3.3) with (3.1), (3.2))."""
    k, P = overlap_distribution(S, M, K)
    return float(np.sum(hit_probability(k, L=L, w=w, M=M, K=K) * P))


def sync_rate_bursty_asymptotic(*, S: float, L: float, w: float, form: str = "sum") -> float:
    """Bursty TCP + DropTail, large N (thesis eq. (3.4)).

    ``form="sum"``: 2(w-1)/S + (L-w+1)/S = (L+w-1)/S, the exact sum of the simplified P(k);
    ``form="thesis"``: the thesis's approximation (L-1)/S (valid for L >> w).
    """
    S, L, w = _pos("S", S), _pos("L", L), _pos("w", w)
    if form == "sum":
        return (L + w - 1) / S
    if form == "thesis":
        return (L - 1) / S
    raise ValueError(f"form={form!r} is invalid: expected 'sum' or 'thesis'")


def sync_rate_paced(*, S: float, L: float, w: float) -> float:
    """Paced TCP + DropTail (K = S, M = L): lambda_i = 1 - (1 - w_i/S)^L (thesis eq. (3.5))."""
    S, L, w = _pos("S", S), _pos("L", L), _pos("w", w)
    if w > S:
        raise ValueError(f"w={w} is invalid: expected w <= S={S}")
    return 1.0 - (1.0 - w / S) ** L


def sync_rate_paced_linear(*, S: float, L: float, w: float) -> float:
    """Large-N form of (3.5): lambda_i ~ w_i L / S (thesis eq. (3.6))."""
    S, L, w = _pos("S", S), _pos("L", L), _pos("w", w)
    return w * L / S


def fig35_corners(S: int = 2000, N: int = 32, bursty_K: Optional[int] = None) -> dict:
    """lambda at the corners of thesis Fig. 3.5 (L = N, w = S/N).

    A (bursty + DropTail): M = L, K = ceil(w) (our choice, the thesis gives no values);
    B (pacing): M = L, K = S; C (RED): M = S, K = ceil(w); both spread: M = K = S.
    """
    S = _int_param("S", S)
    N = _int_param("N", N)
    w = S / N
    Kb = int(math.ceil(w)) if bursty_K is None else _int_param("bursty_K", bursty_K)
    return {
        "A_bursty": sync_rate(S=S, M=N, K=Kb, L=N, w=w),
        "B_pacing": sync_rate(S=S, M=N, K=S, L=N, w=w),
        "C_red": sync_rate(S=S, M=S, K=Kb, L=N, w=w),
        "both_spread": sync_rate(S=S, M=S, K=S, L=N, w=w),
    }


# ----------------------------------------------------------------------------- (3.8)


_F_UNITS = ("rtts", "seconds", "loss_events")


def fairness_convergence_lower_bound(lam, mean_window_pkts: float, *, unit: str = "rtts",
                                     rtt_s: Optional[float] = None):
    """Lower bound on the fairness convergence time F (thesis eq. (3.8)), Reno:

    F >= max{0, [log 0.2 - log(1 - 1/(2-lambda))] / log(1 - lambda/2) * lambda W / 2},
    W = (cd+B)/N the mean window at a loss event [packets].

    ``lam`` in [0, 1] (vectorised). At lambda = 0 the number of loss events diverges like
    ln(2.5)/(lambda/2) while the epoch shrinks like lambda W/2, so F is the limit ln(2.5) W
    (~916 RTTs for W = 1000); for lambda >= 0.75 the bound is 0. Unit: see module docstring.
    """
    if unit not in _F_UNITS:
        raise ValueError(f"unit={unit!r} is invalid: expected one of {_F_UNITS}")
    lam_arr = np.asarray(lam, dtype=float)
    if np.any(np.isnan(lam_arr) | (lam_arr < 0) | (lam_arr > 1)):
        raise ValueError(f"lam={lam!r} is invalid: expected a synchronisation rate in [0, 1]")
    W = _pos("mean_window_pkts", mean_window_pkts)
    if unit == "seconds":
        if rtt_s is None:
            raise ValueError("rtt_s=None is invalid with unit='seconds': expected the RTT in seconds")
        rtt = _pos("rtt_s", rtt_s)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = 1.0 - 1.0 / (2.0 - lam_arr)
        events = (math.log(0.2) - np.log(inner)) / np.log(1.0 - lam_arr / 2.0)
        events = np.where(lam_arr >= 0.75, 0.0, np.maximum(events, 0.0))  # log ratio <= 0 for lambda >= 0.75
        epoch = lam_arr * W / 2.0
        rtts = events * epoch
        # lambda -> 0 limit: events ~ ln(2.5)/(lambda/2), epoch = lambda W/2 -> ln(2.5) W
        rtts = np.where(lam_arr == 0, math.log(2.5) * W, rtts)
    if unit == "loss_events":
        out = np.where(lam_arr == 0, np.inf, events)
    elif unit == "seconds":
        out = rtts * rtt
    else:
        out = rtts
    return float(out) if np.ndim(out) == 0 else out


# ----------------------------------------------------------------------------- throughput loss


@dataclass(frozen=True)
class SyncThroughput:
    """Aggregate throughput of N fully synchronised flows, as a fraction of capacity.

    ``fraction`` = achieved / capacity; ``loss`` = 1 - fraction. ``epoch_rtts`` is the
    length of a loss epoch in RTTs where the model defines it.
    """

    algorithm: str
    fraction: float
    loss: float
    epoch_rtts: float = float("nan")


def reno_sync_throughput() -> SyncThroughput:
    """Reno, fully synchronised, infinitely small buffer: 3/4 of capacity (thesis footnote 9:
    Baccelli & Hong eq. (7) with p = 1 gives C/(2N) after halving; mean (C/(2N) + C/N)/2)."""
    return SyncThroughput("reno", 0.75, 0.25)


def hstcp_decrease_factor(w, *, w_low: float = 38.0, w_high: float = 83000.0, beta_high: float = 0.1):
    """HighSpeed TCP decrease beta(w) (RFC 3649): 0.5 for w <= W_low, else
    (beta_high - 0.5)(log w - log W_low)/(log W_high - log W_low) + 0.5."""
    w_arr = np.asarray(w, dtype=float)
    if np.any(~(w_arr > 0)):
        raise ValueError(f"w={w!r} is invalid: expected a window > 0 packets")
    frac = (np.log(w_arr) - math.log(w_low)) / (math.log(w_high) - math.log(w_low))
    beta = np.where(w_arr <= w_low, 0.5, (beta_high - 0.5) * frac + 0.5)
    return float(beta) if beta.ndim == 0 else beta


def hstcp_increase_pkts(w, **kw):
    """HighSpeed TCP additive increase a(w) per RTT (RFC 3649):
    a(w) = w^2 p(w) 2 beta(w)/(2 - beta(w)), p(w) = 0.078 / w^1.2; 1 for w <= W_low."""
    w_arr = np.asarray(w, dtype=float)
    beta = np.asarray(hstcp_decrease_factor(w_arr, **kw))
    a = w_arr**2 * (0.078 / w_arr**1.2) * 2 * beta / (2 - beta)
    a = np.where(w_arr <= kw.get("w_low", 38.0), 1.0, a)
    return float(a) if a.ndim == 0 else a


def hstcp_sync_throughput(window_pkts: float) -> SyncThroughput:
    """HighSpeed TCP, synchronised, B -> 0 (thesis Sec. 3.2.3.1): fraction (2 - beta(w))/2,
    loss beta(w)/2, with w = (cd+B)/N the per-flow window at the loss event."""
    beta = hstcp_decrease_factor(_pos("window_pkts", window_pkts))
    return SyncThroughput("hstcp", (2 - beta) / 2, beta / 2)


def stcp_epoch_rtts(alpha: float = 0.01, beta: float = 0.125) -> float:
    """T_S = -log(1-beta_S)/log(1+alpha_S), RTTs per loss epoch of Scalable TCP (thesis Sec. 3.2.3.1)."""
    alpha = _pos("alpha", alpha)
    if not (0 < beta < 1):
        raise ValueError(f"beta={beta!r} is invalid: expected a decrease fraction in (0, 1)")
    return -math.log(1 - beta) / math.log(1 + alpha)


def stcp_sync_throughput(alpha: float = 0.01, beta: float = 0.125) -> SyncThroughput:
    """Scalable TCP, synchronised: fraction (1-beta)[(1+alpha)^T_S - 1]/(alpha T_S) (thesis
    Sec. 3.2.3.1), a constant independent of buffer (6.85 % loss for alpha = 0.01, beta = 1/8)."""
    T = stcp_epoch_rtts(alpha, beta)
    frac = (1 - beta) * ((1 + alpha) ** T - 1) / (alpha * T)
    return SyncThroughput("stcp", frac, 1 - frac, T)


_ALGOS = ("reno", "hstcp", "stcp")


def sync_throughput_with_buffer(algorithm: str, *, bdp_pkts: float, buffer_pkts: float, n_flows: int = 1,
                                stcp_alpha: float = 0.01, stcp_beta: float = 0.125,
                                hstcp_increase: str = "epoch_constant",
                                max_rtts: int = 10_000_000) -> SyncThroughput:
    """Synchronised throughput for a finite buffer (the Fig. 3.15 sweep), by iterating one loss epoch.

    Our model of the thesis's setting (N synchronised flows = one flow on c/N with buffer
    B/N): the window rises per RTT from (1-beta) W to W = (cd+B)/N (Reno +1, HighSpeed
    +a(w), Scalable x(1+alpha)); an RTT with window w lasts max(d, w/(c/N)) because of the
    queue, so the utilisation is sum(w_k) / sum(max(W*, w_k)) with W* = cd/N. With B -> 0
    this reduces to the closed forms above (up to the per-RTT discretisation).

    ``hstcp_increase="epoch_constant"`` (default) follows the thesis's assumption that
    HighSpeed's additive increase is constant in the epoch, a(W) at the top window;
    ``"per_rtt"`` re-evaluates RFC 3649's a(w) every RTT (a(w) is smaller at smaller w, so
    the window lingers longer near the bottom of the epoch and the fraction is lower).
    """
    if hstcp_increase not in ("epoch_constant", "per_rtt"):
        raise ValueError(f"hstcp_increase={hstcp_increase!r} is invalid: expected 'epoch_constant' or 'per_rtt'")
    if algorithm not in _ALGOS:
        raise ValueError(f"algorithm={algorithm!r} is invalid: expected one of {_ALGOS}")
    bdp = _pos("bdp_pkts", bdp_pkts)
    buf = _pos("buffer_pkts", buffer_pkts, allow_zero=True)
    n = _int_param("n_flows", n_flows)
    w_star = bdp / n
    w_top = (bdp + buf) / n
    if algorithm == "reno":
        beta = 0.5
    elif algorithm == "hstcp":
        beta = hstcp_decrease_factor(w_top)
    else:
        beta = stcp_beta
    w = (1 - beta) * w_top
    a_const = hstcp_increase_pkts(w_top) if algorithm == "hstcp" else 1.0
    sent = 0.0
    slots = 0.0
    k = 0
    while True:
        step = min(w, w_top)
        sent += step
        slots += max(w_star, step)
        k += 1
        if w >= w_top or k >= max_rtts:
            break
        if algorithm == "reno":
            w += 1.0
        elif algorithm == "hstcp":
            w += a_const if hstcp_increase == "epoch_constant" else hstcp_increase_pkts(w)
        else:
            w *= 1 + stcp_alpha
    frac = sent / slots
    return SyncThroughput(algorithm, frac, 1 - frac, float(k))


# ----------------------------------------------------------------------------- CLIs


def _table(title, cols):
    from rich.table import Table

    t = Table(title=title)
    for c in cols:
        t.add_column(c, justify="left" if c == cols[0] else "right")
    return t


def _print(t):
    from rich.console import Console

    Console().print(t)


def _savefig(fig, path):
    fig.savefig(path)

def cli_sync(
    s: Annotated[int, typer.Option("--S", help="packets through the router in the congestion RTT, cd+B+L [packets]")] = 2000,
    n: Annotated[int, typer.Option("--flows", "-N", help="number of flows N (L = N drops, w = S/N)")] = 32,
    m: Annotated[Optional[int], typer.Option("--M", help="loss-burst length M [slots] (default: L, DropTail)")] = None,
    k: Annotated[Optional[int], typer.Option("--K", help="flow-burst length K [slots] (default: ceil(w), bursty)")] = None,
    drops: Annotated[Optional[float], typer.Option("--L", help="drops in the loss event L [packets] (default N)")] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write lambda-vs-K curves (M = L, S) to this path")] = None,
) -> None:
    """Wei thesis eqs. (3.1)-(3.6): loss synchronisation rate of one flow."""
    L = float(n) if drops is None else drops
    try:
        w = s / n
        M = int(round(L)) if m is None else m
        K = int(math.ceil(w)) if k is None else k
        lam = sync_rate(S=s, M=M, K=K, L=L, w=w)
        corners = fig35_corners(s, n)
        rows = [
            (f"eq. (3.3), M={M}, K={K}", lam),
            ("eq. (3.4) bursty asymptote (L+w-1)/S", sync_rate_bursty_asymptotic(S=s, L=L, w=w)),
            ("eq. (3.4) thesis form (L-1)/S", sync_rate_bursty_asymptotic(S=s, L=L, w=w, form="thesis")),
            ("eq. (3.5) paced", sync_rate_paced(S=s, L=L, w=w)),
            ("eq. (3.6) paced, linear", sync_rate_paced_linear(S=s, L=L, w=w)),
        ] + [(f"Fig. 3.5 corner {name}", v) for name, v in corners.items()]
    except ValueError as e:
        raise typer.BadParameter(str(e))
    t = _table(f"Loss synchronisation: S={s}, N={n}, L={L:g}, w={w:g}", ["model", "lambda"])
    for name, v in rows:
        t.add_row(name, f"{v:.4f}")
    _print(t)
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(figsize=(6, 4))
        Ks = np.unique(np.logspace(0, math.log10(s), 60).astype(int))
        Ks = Ks[L * w / (Ks * max(int(round(L)), 1)) <= 1]
        for Mv in (int(round(L)), s):
            ax.semilogx(Ks, [sync_rate(S=s, M=Mv, K=int(x), L=L, w=w) for x in Ks], label=f"M={Mv}")
        ax.set_xlabel("flow burst length K [slots]")
        ax.set_ylabel("synchronisation rate lambda")
        ax.legend()
        ax.grid(True, which="both", alpha=0.3)
        _savefig(fig, plot)


def cli_fairness(
    mean_window: Annotated[float, typer.Option("--mean-window", help="(cd+B)/N, mean window at a loss event [packets]")] = 1000.0,
    lam: Annotated[Optional[List[float]], typer.Option("--lam", help="synchronisation rate(s) lambda in [0, 1]; repeatable")] = None,
    rtt_ms: Annotated[Optional[float], typer.Option("--rtt-ms", help="RTT [ms] to also print F in seconds")] = None,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write the F-vs-lambda curve (Fig. 3.11) to this path")] = None,
) -> None:
    """Wei thesis eq. (3.8): lower bound on Reno's fairness convergence time F."""
    lams = lam or [0.0, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.75]
    try:
        F = [fairness_convergence_lower_bound(x, mean_window) for x in lams]
    except ValueError as e:
        raise typer.BadParameter(str(e))
    cols = ["lambda", "F [RTTs]"] + (["F [s]"] if rtt_ms else [])
    t = _table(f"Fairness convergence lower bound, (cd+B)/N = {mean_window:g} packets", cols)
    for x, f in zip(lams, F):
        row = [f"{x:g}", f"{f:.1f}"] + ([f"{f * rtt_ms / 1000:.1f}"] if rtt_ms else [])
        t.add_row(*row)
    _print(t)
    if plot is not None:
        grid = np.linspace(0, 1, 201)
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(figsize=(6, 4))
        ax.plot(grid, fairness_convergence_lower_bound(grid, mean_window))
        ax.set_xlabel("loss synchronisation rate lambda")
        ax.set_ylabel("F lower bound [RTTs]")
        ax.grid(True, alpha=0.3)
        _savefig(fig, plot)


def cli_throughput(
    bdp: Annotated[float, typer.Option("--bdp", help="bandwidth-delay product cd [packets]")] = 10440.0,
    buffer: Annotated[float, typer.Option("--buffer", help="bottleneck buffer B [packets]")] = 0.0,
    n: Annotated[int, typer.Option("--flows", "-N", help="number of synchronised flows N")] = 1,
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write throughput loss vs buffer (Fig. 3.15) to this path")] = None,
) -> None:
    """Wei thesis Sec. 3.2.3.1: aggregate throughput loss of fully synchronised Reno/HS-TCP/S-TCP."""
    try:
        w = (bdp + buffer) / n
        closed = [reno_sync_throughput(), hstcp_sync_throughput(w), stcp_sync_throughput()]
        numeric = [sync_throughput_with_buffer(a, bdp_pkts=bdp, buffer_pkts=buffer, n_flows=n) for a in _ALGOS]
    except ValueError as e:
        raise typer.BadParameter(str(e))
    t = _table(f"Synchronised throughput: BDP={bdp:g}, B={buffer:g}, N={n}",
               ["algorithm", "fraction (B->0)", "loss (B->0)", "fraction (buffer B)", "loss (buffer B)"])
    for c, nm in zip(closed, numeric):
        t.add_row(c.algorithm, f"{c.fraction:.4f}", f"{c.loss:.4f}", f"{nm.fraction:.4f}", f"{nm.loss:.4f}")
    _print(t)
    if plot is not None:
        bufs = np.linspace(0, bdp, 41)
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        fig, ax = new_figure(figsize=(6, 4))
        for a in _ALGOS:
            ax.plot(bufs / bdp, [sync_throughput_with_buffer(a, bdp_pkts=bdp, buffer_pkts=b, n_flows=n).loss for b in bufs],
                    label=a)
        ax.set_xlabel("buffer / BDP")
        ax.set_ylabel("throughput loss (fraction of capacity)")
        ax.legend()
        ax.grid(True, alpha=0.3)
        _savefig(fig, plot)


cli = cli_sync
