"""``transport.skb_overhead``: the send buffer counts skb truesize, as Linux's
``sk_wmem_queued`` does (832 B per skb beyond its payload, measured on 6.18), so a
4 MiB buffer holds less data than 4 MiB; "0B" counts data only."""

import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _path(**transport):
    # The hold-out row 1-cubic-100Mbit-200ms-1bdp: the window reaches the 4 MiB buffer.
    return Scenario.from_dict({
        "run": {"duration": "15s", "start_jitter": "2ms"},
        "topology": {"kind": "dumbbell",
                     "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": "100ms",
                                    "queue": {"kind": "droptail", "limit": "1667pkt"}},
                     "access": {"delay": "4us", "jitter": {"sigma": "2.5us", "dist": "pareto"}}},
        "flows": [{"name": "bulk", "direction": "down", "app": {"kind": "bulk"},
                   "transport": {"kind": "tcp", "cc": "cubic", "syn_rtt": "idle", **transport}}],
    })


def test_the_key_reaches_the_simulator_and_bad_values_are_refused():
    tcp = lambda s: s.to_sim_config()["flows"][0]["transport"]  # noqa: E731
    assert "skb_overhead_bytes" not in tcp(_path())  # the simulator's default, 832
    assert tcp(_path(skb_overhead="0B"))["skb_overhead_bytes"] == 0
    assert tcp(_path(skb_overhead="1KiB"))["skb_overhead_bytes"] == 1024
    for bad in ("-5B", "lots", "10ms"):
        with pytest.raises(ScenarioError, match="skb_overhead"):
            _path(skb_overhead=bad)


def test_the_emulator_says_the_kernel_has_its_own():
    from ccbench.emu.runner import _plan

    plan = _plan(_path(skb_overhead="0B").to_sim_config(), {"srv": "a", "cli": "b"}, 10**6)
    assert any("skb_overhead" in m for m in plan.ignored), plan.ignored


def test_a_window_at_the_send_buffer_queues_like_the_kernels():
    # Kernel (tests/data/kernel/holdout_runs.csv, 3 runs): 84.6 Mbit/s, srtt median
    # 248 ms. Counting data only, the buffer held ~5 % more than the kernel's: the
    # slow-start overshoot grew, cost a third window cut, and the median fell to 202 ms
    # at 77.5 Mbit/s.
    def run(**tr):
        f = ccbench.simulate(_path(**tr), seed=1).flows.set_index("flow").loc["bulk"]
        return f.goodput_bps / 1e6, f.rtt_p50_s

    goodput, srtt = run()
    assert goodput == pytest.approx(84.6, rel=0.05)
    assert srtt == pytest.approx(0.248, rel=0.05)
    goodput_data_only, srtt_data_only = run(skb_overhead="0B")
    assert srtt_data_only < 0.225 and goodput_data_only < 80.5
