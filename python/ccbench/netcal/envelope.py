"""Empirical envelope of an arrival trace (Wrege, Knightly, Zhang & Liebeherr).

``E(u) = sup_s { A(s + u) − A(s) }``: the most bits the trace ever sends in an
interval of length ``u``. For a packet trace with arrival times ``a_i`` and cumulative
bits ``C`` the supremum is attained by windows that start at a packet arrival:

    E(u) = max_i ( C(a_i + u) − C(a_i^−) ),

which :func:`empirical_envelope` evaluates on a grid of lags with one sorted search per
lag (``O(N log N)`` per lag, vectorised; ~0.1 s for 40,000 packets and 256 lags). The
window is taken closed, ``[a_i, a_i + u]``, which gives the right-continuous version of
``E`` (an upper bound of the open-window value), so ``E(0)`` is the largest burst that
arrives at one instant.

Between grid lags the envelope is used conservatively: ``E(u) ≤ E(u_{m+1})`` for
``u ∈ (u_m, u_{m+1}]`` (``E`` is non-decreasing). Bounds computed from the grid
(:mod:`ccbench.netcal.bounds`) are therefore valid upper bounds that tighten as the
grid gets finer. The default grid is 0 plus ``n_lags`` logarithmically spaced lags from
the smallest positive inter-arrival time to the trace duration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import NetcalError

__all__ = ["EmpiricalEnvelope", "empirical_envelope", "default_lags", "as_trace"]


def as_trace(times_s, sizes_bytes) -> tuple[np.ndarray, np.ndarray]:
    """Validate an arrival trace; return times (s) and sizes in **bits**."""
    t = np.asarray(times_s, dtype=float).ravel()
    b = np.asarray(sizes_bytes, dtype=float).ravel()
    if t.size == 0:
        raise NetcalError("the arrival trace is empty")
    if t.shape != b.shape:
        raise NetcalError(f"times and sizes differ in length ({t.size} != {b.size})")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(b))):
        raise NetcalError("arrival times and sizes must be finite")
    if np.any(np.diff(t) < 0):
        k = int(np.argmax(np.diff(t) < 0)) + 1
        raise NetcalError(f"unsorted timestamps: arrival time decreases at packet {k} ({t[k-1]!r} -> {t[k]!r})")
    if np.any(b <= 0):
        raise NetcalError("packet sizes must be positive")
    return t, 8.0 * b


def default_lags(times_s, n_lags: int = 256) -> np.ndarray:
    t = np.asarray(times_s, dtype=float)
    dur = float(t[-1] - t[0])
    if dur <= 0:
        return np.array([0.0])
    gaps = np.diff(t)
    pos = gaps[gaps > 0]
    lo = float(pos.min()) if pos.size else dur
    lo = min(lo, dur)
    if lo >= dur:
        return np.array([0.0, dur])
    return np.concatenate([[0.0], np.logspace(np.log10(lo), np.log10(dur), int(n_lags))])


@dataclass(frozen=True)
class EmpiricalEnvelope:
    """Envelope values ``bits[m] = E(lags_s[m])`` on an ascending lag grid starting at 0."""

    lags_s: np.ndarray
    bits: np.ndarray

    def __call__(self, u) -> np.ndarray:
        """Conservative (upper) value at arbitrary lags: the next grid value at or
        above ``u``; beyond the grid the last value (for a grid reaching the trace
        duration this is the trace total, which is exact)."""
        uu = np.asarray(u, dtype=float)
        idx = np.searchsorted(self.lags_s, uu, side="left")
        idx = np.minimum(idx, self.lags_s.size - 1)
        return self.bits[idx]

    def rate_bps(self) -> np.ndarray:
        """``E(u)/u`` on the positive lags (the envelope's rate, bit/s)."""
        m = self.lags_s > 0
        return self.bits[m] / self.lags_s[m]


def empirical_envelope(times_s, sizes_bytes, lags_s=None, n_lags: int = 256) -> EmpiricalEnvelope:
    """Empirical envelope of a packet trace (sizes in bytes, envelope in bits)."""
    t, bits = as_trace(times_s, sizes_bytes)
    lags = default_lags(t, n_lags) if lags_s is None else np.asarray(lags_s, dtype=float).ravel()
    if lags.size == 0 or np.any(lags < 0) or np.any(np.diff(lags) <= 0):
        raise NetcalError("lags must be non-negative and strictly increasing")
    if lags[0] != 0.0:
        lags = np.concatenate([[0.0], lags])
    cum = np.cumsum(bits)
    before = cum - bits  # C(a_i^-) for packets in order; first of a same-time group is exact
    # The first packet of each group of equal arrival times gives the largest window.
    first = np.concatenate([[True], t[1:] != t[:-1]])
    ts, bs = t[first], before[first]
    out = np.empty(lags.size)
    for m, u in enumerate(lags):
        j = np.searchsorted(t, ts + u, side="right") - 1
        out[m] = float(np.max(cum[j] - bs))
    out = np.maximum.accumulate(out)  # guard against round-off in a + u
    return EmpiricalEnvelope(lags, out)
