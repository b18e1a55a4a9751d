"""Padhye, Firoiu, Towsley & Kurose (SIGCOMM 1998): "Modeling TCP throughput: a simple
model and its empirical validation" (PFTK).

Steady-state send rate of a bulk TCP Reno flow as a function of the loss probability
``p`` (per-packet, losses within a round correlated: after one loss the rest of the
round is lost), the round-trip time ``RTT``, the base retransmission timeout ``T0``,
the number ``b`` of packets acknowledged per ACK and the receiver-window limit
``W_max``. Equation numbers refer to the SIGCOMM'98 paper (the ToN 2000 version
renumbers them); the symbols are the paper's.

* E[W_u] = (2+b)/(3b) + sqrt( 8(1-p)/(3bp) + ((2+b)/(3b))^2 )     unconstrained window
  at a triple-duplicate loss indication (eq. (13)).
* Triple-duplicate-only model (Sec. 2.1, eqs. (18)/(20)):
  B = ((1-p)/p + E[W]) / (RTT (b E[W]/2 + 1))  ~  (1/RTT) sqrt(3/(2bp)).
* Q̂(w) = min(1, (1-(1-p)^3)(1+(1-p)^3(1-(1-p)^(w-3))) / (1-(1-p)^w)), the probability
  that a loss indication in a window of w is a timeout (eq. (24)); Q̂(w) = 1 for w <= 3.
* f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 (backoff series, eq. (28)).
* Full model with timeouts and window limitation (eq. (32)):

    B = [ (1-p)/p + E[W_u] + Q̂(E[W_u])/(1-p) ]
        / [ RTT (b E[W_u]/2 + 1) + Q̂(E[W_u]) T0 f(p)/(1-p) ]             if E[W_u] < W_max

    B = [ (1-p)/p + W_max + Q̂(W_max)/(1-p) ]
        / [ RTT (b W_max/8 + (1-p)/(p W_max) + 2) + Q̂(W_max) T0 f(p)/(1-p) ]   otherwise

* Approximate model (eq. (33)):

    B ~ min( W_max/RTT, 1 / ( RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1 + 32 p^2) ) )

All rates are in packets/s unless the name says bytes/s or bit/s; times in seconds.

Modelling choices (each documented, each with a keyword switch):

* ``variant="pftk98"`` (default) is the formula above. ``variant="csa00"`` is the form
  Cardwell, Savage & Anderson (INFOCOM 2000, their eq. (22)) use for the steady state,
  which counts W/2 + Q̂ instead of W + Q̂/(1-p) packets in the numerator (our
  transcription of that paper). The two agree to leading order as p -> 0.
* The equation numbers above are the SIGCOMM'98 numbering as we read it; the ToN 2000
  journal version of the same model numbers the full formula (31).
* ``b`` defaults to 2 (delayed ACKs), the case the paper validates against; pass b=1
  for one ACK per packet.
* ``W_max = inf`` (default) disables the receiver-window limit.
* ``p`` must be in (0, 1): p = 0 is the loss-free limit where the rate is W_max/RTT
  (use :func:`throughput_pkts_per_s` with ``p`` tiny, or just W_max/RTT), and p = 1
  makes the timeout series divergent (division by 1 - p).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

__all__ = [
    "backoff_series",
    "q_hat",
    "expected_window_unlimited_pkts",
    "throughput_td_only_pkts_per_s",
    "throughput_pkts_per_s",
    "throughput_approx_pkts_per_s",
    "throughput_bytes_per_s",
    "throughput_bits_per_s",
    "cli",
]

_VARIANTS = ("pftk98", "csa00")


def _scalar(x):
    arr = np.asarray(x)
    return float(arr) if arr.ndim == 0 else arr


def _check_p(p) -> np.ndarray:
    arr = np.asarray(p, dtype=float)
    if np.any(np.isnan(arr) | (arr <= 0) | (arr >= 1)):
        raise ValueError(f"p={p!r} is invalid: expected a loss probability in the open interval (0, 1)")
    return arr


def _check_pos(name, value, *, allow_inf=False) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    bad = np.isnan(arr) | ~(arr > 0) | (np.isinf(arr) & (not allow_inf))
    if np.any(bad):
        raise ValueError(
            f"{name}={value!r} is invalid: expected a number > 0" + (" (inf allowed)" if allow_inf else ", finite")
        )
    return arr


def _check_nonneg(name, value) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if np.any(np.isnan(arr) | (arr < 0) | np.isinf(arr)):
        raise ValueError(f"{name}={value!r} is invalid: expected a finite number >= 0")
    return arr


def _check_b(b) -> float:
    if not (isinstance(b, (int, float)) and math.isfinite(b) and b >= 1):
        raise ValueError(f"b={b!r} is invalid: expected packets acknowledged per ACK, a number >= 1")
    return float(b)


def backoff_series(p):
    """f(p) = 1 + p + 2p^2 + 4p^3 + 8p^4 + 16p^5 + 32p^6 (PFTK eq. (28); G(p) in Cardwell eq. (19)).

    E[duration of a timeout sequence] = T0 f(p)/(1-p) (exponential backoff capped at 64 T0).
    """
    p = _check_p(p)
    return _scalar(1 + p + 2 * p**2 + 4 * p**3 + 8 * p**4 + 16 * p**5 + 32 * p**6)


def q_hat(p, w):
    """Q̂(w): probability that a loss indication in a window of w packets is a timeout (PFTK eq. (24)).

    Q̂(w) = min(1, (1-(1-p)^3)(1 + (1-p)^3 (1-(1-p)^(w-3))) / (1-(1-p)^w)), and 1 for w <= 3.
    Its small-p limit is min(1, 3/w).
    """
    p = _check_p(p)
    w = _check_pos("w", w)
    q = 1.0 - p
    with np.errstate(divide="ignore", invalid="ignore"):
        val = (1 - q**3) * (1 + q**3 * (1 - q ** (w - 3))) / (1 - q**w)
    val = np.where(w <= 3, 1.0, np.minimum(1.0, val))
    return _scalar(val)


def expected_window_unlimited_pkts(p, b: float = 2.0):
    """E[W_u] = (2+b)/(3b) + sqrt(8(1-p)/(3bp) + ((2+b)/(3b))^2) (PFTK eq. (13)), in packets."""
    p = _check_p(p)
    b = _check_b(b)
    a = (2 + b) / (3 * b)
    return _scalar(a + np.sqrt(8 * (1 - p) / (3 * b * p) + a * a))


def throughput_td_only_pkts_per_s(rtt_s, p, *, b: float = 2.0, approximate: bool = False):
    """Triple-duplicate-only model (PFTK Sec. 2.1, no timeouts, no W_max).

    Exact: ((1-p)/p + E[W]) / (RTT (b E[W]/2 + 1)) (eq. (18) with (13) and E[X] = b E[W]/2).
    ``approximate=True``: its leading term (1/RTT) sqrt(3/(2bp)) (eq. (20)), which is Mathis
    eq. (3) with C = sqrt(3/(2b)).
    """
    rtt = _check_pos("rtt_s", rtt_s)
    p = _check_p(p)
    b = _check_b(b)
    if approximate:
        return _scalar(np.sqrt(3.0 / (2.0 * b * p)) / rtt)
    w = np.asarray(expected_window_unlimited_pkts(p, b))
    return _scalar(((1 - p) / p + w) / (rtt * (b * w / 2 + 1)))


def throughput_pkts_per_s(rtt_s, p, *, t0_s, b: float = 2.0, w_max_pkts=math.inf, variant: str = "pftk98"):
    """Full PFTK model with timeouts and window limitation (eq. (32)), packets/s.

    ``variant="csa00"`` gives Cardwell et al. 2000 eq. (22) instead (see module docstring).
    Vectorised over ``rtt_s``, ``p``, ``t0_s`` and ``w_max_pkts``.
    """
    if variant not in _VARIANTS:
        raise ValueError(f"variant={variant!r} is invalid: expected one of {_VARIANTS}")
    rtt = _check_pos("rtt_s", rtt_s)
    p = _check_p(p)
    t0 = _check_nonneg("t0_s", t0_s)
    b = _check_b(b)
    wmax = _check_pos("w_max_pkts", w_max_pkts, allow_inf=True)
    wu = np.asarray(expected_window_unlimited_pkts(p, b))
    f = np.asarray(backoff_series(p))
    limited = wu >= wmax
    w = np.where(limited, wmax, wu)
    w_finite = np.where(np.isinf(w), 1.0, w)  # only used on branches where w is finite
    Q = np.asarray(q_hat(p, w_finite))
    if variant == "pftk98":
        num = (1 - p) / p + w + Q / (1 - p)
    else:
        num = (1 - p) / p + w / 2 + Q
    to_term = Q * t0 * f / (1 - p)
    den_unlim = rtt * (b * w / 2 + 1) + to_term
    den_lim = rtt * (b * w_finite / 8 + (1 - p) / (p * w_finite) + 2) + to_term
    return _scalar(num / np.where(limited, den_lim, den_unlim))


def throughput_approx_pkts_per_s(rtt_s, p, *, t0_s, b: float = 2.0, w_max_pkts=math.inf):
    """PFTK approximate model (eq. (33)), packets/s:

    min(W_max/RTT, 1/(RTT sqrt(2bp/3) + T0 min(1, 3 sqrt(3bp/8)) p (1+32p^2))).
    """
    rtt = _check_pos("rtt_s", rtt_s)
    p = _check_p(p)
    t0 = _check_nonneg("t0_s", t0_s)
    b = _check_b(b)
    wmax = _check_pos("w_max_pkts", w_max_pkts, allow_inf=True)
    den = rtt * np.sqrt(2 * b * p / 3) + t0 * np.minimum(1.0, 3 * np.sqrt(3 * b * p / 8)) * p * (1 + 32 * p**2)
    return _scalar(np.minimum(wmax / rtt, 1.0 / den))


def throughput_bytes_per_s(mss_bytes, rtt_s, p, *, t0_s, b: float = 2.0, w_max_pkts=math.inf,
                           variant: str = "pftk98", approximate: bool = False):
    """PFTK rate in bytes/s = MSS x packets/s (full eq. (32), or eq. (33) if ``approximate``)."""
    mss = _check_pos("mss_bytes", mss_bytes)
    if approximate:
        r = throughput_approx_pkts_per_s(rtt_s, p, t0_s=t0_s, b=b, w_max_pkts=w_max_pkts)
    else:
        r = throughput_pkts_per_s(rtt_s, p, t0_s=t0_s, b=b, w_max_pkts=w_max_pkts, variant=variant)
    return _scalar(mss * np.asarray(r))


def throughput_bits_per_s(mss_bytes, rtt_s, p, **kw):
    """PFTK rate in bit/s (8 x :func:`throughput_bytes_per_s`)."""
    return _scalar(8.0 * np.asarray(throughput_bytes_per_s(mss_bytes, rtt_s, p, **kw)))


# --------------------------------------------------------------------------- CLI


def cli(
    rtt_ms: Annotated[float, typer.Option("--rtt-ms", help="round-trip time [ms]")] = 100.0,
    loss: Annotated[float, typer.Option("--loss", "-p", help="loss probability p in (0, 1)")] = 0.01,
    t0_ms: Annotated[
        Optional[float], typer.Option("--t0-ms", help="base retransmission timeout T0 [ms] (default 4 x RTT)")
    ] = None,
    b: Annotated[float, typer.Option("--b", help="packets acknowledged per ACK (2 = delayed ACK)")] = 2.0,
    w_max: Annotated[
        Optional[float], typer.Option("--w-max", help="receiver window limit W_max [packets] (default: none)")
    ] = None,
    mss: Annotated[int, typer.Option("--mss", help="maximum segment size [bytes]")] = 1460,
    variant: Annotated[str, typer.Option("--variant", help="'pftk98' (eq. 32) or 'csa00' (Cardwell eq. 22)")] = "pftk98",
    plot: Annotated[
        Optional[Path], typer.Option("--plot", help="write throughput-vs-p plot (full, approx, Mathis) to this path")
    ] = None,
) -> None:
    """PFTK (SIGCOMM'98) TCP Reno throughput: full model (eq. 32) and approximation (eq. 33)."""
    from rich.console import Console
    from rich.table import Table

    rtt = rtt_ms / 1000.0
    t0 = 4 * rtt if t0_ms is None else t0_ms / 1000.0
    wmax = math.inf if w_max is None else w_max
    try:
        full = throughput_pkts_per_s(rtt, loss, t0_s=t0, b=b, w_max_pkts=wmax, variant=variant)
        approx = throughput_approx_pkts_per_s(rtt, loss, t0_s=t0, b=b, w_max_pkts=wmax)
        td = throughput_td_only_pkts_per_s(rtt, loss, b=b)
        sqrt_law = throughput_td_only_pkts_per_s(rtt, loss, b=b, approximate=True)
        wu = expected_window_unlimited_pkts(loss, b)
        qh = q_hat(loss, min(wu, wmax))
    except ValueError as e:
        raise typer.BadParameter(str(e))
    table = Table(title=f"PFTK: RTT={rtt_ms:g} ms, p={loss:g}, T0={t0 * 1000:g} ms, b={b:g}")
    for col, just in (("quantity", "left"), ("packets/s", "right"), ("Mbit/s", "right")):
        table.add_column(col, justify=just)
    for name, val in (
        (f"full model (eq. 32, {variant})", full),
        ("approximate model (eq. 33)", approx),
        ("triple-duplicate only", td),
        ("sqrt(3/(2bp))/RTT (Mathis limit)", sqrt_law),
    ):
        table.add_row(name, f"{val:.2f}", f"{val * mss * 8 / 1e6:.4f}")
    table.add_row("E[W_u] [packets]", f"{wu:.2f}", "")
    table.add_row("Q̂(min(E[W_u], W_max))", f"{qh:.4f}", "")
    Console().print(table)
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

        grid = np.logspace(-4, -0.3, 200)
        fig, ax = new_figure(figsize=(6, 4))
        scale = mss * 8 / 1e6
        ax.loglog(grid, throughput_pkts_per_s(rtt, grid, t0_s=t0, b=b, w_max_pkts=wmax, variant=variant) * scale,
                  label="full (eq. 32)")
        ax.loglog(grid, throughput_approx_pkts_per_s(rtt, grid, t0_s=t0, b=b, w_max_pkts=wmax) * scale,
                  "--", label="approx (eq. 33)")
        ax.loglog(grid, throughput_td_only_pkts_per_s(rtt, grid, b=b, approximate=True) * scale, ":",
                  label="sqrt(3/(2bp))/RTT")
        ax.set_xlabel("loss probability p")
        ax.set_ylabel("throughput [Mbit/s]")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        fig.savefig(plot)
