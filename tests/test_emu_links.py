"""Emulator: a trace-driven bottleneck and link jitter with the real kernel TCP
(needs root, /dev/net/tun, ip and the ccemu binary; skipped otherwise, as test_emu.py).

One shared 8 s run: the down link replays examples/traces/stepped.down (12, 3, 24,
6 Mbit/s for 2 s each: one period) under a kernel CUBIC download; the up link has
5 ms of normal jitter around 20 ms with reordering, under a UDP CBR stream.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from test_emu import _missing

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "examples" / "traces" / "stepped.down"

_reason = _missing()
if _reason:
    print(f"test_emu_links: skipped: {_reason}", file=sys.stderr)
pytestmark = [pytest.mark.emu, pytest.mark.skipif(_reason is not None, reason=f"emulator unavailable: {_reason}")]

SCENARIO = f"""
[run]
duration = "8s"
seed = 1

[topology]
kind = "dumbbell"
[topology.bottleneck]
down = {{ trace = "{TRACE}" }}
up = "100Mbit"
delay = "20ms"
queue = {{ kind = "droptail", limit = "100pkt" }}
up_jitter = {{ sigma = "5ms", dist = "normal", reorder = true }}

[[flows]]
name = "bulk"
direction = "down"
transport = {{ kind = "tcp", cc = "cubic" }}
app = {{ kind = "bulk" }}

[[flows]]
name = "voip"
direction = "up"
transport = {{ kind = "udp" }}
app = {{ kind = "cbr", size = "200B", interval = "5ms" }}
"""


@pytest.fixture(scope="module")
def run():
    from ccbench.emu.runner import emulate
    from ccbench.scenario import Scenario

    return emulate(Scenario.from_toml(SCENARIO))


def test_a_kernel_download_gets_the_trace_capacity(run):
    ms = [int(x) for x in TRACE.read_text().split()]
    cap = len(ms) * 1500 * 8 / (ms[-1] / 1000)
    bulk = run.flows.set_index("flow").loc["bulk"]
    wire = bulk["goodput_bps"] * 1500 / 1448
    print(f"wire rate {wire / 1e6:.2f} Mbit/s, trace capacity {cap / 1e6:.2f} Mbit/s")
    # slow start and the connection's last RTT cost a little of one 8 s period
    assert 0.90 * cap <= wire <= 1.01 * cap


def test_udp_delays_jitter_and_reorder_as_configured(run):
    p = run.packets[run.packets["flow"] == "voip"].dropna(subset=["t_arrive"]).sort_values("msg")
    d = (p["t_arrive"] - p["t_write"]).to_numpy()
    assert len(d) > 1400
    mean, sd = float(d.mean()), float(d.std())
    print(f"UDP one-way delay mean {mean * 1e3:.2f} ms, sd {sd * 1e3:.2f} ms")
    # N(20 ms, 5 ms) plus the emulator's wake-up latency (well under 1 ms)
    assert 0.0195 < mean < 0.0215
    assert 0.0045 < sd < 0.0056
    # packet k+1 (5 ms later) overtakes k when D_k - D_{k+1} > 5 ms: 1 - Phi(1/sqrt 2)
    from scipy import stats

    rate = float(np.mean(np.diff(p["t_arrive"].to_numpy()) < 0))
    expected = 1 - stats.norm.cdf(1 / math.sqrt(2))
    print(f"reordered {rate:.3f}, expected {expected:.3f}")
    assert abs(rate - expected) < 0.04
