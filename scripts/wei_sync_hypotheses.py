"""Reruns the hypothesis table of docs/REPRODUCTIONS.md, "Why DropTail and RED differ:
hypotheses tested" (issue 21): each row is the Wei study's setup with one thing changed.

    PYTHONPATH=python python scripts/wei_sync_hypotheses.py                 # every row, ~2 min
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py red-fixed buf210 --seeds 1,2
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py --pecn-counting --duration 600   # P-ECN rows
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py --occupancy droptail no-delack pacing --duration 120
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
    a = ap.parse_args()
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
    bad = [r for r in a.rows if r not in ROWS]
    if bad:
        ap.exit(2, f"rows: {', '.join(bad)} not known (accepted: {', '.join(ROWS)})\n")
    seeds = [int(s) for s in a.seeds.split(",")]
    runs = pd.concat([run_row(r, seeds, a.flows, a.duration, a.warmup) for r in (a.rows or list(ROWS))])
    cols = ["sync", "sync_srtt", "sync_tcp_ev", "srtt_s", "events", "drops", "tcp_goodput_mbps"]
    print(runs.groupby(["row", "algorithm", "scheme"], sort=False)[cols].mean().round(3).to_string())


if __name__ == "__main__":
    main()
