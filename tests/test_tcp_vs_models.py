"""The simulator's TCP against independent analytical models.

PFTK (Padhye et al. 1998) is checked with the loss rate the flow actually saw and
with T0 = the sender's median RTO. ``b`` is 1 with and without delayed ACKs:
Linux grows cwnd per *segment* acknowledged (``tcp_cong_avoid_ai(tp, cwnd, acked)``
accumulates ``acked``), not per ACK, so a delayed ACK covering two segments counts
two — unlike the ACK-counting Reno that PFTK's b = 2 models.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_core

pytestmark = needs_core


def reno_over_bernoulli(p: float, delayed_ack: bool, duration: str = "300s"):
    import ccbench
    from ccbench.scenario import Scenario

    sc = Scenario.from_dict(
        {
            "run": {"duration": duration, "state_sample": "100ms"},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {
                    "down": "1Gbit",
                    "up": "1Gbit",
                    "delay": "50ms",
                    "queue": {"kind": "droptail", "limit": "100000pkt"},
                    "loss": {"kind": "bernoulli", "p": p},
                },
            },
            "flows": [
                {
                    "name": "reno",
                    "direction": "down",
                    "transport": {"kind": "tcp", "cc": "reno", "delayed_ack": delayed_ack},
                    "app": {"kind": "bulk"},
                }
            ],
        }
    )
    return ccbench.simulate(sc, seed=1)


def test_reno_throughput_matches_pftk_within_15_percent():
    from ccbench.models import pftk

    rows = []
    for delayed_ack in (True, False):
        for p in (0.001, 0.005, 0.01, 0.02):
            run = reno_over_bernoulli(p, delayed_ack)
            f = run.flows.iloc[0]
            rate = f.pkts_sent / (f.end_s - f.start_s)
            t0 = float(np.median(run.cwnd["rto_s"]))
            model = pftk.throughput_pkts_per_s(f.rtt_p50_s, f.loss_rate, t0_s=t0, b=1)
            rows.append((delayed_ack, p, f.loss_rate, t0, rate, model, rate / model))
    print("\ndelack  p       p_seen   T0(s)  sim pkt/s  PFTK pkt/s  ratio")
    for r in rows:
        print(f"{str(r[0]):6}  {r[1]:<6}  {r[2]:.5f}  {r[3]:.3f}  {r[4]:9.1f}  {r[5]:10.1f}  {r[6]:.3f}")
    for r in rows:
        assert abs(r[6] - 1) < 0.15, r
