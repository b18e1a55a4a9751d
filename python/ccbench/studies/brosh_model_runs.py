"""Simulated runs of ``ccbench reproduce brosh-model`` (Brosh et al. Sec. 5.1, 6): one
CBR-over-TCP flow through a random-drop path, and the drop-tail testbed of
:mod:`ccbench.studies.brosh_droptail` with a byte-counting switch; the per-run numbers
the figures need, and the model's numbers for the same settings.

Random-drop path (paper Sec. 5.1, NIST Net): dumbbell at 100 Mbit/s both ways (no
queueing), one-way delay RTT/2 each way, Bernoulli loss ``p`` on every packet of the data
direction only (so ``p`` is the model's segment loss rate; the paper does not say which
direction NIST Net dropped), one flow. TCP as the paper's Linux 2.6.17 testbed as far
as the simulator has switches: ``reno`` (NewReno with SACK), ``nagle = false``,
``init_cwnd = 4``, ``slow_start_after_idle = false`` (no congestion-window validation),
``recovery = "rate-halving"``, ``abc = "per-ack"`` (2.6 ACK counting, ``tcp_abc = 0``),
``tlp = false`` and ``frto = false`` (neither was on in 2.6.17), delayed ACKs and the
200 ms minimum RTO as Linux.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

WARMUP_S = 2.0
#: Playout delays (s) at which the late fraction P{D > d} is recorded (Fig. 23).
PLAYOUTS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 5.0)

#: The paper's 2.6-era TCP (see the module docstring).
BROSH_TCP = {
    "kind": "tcp", "cc": "reno", "nagle": False, "sack": True, "init_cwnd": 4,
    "slow_start_after_idle": False, "recovery": "rate-halving", "abc": "per-ack",
    "tlp": False, "frto": False,
}


@dataclass(frozen=True)
class Source:
    """A CBR source of the paper: ``size`` bytes every ``interval_s`` (Sec. 5, table in
    note §3.1; the labels are the paper's, the rates count the 14 header bytes)."""

    key: str
    label: str
    size: int
    interval_s: float

    @property
    def f_pps(self) -> float:
        return 1.0 / self.interval_s


SOURCES = {s.key: s for s in (
    Source("voip64", "VoIP 64 kb/s", 174, 0.020),
    Source("video573", "video 573 kb/s", 1448, 0.020),
    Source("voip42", "VoIP 42 kb/s", 174, 0.030),
    Source("video378", "video 378 kb/s", 1448, 0.030),
    Source("ivideo284", "interactive video 284 kb/s", 724, 0.020),
    Source("ivideo178", "interactive video 178 kb/s", 724, 0.030),
    # Fig. 17a "video+split": the 573 kb/s video written as half-size packets at twice the rate.
    Source("videosplit", "video+split 573 kb/s (724 B / 10 ms)", 724, 0.010),
)}


def random_loss_scenario(src: Source, rtt_s: float, p: float, measure_s: float, drain_s: float,
                         abc: str = "per-ack", loss: dict | None = None, tcp: dict | None = None) -> dict:
    transport = dict(BROSH_TCP, abc=abc, **(tcp or {}))
    return {
        "run": {"duration": f"{round((WARMUP_S + measure_s + drain_s) * 1000)}ms", "queue_sample": "0s",
                "state_sample": "0s"},
        "topology": {
            "kind": "dumbbell",
            "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": f"{round(rtt_s * 1e6 / 2)}us",
                           "queue": {"kind": "droptail", "limit": "1000pkt"},
                           "loss": loss or {"kind": "bernoulli", "p": p}},
        },
        "flows": [{
            "name": src.key, "transport": transport,
            "app": {"kind": "cbr", "size": f"{src.size}B", "interval": f"{round(src.interval_s * 1e6)}us"},
            "stop": f"{round((WARMUP_S + measure_s) * 1000)}ms",
        }],
    }


def delay_metrics(packets: pd.DataFrame, one_way_s: float, deadline_s: float) -> dict:
    """Per-message statistics of D = t_deliver - t_write (includes the one-way delay L,
    as the paper's TCP delay) over the messages written after the warm-up. A message
    never delivered counts as infinitely late in the percentiles and late fractions and
    is left out of the mean, standard deviation and maximum (``undelivered`` says how
    many; they are the runs where TCP throughput is below the CBR rate)."""
    p = packets[packets["t_write"].to_numpy(dtype=float) >= WARMUP_S]
    tw = p["t_write"].to_numpy(dtype=float)
    d = p["t_deliver"].to_numpy(dtype=float) - tw
    d = np.where(np.isfinite(d), d, np.inf)
    fin = np.isfinite(d)
    backlog = p["t_first_tx"].to_numpy(dtype=float) - tw
    tcp = np.clip(d[fin] - one_way_s, 0.0, None)
    out = {
        "messages": int(d.size),
        "undelivered": int((~fin).sum()),
        "mean_s": float(d[fin].mean()) if fin.any() else np.nan,
        "std_s": float(d[fin].std()) if fin.any() else np.nan,
        "p95_s": float(np.percentile(d, 95, method="inverted_cdf")),
        "max_s": float(d[fin].max()) if fin.any() else np.nan,
        # Fig. 17b: share of the TCP-level delay (D - L) spent in the send backlog
        # (congestion control); the rest is retransmission and head-of-line blocking.
        "backlog_share": float(np.nansum(np.clip(backlog[fin], 0, None)) / tcp.sum()) if tcp.sum() > 0 else np.nan,
        "late_deadline": float(np.mean(d > deadline_s)),
    }
    for x in PLAYOUTS:
        out[f"late_{x:g}s"] = float(np.mean(d > x))
    return out


def random_loss_point(args: tuple) -> dict:
    """One simulated run (picklable for the process pool)."""
    import ccbench
    from ccbench.scenario import Scenario

    key, rtt_s, p, seed, measure_s, drain_s, abc, *rest = args
    tcp = rest[0] if rest else None  # transport keys over BROSH_TCP (a hypothesis variant)
    src = SOURCES[key]
    run = ccbench.simulate(Scenario.from_dict(random_loss_scenario(src, rtt_s, p, measure_s, drain_s, abc, tcp=tcp)),
                           seed=seed)
    f = run.flows.iloc[0]
    # The paper's playout setting (Sec. 6.6): L + RTT + 3/f.
    deadline = rtt_s / 2 + rtt_s + 3 * src.interval_s
    row = {"source": key, "rtt_s": rtt_s, "p": p, "seed": seed, "abc": abc,
           **delay_metrics(run.packets, rtt_s / 2, deadline),
           "loss_pct": 100.0 * float(f["loss_rate"]), "timeouts": int(f["timeouts"]),
           "fast_recoveries": int(f["fast_recoveries"])}
    return row


def model_point(key: str, rtt_s: float, p: float) -> dict:
    """The Brosh model (random-loss variant, paper defaults) for one setting."""
    from ccbench.models.brosh import BroshParams, solve
    from ccbench.models.pftk import throughput_pkts_per_s

    src = SOURCES[key]
    res = solve(BroshParams(size_bytes=float(src.size), interval_s=src.interval_s, rtt_s=rtt_s, loss=p))
    d = res.distribution
    deadline = rtt_s / 2 + rtt_s + 3 * src.interval_s
    out = {"source": key, "rtt_s": rtt_s, "p": p, "m_mean_s": d.mean_s, "m_std_s": d.std_s,
           "m_p95_s": d.percentile(0.95), "m_max_s": d.max_s(1e-6), "m_late_deadline": d.late_fraction(deadline),
           "m_to_share": res.timeout_rate_hz / max(res.timeout_rate_hz + res.fast_retransmit_rate_hz, 1e-300),
           # PFTK throughput (b = 1, T0 = 4 RTT, in MSS bytes) over the CBR rate (bytes):
           # the paper's "TCP throughput at least twice the bit rate" margin (Sec. 5.1).
           "pftk_ratio": float(throughput_pkts_per_s(rtt_s, p, t0_s=4 * rtt_s, b=1.0)) * 1448.0 / (src.f_pps * src.size)}
    for x in PLAYOUTS:
        out[f"m_late_{x:g}s"] = d.late_fraction(x)
    return out


def pool_map(fn, jobs: list, progress=None, workers: int | None = None) -> list:
    """``fn`` over ``jobs`` in a process pool of ``workers`` (default: the CPUs, at
    most 4), reporting ``progress(done, total)``; in order."""
    workers = workers or min(4, os.cpu_count() or 1)
    out = [None] * len(jobs)
    if workers <= 1 or len(jobs) < 4:
        for i, j in enumerate(jobs):
            out[i] = fn(j)
            if progress:
                progress(i + 1, len(jobs))
        return out
    with ProcessPoolExecutor(max_workers=workers) as ex:
        futs = {ex.submit(fn, j): i for i, j in enumerate(jobs)}
        from concurrent.futures import as_completed

        for k, fut in enumerate(as_completed(futs), 1):
            out[futs[fut]] = fut.result()
            if progress:
                progress(k, len(jobs))
    return out


def droptail_abc_point(args: tuple) -> dict:
    """Figs 19, 22: the drop-tail testbed of :mod:`brosh_droptail` with the VoIP flows'
    window growth set to ``abc``; 95th percentile and maximum of the VoIP delay."""
    import ccbench
    from ccbench.scenario import Scenario

    from .brosh_droptail import WARMUP_S as DT_WARMUP, scenario_dict

    n_web, queue, abc, seed, measure_s = args
    d = scenario_dict(n_web, queue, measure_s, seed=seed)
    for fl in d["flows"]:
        if fl["name"].startswith("voip"):
            fl["transport"] = dict(fl["transport"], abc=abc, tlp=False, frto=False)
    run = ccbench.simulate(Scenario.from_dict(d), seed=seed)
    pk = run.packets
    pk = pk[pk["flow"].astype(str).str.startswith("voip") & (pk["t_write"].to_numpy(dtype=float) >= DT_WARMUP)]
    p95, mx = [], []
    for _, g in pk.groupby("flow", observed=True):
        dd = g["t_deliver"].to_numpy(dtype=float) - g["t_write"].to_numpy(dtype=float)
        dd = np.where(np.isfinite(dd), dd, np.inf)
        p95.append(float(np.percentile(dd, 95, method="inverted_cdf")))
        mx.append(float(dd.max()))
    fl = run.flows[run.flows["flow"].astype(str).str.startswith("voip")]
    return {"web_flows": n_web, "queue": queue, "abc": abc, "seed": seed, "p95_s": float(np.mean(p95)),
            "max_s": float(np.mean(mx)), "loss_pct": 100.0 * float(fl["pkts_dropped"].sum() / max(fl["pkts_sent"].sum(), 1))}


def _trace_run(size: int, interval: float, rtt_s: float, loss_times: tuple, seconds: float, abc: str = "per-ack"):
    """One CBR flow on the loss-free path except the data packets written at
    ``loss_times`` (a loss trace by packet index: in the application-limited state every
    message is one segment); (packets, cwnd trace at 10 ms)."""
    import ccbench
    from ccbench.scenario import Scenario

    src = Source("cbr", "cbr", size, interval)
    idx = [int(round(t / interval)) for t in loss_times]
    d = random_loss_scenario(src, rtt_s, 0.0, seconds, 10.0, abc=abc, loss={"kind": "trace", "indices": idx})
    d["run"]["state_sample"] = "10ms"
    run = ccbench.simulate(Scenario.from_dict(d), seed=1)
    return run.packets, run.cwnd


def trace_fig2(rtt_s: float = 0.2, t_loss_s: float = 13.0, seconds: float = 20.0,
               abc: str = "per-ack") -> tuple[dict, pd.DataFrame]:
    """Fig. 2: 50 MSS-sized packets/s, symmetric 200 ms RTT, one loss at ``t_loss_s``
    (after a settling loss at 3 s, see :func:`trace_pair`). Returns the loss-recovery
    time (loss to the window reduction, the paper's 0.26 s) and the network-limited
    period (loss to the last message that waited in the send backlog, the paper's
    1.9 s), and the delay series."""
    pk, cw = _trace_run(1448, 0.020, rtt_s, (3.0, t_loss_s), seconds, abc)
    tw = pk["t_write"].to_numpy(dtype=float)
    backlog = pk["t_first_tx"].to_numpy(dtype=float) - tw
    after = tw >= t_loss_s
    waited = tw[after & (backlog > 1e-3)]
    rec = cw[(cw["t"] >= t_loss_s) & (cw["ca_state"].astype(str) == "recovery")]
    out = {"recovery_s": float(rec["t"].iloc[0] - t_loss_s) if len(rec) else np.nan,
           "nl_period_s": float(waited.max() - t_loss_s) if waited.size else 0.0,
           "peak_delay_s": float(np.nanmax((pk["t_deliver"].to_numpy(dtype=float) - tw)[after]))}
    keep = (tw >= t_loss_s - 0.5) & (tw <= t_loss_s + 3.0)
    series = pd.DataFrame({"t": tw[keep] - t_loss_s, "delay_s": (pk["t_deliver"].to_numpy(dtype=float) - tw)[keep]})
    return out, series


def trace_pair(rtt_s: float = 0.2, t_loss_s: float = 13.0, gap_s: float = 0.05,
               seconds: float = 22.0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Fig. 18: 100 MSS-sized packets/s against 200 half-MSS packets/s (same bytes/s),
    symmetric 200 ms RTT, two close-by losses: the data packets sent ``t_loss_s`` and
    ``t_loss_s + gap_s`` after the start are dropped (a loss trace by packet index; in
    the application-limited state every message is one segment). A first pair of losses
    at 3 s ends the start-up slow start (whose overshoot would otherwise leave a window
    of three times the load), so the measured pair meets the window a loss-clearing
    episode leaves, as in the paper's steady state. Returns per flow the
    peak delay (messages written from 0.5 s before the measured losses on) and the window
    once the backlog has cleared (mean over the last 2 s) relative to the load in
    packets per RTT; and the delay and cwnd series around the losses (for the figure)."""
    rows, series = [], []
    for size, interval, name in ((1448, 0.010, "MSS"), (724, 0.005, "MSS/2")):
        pk, cw = _trace_run(size, interval, rtt_s, (3.0, 3.0 + gap_s, t_loss_s, t_loss_s + gap_s), seconds)
        tw = pk["t_write"].to_numpy(dtype=float)
        delay = pk["t_deliver"].to_numpy(dtype=float) - tw
        dl = delay[tw >= t_loss_s - 0.5]
        # The "invalid" window kept once the backlog has cleared (paper Fig. 18 b, d).
        after = cw[(cw["t"] > seconds - 2.0) & (cw["t"] < seconds)]
        load_packets = rtt_s / interval
        cwnd = float(after["cwnd_pkts"].mean()) if len(after) else np.nan
        rows.append({"flow": name, "size_B": size, "pps": 1 / interval, "peak_delay_s": float(np.nanmax(dl)),
                     "cwnd_after": cwnd, "load_pkts_per_rtt": load_packets,
                     "cwnd_over_load_pct": 100.0 * (cwnd / load_packets - 1.0)})
        keep = (tw >= t_loss_s - 1.0) & (tw <= t_loss_s + 5.0)
        series.append(pd.DataFrame({"flow": name, "kind": "delay_s", "t": tw[keep] - t_loss_s, "value": delay[keep]}))
        c = cw[(cw["t"] >= t_loss_s - 1.0) & (cw["t"] <= t_loss_s + 5.0)]
        series.append(pd.DataFrame({"flow": name, "kind": "cwnd_pkts", "t": c["t"].to_numpy() - t_loss_s,
                                    "value": c["cwnd_pkts"].to_numpy(dtype=float)}))
    return pd.DataFrame(rows), pd.concat(series, ignore_index=True)
