"""Figures of a run: ``run.plot.goodput()``, ``.delay()``, ``.delay_ccdf()``,
``.cwnd()``, ``.queue()``, ``.decomposition()``.

Each method returns a matplotlib ``Figure`` and, given ``path``, writes it there (PNG,
SVG or PDF by suffix). They never change the run, and never touch pyplot or the
user's matplotlib backend: figures are ``matplotlib.figure.Figure`` objects with their
own Agg canvas (:func:`new_figure`), so a notebook's inline backend or a GUI backend
stays as it was. A figure shows in a notebook as the cell's value.

A figure that would be empty is not drawn: the method raises :class:`NothingToPlot`
with one line saying why (``no delay samples: flow 'bulk' is a bulk TCP flow without
messages``); a flow or link that is not in the run raises :class:`UnknownSelection`
naming the known ones. Flows left out of a figure that was drawn are listed in
``run.plot.notes``. A flow is named as in the run (``voip.down``) or by its scenario
name (``voip`` selects ``voip.down`` and ``voip.up``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Optional

import numpy as np
import pandas as pd

from ccbench.analysis.distribution import ccdf, ecdf
from ccbench.fmt import fmt_bytes, fmt_rate, fmt_time

if TYPE_CHECKING:  # pragma: no cover
    from ccbench.run import Run

__all__ = ["RunPlots", "PlotError", "NothingToPlot", "UnknownSelection", "new_figure", "save_figure", "legend"]

#: delay components: name -> (later timestamp, earlier timestamp) (Lübben & Fidler Sec. V-B)
COMPONENTS = {
    "total": ("t_deliver", "t_write"),
    "sender": ("t_first_tx", "t_write"),
    "network": ("t_arrive", "t_first_tx"),
    "receiver": ("t_deliver", "t_arrive"),
}
#: more legend entries than this go outside the axes, beside the plot
LEGEND_INSIDE_MAX = 4


class PlotError(ValueError):
    """A figure cannot be drawn as asked; the message is one line for the user."""


class NothingToPlot(PlotError):
    """The figure would be empty (no samples of that kind in the run)."""


class UnknownSelection(PlotError):
    """A flow or link that is not in the run (the message lists the known ones)."""


# ---- figures without pyplot ------------------------------------------------------------
def new_figure(nrows: int = 1, ncols: int = 1, figsize: tuple[float, float] = (7.0, 4.0), **subplot_kw: Any):
    """``(fig, axes)`` like ``plt.subplots`` but without pyplot: a ``Figure`` with its own
    Agg canvas and constrained layout, so no backend is selected or switched and no
    global figure list grows."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, **subplot_kw)
    return fig, axes


def save_figure(fig, target, fmt: Optional[str] = None, dpi: int = 120):
    """Writes ``fig`` to ``target``, a path (format from its suffix unless ``fmt``) or a
    binary file object (give ``fmt``). SVG text is drawn as paths (no font needed) and
    carries no date, so the same run gives the same file."""
    import matplotlib

    if fmt is None:
        fmt = Path(target).suffix.lstrip(".").lower() or "png"
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": "ccbench"}):
        fig.savefig(target, format=fmt, dpi=dpi, metadata={"Date": None} if fmt == "svg" else None)
    return target


def legend(fig, ax, fontsize: str = "small") -> None:
    """A legend inside ``ax`` when it is short, else beside the axes (outside the
    plotted area), so a dense plot keeps its lines visible."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    if len(handles) <= LEGEND_INSIDE_MAX:
        ax.legend(fontsize=fontsize)
    else:
        fig.legend(handles, labels, loc="outside right upper", fontsize=fontsize, frameon=False)


def _finish(fig, path):
    if path is not None:
        save_figure(fig, path)
    return fig


def _rate_scale(max_bps: float) -> tuple[float, str]:
    for div, unit in ((1e9, "Gbit/s"), (1e6, "Mbit/s"), (1e3, "kbit/s")):
        if max_bps >= div:
            return div, unit
    return 1.0, "bit/s"


def nice_bin(duration_s: float, bins: int = 60) -> float:
    """The smallest 1-2-5 step width that cuts ``duration_s`` into at most ``bins`` bins."""
    target = max(duration_s, 1e-3) / bins
    exp = math.floor(math.log10(target))
    for m in (1, 2, 5, 10):
        if m * 10**exp >= target * (1 - 1e-9):
            return float(m * 10**exp)
    return float(10 ** (exp + 1))  # pragma: no cover


def seconds(value: Any, what: str) -> float:
    """A positive duration: a unit string (``"500ms"``) or a number of seconds."""
    if isinstance(value, str):
        from ccbench.scenario.units import UnitError, parse_duration

        try:
            return parse_duration(value, positive=True) / 1e9
        except UnitError as e:
            raise PlotError(f"{what}: {value!r} {e}") from None
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise PlotError(f"{what}: {value!r} is not a duration (accepted: a unit string like \"500ms\" or seconds)") from None
    if not (math.isfinite(v) and v > 0):
        raise PlotError(f"{what}: {value!r} is not a positive duration")
    return v


# ---- what the run knows about its flows and links -----------------------------------------
def link_info(meta: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Rate and queue limit of every link named in the run's simulator config:
    ``{name: {"rate_bps", "limit", "limit_unit" ("B" or "pkt"), "qdisc"}}``. Link names
    as the engine gives them (``ccsim::topology``): ``bottleneck_down``/``_up``,
    ``hop{i}_fwd``/``_rev``, graph links by name or ``from->to``."""
    topo = (meta.get("sim_config") or {}).get("topology") or {}
    links: dict[str, dict] = {}
    kind = topo.get("kind")
    if kind == "dumbbell":
        b = topo.get("bottleneck", {})
        links = {f"bottleneck_{d}": b[d] for d in ("down", "up") if d in b}
    elif kind == "parking_lot":
        for i in range(int(topo.get("hops", 0))):
            for side, key in (("fwd", "hop_links"), ("rev", "reverse_links")):
                lst = topo.get(key) or []
                if lst:
                    links[f"hop{i}_{side}"] = lst[i] if i < len(lst) else lst[0]
    elif kind == "graph":
        for lk in topo.get("links", []):
            links[lk.get("name") or f"{lk['from']}->{lk['to']}"] = lk
    return {name: {"rate_bps": float(lk.get("rate_bps", "nan")), **_limit(lk.get("queue") or {})} for name, lk in links.items()}


def _limit(q: dict[str, Any]) -> dict[str, Any]:
    """The hard limit of a queue discipline and its unit, with the engine's defaults
    (pfifo 1000 packets; RED bytes, tc-red's 400000; CoDel, PIE 1000 and FQ-CoDel
    10240 packets as in Linux; P-ECN in its ``unit``)."""
    kind = q.get("kind", "droptail")
    if kind == "droptail":
        unit = "pkt" if q.get("rule", "packets") == "packets" else "B"
        return {"qdisc": kind, "limit": q.get("limit", 1000), "limit_unit": unit}
    if kind == "red":
        return {"qdisc": kind, "limit": q.get("limit", 400_000), "limit_unit": "B"}
    if kind == "pecn":
        return {"qdisc": kind, "limit": q.get("limit", 1000), "limit_unit": "B" if q.get("unit") == "bytes" else "pkt"}
    default = 10_240 if kind == "fq_codel" else 1000
    return {"qdisc": kind, "limit": q.get("limit", default), "limit_unit": "pkt"}


#: (flow, what is true of it, the same said of several flows)
Reason = tuple[str, str, str]


def explain(reasons: list[Reason]) -> str:
    """One line for the flows left out of a figure, flows with the same reason together:
    ``flow 'a' is a UDP flow (...)``, ``flows 'b' and 'c' are bulk TCP flows ...``."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name, one, many in reasons:
        groups.setdefault((one, many), []).append(name)
    parts = []
    for (one, many), names in groups.items():
        if len(names) == 1:
            parts.append(f"flow {names[0]!r} {one}")
        else:
            listed = ", ".join(repr(n) for n in names[:-1]) + f" and {names[-1]!r}"
            parts.append(f"flows {listed} {many}")
    return "; ".join(parts)


class RunPlots:
    """The figures of one run (``run.plot``)."""

    def __init__(self, run: "Run"):
        self.run = run
        #: flows or links a drawn figure left out, and why (one line each)
        self.notes: list[str] = []

    # ---- selection -------------------------------------------------------------------
    def flow_names(self) -> list[str]:
        """Every flow of the run, in the order of its ``flows`` table."""
        names: list[str] = []
        for table in (self.run.flows, self.run.packets, self.run.cwnd):
            if "flow" in table.columns:
                for f in pd.unique(table["flow"].astype(str)):
                    if f not in names:
                        names.append(f)
        return names

    def select_flows(self, flows: str | Iterable[str] | None) -> list[str]:
        """The flows named (exact run names, or a scenario name for its ``name.*`` and
        ``name[i]`` flows); all flows for None. Unknown names raise :class:`UnknownSelection`."""
        known = self.flow_names()
        if flows is None:
            return known
        out: list[str] = []
        for f in [flows] if isinstance(flows, str) else [str(x) for x in flows]:
            # "voip" is voip.down and voip.up (direction = "both"), "web" is web[0], web[1], ...
            hits = [f] if f in known else [k for k in known if k.startswith((f + ".", f + "["))]
            if not hits:
                raise UnknownSelection(f"flow {f!r} is not in this run (flows: {', '.join(known) or 'none'})")
            out += [h for h in hits if h not in out]
        return out

    def _color(self, name: str) -> str:
        """One colour per flow, the same in every figure of the run."""
        names = self.flow_names()
        i = names.index(name) if name in names else len(names)
        return f"C{i % 10}"

    def _flow_row(self, name: str) -> Optional[pd.Series]:
        f = self.run.flows
        sel = f[f["flow"].astype(str) == name] if "flow" in f.columns else f.iloc[0:0]
        return sel.iloc[0] if len(sel) else None

    def _app_kind(self, name: str) -> Optional[str]:
        for fl in (self.run.meta.get("sim_config") or {}).get("flows", []):
            if fl.get("name") == name:
                return (fl.get("app") or {}).get("kind")
        return None

    def _transport(self, name: str) -> str:
        row = self._flow_row(name)
        return str(row["transport"]) if row is not None and "transport" in row.index else ""

    def _why_no_messages(self, name: str, rows: pd.DataFrame) -> "Reason":
        if len(rows) == 0:
            if self._app_kind(name) == "bulk":
                t = self._transport(name).upper() or "TCP"
                return (name, f"is a bulk {t} flow without messages", f"are bulk {t} flows without messages")
            return (name, "wrote no message", "wrote no message")
        n = len(rows)
        return (name, f"delivered none of its {n} messages", f"delivered none of their {n} messages each")

    def _delays(self, name: str, component: str) -> tuple[np.ndarray, Optional["Reason"]]:
        """Finite delays (s) of one flow's messages, or the reason there are none."""
        p = self.run.packets
        rows = p[(p["flow"].astype(str) == name).to_numpy()]
        a, b = COMPONENTS[component]
        d = (rows[a] - rows[b]).to_numpy(dtype=float)
        d = d[np.isfinite(d)]
        return (d, None) if d.size else (d, self._why_no_messages(name, rows))

    def _duration_s(self) -> float:
        ns = (self.run.meta.get("sim_config") or {}).get("duration_ns")
        if ns:
            return float(ns) / 1e9
        ts = [self.run.packets["t_deliver"].max(), self.run.cwnd["t"].max() if len(self.run.cwnd) else np.nan,
              self.run.queue["t"].max() if len(self.run.queue) else np.nan]
        ts = [float(t) for t in ts if pd.notna(t)]
        return max(ts) if ts else 1.0

    # ---- goodput over time -----------------------------------------------------------
    def goodput_series(self, flows: str | Iterable[str] | None = None, bin: Any = None) -> pd.DataFrame:
        """Goodput per flow (bit/s) in bins of ``bin`` (a unit string or seconds;
        default: about 60 bins over the run, :func:`nice_bin`) over the run: from message deliveries, or for flows without messages (bulk TCP) from
        the sender's delivered-packet counter scaled to the flow's delivered bytes.
        Index ``t_s`` (bin start), one column per flow that has either."""
        from ccbench.analysis.goodput import delivered_rate_series, goodput_series

        end = self._duration_s()
        bin_s = nice_bin(end) if bin is None else seconds(bin, "bin")
        names = self.select_flows(flows)
        cols, why, self.notes = {}, [], []
        p, c = self.run.packets, self.run.cwnd
        for name in names:
            rows = p[(p["flow"].astype(str) == name).to_numpy()]
            if rows["t_deliver"].notna().any():
                cols[name] = goodput_series(rows, bin_s, name, 0.0, end)[name]
                continue
            crow = c[(c["flow"].astype(str) == name).to_numpy()] if "delivered_pkts" in c.columns else c.iloc[0:0]
            frow = self._flow_row(name)
            if len(crow) and frow is not None and crow["delivered_pkts"].max() > 0:
                # per connection (the counter is per socket), then summed over the flow
                last = crow.groupby("conn")["delivered_pkts"].max().sum() if "conn" in crow.columns else crow["delivered_pkts"].max()
                pkt_bytes = float(frow["bytes_delivered"]) / float(last)
                if pkt_bytes > 0:
                    cols[name] = delivered_rate_series(crow, bin_s, pkt_bytes, name, 0.0, end)[name]
                    continue
            if len(rows) or len(crow):
                cols[name] = pd.Series(0.0, index=pd.Index(np.arange(0.0, end, bin_s), name="t_s"))
            else:
                why.append(self._why_no_messages(name, rows))
        if not cols:
            raise NothingToPlot(f"no goodput samples: {explain(why)}")
        self.notes = [f"no goodput samples: {explain(why)}"] if why else []
        return pd.DataFrame(cols)

    def goodput(self, flows: str | Iterable[str] | None = None, bin: Any = None, path: str | Path | None = None):
        """Goodput of each flow over time, one step line per flow (bins of ``bin``,
        default about 60 over the run)."""
        series = self.goodput_series(flows, bin)
        t = series.index.to_numpy(dtype=float)
        bin_s = float(t[1] - t[0]) if t.size > 1 else (nice_bin(self._duration_s()) if bin is None else seconds(bin, "bin"))
        div, unit = _rate_scale(float(np.nanmax(series.to_numpy())) if series.size else 0.0)
        fig, ax = new_figure(figsize=(7.5, 4.0))
        for name in series.columns:
            y = series[name].to_numpy(dtype=float) / div
            # the value of bin k holds over [t_k, t_k + bin): a step ending at the run end
            ax.step(np.r_[t, t[-1] + bin_s], np.r_[y, y[-1]], where="post", lw=1.2, label=name, color=self._color(name))
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"goodput ({unit})")
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, t[-1] + bin_s)
        ax.set_title(f"goodput per flow, {fmt_time(bin_s)} bins", fontsize="medium")
        ax.grid(True, alpha=0.3)
        legend(fig, ax)
        return _finish(fig, path)

    # ---- delay -----------------------------------------------------------------------
    def _delay_samples(self, flows, component: str) -> dict[str, np.ndarray]:
        if component not in COMPONENTS:
            raise PlotError(f"component: {component!r} is not accepted (accepted: {', '.join(COMPONENTS)})")
        names = self.select_flows(flows)
        out, self.notes = {}, []
        why = []
        for name in names:
            d, reason = self._delays(name, component)
            if reason is None:
                out[name] = d
            else:
                why.append(reason)
        if not out:
            raise NothingToPlot(f"no delay samples: {explain(why)}")
        self.notes = [f"no delay samples: {explain(why)}"] if why else []
        return out

    def delay(self, flows: str | Iterable[str] | None = None, component: str = "total", path: str | Path | None = None):
        """Per-message delay of each flow: its CDF (left, the body: median and spread)
        and its CCDF on a log axis (right, the tail: 1 in 100, 1 in 1000 late).

        ``component``: ``total`` (t_deliver - t_write), ``sender`` (t_first_tx -
        t_write), ``network`` (t_arrive - t_first_tx) or ``receiver`` (t_deliver - t_arrive).
        """
        samples = self._delay_samples(flows, component)
        fig, (a1, a2) = new_figure(1, 2, figsize=(10.0, 4.0))
        for name, d in samples.items():
            x, f = ecdf(d * 1e3)
            kw = dict(where="post", lw=1.2, label=f"{name} (n={d.size})", color=self._color(name))
            a1.step(np.r_[x[0], x], np.r_[0.0, f], **kw)
            xc, pc = ccdf(d * 1e3)
            keep = pc > 0
            a2.step(np.r_[x[0], xc[keep]], np.r_[1.0, pc[keep]], **kw)
        a1.set_ylabel("P[delay ≤ x]")
        a1.set_ylim(0, 1.02)
        a2.set_yscale("log")
        a2.set_ylabel("P[delay > x]")
        for ax in (a1, a2):
            ax.set_xlabel(f"{component} delay x (ms)")
            ax.grid(True, which="both", alpha=0.3)
        a1.set_title("CDF", fontsize="medium")
        a2.set_title("CCDF (tail)", fontsize="medium")
        if len(samples) <= LEGEND_INSIDE_MAX:
            a1.legend(fontsize="small", loc="lower right")
        else:
            legend(fig, a1)
        return _finish(fig, path)

    def delay_ccdf(self, flows: str | Iterable[str] | None = None, path: str | Path | None = None, component: str = "total"):
        """CCDF of the per-message delay (log y axis), one line per flow."""
        samples = self._delay_samples(flows, component)
        fig, ax = new_figure(figsize=(6.8, 4.0))
        for name, d in samples.items():
            x, p = ccdf(d * 1e3)
            keep = p > 0
            ax.step(np.r_[x[0], x[keep]], np.r_[1.0, p[keep]], where="post", label=name, color=self._color(name))
        ax.set_yscale("log")
        ax.set_xlabel(f"{component} delay x (ms)")
        ax.set_ylabel("P[delay > x]")
        ax.grid(True, which="both", alpha=0.3)
        legend(fig, ax)
        return _finish(fig, path)

    def decomposition(self, flow: Optional[str] = None, path: str | Path | None = None):
        """CCDFs of the sender-stack, network and receiver (head-of-line) delay parts of
        one flow (Lübben & Fidler, Sec. V-B). Default: the first flow with messages."""
        if flow is None:
            cands = [n for n in self.flow_names() if self._delays(n, "total")[1] is None]
            if not cands:
                raise NothingToPlot("no delay samples: no flow delivered a message")
            name = cands[0]
        else:
            sel = self.select_flows(flow)
            if len(sel) != 1:
                raise PlotError(f"flow: {flow!r} names {len(sel)} flows ({', '.join(sel)}); the decomposition is of one")
            name = sel[0]
        total, why = self._delays(name, "total")
        if why:
            raise NothingToPlot(f"no delay samples: {explain([why])}")
        fig, ax = new_figure(figsize=(6.8, 4.0))
        for label, comp, ls in (("sender stack", "sender", "-"), ("network", "network", "-"),
                                ("receiver (HOL)", "receiver", "-"), ("total", "total", "--")):
            d, _ = self._delays(name, comp)
            d = d[d > 0]  # a part that is zero for a message does not reach a log axis
            if d.size == 0:
                continue
            frac = d.size / total.size
            x, p = ccdf(d * 1e3)
            keep = p > 0
            # P[part > x] over all messages = P[part > 0] * P[part > x | part > 0]
            ax.step(np.r_[x[0], x[keep]], frac * np.r_[1.0, p[keep]], ls, where="post", label=label)
        from matplotlib.ticker import FuncFormatter, NullFormatter

        ax.set_yscale("log")
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("delay x (ms)")
        ax.set_ylabel("P[delay > x]")
        ax.set_title(name, fontsize="medium")
        ax.grid(True, which="both", alpha=0.3)
        legend(fig, ax)
        return _finish(fig, path)

    # ---- TCP state ---------------------------------------------------------------------
    def cwnd(self, flows: str | Iterable[str] | None = None, path: str | Path | None = None):
        """cwnd (solid) and ssthresh (dashed, once set) in packets against time, one
        colour per TCP flow (per connection for multi-connection flows)."""
        names = self.select_flows(flows)
        c = self.run.cwnd
        drawn, why = [], []
        for name in names:
            rows = c[(c["flow"].astype(str) == name).to_numpy()] if len(c) else c
            if len(rows):
                drawn.append((name, rows))
            elif self._transport(name) == "udp":
                why.append((name, "is a UDP flow (no congestion window)", "are UDP flows (no congestion window)"))
            else:
                why.append((name, "has no TCP state samples (run.state_sample off?)",
                            "have no TCP state samples (run.state_sample off?)"))
        if not drawn:
            raise NothingToPlot(f"no cwnd samples: {explain(why)}")
        self.notes = [f"no cwnd samples: {explain(why)}"] if why else []
        fig, ax = new_figure(figsize=(7.5, 4.0))
        for name, rows in drawn:
            conns = sorted(pd.unique(rows["conn"])) if "conn" in rows.columns else [None]
            for k, conn in enumerate(conns):
                sel = rows if conn is None else rows[rows["conn"] == conn]
                label = name if len(conns) == 1 else f"{name} #{conn}"
                ax.plot(sel["t"], sel["cwnd_pkts"], lw=1, label=label, color=self._color(name), alpha=1.0 - 0.5 * k / max(len(conns), 1))
                ss = sel["ssthresh_pkts"].where(sel["ssthresh_pkts"] < 1e6)  # "infinite" before the first loss
                ax.plot(sel["t"], ss, ls="--", lw=0.8, color=self._color(name), alpha=0.6)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("packets")
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, self._duration_s())
        ax.set_title("cwnd (solid) and ssthresh (dashed)", fontsize="medium")
        ax.grid(True, alpha=0.3)
        legend(fig, ax)
        return _finish(fig, path)

    # ---- queue -------------------------------------------------------------------------
    def queue(self, links: str | Iterable[str] | None = None, path: str | Path | None = None, unit: Optional[str] = None):
        """Queue occupancy of the monitored links against time, one panel per link, with
        the queue limit as a red line and, on the right axis, the same backlog as
        queueing delay at the link's rate (ms). ``unit``: ``"bytes"`` or ``"pkts"``
        (default: the unit of the link's limit)."""
        if unit not in (None, "bytes", "pkts"):
            raise PlotError(f"unit: {unit!r} is not accepted (accepted: bytes, pkts)")
        q = self.run.queue
        present = [str(x) for x in pd.unique(q["link"].astype(str))] if len(q) else []
        if not present:
            raise NothingToPlot("no queue samples: no link was monitored (run.queue_sample off, or monitor = false on every link)")
        if links is None:
            names = present
        else:
            names = []
            for name in [links] if isinstance(links, str) else [str(x) for x in links]:
                if name not in present:
                    raise UnknownSelection(f"link {name!r} has no queue samples in this run (links: {', '.join(present)})")
                names.append(name)
        info = link_info(self.run.meta)
        fig, axs = new_figure(len(names), 1, figsize=(7.5, 1.0 + 2.6 * len(names)), sharex=True, squeeze=False)
        self.notes = []
        for ax, name in zip(axs[:, 0], names):
            self._queue_panel(ax, q[(q["link"].astype(str) == name).to_numpy()], name, info.get(name, {}), unit)
        axs[-1, 0].set_xlabel("time (s)")
        axs[-1, 0].set_xlim(0, self._duration_s())
        return _finish(fig, path)

    def _queue_panel(self, ax, sel: pd.DataFrame, name: str, li: dict[str, Any], unit: Optional[str]) -> None:
        u = unit or ("pkts" if li.get("limit_unit") == "pkt" else "bytes")
        y = sel[f"backlog_{u}"].to_numpy(dtype=float)
        t = sel["t"].to_numpy(dtype=float)
        from matplotlib.ticker import MaxNLocator

        ax.plot(t, y, lw=0.8, color="C0", label="backlog")
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # whole bytes or packets
        ax.set_ylabel(f"backlog ({'packets' if u == 'pkts' else 'bytes'})")
        ax.grid(True, alpha=0.3)
        ymax = float(np.nanmax(y)) if y.size else 0.0
        top = max(ymax * 1.08, 1.0)  # an empty queue still gets an axis of whole bytes/packets
        if ymax == 0:
            ax.text(0.5, 0.5, "empty for the whole run", transform=ax.transAxes, ha="center", va="center", color="0.4")
        limit, lunit = li.get("limit"), li.get("limit_unit")
        title = name
        if limit is not None:
            ltext = f"{limit} packets" if lunit == "pkt" else fmt_bytes(limit)
            title += f"  ({li.get('qdisc', '?')}, limit {ltext})"
            if (lunit == "pkt") == (u == "pkts") and limit <= 4 * max(ymax, 1.0):
                ax.axhline(limit, color="C3", lw=1.0, ls="--", label=f"limit {ltext}")
                top = limit * 1.08
        ax.set_ylim(0, top)
        rate = li.get("rate_bps")
        if rate and math.isfinite(rate):
            title += f", {fmt_rate(rate)}"
            if u == "bytes":
                per_unit, how = 1.0, ""
            else:
                # a packet's drain time depends on its size: the mean size of the queued packets
                pk = sel["backlog_pkts"].to_numpy(dtype=float)
                with np.errstate(invalid="ignore", divide="ignore"):
                    mean = float(np.nansum(sel["backlog_bytes"].to_numpy(dtype=float)) / np.nansum(pk)) if np.nansum(pk) > 0 else 1500.0
                per_unit, how = mean, f", {mean:.0f} B/packet"
            k = per_unit * 8.0 / rate * 1e3  # backlog unit -> ms to drain at the link rate
            sec = ax.secondary_yaxis("right", functions=(lambda v, k=k: v * k, lambda v, k=k: v / k))
            sec.set_ylabel(f"delay at {fmt_rate(rate)} (ms{how})", fontsize="small")
        ax.set_title(title, fontsize="medium")
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize="small", loc="best")
