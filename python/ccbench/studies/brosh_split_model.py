"""Brosh et al. Figs 25 and 27: the model's "upper bound" on what split-N and blind
parallel connections save, under random drops (:mod:`ccbench.models.brosh`, the same
chain as ``ccbench model brosh --split N`` / ``--parallel N``).

* Grid: the random-drop testbed's loss rates 0.1-5 % (note §3.3; 10 % is left out:
  the single video connection cannot sustain 573 kbit/s there) at RTT 100 ms, for video
  (1448 B / 20 ms) and VoIP (174 B / 20 ms). Model settings are the library's defaults
  (random loss, limited transmit, T_0 = 4 RTT).
* split-N: the chain with a -> a/N, f -> N f; the delay is that of a piece
  (``split_metric = "piece"``, the paper's model).
* parallel-N: N independent chains with f/N each (``parallel_merge = "independent"``:
  no head-of-line blocking across connections; the paper's model has none) and, beside
  it, the in-order merge approximated by the maximum of N independent connection
  delays (``"in_order"``, CDF^N).
* ``reduction_pct = 100 (1 - p95 / p95_single)``; the paper's numbers are averages over
  its loss grid: split-2 -60 % (video, Fig. 25), 5 blind connections -60 % (video,
  Fig. 27), VoIP gains negligible in both.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

LOSSES = (0.001, 0.005, 0.01, 0.02, 0.03, 0.05)
RTT_S = 0.1
SIZES = {"video": 1448.0, "voip": 174.0}
#: scheme -> (split, parallel, parallel_merge)
SCHEMES: dict[str, tuple[int, int, str]] = {
    "single": (1, 1, "independent"),
    "split-2": (2, 1, "independent"),
    "split-4": (4, 1, "independent"),
    "par-2": (1, 2, "independent"),
    "par-5": (1, 5, "independent"),
    "par-10": (1, 10, "independent"),
    "par-5 in-order": (1, 5, "in_order"),
}
#: (flow, scheme) -> the paper's average reduction (%) over its loss grid.
PAPER = {("video", "split-2"): 60.0, ("video", "par-5"): 60.0}


def p95(flow: str, scheme: str, loss: float, rtt_s: float = RTT_S) -> float:
    """The model's 95th-percentile delay (s), Brosh's α-percentile (``rule="paper"``)."""
    from ccbench.models.brosh import solve
    from ccbench.models.brosh.params import BroshParams

    split, par, merge = SCHEMES[scheme]
    prm = BroshParams(size_bytes=SIZES[flow], interval_s=0.02, rtt_s=rtt_s, loss=loss, split=split,
                      parallel=par, parallel_merge=merge)
    return float(solve(prm).distribution.percentile(0.95, rule="paper"))


def table(losses=LOSSES, flows=tuple(SIZES), schemes=tuple(SCHEMES), rtt_s: float = RTT_S) -> pd.DataFrame:
    """One row per (flow, scheme, loss): the model's 95th percentile and its reduction."""
    rows = []
    for fl in flows:
        for p in losses:
            base = p95(fl, "single", p, rtt_s)
            for sc in schemes:
                v = base if sc == "single" else p95(fl, sc, p, rtt_s)
                rows.append({"flow": fl, "scheme": sc, "loss_pct": 100 * p, "rtt_s": rtt_s, "p95_s": v,
                             "reduction_pct": 100.0 * (1.0 - v / base)})
    return pd.DataFrame(rows)


def averages(df: pd.DataFrame) -> pd.DataFrame:
    """Mean reduction over the loss grid per (flow, scheme), with the paper's average."""
    m = df.groupby(["flow", "scheme"], sort=False)["reduction_pct"].mean().reset_index()
    m["paper_reduction_pct"] = [PAPER.get((f, s), np.nan) for f, s in zip(m["flow"], m["scheme"])]
    return m
