"""Numbers the Lübben & Fidler figures are read by: attainable rates at a time scale,
convergence times, CWND autocorrelation (Eq. 9), runs below a threshold (the window
models themselves are :mod:`ccbench.models.luebben`). Pure functions of arrays; no simulation."""

from __future__ import annotations

import math

import numpy as np

#: The time scale at which short-term attainable rates are compared (the paper's Fig. 16
#: text: "for short time intervals of up to one second").
SHORT_S = 1.0


def estimate_from_samples(rates_bps, samples, status, xi: float):
    """The service-curve estimate (Eq. 7) at ``xi`` from the accepted rates' samples
    (the rates up to the first one not accepted)."""
    from ccbench.netcal.estimator import delay_quantile, estimate_service_curve

    r, q = [], []
    for rate, s, st in zip(rates_bps, samples, status):
        if st not in ("accepted", "accepted_dependent"):
            break
        r.append(rate)
        q.append(delay_quantile(s, xi))
    if not r:
        return None
    return estimate_service_curve(np.array(r), np.array(q), xi)


def convergence_time(est, fraction: float = 0.9) -> float:
    """Smallest t with ``α̃(t) ≥ fraction · α̃(∞)``: ``α̃`` is the max of ``r_j (1 - Δ_j/t)``,
    so segment j reaches the level at ``Δ_j / (1 - level / r_j)`` when ``r_j`` exceeds it."""
    level = fraction * est.long_term_rate_bps
    ts = [d / (1.0 - level / r) for r, d in est.segments() if r > level]
    return float(min(ts)) if ts else math.inf


def static_alpha(t, w_pkts: float, t_s: float, pkt_bits: float) -> np.ndarray:
    """``α(t)`` of the static window with no capacity limit (Sec. III-A, C → ∞) as the
    estimator sees it: the service is ``n · w`` after ``(2n - 1) T``, and its largest convex
    minorant (≈ ``(w/RTT)[t - T]^+``, the curve Eq. 7 recovers, Fig. 4) over ``t`` (an
    increasing grid) divided by ``t``."""
    from ccbench.models.luebben import largest_convex_minorant, static_window_service_curve_bits

    t = np.asarray(t, dtype=float)
    # C = 1e15 bit/s stands for "no capacity limit" (the model wants a finite C)
    s = static_window_service_curve_bits(t, capacity_bps=1e15, one_way_delay_s=t_s, window_bits=w_pkts * pkt_bits)
    return largest_convex_minorant(t, s) / t


def autocorrelation(x, max_lag: int) -> np.ndarray:
    """Eq. (9) for lags ``0..max_lag`` samples: ``E[(W_t - μ)(W_{t+τ} - μ)] / σ²``
    (biased estimator, the usual one for a long series)."""
    x = np.asarray(x, dtype=float)
    x = x - x.mean()
    var = float(np.dot(x, x)) / x.size
    if var <= 0:
        return np.full(max_lag + 1, np.nan)
    n = x.size
    f = np.fft.rfft(x, 2 * n)
    acf = np.fft.irfft(f * np.conj(f))[: max_lag + 1] / n
    return acf / var


def mean_acf(series: list[np.ndarray], max_lag: int) -> tuple[np.ndarray, np.ndarray]:
    """(mean, 95 % t half-width) of the autocorrelation over independent runs."""
    from ccbench.repetitions import mean_ci

    a = np.array([autocorrelation(s, max_lag) for s in series if len(s) > max_lag])
    if a.size == 0:
        return np.full(max_lag + 1, np.nan), np.full(max_lag + 1, np.nan)
    m, h = zip(*(mean_ci(a[:, k]) for k in range(a.shape[1])))
    return np.array(m), np.array(h)


def decorrelation_lag(acf: np.ndarray, dt: float, level: float = 0.5) -> float:
    """First lag (s) at which the autocorrelation drops below ``level``."""
    below = np.nonzero(acf < level)[0]
    return float(below[0] * dt) if below.size else math.inf


def longest_run_below(x: np.ndarray, threshold: float, dt: float) -> float:
    """Longest stretch (s) of consecutive samples below ``threshold``."""
    best = cur = 0
    for v in np.asarray(x) < threshold:
        cur = cur + 1 if v else 0
        best = max(best, cur)
    return best * dt
