"""Wei thesis Ch. 4 (§4.3) probe analysis on a simulated and an emulated path.

The thesis's UDP probe (§4.3; ``ccbench probe``) sends numbered packets, smooth or bursty, and
records which are lost; Ch. 3 (§3.1.1, Figs 3.1-3.3) analyses such loss traces as *loss
intervals* normalised by the path RTT, against a Poisson process of the same rate: NS-2 80 % of
intervals < 1 % RTT, PlanetLab 40 % < 1 % RTT and 60 % < 1 RTT. (The issue asks for "tables
4.2/4.3 and Fig. 4.8"; in the thesis those are TCP-Linux's cwnd-trajectory grids and its
random-loss throughput check, not loss-process results, so the comparison here is with the
loss-interval numbers of §3.1.1 the probe was built for.)

One path, run by the simulator and by the emulator (the real kernel TCP in network
namespaces, :func:`ccbench.emulate`): 20 Mbit/s, 200 ms round trip, buffer 1 BDP (333 pkt,
counted in packets as ns-2's and Dummynet's), 8 greedy TCP flows (Reno; the kernel's ``reno``
in the emulator) started 250 ms apart, 10 UDP exponential on/off noise flows carrying 10 % (the thesis's
background, §4.2.5), and one probe flow carrying what ``ccbench probe client
--pattern smooth --size 48B --rate 1000pkt/s`` sends: 48-byte UDP packets every 1 ms (the
thesis's PlanetLab traces are such CBR flows, at its limit of 1 pkt/ms, so consecutive probe
packets are 0.5 % of the RTT apart and losses < 1 % RTT apart are resolved). The client's
``bursty`` pattern (200 packets back-to-back every 200 ms here) is not used: in a 333-packet
buffer it makes its own losses. Two queues: drop-tail and adaptive RED (min_th 66, max_th 198
pkt, gentle, w_q = 1 - exp(-1/C)). The probe's loss trace is analysed exactly
as ``ccbench probe analyse`` analyses a real one (:func:`ccbench.analysis.loss_burstiness`,
intervals in units of the base RTT, the probe's minimum-RTT estimate), and the link's whole loss
process beside it (the thesis's router-side NS-2/Dummynet traces).

Reduced: 60 s per run, simulator seeds 1-3, one emulator run per queue (2 min of wall time).
``--full``: 300 s per run (the thesis's 5-minute probe), seeds 1-10, emulator seeds 1-3. The
emulator part is skipped with a note in the table when the machine cannot emulate (not root,
no ``ccemu`` binary: ``ccbench emu check``).

On a real path (the thesis's PlanetLab measurement): start ``ccbench probe server --port 9000``
on the far host, then on the near one ``ccbench probe client --server HOST:9000 --packets 150000
--rate 500pkt/s --size 48B --out runs/p48`` and again with ``--size 400B --out runs/p400`` (the
thesis kept a path only when both sizes gave similar loss patterns), then ``ccbench probe
analyse runs/p48 --plot p48.png``: the same fractions as this study's table, normalised by the
probe's minimum RTT.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Optional

import numpy as np
import pandas as pd

DESCRIPTION = (
    "Wei thesis §4.3 / Figs 3.1-3.3: UDP-probe loss burstiness (intervals < 1 % RTT, < 1 RTT vs "
    "Poisson) on one path in the simulator and the emulator, drop-tail and RED"
)

RATE_BPS = 20e6
RTT_S = 0.2
PKT_BYTES = 1500
BUFFER_PKTS = int(round(RATE_BPS * RTT_S / 8 / PKT_BYTES))  # 1 BDP = 333 pkt
N_TCP = 8
#: UDP on/off background as in the thesis's simulations (§4.2.5: exponential on/off, 10 % of
#: capacity), here 10 flows of 200 kbit/s on average: it makes the seeds differ
N_NOISE, NOISE_SHARE = 10, 0.10
PROBE_SIZE = "48B"
PROBE_RATE = 1000.0  # pkt/s, the thesis's limit (1 pkt/ms): 0.5 % of the RTT between packets
QUEUES = ("droptail", "red")
#: thesis §3.1.1: share of loss intervals below 1 % of an RTT and below 1 RTT
PAPER = {"ns-2": {0.01: 0.80}, "planetlab": {0.01: 0.40, 1.0: 0.60}}

REDUCED = {"duration_s": 60.0, "sim_seeds": (1, 2, 3), "emu_seeds": (1,)}
FULL = {"duration_s": 300.0, "sim_seeds": tuple(range(1, 11)), "emu_seeds": (1, 2, 3)}


def scenario_dict(queue: str, duration_s: float) -> dict[str, Any]:
    if queue not in QUEUES:
        raise ValueError(f"queue {queue!r} is not one of {QUEUES}")
    q: dict[str, Any] = {"kind": "droptail", "limit": f"{BUFFER_PKTS}pkt"}
    if queue == "red":
        q = {"kind": "red", "limit": f"{BUFFER_PKTS}pkt", "min_th": f"{BUFFER_PKTS // 5}pkt",
             "max_th": f"{3 * (BUFFER_PKTS // 5)}pkt", "avpkt": f"{PKT_BYTES}B", "max_p": 0.1,
             "w_q": float(1 - np.exp(-1 / (RATE_BPS / 8 / PKT_BYTES))), "gentle": True, "adaptive": True, "ecn": False}
    return {
        "run": {"duration": f"{duration_s:g}s"},
        "topology": {"kind": "dumbbell",
                     "bottleneck": {"down": f"{RATE_BPS / 1e6:g}Mbit", "up": f"{RATE_BPS / 1e6:g}Mbit",
                                    "delay": f"{RTT_S / 2 * 1e3:g}ms", "queue": q}},
        "flows": [
            {"name": "tcp", "count": N_TCP, "start_every": "250ms", "transport": {"kind": "tcp", "cc": "reno"},
             "app": {"kind": "bulk"}},
            {"name": "noise", "count": N_NOISE, "transport": {"kind": "udp"},
             "app": {"kind": "onoff", "size": f"{PKT_BYTES}B",
                     "peak_rate": f"{2 * NOISE_SHARE * RATE_BPS / N_NOISE / 1e3:g}kbit",
                     "on": {"dist": "exponential", "mean": "500ms"}, "off": {"dist": "exponential", "mean": "500ms"}}},
            {"name": "probe", "transport": {"kind": "udp"}, "start": "1s",
             "app": {"kind": "cbr", "size": PROBE_SIZE, "interval": f"{1e3 / PROBE_RATE:g}ms"}},
        ],
    }


def analyse(run, backend: str, queue: str, seed: int, warmup_s: float = 5.0) -> list[dict[str, Any]]:
    """Burstiness of each probe's losses and of the link's, as ``ccbench probe analyse``."""
    from ccbench.analysis import loss_burstiness
    from ccbench.analysis._common import AnalysisError

    d = run.drops
    d = d[(d["link"].astype(str) == "bottleneck_down") & (d["kind"].astype(str) == "drop") & (d["t"] >= warmup_s)]
    fl = run.flows.assign(flow=run.flows["flow"].astype(str))
    rows = []
    for what in ("probe", "link"):
        sel = d if what == "link" else d[d["flow"].astype(str) == what]
        row: dict[str, Any] = {"backend": backend, "queue": queue, "seed": seed, "losses": what, "n_losses": len(sel)}
        if what != "link":
            f = fl[fl["flow"] == what]
            row["loss_rate"] = float(f["loss_rate"].iloc[0]) if len(f) else float("nan")
        else:
            row["loss_rate"] = float("nan")
        try:
            lb = loss_burstiness(sel, RTT_S, label=f"{backend} {queue} {what}")
            row.update(within_1pct=lb.frac_within[0.01], within_1rtt=lb.frac_within[1.0],
                       poisson_1pct=lb.poisson_within[0.01], poisson_1rtt=lb.poisson_within[1.0])
            row["_lb"] = lb
        except AnalysisError:
            row.update(within_1pct=np.nan, within_1rtt=np.nan, poisson_1pct=np.nan, poisson_1rtt=np.nan)
        rows.append(row)
    tcp = fl[fl["flow"].str.startswith("tcp")]
    for r in rows:
        r["tcp_goodput_mbps"] = float(tcp["goodput_bps"].sum()) / 1e6
    return rows


def _emu_problem() -> Optional[str]:
    from ccbench.emu import system

    try:
        system.require()
    except system.EmulationError as e:  # names what is missing (root, /dev/net/tun, ccemu, ...)
        return str(e)
    return None


def run(full: bool = False, out: Optional[Path] = None, progress: Optional[Callable[[int, int], None]] = None,
        emulator: bool = True) -> pd.DataFrame:
    """Simulator (and, when the machine can, emulator) runs; returns the burstiness table
    (one row per backend, queue and loss trace: probe, link)."""
    import ccbench
    from ccbench.scenario import Scenario

    size = FULL if full else REDUCED
    t0 = time.perf_counter()
    problem = _emu_problem() if emulator else "emulator part not requested"
    jobs = [("sim", q, s) for q in QUEUES for s in size["sim_seeds"]]
    if problem is None:
        jobs += [("emu", q, s) for q in QUEUES for s in size["emu_seeds"]]
    rows: list[dict] = []
    for k, (backend, q, s) in enumerate(jobs):
        scn = Scenario.from_dict(scenario_dict(q, size["duration_s"]))
        if backend == "sim":
            r = ccbench.simulate(scn, seed=s)
        else:
            from ccbench.emu.runner import EmulationError, emulate

            try:
                r = emulate(scn, seed=s)
            except EmulationError as e:  # e.g. a loaded machine: the run is lost, the study goes on
                problem = f"emulator run {q} seed {s} failed: {e}"
                continue
            timing = r.meta.get("emu", {}).get("timing", {})
            rows_before = len(rows)
            rows += analyse(r, backend, q, s)
            for row in rows[rows_before:]:
                row["emu_timing"] = str(timing)[:120]
            if progress:
                progress(k + 1, len(jobs))
            continue
        rows += analyse(r, backend, q, s)
        if progress:
            progress(k + 1, len(jobs))
    runs = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
    table = summarize(runs, problem)
    table.attrs["wall_s"] = time.perf_counter() - t0
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "wei_probe.csv", index=False)
        runs.to_csv(out / "wei_probe_runs.csv", index=False)
        _plot(rows, out / "wei_probe.png")
        (out / "choices.txt").write_text(
            f"size: {'full' if full else 'reduced'} {size}\nwall time: {table.attrs['wall_s']:.1f} s\n"
            f"path: {RATE_BPS / 1e6:g} Mbit/s, RTT {RTT_S * 1e3:g} ms, buffer {BUFFER_PKTS} pkt, {N_TCP} Reno + "
            f"{N_NOISE} UDP on/off noise ({NOISE_SHARE:.0%}) + 1 smooth probe ({PROBE_SIZE}, {PROBE_RATE:g} pkt/s)\n"
            + (f"emulator: skipped: {problem}\n" if problem else "emulator: ran\n"))
    return table


def summarize(runs: pd.DataFrame, emu_problem: Optional[str] = None) -> pd.DataFrame:
    """Mean over seeds per backend, queue and trace, with the thesis's reference numbers."""
    rows = []
    for (b, q, w), g in runs.groupby(["backend", "queue", "losses"], sort=False):
        o1, p1 = float(g["within_1pct"].mean()), float(g["poisson_1pct"].mean())
        rows.append({"backend": b, "queue": q, "losses": w, "n_losses": float(g["n_losses"].mean()),
                     "loss_rate": float(g["loss_rate"].mean()),
                     "within_1pct": o1, "poisson_1pct": p1, "within_1rtt": float(g["within_1rtt"].mean()),
                     "poisson_1rtt": float(g["poisson_1rtt"].mean()),
                     "x_poisson_1pct": o1 / p1 if p1 > 0 else float("nan"),
                     "paper_planetlab_1pct": PAPER["planetlab"][0.01],
                     "paper_planetlab_1rtt": PAPER["planetlab"][1.0], "runs": int(len(g)), "note": ""})
    if emu_problem is not None:
        rows.append({"backend": "emu", "queue": "-", "losses": "-", "runs": 0, "note": f"skipped: {emu_problem}"})
    return pd.DataFrame(rows)


def _plot(rows: list[dict], path: Path) -> None:
    from ccbench.analysis import plot_loss_burstiness

    items, seen = [], set()
    for r in rows:
        key = (r["backend"], r["queue"], r["losses"])
        if "_lb" in r and key not in seen:
            seen.add(key)
            items.append(r["_lb"])
    if items:
        plot_loss_burstiness(items, path)
