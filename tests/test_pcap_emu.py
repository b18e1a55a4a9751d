"""Packet capture of the emulator's bottleneck (``ccbench emu run --pcap``): the
kernel's own packets, handshake included, as they leave the bottleneck (needs root,
/dev/net/tun, ip and the ccemu binary, as tests/test_emu.py)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from test_emu import _missing
from test_pcap import ones_complement_ok, read, transport_ok

_reason = _missing()
pytestmark = [pytest.mark.emu, pytest.mark.skipif(_reason is not None, reason=f"emulator unavailable: {_reason}")]
dpkt = pytest.importorskip("dpkt", reason="dpkt is in the test extra: pip install 'ccbench[test]'")

SCENARIO = """
[run]
duration = "2s"

[topology]
kind = "dumbbell"
bottleneck = { down = "10Mbit", up = "10Mbit", delay = "10ms", queue = { kind = "droptail", limit = "20pkt" } }

[[flows]]
name = "bulk"
transport = { kind = "tcp", cc = "cubic" }
app = { kind = "bulk" }
"""


def test_emulator_writes_the_kernels_packets_at_the_bottleneck(tmp_path):
    from ccbench import load_scenario
    from ccbench.emu.runner import emulate
    from ccbench.emu import EmulationError
    from ccbench.pcap import PcapOptions

    (tmp_path / "s.toml").write_text(SCENARIO)
    sc = load_scenario(tmp_path / "s.toml")
    with pytest.raises(EmulationError, match="--pcap: 'srv0_up'"):
        emulate(sc, pcap=PcapOptions(links=("srv0_up",), directory=tmp_path))
    opts = PcapOptions(links=("bottleneck_down+bottleneck_up",), directory=tmp_path, snaplen=2000)
    run = emulate(sc, pcap=opts, rt_prio=0)
    (c,) = run.meta["pcap"]
    pkts = read(c["path"])
    bn = run.meta["emu"]["bottleneck"]
    departed = sum(d["pkts_written"] + d["write_errors"] for d in bn.values())
    assert len(pkts) == c["packets"] == departed - c["overflow"] > 1000
    assert c["overflow"] == 0 and c["error"] is None
    first = pkts[0][2].data
    assert first.flags & dpkt.tcp.TH_SYN and first.sport == 20000 and first.dport == 30000
    assert pkts[0][2].src == bytes([10, 78, 0, 1])  # the address the simulator's capture uses too
    for _, n, ip in pkts:
        assert ip.len == n and ones_complement_ok(bytes(ip)[:20]) and transport_ok(ip)
    data = sum(len(ip.data.data) for _, _, ip in pkts if ip.data.sport == 20000)
    assert data >= run.flows.loc[0, "bytes_delivered"]
    if shutil.which("tshark"):
        r = subprocess.run(["tshark", "-r", c["path"], "-q", "-z", "expert"], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and "Malformed" not in r.stdout and "Errors (" not in r.stdout, r.stdout
