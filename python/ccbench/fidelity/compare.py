"""Kernel against simulator: mean and spread over repetitions, errors and targets (issue 24 §4).

``compare(runs)`` takes the per-run table (one row per scenario, backend, repetition and
flow, plus a ``(all)`` row per run for the aggregate) and returns one row per
(scenario, flow, metric): kernel mean, standard deviation, min and max over the
repetitions, simulator mean, ``error`` = simulator / kernel - 1, the target and ``ok``.

A metric passes when the simulator is within its target of the kernel mean *or* within
the kernel's own range over the repetitions (where the kernel's spread is wider than
the target, the target cannot mean more than that). Metrics without a target are
reported with ``ok`` empty. A kernel row measured with the emulator's timing off
(``timing_ok`` false in any repetition) has ``timing_ok`` false and is not judged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

__all__ = ["Target", "TARGETS", "compare", "worst_rows", "ALL_FLOWS", "rank_exchangeable"]

ALL_FLOWS = "(all)"


def rank_exchangeable(runs: pd.DataFrame, scenarios: set[str]) -> pd.DataFrame:
    """Flows of ``scenarios`` renamed by their goodput rank within their run (``top1`` the
    fastest). Where flows are exchangeable (same path, same start), a label such as
    ``bulk2`` names nothing both backends share: which flow ends up fastest is decided
    by start-up chance on the kernel and by the seed in the simulator. The k-th fastest
    flow of a kernel run against the k-th fastest of a simulator run compares what
    the issue asks of such a mix: how widely the flows' goodputs spread, and how each
    rank fares (its retransmits, srtt, reductions)."""
    if not scenarios or runs.empty:
        return runs
    runs = runs.copy()
    sel = runs["scenario"].isin(scenarios) & (runs["flow"] != ALL_FLOWS)
    if not sel.any():
        return runs
    part = runs[sel]
    order = part.groupby(["scenario", "backend", "rep"])["goodput_bps"].rank(method="first", ascending=False)
    runs.loc[sel, "flow"] = ["top" + str(int(k)) for k in order]
    return runs


@dataclass(frozen=True)
class Target:
    rel: Optional[float] = None  # |sim/kernel - 1| <= rel
    abs: Optional[float] = None  # or |sim - kernel| <= abs
    per_30s: bool = False  # abs scales with the run length (cwnd reductions: +-1 per 30 s)

    def text(self) -> str:
        parts = []
        if self.rel is not None:
            parts.append(f"{self.rel:.0%}")
        if self.abs is not None:
            parts.append(f"±{self.abs:g}" + ("/30s" if self.per_30s else ""))
        return " or ".join(parts)

    def passes(self, sim: float, kernel: float, duration_s: float) -> bool:
        if not (np.isfinite(sim) and np.isfinite(kernel)):
            return bool(np.isnan(sim) and np.isnan(kernel))
        if self.rel is not None and kernel != 0 and abs(sim / kernel - 1) <= self.rel:
            return True
        if self.abs is not None:
            lim = self.abs * (max(duration_s, 30.0) / 30.0 if self.per_30s else 1.0)
            return abs(sim - kernel) <= lim + 1e-12
        return self.rel is not None and kernel == 0 and sim == 0


#: issue 24 §4; the aggregate goodput (flow "(all)") has its own 2 %.
TARGETS: dict[str, Target] = {
    "goodput_bps": Target(rel=0.05),
    "rtt_p50_s": Target(rel=0.05),
    "rtt_p95_s": Target(rel=0.10),
    "retrans_pkts": Target(rel=0.25, abs=5),
    "cwnd_reductions": Target(abs=1, per_30s=True),
    "jain": Target(abs=0.03),
    "completion_s": Target(rel=0.10),
    "delay_p50_s": Target(rel=0.10),
    "delay_p95_s": Target(rel=0.10),
    "delay_p99_s": Target(rel=0.10),
}
AGGREGATE_TARGET = Target(rel=0.02)

COLUMNS = ["scenario", "flow", "metric", "kernel_mean", "kernel_std", "kernel_min", "kernel_max", "kernel_n",
           "sim_mean", "sim_std", "sim_n", "error", "target", "ok", "timing_ok"]


def _target(metric: str, flow: str) -> Optional[Target]:
    """Jain's index is a property of the run: judged once, on its "(all)" row."""
    if flow == ALL_FLOWS:
        return AGGREGATE_TARGET if metric == "goodput_bps" else TARGETS.get(metric) if metric == "jain" else None
    return None if metric == "jain" else TARGETS.get(metric)


def compare(runs: pd.DataFrame, metrics: list[str], durations: dict[str, float]) -> pd.DataFrame:
    """One row per (scenario, flow, metric) present on both backends (see the module doc)."""
    rows = []
    if runs.empty:
        return pd.DataFrame(columns=COLUMNS)
    for (scn, flow), g in runs.groupby(["scenario", "flow"], sort=False):
        k = g[g["backend"] == "emu"]
        s = g[g["backend"] == "sim"]
        if k.empty or s.empty:
            continue
        timing_ok = bool(k["timing_ok"].fillna(True).astype(bool).all()) if "timing_ok" in k else True
        for m in metrics:
            if m not in g:
                continue
            kv = k[m].astype(float).dropna()
            sv = s[m].astype(float).dropna()
            if kv.empty and sv.empty:
                continue
            km = float(kv.mean()) if len(kv) else float("nan")
            sm = float(sv.mean()) if len(sv) else float("nan")
            err = sm / km - 1 if np.isfinite(km) and km != 0 and np.isfinite(sm) else float("nan")
            tgt = _target(m, str(flow))
            ok: Optional[bool] = None
            if tgt is not None and timing_ok and len(kv):  # nothing measured on the kernel: not judged
                ok = tgt.passes(sm, km, durations.get(str(scn), 30.0))
                if not ok and len(kv) > 1 and np.isfinite(sm):
                    ok = bool(kv.min() <= sm <= kv.max())  # within the kernel's own spread
            rows.append({
                "scenario": scn, "flow": flow, "metric": m, "kernel_mean": km,
                "kernel_std": float(kv.std(ddof=1)) if len(kv) > 1 else float("nan"),
                "kernel_min": float(kv.min()) if len(kv) else float("nan"),
                "kernel_max": float(kv.max()) if len(kv) else float("nan"), "kernel_n": int(len(kv)),
                "sim_mean": sm, "sim_std": float(sv.std(ddof=1)) if len(sv) > 1 else float("nan"), "sim_n": int(len(sv)),
                "error": err, "target": tgt.text() if tgt else "", "ok": ok, "timing_ok": timing_ok,
            })
    return pd.DataFrame(rows, columns=COLUMNS)


def worst_rows(cmp: pd.DataFrame, n: int = 5) -> pd.DataFrame:
    """The ``n`` judged rows that miss their target by the most (largest |error|), one per
    scenario (ten flows of one scenario missing alike are one gap)."""
    if cmp.empty:
        return cmp
    j = cmp[cmp["ok"].astype("boolean").fillna(True) == False].copy()  # noqa: E712 - nullable bool
    j["abs_error"] = j["error"].abs()
    j = j.sort_values("abs_error", ascending=False).drop_duplicates("scenario")
    return j.head(n).drop(columns="abs_error")
