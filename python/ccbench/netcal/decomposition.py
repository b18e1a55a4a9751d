"""Delay decomposition from four timestamps per packet (paper Sec. V-B, Figs. 9, 10, 12).

Components (seconds), from the columns of :mod:`ccbench.netcal.io`:

* ``sender``   = ``t_first_tx − t_write``  (queueing/blocking in the sender stack)
* ``network``  = ``t_arrive − t_first_tx`` (includes retransmission time: ``t_first_tx``
  is the *first* transmission, ``t_arrive`` the arrival of the successful copy)
* ``receiver`` = ``t_deliver − t_arrive``  (head-of-line blocking in the receiver)
* ``e2e``      = ``t_deliver − t_write``

A packet counts as *buffered in the sender stack* when ``sender > threshold_s``. The
paper does not define a threshold; the default 0 fits the simulator's exact stamps
(an unqueued write is sent at once). For testbed data, pass a threshold above the
stack's processing time (e.g. 100 µs).

The empirical CCDF is ``P[X > x]`` at the sorted sample values (a right-continuous
step function; :func:`ccdf` returns each distinct value once).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .errors import NetcalError
from .io import validate_timestamp_frame

__all__ = [
    "COMPONENTS",
    "delay_components",
    "ccdf",
    "component_ccdfs",
    "sender_buffering_probability",
    "buffering_vs_utilisation",
]

COMPONENTS = ("e2e", "sender", "network", "receiver")


def delay_components(df: pd.DataFrame) -> pd.DataFrame:
    """A frame with ``e2e``, ``sender``, ``network``, ``receiver`` (seconds) per delivered
    packet, plus ``rate_bps`` when the input has it."""
    d = validate_timestamp_frame(df)
    out = pd.DataFrame(
        {
            "e2e": d["t_deliver"] - d["t_write"],
            "sender": d["t_first_tx"] - d["t_write"],
            "network": d["t_arrive"] - d["t_first_tx"],
            "receiver": d["t_deliver"] - d["t_arrive"],
        }
    ).clip(lower=0.0)  # round-off within the 1 ns tolerance of the validation
    if "rate_bps" in d.columns:
        out["rate_bps"] = d["rate_bps"].to_numpy()
    return out


def ccdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CCDF: distinct sorted values ``x`` and ``P[X > x]``
    (:func:`ccbench.analysis.distribution.ccdf`, raising :class:`NetcalError`)."""
    from ccbench.analysis.distribution import AnalysisError, ccdf as _ccdf

    try:
        return _ccdf(values)
    except AnalysisError as e:
        raise NetcalError(f"cannot compute a CCDF: {e}") from None


def component_ccdfs(df: pd.DataFrame, components=COMPONENTS) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """CCDF of each delay component (input: timestamp records or :func:`delay_components`)."""
    comp = df if set(components) <= set(df.columns) else delay_components(df)
    unknown = [c for c in components if c not in COMPONENTS]
    if unknown:
        raise NetcalError(f"unknown component(s) {unknown}; choose from {COMPONENTS}")
    return {c: ccdf(comp[c].to_numpy()) for c in components}


def sender_buffering_probability(df: pd.DataFrame, threshold_s: float = 0.0) -> float:
    """``P[sender-stack delay > threshold_s]`` over the delivered packets."""
    comp = df if "sender" in df.columns else delay_components(df)
    return float(np.mean(comp["sender"].to_numpy() > threshold_s))


def buffering_vs_utilisation(
    df: pd.DataFrame, reference_rate_bps: float, threshold_s: float = 0.0, z: float = 1.96
) -> pd.DataFrame:
    """``P[sender-stack buffering]`` per probe rate against utilisation (Fig. 10).

    ``df`` holds timestamp records with a ``rate_bps`` column; utilisation is
    ``rate_bps / reference_rate_bps`` (the paper uses the 9.4 Mbit/s net fair share).
    Columns: ``rate_bps``, ``utilisation``, ``n``, ``p_buffering`` and a Wilson score
    interval ``ci_low``/``ci_high`` at ``z``.
    """
    if not (reference_rate_bps > 0):
        raise NetcalError(f"reference_rate_bps must be positive, got {reference_rate_bps!r}")
    comp = df if {"sender", "rate_bps"} <= set(df.columns) else delay_components(df)
    if "rate_bps" not in comp.columns:
        raise NetcalError("buffering_vs_utilisation needs a rate_bps column to group by")
    rows = []
    for rate, g in comp.groupby("rate_bps", sort=True):
        n = len(g)
        p = float(np.mean(g["sender"].to_numpy() > threshold_s))
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        rows.append({
            "rate_bps": float(rate), "utilisation": float(rate) / reference_rate_bps, "n": n,
            "p_buffering": p, "ci_low": max(0.0, centre - half), "ci_high": min(1.0, centre + half),
        })
    return pd.DataFrame(rows)
