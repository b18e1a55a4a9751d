"""``transport.sndbuf_mode``: Linux's send buffer is a soft limit (what the window can
send at once passes it; a refused writer resumes when 2/3 of it are free), the models'
W_max a hard one ("window")."""

import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _path(**transport):
    return Scenario.from_dict({
        "run": {"duration": "6s"},
        "topology": {"kind": "dumbbell", "bottleneck": {"down": "100Mbit", "up": "100Mbit", "delay": "50ms",
                                                        "queue": {"kind": "droptail", "limit": "863pkt"}}},
        "flows": [{"name": "bulk", "direction": "down", "transport": {"kind": "tcp", "cc": "cubic", **transport},
                   "app": {"kind": "bulk"}}],
    })


def _goodput_mbps(scn):
    return float(ccbench.simulate(scn, seed=1).flows.set_index("flow").loc["bulk", "goodput_bps"]) / 1e6


def test_the_mode_reaches_the_simulator_and_the_textbook_stack_uses_the_hard_cap():
    tcp = lambda s: s.to_sim_config()["flows"][0]["transport"]  # noqa: E731
    assert "sndbuf_mode" not in tcp(_path())  # Linux's, the simulator's default
    assert tcp(_path(sndbuf_mode="window"))["sndbuf_mode"] == "window"
    assert tcp(_path(stack="textbook-reno"))["sndbuf_mode"] == "window"
    with pytest.raises(ScenarioError, match="sndbuf_mode"):
        _path(sndbuf_mode="hard")


def test_a_small_send_buffer_caps_the_window_only_in_window_mode():
    # 256 KiB against a 1.25 MB BDP: a hard cap allows 256 KiB / 100 ms = 21 Mbit/s.
    # Linux's writer passes the buffer whenever the window can send at once; the
    # kernel (ccemu, tcp_wmem[2] = 256 KiB) gets 46.8 Mbit/s on this path over 15 s.
    hard = _goodput_mbps(_path(sndbuf="256KiB", sndbuf_mode="window"))
    soft = _goodput_mbps(_path(sndbuf="256KiB"))
    assert 18 < hard < 22, hard
    assert soft > 35, soft


def test_the_emulator_says_it_cannot_apply_a_hard_cap():
    from ccbench.emu.runner import _plan

    plan = _plan(_path(sndbuf_mode="window").to_sim_config(), {"srv": "a", "cli": "b"}, 10**6)
    assert any("sndbuf_mode" in m for m in plan.ignored), plan.ignored
    assert not _plan(_path().to_sim_config(), {"srv": "a", "cli": "b"}, 10**6).ignored
