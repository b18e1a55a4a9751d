"""Wei thesis Table 3.1 and the ACK clock's phase: the ``phase`` part of :mod:`ccbench.studies.wei_ch3`.

Table 3.1 (bursty TCP under DropTail: λ 0.20 / 0.25 / 0.23 for Reno / HS-TCP / S-TCP) comes
from ns-2 runs in which every flow has the same RTT, the receiver acknowledges every packet
(NS-2 TCP-Linux's ``Agent/TCPSink/Sack1``) and nothing varies the hosts' timing. Each
ACK-clocked packet then reaches the full bottleneck queue at one fixed offset after a
departure (the RTT modulo the 120 µs packet time): the same offset for every flow, run after
run, a phase effect (Floyd & Jacobson, "On traffic phase effects in packet-switched
gateways", 1992). A departure frees one slot; whether the flow's next packet takes it, or a
noise packet arriving in between does (and the TCP packet is dropped), depends on that offset.
Where TCP wins the slot, the noise absorbs most drops, few TCP flows lose in an event and λ
is low; where it loses, λ is high.

The part sweeps the offset over one packet time by adding 0-55 µs to the bottleneck's one-way
delay (0-110 µs of RTT) on the wei-sync path (16 flows, DropTail), with an ACK per packet and
with Linux's delayed ACKs (which move the offsets ACK by ACK), and measures λ and the noise
flows' share of the drops. ns-2 itself, run on the same path with the same counting
(:mod:`ccbench.studies.wei_ns2`, recorded in ``tests/data/ns2/wei_sync_ns2.csv``), gives the
thesis's values only with an ACK per packet and equal access delays; spreading the access
delays over 1 ms (or delaying ACKs) lifts them to ours.

Reduced: Reno, seeds 1-2, 400 s (40 s warm-up): 48 runs, about a minute. ``--full``: Reno,
HS-TCP and S-TCP, seeds 1-4, 600 s: 288 runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import wei_sync as W

PARTS = ("phase",)
#: the bottleneck's packet time (1500 B at 100 Mbit/s): the period of the phase
PACKET_TIME_US = W.PKT_BYTES * 8 / W.CAPACITY_BPS * 1e6
#: one-way delay added to the bottleneck; the RTT grows by twice as much, so 0-55 µs moves
#: the ACK clock's offset through one whole packet time in 10 µs steps
OFFSETS_US = tuple(range(0, 60, 5))
RECEIVERS = ("ack", "delack")
RECEIVER_LABELS = {"ack": "an ACK per packet (ns-2's Sack1 sink)", "delack": "delayed ACKs (Linux)"}
N_FLOWS = 16


@dataclass(frozen=True)
class Size:
    algorithms: tuple[str, ...]
    seeds: tuple[int, ...]
    duration_s: float
    warmup_s: float


REDUCED = Size(("reno",), (1, 2), 400.0, 40.0)
FULL = Size(W.ALGORITHMS, (1, 2, 3, 4), 600.0, 60.0)


def jobs(full: bool) -> list[tuple]:
    size = FULL if full else REDUCED
    return [("phase", cc, rcv, off, s, size.duration_s, size.warmup_s)
            for cc in size.algorithms for rcv in RECEIVERS for off in OFFSETS_US for s in size.seeds]


def scenario(cc: str, receiver: str, offset_us: float, duration_s: float) -> dict:
    """The wei-sync DropTail path with ``offset_us`` more one-way bottleneck delay and the
    given receiver."""
    if receiver not in RECEIVERS:
        raise ValueError(f"receiver {receiver!r} is not one of {RECEIVERS}")
    d = W.scenario_dict(cc, "droptail", N_FLOWS, duration_s)
    d["flows"][0]["transport"]["delayed_ack"] = receiver == "delack"
    d["topology"]["bottleneck"]["delay"] = f"{W.RTT_S / 2 * 1e6 + offset_us:g}us"
    return d


def measure(part: str, cc: str, receiver: str, offset_us: float, seed: int, duration_s: float,
            warmup_s: float) -> dict[str, Any]:
    out = W.measure(cc, "droptail", N_FLOWS, seed, duration_s, warmup_s,
                    scenario=scenario(cc, receiver, offset_us, duration_s))
    out.update(part=part, receiver=receiver, offset_us=float(offset_us), extra_rtt_us=2.0 * offset_us)
    return out


# ---- the table rows --------------------------------------------------------------------

def _per_phase(g: pd.DataFrame, col: str) -> pd.Series:
    return g.groupby("extra_rtt_us")[col].mean()


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """λ and the noise's share of the drops per algorithm, receiver and phase (mean over seeds)."""
    ph = runs[runs["part"] == "phase"]
    if ph.empty:
        return pd.DataFrame()
    return (ph.groupby(["algorithm", "receiver", "extra_rtt_us"], sort=False)[["sync", "noise_drop_share", "events"]]
            .mean().reset_index())


def claims(runs: pd.DataFrame) -> list[dict]:
    from .wei_ch3_table import _row

    ph = runs[runs["part"] == "phase"] if "part" in runs else runs.iloc[0:0]
    rows: list[dict] = []
    span = f"extra RTT 0-{2 * OFFSETS_US[-1]} µs (packet time {PACKET_TIME_US:.0f} µs)"
    for cc in dict.fromkeys(ph["algorithm"]):
        paper = W.PAPER[(cc, "droptail")]
        label = W.LABELS.get(cc, cc)
        for rcv in RECEIVERS:
            g = ph[(ph["algorithm"] == cc) & (ph["receiver"] == rcv)]
            if g.empty:
                continue
            lam = _per_phase(g, "sync")
            share = _per_phase(g, "noise_drop_share")
            lo, hi = float(lam.min()), float(lam.max())
            at0 = float(lam.iloc[0])
            inside = lo <= paper <= hi
            rows.append(_row(
                "Table 3.1 (phase)", f"{label} λ, lowest over the ACK clock's phase, {RECEIVER_LABELS[rcv]}",
                f"16 flows, DropTail, {span}", lo, paper,
                agrees=inside if rcv == "ack" else None,
                note=f"range {lo:.3f}-{hi:.3f} over {len(lam)} phases, mean {float(lam.mean()):.3f}; the study's "
                     f"path (+0 µs) {at0:.3f}; noise's share of the drops {float(share.min()):.2f}-"
                     f"{float(share.max()):.2f}" + ("; check: the thesis's λ lies inside the range" if rcv == "ack"
                                                    else "")))
        g = ph[(ph["algorithm"] == cc) & (ph["receiver"] == "ack")]
        if len(g) >= 3:
            lam, share = _per_phase(g, "sync"), _per_phase(g, "noise_drop_share")
            r = float(np.corrcoef(lam.to_numpy(), share.to_numpy())[0, 1]) if lam.std() > 0 else float("nan")
            rows.append(_row(
                "Table 3.1 (phase)", f"{label}: correlation of λ with the noise's share of the drops",
                f"an ACK per packet, {span}", r, unit="r", agrees=math.isfinite(r) and r < -0.5,
                note="check: where the noise absorbs the drops, fewer TCP flows lose per event "
                     "(the phase decides who takes the slot a departure frees)"))
        d = ph[(ph["algorithm"] == cc) & (ph["receiver"] == "delack")]
        if len(g) and len(d):
            lo_ack, lo_del = float(_per_phase(g, "sync").min()), float(_per_phase(d, "sync").min())
            rows.append(_row(
                "Table 3.1 (phase)", f"{label}: delayed ACKs lift the phase-locked λ",
                f"lowest λ over the phase, {span}", lo_del - lo_ack, unit="Δλ", agrees=lo_del > lo_ack,
                note=f"lowest λ {lo_ack:.3f} (an ACK per packet) vs {lo_del:.3f} (delayed ACKs)"))
    return rows


# ---- the figure ------------------------------------------------------------------------

def figure(runs: pd.DataFrame, path: Path) -> None:
    """λ (left) and the noise's share of the drops (right) against the extra RTT, per
    algorithm and receiver; the thesis's Table 3.1 values dashed."""
    from ccbench.plots import new_figure

    s = summary(runs)
    if s.empty:
        return
    fig, (a1, a2) = new_figure(1, 2, figsize=(10, 3.8))
    colors = {"reno": "C0", "highspeed": "C1", "scalable": "C2"}
    for (cc, rcv), g in s.groupby(["algorithm", "receiver"], sort=False):
        style = dict(color=colors.get(cc, "k"), ls="-" if rcv == "ack" else ":", marker="o" if rcv == "ack" else "s",
                     ms=3, label=f"{W.LABELS.get(cc, cc)}, {'ACK per packet' if rcv == 'ack' else 'delayed ACKs'}")
        a1.plot(g["extra_rtt_us"], g["sync"], **style)
        a2.plot(g["extra_rtt_us"], g["noise_drop_share"], **style)
    for cc in dict.fromkeys(s["algorithm"]):
        a1.axhline(W.PAPER[(cc, "droptail")], color=colors.get(cc, "k"), ls="--", lw=0.8, alpha=0.7)
    a1.set_xlabel(f"RTT added (µs; packet time {PACKET_TIME_US:.0f} µs)")
    a1.set_ylabel("loss synchronisation rate λ")
    a1.set_ylim(0, 0.8)
    a1.set_title("λ against the ACK clock's phase (dashed: Table 3.1)", fontsize="medium")
    a2.set_xlabel(f"RTT added (µs; packet time {PACKET_TIME_US:.0f} µs)")
    a2.set_ylabel("noise flows' share of the drops")
    a2.set_ylim(0, 1)
    a2.set_title("who absorbs the drops (noise: 10 % of the traffic)", fontsize="medium")
    for a in (a1, a2):
        a.grid(True, alpha=0.3)
    a1.legend(fontsize="x-small", loc="upper right")
    fig.savefig(path, dpi=120)


# ---- the ns-2 record -------------------------------------------------------------------

NS2_RECORD = Path(__file__).resolve().parents[3] / "tests" / "data" / "ns2" / "wei_sync_ns2.csv"


def ns2_summary(path: Path = NS2_RECORD) -> pd.DataFrame:
    """The recorded ns-2 runs (scripts/wei_ns2_sync.py) per algorithm, receiver and access-delay
    spread: mean, lowest and highest λ over the seeds, the noise's share of drops, Jain's index."""
    if not Path(path).is_file():
        return pd.DataFrame()
    d = pd.read_csv(path)
    g = d.groupby(["algorithm", "receiver", "spread_ms"], sort=False)
    return pd.DataFrame({
        "sync": g["sync"].mean(), "sync_min": g["sync"].min(), "sync_max": g["sync"].max(),
        "noise_drop_share": g["noise_drop_share"].mean(), "jain": g["jain"].mean(), "runs": g.size(),
    }).reset_index()
