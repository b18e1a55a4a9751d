"""``topology.access.jitter``: the hosts' stack latency as a random delay on each access
link, drawn per packet and per link, in order unless asked otherwise."""

import numpy as np
import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _cbr(access=None):
    topo = {"kind": "dumbbell", "bottleneck": {"down": "10Mbit", "up": "10Mbit", "delay": "10ms"}}
    if access is not None:
        topo["access"] = access
    return Scenario.from_dict({
        "run": {"duration": "2s"},
        "topology": topo,
        "flows": [{"name": "voip", "direction": "down", "transport": {"kind": "udp"},
                   "app": {"kind": "cbr", "size": "200B", "interval": "1ms"}}],
    })


def _one_way_us(scn, seed=1):
    p = ccbench.simulate(scn, seed=seed).packets
    p = p[p.t_arrive.notna()]
    return p, (p.t_arrive - p.t_write).to_numpy() * 1e6


def test_the_jitter_reaches_both_directions_of_every_access_link_in_order():
    cfg = _cbr({"delay": "20us", "jitter": {"sigma": "10us"}}).to_sim_config()
    assert cfg["topology"]["access"]["jitter"] == {"sigma_ns": 10_000, "dist": "uniform", "correlation": 0.0,
                                                   "reorder": False}
    assert "jitter" not in _cbr({"delay": "20us"}).to_sim_config()["topology"]["access"]


def test_packets_see_the_access_delay_vary_around_its_mean_and_keep_their_order():
    _, fixed = _one_way_us(_cbr({"delay": "20us"}))
    p, varied = _one_way_us(_cbr({"delay": "20us", "jitter": {"sigma": "10us"}}))
    assert np.ptp(fixed) < 1.0  # one constant path
    # two access links of 20 +- 10 us each (uniform): 40 us on average, 20..60 us
    extra = varied - fixed.min() + 40.0
    assert abs(extra.mean() - 40.0) < 1.5, extra.mean()
    assert np.percentile(extra, 1) < 28 and np.percentile(extra, 99) > 52
    assert extra.min() >= 19.0 and extra.max() <= 61.0
    assert (np.diff(p.sort_values("msg").t_arrive.to_numpy()) >= 0).all(), "a host does not reorder"
    # the draws follow the seed
    assert np.array_equal(_one_way_us(_cbr({"delay": "20us", "jitter": {"sigma": "10us"}}))[1], varied)
    assert not np.array_equal(_one_way_us(_cbr({"delay": "20us", "jitter": {"sigma": "10us"}}), seed=2)[1], varied)


def test_bad_access_jitter_is_refused_with_the_field_named():
    with pytest.raises(ScenarioError, match="access.jitter.sigma"):
        _cbr({"delay": "20us", "jitter": {"sigma": "ten"}})
    with pytest.raises(ScenarioError, match="access.jitter.dist"):
        _cbr({"delay": "20us", "jitter": {"sigma": "1us", "dist": "cauchy"}})


def test_the_emulator_says_it_leaves_the_access_jitter_to_the_kernel_hosts():
    from ccbench.emu.runner import _plan

    plan = _plan(_cbr({"delay": "20us", "jitter": {"sigma": "10us"}}).to_sim_config(), {"srv": "a", "cli": "b"}, 10**6)
    assert any("access.jitter" in m for m in plan.ignored), plan.ignored
    assert not _plan(_cbr({"delay": "20us"}).to_sim_config(), {"srv": "a", "cli": "b"}, 10**6).ignored
