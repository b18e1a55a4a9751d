"""``transport.tso_defer``: Linux's TSO deferral (``tcp_tso_should_defer``) on by
default; off in the textbook stack; the emulator cannot turn it off and says so."""

import struct

import numpy as np
import pytest

import ccbench
from ccbench.scenario import Scenario, ScenarioError


def _path(rate="50Mbit", **transport):
    return Scenario.from_dict({
        "run": {"duration": "4s"},
        "topology": {"kind": "dumbbell", "bottleneck": {"down": rate, "up": rate, "delay": "50ms",
                                                        "queue": {"kind": "droptail", "limit": "417pkt"}}},
        "flows": [{"name": "bulk", "direction": "down", "transport": {"kind": "tcp", "cc": "cubic", **transport},
                   "app": {"kind": "bulk"}}],
    })


def test_the_key_reaches_the_simulator_and_the_textbook_stack_turns_it_off():
    tcp = lambda s: s.to_sim_config()["flows"][0]["transport"]  # noqa: E731
    assert "tso_defer" not in tcp(_path())  # Linux's, the simulator's default
    assert tcp(_path(tso_defer=False))["tso_defer"] is False
    assert tcp(_path(stack="textbook-reno"))["tso_defer"] is False
    with pytest.raises(ScenarioError, match="tso_defer"):
        _path(tso_defer="sometimes")


def test_the_emulator_says_it_cannot_turn_deferral_off():
    from ccbench.emu.runner import _plan

    plan = _plan(_path(tso_defer=False).to_sim_config(), {"srv": "a", "cli": "b"}, 10**6)
    assert any("tso_defer" in m for m in plan.ignored), plan.ignored


def _bursts(pcap_path):
    """Segments per burst of full-sized data packets (gaps under 5 us) in a pcap."""
    b = open(pcap_path, "rb").read()
    nano = struct.unpack("<I", b[:4])[0] == 0xA1B23C4D
    off, ts = 24, []
    while off + 16 <= len(b):
        s, frac, incl, orig = struct.unpack("<IIII", b[off:off + 16])
        off += 16 + incl
        if orig > 1000:
            ts.append(s + frac * (1e-9 if nano else 1e-6))
    t = np.array(ts)
    return np.diff(np.r_[0, np.where(np.diff(t) > 5e-6)[0] + 1, len(t)])


def test_a_50_mbit_cubic_flow_sends_the_kernels_4_segment_skbs(tmp_path):
    # Traced on the kernel (net:net_dev_queue, 15 s): 81 % of the skbs of one CUBIC flow
    # at 50 Mbit/s, 100 ms were 4 segments, 10 % 5. Per ACK the simulator sent 2 (86 %).
    from ccbench.pcap import PcapOptions

    for defer, ok in ((True, lambda n: n >= 4), (False, lambda n: n <= 2)):
        d = tmp_path / str(defer)
        run = ccbench.simulate(_path(tso_defer=defer), seed=1, pcap=PcapOptions(links=("srv0_up",), directory=d, snaplen=64))
        sizes = _bursts(d / "srv0_up.pcap")
        share = float(np.mean(ok(sizes)))
        assert share > 0.75, (defer, np.bincount(sizes)[:8])
        assert run.flows.set_index("flow").loc["bulk", "goodput_bps"] > 40e6
