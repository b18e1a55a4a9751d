"""Loss events, loss synchronisation, fairness convergence and loss-process burstiness
(Wei, "Microscopic Behavior of Internet Congestion Control", PhD thesis 2007, Ch. 3).

All functions take the ``drops`` table of any run (simulator or emulator: columns
``link, t, flow, seq, kind, reason``); the burstiness analysis also takes a plain
array of loss times (seconds), e.g. from a measured path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from ._common import AnalysisError, as_1d, positive, require_columns

__all__ = [
    "DROP_COLUMNS",
    "select_losses",
    "label_loss_events",
    "loss_events",
    "SyncRate",
    "loss_sync_rate",
    "fairness_convergence_time",
    "loss_intervals_rtt",
    "LossBurstiness",
    "loss_burstiness",
    "plot_loss_burstiness",
]

DROP_COLUMNS = ("link", "t", "flow", "seq", "kind", "reason")


def select_losses(
    drops: pd.DataFrame,
    kinds: Sequence[str] = ("drop",),
    link: str | None = None,
    reasons: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Rows of ``drops`` with ``kind`` in ``kinds`` (``"drop"`` and/or ``"mark"``: a
    mark is the congestion signal under ECN / Persistent ECN), optionally one ``link``
    and some ``reason`` values (e.g. ``["overflow"]`` for buffer overflow only), sorted
    by time. Needs the columns ``t, flow, kind`` (and ``link``/``reason`` if filtered)."""
    req = ["t", "flow", "kind"] + (["link"] if link is not None else []) + (["reason"] if reasons is not None else [])
    require_columns(drops, req, "drops")
    kinds = [kinds] if isinstance(kinds, str) else list(kinds)
    bad = [k for k in kinds if k not in ("drop", "mark")]
    if not kinds or bad:
        raise AnalysisError(f"kinds: {kinds!r} must be a non-empty subset of ['drop', 'mark']")
    keep = np.array(drops["kind"].astype(str).isin(kinds).to_numpy(), dtype=bool)
    if link is not None:
        keep &= (drops["link"].astype(str) == str(link)).to_numpy()
    if reasons is not None:
        keep &= drops["reason"].astype(str).isin([str(r) for r in reasons]).to_numpy()
    out = drops[keep].copy()
    out["flow"] = out["flow"].astype(str)
    if not np.isfinite(out["t"].to_numpy(dtype=float)).all():
        raise AnalysisError("drops: column t has non-finite times")
    return out.sort_values("t", kind="stable").reset_index(drop=True)


def _rtt_of(rtt_s: float | Mapping[str, float], flow: str | None) -> float:
    if isinstance(rtt_s, Mapping):
        if flow is None:
            raise AnalysisError("rtt_s: a per-flow mapping needs per_flow=True")
        if flow not in rtt_s:
            raise AnalysisError(f"rtt_s: no RTT given for flow {flow!r} (given: {sorted(rtt_s)})")
        return positive(rtt_s[flow], f"rtt_s[{flow!r}]")
    return positive(rtt_s, "rtt_s")


def _segment(t: np.ndarray, rtt: float, mode: str) -> np.ndarray:
    """Event index of each (sorted) loss time."""
    ev = np.empty(t.size, dtype=np.int64)
    k = -1
    start = prev = -np.inf
    for i, ti in enumerate(t):
        new = (ti >= start + rtt) if mode == "window" else (ti - prev >= rtt)
        if new:
            k += 1
            start = ti
        ev[i] = k
        prev = ti
    return ev


def label_loss_events(
    drops: pd.DataFrame,
    rtt_s: float | Mapping[str, float],
    per_flow: bool = False,
    mode: str = "window",
    kinds: Sequence[str] = ("drop",),
    link: str | None = None,
    reasons: Sequence[str] | None = None,
) -> pd.DataFrame:
    """The selected losses (see :func:`select_losses`) with an ``event`` column.

    Segmentation (Wei thesis §3.1, exact procedure): "take the first packet loss that is
    not part of any previous loss events as the beginning of a new loss event and
    consider all the subsequent packet losses within one round-trip time as in the same
    loss event". ``mode="window"`` (default) does exactly that: an event started at t0
    holds the losses with ``t0 <= t < t0 + rtt_s``. ``mode="gap"`` instead chains
    losses: a loss less than ``rtt_s`` after the *previous* loss joins its event (an
    event can then last longer than one RTT).

    ``per_flow=False``: congestion events of the link (all flows together; what the
    loss synchronisation rate needs). ``per_flow=True``: each flow's own loss events (a
    TCP sender reacts once per such event); ``rtt_s`` may then map flow -> RTT.
    Event ids are 0, 1, ... in order of event start.
    """
    if mode not in ("window", "gap"):
        raise AnalysisError(f"mode: {mode!r} is not 'window' or 'gap'")
    sel = select_losses(drops, kinds, link, reasons)
    if sel.empty:
        sel["event"] = pd.Series(dtype=np.int64)
        return sel
    t = sel["t"].to_numpy(dtype=float)
    if not per_flow:
        sel["event"] = _segment(t, _rtt_of(rtt_s, None), mode)
        return sel
    local = np.empty(t.size, dtype=np.int64)
    key = np.empty(t.size, dtype=object)
    for name, idx in sel.groupby("flow", sort=False).indices.items():
        local[idx] = _segment(t[idx], _rtt_of(rtt_s, str(name)), mode)
        key[idx] = [(str(name), int(v)) for v in local[idx]]
    # global ids in order of event start time
    starts = {}
    for i in range(t.size):
        starts.setdefault(key[i], t[i])
    order = sorted(starts, key=lambda k: (starts[k], k[0]))
    gid = {k: i for i, k in enumerate(order)}
    sel["event"] = np.array([gid[k] for k in key], dtype=np.int64)
    return sel


def loss_events(
    drops: pd.DataFrame,
    rtt_s: float | Mapping[str, float],
    per_flow: bool = False,
    mode: str = "window",
    kinds: Sequence[str] = ("drop",),
    link: str | None = None,
    reasons: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Loss events (segmentation of :func:`label_loss_events`), one row each:
    ``event, t_start, t_end, n_losses, n_flows, flows`` (``flows``: sorted tuple of the
    flows that lost a packet in the event; with ``per_flow=True`` it is that one flow).
    Times in seconds."""
    lab = label_loss_events(drops, rtt_s, per_flow, mode, kinds, link, reasons)
    rows = []
    for ev, g in lab.groupby("event", sort=True):
        fl = tuple(sorted(set(g["flow"])))
        rows.append((int(ev), float(g["t"].min()), float(g["t"].max()), len(g), len(fl), fl))
    return pd.DataFrame(rows, columns=["event", "t_start", "t_end", "n_losses", "n_flows", "flows"])


@dataclass
class SyncRate:
    """Loss synchronisation rate λ = (1/N) Σ λ_i and its parts."""

    rate: float
    per_flow: pd.Series
    n_events: int


def loss_sync_rate(
    drops: pd.DataFrame,
    rtt_s: float,
    flows: Iterable[str] | None = None,
    mode: str = "window",
    kinds: Sequence[str] = ("drop",),
    link: str | None = None,
    reasons: Sequence[str] | None = None,
) -> SyncRate:
    """Loss synchronisation rate (Wei thesis §3.1, Tables 3.1-3.2).

    A loss event is a congestion episode of the bottleneck (losses of *all* flows,
    segmented as in :func:`label_loss_events` with one RTT ``rtt_s``). λ_i, the
    probability that flow i detects at least one loss in a loss event, is estimated as
    (number of events in which flow i lost at least one packet) / (number of events);
    the reported rate is the average λ = (1/N) Σ_i λ_i over the N flows.

    ``flows``: the flows sharing the bottleneck (e.g. ``run.flows.flow``). Give it:
    a flow that never lost a packet has λ_i = 0 but does not appear in ``drops``.
    Default: the flows present in the selected losses.
    """
    lab = label_loss_events(drops, rtt_s, False, mode, kinds, link, reasons)
    if lab.empty:
        raise AnalysisError("loss_sync_rate: no losses selected (no loss events)")
    names = sorted(set(lab["flow"])) if flows is None else [str(f) for f in flows]
    if not names:
        raise AnalysisError("flows: empty list of flows")
    unknown = sorted(set(lab["flow"]) - set(names))
    if unknown:
        raise AnalysisError(f"drops has losses of flow(s) {unknown} not in flows")
    n_ev = int(lab["event"].nunique())
    hit = lab.groupby("flow")["event"].nunique()
    per = pd.Series({f: float(hit.get(f, 0)) / n_ev for f in names}, name="sync_rate")
    return SyncRate(rate=float(per.mean()), per_flow=per, n_events=n_ev)


def fairness_convergence_time(
    rates_bps: pd.DataFrame,
    capacity_bps: float,
    threshold: float = 0.8,
    n_flows: int | None = None,
    bin_s: float | None = None,
) -> float:
    """Fairness convergence time F (Wei thesis eq. 3.7):

        F = min{ t | ∀ τ > t : min_i x̄_i(τ) > threshold · x* },
        x̄_i(τ) = (1/τ) ∫_0^τ x_i(u) du,   x* = c / N,   threshold = 0.8.

    ``rates_bps``: rate of each flow (columns) in consecutive bins of equal width,
    indexed by bin start (as from :func:`goodput_series`); time 0 of the integral is
    the first bin's start. Rates are taken constant inside a bin, so x̄_i is a ratio of
    linear functions on each bin, monotone there, and F is computed exactly (the
    crossing time inside the bin after the last violation). N defaults to the number of
    columns. Returns F in seconds from the first bin start, 0.0 if the condition holds
    from the start, ``inf`` if it still fails at the end of the series.
    """
    if not isinstance(rates_bps, pd.DataFrame) or rates_bps.shape[1] == 0 or rates_bps.shape[0] == 0:
        raise AnalysisError("rates_bps: need a DataFrame with at least one bin (row) and one flow (column)")
    x = rates_bps.to_numpy(dtype=float)
    if not np.isfinite(x).all() or (x < 0).any():
        raise AnalysisError("rates_bps: rates must be finite and >= 0")
    c = positive(capacity_bps, "capacity_bps")
    thr_frac = positive(threshold, "threshold")
    n = rates_bps.shape[1] if n_flows is None else int(n_flows)
    if n < rates_bps.shape[1]:
        raise AnalysisError(f"n_flows = {n_flows!r} is smaller than the {rates_bps.shape[1]} flows given")
    t_idx = np.asarray(rates_bps.index, dtype=float)
    if bin_s is None:
        if t_idx.size < 2:
            raise AnalysisError("rates_bps has one bin: give bin_s")
        d = np.diff(t_idx)
        bin_s = float(d[0])
        if bin_s <= 0 or not np.allclose(d, bin_s, rtol=1e-6, atol=1e-12):
            raise AnalysisError("rates_bps: index must be increasing bin starts of equal width")
    bin_s = positive(bin_s, "bin_s")
    thr = thr_frac * c / n
    cum = np.cumsum(x, axis=0) * bin_s  # bits at bin ends
    tau = bin_s * np.arange(1, x.shape[0] + 1)  # bin ends, from t0 = 0
    avg = cum / tau[:, None]
    bad = (avg <= thr).any(axis=1)
    if bad[-1]:
        return float("inf")
    if not bad.any():
        # no violation at any bin end; on (0, τ_1] x̄_i(τ) = x_i(bin 0) = x̄_i(τ_1) > thr
        return 0.0
    k = int(np.nonzero(bad)[0][-1])  # last bin end with a violation
    f = tau[k]
    for i in np.nonzero(avg[k] <= thr)[0]:
        # (A_i + x_i (τ - τ_k)) / τ = thr  ->  τ = (A_i - x_i τ_k) / (thr - x_i)
        xi = x[k + 1, i]
        f = max(f, (cum[k, i] - xi * tau[k]) / (thr - xi))
    return float(f)


# ---- loss-process burstiness (Wei §3.2, §4.3; Figs 3.1-3.3) ---------------------------

def loss_intervals_rtt(
    losses,
    rtt_s: float | Mapping[str, float],
    per_flow: bool = False,
    kinds: Sequence[str] = ("drop",),
    link: str | None = None,
    reasons: Sequence[str] | None = None,
) -> np.ndarray:
    """Loss intervals (time between consecutive losses) in units of RTT.

    ``losses``: a ``drops`` table (filtered with :func:`select_losses`) or a plain
    array of loss times in seconds (a measured path; need not be sorted).
    ``per_flow=True`` (drops table only): intervals within each flow's own losses,
    each normalised by that flow's RTT (``rtt_s`` may map flow -> RTT); otherwise the
    intervals of the whole loss process normalised by one ``rtt_s``.
    """
    if isinstance(losses, pd.DataFrame):
        sel = select_losses(losses, kinds, link, reasons)
        if not per_flow:
            t = sel["t"].to_numpy(dtype=float)
            return np.diff(t) / _rtt_of(rtt_s, None)
        parts = [np.diff(g["t"].to_numpy(dtype=float)) / _rtt_of(rtt_s, str(name))
                 for name, g in sel.groupby("flow", sort=True)]
        return np.concatenate(parts) if parts else np.array([])
    if per_flow:
        raise AnalysisError("per_flow needs a drops table (an array of times has no flows)")
    t = as_1d(losses, "losses")
    if not np.isfinite(t).all():
        raise AnalysisError("losses: loss times must be finite")
    return np.diff(np.sort(t)) / _rtt_of(rtt_s, None)


@dataclass
class LossBurstiness:
    """Loss intervals in RTTs and their comparison with a Poisson process of the same
    rate (exponential intervals with the same mean)."""

    intervals_rtt: np.ndarray
    #: Poisson rate in losses per RTT: 1 / mean interval.
    rate_per_rtt: float
    #: threshold (RTTs) -> empirical P[I <= threshold]
    frac_within: dict = field(default_factory=dict)
    #: threshold (RTTs) -> Poisson P[I <= threshold] = 1 - exp(-rate_per_rtt · threshold)
    poisson_within: dict = field(default_factory=dict)
    label: str = ""

    @property
    def n_intervals(self) -> int:
        return int(self.intervals_rtt.size)

    @property
    def frac_zero(self) -> float:
        """Fraction of intervals that are exactly 0 (simultaneous losses; not visible
        on a log axis)."""
        return float(np.mean(self.intervals_rtt == 0))

    def cdf(self, x_rtt=None) -> pd.DataFrame:
        """Empirical CDF P[I <= x] and the Poisson CDF 1 - exp(-μx) on a grid of x
        (RTTs; default 321 log-spaced points from 1e-6 to 100: drops of one micro-burst
        arriving over a fast access link are microseconds apart)."""
        x = np.logspace(-6, 2, 321) if x_rtt is None else as_1d(x_rtt, "x_rtt")
        iv = np.sort(self.intervals_rtt)
        emp = np.searchsorted(iv, x, side="right") / iv.size
        return pd.DataFrame({"x_rtt": x, "empirical": emp, "poisson": 1.0 - np.exp(-self.rate_per_rtt * x)})

    def pdf(self, edges_rtt=None) -> pd.DataFrame:
        """Density per RTT on bins (default 48 log-spaced bins, 6 per decade, from 1e-6 to 100 RTT):
        empirical count / (n · width) and the Poisson probability of the bin / width,
        ``(e^{-μa} - e^{-μb}) / (b - a)``. Intervals outside the bins (e.g. exactly 0,
        simultaneous drops) are not in any bin but count in n."""
        e = np.logspace(-6, 2, 49) if edges_rtt is None else as_1d(edges_rtt, "edges_rtt")
        if e.size < 2 or (np.diff(e) <= 0).any():
            raise AnalysisError("edges_rtt must be increasing with at least 2 edges")
        cnt, _ = np.histogram(self.intervals_rtt, bins=e)
        w = np.diff(e)
        mu = self.rate_per_rtt
        pois = (np.exp(-mu * e[:-1]) - np.exp(-mu * e[1:])) / w
        return pd.DataFrame({"lo_rtt": e[:-1], "hi_rtt": e[1:], "mid_rtt": np.sqrt(e[:-1] * e[1:]),
                             "empirical": cnt / (self.n_intervals * w), "poisson": pois})


def loss_burstiness(
    losses,
    rtt_s: float | Mapping[str, float],
    thresholds_rtt: Sequence[float] = (0.01, 1.0),
    per_flow: bool = False,
    kinds: Sequence[str] = ("drop",),
    link: str | None = None,
    reasons: Sequence[str] | None = None,
    label: str = "",
) -> LossBurstiness:
    """Loss-process burstiness (Wei thesis §3.2 and §4.3, Figs 3.1-3.3).

    Loss intervals normalised by the RTT (:func:`loss_intervals_rtt`) are compared with
    a Poisson process of the same rate, whose intervals are exponential with the same
    mean: μ = 1 / mean(interval) losses per RTT, P_Poisson[I <= x] = 1 - e^{-μx}.
    ``frac_within[x]`` is the empirical P[I <= x] for each threshold (default 1 % of an
    RTT and 1 RTT: the thesis found ~80 % of NS-2 losses within 0.01 RTT and, on
    PlanetLab, 40 % within 0.01 RTT and 60 % within 1 RTT).

    ``losses``: a ``drops`` table of any run or an array of loss times (s).
    """
    iv = loss_intervals_rtt(losses, rtt_s, per_flow, kinds, link, reasons)
    if iv.size == 0:
        raise AnalysisError("loss_burstiness needs at least 2 losses (1 interval)")
    mean = float(iv.mean())
    if mean <= 0:
        raise AnalysisError("loss_burstiness: all losses at the same instant (rate undefined)")
    mu = 1.0 / mean
    ths = [positive(v, "thresholds_rtt") for v in thresholds_rtt]
    frac = {v: float(np.mean(iv <= v)) for v in ths}
    pois = {v: float(1.0 - np.exp(-mu * v)) for v in ths}
    return LossBurstiness(intervals_rtt=iv, rate_per_rtt=mu, frac_within=frac, poisson_within=pois, label=label)


def plot_loss_burstiness(results, path: str | Path | None = None):
    """Figure in the style of Wei Figs 3.1-3.3: left, CDF of the normalised loss
    interval (log x) with the Poisson CDF of the same rate; right, the PDF (log y)
    with the Poisson density. ``results``: one :class:`LossBurstiness` or a list of
    them (labels from ``.label``). Writes ``path`` if given (``.png`` or ``.svg``).
    Returns the matplotlib Figure (its own canvas: no pyplot, the backend untouched)."""
    from ccbench.plots import new_figure

    items = [results] if isinstance(results, LossBurstiness) else list(results)
    if not items or not all(isinstance(r, LossBurstiness) for r in items):
        raise AnalysisError("results: give one LossBurstiness or a list of them")
    if path is not None and Path(path).suffix.lower() not in (".png", ".svg"):
        raise AnalysisError(f"path: {str(path)!r} must end in .png or .svg")
    fig, (a1, a2) = new_figure(1, 2, figsize=(10, 4))
    floor = np.inf  # y floor of the PDF panel: a decade below the smallest empirical density
    for i, r in enumerate(items):
        name = r.label or f"losses {i}"
        c = r.cdf()
        (ln,) = a1.step(c["x_rtt"], c["empirical"], where="post", label=name)
        a1.plot(c["x_rtt"], c["poisson"], ls="--", color=ln.get_color(), label=f"Poisson ({name})")
        p = r.pdf()
        pos = p["empirical"] > 0
        a2.plot(p["mid_rtt"][pos], p["empirical"][pos], marker="o", ms=3, color=ln.get_color(), label=name)
        a2.plot(p["mid_rtt"], p["poisson"], ls="--", color=ln.get_color(), label=f"Poisson ({name})")
        if pos.any():
            floor = min(floor, float(p["empirical"][pos].min()) / 10)
    a1.set_xscale("log")
    a1.set_xlabel("loss interval / RTT")
    a1.set_ylabel("CDF")
    a1.axvline(0.01, color="grey", lw=0.6)
    a1.axvline(1.0, color="grey", lw=0.6)
    a2.set_xscale("log")
    a2.set_yscale("log")
    if np.isfinite(floor):
        a2.set_ylim(bottom=floor)
    a2.set_xlabel("loss interval / RTT")
    a2.set_ylabel("PDF (per RTT)")
    for a in (a1, a2):
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize="small")
    if path is not None:
        fig.savefig(path)
    return fig
