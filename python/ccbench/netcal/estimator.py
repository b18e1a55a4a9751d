"""Service-curve estimator of Lübben & Fidler (Eqs. 7 and 8 of the paper).

Given a set ``R`` of probe rates that showed a stationary delay distribution and, per
rate, the ``(1 - xi)``-quantile of the steady-state delay ``Δ̃^ξ(r)``, the
ε-effective service-curve estimate is

    S̃^ε(t) = max_{r ∈ R} r · [t − Δ̃^ξ(r)]^+ ,     ε = |R| · ξ   (union bound),

and the attainable rate is ``α̃^ε(t) = S̃^ε(t) / t``.

The estimate is always the maximum of latency-rate segments, so it is convex and
piecewise linear (it is the bi-conjugate, i.e. the largest convex minorant, of the
system's service when that service is deterministic). ``ε`` is reported with every
curve; with many rates it can exceed 1, in which case the guarantee is vacuous and
:attr:`ServiceCurveEstimate.vacuous` says so.

Units: rates in bit/s, times in seconds, service in bits.

Choices (documented parameters)
-------------------------------
* Quantile estimator: the ``⌈(1 − ξ)·n⌉``-th order statistic of the ``n`` samples
  (1-based), i.e. the smallest sample ``x`` with empirical ``P[X ≤ x] ≥ 1 − ξ``. This
  is the empirical version of ``inf{x : P[Δ ≤ x] ≥ 1 − ξ}``; with ``ξ < 1/n`` it is the
  sample maximum (the paper's "ε = 0" for deterministic systems).
* Default time grid: logarithmic, from a tenth of the smallest delay quantile (or
  0.1 ms if that is 0) to ``max(100 · largest quantile, 10 s)``, 200 points.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ._checks import check_xi
from .errors import NetcalError

__all__ = [
    "ServiceCurveEstimate",
    "delay_quantile",
    "service_curve",
    "service_curve_inverse",
    "attainable_rate",
    "log_time_grid",
    "estimate_service_curve",
]


def delay_quantile(samples: Sequence[float] | np.ndarray, xi: float) -> float:
    """Empirical ``(1 − ξ)``-quantile ``Δ̃^ξ``: the ``⌈(1 − ξ)n⌉``-th order statistic."""
    xi = check_xi(xi)
    x = np.asarray(samples, dtype=float).ravel()
    if x.size == 0:
        raise NetcalError("cannot take a delay quantile of zero samples")
    if not np.all(np.isfinite(x)):
        raise NetcalError("delay samples must be finite (found NaN or inf)")
    n = x.size
    # Guard against 0.95 * 20 = 18.999999999999996 style round-off before ceil.
    k = int(math.ceil((1.0 - xi) * n - 1e-9))
    k = min(max(k, 1), n)
    return float(np.partition(x, k - 1)[k - 1])


def _as_rates_quantiles(rates, quantiles) -> tuple[np.ndarray, np.ndarray]:
    r = np.asarray(rates, dtype=float).ravel()
    d = np.asarray(quantiles, dtype=float).ravel()
    if r.size == 0:
        raise NetcalError("the service curve needs at least one (rate, delay quantile) pair")
    if r.shape != d.shape:
        raise NetcalError(
            f"rates and delay quantiles differ in length ({r.size} != {d.size})"
        )
    if not np.all(np.isfinite(r)) or np.any(r <= 0):
        raise NetcalError("probe rates must be positive and finite (bit/s)")
    if not np.all(np.isfinite(d)) or np.any(d < 0):
        raise NetcalError("delay quantiles must be finite and non-negative (s)")
    return r, d


def service_curve(t, rates, quantiles) -> np.ndarray:
    """``S̃(t) = max_j r_j [t − Δ_j]^+`` in bits, vectorised over ``t`` (seconds)."""
    r, d = _as_rates_quantiles(rates, quantiles)
    tt = np.asarray(t, dtype=float)
    out = np.zeros(tt.shape, dtype=float)
    for rj, dj in zip(r, d):
        np.maximum(out, rj * (tt - dj), out=out)
    return out


def service_curve_inverse(x, rates, quantiles) -> np.ndarray:
    """Pseudo-inverse ``S̃^{-1}(x) = inf{u ≥ 0 : S̃(u) ≥ x} = min_j (Δ_j + x / r_j)``.

    For ``x ≤ 0`` the inverse is 0 (any interval provides zero bits).
    """
    r, d = _as_rates_quantiles(rates, quantiles)
    xx = np.asarray(x, dtype=float)
    out = np.full(xx.shape, np.inf, dtype=float)
    for rj, dj in zip(r, d):
        np.minimum(out, dj + xx / rj, out=out)
    return np.where(xx > 0, out, 0.0)


def attainable_rate(t, rates, quantiles) -> np.ndarray:
    """``α̃(t) = S̃(t) / t`` in bit/s (0 at ``t = 0``)."""
    tt = np.asarray(t, dtype=float)
    s = service_curve(tt, rates, quantiles)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(tt > 0, s / np.where(tt > 0, tt, 1.0), 0.0)
    return a


def log_time_grid(t_min: float, t_max: float, n: int = 200) -> np.ndarray:
    """``n`` logarithmically spaced times in ``[t_min, t_max]`` (seconds)."""
    if not (0 < t_min < t_max) or n < 2:
        raise NetcalError(f"need 0 < t_min < t_max and n >= 2, got {t_min}, {t_max}, {n}")
    return np.logspace(math.log10(t_min), math.log10(t_max), int(n))


def _default_grid(quantiles: np.ndarray, n: int = 200) -> np.ndarray:
    lo = float(np.min(quantiles)) / 10.0
    if lo <= 0:
        lo = 1e-4
    hi = max(100.0 * float(np.max(quantiles)), 10.0)
    return log_time_grid(lo, max(hi, 10 * lo), n)


@dataclass(frozen=True)
class ServiceCurveEstimate:
    """An ε-effective service-curve estimate with its bookkeeping.

    Attributes
    ----------
    rates_bps:
        The accepted probe rates ``R`` (bit/s), ascending.
    delay_quantiles_s:
        ``Δ̃^ξ(r)`` per rate (seconds).
    xi:
        Per-rate violation probability (``1 − ξ`` quantiles).
    eps:
        ``|R| · ξ``; the curve is violated with probability at most ``eps`` (union
        bound). May exceed 1 (then :attr:`vacuous` is true).
    t_grid_s, curve_bits, alpha_bps:
        ``S̃^ε`` and ``α̃^ε`` evaluated on a (logarithmic by default) time grid.
    probing:
        The :class:`~ccbench.netcal.probing.ProbingResult` the estimate came from, if any.
    """

    rates_bps: np.ndarray
    delay_quantiles_s: np.ndarray
    xi: float
    eps: float
    t_grid_s: np.ndarray
    curve_bits: np.ndarray
    alpha_bps: np.ndarray
    probing: Any = field(default=None, repr=False, compare=False)

    @property
    def n_rates(self) -> int:
        return int(self.rates_bps.size)

    @property
    def vacuous(self) -> bool:
        """True when ``ε ≥ 1``: the union bound then guarantees nothing."""
        return self.eps >= 1.0

    @property
    def long_term_rate_bps(self) -> float:
        """``lim_{t→∞} α̃(t)``: the largest accepted rate."""
        return float(np.max(self.rates_bps))

    @property
    def latency_s(self) -> float:
        """The origin of ``α̃``: ``α̃(t) = 0`` for ``t ≤ min_j Δ_j``."""
        return float(np.min(self.delay_quantiles_s))

    def S(self, t) -> np.ndarray:
        """``S̃^ε(t)`` in bits at arbitrary times (seconds)."""
        return service_curve(t, self.rates_bps, self.delay_quantiles_s)

    def alpha(self, t) -> np.ndarray:
        """``α̃^ε(t)`` in bit/s at arbitrary times (seconds)."""
        return attainable_rate(t, self.rates_bps, self.delay_quantiles_s)

    def inverse(self, x) -> np.ndarray:
        """Pseudo-inverse ``S̃^{-1}(x)`` in seconds for ``x`` bits."""
        return service_curve_inverse(x, self.rates_bps, self.delay_quantiles_s)

    def segments(self):
        """Pairs ``(r_j, Δ_j)`` of the latency-rate segments."""
        return list(zip(self.rates_bps.tolist(), self.delay_quantiles_s.tolist()))

    def to_frame(self):
        """The curve on its grid as a pandas DataFrame (``t_s``, ``S_bits``, ``alpha_bps``)."""
        import pandas as pd

        return pd.DataFrame(
            {"t_s": self.t_grid_s, "S_bits": self.curve_bits, "alpha_bps": self.alpha_bps}
        )

    def summary(self) -> str:
        return (
            f"S~^eps with |R|={self.n_rates}, xi={self.xi:g}, eps={self.eps:g}"
            f"{' (vacuous)' if self.vacuous else ''}; latency {self.latency_s:g} s, "
            f"long-term rate {self.long_term_rate_bps:g} bit/s"
        )


def estimate_service_curve(
    rates_bps,
    delay_quantiles_s,
    xi: float,
    t_grid_s=None,
    *,
    probing: Any = None,
) -> ServiceCurveEstimate:
    """Build a :class:`ServiceCurveEstimate` from ``(r_j, Δ̃^ξ(r_j))`` pairs (Eq. 7)."""
    xi = check_xi(xi)
    r, d = _as_rates_quantiles(rates_bps, delay_quantiles_s)
    order = np.argsort(r, kind="stable")
    r, d = r[order], d[order]
    if np.any(np.diff(r) == 0):
        raise NetcalError("probe rates must be distinct")
    grid = _default_grid(d) if t_grid_s is None else np.asarray(t_grid_s, dtype=float).ravel()
    if grid.size == 0 or np.any(grid < 0) or not np.all(np.isfinite(grid)):
        raise NetcalError("the time grid must be non-empty, finite and non-negative")
    return ServiceCurveEstimate(
        rates_bps=r,
        delay_quantiles_s=d,
        xi=xi,
        eps=r.size * xi,
        t_grid_s=grid,
        curve_bits=service_curve(grid, r, d),
        alpha_bps=attainable_rate(grid, r, d),
        probing=probing,
    )
