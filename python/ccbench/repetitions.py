"""Repetitions of one scenario over seeds: per-flow mean and confidence interval.

``ccbench run`` runs every seed of ``[run] seeds`` and reports, per flow and metric,
the mean over the seeds and a 95 % confidence interval from Student's t-distribution
(``mean ± t_{0.975, n-1} · s / sqrt(n)``): the seeds are independent repetitions, their
number is small, and the t quantile keeps the interval honest for n = 3 or 5 where
the normal 1.96 would be too narrow. With one seed there is no interval (NaN).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from ccbench.run import Run

__all__ = ["METRICS", "mean_ci", "seed_table", "seed_summary"]

#: flow-table columns summarised over seeds (what ``ccbench run`` prints)
METRICS = ("goodput_bps", "loss_rate", "delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s")


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """``(mean, half_width)`` of the ``level`` t-interval over the finite values;
    half-width NaN with fewer than two values."""
    from scipy.stats import t

    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return math.nan, math.nan
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan
    half = float(t.ppf(0.5 + level / 2, x.size - 1) * x.std(ddof=1) / math.sqrt(x.size))
    return mean, half


def seed_table(runs: Sequence["Run"]) -> pd.DataFrame:
    """Every run's flow table, one after the other, with a ``seed`` column first."""
    frames = []
    for run in runs:
        f = run.flows.copy()
        for c in f.columns:
            if isinstance(f[c].dtype, pd.CategoricalDtype):
                f[c] = f[c].astype(str)
        f.insert(0, "seed", int(run.meta["seed"]))
        frames.append(f)
    return pd.concat(frames, ignore_index=True)


def seed_summary(runs: Sequence["Run"], level: float = 0.95) -> pd.DataFrame:
    """One row per flow: ``flow``, ``transport``, ``cc``, ``n`` (seeds), and for each
    metric of :data:`METRICS` its ``<metric>_mean`` and ``<metric>_ci`` (half-width of
    the ``level`` t-interval). Flows keep the order of the first run."""
    table = seed_table(runs)
    rows = []
    for flow in dict.fromkeys(table["flow"]):
        sub = table[table["flow"] == flow]
        row = {"flow": flow, "n": len(sub)}
        for col in ("transport", "cc"):
            if col in sub:
                row[col] = sub[col].iloc[0]
        for m in METRICS:
            if m in sub:
                row[f"{m}_mean"], row[f"{m}_ci"] = mean_ci(sub[m], level)
        rows.append(row)
    return pd.DataFrame(rows)
