"""Figures of ``ccbench reproduce brosh-model``: the paper's figure numbers, each with the
simulated points (markers) and the model (lines) on the same axes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .brosh_model_runs import PLAYOUTS, SOURCES


def _sel(pts, key, rtt):
    return pts[(pts["source"] == key) & np.isclose(pts["rtt_s"], rtt)].sort_values("p")


def _finite(x):
    return np.where(np.isfinite(x), x, np.nan)


def _versus_loss(pts, keys, rtts, cols, ylabels, path, title, logy=True):
    from ccbench.plots import new_figure

    fig, axes = new_figure(nrows=len(cols), ncols=len(rtts), figsize=(4.2 * len(rtts), 3.2 * len(cols)), squeeze=False)
    for i, (col, yl) in enumerate(zip(cols, ylabels)):
        for j, rtt in enumerate(rtts):
            ax = axes[i][j]
            for k, key in enumerate(keys):
                s = _sel(pts, key, rtt)
                if s.empty:
                    continue
                c = f"C{k}"
                ax.plot(s["p"] * 100, _finite(s[col]), "o", color=c, label=f"{SOURCES[key].label} sim")
                mcol = "m_" + col if "m_" + col in s else None
                if mcol:
                    ax.plot(s["p"] * 100, _finite(s[mcol]), "-", color=c, label=f"{SOURCES[key].label} model")
            ax.set_xscale("log")
            if logy:
                ax.set_yscale("log")
            ax.set_xlabel("loss rate p (%)")
            ax.set_ylabel(yl)
            ax.set_title(f"RTT {rtt * 1e3:g} ms", fontsize=9)
            ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.savefig(path, dpi=110)


def _errors(pts, keys, path, title):
    from ccbench.plots import new_figure

    fig, ax = new_figure(figsize=(6, 3.6))
    for k, key in enumerate(keys):
        for ls, rtt in (("-o", 0.1), ("--s", 0.3)):
            s = _sel(pts, key, rtt)
            ax.plot(s["p"] * 100, 100 * _finite(s["err_mean"]), ls, color=f"C{k}", label=f"{key}, RTT {rtt * 1e3:g} ms")
    ax.axhspan(-10, 10, color="0.9", label="paper: VoIP |error| < 10 % up to 2 %")
    ax.set_xscale("log")
    ax.set_ylim(-100, 100)
    ax.set_xlabel("loss rate p (%)")
    ax.set_ylabel("(model - sim) / sim, mean delay (%)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    fig.savefig(path, dpi=110)


def _abc(abc, path):
    from ccbench.plots import new_figure

    fig, axes = new_figure(ncols=2, figsize=(9, 3.6), squeeze=False)
    for j, (q, fig_no) in enumerate((("packet", "19"), ("byte", "22"))):
        ax = axes[0][j]
        for k, (mode, label) in enumerate((("per-ack", "ACK counting (tcp_abc=0)"), ("l2", "byte counting (tcp_abc=2)"))):
            s = abc[(abc["queue"] == q) & (abc["abc"] == mode)].sort_values("web_flows")
            ax.plot(s["web_flows"], s["p95_s"], "-o", color=f"C{k}", label=f"95th pct, {label}")
            ax.plot(s["web_flows"], s["max_s"], "--^", color=f"C{k}", label=f"max, {label}")
        ax.set_yscale("log")
        ax.set_xlabel("web flows")
        ax.set_ylabel("VoIP delay (s)")
        ax.set_title(f"Fig. {fig_no}: {q} queue", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].legend(fontsize=7)
    fig.savefig(path, dpi=110)


def _timeouts(to, path):
    from ccbench.plots import new_figure

    fig, ax = new_figure(figsize=(5.5, 3.6))
    ax.plot(to["p"] * 100, to["model_w4_lt"], "-", label="Brosh model (LT, window 3 x 1.3)")
    ax.plot(to["p"] * 100, to["bhj_like_w3_no_lt"], ":", label="no LT, window 3 (BHJ-like)")
    ax.plot(to["p"] * 100, to["sim"], "o", label="simulated (2.6-era stack)")
    ax.set_xscale("log")
    ax.set_xlabel("loss rate p (%)")
    ax.set_ylabel("P(timeout | loss)")
    ax.set_title("Fig. 20: VoIP, load 3 packets per RTT (RTT 60 ms)", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    fig.savefig(path, dpi=110)


def _playout(pts, path):
    from ccbench.plots import new_figure

    fig, axes = new_figure(ncols=2, figsize=(9, 3.6), squeeze=False)
    xs = np.array(PLAYOUTS)
    for j, key in enumerate(("voip64", "video573")):
        ax = axes[0][j]
        k = 0
        for rtt in (0.02, 0.1, 0.3):
            for p in (0.01, 0.02):
                s = _sel(pts, key, rtt)
                s = s[np.isclose(s["p"], p)]
                if s.empty:
                    continue
                r = s.iloc[0]
                ax.plot(xs, [r[f"late_{x:g}s"] for x in xs], "o", color=f"C{k}", label=f"RTT {rtt * 1e3:g} ms, p {p:.0%}")
                ax.plot(xs, [r[f"m_late_{x:g}s"] for x in xs], "-", color=f"C{k}")
                k += 1
        ax.set_xscale("log")
        ax.set_yscale("symlog", linthresh=1e-3)
        ax.axhline(0.05, color="0.5", lw=0.8)
        ax.set_xlabel("playout delay (s)")
        ax.set_ylabel("late fraction (markers sim, lines model)")
        ax.set_title(f"Fig. 23: {SOURCES[key].label}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.savefig(path, dpi=110)


def _packet_size(pts, path):
    from ccbench.plots import new_figure

    fig, axes = new_figure(ncols=2, figsize=(9, 3.6), squeeze=False)
    ax = axes[0][0]
    for k, key in enumerate(("voip64", "video573", "videosplit")):
        s = _sel(pts, key, 0.1)
        ax.plot(s["p"] * 100, _finite(s["p95_s"]), "o", color=f"C{k}", label=f"{SOURCES[key].label} sim")
        ax.plot(s["p"] * 100, _finite(s["m_p95_s"]), "-", color=f"C{k}", label="model")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("loss rate p (%)")
    ax.set_ylabel("95th percentile delay (s)")
    ax.set_title("Fig. 17a: RTT 100 ms", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax = axes[0][1]
    for k, key in enumerate(("voip64", "video573")):
        s = _sel(pts, key, 0.1)
        ax.plot(s["p"] * 100, s["backlog_share"], "-o", color=f"C{k}", label=SOURCES[key].label)
    ax.set_xscale("log")
    ax.set_ylim(0, 1)
    ax.set_xlabel("loss rate p (%)")
    ax.set_ylabel("share of TCP delay in the send backlog")
    ax.set_title("Fig. 17b: congestion control vs loss recovery", fontsize=9)
    ax.legend(fontsize=7)
    ax.grid(True, alpha=0.3)
    fig.savefig(path, dpi=110)


def _traces(fig2: pd.DataFrame, fig18: pd.DataFrame, path):
    from ccbench.plots import new_figure

    fig, axes = new_figure(ncols=3, figsize=(13, 3.6), squeeze=False)
    ax = axes[0][0]
    ax.plot(fig2["t"], fig2["delay_s"], ".", ms=3)
    ax.set_title("Fig. 2: 50 MSS pps, RTT 200 ms, one loss at t = 0", fontsize=9)
    ax.set_xlabel("time from the loss (s)")
    ax.set_ylabel("message delay (s)")
    for j, kind, yl in ((1, "delay_s", "message delay (s)"), (2, "cwnd_pkts", "cwnd (segments)")):
        ax = axes[0][j]
        for k, (name, g) in enumerate(fig18[fig18["kind"] == kind].groupby("flow", sort=False)):
            ax.plot(g["t"], g["value"], "." if kind == "delay_s" else "-", ms=3, color=f"C{k}",
                    label=f"{name} ({'100' if name == 'MSS' else '200'} pkt/s)")
        ax.set_xlabel("time from the first of two losses (s)")
        ax.set_ylabel(yl)
        ax.set_title("Fig. 18: same bytes/s, RTT 200 ms", fontsize=9)
        ax.legend(fontsize=7)
    for a in axes[0]:
        a.grid(True, alpha=0.3)
    fig.savefig(path, dpi=110)


def plot_all(pts: pd.DataFrame, abc: pd.DataFrame, to: pd.DataFrame, out: Path,
             fig2: pd.DataFrame | None = None, fig18: pd.DataFrame | None = None) -> None:
    out = Path(out)
    if fig2 is not None and fig18 is not None:
        _traces(fig2, fig18, out / "brosh_model_fig2_18.png")
    for fig, keys in (("5", ("voip64", "video573")), ("6", ("voip42", "video378")), ("7", ("ivideo284", "ivideo178"))):
        _versus_loss(pts, keys, (0.1, 0.3), ["mean_s", "p95_s"], ["mean delay (s)", "95th percentile (s)"],
                     out / f"brosh_model_fig{fig}.png", f"Fig. {fig}: simulated (markers) vs model (lines)")
    for fig, keys in (("8", ("voip64", "video573")), ("9", ("voip42", "video378")), ("10", ("ivideo284", "ivideo178"))):
        _errors(pts, keys, out / f"brosh_model_fig{fig}.png", f"Fig. {fig}: relative model error of the mean delay")
    _versus_loss(pts, ("voip64", "video573"), (0.1, 0.3), ["std_s"], ["standard deviation (s)"],
                 out / "brosh_model_fig11.png", "Fig. 11: standard deviation, simulated vs model")
    _versus_loss(pts, ("voip64",), (0.02, 0.1, 0.3), ["p95_s"], ["95th percentile (s)"], out / "brosh_model_fig14a.png",
                 "Fig. 14a: VoIP working region (bound 0.2 s)")
    _versus_loss(pts, ("video573",), (0.02, 0.1, 0.3), ["max_s"], ["maximum delay (s)"], out / "brosh_model_fig14b.png",
                 "Fig. 14b: video working region (bound 5 s; model max capped by truncation)")
    _versus_loss(pts, ("voip42", "video378", "ivideo284", "ivideo178"), (0.1, 0.3), ["p95_s", "max_s"],
                 ["95th percentile (s)", "maximum (s)"], out / "brosh_model_fig15_16.png",
                 "Figs 15-16: other bit rates")
    _packet_size(pts, out / "brosh_model_fig17.png")
    _abc(abc, out / "brosh_model_fig19_22.png")
    _timeouts(to, out / "brosh_model_fig20.png")
    _playout(pts, out / "brosh_model_fig23.png")
