"""Issue check (Wei thesis §3.2, Figs 3.1-3.3): a simulated drop-tail bottleneck with
16 Reno flows loses packets in bursts far denser than a Poisson process of the same
rate: most loss intervals are below 1% of an RTT, as the thesis found for NS-2 (80%).
The setup is the thesis's: 100 Mbit/s, 200 ms RTT, a one-BDP drop-tail buffer."""

from __future__ import annotations

from conftest import needs_core

pytestmark = needs_core


def test_sixteen_reno_flows_lose_in_sub_rtt_bursts():
    import ccbench
    from ccbench.analysis import loss_burstiness
    from ccbench.scenario import Scenario

    sc = Scenario.from_dict(
        {
            "run": {"duration": "60s", "state_sample": "0ms"},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": "100ms", "queue": {"kind": "droptail", "limit": "1667pkt"}},
            },
            "flows": [{"name": "reno", "count": 16, "direction": "down", "transport": {"kind": "tcp", "cc": "reno"}, "app": {"kind": "bulk"}}],
        }
    )
    run = ccbench.simulate(sc, seed=1)
    b = loss_burstiness(run.drops, 0.2, link="bottleneck_down")
    print(f"\n{len(run.drops)} drops; within 1% of an RTT: {b.frac_within[0.01]:.3f} (Poisson {b.poisson_within[0.01]:.3f}, "
          f"NS-2 in the thesis ~0.8); within 1 RTT: {b.frac_within[1.0]:.3f} (Poisson {b.poisson_within[1.0]:.3f})")
    assert len(run.drops) > 500
    assert b.frac_within[0.01] > 0.5, "most loss intervals are below 1% of an RTT"
    assert b.frac_within[0.01] > 3 * b.poisson_within[0.01], "far burstier than Poisson"
