"""Reruns the hypothesis table of docs/REPRODUCTIONS.md, "Why DropTail and RED differ:
hypotheses tested" (issue 21): each row is the Wei study's setup with one thing changed.

    PYTHONPATH=python python scripts/wei_sync_hypotheses.py                 # every row, ~2 min
    PYTHONPATH=python python scripts/wei_sync_hypotheses.py red-fixed buf210 --seeds 1,2
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
    "no-delack": ("reno", "droptail", lambda d: _tcp(d).update(delayed_ack=False)),
    "buf210": ("reno", "droptail", _buffer(210)),
    "buf420": ("reno", "droptail", _buffer(420)),
    "buf3360": ("reno", "droptail", _buffer(3360)),
    "pareto-noise": ("reno", "droptail", _pareto),
    "access-10g": ("reno", "droptail", lambda d: d["topology"]["access"].update(rate="10Gbit")),
    "pkt1000": ("reno", "droptail", lambda d: _tcp(d).update(mss=948)),
    "rate-halving": ("reno", "droptail", lambda d: _tcp(d).update(recovery="rate-halving")),
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", nargs="*", help=f"rows to run (default all): {', '.join(ROWS)}")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--flows", type=int, default=16)
    ap.add_argument("--duration", type=float, default=600.0)
    ap.add_argument("--warmup", type=float, default=100.0)
    a = ap.parse_args()
    bad = [r for r in a.rows if r not in ROWS]
    if bad:
        ap.exit(2, f"rows: {', '.join(bad)} not known (accepted: {', '.join(ROWS)})\n")
    seeds = [int(s) for s in a.seeds.split(",")]
    runs = pd.concat([run_row(r, seeds, a.flows, a.duration, a.warmup) for r in (a.rows or list(ROWS))])
    cols = ["sync", "sync_srtt", "sync_tcp_ev", "srtt_s", "events", "drops", "tcp_goodput_mbps"]
    print(runs.groupby(["row", "algorithm", "scheme"], sort=False)[cols].mean().round(3).to_string())


if __name__ == "__main__":
    main()
