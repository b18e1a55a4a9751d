"""Wei thesis Ch. 3 figures: synchronisation vs flows and buffer, loss burstiness,
detection fraction, window evolution, fairness convergence, 64 MB transfers.

Xiaoliang (David) Wei, "Microscopic Behavior of Internet Congestion Control", Caltech PhD
thesis 2007, Ch. 3 (shared notes ``wei-microscopic-congestion-control.md`` §3.2-§3.8). The
path is :mod:`ccbench.studies.wei_sync`'s (100 Mbit/s, 200 ms, 1680-packet buffer, 50 UDP
on/off noise flows carrying 10 %), with one thing changed per part:

==============  =========================================================================
``sync-n``      Reno, DropTail and randomized pacing, N flows (Fig. 3.9): λ vs N, with the
                model of eqs (3.1)-(3.3) at the thesis's Fig. 3.9 parameters
``sync-buffer`` Reno, DropTail, 16 flows, buffer 1/8 .. 2 BDP (Fig. 3.12's axes): λ vs B; the
                event-weighted pool of both sweeps (Table 3.1 is "averaged over all loss
                events in the simulations")
``intervals``   heterogeneous RTTs uniform in 2-200 ms (Fig. 3.1, ns-2 part): share of loss
                intervals < 1 % RTT against a Poisson process of the same rate
``detection``   the 16-flow runs of ``sync-n``, bursty vs paced (Fig. 3.8): mean fraction of
                flows that lose a packet in a loss event, and 30 RTTs of their drops
``convergence`` Reno, DropTail / pacing / RED / P-ECN (Figs 3.12, 3.17, 3.21-3.23): fairness
                convergence time F (eq. 3.7) in RTTs, from start-up, with x* the fair share of
                what the noise leaves (0.9 C, payload rate); the lower bound of eq. (3.8)
                with the measured λ, and the reduction factors against DropTail; cwnd traces of the
                same runs (window evolution of synchronised flows)
``transfer``    64 MB split over N parallel Reno flows (Fig. 3.24), buffer 1/8 and 1 BDP:
                completion time of the last flow / 5.39 s, DropTail vs P-ECN
``mix``         half the flows paced, half bursty, DropTail and P-ECN, the convergence part's N
                and length, buffer 1 BDP (--full: 1/4-1 BDP) (Figs 3.19, 3.20, 3.26; :mod:`.wei_ch3_mix`)
==============  =========================================================================

HS-TCP / S-TCP convergence, MIMD fairness (Figs 3.13-3.14) and the throughput CDFs (Figs 3.16,
3.25) are :mod:`ccbench.studies.wei_ch3_mimd`'s parts (``mimd-n``, ``conv-cc``, ``ntg``), run
in the same job list (62 runs, about 1.5 minutes more reduced, ~30 minutes more full), and so is
:mod:`ccbench.studies.wei_ch3_phase`'s ``phase`` part (Table 3.1 against the ACK clock's phase at
the bottleneck; 48 runs, about a minute more reduced; 288 runs full).

Reduced size (``run()``): seeds 1-2, N in 4-32, runs of 600 s simulated (3000 RTTs; convergence
and mix, 16 and 32 flows, 1500 s = 7500 RTTs), 74 runs, about 6 minutes on one core of the shared
2-core machine. ``--full``: 10 seeds, N 2-32 in every part, 1000 s (convergence and mix 1500 s), 850
runs of about 2.5-5 s of CPU each: 30-60 minutes with 2 workers (estimated from samples, not timed whole).
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

from . import wei_ch3_mix
from . import wei_sync as W

DESCRIPTION = (
    "Wei thesis Ch. 3 figures: sync rate vs flows and buffer, loss-interval burstiness, "
    "detection fraction bursty vs paced, fairness convergence (eq. 3.7 vs bound 3.8) under "
    "DropTail/pacing/RED/P-ECN, 64 MB parallel transfer; HS-TCP/S-TCP convergence, MIMD fairness "
    "(Figs 3.13-3.14), throughput CDFs (Figs 3.16, 3.25); Table 3.1 against the ACK clock's phase"
)

BDP = W.BDP_PKTS
PKT_PAYLOAD = 1448
#: thesis Fig 3.24: "the theoretic lower-bound of completion time of a 64MB transfer is 5.39 seconds"
TRANSFER_BYTES = 64 * 2**20
TRANSFER_BOUND_S = 5.39
SCHEMES = ("droptail", "pacing", "red", "pecn")
TRANSFER_BUFFERS = (0.125, 1.0)
#: x* of eq. (3.7): the fair share of what the noise leaves, as delivered payload. The thesis
#: writes x* = c/N, but with 10 % noise and headers the TCP flows can deliver only
#: 0.9 x 1448/1500 of c, and 0.8 c/N would then ask for 92 % of the possible share.
TCP_CAPACITY_BPS = (1 - W.NOISE_SHARE) * W.CAPACITY_BPS * PKT_PAYLOAD / W.PKT_BYTES
#: thesis §3.4.1.2 (Fig 3.23): average reduction of Reno's convergence time against DropTail
PAPER_REDUCTION = {"pacing": 2.4, "red": 1.25, "pecn": 30.0}


@dataclass(frozen=True)
class Size:
    seeds: tuple[int, ...]
    sync_n: tuple[int, ...]
    buffers: tuple[float, ...]  # in BDPs
    sync_s: float
    warmup_s: float
    conv_n: tuple[int, ...]
    conv_s: float
    transfer_n: tuple[int, ...]
    mix_buffers: tuple[float, ...] = (1.0,)  # in BDPs, the paced-bursty mix (wei_ch3_mix)


REDUCED = Size(seeds=(1, 2), sync_n=(4, 8, 16, 32), buffers=(0.125, 0.25, 0.5, 1.0, 2.0), sync_s=600.0,
               warmup_s=60.0, conv_n=(16, 32), conv_s=1500.0, transfer_n=(2, 8, 32), mix_buffers=(1.0,))
FULL = Size(seeds=tuple(range(1, 11)), sync_n=(2, 4, 8, 16, 32), buffers=(0.125, 0.25, 0.5, 1.0, 2.0), sync_s=1000.0,
            warmup_s=100.0, conv_n=(2, 4, 8, 16, 32), conv_s=1500.0, transfer_n=(2, 4, 8, 16, 32),
            mix_buffers=(0.25, 0.5, 1.0))


def _buffer_pkts(bdps: float) -> int:
    return W.BUFFER_PKTS if bdps == 1.0 else int(round(bdps * BDP))


def scenario(part: str, scheme: str, n: int, duration_s: float, buffer_bdp: float = 1.0, seed: int = 1) -> dict:
    """The scenario of one run: the wei-sync path with this part's change."""
    d = W.scenario_dict("reno", scheme, n, duration_s)
    q = d["topology"]["bottleneck"]["queue"]
    b = _buffer_pkts(buffer_bdp)
    q["limit"] = f"{b}pkt"
    if scheme == "pecn":
        q.update(upper=f"{b}pkt", lower=f"{b // 2}pkt")
    if part == "intervals":
        # Fig 3.1: "RTTs of the flows ... random between 2ms to 200ms": 1 ms of the RTT on the
        # bottleneck each way, the rest on each sender's access link (one draw per flow).
        rng = np.random.default_rng(1000 + seed)
        rtts = rng.uniform(0.002, 0.2, n)
        d["topology"]["bottleneck"]["delay"] = "0.5ms"
        d["topology"]["access"]["pair_delays"] = [f"{(r - 0.001) / 2 * 1e3:.3f}ms" for r in rtts] + ["0.5ms"] * W.N_NOISE
    if part == "transfer":
        d["flows"][0]["app"] = {"kind": "bulk", "bytes": f"{TRANSFER_BYTES // n}B"}
    return d


def _pair_rtts(d: dict) -> list[float]:
    one_way = float(d["topology"]["bottleneck"]["delay"].rstrip("ms")) / 1e3
    return [2 * (one_way + float(x.rstrip("ms")) / 1e3) for x in d["topology"]["access"]["pair_delays"]]


def measure(part: str, scheme: str, n: int, seed: int, duration_s: float, warmup_s: float,
            buffer_bdp: float = 1.0) -> dict[str, Any]:
    """One run and every number the parts need from it (a flat dict, plus cwnd and drop
    extracts for the figures under keys starting with ``_``)."""
    import ccbench
    from ccbench.analysis import delivered_rate_series, fairness_convergence_time, loss_burstiness
    from ccbench.analysis._common import AnalysisError
    from ccbench.analysis.losses import label_loss_events
    from ccbench.scenario import Scenario

    if part == "mix":
        return wei_ch3_mix.measure(scheme, n, seed, duration_s, warmup_s, buffer_bdp)
    t0 = time.perf_counter()
    d = scenario(part, scheme, n, duration_s, buffer_bdp, seed)
    run = ccbench.simulate(Scenario.from_dict(d), seed=seed)
    names = [str(f) for f in run.flows["flow"]]
    tcp = [f for f in names if f.startswith("tcp")]
    out: dict[str, Any] = {"part": part, "scheme": scheme, "n_flows": n, "seed": seed, "buffer_bdp": buffer_bdp}
    fl = run.flows.assign(flow=run.flows["flow"].astype(str))
    ft = fl[fl["flow"].isin(tcp)]
    dr = run.drops
    dr = dr[dr["link"].astype(str) == "bottleneck_down"].assign(flow=lambda x: x["flow"].astype(str))
    kinds = ("drop", "mark") if scheme == "pecn" else ("drop",)
    if part == "transfer":
        out["completion_s"] = float(ft["completion_s"].max())
        out["norm_completion"] = out["completion_s"] / TRANSFER_BOUND_S
        out["wall_s"] = time.perf_counter() - t0
        return out
    late = dr[dr["t"] >= warmup_s]
    try:
        lab = label_loss_events(late, W.RTT_S, kinds=kinds)
    except AnalysisError:
        lab = late.iloc[0:0].assign(event=pd.Series(dtype=np.int64))
    n_ev = int(lab["event"].nunique())
    if n_ev:
        hits = lab[lab["flow"].isin(tcp)].groupby("flow")["event"].nunique()
        per = np.array([hits.get(f, 0) / n_ev for f in tcp])
        out["sync"] = float(per.mean())
        # per event: fraction of the TCP flows that lost (or had marked) a packet (Fig 3.8)
        frac = lab[lab["flow"].isin(tcp)].groupby("event")["flow"].nunique().reindex(range(n_ev), fill_value=0) / n
        out["detect_frac"] = float(frac.mean())
    else:
        out["sync"] = out["detect_frac"] = float("nan")
    out["events"] = n_ev
    out["drops"] = int((late["kind"].astype(str) == "drop").sum())
    out["goodput_mbps"] = float(ft["goodput_bps"].sum()) / 1e6
    st = run.cwnd[run.cwnd["flow"].astype(str).isin(tcp)]
    srtt = st.loc[(st["t"] >= warmup_s) & (st["srtt_s"] > 0), "srtt_s"]
    out["srtt_s"] = float(srtt.mean()) if len(srtt) else W.RTT_S
    drops_only = late[late["kind"].astype(str) == "drop"]
    if part == "intervals":
        rtts = _pair_rtts(d)[:n]
        rtt_of = dict(zip(tcp, rtts))
        mean_rtt = float(np.mean(rtts))
        # the link's loss process (all flows, the thesis's "consecutive lost packets"),
        # normalised by the mean RTT of the TCP flows; per flow, by that flow's RTT
        lb = loss_burstiness(drops_only, mean_rtt, label="RTT 2-200 ms: link / mean RTT")
        out["mean_rtt_s"] = mean_rtt
        out["within_1pct"], out["within_1rtt"] = lb.frac_within[0.01], lb.frac_within[1.0]
        out["poisson_1pct"], out["poisson_1rtt"] = lb.poisson_within[0.01], lb.poisson_within[1.0]
        pf = drops_only[drops_only["flow"].isin(tcp)]
        lbf = loss_burstiness(pf, rtt_of, per_flow=True, label="RTT 2-200 ms: per flow / own RTT")
        out["pf_within_1pct"], out["pf_poisson_1pct"] = lbf.frac_within[0.01], lbf.poisson_within[0.01]
        out["_bursts"] = [lb, lbf]
    elif len(drops_only) > 2:
        lb = loss_burstiness(drops_only, W.RTT_S, label=f"{scheme}, N={n}")
        out["within_1pct"], out["poisson_1pct"] = lb.frac_within[0.01], lb.poisson_within[0.01]
        out["_bursts"] = [lb]
    if part == "convergence":
        # eq. (3.7) from start-up: delivered-packet rate of each TCP flow in 1 s bins
        rates = delivered_rate_series(run.cwnd, 1.0, PKT_PAYLOAD, flows=tcp, t_end_s=duration_s)
        f = fairness_convergence_time(rates, TCP_CAPACITY_BPS, n_flows=n)
        out["F_s"] = f
        out["F_rtts"] = f / W.RTT_S
        out["converged"] = bool(math.isfinite(f))
        out["jain_end"] = float(_jain(rates.mean().to_numpy()))
        out["_rates"] = rates  # per-flow trajectories beside HS-TCP / S-TCP's (wei_ch3_mimd_plots)
        cw = st[["flow", "t", "cwnd_pkts"]]
        out["_cwnd"] = cw[(cw["t"] >= duration_s - 120) & (cw["t"] <= duration_s - 60)]
    if part == "sync-n" and n == 16:
        # Fig 3.8's picture: 30 RTTs from just before the first loss event a minute after warm-up;
        # the flows' drops, and every bottleneck drop (noise included) as flow -1
        after = late[late["t"] >= warmup_s + 60]
        if len(after):
            a = float(after["t"].iloc[0]) - 2 * W.RTT_S
            win = late[(late["t"] >= a) & (late["t"] < a + 30 * W.RTT_S)]
            out["_drops30"] = win[["t", "flow", "kind"]]
    out["wall_s"] = time.perf_counter() - t0
    return out


def _jain(x: np.ndarray) -> float:
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if len(x) and (x ** 2).sum() > 0 else float("nan")


def jobs(size: Size) -> list[tuple]:
    j: list[tuple] = []
    for s in size.seeds:
        for n in size.sync_n:
            for sc in ("droptail", "pacing"):
                j.append(("sync-n", sc, n, s, size.sync_s, size.warmup_s, 1.0))
        for b in size.buffers:
            if b != 1.0:  # the 1-BDP point is sync-n's N = 16 DropTail run
                j.append(("sync-buffer", "droptail", 16, s, size.sync_s, size.warmup_s, b))
        j.append(("intervals", "droptail", 16, s, size.sync_s, size.warmup_s, 1.0))
        for n in size.conv_n:
            for sc in SCHEMES:
                j.append(("convergence", sc, n, s, size.conv_s, size.warmup_s, 1.0))
        for n in size.transfer_n:
            for sc in ("droptail", "pecn"):
                for b in TRANSFER_BUFFERS:
                    j.append(("transfer", sc, n, s, 120.0, 0.0, b))
        j += wei_ch3_mix.jobs(size, s)
    return j


def _one(a: tuple) -> dict[str, Any]:
    from . import wei_ch3_mimd, wei_ch3_phase

    if a[0] in wei_ch3_phase.PARTS:
        return wei_ch3_phase.measure(*a)
    return wei_ch3_mimd.measure(*a) if a[0] in wei_ch3_mimd.PARTS else measure(*a)


def run_all(job_list: list[tuple], workers: int = 1, progress: Optional[Callable[[int, int], None]] = None) -> list[dict]:
    rows: list[dict] = []
    if workers <= 1:
        for k, a in enumerate(job_list):
            rows.append(_one(a))
            if progress:
                progress(k + 1, len(job_list))
        return rows
    with ProcessPoolExecutor(max_workers=workers) as ex:
        for k, r in enumerate(ex.map(_one, job_list)):
            rows.append(r)
            if progress:
                progress(k + 1, len(job_list))
    return rows


def runs_frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])


from .wei_ch3_table import claims, write_outputs  # noqa: E402  (the table needs the constants above)


def run(full: bool = False, out: Optional[Path] = None, progress: Optional[Callable[[int, int], None]] = None,
        workers: Optional[int] = None) -> pd.DataFrame:
    """Runs every part (reduced unless ``full``); returns the ours-versus-thesis table and
    writes it (``wei_ch3.csv``), every run (``wei_ch3_runs.csv``) and the figures to ``out``."""
    size = FULL if full else REDUCED
    workers = (2 if full else 1) if workers is None else workers
    t0 = time.perf_counter()
    from .wei_ch3_mimd import jobs as mimd_jobs
    from .wei_ch3_phase import jobs as phase_jobs

    rows = run_all(jobs(size) + mimd_jobs(full) + phase_jobs(full), workers, progress)
    runs = runs_frame(rows)
    table = claims(runs)
    table.attrs["wall_s"] = time.perf_counter() - t0
    if out is not None:
        write_outputs(Path(out), table, runs, rows, size, full)
    return table
