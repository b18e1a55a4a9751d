"""Per-message delay of a run's ``packets`` table: components, distributions, jitter,
late fraction against a playout deadline.

Delay of message i (Lübben & Fidler, Sec. V-B; note §1.7, timestamps t1..t4):

* total     ``t_deliver - t_write``     (Δ_e2e = t4 - t1)
* sender    ``t_first_tx - t_write``    (Δ_snd = t2 - t1, send-buffer / stack queueing)
* network   ``t_arrive - t_first_tx``   (Δ_net = t3 - t2, includes retransmission time,
  because t2 is the *first* transmission and t3 the arrival of the copy that got through)
* receiver  ``t_deliver - t_arrive``    (Δ_rcv = t4 - t3, head-of-line blocking)

The three parts add up to the total for every delivered message. Messages that were
never delivered have NaN delays and are left out of the distributions; they count as
late in :func:`late_fraction`.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from ._common import AnalysisError, as_1d, flow_names, positive, require_columns, rows_of
from .distribution import ccdf, ecdf

__all__ = [
    "PACKET_COLUMNS",
    "COMPONENTS",
    "delay_components",
    "flow_delays",
    "ecdf",
    "ccdf",
    "delay_cdf",
    "delay_percentiles",
    "jitter_rfc3550",
    "jitter_mean_abs_diff",
    "jitter",
    "late_fraction",
    "decomposition_summary",
    "additional_queuing_delay",
]

PACKET_COLUMNS = ("flow", "msg", "bytes", "t_write", "t_first_tx", "t_arrive", "t_deliver")

#: component name -> (later timestamp, earlier timestamp)
COMPONENTS = {
    "total": ("t_deliver", "t_write"),
    "sender": ("t_first_tx", "t_write"),
    "network": ("t_arrive", "t_first_tx"),
    "receiver": ("t_deliver", "t_arrive"),
}


def _component(component: str) -> tuple[str, str]:
    if component not in COMPONENTS:
        raise AnalysisError(f"component: {component!r} is not one of {list(COMPONENTS)}")
    return COMPONENTS[component]


def delay_components(packets: pd.DataFrame, flows: str | Iterable[str] | None = None) -> pd.DataFrame:
    """Per-message delay series with its decomposition (Lübben & Fidler Sec. V-B).

    Returns one row per message of the selected flows, sorted by flow then ``msg``, with
    columns ``flow, msg, bytes, t_write, total_s, sender_s, network_s, receiver_s,
    delivered``. ``total_s = sender_s + network_s + receiver_s`` (NaN if not delivered).
    """
    require_columns(packets, PACKET_COLUMNS, "packets")
    names = flow_names(packets, flows, "packets")
    parts = []
    for name in names:
        p = rows_of(packets, name).sort_values("msg", kind="stable")
        out = pd.DataFrame({
            "flow": name,
            "msg": p["msg"].to_numpy(),
            "bytes": p["bytes"].to_numpy(),
            "t_write": p["t_write"].to_numpy(dtype=float),
        })
        for comp, (a, b) in COMPONENTS.items():
            out[f"{comp}_s"] = p[a].to_numpy(dtype=float) - p[b].to_numpy(dtype=float)
        out["delivered"] = np.isfinite(p["t_deliver"].to_numpy(dtype=float))
        parts.append(out)
    return pd.concat(parts, ignore_index=True)


def flow_delays(packets: pd.DataFrame, flow: str, component: str = "total") -> np.ndarray:
    """Delays (s) of the delivered messages of one flow in message order (NaNs dropped).

    Raises :class:`AnalysisError` if the flow has no rows or no finite delay."""
    a, b = _component(component)
    require_columns(packets, PACKET_COLUMNS, "packets")
    name = flow_names(packets, flow, "packets")[0]
    p = rows_of(packets, name).sort_values("msg", kind="stable")
    d = p[a].to_numpy(dtype=float) - p[b].to_numpy(dtype=float)
    d = d[np.isfinite(d)]
    if d.size == 0:
        raise AnalysisError(f"flow {name!r} has no delivered message with a finite {component} delay")
    return d


def delay_cdf(packets: pd.DataFrame, flows: str | Iterable[str] | None = None, component: str = "total") -> pd.DataFrame:
    """Delay CDF and CCDF per flow: columns ``flow, delay_s, cdf, ccdf`` where
    ``cdf = P[D <= delay_s]`` and ``ccdf = P[D > delay_s]`` over delivered messages
    (the CCDF with a log y axis is how Lübben & Fidler and Brosh et al. show delays)."""
    require_columns(packets, PACKET_COLUMNS, "packets")
    parts = []
    for name in flow_names(packets, flows, "packets"):
        x, f = ecdf(flow_delays(packets, name, component))
        parts.append(pd.DataFrame({"flow": name, "delay_s": x, "cdf": f, "ccdf": 1.0 - f}))
    return pd.concat(parts, ignore_index=True)


def delay_percentiles(
    packets: pd.DataFrame,
    q: Sequence[float] = (50, 95, 99),
    flows: str | Iterable[str] | None = None,
    component: str = "total",
    method: str = "linear",
) -> pd.DataFrame:
    """Delay percentiles per flow over delivered messages: columns ``flow``, ``n``,
    ``p<q>_s`` ... and ``max_s``.

    Brosh et al. (note §1) use the α-percentile ``argmax_x P{D <= x} <= α`` (the 95th
    is their headline metric, Tables 3-4); pass ``method="inverted_cdf"`` for exactly
    that empirical quantile, the default ``"linear"`` interpolates (numpy).
    """
    qs = [float(v) for v in np.atleast_1d(q)]
    if not qs or any(not (0 <= v <= 100) for v in qs):
        raise AnalysisError(f"q: percentiles must lie in [0, 100], got {list(q)!r}")
    rows = []
    require_columns(packets, PACKET_COLUMNS, "packets")
    for name in flow_names(packets, flows, "packets"):
        d = flow_delays(packets, name, component)
        vals = np.percentile(d, qs, method=method)
        rows.append([name, d.size, *vals, d.max()])
    cols = ["flow", "n", *[f"p{v:g}_s" for v in qs], "max_s"]
    return pd.DataFrame(rows, columns=cols)


def jitter_rfc3550(send_s, recv_s) -> np.ndarray:
    """RFC 3550 (Sec. 6.4.1, A.8) interarrival jitter estimate after each packet.

    Packets are taken in order of arrival (``recv_s``). With transit time
    ``T_i = R_i - S_i`` and ``D(i-1, i) = T_i - T_{i-1}``::

        J_i = J_{i-1} + (|D(i-1, i)| - J_{i-1}) / 16,   J_0 = 0

    Returns ``J`` for every packet in arrival order (first entry 0). Packets with a
    non-finite send or receive time (lost) are skipped. Units are those of the input.
    """
    s = as_1d(send_s, "send_s")
    r = as_1d(recv_s, "recv_s")
    if s.shape != r.shape:
        raise AnalysisError(f"send_s and recv_s differ in length ({s.size} vs {r.size})")
    ok = np.isfinite(s) & np.isfinite(r)
    s, r = s[ok], r[ok]
    if s.size == 0:
        raise AnalysisError("jitter_rfc3550: no packet with finite send and receive time")
    order = np.argsort(r, kind="stable")
    transit = (r - s)[order]
    j = np.zeros(transit.size)
    for i in range(1, transit.size):
        j[i] = j[i - 1] + (abs(transit[i] - transit[i - 1]) - j[i - 1]) / 16.0
    return j


def jitter_mean_abs_diff(delays_s) -> float:
    """Mean absolute delay variation between consecutive messages,
    ``(1/(n-1)) Σ_{i>=2} |D_i - D_{i-1}|`` (the unsmoothed IPDV-style average).
    Needs at least two finite delays (NaNs, i.e. lost messages, are removed first)."""
    d = as_1d(delays_s, "delays_s")
    d = d[np.isfinite(d)]
    if d.size < 2:
        raise AnalysisError(f"jitter_mean_abs_diff needs at least 2 finite delays, got {d.size}")
    return float(np.mean(np.abs(np.diff(d))))


def jitter(packets: pd.DataFrame, flows: str | Iterable[str] | None = None, component: str = "total") -> pd.DataFrame:
    """Three jitter measures per flow (seconds), over delivered messages:

    * ``rfc3550_s``: the RFC 3550 estimator after the last packet (what an RTCP
      receiver report carries), packets in delivery order (``t_deliver``, or the
      later timestamp of ``component``); ``rfc3550_mean_s``: its mean over the run;
    * ``mean_abs_diff_s``: mean |D_i - D_{i-1}| in message order;
    * ``std_s``: the standard deviation σ_D of the delay. **This is Brosh et al.'s
      jitter** (note §1: "jitter σ_D (standard deviation)"; their Tables 3-4 column is
      labelled "95% jitter" but the model output is σ_D). Population std (ddof=0).
    """
    a, b = _component(component)
    require_columns(packets, PACKET_COLUMNS, "packets")
    rows = []
    for name in flow_names(packets, flows, "packets"):
        p = rows_of(packets, name).sort_values("msg", kind="stable")
        d = flow_delays(packets, name, component)
        j = jitter_rfc3550(p[b].to_numpy(dtype=float), p[a].to_numpy(dtype=float))
        mad = jitter_mean_abs_diff(d) if d.size >= 2 else np.nan
        rows.append((name, d.size, j[-1], j.mean(), mad, float(np.std(d))))
    return pd.DataFrame(rows, columns=["flow", "n", "rfc3550_s", "rfc3550_mean_s", "mean_abs_diff_s", "std_s"])


def late_fraction(
    packets: pd.DataFrame,
    deadline_s: float,
    flows: str | Iterable[str] | None = None,
    lost_as_late: bool = True,
    written_before_s: float | None = None,
) -> pd.Series:
    """Fraction of messages later than a playout deadline (Brosh et al. §1, "application-
    level loss" ``P{D > deadline}``; VoIP target: at most 5 % late at 200 ms).

    A message is late if ``t_deliver - t_write > deadline_s``. Lost messages (NaN
    ``t_deliver``) are late when ``lost_as_late`` (default), else left out.
    ``written_before_s`` keeps only messages written before that time, so that messages
    still in flight when the run stopped are not counted as lost. Returns a Series
    indexed by flow.
    """
    require_columns(packets, PACKET_COLUMNS, "packets")
    deadline = positive(deadline_s, "deadline_s", allow_zero=True)
    out = {}
    for name in flow_names(packets, flows, "packets"):
        p = rows_of(packets, name)
        if written_before_s is not None:
            p = p[p["t_write"].to_numpy(dtype=float) < float(written_before_s)]
        d = p["t_deliver"].to_numpy(dtype=float) - p["t_write"].to_numpy(dtype=float)
        lost = ~np.isfinite(d)
        n = d.size if lost_as_late else int((~lost).sum())
        if n == 0:
            raise AnalysisError(f"flow {name!r} has no message to judge against the deadline")
        late = int((d[~lost] > deadline).sum()) + (int(lost.sum()) if lost_as_late else 0)
        out[name] = late / n
    return pd.Series(out, name="late_fraction")


def decomposition_summary(packets: pd.DataFrame, flows: str | Iterable[str] | None = None) -> pd.DataFrame:
    """Delay decomposition summary (Lübben & Fidler Sec. V-B; Brosh et al. Fig. 17b
    split delay into congestion-control backlog and loss recovery + HOL).

    One row per (flow, component) over the flow's delivered messages with all four
    timestamps finite: ``mean_s, p50_s, p95_s, max_s`` and ``share`` = mean of the
    component / mean total delay (the three parts' shares add to 1).
    """
    comp = delay_components(packets, flows)
    rows = []
    for name, g in comp.groupby("flow", sort=False):
        ok = np.isfinite(g[[f"{c}_s" for c in COMPONENTS]].to_numpy()).all(axis=1)
        g = g[ok]
        if g.empty:
            raise AnalysisError(f"flow {name!r} has no delivered message with all four timestamps")
        total_mean = g["total_s"].mean()
        for c in COMPONENTS:
            v = g[f"{c}_s"].to_numpy()
            share = v.mean() / total_mean if total_mean > 0 else np.nan
            rows.append((name, c, v.size, v.mean(), np.percentile(v, 50), np.percentile(v, 95), v.max(), share))
    return pd.DataFrame(rows, columns=["flow", "component", "n", "mean_s", "p50_s", "p95_s", "max_s", "share"])


def additional_queuing_delay(
    packets: pd.DataFrame,
    base_owd_s: float | None = None,
    flows: str | Iterable[str] | None = None,
) -> pd.DataFrame:
    """Additional queuing delay per message (Stewart et al., note §4 item 16: one-way
    delay minus the propagation delay RTT/2, measured across the bottleneck).

    Uses the network component ``t_arrive - t_first_tx`` as the one-way delay.
    ``base_owd_s``: the propagation (one-way) delay; None takes each flow's minimum
    observed network delay. Returns ``flow, msg, t_write, extra_s`` for messages that
    arrived.
    """
    comp = delay_components(packets, flows)
    if base_owd_s is not None:
        positive(base_owd_s, "base_owd_s", allow_zero=True)
    parts = []
    for name, g in comp.groupby("flow", sort=False):
        g = g[np.isfinite(g["network_s"].to_numpy())]
        if g.empty:
            raise AnalysisError(f"flow {name!r} has no message that arrived")
        base = float(g["network_s"].min()) if base_owd_s is None else float(base_owd_s)
        parts.append(pd.DataFrame({"flow": name, "msg": g["msg"].to_numpy(), "t_write": g["t_write"].to_numpy(),
                                   "extra_s": g["network_s"].to_numpy() - base}))
    return pd.concat(parts, ignore_index=True)
