"""``transport.syn_rtt``: the RTT sample of the SYN exchange, which a Linux connection
has before its first data segment; the simulator (no handshake) takes it from the path."""

import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _flows(syn_rtt=None, second_start="0s", n=1):
    tr = {"kind": "tcp", "cc": "reno"}
    if syn_rtt is not None:
        tr["syn_rtt"] = syn_rtt
    return Scenario.from_dict({
        "run": {"duration": "3s"},
        "topology": {"kind": "dumbbell", "bottleneck": {"down": "10Mbit", "up": "10Mbit", "delay": "20ms",
                                                       "queue": {"kind": "droptail", "limit": "34pkt"}}},
        "flows": [{"name": f"f{k}", "pair": k, "direction": "down", "transport": tr, "app": {"kind": "bulk"},
                   "start": "0s" if k == 0 else second_start} for k in range(n)],
    })


def test_modes_reach_the_simulator():
    tr = lambda s: s.to_sim_config()["flows"][0]["transport"]  # noqa: E731
    assert tr(_flows()) == {"kind": "tcp", "cc": {"name": "reno", "params": {}}}  # the simulator's default: "path"
    assert tr(_flows("off"))["handshake_rtt"] is False
    assert tr(_flows("40ms"))["syn_rtt_us"] == 40_000
    assert tr(Scenario.from_dict({**_flows().to_dict(), "flows": [
        {"name": "a", "direction": "down", "transport": {"kind": "tcp", "stack": "textbook-reno"}, "app": {"kind": "bulk"}}]}))\
        ["handshake_rtt"] is False  # ns-2's agents have no SYN


def test_the_sample_is_the_path_round_trip_of_a_syn_before_any_ack():
    # 40 ms of propagation plus 60 B serialised on the bottleneck both ways (2 x 48 us)
    srtt0 = ccbench.simulate(_flows()).cwnd.iloc[0].srtt_s
    assert srtt0 == pytest.approx(0.040096, abs=2e-6)
    assert not ccbench.simulate(_flows("off")).cwnd.iloc[0].srtt_s > 0  # no sample yet


def test_a_flow_joining_a_full_queue_measures_the_queue():
    # the second flow's SYN waits behind the first flow's backlog (up to 34 packets
    # of 1.2 ms): its first srtt is well above the base RTT, as the kernel's would be
    c = ccbench.simulate(_flows(second_start="2s", n=2)).cwnd
    late = c[(c.flow == "f1") & (c.t >= 2.0)].iloc[0].srtt_s
    assert late > 0.050, late


def test_bad_value_names_the_field():
    with pytest.raises(ScenarioError) as e:
        _flows("soon")
    assert "syn_rtt" in str(e.value)
