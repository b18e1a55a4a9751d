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

def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """λ and the noise's share of the drops per algorithm, receiver and phase (mean over
    seeds; phases in increasing order within each algorithm and receiver)."""
    ph = runs[runs["part"] == "phase"] if "part" in runs else runs.iloc[0:0]
    if ph.empty:
        return pd.DataFrame()
    return (ph.groupby(["algorithm", "receiver", "extra_rtt_us"], sort=False)[["sync", "noise_drop_share", "events"]]
            .mean().reset_index().sort_values("extra_rtt_us", kind="stable").reset_index(drop=True))


def _of(s: pd.DataFrame, cc: str, receiver: str) -> pd.DataFrame:
    return s[(s["algorithm"] == cc) & (s["receiver"] == receiver)]


def _corr(g: pd.DataFrame) -> float:
    """Correlation over the phases of λ with the noise's share of the drops (NaN with
    fewer than 3 phases or a flat λ)."""
    if len(g) < 3 or g["sync"].std() == 0:
        return float("nan")
    return float(np.corrcoef(g["sync"].to_numpy(), g["noise_drop_share"].to_numpy())[0, 1])


def claims(runs: pd.DataFrame) -> list[dict]:
    from .wei_ch3_table import REL_TOL, _row

    s = summary(runs)
    rows: list[dict] = []
    if s.empty:
        return rows
    span = f"extra RTT 0-{2 * OFFSETS_US[-1]} µs (packet time {PACKET_TIME_US:.0f} µs)"
    for cc in dict.fromkeys(s["algorithm"]):
        paper = W.PAPER[(cc, "droptail")]
        label = W.LABELS.get(cc, cc)
        for rcv in RECEIVERS:
            g = _of(s, cc, rcv)
            if g.empty:
                continue
            lam, share = g["sync"], g["noise_drop_share"]
            lo, hi = float(lam.min()), float(lam.max())
            at0 = float(lam.iloc[0])
            # the page's rule (REL_TOL): the thesis's value inside the range, or the lowest within 25 %
            inside = lo <= paper * (1 + REL_TOL) and paper <= hi
            rows.append(_row(
                "Table 3.1 (phase)", f"{label} λ, lowest over the ACK clock's phase, {RECEIVER_LABELS[rcv]}",
                f"16 flows, DropTail, {span}", lo, paper if rcv == "ack" else float("nan"),
                agrees=inside if rcv == "ack" else None,
                note=f"range {lo:.3f}-{hi:.3f} over {len(lam)} phases, mean {float(lam.mean()):.3f}; the study's "
                     f"path (+0 µs) {at0:.3f}; noise's share of the drops {float(share.min()):.2f}-"
                     f"{float(share.max()):.2f}" + ("; check: the thesis's λ lies inside the range (or the lowest within 25 %)" if rcv == "ack"
                                                    else "")))
        g, d = _of(s, cc, "ack"), _of(s, cc, "delack")
        if len(g) >= 3:
            r = _corr(g)
            rows.append(_row(
                "Table 3.1 (phase)", f"{label}: correlation of λ with the noise's share of the drops",
                f"an ACK per packet, {span}", r, unit="r", agrees=math.isfinite(r) and r < -0.5,
                note="check: where the noise absorbs the drops, fewer TCP flows lose per event "
                     "(the phase decides who takes the slot a departure frees)"))
        if len(g) and len(d):
            lo_ack, lo_del = float(g["sync"].min()), float(d["sync"].min())
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
    """The recorded ns-2 runs (scripts/wei_ns2_sync.py) per queue, algorithm, receiver and access-delay
    spread: mean, lowest and highest λ over the seeds, the noise's share of drops, Jain's index."""
    if not Path(path).is_file():
        return pd.DataFrame()
    d = pd.read_csv(path)
    g = d.groupby(["queue", "algorithm", "receiver", "spread_ms"], sort=False)
    return pd.DataFrame({
        "sync": g["sync"].mean(), "sync_min": g["sync"].min(), "sync_max": g["sync"].max(),
        "noise_drop_share": g["noise_drop_share"].mean(), "jain": g["jain"].mean(), "runs": g.size(),
    }).reset_index()


# ---- the notes' paragraph --------------------------------------------------------------

def _fmt_ns2(s: pd.DataFrame, cc: str, receiver: str, spread: float, queue: str = "droptail",
             with_range: bool = True) -> str:
    """One cell of the ns-2 record: mean λ over the seeds (and their range), or "–"."""
    r = s[(s["queue"] == queue) & (s["algorithm"] == cc) & (s["receiver"] == receiver) & (s["spread_ms"] == spread)]
    if r.empty:
        return "–"
    r = r.iloc[0]
    return f"{r['sync']:.3f}" + (f" ({r['sync_min']:.2f}-{r['sync_max']:.2f})" if with_range else "")


#: the part's HS-TCP / S-TCP rows (only in ``--full``), measured once with seeds 1-2 and 400 s runs
#: (the reduced size's length); fixed text because the recorded table is the reduced one
HS_S_SWEEP = (" HS-TCP and S-TCP (the `--full` rows; measured once with seeds 1-2, 400 s): an ACK per packet "
              "0.28-0.63 and 0.20-0.58 (thesis 0.25 and 0.23), delayed ACKs 0.43-0.59 and 0.48-0.57; r = -0.98 "
              "for both.")


def _ours_sentence(runs: pd.DataFrame | None) -> str:
    """Our recorded phase sweep in a sentence (Reno: the part's reduced size)."""
    sm = summary(runs) if runs is not None else pd.DataFrame()
    if sm.empty:
        return ""
    ack, dl = _of(sm, "reno", "ack"), _of(sm, "reno", "delack")
    if ack.empty or dl.empty:
        return ""
    r = _corr(ack)
    return (f" In our simulator (`ccbench reproduce wei-ch3`, part `phase`, figure `wei_ch3_phase.png`) the same "
            f"sweep gives Reno, an ACK per packet: {ack['sync'].min():.3f}-{ack['sync'].max():.3f} over "
            f"{len(ack)} phases (the study's path, +0 µs: {float(ack['sync'].iloc[0]):.3f}); delayed ACKs: "
            f"{dl['sync'].min():.3f}-{dl['sync'].max():.3f}. λ follows the noise's share of the drops "
            f"(r = {r:.2f}).{HS_S_SWEEP}")


def note(results: Path) -> str:
    """The DropTail resolution for docs/REPRODUCTIONS.md: the ns-2 record beside the recorded
    phase rows of wei-ch3."""
    from .recorded import read_recorded

    s = ns2_summary()
    out = ["* **DropTail, third round: the ACK clock's phase (resolved).** ns-2.35, the thesis's simulator, ships "
           "NS-2 TCP-Linux, so we ran the thesis's setup in it (`scripts/wei_ns2_sync.py`, "
           "`ccbench.studies.wei_ns2`: the wei-sync path, 16 flows, 400 s, seeds 1-4, the same counting; "
           "recorded in `tests/data/ns2/wei_sync_ns2.csv`). λ, mean (lowest-highest) over the seeds:\n\n"
           "  | ns-2 receiver, access delays | Reno | HS-TCP | S-TCP |\n  |---|---|---|---|\n"]
    if not s.empty:
        for rcv, sp, label in (("ack", 0.0, "an ACK per packet (`Sack1`), equal"),
                               ("ack", 1.0, "an ACK per packet, U(0, 1 ms)"),
                               ("delack", 0.0, "delayed ACKs (`Sack1/DelAck`), equal"),
                               ("delack", 1.0, "delayed ACKs, U(0, 1 ms)")):
            cells = " | ".join(_fmt_ns2(s, cc, rcv, sp) for cc in W.ALGORITHMS)
            out.append(f"  | {label} | {cells} |\n")
        thesis = " | ".join(f"{W.PAPER[(cc, 'droptail')]:.3f}" for cc in W.ALGORITHMS)
        out.append(f"  | Table 3.1 | {thesis} |\n\n")
    else:
        out.append("  (the ns-2 record is not in this checkout)\n\n")
    ours = _ours_sentence(read_recorded(Path(results) / "reproduce-wei-ch3" / "wei_ch3_runs.csv"))
    out.append(
        "  ns-2 gives Table 3.1, for all three algorithms, only with an ACK per packet and equal access delays: "
        "the sink the TCP-Linux examples use, and the thesis's dumbbell, where nothing varies a host's timing. "
        "Then every ACK-clocked packet reaches the full bottleneck queue at the same offset after a departure "
        "(the RTT modulo the 120 µs packet time), run after run: a phase effect (Floyd & Jacobson 1992). A "
        "departure frees one slot; at some offsets the flow's next packet takes it before any noise packet can, "
        "the noise absorbs the drops (ns-2: 45 % of the drops for 10 % of the traffic) and few flows lose per "
        "event. Spreading the access delays over 1 ms, or delaying ACKs as Linux does, varies the offsets and "
        "brings ns-2 to our values (Reno 0.37-0.50 against our 0.42). The thesis itself randomises its pacing "
        "'to avoid phase effects' (Algorithm 4) but not its bursty senders." + ours + " The thesis's 0.20 lies "
        "inside that band and ours (0.42) at the band's top: with Linux's delayed ACKs no offset gets below "
        "0.41. With an ACK per packet ns-2's HS-TCP and S-TCP flows also stay far apart from start-up (Jain's "
        "index 0.23 and 0.10 over the 360 s; 0.96-0.98 with delayed ACKs), which lowers their λ further. "
        "**So Table 3.1's DropTail row is a property of a phase-locked ns-2 setup, not of bursty TCP in "
        "general**; the study keeps Linux's delayed ACKs and equal RTTs (λ 0.42), and the phase part shows "
        "the thesis's regime beside it. The earlier rounds' 'unexplained' residual is this mechanism.\n\n"
        "  ![λ and the noise's share of the drops against the RTT added, Reno, 16 flows]"
        "(figures/wei_ch3_phase.png)\n\n")
    out.append(_red_note(s))
    return "".join(out)


def _red_note(s: pd.DataFrame) -> str:
    """The RED row against ns-2's own RED (the record's ``red*``/``ared`` queues)."""
    if s.empty or not (s["queue"] == "red").any():
        return ""

    def row(q: str) -> str:
        return " / ".join(_fmt_ns2(s, cc, "ack", 0.0, q, with_range=False) for cc in W.ALGORITHMS)

    thesis = " / ".join(f"{W.PAPER[(cc, 'red')]:.2f}" for cc in W.ALGORITHMS)
    parts = [f"* **RED in ns-2 (the same record, an ACK per packet, equal delays; Reno / HS-TCP / S-TCP).** "
             f"ns-2.35's RED as it comes (`Queue/RED` defaults: `bytes_` and `queue_in_bytes_` on, so the "
             f"thresholds 62.5 / 187.5 x `mean_pktsize_` 500 B are 21 / 63 full-size packets, the study's; "
             f"`q_weight_` -1 = 1.33e-5; max_p 0.1 fixed and, in byte mode, scaled by size / 500 B; `wait_` on; the "
             f"1680-packet limit is 1680 x 500 B = 560 full packets) gives λ {row('red')} against Table 3.2's "
             f"{thesis}: the thesis's order and near its values. With `adaptive_ 1` (ns-2's ARED, max_p adapted) it "
             f"gives {row('ared')}, far below. So the thesis's 'self-adaptive' RED is ns-2's automatic configuration "
             f"with a fixed max_p (the first round's `red-ns2-fixed` reading)."]
    extra = []
    if (s["queue"] == "red-nowait").any():
        extra.append(f"without `wait_` (drops no longer kept at least 1/p packets apart) {row('red-nowait')}")
    if (s["queue"] == "red-packets").any():
        extra.append(f"in packet mode (`bytes_ 0`: max_p not tripled for 1500 B packets) {row('red-packets')}")
    if extra:
        parts.append(" One default changed at a time moves it: " + "; ".join(extra) + ".")
    parts.append(" Under RED, λ is set by how the queue spaces its early drops, which is where ns-2's RED and "
                 "Linux's (`sch_red`, ours: a uniform random gap between drops, packet mode) differ; with ns-2's "
                 "parameters (max_p tripled as byte mode does, limit 560 packets) and an ACK per packet ours gives "
                 "0.57 / 0.61 / 0.79 and drops 3-4 times as many packets per second as ns-2 "
                 "(`scripts/wei_sync_hypotheses.py red-ns2-defaults hs-red-ns2-defaults s-red-ns2-defaults`, "
                 "seeds 1-4, 600 s). The RED row therefore differs because the two REDs differ, not because of TCP; the "
                 "study keeps the kernel's RED (the emulator runs the same code), and the ns-2 record stands "
                 "beside it for the thesis's.\n")
    return "".join(parts)
