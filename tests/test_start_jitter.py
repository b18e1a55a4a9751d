"""``[run] start_jitter`` and ``start_stagger``: flows that start together in a scenario do
not start in the same microsecond on real hosts; the simulator spreads them from the run
seed."""

import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _ten_dict():
    return {
        "topology": {"kind": "dumbbell", "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": "25ms",
                                                       "queue": {"kind": "droptail", "limit": "417pkt"}}},
        "flows": [{"name": f"bulk{k}", "pair": k, "direction": "down", "transport": {"kind": "tcp", "cc": "cubic"},
                   "app": {"kind": "bulk"}} for k in range(10)],
    }


def _ten(jitter=None):
    run = {"duration": "3s", "state_sample": "10ms"}
    if jitter is not None:
        run["start_jitter"] = jitter
    return Scenario.from_dict({**_ten_dict(), "run": run})


def test_offsets_are_uniform_within_the_jitter_and_follow_the_seed():
    scn = _ten("2.5ms")
    starts = [f["start_ns"] for f in scn.to_sim_config(seed=1)["flows"]]
    assert all(0 <= s < 2_500_000 for s in starts) and len(set(starts)) == 10
    assert starts == [f["start_ns"] for f in scn.to_sim_config(seed=1)["flows"]]
    assert starts != [f["start_ns"] for f in scn.to_sim_config(seed=2)["flows"]]
    assert all(f["start_ns"] == 0 for f in _ten().to_sim_config(seed=1)["flows"])


def test_bad_jitter_is_refused_with_the_field_named():
    with pytest.raises(ScenarioError, match="start_jitter"):
        _ten("-1ms")
    with pytest.raises(ScenarioError, match="start_jitter"):
        _ten("2.5")


def test_spread_starts_leave_slow_start_in_different_rounds_as_the_kernel():
    # Through ccemu the kernel's ten flows left slow start at cwnd 49, 89 or 169 (three
    # rounds); identical starts leave it together.
    def exits(scn):
        c = ccbench.simulate(scn, seed=1).cwnd
        return sorted(c[c.ssthresh_pkts < 1e6].groupby("flow", observed=True).first()["ssthresh_pkts"].astype(int))

    spread = exits(_ten("2.5ms"))
    assert min(spread) < 60 and max(spread) > 150, spread
    together = exits(_ten())
    assert min(together) > 100, together


def test_stagger_gives_each_flow_of_a_shared_start_its_own_slot_in_seeded_order():
    # ten flows told to start together: one per 120 us slot, at a uniform point of it
    scn = Scenario.from_dict({**_ten_dict(), "run": {"duration": "3s", "start_stagger": "120us"}})
    starts = [f["start_ns"] for f in scn.to_sim_config(seed=1)["flows"]]
    assert sorted(s // 120_000 for s in starts) == list(range(10))
    assert starts == [f["start_ns"] for f in scn.to_sim_config(seed=1)["flows"]]
    other = [f["start_ns"] for f in scn.to_sim_config(seed=2)["flows"]]
    assert [s // 120_000 for s in other] != [s // 120_000 for s in starts]  # the order follows the seed
    # the emulator's hosts stagger their own senders: nothing added there
    assert all(f["start_ns"] == 0 for f in scn.to_sim_config(seed=1, stagger_starts=False)["flows"])


def test_stagger_leaves_a_lone_start_alone_and_refuses_bad_values():
    d = _ten_dict()
    d["flows"][9]["start"] = "5s"
    scn = Scenario.from_dict({**d, "run": {"duration": "8s", "start_stagger": "1ms"}})
    starts = [f["start_ns"] for f in scn.to_sim_config(seed=3)["flows"]]
    assert starts[9] == 5_000_000_000 and max(starts[:9]) < 9_000_000
    with pytest.raises(ScenarioError, match="start_stagger"):
        Scenario.from_dict({**_ten_dict(), "run": {"duration": "3s", "start_stagger": "-5us"}})
