"""Draws docs/figures/cellular_trace.png for the README: a CUBIC download over the
cellular-like Mahimahi trace (examples/cellular_trace.toml) against the capacity the
trace itself offers, bin by bin, and the queueing delay a VoIP-like call sees.

    python scripts/readme_trace_figure.py [--out docs/figures/cellular_trace.png]

The capacity of a bin is the trace's delivery opportunities in it x 1500 B (Mahimahi's
packet-delivery semantics): a greedy flow can use no more, and unused opportunities
are lost, so the gap between the two curves is what TCP left on the table.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np

import ccbench
from ccbench.analysis.goodput import delivered_rate_series
from ccbench.plots import new_figure, save_figure

ROOT = Path(__file__).resolve().parents[1]
SCENARIO = ROOT / "examples" / "cellular_trace.toml"
TRACE = ROOT / "examples" / "traces" / "cellular.down"
BIN_S = 0.5
MTU_BYTES = 1500
MSS_BYTES = 1448  # the scenario's TCP payload per segment (Linux's default with timestamps)


def trace_capacity_bps(path: Path, duration_s: float, bin_s: float) -> np.ndarray:
    """Bit rate the trace offers per bin: opportunities (repeating with the last
    timestamp as period) x 1500 B x 8 / bin width."""
    ms = np.loadtxt(path, dtype=np.int64, ndmin=1)
    period = int(ms[-1])
    reps = int(np.ceil(duration_s * 1000 / period))
    t_s = (ms[None, :] + period * np.arange(reps)[:, None]).ravel() / 1000.0
    counts, _ = np.histogram(t_s, bins=np.arange(0.0, duration_s + bin_s / 2, bin_s))
    return counts * MTU_BYTES * 8.0 / bin_s


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "figures" / "cellular_trace.png")
    args = ap.parse_args()

    os.chdir(ROOT)  # the scenario names its trace files relative to the repository
    run = ccbench.simulate(SCENARIO)
    duration_s = float(run.cwnd["t"].max())
    got = delivered_rate_series(run.cwnd, BIN_S, MSS_BYTES, "download", t_end_s=duration_s)["download"]
    cap = trace_capacity_bps(TRACE, duration_s, BIN_S)[: len(got)]
    call = run.packets[run.packets["flow"] == "call.down"]
    delay_ms = (call["t_arrive"] - call["t_write"]).to_numpy() * 1e3

    fig, (top, bottom) = new_figure(2, 1, figsize=(7.0, 5.0), sharex=True)
    top.step(got.index, cap / 1e6, where="post", color="0.6", label="trace capacity")
    top.step(got.index, got.to_numpy() / 1e6, where="post", color="C0", label="CUBIC download")
    top.set_ylabel("Mbit/s")
    top.legend(loc="upper right", fontsize="small")
    top.set_title("CUBIC over examples/traces/cellular.down (0.5 s bins)")
    bottom.plot(call["t_write"], delay_ms, ".", ms=2, color="C1")
    bottom.set_ylabel("call one-way delay (ms)")
    bottom.set_xlabel("time (s)")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, args.out)
    share = float(got.sum() / cap.sum())
    print(f"wrote {args.out}: the download's goodput is {share:.1%} of the trace's capacity "
          f"(the call shares it; capacity counts 1500-byte opportunities, goodput 1448-byte payloads)")


if __name__ == "__main__":
    main()
