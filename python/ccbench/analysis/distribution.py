"""Empirical distribution functions: the one CDF and CCDF of ccbench.

Every figure, table and study that shows a distribution (delay CCDFs of a run, the
delay decomposition, Lübben & Fidler's Fig. 9, the estimator's plots) calls these, so
they agree on ties, NaNs and the last point.

Ties: the functions return the *distinct* sorted values, so ``P[X <= x]`` and
``P[X > x]`` are exact at every returned ``x`` (with repeated values a per-sample
step would show a false intermediate probability at the repeated value).
NaN and infinite values (undelivered messages) are left out. An input without a
finite value raises :class:`~ccbench.analysis.AnalysisError`: a distribution of
nothing is a caller's mistake, not an empty curve.
"""

from __future__ import annotations

import numpy as np

from ._common import AnalysisError

__all__ = ["ecdf", "ccdf"]


def ecdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CDF: distinct sorted finite values ``x`` and ``F(x) = P[X <= x]``
    (the fraction of the finite samples at or below ``x``; the last is 1)."""
    try:
        v = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise AnalysisError("values must be numeric") from None
    v = v[np.isfinite(v)]
    if v.size == 0:
        raise AnalysisError("values: no finite value (a distribution needs at least one sample)")
    x, counts = np.unique(v, return_counts=True)
    return x, np.cumsum(counts) / v.size


def ccdf(values) -> tuple[np.ndarray, np.ndarray]:
    """Empirical CCDF: distinct sorted finite values ``x`` and ``P[X > x] = 1 - F(x)``
    (0 at the largest value; on a log axis draw only ``p > 0``)."""
    x, f = ecdf(values)
    return x, np.clip(1.0 - f, 0.0, 1.0)
