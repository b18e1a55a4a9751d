"""Plots of a run (matplotlib, headless): ``run.plot.delay_ccdf()``, ``.cwnd()``,
``.queue()``, ``.decomposition()``.

Each method returns the matplotlib ``Figure`` and, given ``path``, writes it there
(PNG or SVG by suffix). They never change the run.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ccbench.run import Run


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    return plt


def _finish(fig, path: str | Path | None):
    fig.tight_layout()
    if path is not None:
        fig.savefig(path)
    return fig


def ccdf(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CCDF: sorted values x and P[X > x] just after each."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[np.isfinite(x)]
    n = x.size
    return x, 1.0 - np.arange(1, n + 1) / n if n else np.array([])


class RunPlots:
    def __init__(self, run: "Run"):
        self.run = run

    def _flows(self, flows: Iterable[str] | None, table) -> list[str]:
        names = [str(f) for f in (flows if flows is not None else table["flow"].unique())]
        return names

    def delay_ccdf(self, flows: Iterable[str] | None = None, path: str | Path | None = None, component: str = "total"):
        """CCDF of per-message delay (log y axis), one line per flow.

        ``component``: ``total`` (t_deliver - t_write), ``sender`` (t_first_tx - t_write),
        ``network`` (t_arrive - t_first_tx) or ``receiver`` (t_deliver - t_arrive).
        """
        cols = {
            "total": ("t_deliver", "t_write"),
            "sender": ("t_first_tx", "t_write"),
            "network": ("t_arrive", "t_first_tx"),
            "receiver": ("t_deliver", "t_arrive"),
        }
        if component not in cols:
            raise ValueError(f"component: {component!r} is not one of {sorted(cols)}")
        a, b = cols[component]
        plt = _plt()
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        p = self.run.packets
        for name in self._flows(flows, p):
            sel = p[p["flow"] == name]
            x, y = ccdf((sel[a] - sel[b]).to_numpy() * 1e3)
            if x.size:
                ax.step(x, np.maximum(y, 1.0 / max(x.size, 1) / 10), where="post", label=name)
        ax.set_yscale("log")
        ax.set_xlabel(f"{component} delay (ms)")
        ax.set_ylabel("P[delay > x]")
        ax.grid(True, which="both", alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
        return _finish(fig, path)

    def cwnd(self, flows: Iterable[str] | None = None, path: str | Path | None = None):
        """cwnd and ssthresh (packets) against time, one colour per flow."""
        plt = _plt()
        fig, ax = plt.subplots(figsize=(7.0, 4.0))
        c = self.run.cwnd
        for name in self._flows(flows, c):
            sel = c[c["flow"] == name]
            (line,) = ax.plot(sel["t"], sel["cwnd_pkts"], label=f"{name} cwnd", lw=1)
            ss = sel["ssthresh_pkts"].where(sel["ssthresh_pkts"] < 1e6)
            ax.plot(sel["t"], ss, ls="--", lw=0.8, color=line.get_color(), alpha=0.7)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("packets")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
        return _finish(fig, path)

    def queue(self, links: Iterable[str] | None = None, path: str | Path | None = None, unit: str = "bytes"):
        """Queue occupancy of the monitored links against time."""
        if unit not in ("bytes", "pkts"):
            raise ValueError(f"unit: {unit!r} is not 'bytes' or 'pkts'")
        plt = _plt()
        fig, ax = plt.subplots(figsize=(7.0, 3.6))
        q = self.run.queue
        names = [str(l) for l in (links if links is not None else q["link"].unique())]
        for name in names:
            sel = q[q["link"] == name]
            ax.plot(sel["t"], sel[f"backlog_{unit}"], lw=0.8, label=name)
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"backlog ({unit})")
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small")
        return _finish(fig, path)

    def decomposition(self, flow: str | None = None, path: str | Path | None = None):
        """CCDFs of the sender-stack, network and receiver (head-of-line) delay parts of
        one flow (Lübben & Fidler, Sec. V-B)."""
        p = self.run.packets
        name = str(flow if flow is not None else p["flow"].iloc[0])
        sel = p[p["flow"] == name]
        plt = _plt()
        fig, ax = plt.subplots(figsize=(6.4, 4.0))
        for label, a, b in (
            ("sender stack", "t_first_tx", "t_write"),
            ("network", "t_arrive", "t_first_tx"),
            ("receiver (HOL)", "t_deliver", "t_arrive"),
            ("total", "t_deliver", "t_write"),
        ):
            x, y = ccdf((sel[a] - sel[b]).to_numpy() * 1e3)
            if x.size:
                ax.step(x, np.maximum(y, 1.0 / x.size / 10), where="post", label=label)
        ax.set_yscale("log")
        ax.set_xlabel("delay (ms)")
        ax.set_ylabel("P[delay > x]")
        ax.set_title(name)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        return _finish(fig, path)
