"""Ack clocking (Wei thesis ch. 2, Algorithm 1; note §1.1, §2.1): one Reno flow over a
lossless path with a large buffer, checked packet by packet.

- ACK spacing: consecutive ACKs reach the sender no closer than 1/c (one data
  packet's serialisation time at the bottleneck), because each ACK is triggered by a
  data packet that left the bottleneck at most c packets per second.
- Stable-link state: while the bottleneck is busy, the packets queued there equal the
  packets in flight minus c·d (d = the propagation RTT): everything in flight that is
  not on the wire (c·d of it) waits in the queue.
"""

from __future__ import annotations

import numpy as np

from conftest import needs_core

pytestmark = needs_core

RATE = 10_000_000  # bit/s
ONE_WAY_S = 0.020


def run_reno():
    from ccbench.backends.sim import simulate_config
    from ccbench.scenario import Scenario

    sc = Scenario.from_dict(
        {
            "run": {"duration": "20s", "state_sample": "1ms", "queue_sample": "1ms"},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"down": "10Mbit", "up": "10Mbit", "delay": "20ms", "queue": {"kind": "droptail", "limit": "100000pkt"}},
            },
            "flows": [
                {"name": "reno", "direction": "down", "app": {"kind": "bulk"},
                 # A receive window of 300 packets stops slow start before any loss. The
                 # send buffer holds exactly that window of data (skb overhead not
                 # counted), so every segment is full-sized: counted in skb truesize, as
                 # Linux does, the writer's refills end mid-segment and the sub-MSS
                 # segments they leave serialise faster than 1/c.
                 "transport": {"kind": "tcp", "cc": "reno", "delayed_ack": False, "rcvbuf": "434400B", "sndbuf": "434400B",
                               "skb_overhead": "0B"}},
            ],
        }
    )
    config = sc.to_sim_config(seed=1)
    config["log_links"] = ["srv0_down"]  # the ACKs as they reach the sender
    return simulate_config(config)


def test_ack_spacing_and_queue_equals_inflight_minus_bdp():
    raw = run_reno()
    assert len(raw["drops"]["t"]) == 0, "lossless path"
    lg = raw["link_log"]
    acks = np.asarray(lg["t"])[~np.asarray(lg["data"], dtype=bool)]
    gaps = np.diff(acks)
    one_pkt = 1500 * 8 / RATE
    print(f"\n{acks.size} ACKs; min spacing {gaps.min() * 1e6:.1f} us vs 1/c = {one_pkt * 1e6:.1f} us")
    assert acks.size > 10_000
    assert gaps.min() >= one_pkt - 1e-9

    # Stable-link state: both tables are sampled at the same 1 ms instants.
    q = raw["queue"]
    link_names = list(raw["link_names"])
    down = np.asarray(q["link"]) == link_names.index("bottleneck_down")
    qt, backlog = np.asarray(q["t"])[down], np.asarray(q["backlog_pkts"])[down]
    s = raw["state"]
    st, inflight = np.asarray(s["t"]), np.asarray(s["inflight_pkts"], dtype=float)
    common, iq, is_ = np.intersect1d(np.round(qt, 9), np.round(st, 9), return_indices=True)
    backlog, inflight = backlog[iq].astype(float), inflight[is_]
    # The ACK path adds a 64-byte ACK's serialisation; the data path one packet.
    bdp_pkts = RATE / (1500 * 8) * (2 * ONE_WAY_S)
    # Stable-link state: the bottleneck has been busy (a standing queue) for at least
    # one propagation RTT, so the pipe is full of the flow's packets and ACKs.
    nonempty = backlog >= 1
    window = int(round(2 * ONE_WAY_S / 1e-3)) + 1
    run_len = np.convolve(nonempty.astype(int), np.ones(window, dtype=int))[: nonempty.size]
    busy = run_len >= window
    err = backlog[busy] + 1 - (inflight[busy] - bdp_pkts)  # +1: the packet being sent
    print(f"{busy.sum()} busy samples; queue - (inflight - c*d): min {err.min():.2f}, max {err.max():.2f} packets")
    assert busy.sum() > 1000
    assert np.all(np.abs(err) <= 2.0)
