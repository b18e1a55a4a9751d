"""``transport.syn_rtt``: the RTT sample of a SYN exchange, which a Linux connection has
before its first data segment and the simulator (no handshake) does not by default."""

import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _one(syn_rtt=None, limit="3pkt"):
    tr = {"kind": "tcp", "cc": "reno", "tlp": False}
    if syn_rtt is not None:
        tr["syn_rtt"] = syn_rtt
    return Scenario.from_dict({
        "run": {"duration": "3s"},
        "topology": {"kind": "dumbbell", "bottleneck": {"down": "10Mbit", "up": "10Mbit", "delay": "20ms",
                                                       "queue": {"kind": "droptail", "limit": limit}}},
        "flows": [{"name": "xfer", "direction": "down", "transport": tr, "app": {"kind": "bulk", "bytes": "14480B"}}],
    })


def test_reaches_the_simulator_in_microseconds_and_is_off_by_default():
    assert _one("40ms").to_sim_config()["flows"][0]["transport"]["syn_rtt_us"] == 40_000
    assert "syn_rtt_us" not in _one().to_sim_config()["flows"][0]["transport"]


def test_the_sender_starts_with_the_sample_before_any_ack():
    # the state sampled at t = 0, before the first data ACK (about 41 ms in)
    with_syn = ccbench.simulate(_one("40ms")).cwnd
    without = ccbench.simulate(_one()).cwnd
    assert with_syn.iloc[0].t == 0 and with_syn.iloc[0].srtt_s == pytest.approx(0.040)
    first = without.iloc[0].srtt_s
    assert not first > 0, first  # no sample yet


def test_bad_value_names_the_field():
    with pytest.raises(ScenarioError) as e:
        _one("-3ms")
    assert "syn_rtt" in str(e.value)
