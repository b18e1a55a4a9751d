"""Goodput over time, Jain's fairness index and Wei's normalised throughput gain."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from ._common import AnalysisError, as_1d, flow_names, positive, require_columns, rows_of

__all__ = ["goodput_series", "delivered_rate_series", "jain_index", "normalized_throughput_gain"]


def _edges(t0: float, t1: float, bin_s: float) -> np.ndarray:
    if not t1 > t0:
        raise AnalysisError(f"time range is empty: t_end_s = {t1!r} is not after t_start_s = {t0!r}")
    n = int(np.ceil((t1 - t0) / bin_s - 1e-9))
    return t0 + bin_s * np.arange(n + 1)


def goodput_series(
    packets: pd.DataFrame,
    bin_s: float,
    flows: str | Iterable[str] | None = None,
    t_start_s: float = 0.0,
    t_end_s: float | None = None,
) -> pd.DataFrame:
    """Goodput per flow in time bins, from message deliveries.

    Bin k covers ``[t_start_s + k·bin_s, t_start_s + (k+1)·bin_s)``; its goodput is
    ``8 · Σ bytes / bin_s`` (bit/s) over the messages whose ``t_deliver`` falls in it
    (lost messages, NaN ``t_deliver``, count nowhere). ``t_end_s`` defaults to the last
    delivery; the last bin may stick out past it and is still divided by ``bin_s``.

    Returns a DataFrame indexed by bin start ``t_s``, one column per flow (bit/s).
    Needs the ``packets`` columns ``flow, bytes, t_deliver``. Greedy (bulk) TCP flows
    may have no message rows; use :func:`delivered_rate_series` on the ``cwnd`` table.
    """
    require_columns(packets, ("flow", "bytes", "t_deliver"), "packets")
    bin_s = positive(bin_s, "bin_s")
    names = flow_names(packets, flows, "packets")
    t_deliver = packets["t_deliver"].to_numpy(dtype=float)
    if t_end_s is None:
        fin = t_deliver[np.isfinite(t_deliver)]
        if fin.size == 0:
            raise AnalysisError("packets: no message was delivered (give t_end_s)")
        t_end_s = float(fin.max())
        if t_end_s <= t_start_s:
            t_end_s = float(t_start_s) + bin_s
    edges = _edges(float(t_start_s), float(t_end_s), bin_s)
    nbins = edges.size - 1
    out = {}
    for name in names:
        p = rows_of(packets, name)
        t = p["t_deliver"].to_numpy(dtype=float)
        b = p["bytes"].to_numpy(dtype=float)
        ok = np.isfinite(t) & (t >= t_start_s)
        k = np.floor((t[ok] - t_start_s) / bin_s).astype(np.int64)
        inside = k < nbins
        # the last delivery exactly at t_end_s belongs to the last bin
        k = np.where((~inside) & (t[ok] <= t_end_s), nbins - 1, k)
        keep = k < nbins
        sums = np.bincount(k[keep], weights=b[ok][keep], minlength=nbins)
        out[name] = 8.0 * sums / bin_s
    return pd.DataFrame(out, index=pd.Index(edges[:-1], name="t_s"))


def delivered_rate_series(
    cwnd: pd.DataFrame,
    bin_s: float,
    pkt_bytes: float,
    flows: str | Iterable[str] | None = None,
    t_start_s: float = 0.0,
    t_end_s: float | None = None,
) -> pd.DataFrame:
    """Delivery rate per flow in time bins from the cumulative ``delivered_pkts``
    counter of the ``cwnd`` table (for flows without message rows, e.g. bulk TCP).

    The counter is linearly interpolated at the bin edges (held constant before the
    first / after the last sample), per connection (``conn``) and summed; rate of bin k = ``8 · pkt_bytes · ΔN_k / bin_s``
    (bit/s). ``t_end_s`` defaults to the last sample time. Same layout as
    :func:`goodput_series`.
    """
    require_columns(cwnd, ("flow", "t", "delivered_pkts"), "cwnd")
    bin_s = positive(bin_s, "bin_s")
    pkt_bytes = positive(pkt_bytes, "pkt_bytes")
    names = flow_names(cwnd, flows, "cwnd")
    if t_end_s is None:
        t_end_s = float(cwnd["t"].max())
    edges = _edges(float(t_start_s), float(t_end_s), bin_s)
    out = {}
    for name in names:
        rows = rows_of(cwnd, name)
        # the counter is per socket: a flow over several connections sums its sockets
        socks = [g for _, g in rows.groupby("conn", sort=True)] if "conn" in rows.columns else [rows]
        n = np.zeros(edges.size)
        for c in socks:
            c = c.sort_values("t", kind="stable")
            n += np.interp(edges, c["t"].to_numpy(dtype=float), c["delivered_pkts"].to_numpy(dtype=float))
        out[name] = 8.0 * pkt_bytes * np.diff(n) / bin_s
    return pd.DataFrame(out, index=pd.Index(edges[:-1], name="t_s"))


def jain_index(throughputs) -> float:
    """Jain's fairness index ``J = (Σ x_i)² / (n · Σ x_i²)`` (Jain, Chiu & Hawe 1984).

    1 when all flows get the same, 1/n when one flow gets everything. Takes any
    non-negative rates (a list, array or Series, e.g. ``run.flows.goodput_bps``);
    NaN entries are an error, as is an all-zero vector (the index is undefined).
    """
    x = as_1d(throughputs, "throughputs")
    if x.size == 0:
        raise AnalysisError("jain_index: no flows")
    if not np.isfinite(x).all():
        raise AnalysisError("jain_index: throughputs must be finite (got NaN or inf)")
    if (x < 0).any():
        raise AnalysisError("jain_index: throughputs must be >= 0")
    sq = float(np.sum(x * x))
    if sq == 0:
        raise AnalysisError("jain_index: all throughputs are zero (index undefined)")
    return float(np.sum(x) ** 2 / (x.size * sq))


def normalized_throughput_gain(achieved_bps, capacity_bps: float, n_flows: int | None = None) -> float:
    """Normalised Throughput Gain (Wei thesis §3.6, Figs 3.16, 3.19, 3.25-3.26):

        NTG = (x̄ - x*) / x*,   x* = c / N (the fair share),

    where x̄ is the achieved throughput averaged over the participating flows
    (``achieved_bps``: one flow's rate or the rates of a group, e.g. the paced flows
    of a mix) and N is the number of flows sharing the bottleneck (default: the number
    of rates given). NTG > 0: the group got more than its fair share.
    """
    x = as_1d(np.atleast_1d(achieved_bps), "achieved_bps")
    if x.size == 0 or not np.isfinite(x).all():
        raise AnalysisError("achieved_bps: need at least one finite rate")
    c = positive(capacity_bps, "capacity_bps")
    n = x.size if n_flows is None else int(n_flows)
    if n < 1 or (n_flows is not None and n != n_flows):
        raise AnalysisError(f"n_flows must be a positive integer, got {n_flows!r}")
    if n < x.size:
        raise AnalysisError(f"n_flows = {n} is smaller than the {x.size} rates given")
    fair = c / n
    return float((x.mean() - fair) / fair)
