"""Figures of :mod:`ccbench.studies.wei_ch3_mimd`: MIMD fairness (Figs 3.13-3.14), per-flow
convergence of Reno / HS-TCP / S-TCP against eq. (3.7)'s threshold and the bound (3.8)
(Figs 3.12, 3.17, 3.21-3.22), and the Normalized Throughput Gain CDFs (Figs 3.16, 3.25)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from . import wei_sync as W
from .wei_ch3_mimd import CCS, LABELS, MIMD_SCHEMES, SCHEME_LABELS, fair_share_bps, sync_ntg


def _first_seed(rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["seed"] == min(x["seed"] for x in rows)] if rows else []


def fig_mimd(rows: list[dict], runs: pd.DataFrame, path: Path) -> None:
    """(a)-(c): 10-s mean cwnd of the fastest and the slowest of 8 S-TCP flows, bursty, paced
    (Fig. 3.13) and bursty under RED; (d): smallest flow / (c/N) against N (Fig. 3.14)."""
    from ccbench.plots import new_figure

    case = _first_seed([r for r in rows if "_cwnd10" in r])
    mn = runs[runs["part"] == "mimd-n"] if "part" in runs.columns else runs.iloc[0:0]
    if not case and not len(mn):
        return
    fig, axes = new_figure(1, 4, figsize=(18, 3.8), squeeze=False)
    for ax, sc in zip(axes[0][:3], MIMD_SCHEMES):
        r = next((x for x in case if x["scheme"] == sc), None)
        if r is None:
            ax.set_visible(False)
            continue
        c10 = r["_cwnd10"]
        mean = c10.mean()
        for f, lab in ((mean.idxmax(), "fastest"), (mean.idxmin(), "slowest")):
            ax.plot(c10.index, c10[f], marker=".", ms=3, lw=0.9, label=f"{lab} ({f})")
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd, 10-s mean (pkts)")
        ax.legend(fontsize="x-small")
        F = r["F_rtts"]
        ax.set_title(f"8 S-TCP, no noise, {SCHEME_LABELS[sc]}: F = "
                     + (f"{F:.0f} RTTs" if math.isfinite(F) else "not converged"), fontsize="small")
    ax = axes[0][3]
    for sc, mk in zip(MIMD_SCHEMES, "osD"):
        g = mn[mn["scheme"] == sc]
        if not len(g):
            continue
        m = g.groupby("n_flows")["min_share"].mean()
        (ln,) = ax.plot(m.index, m.values, marker=mk, label=f"ours, {SCHEME_LABELS[sc]}")
        ax.scatter(g["n_flows"], g["min_share"], s=8, color=ln.get_color(), alpha=0.4)
    ax.set_xscale("log", base=2)
    ax.set_ylim(0, 1.1)
    ax.axhline(1.0, color="grey", lw=0.8, ls=":")
    ax.set_xlabel("number of S-TCP flows N")
    ax.set_ylabel("smallest flow / (c/N)")
    ax.set_title("MIMD fairness (Fig. 3.14), 600 s", fontsize="small")
    ax.legend(fontsize="x-small")
    fig.savefig(path, dpi=110)


def fig_convergence(rows: list[dict], path: Path) -> None:
    """Each flow's running average x̄_i(τ) / x* (eq. 3.7) for Reno, HS-TCP and S-TCP under
    each scheme run, with the 0.8 threshold, F, and Reno's bound (3.8) at the run's λ."""
    from ccbench.models.wei_sync import fairness_convergence_lower_bound
    from ccbench.plots import new_figure

    cc_rows = [r for r in rows if r["part"] == "conv-cc" and "_rates" in r]
    if not cc_rows:
        return
    n = max(r["n_flows"] for r in cc_rows)
    pick = [r for r in rows if r["part"] in ("convergence", "conv-cc") and "_rates" in r and r["n_flows"] == n]
    pick = _first_seed(pick)
    schemes = [s for s in ("droptail", "pacing", "red", "pecn") if any(r["scheme"] == s for r in pick)]
    cols = ("reno",) + CCS
    fig, axes = new_figure(len(schemes), 3, figsize=(13, 2.8 * len(schemes)), sharex=True, sharey=True,
                           squeeze=False)
    for i, sc in enumerate(schemes):
        for j, cc in enumerate(cols):
            ax = axes[i][j]
            r = next((x for x in pick if x["scheme"] == sc and x.get("cc", "reno") == cc), None)
            if r is None:
                ax.set_visible(False)
                continue
            rates = r["_rates"]
            tau = np.asarray(rates.index, dtype=float) + 1.0
            xbar = rates.cumsum().div(tau, axis=0) / fair_share_bps("conv-cc", n)
            ax.plot(tau, xbar.to_numpy(), lw=0.5)
            ax.axhline(0.8, color="k", lw=0.8, ls="--")
            F = r["F_s"]
            if math.isfinite(F):
                ax.axvline(F, color="tab:red", lw=1.0, label=f"F = {F / W.RTT_S:.0f} RTTs")
            lam = r["sync"]
            if cc == "reno" and math.isfinite(lam):
                b = float(fairness_convergence_lower_bound(min(max(lam, 0.0), 1.0), (W.BDP_PKTS + W.BUFFER_PKTS) / n))
                ax.axvline(b * W.RTT_S, color="tab:green", lw=1.0, ls=":", label=f"bound (3.8) {b:.0f} RTTs")
            ax.set_ylim(0, 2.0)
            ax.set_title(f"{LABELS[cc]}, {SCHEME_LABELS[sc]}: λ = {lam:.2f}, F = "
                         + (f"{F / W.RTT_S:.0f} RTTs" if math.isfinite(F) else "not converged"), fontsize="small")
            if math.isfinite(F) or cc == "reno":
                ax.legend(fontsize="xx-small", loc="upper right")
        axes[i][0].set_ylabel("x̄_i(τ) / x*")
    for ax in axes[-1]:
        ax.set_xlabel("τ (s)")
    fig.suptitle(f"Fairness convergence (eq. 3.7), N = {n}, B = 1680 pkt, 50 noise flows: every flow's running "
                 "average; F when the lowest stays above 0.8", fontsize="medium")
    fig.savefig(path, dpi=110)


def fig_ntg(runs: pd.DataFrame, path: Path) -> None:
    """CDFs over runs of the Normalized Throughput Gain: DropTail bursty / paced (Fig. 3.16),
    P-ECN paced / bursty (Fig. 3.25); the fully synchronised model per buffer as ticks."""
    from ccbench.plots import new_figure

    if "part" not in runs.columns:
        return
    nt = runs[runs["part"] == "ntg"]
    if not len(nt):
        return
    cols = ("reno",) + CCS
    fig, axes = new_figure(2, 3, figsize=(13, 6.5), sharex=True, sharey=True, squeeze=False)
    n = int(nt["n_flows"].min())
    for i, (fig_name, schemes) in enumerate((("Fig. 3.16, DropTail", ("droptail", "pacing")),
                                             ("Fig. 3.25, Persistent ECN", ("pecn", "pecn-bursty")))):
        for j, cc in enumerate(cols):
            ax = axes[i][j]
            for sc in schemes:
                v = np.sort(nt.loc[(nt["cc"] == cc) & (nt["scheme"] == sc), "ntg"].to_numpy(float))
                if len(v):
                    ax.step(np.r_[v[0], v], np.r_[0, np.arange(1, len(v) + 1) / len(v)], where="post",
                            label=f"ours, {SCHEME_LABELS[sc]}")
            for b in sorted(nt["buffer_bdp"].unique()):
                x = sync_ntg(cc, b, n)
                ax.axvline(x, color="grey", lw=0.7, ls=":")
                ax.text(x, 0.02, f"sync {b:g} BDP", rotation=90, fontsize="xx-small", color="grey", va="bottom")
            if i == 1:
                ax.axvline(-0.15, color="tab:red", lw=0.8, ls="--", label="thesis: 'within 15 %'")
            ax.axvline(0.0, color="k", lw=0.6)
            ax.set_title(f"{fig_name}: {LABELS[cc]}", fontsize="small")
            if ax.get_legend_handles_labels()[0]:
                ax.legend(fontsize="xx-small", loc="upper left")
            ax.set_xlabel("Normalized Throughput Gain")
        axes[i][0].set_ylabel("CDF over runs")
    fig.suptitle("Normalized Throughput Gain = (mean per-flow throughput - fair share) / fair share; dotted: fully "
                 "synchronised flows (Fig. 3.15's model)", fontsize="medium")
    fig.savefig(path, dpi=110)


def write_figures(out: Path, runs: pd.DataFrame, rows: list[dict]) -> None:
    fig_mimd(rows, runs, out / "wei_ch3_mimd.png")
    fig_convergence(rows, out / "wei_ch3_convergence_cc.png")
    fig_ntg(runs, out / "wei_ch3_ntg.png")
