"""Reruns the hypothesis table of docs/REPRODUCTIONS.md, "Why DropTail and RED differ:
hypotheses tested" (issue 21): each row is the Wei study's setup with one thing changed.

    PYTHONPATH=python python scripts/wei_sync_hypotheses.py                 # every row, ~2 min
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py red-fixed buf210 --seeds 1,2
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py --pecn-counting --duration 600   # P-ECN rows
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py --occupancy droptail no-delack pacing --duration 120
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py --counting droptail pacing noise-5pct noise-5pct-paced
"""

from __future__ import annotations

import argparse
import math
from typing import Any, Callable

import pandas as pd

from ccbench.studies import wei_sync as W

Tweak = Callable[[dict[str, Any]], None]


def _q(d: dict[str, Any]) -> dict[str, Any]:
    return d["topology"]["bottleneck"]["queue"]


def _tcp(d: dict[str, Any]) -> dict[str, Any]:
    return d["flows"][0]["transport"]


def _ns2_auto(mean_pktsize: int, adaptive: bool) -> Tweak:
    """ns-2 red.cc initialize_params with thresh_ = maxthresh_ = 0 and q_weight_ = -1."""
    ptc = W.CAPACITY_BPS / (8 * mean_pktsize)
    mn = max(5.0, 0.005 * ptc / 2)
    rtt = max(0.1, 3 * (W.RTT_S / 2 + 1 / ptc))
    w_q = 1 - math.exp(-1 / (10 * rtt * ptc))
    return lambda d: _q(d).update(min_th=f"{round(mn)}pkt", max_th=f"{round(3 * mn)}pkt", w_q=w_q, adaptive=adaptive)


def _buffer(pkts: int) -> Tweak:
    return lambda d: _q(d).update(limit=f"{pkts}pkt")


def _pareto(d: dict[str, Any]) -> None:
    a = d["flows"][1]["app"]
    a["on"] = {"dist": "pareto", "mean": f"{W.NOISE_ON_S * 1e3:g}ms", "shape": 1.5}
    a["off"] = {"dist": "pareto", "mean": f"{W.NOISE_OFF_S * 1e3:g}ms", "shape": 1.5}


def _noise_peak(factor: float) -> Tweak:
    """Noise peak rate x ``factor`` (mean share x ``factor``)."""
    return lambda d: d["flows"][1]["app"].update(peak_rate=f"{W.NOISE_PEAK_BPS * factor / 1e3:g}kbit")


def _noise_bursts(d: dict[str, Any]) -> None:
    """The same 10 % of noise in short bursts: on 20 ms at 10 Mbit/s (17 packets), off 980 ms
    (exponential), so a noise source adds a clump to the queue rather than a packet every 30 ms."""
    d["flows"][1]["app"].update(peak_rate="10Mbit", on={"dist": "exponential", "mean": "20ms"},
                                off={"dist": "exponential", "mean": "980ms"})


def _rtt_spread(max_one_way_ms: float) -> Tweak:
    """Server-side access delays of the TCP pairs spread evenly over [0, max] ms (RTT 200 ms
    to 200 + 2 max ms); the noise pairs keep none. Fig. 4.13's per-flow delays are not in the text."""
    def f(d: dict[str, Any]) -> None:
        n = d["flows"][0]["count"]
        tcp = [f"{max_one_way_ms * i / max(1, n - 1):.3f}ms" for i in range(n)]
        d["topology"]["access"]["pair_delays"] = tcp + ["0ms"] * d["flows"][1]["count"]
    return f


def _path_rtt(rtt_s: float) -> Tweak:
    """The whole path at round-trip propagation delay ``rtt_s``, buffer 1 BDP (§4.2.5: RTT 2-200 ms)."""
    bdp = max(2, round(W.CAPACITY_BPS * rtt_s / 8 / W.PKT_BYTES))
    return lambda d: (d["topology"]["bottleneck"].update(delay=f"{rtt_s / 2 * 1e3:g}ms"), _q(d).update(limit=f"{bdp}pkt"))


def _ns2_defaults(d: dict[str, Any]) -> None:
    _q(d).update(min_th="21pkt", max_th="63pkt", w_q=1.3328e-5, max_p=0.3, adaptive=False, limit="560pkt")
    _tcp(d).update(delayed_ack=False)


#: NS-2 TCP-Linux's sender as §4.2 and Appendix 6.1 describe it (Linux 2.6.16 modules): SACK
#: without D-SACK / undo, no tail-loss probe or F-RTO (later kernels), rate halving, ABC
#: (tcp_abc = 1, L = 1), RFC 3390 initial window 3
_TCP_LINUX_2616 = dict(dsack=False, tlp=False, frto=False, recovery="rate-halving", abc="l1", init_cwnd=3)

#: the rows that change the path's RTT: the event window follows (counting mode)
WINDOW_S = {"rtt50": 0.05, "rtt50-paced": 0.05, "rtt10": 0.01, "rtt10-paced": 0.01}

#: row name -> (algorithm, scheme, change to the study's scenario)
ROWS: dict[str, tuple[str, str, Tweak]] = {
    "droptail": ("reno", "droptail", lambda d: None),
    "pacing": ("reno", "pacing", lambda d: None),
    "no-delack": ("reno", "droptail", lambda d: _tcp(d).update(delayed_ack=False)),
    "buf210": ("reno", "droptail", _buffer(210)),
    "buf420": ("reno", "droptail", _buffer(420)),
    "buf3360": ("reno", "droptail", _buffer(3360)),
    "pareto-noise": ("reno", "droptail", _pareto),
    "access-10g": ("reno", "droptail", lambda d: d["topology"]["access"].update(rate="10Gbit")),
    "pkt1000": ("reno", "droptail", lambda d: _tcp(d).update(mss=948)),
    "rate-halving": ("reno", "droptail", lambda d: _tcp(d).update(recovery="rate-halving")),
    # staggered starts: flow i starts at i x 0.5 s (no common slow start, no phase lock from t = 0)
    # ns-2's Application/Traffic/Exponential default packetSize_ is 210 B: the same 10 % of
    # capacity as 7x more (small) packets, each taking a whole slot of the packet-counted buffer
    "noise-210B": ("reno", "droptail", lambda d: d["flows"][1]["app"].update(size="210B")),
    # Linux 2.6 without ABC (tcp_abc = 0, its default) counts ACKs, not acked segments: with
    # delayed ACKs cwnd grows by 1/2 per RTT, so about N/2 packets overflow per event, not N
    # the simulator's `abc` switch: Linux 2.6's per-ACK counting (tcp_abc = 0, its default) and
    # RFC 3465 byte counting with L = 2 (tcp_abc = 2; the thesis: "Reno implementation also includes ABC")
    "abc-per-ack": ("reno", "droptail", lambda d: _tcp(d).update(abc="per-ack")),
    "abc-l2": ("reno", "droptail", lambda d: _tcp(d).update(abc="l2")),
    "aimd-a1": ("reno", "droptail", lambda d: _tcp(d).update(cc={"name": "aimd", "a": 1.0})),
    "aimd-a0.5": ("reno", "droptail", lambda d: _tcp(d).update(cc={"name": "aimd", "a": 0.5})),
    "stagger": ("reno", "droptail", lambda d: d["flows"][0].update(start_every="500ms")),
    "textbook-reno": ("reno", "droptail", lambda d: _tcp(d).update(stack="textbook-reno")),
    # issue 21, second round: each with its paced twin, since a fix must keep pacing near 0.50
    "noise-5pct": ("reno", "droptail", _noise_peak(0.5)),
    "noise-5pct-paced": ("reno", "pacing", _noise_peak(0.5)),
    "no-noise": ("reno", "droptail", lambda d: d.update(flows=d["flows"][:1])),
    "no-noise-paced": ("reno", "pacing", lambda d: d.update(flows=d["flows"][:1])),
    "access-100m": ("reno", "droptail", lambda d: d["topology"]["access"].update(rate="100Mbit")),
    "access-100m-paced": ("reno", "pacing", lambda d: d["topology"]["access"].update(rate="100Mbit")),
    "rtt-spread": ("reno", "droptail", _rtt_spread(20)),
    "rtt-spread-paced": ("reno", "pacing", _rtt_spread(20)),
    "no-sack": ("reno", "droptail", lambda d: _tcp(d).update(sack=False, dsack=False)),
    "no-sack-paced": ("reno", "pacing", lambda d: _tcp(d).update(sack=False, dsack=False)),
    "tcp-linux-2.6.16": ("reno", "droptail", lambda d: _tcp(d).update(**_TCP_LINUX_2616)),
    "tcp-linux-2.6.16-paced": ("reno", "pacing", lambda d: _tcp(d).update(**_TCP_LINUX_2616)),
    "rtt50": ("reno", "droptail", _path_rtt(0.05)),
    "rtt50-paced": ("reno", "pacing", _path_rtt(0.05)),
    "rtt10": ("reno", "droptail", _path_rtt(0.01)),
    "rtt10-paced": ("reno", "pacing", _path_rtt(0.01)),
    "textbook-reno-paced": ("reno", "pacing", lambda d: _tcp(d).update(stack="textbook-reno")),
    "textbook-reno-no-noise": ("reno", "droptail", lambda d: (_tcp(d).update(stack="textbook-reno"), d.update(flows=d["flows"][:1]))),
    "textbook-reno-no-noise-paced": ("reno", "pacing", lambda d: (_tcp(d).update(stack="textbook-reno"), d.update(flows=d["flows"][:1]))),
    "noise-bursts": ("reno", "droptail", _noise_bursts),
    "noise-bursts-paced": ("reno", "pacing", _noise_bursts),
    "pecn": ("reno", "pecn", lambda d: None),
    "hs-droptail": ("highspeed", "droptail", lambda d: None),
    "hs-pacing": ("highspeed", "pacing", lambda d: None),
    "s-droptail": ("scalable", "droptail", lambda d: None),
    "s-pacing": ("scalable", "pacing", lambda d: None),
    "red": ("reno", "red", lambda d: None),
    "red-no-delack": ("reno", "red", lambda d: _tcp(d).update(delayed_ack=False)),
    "red-ns2-500B-adaptive": ("reno", "red", _ns2_auto(500, True)),
    "red-wq-0.002": ("reno", "red", lambda d: _q(d).update(w_q=0.002)),
    "red-bdp-thresholds": ("reno", "red", lambda d: _q(d).update(min_th="210pkt", max_th="630pkt")),
    "red-ns2-adaptive": ("reno", "red", _ns2_auto(1500, True)),
    "red-fixed": ("reno", "red", lambda d: _q(d).update(adaptive=False)),
    "red-ns2-fixed": ("reno", "red", _ns2_auto(1500, False)),
    "red-ns2-500B-fixed": ("reno", "red", _ns2_auto(500, False)),
    "hs-red-ns2-fixed": ("highspeed", "red", _ns2_auto(1500, False)),
    # ns-2.35's RED as it is by default (bytes_ = queue_in_bytes_ = 1, mean_pktsize_ 500): the
    # thresholds 62.5/187.5 x 500 B are 21/63 full packets, q_weight_ -1 gives 1.33e-5, byte mode
    # triples max_p for 1500 B packets, the 1680-packet limit is 1680 x 500 B = 560 full packets;
    # an ACK per packet, as ns-2's Sack1 sink (compare tests/data/ns2/wei_sync_ns2.csv, queue red)
    "red-ns2-defaults": ("reno", "red", _ns2_defaults),
    "hs-red-ns2-defaults": ("highspeed", "red", _ns2_defaults),
    "s-red-ns2-defaults": ("scalable", "red", _ns2_defaults),
    "s-red-ns2-fixed": ("scalable", "red", _ns2_auto(1500, False)),
    "hs-red": ("highspeed", "red", lambda d: None),
    "s-red": ("scalable", "red", lambda d: None),
}


def run_row(name: str, seeds: list[int], n_flows: int, duration_s: float, warmup_s: float) -> pd.DataFrame:
    cc, scheme, tweak = ROWS[name]
    rows = []
    for seed in seeds:
        d = W.scenario_dict(cc, scheme, n_flows, duration_s)
        tweak(d)
        r = W.measure(cc, scheme, n_flows, seed, duration_s, warmup_s, scenario=d)
        rows.append({"row": name, **r})
    return pd.DataFrame(rows)


def _sync_of_signals(sig: pd.DataFrame, window_s: float, tcp: list[str]) -> tuple[float, int]:
    """λ over the TCP flows of the signals ``sig`` (columns t, flow) segmented into events of
    ``window_s`` (the study's rule)."""
    from ccbench.analysis.losses import loss_sync_rate

    d = pd.DataFrame({"t": sig["t"].to_numpy(), "flow": sig["flow"].astype(str).to_numpy(), "kind": "drop"})
    sr = loss_sync_rate(d, window_s, flows=sorted(set(tcp) | set(d["flow"])))
    return float(sr.per_flow[tcp].mean()), sr.n_events


def pecn_counting(cc: str, seed: int, n_flows: int, duration_s: float, warmup_s: float) -> dict[str, Any]:
    """Persistent ECN: λ counted five ways from one run (issue 21, item 1b). The marks of a
    marking period land in every 200 ms window; the hypothesis is that the thesis counted
    something a sender does at most once per RTT.

    ``study``: every drop and mark is a signal (the study). ``cwr-thinned``: a flow's signals
    thinned to one per smoothed RTT (a sender in CWR ignores further marks for an RTT).
    ``reactions``: a flow's entries into CWR / Recovery / Loss (the sampled ``ca_state``,
    every 10 ms) are its signals. ``react-per-event``: events from all signals, a flow counts
    if it enters CWR / Recovery within the event's window plus one srtt. ``overflow-events``:
    events started by buffer-overflow drops only ("an RTT in which the bottleneck drops at
    least one packet because of buffer overflow"), a flow counts if it had a mark or drop."""
    import numpy as np

    import ccbench
    from ccbench.analysis.losses import label_loss_events
    from ccbench.scenario import Scenario

    d = W.scenario_dict(cc, "pecn", n_flows, duration_s)
    d["run"]["state_sample"] = "10ms"
    run = ccbench.simulate(Scenario.from_dict(d), seed=seed)
    tcp = [str(f) for f in run.flows["flow"] if str(f).startswith("tcp")]
    dr = run.drops
    dr = dr[(dr["link"].astype(str) == "bottleneck_down") & (dr["t"] >= warmup_s)].assign(flow=lambda x: x["flow"].astype(str))
    st = run.cwnd.assign(flow=run.cwnd["flow"].astype(str))
    st = st[st["flow"].isin(tcp)].sort_values(["flow", "t"])
    srtt = float(st.loc[(st["t"] >= warmup_s) & (st["srtt_s"] > 0), "srtt_s"].mean())
    out: dict[str, Any] = {"algorithm": cc, "seed": seed, "srtt_s": srtt}
    out["study"], out["events"] = _sync_of_signals(dr, W.RTT_S, tcp)
    per = label_loss_events(dr, srtt, per_flow=True, kinds=("drop", "mark"))
    out["cwr-thinned"], _ = _sync_of_signals(per.groupby("event").first().reset_index(), W.RTT_S, tcp)
    reduced = st["ca_state"].astype(str) != "open"
    entry = st[reduced & ~reduced.groupby(st["flow"]).shift(1, fill_value=False) & (st["t"] >= warmup_s)]
    out["reactions"], out["reaction_events"] = _sync_of_signals(entry, W.RTT_S, tcp)
    out["reactions_per_flow"] = len(entry) / len(tcp)
    t0 = label_loss_events(dr, W.RTT_S, kinds=("drop", "mark")).groupby("event")["t"].min().to_numpy()
    hit = []
    for f in tcp:
        te = np.sort(entry.loc[entry["flow"] == f, "t"].to_numpy())
        hit.append(np.mean(np.searchsorted(te, t0 + W.RTT_S + srtt) > np.searchsorted(te, t0)))
    out["react-per-event"] = float(np.mean(hit))
    ov = dr[dr["reason"].astype(str) == "overflow"]
    t0 = label_loss_events(ov, W.RTT_S).groupby("event")["t"].min().to_numpy()
    hit = []
    for f in tcp:
        te = np.sort(dr.loc[dr["flow"] == f, "t"].to_numpy())
        hit.append(np.mean(np.searchsorted(te, t0 + W.RTT_S) > np.searchsorted(te, t0)))
    out["overflow-events"], out["overflow_events"] = float(np.mean(hit)), len(t0)
    out["drops-only"], _ = _sync_of_signals(dr[dr["kind"].astype(str) == "drop"], W.RTT_S, tcp)
    return out


def reductions(st: pd.DataFrame, warmup_s: float) -> pd.DataFrame:
    """Each TCP flow's window reductions after ``warmup_s`` (columns t, flow): the samples at
    which ``ssthresh`` changed. Linux sets ssthresh only when it cuts the window (entry into
    CWR, Recovery or Loss: ``tcp_enter_cwr``, ``tcp_enter_recovery``, ``tcp_enter_loss``), so
    a change is one reaction to a loss event, whatever the sampling period (two reactions are
    at least one RTT apart)."""
    st = st.sort_values(["flow", "t"])
    ss = st["ssthresh_pkts"]
    prev = ss.groupby(st["flow"]).shift(1)
    changed = ss.ne(prev) & ~(ss.isna() & prev.isna()) & st["flow"].eq(st["flow"].shift(1))
    r = st[changed & (st["t"] >= warmup_s)]
    return pd.DataFrame({"t": r["t"].to_numpy(), "flow": r["flow"].astype(str).to_numpy()})


def counting(name: str, seed: int, n_flows: int, duration_s: float, warmup_s: float) -> dict[str, Any]:
    """λ of one run counted every way the thesis's words allow (issue 21; DropTail and pacing
    rows; under P-ECN marks count as losses, as in the study). Events as the study (first loss not in an earlier event + every loss within one
    window) unless said otherwise; λ averaged over the TCP flows unless said otherwise.

    ``study``: window = the propagation RTT (200 ms; :data:`WINDOW_S` for the rows that change
    it), a flow counts if it lost a packet. ``rtt/4`` / ``rtt/2`` / ``2rtt``: fixed windows of
    a quarter, half and twice that (50 / 100 / 400 ms). ``srtt``: window = the
    flows' mean srtt (queueing included). ``gap``: first drop to last, an event lasting while
    drops are less than one window apart. ``all-flows``: λ averaged over every flow on the link,
    the 50 UDP noise flows included ("we average the loss synchronization rates of all
    flows"). ``own-events``: a flow counts in an event only if one of *its own* loss events
    (its drops segmented with its srtt, the span a sender folds into one reduction) starts
    there. ``reactions``: a flow counts in an event if it cut its window (ssthresh changed)
    because of a drop in it: each reduction is charged to the event of the flow's first drop
    in the 1.5 srtt before it ("a loss event observed by a TCP flow is an RTT in which at
    least one packet loss is *detected* by the TCP source", Fig. 3.8's "detect").
    ``cuts_per_event``: reductions / (N x events), the same without the attribution (both
    need several state samples per RTT: not meaningful for the 10 and 50 ms rows).
    ``tcp-events``: events from TCP losses only (the study's ``sync_tcp_ev``)."""
    import numpy as np

    import ccbench
    from ccbench.analysis.losses import label_loss_events, loss_sync_rate
    from ccbench.scenario import Scenario

    cc, scheme, tweak = ROWS[name]
    d = W.scenario_dict(cc, scheme, n_flows, duration_s)
    tweak(d)
    run = ccbench.simulate(Scenario.from_dict(d), seed=seed)
    names = [str(f) for f in run.flows["flow"]]
    tcp = [f for f in names if f.startswith("tcp")]
    dr = run.drops
    dr = dr[(dr["link"].astype(str) == "bottleneck_down") & (dr["t"] >= warmup_s)].assign(flow=lambda x: x["flow"].astype(str))
    st = run.cwnd.assign(flow=run.cwnd["flow"].astype(str))
    st = st[st["flow"].isin(tcp)]
    srtt = float(st.loc[(st["t"] >= warmup_s) & (st["srtt_s"] > 0), "srtt_s"].mean())
    out: dict[str, Any] = {"row": name, "seed": seed, "srtt_s": srtt}

    kinds = ("drop", "mark") if scheme == "pecn" else ("drop",)  # P-ECN: marks are signals (the study)

    def lam(window: float, mode: str = "window", over: list[str] = tcp) -> tuple[float, int]:
        sr = loss_sync_rate(dr, window, flows=names, mode=mode, kinds=kinds)
        return float(sr.per_flow[over].mean()), sr.n_events

    rtt = WINDOW_S.get(name, W.RTT_S)
    out["study"], out["events"] = lam(rtt)
    for w, col in ((0.25, "rtt/4"), (0.5, "rtt/2"), (2.0, "2rtt")):
        out[col], _ = lam(w * rtt)
    out["srtt"], _ = lam(srtt)
    out["gap"], out["gap_events"] = lam(rtt, mode="gap")
    out["all-flows"], _ = lam(rtt, over=names)
    lab = label_loss_events(dr, rtt, kinds=kinds)
    n_ev = int(lab["event"].nunique())
    own = label_loss_events(dr[dr["flow"].isin(tcp)], srtt, per_flow=True, kinds=kinds).groupby("event").first()
    starts = lab.merge(own[["t", "flow"]], on=["t", "flow"])
    out["tcp-events"] = float(loss_sync_rate(dr[dr["flow"].isin(tcp)], rtt, flows=tcp, kinds=kinds).rate)
    out["own-events"] = float(starts.groupby("flow")["event"].nunique().reindex(tcp, fill_value=0).mean() / n_ev)
    cuts = reductions(st, warmup_s)
    hit = set()
    for f, g in cuts.groupby("flow"):
        lf = lab[lab["flow"] == f]
        t = lf["t"].to_numpy()
        for te in g["t"]:
            i = np.searchsorted(t, te - 1.5 * srtt)
            if i < len(t) and t[i] <= te:
                hit.add((f, int(lf["event"].iloc[i])))
    out["reactions"] = len(hit) / (len(tcp) * n_ev)
    out["cuts_per_event"] = len(cuts) / (len(tcp) * n_ev)
    out["drops"] = len(lab)
    out["drops_per_event"] = len(lab) / n_ev
    fl = run.flows
    out["tcp_goodput_mbps"] = float(fl.loc[fl["flow"].astype(str).isin(tcp), "goodput_bps"].sum()) / 1e6
    return out


def _tcp_departures(pcap_file) -> tuple:
    """(times, flow keys) of the TCP packets in a simulator capture (libpcap, nanosecond
    timestamps, LINKTYPE_RAW: each record an IPv4 packet); a flow is (source address, port)."""
    import struct

    import numpy as np

    b = pcap_file.read_bytes()
    ns = struct.unpack("<I", b[:4])[0] == 0xA1B23C4D
    off, ts, key = 24, [], []
    while off + 16 <= len(b):
        sec, frac, incl, _ = struct.unpack("<IIII", b[off:off + 16])
        ip = b[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(ip) >= 24 and ip[9] == 6:  # TCP
            ihl = (ip[0] & 15) * 4
            ts.append(sec + frac * (1e-9 if ns else 1e-6))
            key.append(ip[12:16] + ip[ihl:ihl + 2])
    return np.array(ts), np.array(key, dtype=object)


def occupancy(name: str, seed: int, duration_s: float, warmup_s: float, slots: int = 20) -> dict[str, Any]:
    """Sub-RTT spread of each flow's packets at the bottleneck (the model's K/S, eqs 3.1-3.3),
    and of each loss event's drops (its M/S):
    the RTT (mean srtt) is cut into ``slots`` equal slots and, per flow and RTT, the share of
    slots holding at least one of its departing packets is averaged. A flow sending its window
    as one burst of w packets fills about w/S of them; a paced flow fills all."""
    import tempfile
    from pathlib import Path

    import numpy as np

    import ccbench
    from ccbench.pcap import PcapOptions
    from ccbench.scenario import Scenario

    cc, scheme, tweak = ROWS[name]
    d = W.scenario_dict(cc, scheme, 16, duration_s)
    tweak(d)
    with tempfile.TemporaryDirectory() as tmp:
        run = ccbench.simulate(Scenario.from_dict(d), seed=seed,
                               pcap=PcapOptions(links=("bottleneck_down",), directory=tmp, snaplen=40))
        ts, key = _tcp_departures(next(Path(tmp).glob("*.pcap")))
    st = run.cwnd
    rtt = float(st.loc[(st["t"] >= warmup_s) & (st["srtt_s"] > 0), "srtt_s"].mean())
    keep = ts >= warmup_s
    ts, key = ts[keep], key[keep]
    win = ((ts - warmup_s) // rtt).astype(int)
    slot = (((ts - warmup_s) % rtt) / rtt * slots).astype(int)
    occ = []
    for k in set(key):
        m = key == k
        df = pd.DataFrame({"w": win[m], "s": slot[m]}).drop_duplicates()
        occ.append(df.groupby("w").size().mean() / slots)
    # the loss process's spread, the model's M/S: slot share of each event's drops (events as the study's)
    from ccbench.analysis.losses import label_loss_events

    dr = run.drops
    dr = dr[(dr["link"].astype(str) == "bottleneck_down") & (dr["t"] >= warmup_s)]
    ev = label_loss_events(dr, W.RTT_S).groupby("event")["t"]
    m = ev.apply(lambda t: len(np.unique(((t - t.min()) / rtt * slots).astype(int))) / slots)
    return {"row": name, "seed": seed, "srtt_s": rtt, "occupancy": float(np.mean(occ)),
            "drop_slot_share": float(m.mean()), "drops_per_event": float(ev.size().mean())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", help=f"rows to run (default all): {', '.join(ROWS)}")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--flows", type=int, default=16)
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--warmup", type=float, default=100.0)
    ap.add_argument("--pecn-counting", action="store_true", help="the P-ECN counting rows (every algorithm)")
    ap.add_argument("--occupancy", action="store_true", help="sub-RTT spread of each flow's packets (the model's K/S)")
    ap.add_argument("--counting", action="store_true",
                    help="λ of each row counted every way the thesis allows (windows, all flows, reactions)")
    a = ap.parse_args()
    bad = [r for r in a.rows if r not in ROWS]
    if bad:
        ap.exit(2, f"rows: {', '.join(bad)} not known (accepted: {', '.join(ROWS)})\n")
    if a.counting:
        seeds = [int(s) for s in a.seeds.split(",")]
        rows = [counting(r, s, a.flows, a.duration, a.warmup) for r in (a.rows or ["droptail", "pacing"]) for s in seeds]
        print(pd.DataFrame(rows).groupby("row", sort=False).mean(numeric_only=True).round(3).to_string())
        return
    if a.occupancy:
        seeds = [int(s) for s in a.seeds.split(",")]
        rows = [occupancy(r, s, a.duration, min(a.warmup, a.duration / 2)) for r in (a.rows or ["droptail"]) for s in seeds]
        print(pd.DataFrame(rows).groupby("row", sort=False).mean(numeric_only=True).round(3).to_string())
        return
    if a.pecn_counting:
        seeds = [int(s) for s in a.seeds.split(",")]
        rows = [pecn_counting(cc, s, a.flows, a.duration, a.warmup) for cc in W.ALGORITHMS for s in seeds]
        print(pd.DataFrame(rows).groupby("algorithm", sort=False).mean(numeric_only=True).round(3).to_string())
        return
    moved = [r for r in a.rows if r in WINDOW_S]
    if moved:
        # the study's measure() counts events over the 200 ms propagation RTT
        ap.exit(2, f"rows: {', '.join(moved)} change the path's RTT (accepted: with --counting, "
                   "which moves the event window with it)\n")
    seeds = [int(s) for s in a.seeds.split(",")]
    rows = a.rows or [r for r in ROWS if r not in WINDOW_S]
    runs = pd.concat([run_row(r, seeds, a.flows, a.duration, a.warmup) for r in rows])
    cols = ["sync", "sync_srtt", "sync_tcp_ev", "srtt_s", "events", "drops", "tcp_goodput_mbps"]
    print(runs.groupby(["row", "algorithm", "scheme"], sort=False)[cols].mean().round(3).to_string())


if __name__ == "__main__":
    main()
