"""Model inputs of one flow, derived from the scenario (never retyped).

Each value says where it comes from (``FlowInputs.sources``):

* **MSS, header**: the transport's ``mss`` / ``header`` or the simulator's Linux
  defaults (1448 B, 52 B: IP + TCP with timestamps).
* **b** (packets acknowledged per window increment): 1. Linux grows cwnd per segment
  acknowledged (``tcp_cong_avoid_ai(tp, cwnd, acked)`` accumulates ``acked``; slow start
  adds ``acked``), so a delayed ACK covering two segments counts two: PFTK's b = 2 (an
  ACK-counting Reno) does not describe it, with or without ``delayed_ack``.
* **W_max**: min(``sndbuf``, ``rcvbuf``) / MSS: the receiver advertises the free part of
  ``rcvbuf`` and the sender keeps at most ``sndbuf`` unacknowledged bytes.
* **base RTT**: propagation both ways plus serialisation of one data packet (MSS +
  header) on every forward link and one ACK (header) on every reverse link.
* **T0**: Linux's RTO with a steady RTT, ``srtt + max(4 rttvar, min_rto)``
  (``tcp_set_rto``; the variance term never drops below ``min_rto``): RTT + ``min_rto``
  (200 ms unless set). When RTT and p come from a run, T0 is that flow's median RTO.
* **p**: the scenario's loss model on the forward path when there is one (``scenario``);
  otherwise the flow's measured loss rate in a run of the scenario (``sim`` or
  ``emu``), with the measured median RTT (queueing included) in place of the base RTT:
  where the flows cause their own losses they also fill the queue. The steady-state
  throughput formulas (PFTK, Mathis, periodic loss) then take the measured
  loss-indication rate (loss events per packet sent), the p of PFTK's own trace
  analysis: drop-tail losses come in bursts that TCP answers once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Optional

from ccbench.scenario.apps import Bulk, Cbr, OnOff, Preset, Vbr, Web
from ccbench.scenario.transport import Tcp

from .path import FlowPath, flow_path

__all__ = ["FlowInputs", "flow_inputs", "LINUX_MSS", "LINUX_HEADER", "LINUX_MIN_RTO_S"]

LINUX_MSS = 1448
LINUX_HEADER = 52
LINUX_MIN_RTO_S = 0.2
LINUX_INIT_CWND = 10
LINUX_SNDBUF = 4_194_304
LINUX_RCVBUF = 33_554_432  # tcp_rmem[2] since Linux 6.18
#: Linux's ``scaling_ratio`` (payload per buffer byte, in 256ths) as the simulator
#: assumes it: the largest window is rcvbuf * ratio / 256.
LINUX_RCV_SCALING_RATIO = 160
UDP_HEADER = 0


@dataclass
class FlowInputs:
    """Everything the models take, for one resolved flow."""

    flow: str
    transport: str  # "tcp" / "udp"
    cc: str
    kind: str  # "greedy", "transfer", "cbr", "other"
    app_text: str
    path: FlowPath
    mss: int
    header: int
    b: float
    w_max_pkts: float
    init_cwnd: int
    min_rto_s: float
    base_rtt_s: float
    one_way_s: float
    bottleneck_bps: float
    bottleneck_name: str
    buffer_bytes: Optional[float]
    droptail: bool
    #: Flows on the bottleneck that take what they can (greedy, transfers, web), as this
    #: flow meets them: ``1 / mean(1 / n(t))`` over its own active span, so a flow that
    #: runs alone for part of it is capped at its time-averaged share (equal to the
    #: count when all of them run throughout).
    sharing: float
    greedy_sharing: int  # greedy TCP flows among them
    others_bps: float  # mean rate of the rate-limited flows on the bottleneck (CBR, on/off, VBR)
    pacing: bool
    ecn: bool
    transfer_bytes: Optional[float] = None
    web: bool = False  # transfers are a web flow's responses (mean size; think times between)
    cbr_size: Optional[int] = None
    cbr_interval_s: Optional[float] = None
    split: int = 1
    connections: int = 1
    # set by with_loss()
    p: Optional[float] = None
    rtt_s: float = math.nan
    t0_s: float = math.nan
    loss_source: str = ""
    #: Loss indications per packet sent, when measured in a run (None otherwise).
    p_indication: Optional[float] = None
    notes: list[str] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)

    @property
    def packet_bytes(self) -> int:
        return self.mss + self.header

    @property
    def fair_share_bps(self) -> float:
        """The bottleneck's payload capacity left by the rate-limited flows, divided among
        the flows that take what they can (max-min fair share), in bit/s."""
        cap = self.bottleneck_bps * self.mss / self.packet_bytes
        return max(cap - self.others_bps, cap / 100.0) / max(self.sharing, 1)

    @property
    def cbr_rate_bps(self) -> float:
        return self.cbr_size * 8.0 / self.cbr_interval_s if self.cbr_size else math.nan

    def with_loss(self, p: Optional[float], source: str, rtt_s: Optional[float] = None, t0_s: Optional[float] = None) -> "FlowInputs":
        self.p = p
        self.loss_source = source
        self.rtt_s = self.base_rtt_s if rtt_s is None or not math.isfinite(rtt_s) else float(rtt_s)
        self.t0_s = self.rtt_s + self.min_rto_s if t0_s is None or not math.isfinite(t0_s) else float(t0_s)
        measured_rtt = rtt_s is not None and math.isfinite(rtt_s)
        measured_t0 = t0_s is not None and math.isfinite(t0_s)
        self.sources.update(p=source, rtt=f"{source} (median RTT)" if measured_rtt else "topology",
                            t0=f"{source} (median RTO)" if measured_t0 else "RTT + min_rto")
        return self


def _app_rate_bps(app: Any) -> Optional[float]:
    """Mean offered rate of a rate-limited application; None for one that takes what it can."""
    if isinstance(app, Preset):
        app = app.expand()
    if isinstance(app, Cbr):
        return app.rate_bps()
    if isinstance(app, OnOff):
        return app.mean_rate_bps()
    if isinstance(app, Vbr):
        return float(app.rate)
    return None


def _app(app: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(app, Preset):
        app = app.expand()
    if isinstance(app, Bulk):
        return ("greedy", {}) if app.bytes is None else ("transfer", {"transfer_bytes": float(app.bytes)})
    if isinstance(app, Web):
        return "transfer", {"transfer_bytes": float(app.size), "web": True}
    if isinstance(app, Cbr):
        # Poisson gaps or random sizes are not a constant-bit-rate source (Brosh's model).
        regular = app.jitter.dist in ("none", "normal", "uniform") and app.size_dist.dist == "fixed"
        return ("cbr" if regular else "other"), {"cbr_size": int(app.size), "cbr_interval_s": app.interval / 1e9}
    return "other", {}


def _span_ns(rf, duration_ns: int) -> tuple[int, int]:
    """A flow's nominal active span ``[start, stop)`` in the run (a ``count`` replica
    starts ``start_every`` after the previous one)."""
    start = int(rf.flow.start + rf.replica * (rf.flow.start_every or 0))
    stop = int(rf.flow.stop) if rf.flow.stop is not None else int(duration_ns)
    return start, min(max(stop, start), int(duration_ns))


def effective_sharers(own: tuple[int, int], sharers: list[tuple[int, int]]) -> float:
    """``1 / mean(1 / n(t))`` over ``own``, where n(t) counts the spans of ``sharers``
    (this flow's among them) that cover t: the number of equal sharers that gives this
    flow its time-averaged max-min share. The plain count when ``own`` is empty."""
    lo, hi = own
    if hi <= lo or not sharers:
        return float(max(len(sharers), 1))
    cuts = sorted({lo, hi, *(t for a, b in sharers for t in (a, b) if lo < t < hi)})
    inv = 0.0
    for a, b in zip(cuts, cuts[1:]):
        mid = (a + b) / 2
        n = sum(1 for s, e in sharers if s <= mid < e)
        inv += (b - a) / max(n, 1)
    return (hi - lo) / inv


def flow_inputs(scenario) -> list[FlowInputs]:
    """Inputs of every resolved flow, loss not yet set (see :meth:`FlowInputs.with_loss`)."""
    flows = scenario.resolved_flows
    paths = [flow_path(scenario, rf) for rf in flows]
    spans = [_span_ns(rf, scenario.run.duration) for rf in flows]
    kinds = [_app(rf.flow.app) for rf in flows]
    out = []
    for rf, path, (kind, extra) in zip(flows, paths, kinds):
        tr = rf.flow.transport
        tcp = isinstance(tr, Tcp)
        mss = (tr.mss or LINUX_MSS) if tcp else LINUX_MSS
        header = (tr.header if tr.header is not None else (LINUX_HEADER if tcp else UDP_HEADER))
        bott = path.bottleneck
        on_link = [i for i, p in enumerate(paths) if bott.name in {lk.name for lk in p.forward}
                   and (p.bottleneck.name == bott.name)]
        greedy = [i for i in on_link if kinds[i][0] == "greedy" and isinstance(flows[i].flow.transport, Tcp)]
        rates = {i: _app_rate_bps(flows[i].flow.app) for i in on_link}
        others = sum(r for r in rates.values() if r is not None)
        sndbuf = (tr.sndbuf or LINUX_SNDBUF) if tcp else LINUX_SNDBUF
        rcvbuf = (tr.rcvbuf or LINUX_RCVBUF) if tcp else LINUX_RCVBUF
        ratio = (tr.rcv_scaling_ratio or LINUX_RCV_SCALING_RATIO) if tcp else LINUX_RCV_SCALING_RATIO
        rwnd = rcvbuf * ratio // 256
        data_bytes = mss + header if tcp or kind != "cbr" else extra["cbr_size"] + header
        fi = FlowInputs(
            flow=rf.name,
            transport="tcp" if tcp else "udp",
            cc=(tr.cc.name if tr.cc else "cubic") if tcp else "",
            kind=kind,
            app_text=rf.flow.app.describe(),
            path=path,
            mss=mss,
            header=header,
            b=1.0,
            w_max_pkts=min(sndbuf, rwnd) / mss,
            init_cwnd=(tr.init_cwnd or LINUX_INIT_CWND) if tcp else 0,
            min_rto_s=(tr.min_rto / 1e9 if tcp and tr.min_rto is not None else LINUX_MIN_RTO_S),
            base_rtt_s=path.base_rtt_s(data_bytes, header if tcp else 0),
            one_way_s=path.one_way_s(data_bytes),
            bottleneck_bps=float(bott.rate_bps),
            bottleneck_name=bott.name,
            buffer_bytes=bott.buffer_bytes(mss + header),
            droptail=bott.is_droptail,
            sharing=effective_sharers(spans[len(out)], [spans[i] for i, r in rates.items() if r is None]),
            others_bps=others,
            greedy_sharing=len(greedy),
            pacing=bool(tcp and tr.pacing not in (None, False, "off")) or (tcp and tr.cc is not None and tr.cc.name.startswith("bbr")),
            ecn=bool(tcp and tr.ecn),
            split=rf.flow.split,
            connections=rf.flow.connections,
            **extra,
        )
        fi.sources.update(mss="transport" if tcp and tr.mss else "Linux default",
                          w_max="min(sndbuf, rcvbuf) / MSS", b="1: Linux counts acked segments")
        out.append(fi)
    return out
