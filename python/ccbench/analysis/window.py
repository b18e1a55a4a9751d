"""Congestion-window dynamics and transfer times.

* cwnd autocorrelation (Lübben & Fidler eq. 9), from the ``cwnd`` table resampled on
  a regular time grid;
* transfer-time mean and variance against transfer size (Weigle et al. 2009, E[T_n]
  and Var[T_n] against the number of segments n).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._common import AnalysisError, as_1d, flow_names, positive, require_columns, rows_of

__all__ = [
    "resample_hold",
    "autocorrelation",
    "cwnd_autocorrelation",
    "transfers_from_flows",
    "transfer_time_stats",
]


def resample_hold(t_s, values, grid_s: float, t_start_s: float | None = None, t_end_s: float | None = None):
    """Sample-and-hold resampling of a step process observed at times ``t_s``: the value
    at grid point g is the last observation at or before g (state samples hold until
    the next one). Grid: ``t_start_s, t_start_s + grid_s, ... <= t_end_s`` (defaults:
    first and last observation). Returns (grid, values)."""
    t = as_1d(t_s, "t_s")
    v = as_1d(values, "values")
    if t.size != v.size:
        raise AnalysisError(f"t_s and values differ in length ({t.size} vs {v.size})")
    ok = np.isfinite(t) & np.isfinite(v)
    t, v = t[ok], v[ok]
    if t.size == 0:
        raise AnalysisError("no finite sample to resample")
    order = np.argsort(t, kind="stable")
    t, v = t[order], v[order]
    step = positive(grid_s, "grid_s")
    t0 = float(t[0]) if t_start_s is None else float(t_start_s)
    t1 = float(t[-1]) if t_end_s is None else float(t_end_s)
    if t0 < t[0]:
        raise AnalysisError(f"t_start_s = {t0} is before the first sample at {t[0]}")
    if t1 < t0:
        raise AnalysisError(f"t_end_s = {t1} is before t_start_s = {t0}")
    grid = t0 + step * np.arange(int(np.floor((t1 - t0) / step + 1e-9)) + 1)
    idx = np.searchsorted(t, grid, side="right") - 1
    return grid, v[idx]


def autocorrelation(values, max_lag_samples: int) -> np.ndarray:
    """Autocorrelation of a regularly sampled series, Lübben & Fidler eq. (9):

        𝒲_τ = E[(W(t) - μ_W)(W(t+τ) - μ_W)] / σ_W²

    estimated at lags k = 0..max_lag_samples (samples) as
    ``(1/(n-k)) Σ_{i=0}^{n-k-1} (w_i - μ)(w_{i+k} - μ) / σ²`` with μ and σ² (ddof 0)
    over the whole series (so 𝒲_0 = 1; the 1/(n-k) normalisation averages the available
    pairs, as the expectation in eq. 9 asks). A constant series has no autocorrelation.
    """
    w = as_1d(values, "values")
    if not np.isfinite(w).all():
        raise AnalysisError("values must be finite")
    k_max = int(max_lag_samples)
    if k_max < 0 or k_max != max_lag_samples:
        raise AnalysisError(f"max_lag_samples must be a non-negative integer, got {max_lag_samples!r}")
    n = w.size
    if n <= k_max:
        raise AnalysisError(f"max_lag_samples = {k_max} needs more than {k_max} samples, got {n}")
    d = w - w.mean()
    var = float(np.mean(d * d))
    if var <= 0:
        raise AnalysisError("series is constant (variance 0): autocorrelation undefined")
    return np.array([np.mean(d[: n - k] * d[k:]) / var for k in range(k_max + 1)])


def cwnd_autocorrelation(
    cwnd: pd.DataFrame,
    flow: str,
    grid_s: float,
    max_lag_s: float,
    t_start_s: float | None = None,
    t_end_s: float | None = None,
    column: str = "cwnd_pkts",
) -> pd.DataFrame:
    """cwnd autocorrelation 𝒲_τ of one flow (Lübben & Fidler eq. 9) at lags
    0, grid_s, ..., max_lag_s.

    The ``cwnd`` table's state samples (possibly irregular, or on change only) are
    resampled sample-and-hold on a regular grid of step ``grid_s`` between
    ``t_start_s`` and ``t_end_s`` (default: the flow's first and last sample; skip slow
    start by giving ``t_start_s``), then :func:`autocorrelation` is applied. Lübben &
    Fidler average the curve over 20 runs; call this per run and average the ``acf``.
    Returns ``lag_s, acf``.
    """
    require_columns(cwnd, ("flow", "t", column), "cwnd")
    name = flow_names(cwnd, flow, "cwnd")[0]
    c = rows_of(cwnd, name)
    step = positive(grid_s, "grid_s")
    lag = positive(max_lag_s, "max_lag_s", allow_zero=True)
    _, w = resample_hold(c["t"].to_numpy(dtype=float), c[column].to_numpy(dtype=float), step, t_start_s, t_end_s)
    k = int(round(lag / step))
    if abs(k * step - lag) > 1e-9 * max(1.0, lag):
        raise AnalysisError(f"max_lag_s = {max_lag_s} is not a multiple of grid_s = {grid_s}")
    acf = autocorrelation(w, k)
    return pd.DataFrame({"lag_s": step * np.arange(k + 1), "acf": acf})


def transfers_from_flows(flows: pd.DataFrame) -> pd.DataFrame:
    """Completed fixed-size transfers of a run's ``flows`` table (bulk apps with
    ``bytes``): ``size_bytes`` (= ``bytes_delivered``) and ``transfer_s``
    (= ``completion_s``, which both backends report as time from the flow's start to
    the delivery of its last byte). Flows that did not complete (NaN) are left out.
    Concatenate these over runs (seeds) before :func:`transfer_time_stats`."""
    require_columns(flows, ("flow", "bytes_delivered", "completion_s"), "flows")
    done = flows[np.isfinite(flows["completion_s"].to_numpy(dtype=float))]
    return pd.DataFrame({
        "flow": done["flow"].astype(str).to_numpy(),
        "size_bytes": done["bytes_delivered"].to_numpy(dtype=np.int64),
        "transfer_s": done["completion_s"].to_numpy(dtype=float),
    })


def transfer_time_stats(
    transfers: pd.DataFrame,
    size_col: str = "size_bytes",
    time_col: str = "transfer_s",
    ddof: int = 1,
) -> pd.DataFrame:
    """Transfer-time mean and variance against transfer size (Weigle, Cheng, Kaur &
    Kulkarni 2009: E[T_n] and Var[T_n] = E[T_n²] - E[T_n]², the time to deliver n
    segments, compared with simulation over >= 100 runs per setting).

    ``transfers``: one row per completed transfer, with its size (any unit: bytes or
    segments) and its transfer time (s). Returns one row per size, sorted:
    ``size, n, mean_s, var_s, std_s`` (sample variance with ``ddof``; NaN for a size
    with ``n <= ddof``).
    """
    require_columns(transfers, (size_col, time_col), "transfers")
    if transfers.empty:
        raise AnalysisError("transfers: no rows")
    t = transfers[time_col].to_numpy(dtype=float)
    if not np.isfinite(t).all() or (t < 0).any():
        raise AnalysisError(f"transfers: {time_col} must be finite and >= 0 (drop incomplete transfers first)")
    if int(ddof) < 0:
        raise AnalysisError(f"ddof must be >= 0, got {ddof!r}")
    rows = []
    for size, g in transfers.groupby(size_col, sort=True):
        v = g[time_col].to_numpy(dtype=float)
        var = float(np.var(v, ddof=ddof)) if v.size > ddof else np.nan
        rows.append((size, v.size, float(v.mean()), var, float(np.sqrt(var)) if np.isfinite(var) else np.nan))
    return pd.DataFrame(rows, columns=["size", "n", "mean_s", "var_s", "std_s"])
