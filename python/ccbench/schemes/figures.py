"""The figures of a scheme comparison, drawn without pyplot (:func:`ccbench.plots.new_figure`).

* :func:`throughput_delay`: Pantheon's summary plot (Yan et al., USENIX ATC 2018,
  Fig. 2-4): throughput (y) against the 95th percentile one-way delay (x, log scale,
  inverted so that "better" is up and to the right), one point per run, and per scheme
  the 1-sigma covariance ellipse of its runs (the contour x^T S^-1 x = 1 around the
  mean, from the eigenvectors of the 2x2 sample covariance S, as Pantheon's
  ``analysis/plot.py`` draws it), computed in the plotted coordinates (log delay);
* :func:`goodput_over_time`: flent's "totals"/"tcp_nup" view, one panel per scheme,
  each TCP flow's goodput over time (first seed);
* :func:`rtt_fairness`: flent's ``rtt_fair`` tests, each flow's goodput (mean over the
  seeds, min-max bars) against its base RTT, one series per scheme.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

__all__ = ["throughput_delay", "goodput_over_time", "rtt_fairness", "covariance_ellipse"]


def covariance_ellipse(x, y, n: int = 100):
    """Points ``(xs, ys)`` of the 1-sigma ellipse of the samples (x, y); None for fewer
    than two samples or a degenerate (zero) covariance."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2:
        return None
    cov = np.cov(np.vstack([x, y]))
    if not np.all(np.isfinite(cov)) or np.allclose(cov, 0.0):
        return None
    vals, vecs = np.linalg.eigh(cov)
    vals = np.clip(vals, 0.0, None)
    t = np.linspace(0.0, 2.0 * math.pi, n)
    circle = np.vstack([np.cos(t), np.sin(t)])
    pts = vecs @ (np.sqrt(vals)[:, None] * circle)
    return x.mean() + pts[0], y.mean() + pts[1]


def _colors(schemes):
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return {s: cmap(i % 10) for i, s in enumerate(schemes)}


def _plain_log_ticks(ax, values) -> None:
    """Tick labels as plain numbers ("80", not "8x10^1"); minor ticks labelled only when
    the data span less than a decade (else they crowd)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    plain = FuncFormatter(lambda v, _pos: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    span = np.log10(np.nanmax(values)) - np.log10(np.nanmin(values))
    ax.xaxis.set_minor_formatter(plain if span < 1.0 else NullFormatter())


def throughput_delay(runs: pd.DataFrame, title: str = ""):
    from ccbench.plots import NothingToPlot, new_figure

    d = runs[np.isfinite(runs["owd_p95_s"]) & (runs["owd_p95_s"] > 0) & np.isfinite(runs["throughput_bps"])]
    if d.empty:
        raise NothingToPlot("no run has both a throughput and a one-way delay")
    schemes = list(dict.fromkeys(d["scheme"]))
    col = _colors(schemes)
    fig, ax = new_figure(figsize=(7.0, 5.0))
    for s in schemes:
        g = d[d["scheme"] == s]
        ms, mbps = g["owd_p95_s"].to_numpy() * 1e3, g["throughput_bps"].to_numpy() / 1e6
        ax.scatter(ms, mbps, s=14, color=col[s], alpha=0.6, linewidths=0)
        # the ellipse lives in the plotted space: log10 delay, linear throughput
        e = covariance_ellipse(np.log10(ms), mbps)
        if e is not None:
            ax.plot(10 ** e[0], e[1], color=col[s], lw=1.2)
        mx, my = 10 ** np.log10(ms).mean(), mbps.mean()
        ax.scatter([mx], [my], s=40, color=col[s], marker="o", edgecolors="black", linewidths=0.6, zorder=3)
        ax.annotate(s, (mx, my), xytext=(5, 5), textcoords="offset points", fontsize="small", color=col[s])
    ax.set_xscale("log")
    ax.margins(x=0.08, y=0.08)  # room for the scheme labels at the edges
    _plain_log_ticks(ax, d["owd_p95_s"].to_numpy() * 1e3)
    ax.invert_xaxis()
    ax.set_xlabel("95th percentile one-way delay (ms, log scale; better to the right)")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.set_title(title or "throughput and delay per scheme (points: runs; ellipses: 1 sigma)", fontsize="medium")
    ax.grid(True, which="both", alpha=0.3)
    return fig


def goodput_over_time(series: dict[str, pd.DataFrame], title: str = ""):
    """``series``: scheme -> goodput table (index ``t_s``, one column per flow, bit/s)."""
    from ccbench.plots import NothingToPlot, legend, new_figure

    series = {s: df for s, df in series.items() if df is not None and not df.empty}
    if not series:
        raise NothingToPlot("no run has goodput samples")
    n = len(series)
    fig, axes = new_figure(n, 1, figsize=(7.5, 1.2 + 1.6 * n), sharex=True, sharey=True, squeeze=False)
    top = max(float(np.nanmax(df.to_numpy())) for df in series.values())
    div, unit = (1e6, "Mbit/s") if top >= 1e6 else (1e3, "kbit/s")
    for ax, (s, df) in zip(axes[:, 0], series.items()):
        t = df.index.to_numpy(dtype=float)
        step = float(t[1] - t[0]) if t.size > 1 else 1.0
        for flow in df.columns:
            y = df[flow].to_numpy(dtype=float) / div
            ax.step(np.r_[t, t[-1] + step], np.r_[y, y[-1]], where="post", lw=1.0, label=str(flow))
        ax.set_ylabel(unit)
        ax.set_title(s, fontsize="small", loc="left")
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("time (s)")
    legend(fig, axes[0, 0])
    fig.suptitle(title or "goodput per flow over time (first seed)", fontsize="medium")
    return fig


def rtt_fairness(flows: pd.DataFrame, title: str = ""):
    from ccbench.plots import NothingToPlot, new_figure

    d = flows[np.isfinite(flows["base_rtt_s"])]
    if d["flow"].nunique() < 2 or d["base_rtt_s"].round(6).nunique() < 2:
        raise NothingToPlot("RTT fairness needs TCP flows of different base RTTs (e.g. topology.access.pair_delays)")
    schemes = list(dict.fromkeys(d["scheme"]))
    col = _colors(schemes)
    fig, ax = new_figure(figsize=(7.0, 4.2))
    for s in schemes:
        g = d[d["scheme"] == s].groupby("flow").agg(rtt=("base_rtt_s", "first"), mean=("goodput_bps", "mean"),
                                                    lo=("goodput_bps", "min"), hi=("goodput_bps", "max")).sort_values("rtt")
        x = g["rtt"].to_numpy() * 1e3
        y = g["mean"].to_numpy() / 1e6
        err = np.vstack([y - g["lo"].to_numpy() / 1e6, g["hi"].to_numpy() / 1e6 - y])
        ax.errorbar(x, y, yerr=err, marker="o", ms=4, lw=1.2, capsize=3, color=col[s], label=s)
    ax.set_xlabel("flow's base RTT (ms)")
    ax.set_ylabel("goodput (Mbit/s)")
    ax.set_ylim(bottom=0)
    ax.set_title(title or "RTT fairness: goodput per flow (mean over seeds, min-max bars)", fontsize="medium")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig
