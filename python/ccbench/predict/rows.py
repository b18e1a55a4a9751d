"""One prediction row per (flow, model): the number, or why the model does not apply.

Every function takes a :class:`~ccbench.predict.inputs.FlowInputs` with its loss set and
returns a dict with the :data:`COLUMNS` it knows; :func:`rows_for` picks the models by
the flow's traffic:

* greedy TCP (p: the loss-indication rate when measured in a run): ``pftk`` (eq. 32), ``pftk-approx`` (eq. 33), ``mathis`` (random-loss
  constant of Mathis Table 1), ``wei-sync`` (several greedy flows on a drop-tail
  bottleneck), ``luebben-window`` (static window, loss-free path) and
  ``luebben-periodic`` (periodic-loss sawtooth);
* finite TCP transfers (``bytes``, web responses, ``count`` + ``start_every``):
  ``cardwell`` and ``weigle`` (LB-CC; Reno, HighSpeed, Scalable);
* CBR over TCP: ``brosh`` (delay percentiles, late fraction at ``deadline_s``; split-N
  and parallel-N follow ``split`` / ``connections``) and ``luebben-periodic`` (the
  probability of sender-stack buffering at the flow's utilisation);
* anything else: one row ``-`` saying why no model applies.

A transfer's answer is its completion time (``completion_s``, from the flow's start,
as the simulator reports it); its ``goodput_bps`` stays empty because the flow's
measured goodput averages over the whole run. Rates are payload goodput in bit/s, as
``Run.flows.goodput_bps``: a send rate in
packets/s (PFTK, Mathis) is multiplied by MSS x 8 x (1 - p) (retransmissions carry no
new data). A greedy rate above the flow's share of the bottleneck is capped there and
the row says so; the share is averaged over the flow's own span, so a flow that has the
link to itself for part of it (another starts late or stops early) keeps that part
(``FlowInputs.sharing``).
"""

from __future__ import annotations

import math
from typing import Any, Callable

from .inputs import FlowInputs

__all__ = ["COLUMNS", "rows_for", "MODEL_NAMES"]

#: Columns of a prediction frame (``Run.flows`` names where they mean the same).
COLUMNS = (
    "flow", "model", "valid", "why_not", "goodput_bps", "delay_p50_s", "delay_p95_s", "delay_p99_s",
    "delay_mean_s", "completion_s", "completion_sd_s", "late_fraction", "sync_rate", "p_sender_buffering",
    "loss_rate", "loss_source", "rtt_s", "t0_s", "b", "w_max_pkts", "note",
)

#: Weigle's LB-CC protocol library, by the simulator's congestion-control name.
_WEIGLE = {"reno": "reno", "aimd": "reno", "highspeed": "highspeed", "scalable": "scalable"}
#: Wei's synchronised-throughput results, by congestion-control name.
_WEI = {"reno": "reno", "aimd": "reno", "highspeed": "hstcp", "scalable": "stcp"}
#: Loss-based Reno-family controls whose window follows AIMD closely enough for the
#: steady-state formulas (CUBIC's TCP-friendly region is Reno-like at small BDPs).
_AIMD_LIKE = {"reno", "aimd", "cubic", "highspeed", "scalable", "bic", "htcp"}


def _row(fi: FlowInputs, model: str, **kw) -> dict[str, Any]:
    out = {"flow": fi.flow, "model": model, "valid": True, "why_not": "", "loss_rate": fi.p,
           "loss_source": fi.loss_source, "rtt_s": fi.rtt_s, "t0_s": fi.t0_s, "b": fi.b,
           "w_max_pkts": fi.w_max_pkts, "note": ""}
    out.update(kw)
    return out


def _no(fi: FlowInputs, model: str, why: str) -> dict[str, Any]:
    return _row(fi, model, valid=False, why_not=why)


def _need_loss(fi: FlowInputs, model: str, positive: bool = True):
    if fi.p is None:
        return _no(fi, model, "the loss rate p is unknown: the path has no random-loss model and no run was "
                   "given (use --loss-from sim or emu, or --loss)")
    if positive and fi.p <= 0:
        return _no(fi, model, "needs losses (p > 0); this flow saw none")
    if fi.p >= 1:
        return _no(fi, model, f"p = {fi.p:g}: every packet is lost")
    return None


def _cap(fi: FlowInputs, bps: float, row: dict[str, Any]) -> dict[str, Any]:
    share = fi.fair_share_bps
    if bps > share:
        row["goodput_bps"] = share
        row["note"] = (f"model {bps / 1e6:.3g} Mbit/s capped at the bottleneck share {share / 1e6:.3g} Mbit/s: "
                       "the link, not the losses, limits this flow")
    else:
        row["goodput_bps"] = bps
    return row


def _pkts_to_goodput(fi: FlowInputs, pkts_per_s: float) -> float:
    return pkts_per_s * fi.mss * 8.0 * (1.0 - fi.p)


def _p_steady(fi: FlowInputs) -> float:
    """p for the steady-state rate formulas: the loss-indication rate when measured."""
    return fi.p_indication if fi.p_indication is not None and fi.p_indication > 0 else fi.p


# --------------------------------------------------------------------------- greedy


def pftk_row(fi: FlowInputs, approximate: bool = False) -> dict[str, Any]:
    from ccbench.models import pftk

    name = "pftk-approx" if approximate else "pftk"
    bad = _need_loss(fi, name) or _aimd_only(fi, name)
    if bad:
        return bad
    f = pftk.throughput_approx_pkts_per_s if approximate else pftk.throughput_pkts_per_s
    p = _p_steady(fi)
    rate = float(f(fi.rtt_s, p, t0_s=fi.t0_s, b=fi.b, w_max_pkts=fi.w_max_pkts))
    return _cap(fi, _pkts_to_goodput(fi, rate), _row(fi, name, loss_rate=p))


def mathis_row(fi: FlowInputs) -> dict[str, Any]:
    from ccbench.models import mathis

    bad = _need_loss(fi, "mathis") or _aimd_only(fi, "mathis")
    if bad:
        return bad
    C = mathis.mathis_constant(1, "random")
    p = _p_steady(fi)
    rate = float(mathis.throughput_pkts_per_s(fi.rtt_s, p, C=C))
    rate = min(rate, fi.w_max_pkts / fi.rtt_s)
    return _cap(fi, _pkts_to_goodput(fi, rate), _row(fi, "mathis", loss_rate=p,
                                                     note=f"C = {C} (random loss, Mathis Table 1)"))


def _aimd_only(fi: FlowInputs, model: str):
    if fi.cc not in _AIMD_LIKE:
        return _no(fi, model, f"cc = {fi.cc!r} is not a loss-based AIMD window (the model is Reno's)")
    return None


def wei_sync_row(fi: FlowInputs) -> dict[str, Any]:
    from ccbench.models import wei_sync

    if fi.greedy_sharing < 2:
        return _no(fi, "wei-sync", "needs several greedy TCP flows sharing the bottleneck (loss synchronisation)")
    if not fi.droptail:
        return _no(fi, "wei-sync", "the bottleneck is not drop-tail (Wei's results are for DropTail)")
    if fi.loss_source in ("scenario", "given"):
        return _no(fi, "wei-sync", "the losses here are the path's random-loss model (or given), not the drop-tail "
                   "queue overflowing: Wei's synchronisation is of queue drops")
    algo = _WEI.get(fi.cc)
    if algo is None:
        return _no(fi, "wei-sync", f"cc = {fi.cc!r}: Wei's throughput-loss results cover Reno, HighSpeed, Scalable")
    pkt = fi.packet_bytes
    bdp = fi.bottleneck_bps * fi.base_rtt_s / (8.0 * pkt)
    buf = (fi.buffer_bytes or 0.0) / pkt
    n = fi.greedy_sharing
    S = bdp + buf + n
    w = S / n
    if fi.pacing:
        lam = wei_sync.sync_rate_paced(S=S, L=float(n), w=w)
    else:
        lam = wei_sync.sync_rate_bursty_asymptotic(S=S, L=float(n), w=w)
    res = wei_sync.sync_throughput_with_buffer(algo, bdp_pkts=bdp, buffer_pkts=buf, n_flows=n)
    goodput = res.fraction * fi.fair_share_bps
    return _row(fi, "wei-sync", goodput_bps=goodput, sync_rate=min(lam, 1.0),
                note=(f"goodput: lower bound under full synchronisation ({res.fraction:.3f} of capacity, "
                      f"{n} flows); sync_rate: eq. (3.{5 if fi.pacing else 4}), S = cd + B + N = {S:.0f} pkts"))


def luebben_window_row(fi: FlowInputs) -> dict[str, Any]:
    from ccbench.models import luebben

    if fi.p is None or fi.p > 0:
        return _no(fi, "luebben-window", "the path has losses: the static-window curve needs a loss-free, "
                   "window-limited flow")
    w_bits = fi.w_max_pkts * fi.mss * 8.0
    cap = fi.bottleneck_bps * fi.mss / fi.packet_bytes
    if w_bits / fi.rtt_s >= cap:
        return _no(fi, "luebben-window", f"the window (min(sndbuf, rcvbuf) = {fi.w_max_pkts:.0f} pkts) exceeds "
                   "the path's BDP: the window does not limit the flow")
    rate = luebben.static_window_long_term_rate_bps(capacity_bps=cap, one_way_delay_s=fi.rtt_s / 2,
                                                    window_bits=w_bits)
    return _cap(fi, rate, _row(fi, "luebben-window", note="long-term rate min(w/RTT, C) of S_app (Sec. III-A)"))


def luebben_periodic_row(fi: FlowInputs) -> dict[str, Any]:
    from ccbench.models import luebben

    bad = _need_loss(fi, "luebben-periodic") or _aimd_only(fi, "luebben-periodic")
    if bad:
        return bad
    p = _p_steady(fi)
    m = luebben.periodic_loss_window(p, fi.rtt_s, b=fi.b)
    rate = m.long_term_rate_pkts_per_s * fi.mss * 8.0
    if fi.kind == "cbr":
        u = fi.cbr_rate_bps / fi.connections / rate
        pb = float(luebben.periodic_loss_buffering_probability(u))
        return _row(fi, "luebben-periodic", p_sender_buffering=pb, loss_rate=p,
                    note=f"utilisation {u:.2f} of the long-term rate {rate / 1e6:.3g} Mbit/s; "
                         "no stack buffering below 2/3 (Sec. V-B)")
    return _cap(fi, rate * (1 - fi.p), _row(fi, "luebben-periodic", loss_rate=p,
                                             note="sawtooth W_max/2..W_max, W_max = sqrt(8/(3bp)) (Sec. V-B)"))


# --------------------------------------------------------------------------- transfers


def cardwell_row(fi: FlowInputs) -> dict[str, Any]:
    from ccbench.models import cardwell

    bad = _need_loss(fi, "cardwell", positive=False)
    if bad:
        return bad
    if fi.p >= 0.5:
        return _no(fi, "cardwell", f"p = {fi.p:g}: the model needs p < 1/2")
    # No handshake: the simulator starts connections established and the emulator
    # connects before the flow's start. Linux quick-ACKs the first segments, so the
    # first segment waits for no delayed-ACK timer (t_delack = 0).
    res = cardwell.latency(int(fi.transfer_bytes), mss_bytes=fi.mss, rtt_s=fi.rtt_s, p=fi.p, t0_s=fi.t0_s, b=fi.b,
                           w1=float(fi.init_cwnd), w_max_pkts=fi.w_max_pkts, t_delack_s=0.0,
                           include_handshake=False)
    return _row(fi, "cardwell", completion_s=res.total_s,
                note=f"{res.segments} segments, initial window {fi.init_cwnd}, no handshake" + _web_note(fi))


def weigle_row(fi: FlowInputs) -> dict[str, Any]:
    from ccbench.models.weigle import WeigleParams, transfer_time
    from ccbench.models.weigle.recursion import MAX_SS_DEPTH

    bad = _need_loss(fi, "weigle", positive=False)
    if bad:
        return bad
    proto = _WEIGLE.get(fi.cc)
    if proto is None:
        return _no(fi, "weigle", f"cc = {fi.cc!r} is not in the LB-CC library (Reno, Tahoe, Scalable, HighSpeed, SRF)")
    n = int(math.ceil(fi.transfer_bytes / fi.mss))
    # The chain starts at window 1; Linux starts at init_cwnd. A window-1 start reaches
    # window 2^k after s = 2^k - 1 segments of slow start (k = floor(log2 init_cwnd)),
    # so the transfer is taken as segments s+1 .. s+n of a window-1 transfer:
    # E[T] ~ tau_{n+s} - tau_s (our approximation; exact when no loss hits the first s).
    s = 2 ** int(math.floor(math.log2(max(fi.init_cwnd, 1)))) - 1
    K = min(fi.w_max_pkts, float(MAX_SS_DEPTH), max(64.0, 4.0 * (n + s)))
    params = WeigleParams(protocol=proto, loss=fi.p, rtt_s=fi.rtt_s, t0_s=fi.t0_s, w_max=K,
                          rate_bps=fi.bottleneck_bps, mss_bytes=fi.mss)
    res = transfer_time(params, n + s)
    mean = res.mean_at(n + s) - (res.mean_at(s) if s else 0.0)
    var = res.var_at(n + s) - (res.var_at(s) if s else 0.0)
    return _row(fi, "weigle", completion_s=mean, completion_sd_s=math.sqrt(max(var, 0.0)),
                note=(f"{n} segments, started as segments {s + 1}..{s + n} of a window-1 transfer "
                      f"(initial window {fi.init_cwnd}); losses Linux recovers by SACK/RACK/TLP count as "
                      "timeouts here" + _web_note(fi)))


def _web_note(fi: FlowInputs) -> str:
    if not fi.web:
        return ""
    return ("; completion of one response of the mean size: the flow's responses vary in size and its "
            "measured delay percentiles are per response")


# --------------------------------------------------------------------------- CBR over TCP


def brosh_row(fi: FlowInputs, deadline_s: float) -> dict[str, Any]:
    from ccbench.models import pftk
    from ccbench.models.brosh import BroshParams, solve

    bad = _need_loss(fi, "brosh", positive=False)
    if bad:
        return bad
    if fi.p >= 0.1:
        return _no(fi, "brosh", f"p = {fi.p:g}: the paper excludes loss rates above 10 %")
    if fi.cbr_size > fi.mss * fi.split:
        return _no(fi, "brosh", f"a {fi.cbr_size} B message exceeds the MSS {fi.mss} B (split it: split = N)")
    cbr = fi.cbr_rate_bps / fi.connections
    note = ""
    if fi.p > 0:
        tput = float(pftk.throughput_bits_per_s(fi.mss, fi.rtt_s, fi.p, t0_s=fi.t0_s, b=fi.b, w_max_pkts=fi.w_max_pkts))
        if tput <= cbr:
            return _no(fi, "brosh", f"the CBR rate {cbr / 1e3:.0f} kbit/s per connection is not below the PFTK "
                       f"throughput {tput / 1e3:.0f} kbit/s (Brosh assumes a source slower than TCP's rate)")
        if tput < 2 * cbr:
            note = f"PFTK throughput only {tput / cbr:.1f}x the CBR rate: the paper's error stays < 20 % from 2x on; "
    # L: the forward path's base one-way delay plus the queueing a measured RTT shows
    # (the data direction is the one that queues; ACKs are small).
    one_way = min(fi.one_way_s + max(0.0, fi.rtt_s - fi.base_rtt_s), fi.rtt_s)
    prm = BroshParams(size_bytes=float(fi.cbr_size), interval_s=fi.cbr_interval_s, rtt_s=fi.rtt_s, loss=fi.p,
                      mss_bytes=float(fi.mss), one_way_s=one_way, rto_s=fi.t0_s,
                      split=fi.split, parallel=fi.connections)
    try:
        res = solve(prm)
    except ValueError as e:
        return _no(fi, "brosh", str(e))
    d = res.distribution
    # The chain sends every generated packet (conserving accounting): goodput = CBR rate.
    return _row(fi, "brosh", goodput_bps=fi.cbr_rate_bps,
                delay_p50_s=d.percentile(0.5), delay_p95_s=d.percentile(0.95), delay_p99_s=d.percentile(0.99),
                delay_mean_s=d.mean_s, late_fraction=float(d.late_fraction(deadline_s)),
                note=note + f"late_fraction: P{{D > {deadline_s * 1e3:g} ms}}; {res.n_states} states")


# --------------------------------------------------------------------------- selection

_GREEDY: tuple[Callable[[FlowInputs], dict], ...] = (
    pftk_row, lambda fi: pftk_row(fi, approximate=True), mathis_row, wei_sync_row, luebben_window_row,
    luebben_periodic_row,
)
_TRANSFER = (cardwell_row, weigle_row)
MODEL_NAMES = ("pftk", "pftk-approx", "mathis", "wei-sync", "luebben-window", "luebben-periodic", "cardwell",
               "weigle", "brosh")


def rows_for(fi: FlowInputs, deadline_s: float = 0.15) -> list[dict[str, Any]]:
    """Every applicable model's row for one flow (or one row saying none applies)."""
    if fi.transport != "tcp":
        return [_no(fi, "-", "UDP: the models describe TCP (a UDP flow's rate is its application's)")]
    if fi.kind == "greedy":
        return [f(fi) for f in _GREEDY]
    if fi.kind == "transfer":
        return [f(fi) for f in _TRANSFER]
    if fi.kind == "cbr":
        return [brosh_row(fi, deadline_s), luebben_periodic_row(fi)]
    return [_no(fi, "-", f"no model for this application ({fi.app_text}): the models take greedy, "
                "finite-transfer or CBR sources")]
