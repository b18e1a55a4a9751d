"""Shared input checks of the analysis modules."""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd


class AnalysisError(ValueError):
    """Bad input to an analysis function (missing columns, empty flow, bad parameter)."""


def require_columns(df: pd.DataFrame, required: Sequence[str], table: str) -> None:
    """Raises :class:`AnalysisError` naming the missing columns and the required list."""
    if not isinstance(df, pd.DataFrame):
        raise AnalysisError(f"{table}: expected a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise AnalysisError(
            f"{table} table is missing column(s) {missing} (required: {list(required)})"
        )


def positive(value: float, name: str, *, allow_zero: bool = False) -> float:
    """``value`` as a finite float > 0 (or >= 0), else :class:`AnalysisError`."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise AnalysisError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise AnalysisError(f"{name} must be finite and {bound}, got {value!r}")
    return v


def flow_names(df: pd.DataFrame, flows: str | Iterable[str] | None, table: str) -> list[str]:
    """The flows to analyse: all flows present in ``df`` (in order of appearance) when
    ``flows`` is None, else the given ones, each of which must have rows in ``df``."""
    present = [str(f) for f in pd.unique(df["flow"].astype(str))]
    if flows is None:
        if not present:
            raise AnalysisError(f"{table} table has no rows (no flows to analyse)")
        return present
    names = [flows] if isinstance(flows, str) else [str(f) for f in flows]
    if not names:
        raise AnalysisError("flows: empty list of flows")
    absent = [f for f in names if f not in present]
    if absent:
        raise AnalysisError(f"{table} table has no rows for flow(s) {absent} (present: {present})")
    return names


def rows_of(df: pd.DataFrame, flow: str) -> pd.DataFrame:
    return df[(df["flow"].astype(str) == flow).to_numpy()]


def as_1d(values, name: str) -> np.ndarray:
    """A 1-D float array (NaN allowed) or :class:`AnalysisError`."""
    try:
        a = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise AnalysisError(f"{name} must be numeric") from None
    if a.ndim != 1:
        raise AnalysisError(f"{name} must be one-dimensional, got shape {a.shape}")
    return a
