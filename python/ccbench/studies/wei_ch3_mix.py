"""Wei thesis Ch. 3, paced and bursty TCP sharing one bottleneck (Figs 3.19, 3.20, 3.26): the
``mix`` part of :mod:`ccbench.studies.wei_ch3`.

Thesis §3.2.4 (shared notes ``wei-microscopic-congestion-control.md`` §3.6, §3.8): half of
the Reno flows are paced (randomized pacing, Algorithm 4), half bursty (ack-clocked), on the
wei-sync path. A paced flow spreads its packets over the RTT, so it is "more likely to detect a
packet loss in a congestion event" than a bursty flow that clusters its window; the text
expects λ to rise for the bursty flows and fall for the paced ones against isolation, with the
paced still above, and so:

* Fig. 3.19 (DropTail): "most of the bursty TCP Reno flows get more than their fairshare
  bandwidth (with a positive Normalized Throughput Gain) and most of the paced TCP Reno flows
  get less";
* Fig. 3.20: "Paced TCP in mixed environments has a larger convergence time than in isolated
  environments; bursty TCP in mixed environments has a smaller convergence time";
* Fig. 3.26 (Persistent ECN, every flow ECN-capable): "paced TCPs have higher aggregate
  throughput than bursty TCPs in all cases" (both see the same signal; bursty flows add
  sub-RTT losses of their own).

Measured per class (``bursty``, ``paced``) after the warm-up: throughput (delivered payload),
the Normalized Throughput Gain (:func:`ccbench.analysis.normalized_throughput_gain`, x* the
fair share of what the noise leaves, as in the convergence part), the paced class's share of
the TCP throughput, λ of the class (mean over its flows of the share of link loss events in
which the flow lost, or had marked, a packet), window reductions per 100 RTTs (changes of
ssthresh in the 100 ms state samples: every fast recovery, timeout or ECN CWR sets it), drops,
and from start-up the convergence time F of eq. (3.7) of the class's flows against the same
x* = c/N (N all flows). The isolated references are the ``convergence`` part's DropTail
(bursty) and pacing (paced) runs of the same N, seed and length.

Reduced: N 16 and 32, buffer 1 BDP, seeds 1-2, the convergence part's 1500 s: 8 runs, about
60-90 s on the shared machine. ``--full``: N 2-32, buffers 1/4, 1/2 and 1 BDP (the thesis's
Fig. 3.25 buffers), 10 seeds: 300 runs of 2-5 s each. With an odd N the bursty half is ``N // 2``.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import wei_sync as W

CLASSES = ("bursty", "paced")
SCHEMES = ("droptail", "pecn")
#: the isolated runs of the convergence part that each class is compared with (Fig. 3.20)
ISOLATED = {"bursty": "droptail", "paced": "pacing"}
#: thesis Fig. 3.26: "paced TCPs have higher aggregate throughput than bursty TCPs in all cases"
PAPER_PECN_PACED_WINS = 1.0


def scenario(scheme: str, n: int, duration_s: float, buffer_bdp: float = 1.0) -> dict:
    """The wei-ch3 path (its ``scenario``) with the N TCP flows split into ``N // 2`` bursty
    flows (``bursty[i]``) and the rest paced (``paced[i]``, Wei's randomized pacing). Under
    ``pecn`` every TCP flow is ECN-capable; only the paced half is paced (the study's isolated
    P-ECN runs pace all flows)."""
    from .wei_ch3 import scenario as ch3_scenario

    if scheme not in SCHEMES:
        raise ValueError(f"mix scheme {scheme!r} is not one of {SCHEMES}")
    if n < 2:
        raise ValueError(f"a mix needs at least 2 TCP flows, got n = {n}")
    d = ch3_scenario("mix", scheme, n, duration_s, buffer_bdp)
    tcp = d["flows"][0]
    bursty, paced = copy.deepcopy(tcp), copy.deepcopy(tcp)
    bursty.update(name="bursty", count=n // 2)
    bursty["transport"]["pacing"] = False
    paced.update(name="paced", count=n - n // 2)
    paced["transport"]["pacing"] = "random"
    d["flows"] = [bursty, paced] + d["flows"][1:]
    return d


def _reductions(cw: pd.DataFrame) -> int:
    """Window reductions in one flow's state samples: ssthresh changes (Linux sets it on
    entering recovery, loss or CWR, ``tcp_init_cwnd_reduction``/``tcp_enter_loss``; Reno
    never moves it otherwise). Two reductions within one 100 ms sample count once, which the
    once-per-RTT rule (RTT >= 200 ms) makes rare."""
    ss = cw.sort_values("t")["ssthresh_pkts"].to_numpy()
    return int((ss[1:] != ss[:-1]).sum()) if ss.size > 1 else 0


def measure(scheme: str, n: int, seed: int, duration_s: float, warmup_s: float,
            buffer_bdp: float = 1.0) -> dict[str, Any]:
    """One mixed run: per-class numbers (keys ``<quantity>_<class>``) and the class rates
    for the figure (``_tput``)."""
    import ccbench
    from ccbench.analysis import delivered_rate_series, fairness_convergence_time, normalized_throughput_gain
    from ccbench.analysis._common import AnalysisError
    from ccbench.analysis.losses import label_loss_events
    from ccbench.scenario import Scenario

    from .wei_ch3 import PKT_PAYLOAD, TCP_CAPACITY_BPS

    t0 = time.perf_counter()
    run = ccbench.simulate(Scenario.from_dict(scenario(scheme, n, duration_s, buffer_bdp)), seed=seed)
    names = [str(f) for f in run.flows["flow"]]
    # a class of one flow is named without an index ("paced"), else "paced[i]"
    members = {c: [f for f in names if f == c or f.startswith(c + "[")] for c in CLASSES}
    tcp = members["bursty"] + members["paced"]
    out: dict[str, Any] = {"part": "mix", "scheme": scheme, "n_flows": n, "seed": seed, "buffer_bdp": buffer_bdp}
    dr = run.drops
    dr = dr[(dr["link"].astype(str) == "bottleneck_down") & (dr["t"] >= warmup_s)]
    dr = dr.assign(flow=dr["flow"].astype(str))
    kinds = ("drop", "mark") if scheme == "pecn" else ("drop",)
    try:
        lab = label_loss_events(dr, W.RTT_S, kinds=kinds)
    except AnalysisError:  # no loss (or mark) at all after the warm-up
        lab = dr.iloc[0:0].assign(event=pd.Series(dtype=np.int64))
    n_ev = int(lab["event"].nunique())
    hits = lab.groupby("flow")["event"].nunique()
    cw = run.cwnd.assign(flow=run.cwnd["flow"].astype(str))
    late = cw[cw["t"] >= warmup_s]
    rtts = (duration_s - warmup_s) / W.RTT_S
    # payload rate of each TCP flow: after the warm-up (throughput, NTG) and from start-up
    # in 1 s bins (eq. 3.7)
    steady = delivered_rate_series(cw, duration_s - warmup_s, PKT_PAYLOAD, flows=tcp, t_start_s=warmup_s,
                                   t_end_s=duration_s).iloc[0]
    rates = delivered_rate_series(cw, 1.0, PKT_PAYLOAD, flows=tcp, t_end_s=duration_s)
    out["events"] = n_ev
    out["tcp_mbps"] = float(steady.sum()) / 1e6
    for c, fl in members.items():
        x = steady[fl].to_numpy(dtype=float)
        out[f"mbps_{c}"] = float(x.mean()) / 1e6
        out[f"ntg_{c}"] = normalized_throughput_gain(x, TCP_CAPACITY_BPS, n_flows=n)
        out[f"sync_{c}"] = float(np.mean([hits.get(f, 0) / n_ev for f in fl])) if n_ev else float("nan")
        out[f"reductions_{c}"] = float(np.mean([_reductions(late[late["flow"] == f]) for f in fl])) / rtts * 100
        out[f"drops_{c}"] = int(((dr["kind"].astype(str) == "drop") & dr["flow"].isin(fl)).sum())
        out[f"cwnd_{c}"] = float(late.loc[late["flow"].isin(fl), "cwnd_pkts"].mean())
        f_s = fairness_convergence_time(rates[fl], TCP_CAPACITY_BPS, n_flows=n)
        out[f"F_rtts_{c}"] = f_s / W.RTT_S
    out["paced_share"] = float(steady[members["paced"]].sum() / steady.sum()) if steady.sum() > 0 else float("nan")
    out["_tput"] = {c: steady[fl].to_numpy(dtype=float) for c, fl in members.items()}
    out["wall_s"] = time.perf_counter() - t0
    return out


def jobs(size, seed: int) -> list[tuple]:
    """This part's jobs of one seed, in :mod:`wei_ch3`'s job layout: N and length of the
    convergence part (so its DropTail and pacing runs are the isolated references)."""
    return [("mix", sc, n, seed, size.conv_s, size.warmup_s, b)
            for n in size.conv_n for b in size.mix_buffers for sc in SCHEMES]


# ---- the ours-versus-thesis rows ---------------------------------------------------------

def _row(item, quantity, setting, ours, paper=float("nan"), unit="", agrees=None, note=""):
    from .wei_ch3_table import _row as row

    return row(item, quantity, setting, ours, paper, unit, agrees, note)


def _frac(s: pd.Series) -> float:
    return float(s.mean()) if len(s) else float("nan")


def _mean_rtts(v: pd.Series) -> float:
    """Mean of F over seeds; ``inf`` when any seed did not converge (the mean is then unbounded)."""
    v = pd.to_numeric(v, errors="coerce")
    return float(v.mean()) if len(v) else float("nan")


def claims(runs: pd.DataFrame) -> list[dict]:
    """The rows for the wei-ch3 table (appended to :func:`wei_ch3_table.claims`)."""
    mx = runs[runs["part"] == "mix"] if "part" in runs.columns else runs.iloc[0:0]
    if mx.empty:
        return []
    rows = []
    # per scenario (scheme, N, B): the paced class's share, with the per-class numbers
    for (sc, n, b), g in mx.groupby(["scheme", "n_flows", "buffer_bdp"]):
        item = "Fig. 3.26" if sc == "pecn" else "Fig. 3.19"
        note = (f"NTG bursty {g['ntg_bursty'].mean():+.2f} / paced {g['ntg_paced'].mean():+.2f}; "
                f"λ {g['sync_bursty'].mean():.2f} / {g['sync_paced'].mean():.2f}; reductions per 100 RTTs "
                f"{g['reductions_bursty'].mean():.2f} / {g['reductions_paced'].mean():.2f}; drops "
                f"{g['drops_bursty'].mean():.0f} / {g['drops_paced'].mean():.0f}; cwnd "
                f"{g['cwnd_bursty'].mean():.0f} / {g['cwnd_paced'].mean():.0f} pkts")
        rows.append(_row(item, f"paced share of TCP throughput, {sc} mix",
                         f"Reno N = {n} ({n // 2} bursty), B = {b:g} BDP", _mean_rtts(g["paced_share"]),
                         unit="", note=note))
    dt, pe = mx[mx["scheme"] == "droptail"], mx[mx["scheme"] == "pecn"]
    if len(dt):
        pos = _frac(dt["ntg_bursty"] > 0)
        neg = _frac(dt["ntg_paced"] < 0)
        rows.append(_row("Fig. 3.19", "share of DropTail mixes with bursty NTG > 0", f"{len(dt)} runs", pos, unit="",
                         agrees=pos > 0.5, note="thesis: 'most' bursty Reno flows above their fair share"))
        rows.append(_row("Fig. 3.19", "share of DropTail mixes with paced NTG < 0", f"{len(dt)} runs", neg, unit="",
                         agrees=neg > 0.5, note="thesis: 'most' paced Reno flows below their fair share"))
        lam = _frac(dt["sync_paced"] > dt["sync_bursty"])
        rows.append(_row("Fig. 3.19", "share of DropTail mixes where paced flows detect more loss events (λ)",
                         f"{len(dt)} runs", lam, unit="", agrees=lam > 0.5,
                         note=f"λ bursty {dt['sync_bursty'].mean():.2f}, paced {dt['sync_paced'].mean():.2f}; "
                              f"reductions per 100 RTTs {dt['reductions_bursty'].mean():.2f} vs "
                              f"{dt['reductions_paced'].mean():.2f}; thesis: the paced class has the higher λ"))
    rows += _against_isolation(runs, dt)
    if len(pe):
        wins = _frac(pe["mbps_paced"] > pe["mbps_bursty"])
        ratio = float((pe["mbps_paced"] / pe["mbps_bursty"]).mean())
        rows.append(_row("Fig. 3.26", "share of P-ECN mixes where the paced class gets more throughput",
                         f"{len(pe)} runs", wins, PAPER_PECN_PACED_WINS, "", agrees=wins == 1.0,
                         note=f"paced / bursty throughput {ratio:.3f} (DropTail mixes "
                              f"{float((dt['mbps_paced'] / dt['mbps_bursty']).mean()):.3f}); thesis: 'in all cases'"))
        if len(dt):
            gap_dt = float((1 - dt["mbps_paced"] / dt["mbps_bursty"]).abs().mean())
            gap_pe = float((1 - pe["mbps_paced"] / pe["mbps_bursty"]).abs().mean())
            rows.append(_row("Fig. 3.26", "P-ECN shrinks the paced-bursty throughput gap", "|1 - paced/bursty|",
                             gap_pe, unit="", agrees=gap_pe < gap_dt / 3,
                             note=f"DropTail mixes {gap_dt:.3f}; thesis: 'such unfriendliness disappears'"))
    return rows


def _against_isolation(runs: pd.DataFrame, dt: pd.DataFrame) -> list[dict]:
    """Fig. 3.20, and §3.2.4's expectation on λ behind Figs 3.19/3.20: each class in the DropTail mix (1 BDP) against
    the isolated runs of the convergence part with the same N and seeds."""
    rows = []
    cv = runs[runs["part"] == "convergence"] if "part" in runs.columns else runs.iloc[0:0]
    dt = dt[dt["buffer_bdp"] == 1.0]
    for n, g in dt.groupby("n_flows"):
        for c in CLASSES:
            iso = cv[(cv["scheme"] == ISOLATED[c]) & (cv["n_flows"] == n) & cv["seed"].isin(g["seed"])]
            if iso.empty:
                continue
            f_mix, f_iso = _mean_rtts(g[f"F_rtts_{c}"]), _mean_rtts(iso["F_rtts"])
            larger = c == "paced"
            ok = (f_mix > f_iso) if larger else (f_mix < f_iso)
            fmt = lambda v: f"{v:.0f} RTTs" if math.isfinite(v) else "not converged"  # noqa: E731
            rows.append(_row("Fig. 3.20", f"F (eq. 3.7) of the {c} flows, mix / isolated", f"Reno N = {n}, B = 1 BDP",
                             f_mix / f_iso if math.isfinite(f_iso) and f_iso > 0 else float("nan"), unit="x",
                             agrees=ok if (math.isfinite(f_mix) or math.isfinite(f_iso)) else None,
                             note=f"mix {fmt(f_mix)}, isolated {fmt(f_iso)}; thesis: "
                                  + ("larger in the mix" if larger else "smaller in the mix")))
            l_mix, l_iso = float(g[f"sync_{c}"].mean()), float(iso["sync"].mean())
            rows.append(_row("§3.2.4", f"λ of the {c} flows, mix vs isolated", f"Reno N = {n}, B = 1 BDP",
                             l_mix, unit="", agrees=(l_mix < l_iso) if larger else (l_mix > l_iso),
                             note=f"isolated {l_iso:.2f}; thesis §3.2.4 expects it to "
                                  + ("fall" if larger else "rise") + " in the mix"))
    return rows


# ---- figure ------------------------------------------------------------------------------

def figure(runs: pd.DataFrame, path: Path) -> None:
    """Figs 3.19/3.26 as the thesis draws them (CDF over runs of each class's NTG, DropTail
    and P-ECN mixes), with λ and F per class, mix against isolation (Fig. 3.20)."""
    from ccbench.analysis import ecdf
    from ccbench.plots import new_figure

    mx = runs[runs["part"] == "mix"]
    if mx.empty:
        return
    fig, axes = new_figure(2, 2, figsize=(10, 7), squeeze=False)
    for ax, sc, title in ((axes[0][0], "droptail", "DropTail mix (Fig. 3.19)"),
                          (axes[0][1], "pecn", "Persistent ECN mix (Fig. 3.26)")):
        g = mx[mx["scheme"] == sc]
        for c, ls in (("bursty", "-"), ("paced", "--")):
            v = g[f"ntg_{c}"].dropna().to_numpy()
            if len(v):
                xs, ps = ecdf(v)
                ax.step(xs, ps, where="post", ls=ls, label=f"{c} ({len(v)} runs)")
        ax.axvline(0, color="grey", lw=0.8, ls=":")
        ax.set_xlabel("Normalized Throughput Gain of the class")
        ax.set_ylabel("CDF over runs")
        ax.set_ylim(0, 1)
        ax.legend(fontsize="x-small")
        ax.set_title(title, fontsize="small")
    cv = runs[(runs["part"] == "convergence") & runs["scheme"].isin(list(ISOLATED.values()))]
    dt = mx[(mx["scheme"] == "droptail") & (mx["buffer_bdp"] == 1.0)]
    ns = sorted(dt["n_flows"].unique())
    x = np.arange(len(ns))
    for ax, key, ylab in ((axes[1][0], "sync", "λ of the class"), (axes[1][1], "F_rtts", "F (eq. 3.7), RTTs")):
        for k, c in enumerate(CLASSES):
            mix_v = [pd.to_numeric(dt.loc[dt["n_flows"] == n, f"{key}_{c}"]).mean() for n in ns]
            iso_v = [pd.to_numeric(cv.loc[(cv["scheme"] == ISOLATED[c]) & (cv["n_flows"] == n), key]).mean()
                     for n in ns]
            cap = max([v for v in mix_v + iso_v if np.isfinite(v)] + [1.0]) * 1.1
            for j, (vals, hatch, lab) in enumerate(((iso_v, "", "isolated"), (mix_v, "//", "mix"))):
                xs = x + (2 * k + j - 1.5) * 0.2
                shown = [v if np.isfinite(v) else cap for v in vals]
                ax.bar(xs, shown, width=0.2, hatch=hatch, color="tab:blue" if c == "bursty" else "tab:orange",
                       edgecolor="k", lw=0.5, label=f"{c}, {lab}")
                for xi, v in zip(xs, vals):
                    if not np.isfinite(v):
                        ax.text(xi, cap, "∞", ha="center", va="bottom", fontsize="small")
        ax.set_xticks(x, [f"N = {n}" for n in ns])
        ax.set_ylim(0, 1.0 if key == "sync" else cap * 1.4)
        ax.set_ylabel(ylab + (" (∞: not converged in the run)" if key == "F_rtts" else ""))
        ax.legend(fontsize="x-small", ncol=2, loc="upper left")
        ax.set_title(("λ" if key == "sync" else "convergence time (Fig. 3.20)") + ", DropTail, 1 BDP",
                     fontsize="small")
    fig.suptitle("Half paced, half bursty Reno on one bottleneck (100 Mbit/s, 200 ms, 10 % noise)",
                 fontsize="medium")
    fig.savefig(path, dpi=110)


# ---- the notes paragraph -----------------------------------------------------------------

def note(t: pd.DataFrame) -> str:
    """The bullet of the Wei Ch. 3 notes (docs/REPRODUCTIONS.md) on the mix, from the recorded table."""
    def v(q: str, setting: str | None = None) -> float:
        r = t[(t["quantity"] == q) & ((t["setting"] == setting) if setting else True)]
        return float(r["ours"].iloc[0]) if len(r) else float("nan")

    def notes(q: str) -> str:
        r = t[t["quantity"] == q]
        return str(r["note"].iloc[0]) if len(r) else "–"

    shares = t[t["quantity"] == "paced share of TCP throughput, droptail mix"]["ours"]
    pe_shares = t[t["quantity"] == "paced share of TCP throughput, pecn mix"]["ours"]
    if shares.empty:
        return ""
    f20 = t[t["quantity"].astype(str).str.startswith("F (eq. 3.7) of the")]
    l20 = t[t["quantity"].astype(str).str.match(r"λ of the .* mix vs isolated")]
    return (
        "* **Paced and bursty flows together (Figs 3.19, 3.20, 3.26).** Half of the Reno flows paced, half "
        f"bursty. Under DropTail the paced half gets {shares.min():.2f}-{shares.max():.2f} of the TCP throughput "
        f"(fair: 0.50). The bursty half's NTG is positive in {v('share of DropTail mixes with bursty NTG > 0'):.0%} "
        f"of the runs and the paced half's negative in {v('share of DropTail mixes with paced NTG < 0'):.0%} "
        "(thesis: 'most'). The cause is the one the thesis names: the paced flows detect more loss events "
        f"({notes('share of DropTail mixes where paced flows detect more loss events (λ)').split('; thesis')[0]}). "
        f"Fig. 3.20: {int((f20['agrees'] == 'yes').sum())} of {len(f20)} class/N comparisons of F go the thesis's "
        "way (paced slower in the mix than alone, bursty faster). Against isolation, λ moves as §3.2.4 expects in "
        f"{int((l20['agrees'] == 'yes').sum())} of {len(l20)} comparisons: each class keeps about its isolated λ, "
        "so the paced half brings its higher detection rate into the mix. Under Persistent ECN the gap nearly "
        f"closes: the paced share is {pe_shares.min():.3f}-{pe_shares.max():.3f} "
        f"({notes('share of P-ECN mixes where the paced class gets more throughput').split('; thesis')[0]}), but "
        "the paced half does not come out ahead as the thesis finds 'in all cases': both halves cut their windows "
        "equally often and hold nearly the same windows. With the upper watermark at the full buffer (the thesis's "
        "default) marking starts at the first overflow, and those overflow drops fall more on the paced flows "
        "(per-run drops in the table's notes), which turns the thesis's second reason ('bursty TCPs may generate "
        "additional bursty loss') around. With the watermark at 3/4 of the buffer (no drops at all; seed 1, "
        "explored, not in the table) the bursty half still leads, by 0.8 % at 16 flows and 2 % at 32, with windows "
        "0.4 % and 1.2 % larger: the same signal gives the same share, and nothing in our runs makes the paced "
        "half win.\n")
