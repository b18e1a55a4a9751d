"""The ours-versus-thesis table and the figures of :mod:`ccbench.studies.wei_ch3`.

One row per comparison (``item, quantity, setting, ours, paper, unit, agrees, note``):
``paper`` is the thesis's printed value where there is one; ``agrees`` ("yes", "no" or
empty) is the check of the thesis's statement (the summary's status comes from it)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from ccbench.models.wei_sync import fairness_convergence_lower_bound, sync_rate

from . import wei_ch3_mix
from . import wei_sync as W

REL_TOL = 0.25


def _row(item, quantity, setting, ours, paper=float("nan"), unit="", agrees=None, note=""):
    return {"item": item, "quantity": quantity, "setting": setting, "ours": ours, "paper": paper, "unit": unit,
            "agrees": "" if agrees is None else ("yes" if agrees else "no"), "note": note}


def _close(o: float, p: float) -> bool:
    return math.isfinite(o) and abs(o - p) <= REL_TOL * abs(p)


def model_sync(n: int, buffer_pkts: float, paced: bool) -> float:
    """Eqs (3.1)-(3.3) at the thesis's Fig. 3.9 choices: S = cd + B + L, L = N, w = S/N;
    bursty: M = L, K = w (point A); paced: K = S (point B)."""
    S = int(round(W.BDP_PKTS + buffer_pkts + n))
    w = S / n
    return sync_rate(S=S, M=n, K=S if paced else int(math.ceil(w)), L=n, w=w)


def _mean(df: pd.DataFrame, col: str) -> float:
    v = pd.to_numeric(df[col], errors="coerce")
    return float(v.mean()) if len(v) else float("nan")


def claims(runs: pd.DataFrame) -> pd.DataFrame:
    from .wei_ch3 import PAPER_REDUCTION, _buffer_pkts

    rows = []
    # --- Fig 3.9: λ vs N (DropTail and pacing), the model beside
    sn = runs[runs["part"] == "sync-n"]
    ns = sorted(sn["n_flows"].unique())
    lam = {}
    for sc in ("droptail", "pacing"):
        for n in ns:
            g = sn[(sn["scheme"] == sc) & (sn["n_flows"] == n)]
            lam[sc, n] = _mean(g, "sync")
            rows.append(_row("Fig. 3.9", f"λ {sc}", f"N = {n}, B = 1680 pkt", lam[sc, n], unit="",
                             note=f"model (3.3): {model_sync(n, W.BUFFER_PKTS, sc == 'pacing'):.3f}; "
                                  f"{int(g['events'].sum())} events"))
    if len(ns) >= 2:
        dt = [lam["droptail", n] for n in ns]
        rows.append(_row("Fig. 3.9", "λ falls with N (DropTail)", f"N = {ns[0]} .. {ns[-1]}", dt[-1] - dt[0],
                         unit="Δλ", agrees=dt[-1] < dt[0], note=" / ".join(f"{x:.2f}" for x in dt)))
        up = [lam["pacing", n] > lam["droptail", n] for n in ns]
        rows.append(_row("Fig. 3.9", "pacing raises λ at every N", f"N = {ns[0]} .. {ns[-1]}", float(sum(up)),
                         float(len(ns)), "N values", agrees=all(up)))
    # --- λ vs buffer (Fig 3.12's axes), and the event-weighted pool (Table 3.1)
    sb = pd.concat([runs[runs["part"] == "sync-buffer"],
                    sn[(sn["scheme"] == "droptail") & (sn["n_flows"] == 16)]])
    for b, g in sb.groupby("buffer_bdp"):
        rows.append(_row("Fig. 3.12 axes", "λ droptail", f"N = 16, B = {_buffer_pkts(b)} pkt ({b:g} BDP)",
                         _mean(g, "sync"), note=f"{int(g['events'].sum())} events; "
                                                f"goodput {_mean(g, 'goodput_mbps'):.1f} Mbit/s"))
    pool = pd.concat([sb, sn[sn["scheme"] == "droptail"]]).drop_duplicates(["part", "n_flows", "seed", "buffer_bdp"])
    pool = pool[pool["events"] > 0]
    if len(pool):
        ev = pool["events"].to_numpy(float)
        pooled = float((pool["sync"].to_numpy(float) * ev).sum() / ev.sum())
        rows.append(_row("Table 3.1", "Reno λ pooled over the N and B sweeps, weighted by events",
                         "DropTail, all sync-n / sync-buffer runs", pooled, 0.2042152591,
                         agrees=_close(pooled, 0.2042152591),
                         note=f"unweighted mean {pool['sync'].mean():.3f}; the thesis averages 'over all loss events'; "
                              "why ours is higher: Table 3.1 (phase)"))
    # --- Fig 3.1: loss intervals, heterogeneous RTTs
    iv = runs[runs["part"] == "intervals"]
    if len(iv):
        o, p = _mean(iv, "within_1pct"), _mean(iv, "poisson_1pct")
        rows.append(_row("Fig. 3.1", "share of loss intervals < 1 % RTT", "16 Reno, RTT U(2, 200) ms, DropTail",
                         o, 0.80, agrees=_close(o, 0.80),
                         note=f"Poisson of the same rate {p:.3f}; < 1 RTT {_mean(iv, 'within_1rtt'):.2f}; "
                              f"per flow (own RTT) {_mean(iv, 'pf_within_1pct'):.2f} vs Poisson "
                              f"{_mean(iv, 'pf_poisson_1pct'):.3f}; mean RTT {_mean(iv, 'mean_rtt_s') * 1e3:.0f} ms"))
        rows.append(_row("Fig. 3.1", "short intervals vs Poisson (ratio at < 1 % RTT)", "same",
                         o / p if p > 0 else float("inf"), 10.0, "x", agrees=(o / p if p > 0 else np.inf) > 10,
                         note="thesis: 'more than 10 times' Poisson's"))
    # --- Fig 3.8: detection fraction
    de = sn[sn["n_flows"] == 16]
    det = {}
    for sc, paper in (("droptail", 0.30), ("pacing", 0.70)):
        g = de[de["scheme"] == sc]
        if len(g):
            det[sc] = _mean(g, "detect_frac")
            rows.append(_row("Fig. 3.8", f"fraction of flows detecting a loss event, {sc}", "16 Reno, 100 Mbit/s, 200 ms",
                             det[sc], paper, agrees=_close(det[sc], paper),
                             note=f"loss intervals < 1 % RTT: {_mean(g, 'within_1pct'):.2f} "
                                  f"(Poisson {_mean(g, 'poisson_1pct'):.3f})"
                                  + ("; why higher: Table 3.1 (phase)" if sc == "droptail" else "")))
    if len(det) == 2:
        rows.append(_row("Fig. 3.8", "paced flows detect more often than bursty", "", det["pacing"] / det["droptail"],
                         0.70 / 0.30, "x", agrees=det["pacing"] > det["droptail"]))
    # --- fairness convergence (eq 3.7) vs bound (3.8), reductions
    cv = runs[runs["part"] == "convergence"]
    for n, gn in cv.groupby("n_flows"):
        F = {}
        for sc, g in gn.groupby("scheme"):
            f = _mean(g.assign(F_rtts=g["F_rtts"].replace(np.inf, np.nan)), "F_rtts") if g["converged"].all() \
                else float("inf")
            F[sc] = f
            lam_s = _mean(g, "sync")
            bound = float(fairness_convergence_lower_bound(min(max(lam_s, 0.0), 1.0),
                                                           (W.BDP_PKTS + W.BUFFER_PKTS) / n)) \
                if math.isfinite(lam_s) else float("nan")
            dur = float(g["F_s"].replace(np.inf, np.nan).max()) if g["converged"].all() else float("nan")
            paper = 1500.0 if sc == "droptail" else float("nan")
            rows.append(_row("Figs 3.12-3.22", f"F (eq. 3.7) {sc}", f"Reno N = {n}, B = 1680 pkt", f, paper, "RTTs",
                             agrees=(f >= bound) if math.isfinite(bound) else None,
                             note=f"bound (3.8) with measured λ = {lam_s:.2f}: {bound:.0f} RTTs; "
                                  + ("not converged within the run" if not math.isfinite(f) else f"F = {dur:.0f} s")
                                  + ("; thesis: Reno > 1500 RTTs" if sc == "droptail" else "")))
        for sc, paper in PAPER_REDUCTION.items():
            if sc in F and "droptail" in F:
                r = F["droptail"] / F[sc] if F[sc] > 0 else float("inf")
                rows.append(_row("Fig. 3.23", f"convergence-time reduction, {sc} vs DropTail", f"Reno N = {n}", r, paper,
                                 "x", agrees=(r > 1.0) if sc != "red" else None,
                                 note="inf/inf: neither converged" if not math.isfinite(F[sc]) else ""))
    # --- 64 MB transfer
    tr = runs[runs["part"] == "transfer"]
    for (sc, n, b), g in tr.groupby(["scheme", "n_flows", "buffer_bdp"]):
        rows.append(_row("Fig. 3.24", f"64 MB completion / 5.39 s, {sc}", f"Reno N = {n}, 200 ms, B = {b:g} BDP",
                         _mean(g, "norm_completion"), unit="x"))
    if len(tr):
        mx_dt = float(tr.loc[tr["scheme"] == "droptail", "norm_completion"].max())
        mx_pe = float(tr.loc[tr["scheme"] == "pecn", "norm_completion"].max())
        rows.append(_row("Fig. 3.24", "worst TCP (DropTail) completion / bound", "200 ms", mx_dt, 10.0, "x",
                         agrees=mx_dt > mx_pe, note="thesis: 'up to 10 times' at 200 ms; check: worse than P-ECN"))
        rows.append(_row("Fig. 3.24", "worst P-ECN completion / bound", "200 ms", mx_pe, 2.0, "x", agrees=mx_pe <= 2.0,
                         note="thesis: 'within 2 times', worst at 2 flows (slow start)"))
    rows += wei_ch3_mix.claims(runs)  # Figs 3.19, 3.20, 3.26
    from .wei_ch3_mimd import claims as mimd_claims

    rows += mimd_claims(runs)  # HS-TCP / S-TCP convergence, MIMD fairness, throughput CDFs
    from .wei_ch3_phase import claims as phase_claims

    rows += phase_claims(runs)  # Table 3.1 against the ACK clock's phase
    return pd.DataFrame(rows)


# ---- figures ---------------------------------------------------------------------------

def _fig_sync(runs: pd.DataFrame, path: Path) -> None:
    from ccbench.plots import new_figure

    from .wei_ch3 import _buffer_pkts

    fig, (a1, a2) = new_figure(1, 2, figsize=(10, 3.8))
    sn = runs[runs["part"] == "sync-n"]
    for sc, mk in (("droptail", "o"), ("pacing", "s")):
        g = sn[sn["scheme"] == sc].groupby("n_flows")["sync"].mean()
        (ln,) = a1.plot(g.index, g.values, marker=mk, label=f"ours, {sc}")
        a1.plot(g.index, [model_sync(n, W.BUFFER_PKTS, sc == "pacing") for n in g.index], ls="--",
                color=ln.get_color(), label=f"model (3.3), {sc}")
    a1.axhline(0.2042, color="grey", lw=0.8, ls=":", label="Table 3.1 Reno (0.20)")
    a1.set_xscale("log", base=2)
    a1.set_xlabel("number of flows N")
    a1.set_ylabel("loss synchronisation rate λ")
    a1.set_ylim(0, 1)
    a1.legend(fontsize="x-small")
    a1.set_title("λ vs N (Fig. 3.9), B = 1680 pkt", fontsize="small")
    sb = pd.concat([runs[runs["part"] == "sync-buffer"], sn[(sn["scheme"] == "droptail") & (sn["n_flows"] == 16)]])
    g = sb.groupby("buffer_bdp")["sync"].mean()
    a2.plot([_buffer_pkts(b) for b in g.index], g.values, marker="o", label="ours, DropTail, N = 16")
    a2.set_xscale("log")
    a2.set_xlabel("buffer (packets)")
    a2.set_ylim(0, 1)
    a2.legend(fontsize="x-small")
    a2.set_title("λ vs buffer", fontsize="small")
    fig.savefig(path, dpi=110)


def _fig_convergence(runs: pd.DataFrame, rows: list[dict], path: Path) -> None:
    from ccbench.plots import new_figure

    cv = [r for r in rows if r["part"] == "convergence"]
    n = max(r["n_flows"] for r in cv)
    cv = [r for r in cv if r["n_flows"] == n and r["seed"] == min(x["seed"] for x in cv)]
    fig, axes = new_figure(2, 2, figsize=(10, 6), sharex=True, squeeze=False)
    for ax, r in zip(axes.ravel(), cv):
        cw = r["_cwnd"]
        for f, g in cw.groupby("flow"):
            ax.plot(g["t"], g["cwnd_pkts"], lw=0.7)
        F = r["F_rtts"]
        ax.set_title(f"{r['scheme']}: λ = {r['sync']:.2f}, F = "
                     + (f"{F:.0f} RTTs" if math.isfinite(F) else "not converged"), fontsize="small")
        ax.set_ylabel("cwnd (pkts)")
    for ax in axes[-1]:
        ax.set_xlabel("time (s)")
    fig.suptitle(f"Window evolution, Reno N = {n}, 60 s near the end of the run", fontsize="medium")
    fig.savefig(path, dpi=110)


def _fig_detection(rows: list[dict], path: Path) -> None:
    from ccbench.plots import new_figure

    de = [r for r in rows if "_drops30" in r]
    de = [r for r in de if r["seed"] == min(x["seed"] for x in de)]
    if not de:
        return
    fig, axes = new_figure(1, len(de), figsize=(5 * len(de), 3.6), sharey=True, squeeze=False)
    for ax, r in zip(axes[0], de):
        d = r["_drops30"]
        tcp = d[d["flow"].str.startswith("tcp")]
        idx = tcp["flow"].str.extract(r"\[(\d+)\]")[0].astype(float)
        ax.scatter(tcp["t"], idx, marker="*", s=14, color="k", label="drop of flow i")
        ax.scatter(d["t"], np.full(len(d), -1.0), marker="x", s=10, color="tab:blue", label="any drop (noise too)")
        ax.set_ylim(-2, r["n_flows"])
        ax.set_title(f"{r['scheme']}: 30 RTTs of drops, {tcp['flow'].nunique()} of {r['n_flows']} flows hit "
                     f"(mean per event {r['detect_frac']:.2f})", fontsize="small")
        ax.set_xlabel("time (s)")
    axes[0][0].legend(fontsize="x-small", loc="upper right")
    axes[0][0].set_ylabel("flow")
    fig.savefig(path, dpi=110)


def _fig_intervals(rows: list[dict], path: Path) -> None:
    from ccbench.analysis import plot_loss_burstiness

    items = []
    for r in rows:
        if "_bursts" in r and (r["part"] == "intervals" or (r["part"] == "sync-n" and r["n_flows"] == 16)) \
                and r["seed"] == min(x["seed"] for x in rows):
            for b in r["_bursts"]:
                if r["part"] == "sync-n":
                    b.label = f"200 ms, {r['scheme']}"
                items.append(b)
    if items:
        plot_loss_burstiness(items, path)


def write_outputs(out: Path, table: pd.DataFrame, runs: pd.DataFrame, rows: list[dict], size, full: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "wei_ch3.csv", index=False)
    runs.to_csv(out / "wei_ch3_runs.csv", index=False)
    _fig_sync(runs, out / "wei_ch3_sync.png")
    _fig_convergence(runs, rows, out / "wei_ch3_windows.png")
    _fig_detection(rows, out / "wei_ch3_detection.png")
    _fig_intervals(rows, out / "wei_ch3_intervals.png")
    wei_ch3_mix.figure(runs, out / "wei_ch3_mix.png")
    from .wei_ch3_mimd_plots import write_figures as mimd_figures

    mimd_figures(out, runs, rows)  # wei_ch3_mimd.png, wei_ch3_convergence_cc.png, wei_ch3_ntg.png
    from .wei_ch3_phase import figure as phase_figure

    phase_figure(runs, out / "wei_ch3_phase.png")
    (out / "choices.txt").write_text(
        f"size: {'full' if full else 'reduced'} {size}\nwall time: {table.attrs.get('wall_s', float('nan')):.1f} s\n"
        "path: wei-sync's (see its choices.txt) with one change per part (ccbench.studies.wei_ch3 docstring)\n")
