"""Plots of the benchmark (matplotlib, Agg canvas; no pyplot global state).

Every function takes an output path; the format follows the suffix (``.png`` or
``.svg``, anything else is a :class:`NetcalError`) and the path is returned.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from .decomposition import ccdf
from .errors import NetcalError
from .estimator import ServiceCurveEstimate, log_time_grid

__all__ = ["plot_attainable_rate", "plot_delay_ccdfs", "plot_delay_bound", "plot_buffering"]

_FORMATS = {".png": "png", ".svg": "svg"}


def _figure(width=6.4, height=4.2):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path) -> Path:
    p = Path(path)
    fmt = _FORMATS.get(p.suffix.lower())
    if fmt is None:
        raise NetcalError(f"plot path must end in .png or .svg, got {p.name!r}")
    p.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(p, format=fmt, dpi=120)
    return p


def plot_attainable_rate(
    estimates: ServiceCurveEstimate | Mapping[str, ServiceCurveEstimate],
    path,
    t_range_s: tuple[float, float] | None = None,
    unit_bps: float = 1e6,
    reference: Mapping[str, tuple[Sequence[float], Sequence[float]]] | None = None,
) -> Path:
    """``α̃^ε(t)`` on a logarithmic time axis; one line per estimate, ε in the legend.

    ``reference`` maps labels to ``(t_s, rate_bps)`` curves drawn dashed (e.g. an
    analytical curve).
    """
    items = {"estimate": estimates} if isinstance(estimates, ServiceCurveEstimate) else dict(estimates)
    if not items:
        raise NetcalError("nothing to plot")
    if t_range_s is None:
        lo = min(max(e.latency_s, 1e-4) for e in items.values()) / 3
        hi = max(float(e.t_grid_s[-1]) for e in items.values())
        t_range_s = (lo, max(hi, 10 * lo))
    t = log_time_grid(*t_range_s, 400)
    fig = _figure()
    ax = fig.add_subplot(111)
    for label, est in items.items():
        ax.plot(t, est.alpha(t) / unit_bps, label=f"{label} (ξ={est.xi:g}, |R|={est.n_rates}, ε={est.eps:g})")
    for label, (rt, rv) in (reference or {}).items():
        ax.plot(np.asarray(rt), np.asarray(rv) / unit_bps, "--", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("time scale t [s]")
    ax.set_ylabel("attainable rate α̃(t) [Mbit/s]" if unit_bps == 1e6 else "attainable rate α̃(t)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_delay_ccdfs(samples: Mapping[str, Sequence[float]], path, log_x: bool = False) -> Path:
    """Log-probability CCDFs ``P[X > x]`` of several delay samples (e.g. components)."""
    if not samples:
        raise NetcalError("nothing to plot")
    fig = _figure()
    ax = fig.add_subplot(111)
    for label, vals in samples.items():
        x, p = ccdf(vals)
        m = p > 0
        if m.any():
            ax.step(x[m], p[m], where="post", label=label)
    ax.set_yscale("log")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlabel("delay [s]")
    ax.set_ylabel("P[delay > x]")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_delay_bound(
    bound_s: Sequence[float],
    path,
    quantiles_s: Sequence[float] | None = None,
    envelope_bound_s: float | None = None,
    eps: float | None = None,
) -> Path:
    """Per-packet delay bound against packet number, optionally with per-packet empirical
    quantiles and the envelope bound (paper Fig. 6 / Fig. 17)."""
    b = np.asarray(bound_s, dtype=float)
    fig = _figure(7.5, 4.2)
    ax = fig.add_subplot(111)
    k = np.arange(b.size)
    lab = "bound" + (f" (ε={eps:g})" if eps is not None else "")
    ax.plot(k, b, lw=0.8, label=lab)
    if quantiles_s is not None:
        q = np.asarray(quantiles_s, dtype=float)
        ax.plot(np.arange(q.size), q, lw=0.8, label="empirical quantile")
    if envelope_bound_s is not None:
        ax.axhline(envelope_bound_s, color="k", ls="--", lw=0.8, label="envelope bound")
    ax.set_xlabel("packet")
    ax.set_ylabel("delay [s]")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_buffering(table, path) -> Path:
    """``P[sender-stack buffering]`` against utilisation (from
    :func:`~ccbench.netcal.decomposition.buffering_vs_utilisation`)."""
    fig = _figure()
    ax = fig.add_subplot(111)
    u = table["utilisation"].to_numpy()
    p = table["p_buffering"].to_numpy()
    err = np.vstack([p - table["ci_low"].to_numpy(), table["ci_high"].to_numpy() - p])
    ax.errorbar(u, p, yerr=err, marker="o", capsize=3)
    ax.set_xlabel("utilisation")
    ax.set_ylabel("P[buffering in sender stack]")
    ax.set_ylim(0, 1.05)
    ax.grid(True, alpha=0.3)
    return _save(fig, path)
