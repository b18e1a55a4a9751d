"""Wei thesis Ch. 3: HS-TCP and S-TCP fairness convergence, MIMD fairness (Figs 3.13-3.14)
and the throughput CDFs (Figs 3.16, 3.25); the parts of ``ccbench reproduce wei-ch3`` that
are not Reno-only.

Thesis §3.2.1.3-§3.2.3 and §3.4.2 (shared notes ``wei-microscopic-congestion-control.md``
§3.4-§3.6, §3.8). The path is :mod:`ccbench.studies.wei_ch3`'s (100 Mbit/s, 200 ms, 1680
packets = 1 BDP, 50 UDP on/off noise flows carrying 10 %), with one thing changed per part:

===========  =================================================================================
``mimd-n``   N Scalable-TCP flows, *no noise* (Fig. 3.13: "8 Scalable-TCP flows share a
             100Mbps bottleneck link, without noise traffic"), 600 s (Fig. 3.14: "We run N
             Scalable-TCP flows for 600 seconds"), bursty (DropTail) vs randomized pacing, and
             bursty under adaptive RED (randomised drops; not in the figures, the other case of
             §3.2.2's argument).
             Fig. 3.14's metric: the smallest flow's throughput / (c/N); Fig. 3.13's picture:
             10-s averages of the cwnd of the fastest and the slowest flow (N = 8).
             The thesis gives no RTT for these figures; we keep 200 ms. Flows start uniformly
             within the first second (``run.start_jitter``, 5 RTTs): slow start then leaves
             them up to 2^5 apart, the unfair start a convergence test needs (and bursty runs
             without noise differ between seeds only through it).
``conv-cc``  HS-TCP and S-TCP with the noise (Fig. 3.12 (b), (c); paced: Fig. 3.17; RED and
             P-ECN, Figs 3.21-3.22, at full size): fairness convergence time F (eq. 3.7) from
             start-up, λ beside Table 3.2's, and F against Reno's from the ``convergence`` part.
``ntg``      isolated runs of Reno, HS-TCP and S-TCP, bursty and paced under DropTail (Fig.
             3.16) and under Persistent ECN (Fig. 3.25), buffers 1/4, 1/2 and 1 BDP (Fig.
             3.25's three steps): Normalized Throughput Gain = (mean per-flow throughput -
             fair share) / fair share, one value per run, as CDFs.
===========  =================================================================================

Fair share x* = c/N with c what the noise leaves as payload (0.9 C x 1448/1500; without
noise C x 1448/1500), as in the ``convergence`` part. Scalable TCP follows today's Linux
(``tcp_scalable.c``: +1 per 100 ACKed segments, i.e. 1 % per RTT, Reno's +1 per RTT below a
window of 100; -1/8 on loss). The thesis's 2.6.16 module counted 50 ACKs (= 100 segments
with delayed ACKs) above a window of 50, so at 32 flows (windows near 100) ours is more
Reno-like than the thesis's.

Reduced (:data:`REDUCED`): 18 ``mimd-n`` runs (600 s, ~2 s each), 8 ``conv-cc`` runs (16
flows, 1500 s, ~6 s each), 36 ``ntg`` runs (16 flows, 200 s, ~1 s each): about 2 minutes
on one core. ``--full`` (:data:`FULL`): N 2-32 everywhere, all four schemes for ``conv-cc``,
10 seeds (``ntg``: 3, 600 s), about 1090 runs; with 2 workers roughly 30 minutes (estimated
from the per-run times above, not timed whole).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from . import wei_sync as W

PARTS = ("mimd-n", "conv-cc", "ntg")
CCS = ("highspeed", "scalable")
LABELS = {"reno": "Reno", "highspeed": "HS-TCP", "scalable": "S-TCP"}
#: schemes of the ``ntg`` part: Fig. 3.16 (DropTail, bursty / paced), Fig. 3.25 (P-ECN, paced / bursty)
NTG_SCHEMES = ("droptail", "pacing", "pecn", "pecn-bursty")
#: schemes of the ``mimd-n`` part: Figs 3.13-3.14 compare bursty and paced; RED (randomised
#: drops, the wei-sync adaptive RED) is the other way §3.2.2's argument gives λ_i ∝ w_i
MIMD_SCHEMES = ("droptail", "pacing", "red")
MIMD_S = 600.0
MIMD_JITTER = "1s"
PKT_PAYLOAD = 1448
#: payload rate of the bottleneck with no noise (Fig. 3.13-3.14 runs)
CLEAN_CAPACITY_BPS = W.CAPACITY_BPS * PKT_PAYLOAD / W.PKT_BYTES


@dataclass(frozen=True)
class Size:
    mimd_n: tuple[int, ...]
    mimd_seeds: tuple[int, ...]
    conv_n: tuple[int, ...]
    conv_schemes: tuple[str, ...]
    conv_seeds: tuple[int, ...]
    conv_s: float
    ntg_n: tuple[int, ...]
    ntg_buffers: tuple[float, ...]
    ntg_seeds: tuple[int, ...]
    ntg_s: float
    warmup_s: float


REDUCED = Size(mimd_n=(2, 8, 32), mimd_seeds=(1, 2), conv_n=(16,), conv_schemes=("droptail", "pacing"),
               conv_seeds=(1, 2), conv_s=1500.0, ntg_n=(16,), ntg_buffers=(0.25, 0.5, 1.0), ntg_seeds=(1,),
               ntg_s=200.0, warmup_s=60.0)
FULL = Size(mimd_n=(2, 4, 8, 16, 32), mimd_seeds=tuple(range(1, 11)), conv_n=(2, 4, 8, 16, 32),
            conv_schemes=("droptail", "pacing", "red", "pecn"), conv_seeds=tuple(range(1, 11)), conv_s=1500.0,
            ntg_n=(2, 4, 8, 16, 32), ntg_buffers=(0.25, 0.5, 1.0), ntg_seeds=(1, 2, 3), ntg_s=600.0,
            warmup_s=100.0)


def jobs(full: bool) -> list[tuple]:
    """Job tuples in :mod:`ccbench.studies.wei_ch3`'s order (part, scheme, N, seed, duration,
    warm-up, buffer in BDPs) with the congestion control appended."""
    s = FULL if full else REDUCED
    j: list[tuple] = []
    for seed in s.mimd_seeds:
        for n in s.mimd_n:
            for sc in MIMD_SCHEMES:
                j.append(("mimd-n", sc, n, seed, MIMD_S, s.warmup_s, 1.0, "scalable"))
    for seed in s.conv_seeds:
        for n in s.conv_n:
            for cc in CCS:
                for sc in s.conv_schemes:
                    j.append(("conv-cc", sc, n, seed, s.conv_s, s.warmup_s, 1.0, cc))
    for seed in s.ntg_seeds:
        for n in s.ntg_n:
            for b in s.ntg_buffers:
                for cc in ("reno",) + CCS:
                    for sc in NTG_SCHEMES:
                        j.append(("ntg", sc, n, seed, s.ntg_s, s.warmup_s, b, cc))
    return j


def scenario(part: str, scheme: str, n: int, duration_s: float, buffer_bdp: float = 1.0, seed: int = 1,
             cc: str = "scalable") -> dict:
    """The scenario of one run: ``wei_ch3``'s path with this part's change and ``cc``."""
    from .wei_ch3 import scenario as ch3_scenario

    if part not in PARTS:
        raise ValueError(f"part {part!r} is not one of {PARTS}")
    # P-ECN with bursty senders (Fig. 3.25's "bursty TCP"): the study's pecn scheme paces
    d = ch3_scenario("convergence", "pecn" if scheme == "pecn-bursty" else scheme, n, duration_s, buffer_bdp, seed)
    tcp = d["flows"][0]["transport"]
    tcp["cc"] = cc
    if scheme == "pecn-bursty":
        tcp.pop("pacing", None)
    if part == "mimd-n":
        d["flows"] = d["flows"][:1]
        d["run"]["start_jitter"] = MIMD_JITTER
    return d


def fair_share_bps(part: str, n: int) -> float:
    from .wei_ch3 import TCP_CAPACITY_BPS

    return (CLEAN_CAPACITY_BPS if part == "mimd-n" else TCP_CAPACITY_BPS) / n


def _per_flow_sync(drops: pd.DataFrame, tcp: list[str], kinds: tuple[str, ...]) -> tuple[float, pd.Series, int]:
    """λ and λ_i (thesis §3.1 procedure, events of all bottleneck losses, 200 ms window)."""
    from ccbench.analysis._common import AnalysisError
    from ccbench.analysis.losses import label_loss_events

    try:
        lab = label_loss_events(drops, W.RTT_S, kinds=kinds)
    except AnalysisError:
        return float("nan"), pd.Series(dtype=float), 0
    n_ev = int(lab["event"].nunique())
    if not n_ev:
        return float("nan"), pd.Series(dtype=float), 0
    hits = lab[lab["flow"].isin(tcp)].groupby("flow")["event"].nunique()
    per = pd.Series({f: hits.get(f, 0) / n_ev for f in tcp})
    return float(per.mean()), per, n_ev


def measure(part: str, scheme: str, n: int, seed: int, duration_s: float, warmup_s: float,
            buffer_bdp: float = 1.0, cc: str = "scalable") -> dict[str, Any]:
    """One run: a flat dict of numbers, plus per-flow series for the figures under ``_`` keys."""
    import ccbench
    from ccbench.analysis import delivered_rate_series, fairness_convergence_time
    from ccbench.scenario import Scenario

    t0 = time.perf_counter()
    run = ccbench.simulate(Scenario.from_dict(scenario(part, scheme, n, duration_s, buffer_bdp, seed, cc)), seed=seed)
    tcp = [str(f) for f in run.flows["flow"] if str(f).startswith("tcp")]
    fair = fair_share_bps(part, n)
    out: dict[str, Any] = {"part": part, "scheme": scheme, "n_flows": n, "seed": seed, "buffer_bdp": buffer_bdp,
                           "cc": cc, "duration_s": duration_s}
    rates = delivered_rate_series(run.cwnd, 1.0, PKT_PAYLOAD, flows=tcp, t_end_s=duration_s)
    whole = rates.mean()
    late = rates[rates.index >= warmup_s].mean()
    # Fig. 3.14's metric (whole run) and Fig. 3.16's Normalized Throughput Gain (after warm-up)
    out["min_share"] = float(whole.min() / fair)
    out["max_share"] = float(whole.max() / fair)
    out["ntg"] = float(late.mean() / fair - 1)
    out["ntg_min_flow"] = float(late.min() / fair - 1)
    # unfairness left at the end: fastest / slowest flow over the last 100 s
    end = rates[rates.index >= duration_s - 100].mean()
    out["end_ratio"] = float(end.max() / end.min()) if end.min() > 0 else float("inf")
    f = fairness_convergence_time(rates, fair * n, n_flows=n)
    out["F_s"], out["F_rtts"], out["converged"] = f, f / W.RTT_S, bool(math.isfinite(f))
    dr = run.drops
    dr = dr[(dr["link"].astype(str) == "bottleneck_down") & (dr["t"] >= warmup_s)].assign(
        flow=lambda x: x["flow"].astype(str))
    lam, per, n_ev = _per_flow_sync(dr, tcp, ("drop", "mark") if scheme.startswith("pecn") else ("drop",))
    out["sync"], out["events"] = lam, n_ev
    cw = run.cwnd[run.cwnd["flow"].astype(str).isin(tcp)].assign(flow=lambda x: x["flow"].astype(str))
    cw_late = cw[cw["t"] >= warmup_s].groupby("flow")["cwnd_pkts"].mean()
    if len(per) and len(cw_late) >= 2:
        # Kelly's fluid model needs λ_i ∝ w_i (MIMD converges); Chiu-Jain's static model has
        # λ_i equal for all flows (it does not): λ of the largest-window flow over the smallest's
        hi, lo = cw_late.idxmax(), cw_late.idxmin()
        out["lam_hi_lo"] = float(per[hi] / per[lo]) if per[lo] > 0 else float("inf")
        out["w_hi_lo"] = float(cw_late[hi] / cw_late[lo])
    if part == "mimd-n" and n == 8:
        # Fig. 3.13: "each point of the congestion window size is an average value over 10 seconds"
        c10 = cw.assign(b=(cw["t"] // 10.0) * 10.0 + 5.0).groupby(["b", "flow"])["cwnd_pkts"].mean().unstack()
        out["_cwnd10"] = c10
    if part == "conv-cc":
        out["_rates"] = rates
    out["wall_s"] = time.perf_counter() - t0
    return out


# ---- the ours-versus-thesis rows ------------------------------------------------------------

SCHEME_LABELS = {"droptail": "bursty", "pacing": "paced", "red": "RED", "pecn": "P-ECN paced",
                 "pecn-bursty": "P-ECN bursty"}
#: ccbench.models.wei_sync names of the algorithms of the synchronised-throughput model (Fig. 3.15)
_MODEL_ALGO = {"reno": "reno", "highspeed": "hstcp", "scalable": "stcp"}
#: "unnoticeable" (Fig. 3.16 (c)): a pacing loss below 2 % of the fair share
UNNOTICEABLE = 0.02


def _f_of(g: pd.DataFrame) -> float:
    """Mean F over the seeds in RTTs, or inf when a seed did not converge within its run."""
    if not len(g):
        return float("nan")
    return float(g["F_rtts"].mean()) if g["converged"].astype(bool).all() else float("inf")


def _fmt_f(f: float) -> str:
    return f"{f:.0f}" if math.isfinite(f) else "∞"


def sync_ntg(cc: str, buffer_bdp: float, n: int) -> float:
    """NTG of N fully synchronised flows (the thesis's Fig. 3.15 reasoning, noise left out):
    :func:`ccbench.models.wei_sync.sync_throughput_with_buffer` minus 1."""
    from ccbench.models.wei_sync import sync_throughput_with_buffer

    from .wei_ch3 import _buffer_pkts

    return sync_throughput_with_buffer(_MODEL_ALGO[cc], bdp_pkts=W.BDP_PKTS, buffer_pkts=_buffer_pkts(buffer_bdp),
                                       n_flows=n).fraction - 1


def _mimd_rows(mn: pd.DataFrame) -> list[dict]:
    from .wei_ch3_table import _mean, _row

    rows = []
    share = {}
    for (n, sc), g in mn.groupby(["n_flows", "scheme"]):
        share[sc, n] = _mean(g, "min_share")
        rows.append(_row("Fig. 3.14", f"S-TCP smallest flow / (c/N), {SCHEME_LABELS[sc]}",
                         f"N = {n}, no noise, {g['duration_s'].max():g} s", share[sc, n],
                         note=f"{len(g)} seeds, min {g['min_share'].min():.2f}; last 100 s fastest/slowest "
                              f"{_mean(g, 'end_ratio'):.2f}; λ {_mean(g, 'sync'):.2f}, λ_i of the largest / smallest "
                              f"window {_mean(g, 'lam_hi_lo'):.2f} at a window ratio {_mean(g, 'w_hi_lo'):.1f}"))
    ns = sorted(mn["n_flows"].unique())
    if len(ns) >= 2 and ("droptail", ns[0]) in share and ("droptail", ns[-1]) in share:
        a, b = share["droptail", ns[0]], share["droptail", ns[-1]]
        rows.append(_row("Fig. 3.14", "bursty S-TCP fairness degrades with N", f"N = {ns[0]} .. {ns[-1]}", b - a,
                         unit="Δ share", agrees=b < a,
                         note="thesis: 'fair only when the number of flows is small ... quickly degrades'; ours "
                              + " / ".join(f"{share['droptail', n]:.2f}" for n in ns if ("droptail", n) in share)))
    both = [n for n in ns if n > 2 and ("droptail", n) in share and ("pacing", n) in share]
    if both:
        up = [share["pacing", n] > share["droptail", n] for n in both]
        rows.append(_row("Fig. 3.14", "pacing improves S-TCP fairness (N > 2)", f"N = {both[0]} .. {both[-1]}",
                         float(sum(up)), float(len(both)), "N values", agrees=all(up),
                         note="paced / bursty: " + ", ".join(f"{share['pacing', n]:.2f}/{share['droptail', n]:.2f}"
                                                             for n in both)))
    g8 = mn[mn["n_flows"] == 8]
    if len(g8):
        dur = f"N = 8, no noise, {g8['duration_s'].max():g} s"
        F = {}
        for sc, g in g8.groupby("scheme"):
            F[sc] = _f_of(g)
            conv = int(g["converged"].astype(bool).sum())
            rows.append(_row("Fig. 3.13", f"S-TCP F (eq. 3.7), {SCHEME_LABELS[sc]}", dur, F[sc],
                             unit="RTTs", note=f"{conv} of {len(g)} seeds converged; last 100 s fastest/slowest "
                                               f"{_mean(g, 'end_ratio'):.2f}"))
        conv = {sc: float(g["converged"].astype(bool).mean()) for sc, g in g8.groupby("scheme")}
        end = {sc: _mean(g, "end_ratio") for sc, g in g8.groupby("scheme")}
        # "converges" as eq. (3.7) judges it, seed by seed: more seeds reach F than bursty ones
        # do, and the fastest and slowest flows end closer together
        for sc, quantity in (("red", "S-TCP converges with randomised drops (RED), not bursty"),
                             ("pacing", "bursty S-TCP does not converge, paced does")):
            if {"droptail", sc} <= set(F):
                rows.append(_row("Fig. 3.13", quantity, dur, end[sc], unit="fastest/slowest",
                                 agrees=conv[sc] > conv["droptail"] and end[sc] < end["droptail"],
                                 note=f"bursty {end['droptail']:.2f}; seeds reaching F: {conv[sc]:.0%} vs bursty "
                                      f"{conv['droptail']:.0%}; mean F {_fmt_f(F[sc])} vs {_fmt_f(F['droptail'])} RTTs; "
                                      f"NTG {_mean(g8[g8['scheme'] == sc], 'ntg'):+.3f}"))
    return rows


def _conv_rows(cv: pd.DataFrame, reno: pd.DataFrame) -> list[dict]:
    from ccbench.models.wei_sync import fairness_convergence_lower_bound

    from .wei_ch3 import PAPER_REDUCTION
    from .wei_ch3_table import _mean, _row

    rows = []
    for (cc, n), gn in cv.groupby(["cc", "n_flows"]):
        F = {}
        for sc, g in gn.groupby("scheme"):
            F[sc] = _f_of(g)
            lam = _mean(g, "sync")
            f_reno = _f_of(reno[(reno["n_flows"] == n) & (reno["scheme"] == sc)])
            bound = float(fairness_convergence_lower_bound(min(max(lam, 0.0), 1.0), (W.BDP_PKTS + W.BUFFER_PKTS) / n)) \
                if math.isfinite(lam) else float("nan")
            rows.append(_row("Figs 3.12-3.22", f"F (eq. 3.7) {sc}", f"{LABELS[cc]} N = {n}, B = 1680 pkt", F[sc],
                             unit="RTTs",
                             note=f"λ {lam:.2f} (Table 3.2: {W.PAPER[cc, sc]:.2f}); Reno's F here {_fmt_f(f_reno)}; "
                                  f"(3.8) in Reno's form at this λ {bound:.0f} (the thesis's HS/S-TCP form is not "
                                  f"printed); last 100 s fastest/slowest {_mean(g, 'end_ratio'):.2f}"))
        if "droptail" in F:
            f_reno = _f_of(reno[(reno["n_flows"] == n) & (reno["scheme"] == "droptail")])
            ratio = F["droptail"] / f_reno if math.isfinite(f_reno) and f_reno > 0 else float("nan")
            rows.append(_row("Fig. 3.12", f"{LABELS[cc]} DropTail F / Reno's", f"N = {n}", ratio, unit="x",
                             agrees=(F["droptail"] >= f_reno) if math.isfinite(f_reno) else None,
                             note="thesis: 'not improved by ... HS-TCP and S-TCP' (footnote: actually worse); "
                                  f"{_fmt_f(F['droptail'])} vs Reno {_fmt_f(f_reno)} RTTs"))
        for sc, paper in PAPER_REDUCTION.items():
            if sc in F and "droptail" in F:
                r = F["droptail"] / F[sc] if F[sc] > 0 else float("inf")
                r = float("nan") if not (math.isfinite(F["droptail"]) or math.isfinite(F[sc])) else r
                rows.append(_row("Fig. 3.23", f"convergence-time reduction, {sc} vs DropTail", f"{LABELS[cc]} N = {n}",
                                 r, paper, "x", agrees=(r > 1.0) if sc != "red" and not math.isnan(r) else None,
                                 note="thesis: 'similar observations ... with HS-TCP and S-TCP'"
                                      + ("; neither converged" if math.isnan(r) else "")))
    return rows


def _ntg_rows(nt: pd.DataFrame) -> list[dict]:
    from .wei_ch3_table import _mean, _row

    rows = []
    m = {}
    for (cc, sc), g in nt.groupby(["cc", "scheme"]):
        m[cc, sc] = _mean(g, "ntg")
        fig = "Fig. 3.25" if sc.startswith("pecn") else "Fig. 3.16"
        per_b = g.groupby("buffer_bdp")["ntg"].mean()
        model = "; ".join(f"{b:g}: {sync_ntg(cc, b, int(g['n_flows'].min())):+.3f}" for b in per_b.index)
        rows.append(_row(fig, f"NTG {LABELS[cc]}, {SCHEME_LABELS[sc]}",
                         f"N = {'/'.join(str(n) for n in sorted(g['n_flows'].unique()))}, B = 1/4-1 BDP, {len(g)} runs",
                         m[cc, sc], note="by buffer (BDP) " + ", ".join(f"{b:g}: {v:+.3f}" for b, v in per_b.items())
                                         + f"; smallest flow {g['ntg_min_flow'].min():+.2f}; fully synchronised "
                                           f"(Fig. 3.15 model, no noise) {model}"))
    d = {cc: m.get((cc, "pacing"), np.nan) - m.get((cc, "droptail"), np.nan) for cc in ("reno",) + CCS}
    if math.isfinite(d["reno"]):
        rows.append(_row("Fig. 3.16", "paced Reno loses throughput (NTG paced - bursty)", "DropTail", d["reno"],
                         unit="Δ NTG", agrees=d["reno"] < 0, note="thesis: 'there is loss of throughput for Paced TCP Reno'"))
        if math.isfinite(d["highspeed"]):
            rows.append(_row("Fig. 3.16", "pacing's loss smaller with HS-TCP", "DropTail", d["highspeed"], unit="Δ NTG",
                             agrees=abs(d["highspeed"]) < abs(d["reno"]), note=f"Reno {d['reno']:+.3f}"))
        if math.isfinite(d["scalable"]):
            rows.append(_row("Fig. 3.16", "pacing's loss unnoticeable with S-TCP", "DropTail", d["scalable"],
                             unit="Δ NTG", agrees=abs(d["scalable"]) < min(abs(d["reno"]), UNNOTICEABLE),
                             note=f"check: below Reno's and below {UNNOTICEABLE:g} of the fair share"))
    pe = nt[nt["scheme"].str.startswith("pecn")]
    if len(pe):
        within = float((pe["ntg"] >= -0.15).mean())
        rows.append(_row("Fig. 3.25", "P-ECN runs losing at most 15 % of the fair share", "all algorithms, both senders",
                         within, unit="share of runs", agrees=within > 0.5,
                         note="thesis: 'In most of the cases, the loss of average throughput is within 15%'"))
        rp = pe[pe["cc"] == "reno"]
        dt = nt[(nt["cc"] == "reno") & nt["scheme"].isin(("droptail", "pacing"))]
        if len(rp) and len(dt):
            diff = _mean(rp, "ntg") - _mean(dt, "ntg")
            rows.append(_row("Fig. 3.25", "Reno NTG under P-ECN - under DropTail", "paced and bursty", diff, unit="Δ NTG",
                             agrees=diff < 0, note="thesis: 'comparing to Figure 3.16, the aggregate throughput of "
                                                   "Reno flows is even lower with persistent ECN'"))
            steps = rp.groupby("buffer_bdp")["ntg"].mean()
            if len(steps) >= 2:
                rows.append(_row("Fig. 3.25", "Reno P-ECN NTG steps up with the buffer", "B = "
                                 + ", ".join(f"{b:g}" for b in steps.index) + " BDP",
                                 float(steps.iloc[-1] - steps.iloc[0]), unit="Δ NTG",
                                 agrees=bool(np.all(np.diff(steps.to_numpy()) > 0)),
                                 note="thesis: three steps for 1/4, 1/2, 1 BDP; ours "
                                      + " / ".join(f"{v:+.3f}" for v in steps)))
    return rows


def claims(runs: pd.DataFrame) -> list[dict]:
    """The rows of these parts for ``wei_ch3.csv`` (``wei_ch3_table._row`` layout)."""
    if "part" not in runs.columns:
        return []
    rows = _mimd_rows(runs[runs["part"] == "mimd-n"])
    cv = runs[runs["part"] == "conv-cc"]
    if len(cv):
        rows += _conv_rows(cv, runs[runs["part"] == "convergence"])
    nt = runs[runs["part"] == "ntg"]
    if len(nt):
        rows += _ntg_rows(nt)
    return rows
