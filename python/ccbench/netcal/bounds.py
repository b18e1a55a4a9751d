"""Statistical delay and backlog bounds for arbitrary traffic (paper Secs. III-D, VII).

With the estimate ``S(u) = max_j r_j [u − Δ_j]^+`` and its pseudo-inverse
``S^{-1}(x) = min_j (Δ_j + x / r_j)`` (``x > 0``), every bound below holds with
probability at least ``1 − ε`` (the ε of the estimate).

Per-packet delay bound
    A packet ``k`` arriving at ``a_k``, whose last bit is bit ``C_k`` of the trace
    (cumulative, in arrival order), has left the system once
    ``inf_τ {A(τ) + S(a_k + d − τ)} ≥ C_k``. Because ``A`` is a step function the
    infimum over ``τ`` only needs the instants just before each arrival ``a_i``:

        d_k = max(0, max_{i ≤ k} [ S^{-1}(C_k − C_i^−) − (a_k − a_i) ]),

    ``C_i^−`` being the bits that arrived before ``a_i``.

Per-packet backlog bound
    ``b_k = max(0, max_{i ≤ k} [ C_k − C_i^− − S(a_k − a_i) ])`` (the backlog bound
    between arrivals is smaller, so the maxima over ``k`` give the overall bound).

Both maxima are over a lower-triangular matrix that satisfies the quadrangle
inequality (``S^{-1}`` is concave, ``S`` convex), so the row argmax is monotone in
``k`` and all rows are solved by vectorised divide and conquer in ``O(N log N · |R|)``
(:mod:`ccbench.netcal._monotone`); 40,000 packets take well under a second instead of
the ``O(N²·|R|)`` of the naive double loop.

Envelope bounds
    With the empirical envelope ``E`` (:mod:`ccbench.netcal.envelope`):
    delay ``h(E, S) = sup_{u ≥ 0} [S^{-1}(E(u)) − u]^+`` and backlog
    ``v(E, S) = sup_{u ≥ 0} [E(u) − S(u)]``, evaluated conservatively on the lag grid
    (``u ∈ (u_m, u_{m+1}]`` uses ``E(u_{m+1})`` and ``u_m``).

Units: times in seconds, packet sizes in **bytes** on input, bits in backlogs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._monotone import lower_triangular_row_max
from .envelope import EmpiricalEnvelope, as_trace, empirical_envelope
from .errors import NetcalError
from .estimator import ServiceCurveEstimate, service_curve, service_curve_inverse

__all__ = [
    "DelayBoundResult",
    "curve_segments",
    "per_packet_delay_bound",
    "per_packet_backlog_bound",
    "backlog_bound",
    "envelope_delay_bound",
    "envelope_backlog_bound",
    "delay_bounds",
]


def curve_segments(curve) -> tuple[np.ndarray, np.ndarray]:
    """``(rates_bps, delays_s)`` of a :class:`ServiceCurveEstimate` or a pair of arrays."""
    if isinstance(curve, ServiceCurveEstimate):
        return curve.rates_bps, curve.delay_quantiles_s
    try:
        rates, delays = curve
    except (TypeError, ValueError):
        raise NetcalError(
            "curve must be a ServiceCurveEstimate or a (rates_bps, delay_quantiles_s) pair"
        ) from None
    r = np.asarray(rates, dtype=float).ravel()
    d = np.asarray(delays, dtype=float).ravel()
    if r.size == 0 or r.shape != d.shape or np.any(r <= 0) or np.any(d < 0):
        raise NetcalError("service curve segments need equal-length positive rates and non-negative delays")
    return r, d


def per_packet_delay_bound(times_s, sizes_bytes, curve) -> np.ndarray:
    """Delay bound (seconds) for every packet of an arrival trace."""
    r, dl = curve_segments(curve)
    t, bits = as_trace(times_s, sizes_bytes)
    cum = np.cumsum(bits)
    before = cum - bits
    # Packets that share an arrival time: use the bits before the first of the group.
    first_idx = np.maximum.accumulate(np.where(np.concatenate([[True], t[1:] != t[:-1]]), np.arange(t.size), 0))
    before = before[first_idx]

    def value(k, i):
        return service_curve_inverse(cum[k] - before[i], r, dl) + t[i]

    best, _ = lower_triangular_row_max(t.size, value)
    return np.maximum(best - t, 0.0)


def per_packet_backlog_bound(times_s, sizes_bytes, curve) -> np.ndarray:
    """Backlog bound (bits) right after every packet arrival."""
    r, dl = curve_segments(curve)
    t, bits = as_trace(times_s, sizes_bytes)
    cum = np.cumsum(bits)
    before = cum - bits
    first_idx = np.maximum.accumulate(np.where(np.concatenate([[True], t[1:] != t[:-1]]), np.arange(t.size), 0))
    before = before[first_idx]

    def value(k, i):
        return cum[k] - before[i] - service_curve(t[k] - t[i], r, dl)

    best, _ = lower_triangular_row_max(t.size, value)
    return np.maximum(best, 0.0)


def backlog_bound(times_s, sizes_bytes, curve) -> float:
    """The largest per-arrival backlog bound of the trace (bits)."""
    return float(np.max(per_packet_backlog_bound(times_s, sizes_bytes, curve)))


def envelope_delay_bound(envelope: EmpiricalEnvelope, curve) -> float:
    """``h(E, S)`` in seconds, conservative on the envelope's lag grid."""
    r, dl = curve_segments(curve)
    u, e = envelope.lags_s, envelope.bits
    cand = [float(service_curve_inverse(e[0], r, dl))]
    if u.size > 1:
        cand.append(float(np.max(service_curve_inverse(e[1:], r, dl) - u[:-1])))
    return max(0.0, *cand)


def envelope_backlog_bound(envelope: EmpiricalEnvelope, curve) -> float:
    """``v(E, S)`` in bits, conservative on the envelope's lag grid."""
    r, dl = curve_segments(curve)
    u, e = envelope.lags_s, envelope.bits
    cand = [float(e[0] - service_curve(0.0, r, dl))]
    if u.size > 1:
        cand.append(float(np.max(e[1:] - service_curve(u[:-1], r, dl))))
    return max(0.0, *cand)


@dataclass(frozen=True)
class DelayBoundResult:
    """All bounds for one trace and one estimate, with the estimate's ε."""

    per_packet_delay_s: np.ndarray
    envelope: EmpiricalEnvelope
    envelope_delay_s: float
    envelope_backlog_bits: float
    backlog_bits: float
    eps: float | None

    @property
    def max_per_packet_delay_s(self) -> float:
        return float(np.max(self.per_packet_delay_s))


def delay_bounds(times_s, sizes_bytes, curve, lags_s=None, n_lags: int = 256) -> DelayBoundResult:
    """Per-packet, envelope and backlog bounds in one call."""
    env = empirical_envelope(times_s, sizes_bytes, lags_s, n_lags)
    eps = curve.eps if isinstance(curve, ServiceCurveEstimate) else None
    return DelayBoundResult(
        per_packet_delay_s=per_packet_delay_bound(times_s, sizes_bytes, curve),
        envelope=env,
        envelope_delay_s=envelope_delay_bound(env, curve),
        envelope_backlog_bits=envelope_backlog_bound(env, curve),
        backlog_bits=backlog_bound(times_s, sizes_bytes, curve),
        eps=eps,
    )
