"""The kernel under two traffic sources (issue 24 §6): where the emulator's built-in
probe and iperf3 (``--traffic-source``) give different kernel numbers.

``compare_sources(base, other)`` takes two fidelity runs tables, keeps each one's kernel
(``emu``) rows and judges ``other`` against ``base`` with the very targets and rule the
simulator is judged by (:func:`~ccbench.fidelity.compare.compare`: within the target of
the base mean, or within the base's own range over repetitions), so "differ" means what
"misses" means for the simulator. The slow-start exit cwnd has no issue-24 target; it is
judged here against 25 % (the retransmit target's share), as the HyStart exit the issue
names is where the sources were seen to part.
"""

from __future__ import annotations

import pandas as pd

from .compare import Target, compare, rank_exchangeable

__all__ = ["compare_sources", "SOURCE_METRICS"]

#: the metrics compared (goodput, srtt p50/p95, retransmits, slow-start exit, and the rest for reading)
SOURCE_METRICS = ("goodput_bps", "rtt_p50_s", "rtt_p95_s", "retrans_pkts", "ss_exit_cwnd", "ss_exit_s", "cwnd_reductions",
                  "drops", "first_loss_s", "queue_p50_pkts", "queue_p95_pkts", "jain")
SS_EXIT_TARGET = Target(rel=0.25)


def _source(runs: pd.DataFrame) -> str:
    s = runs.get("traffic_source")
    vals = sorted({str(v) for v in s.dropna()} - {""}) if s is not None else []
    return "+".join(vals) or "ccemu"  # tables written before the column existed ran the built-in source


def compare_sources(base: pd.DataFrame, other: pd.DataFrame, durations: dict[str, float],
                    exchangeable: frozenset[str] = frozenset()) -> pd.DataFrame:
    """One row per (scenario, flow, metric) run with both sources: ``base_mean`` (and its
    min/max), ``other_mean``, ``diff`` = other / base - 1, ``target``, ``differs`` (True
    where ``other`` misses the target around ``base``), ``timing_ok`` of both. Flows of
    the ``exchangeable`` scenarios are compared by goodput rank (``top1``..), as the
    simulator's are (:func:`~ccbench.fidelity.compare.rank_exchangeable`)."""
    a = base[base["backend"] == "emu"].copy()
    b = other[other["backend"] == "emu"].copy()
    b = b[b["scenario"].isin(a["scenario"].unique())]
    timing = b.groupby("scenario")["timing_ok"].apply(lambda v: bool(v.fillna(True).astype(bool).all())) \
        if "timing_ok" in b else pd.Series(dtype=bool)
    b["backend"] = "sim"  # compare() judges its "sim" side against its "emu" side
    cols = [c for c in SOURCE_METRICS if c in a.columns and c in b.columns]
    cmp = compare(rank_exchangeable(pd.concat([a, b], ignore_index=True), set(exchangeable)), cols, durations)
    ss = cmp["metric"] == "ss_exit_cwnd"
    for i in cmp.index[ss]:
        r = cmp.loc[i]
        ok = SS_EXIT_TARGET.passes(r["sim_mean"], r["kernel_mean"], 30.0) or bool(r["kernel_min"] <= r["sim_mean"] <= r["kernel_max"])
        cmp.loc[i, ["target", "ok"]] = [SS_EXIT_TARGET.text(), ok]
    cmp["timing_ok"] = cmp["timing_ok"].astype(bool) & cmp["scenario"].map(timing).fillna(True).astype(bool)
    out = cmp.rename(columns={"kernel_mean": "base_mean", "kernel_min": "base_min", "kernel_max": "base_max",
                              "kernel_n": "base_n", "sim_mean": "other_mean", "sim_n": "other_n", "error": "diff"})
    out["differs"] = pd.Series([None if v is None or pd.isna(v) else not bool(v) for v in out["ok"]], index=out.index, dtype=object)
    out.insert(3, "base_source", _source(a))
    out.insert(4, "other_source", _source(other[other["backend"] == "emu"]))
    return out[["scenario", "flow", "metric", "base_source", "other_source", "base_mean", "base_min", "base_max", "base_n",
                "other_mean", "other_n", "diff", "target", "differs", "timing_ok"]]
