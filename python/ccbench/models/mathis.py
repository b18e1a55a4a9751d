"""Mathis, Semke, Mahdavi & Ott (1997): the macroscopic behaviour of TCP congestion avoidance.

The "square-root formula" for the steady-state throughput of a long-lived TCP flow in
congestion avoidance that sees loss probability ``p`` (fraction of packets lost, one
loss per loss event):

    B = (MSS / RTT) * C / sqrt(p)                                   (Mathis eq. (3))

Derivation (periodic loss, Mathis Sec. 2): the window follows a sawtooth between W/2
and W, one loss every (W/2)^2 * 3/4 ... packets; solving gives W = sqrt(8/(3 b p)) and

    C = sqrt(3 / (2 b))

where ``b`` is the number of packets acknowledged per ACK (b = 1: ACK every packet,
C = sqrt(3/2) ~= 1.2247; b = 2: delayed ACK, C = sqrt(3/4) ~= 0.866).

The paper also reports constants fitted from simulations with *random* (Bernoulli)
losses (Mathis Table 1): C = 1.31 (ACK every packet) and C = 0.93 (delayed ACK).
The Lübben & Fidler benchmark uses C = 1.31 ("L = 1.31 for one acknowledgement per
packet"; their reference rate 4143 pkts/s = 1.31 / (sqrt(1e-3) * 10 ms)).

Modelling choices (documented, each with a keyword switch):

* ``loss_model="periodic"`` (default) uses the closed form C = sqrt(3/(2b)) for any
  b >= 1; ``loss_model="random"`` uses the paper's simulation constants, which exist
  only for b = 1 (1.31) and b = 2 (0.93); other b raise ``ValueError``.
* ``C=`` overrides the constant altogether.
* The formula is not capped by the receiver window or link capacity; pass
  ``max_rate_bytes_per_s`` to cap it (``min(B, cap)``), as PFTK does with W_max/RTT.

Units: MSS in bytes, RTT in seconds, p dimensionless in (0, 1]; results in packets/s,
bytes/s or bit/s as the function names say.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Optional

import numpy as np
import typer

__all__ = [
    "SQRT_3_2",
    "RANDOM_LOSS_CONSTANTS",
    "mathis_constant",
    "window_pkts",
    "throughput_pkts_per_s",
    "throughput_bytes_per_s",
    "throughput_bits_per_s",
    "loss_rate_for_throughput",
    "cli",
]

#: C for periodic loss and one ACK per packet (Mathis eq. (3) with b = 1).
SQRT_3_2 = math.sqrt(1.5)

#: Mathis et al. 1997 Table 1: constants from simulations with random losses, by b.
RANDOM_LOSS_CONSTANTS = {1: 1.31, 2: 0.93}

_LOSS_MODELS = ("periodic", "random")


def _check_positive(name: str, value, *, allow_inf: bool = False) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    bad = ~(arr > 0) | (np.isinf(arr) & (not allow_inf)) | np.isnan(arr)
    if np.any(bad):
        raise ValueError(
            f"{name}={value!r} is invalid: expected a finite number > 0"
            + (" (inf allowed)" if allow_inf else "")
        )
    return arr


def _check_prob(name: str, value, *, lo_open: bool = True, hi: float = 1.0) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    bad = np.isnan(arr) | (arr <= 0 if lo_open else arr < 0) | (arr > hi)
    if np.any(bad):
        lo = "(0" if lo_open else "[0"
        raise ValueError(f"{name}={value!r} is invalid: expected a probability in {lo}, {hi}]")
    return arr


def _scalar(x):
    arr = np.asarray(x)
    return float(arr) if arr.ndim == 0 else arr


def mathis_constant(b: float = 1.0, loss_model: str = "periodic") -> float:
    """The constant C of Mathis eq. (3).

    ``loss_model="periodic"``: C = sqrt(3/(2b)) (Mathis Sec. 2, deterministic sawtooth,
    b packets per ACK). ``loss_model="random"``: the simulation constants of Mathis
    Table 1, C = 1.31 (b = 1) and 0.93 (b = 2).
    """
    if loss_model not in _LOSS_MODELS:
        raise ValueError(f"loss_model={loss_model!r} is invalid: expected one of {_LOSS_MODELS}")
    if not (isinstance(b, (int, float)) and math.isfinite(b) and b >= 1):
        raise ValueError(f"b={b!r} is invalid: expected packets per ACK, a number >= 1")
    if loss_model == "periodic":
        return math.sqrt(3.0 / (2.0 * b))
    if b not in RANDOM_LOSS_CONSTANTS:
        raise ValueError(
            f"b={b!r} is invalid for loss_model='random': the paper gives constants only "
            f"for b in {sorted(RANDOM_LOSS_CONSTANTS)}"
        )
    return RANDOM_LOSS_CONSTANTS[int(b)]


def window_pkts(p, b: float = 1.0):
    """Peak window W = sqrt(8/(3 b p)) packets of the periodic-loss sawtooth (Mathis Sec. 2).

    The window oscillates between W/2 and W; the mean is 3W/4 (see also
    :func:`ccbench.models.luebben.periodic_loss_window`).
    """
    p = _check_prob("p", p)
    mathis_constant(b)  # validates b
    return _scalar(np.sqrt(8.0 / (3.0 * b * p)))


def throughput_pkts_per_s(
    rtt_s,
    p,
    *,
    b: float = 1.0,
    loss_model: str = "periodic",
    C: Optional[float] = None,
    max_rate_pkts_per_s: Optional[float] = None,
):
    """Mathis eq. (3) in packets/s: B = C / (RTT sqrt(p)).

    ``C`` overrides :func:`mathis_constant` (b, loss_model). ``max_rate_pkts_per_s``
    caps the result (e.g. W_max/RTT); by default it is uncapped as in the paper.
    Vectorised over ``rtt_s`` and ``p``.
    """
    rtt = _check_positive("rtt_s", rtt_s)
    p = _check_prob("p", p)
    if C is None:
        C = mathis_constant(b, loss_model)
    elif not (math.isfinite(C) and C > 0):
        raise ValueError(f"C={C!r} is invalid: expected a finite number > 0")
    rate = C / (rtt * np.sqrt(p))
    if max_rate_pkts_per_s is not None:
        _check_positive("max_rate_pkts_per_s", max_rate_pkts_per_s, allow_inf=True)
        rate = np.minimum(rate, max_rate_pkts_per_s)
    return _scalar(rate)


def throughput_bytes_per_s(mss_bytes, rtt_s, p, **kw):
    """Mathis eq. (3) in bytes/s: B = MSS C / (RTT sqrt(p)). Keywords as
    :func:`throughput_pkts_per_s` (a cap ``max_rate_pkts_per_s`` is in packets/s)."""
    mss = _check_positive("mss_bytes", mss_bytes)
    return _scalar(mss * np.asarray(throughput_pkts_per_s(rtt_s, p, **kw)))


def throughput_bits_per_s(mss_bytes, rtt_s, p, **kw):
    """Mathis eq. (3) in bit/s (8 x :func:`throughput_bytes_per_s`)."""
    return _scalar(8.0 * np.asarray(throughput_bytes_per_s(mss_bytes, rtt_s, p, **kw)))


def loss_rate_for_throughput(rate_pkts_per_s, rtt_s, *, b: float = 1.0,
                             loss_model: str = "periodic", C: Optional[float] = None):
    """Inverse of eq. (3): p = (C / (RTT B))^2, the loss rate at which the flow gets B."""
    rate = _check_positive("rate_pkts_per_s", rate_pkts_per_s)
    rtt = _check_positive("rtt_s", rtt_s)
    if C is None:
        C = mathis_constant(b, loss_model)
    p = (C / (rtt * rate)) ** 2
    if np.any(p > 1):
        raise ValueError(
            f"rate_pkts_per_s={rate_pkts_per_s!r} is invalid: below C/RTT, which would need p > 1"
        )
    return _scalar(p)


# --------------------------------------------------------------------------- CLI


def _plot_vs_p(path: Path, p_grid, curves: dict, title: str, ylabel: str) -> None:
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    fig, ax = new_figure(figsize=(6, 4))
    for label, y in curves.items():
        ax.loglog(p_grid, y, label=label)
    ax.set_xlabel("loss probability p")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.savefig(path)


def cli(
    rtt_ms: Annotated[float, typer.Option("--rtt-ms", help="round-trip time [ms]")] = 100.0,
    loss: Annotated[float, typer.Option("--loss", "-p", help="loss probability p (0, 1]")] = 0.01,
    mss: Annotated[int, typer.Option("--mss", help="maximum segment size [bytes]")] = 1460,
    b: Annotated[int, typer.Option("--b", help="packets acknowledged per ACK (1, or 2 with delayed ACK)")] = 1,
    loss_model: Annotated[
        str, typer.Option("--loss-model", help="'periodic' (C=sqrt(3/(2b))) or 'random' (C=1.31/0.93, Mathis Table 1)")
    ] = "periodic",
    plot: Annotated[Optional[Path], typer.Option("--plot", help="write throughput-vs-p plot to this PNG/PDF path")] = None,
) -> None:
    """Mathis et al. 1997 square-root throughput B = MSS*C/(RTT*sqrt(p))."""
    from rich.console import Console
    from rich.table import Table

    rtt = rtt_ms / 1000.0
    try:
        C = mathis_constant(b, loss_model)
        pkts = throughput_pkts_per_s(rtt, loss, C=C)
        w = float(np.sqrt(8.0 / (3.0 * b * loss)))
    except ValueError as e:
        _bad_parameter(e)
    table = Table(title="Mathis et al. 1997 (eq. 3)")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_column("unit")
    table.add_row("C", f"{C:.4f}", "")
    table.add_row("peak window sqrt(8/(3bp))", f"{w:.2f}", "packets")
    table.add_row("throughput", f"{pkts:.2f}", "packets/s")
    table.add_row("throughput", f"{pkts * mss:.1f}", "bytes/s")
    table.add_row("throughput", f"{pkts * mss * 8 / 1e6:.4f}", "Mbit/s")
    Console().print(table)
    if plot is not None:
        grid = np.logspace(-5, -0.5, 200)
        _plot_vs_p(plot, grid, {f"C={C:.3f}": throughput_bits_per_s(mss, rtt, grid, C=C) / 1e6},
                   f"Mathis, RTT={rtt_ms:g} ms, MSS={mss} B", "throughput [Mbit/s]")


def _bad_parameter(err: Exception):
    raise typer.BadParameter(str(err))
