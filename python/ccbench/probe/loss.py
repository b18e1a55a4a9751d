"""Loss-process burstiness of any run (simulator, emulator or probe), with the RTT
that normalises its loss intervals chosen from the run itself."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from ccbench.run import Run

from .runner import ProbeError


def run_rtt(run: Run) -> float | dict[str, float]:
    """RTT used to normalise loss intervals: a probe run's ``meta["rtt_s"]`` (minimum
    RTT); otherwise each flow's median RTT (``flows.rtt_p50_s``), a mapping flow ->
    RTT over the flows that have one."""
    rtt = run.meta.get("rtt_s")
    if rtt is not None and math.isfinite(float(rtt)) and float(rtt) > 0:
        return float(rtt)
    if "rtt_p50_s" in run.flows.columns:
        m = {str(f): float(v) for f, v in zip(run.flows["flow"], run.flows["rtt_p50_s"])
             if v is not None and np.isfinite(v) and v > 0}
        if m:
            return m
    raise ProbeError("this run has no RTT estimate (no meta.rtt_s and no flows.rtt_p50_s): give one (--rtt)")


def loss_burstiness_of(run: Run | str | Path, rtt_s: float | None = None, thresholds_rtt=(0.01, 1.0), label: str = ""):
    """Loss-process burstiness (:func:`ccbench.analysis.loss_burstiness`) of the drops
    of any run (simulator, emulator or probe; a :class:`Run` or a run directory).

    With ``rtt_s`` the whole loss process is normalised by it. Otherwise a probe run
    uses its minimum RTT, and other runs use per-flow intervals, each normalised by the
    flow's median RTT (flows without one are left out)."""
    from ccbench.analysis import loss_burstiness

    if not isinstance(run, Run):
        run = Run.load(run)
    drops = run.drops
    if rtt_s is not None:
        return loss_burstiness(drops, float(rtt_s), thresholds_rtt=thresholds_rtt, label=label)
    rtt = run_rtt(run)
    if isinstance(rtt, float):
        return loss_burstiness(drops, rtt, thresholds_rtt=thresholds_rtt, label=label)
    keep = drops["flow"].astype(str).isin(list(rtt))
    return loss_burstiness(drops[keep.to_numpy()], rtt, thresholds_rtt=thresholds_rtt, per_flow=True, label=label)

