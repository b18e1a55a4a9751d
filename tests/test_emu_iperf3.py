"""The emulator's iperf3 traffic source (``[emu] traffic_source = "iperf3"``).

Planning, command lines and errors need nothing; the run (one iperf3 CUBIC flow beside
a built-in UDP CBR stream, 2 s, 10 Mbit/s, 40 ms RTT) needs root, /dev/net/tun, ip,
ccemu and iperf3, and is skipped without them (as tests/test_emu.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from test_emu import SCENARIO as EMU_SCENARIO
from test_emu import _reason as _emu_reason

ROOT = Path(__file__).resolve().parents[1]
_reason = _emu_reason or (None if shutil.which("iperf3") else "no `iperf3` command (apt-get install iperf3)")

# test_emu's CUBIC download beside an upstream VoIP stream, with the iperf3 source and a
# 20 KB Reno transfer (which keeps the built-in source)
SCENARIO = EMU_SCENARIO.replace('limit = "50000B"', 'limit = "34pkt"') + """
[emu]
traffic_source = "iperf3"
[[flows]]
name = "file"
direction = "down"
transport = {{ kind = "tcp", cc = "reno" }}
app = {{ kind = "bulk", bytes = "{bytes}" }}
"""


def _scenario(duration="2s", bytes="20KB"):
    from ccbench.scenario import Scenario

    return Scenario.from_toml(SCENARIO.format(duration=duration, bytes=bytes, cc="cubic"))


def test_only_greedy_bulk_tcp_flows_get_iperf3():
    from ccbench.emu import iperf3 as ip3
    from ccbench.emu.runner import _plan

    sc = _scenario()
    assert sc.emu.traffic_source == "iperf3"
    plan = _plan(sc.to_sim_config(), {"srv": "a", "cli": "b"}, 1_000_000, "iperf3")
    assert [p["source"] for p in plan.flows] == ["iperf3", "ccemu", "ccemu"]
    cmd = ip3.client_cmd("iperf3", plan.flows[0], plan.flows[0]["tcp"])
    # the data connection is bound to the flow's address and port (the bottleneck's flow
    # map), the cc and the duration are the flow's, and no socket buffer is forced (-w)
    assert cmd[cmd.index("--cport") + 1] == str(plan.flows[0]["sport"])
    assert cmd[cmd.index("-B") + 1] == plan.flows[0]["src_ip"]
    assert cmd[cmd.index("-C") + 1] == "cubic" and cmd[cmd.index("-t") + 1] == "2"
    assert "-w" not in cmd
    # the built-in source is the default
    plan = _plan(sc.to_sim_config(), {"srv": "a", "cli": "b"}, 1_000_000)
    assert {p["source"] for p in plan.flows} == {"ccemu"}


def test_bad_source_is_one_line():
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError, match=r'emu.traffic_source: "ipref" is not accepted \(accepted: "ccemu" or "iperf3"\)'):
        _scenario().from_toml(SCENARIO.format(duration="2s", bytes="1KB", cc="cubic").replace('"iperf3"', '"ipref"'))
    r = subprocess.run([sys.executable, "-m", "ccbench", "emu", "run", str(ROOT / "examples/emu/cubic_10mbit.toml"),
                        "--traffic-source", "ipref", "--no-save"], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "--traffic-source: 'ipref' is not accepted (accepted: ccemu, iperf3)" in r.stderr


def test_missing_iperf3_is_one_line(tmp_path):
    # a PATH without iperf3: the fidelity command says so before running anything
    env = {**os.environ, "PATH": str(Path(sys.executable).parent), "PYTHONPATH": os.environ.get("PYTHONPATH", "")}
    r = subprocess.run([sys.executable, "-m", "ccbench", "fidelity", str(ROOT / "examples/fidelity/default.toml"),
                        "--backends", "emu", "--traffic-source", "iperf3", "--out", str(tmp_path / "f")],
                       capture_output=True, text=True, cwd=ROOT, env=env)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "no `iperf3` command" in r.stderr and "apt-get install iperf3" in r.stderr


@pytest.mark.emu
@pytest.mark.skipif(_reason is not None, reason=f"iperf3 emulation unavailable: {_reason}")
@pytest.mark.filterwarnings("ignore:bulk. iperf3 sets -C")
def test_iperf3_run_fills_the_tables():
    from ccbench.emu.runner import emulate

    run = emulate(_scenario(), seed=1)
    emu = run.meta["emu"]
    assert emu["traffic_source"] == "iperf3" and emu["iperf3"].startswith("iperf 3")
    f = run.flows.set_index("flow")
    bulk = emu["flows"]["bulk"]
    assert bulk["source"] == "iperf3" and emu["flows"]["voip"]["source"] == "ccemu"
    assert emu["flows"]["file"]["source"] == "ccemu"
    # iperf3 starts its data after its control exchange (a few RTTs): start_s is that
    delay = bulk["start_delay_s"]
    assert 0.04 < delay < 1.0 and f.loc["bulk", "start_s"] == pytest.approx(delay)
    # goodput close to the link rate over [start of data, end] (the 20 KB transfer
    # beside it takes about 1 %)
    assert 0.8 * 10e6 < f.loc["bulk", "goodput_bps"] < 10e6
    assert f.loc["bulk", "cc"] == "cubic"
    # TCP_INFO of iperf3's socket sampled every ms as for the built-in source
    c = run.cwnd[run.cwnd["flow"].astype(str) == "bulk"]
    assert len(c) > 1000 and np.median(np.diff(c["t"].to_numpy())) < 2e-3
    assert 0.040 <= f.loc["bulk", "rtt_p50_s"] < 0.080
    assert c["cwnd_pkts"].max() > 20
    # iperf3's own report: its default socket buffers (no -w) and its totals
    rep = bulk["iperf3"]
    assert rep["sock_bufsize"] == 0 and rep["sndbuf_actual"] > 0 and rep["receiver_bytes"] > 1e6
    assert rep["error"] is None and len(rep["intervals"]) >= 10
    # the sysctls read back in the namespaces
    assert emu["kernel_settings"]["srv"]["net.ipv4.tcp_no_metrics_save"] == "1"
    assert "tcp_rmem" in " ".join(emu["kernel_settings"]["cli"])
    from ccbench.emu.system import default_cc

    assert bool(emu["notes"]) == (default_cc() != "cubic")
    # the transfer kept the built-in source and finished
    assert f.loc["file", "completion_s"] > 0


def test_sources_are_judged_with_the_simulator_targets():
    import pandas as pd

    from ccbench.fidelity.sources import compare_sources

    def runs(source, goodput, ss_exit, reps=(1, 2)):
        return pd.DataFrame([{"scenario": "s", "backend": "emu", "rep": r, "flow": "bulk", "traffic_source": source,
                              "goodput_bps": g, "ss_exit_cwnd": x, "rtt_p50_s": 0.05, "timing_ok": True}
                             for r, g, x in zip(reps, goodput, ss_exit)])

    base = pd.concat([runs("", [9.5e6, 9.6e6], [59, 61]),
                      pd.DataFrame([{"scenario": "s", "backend": "sim", "rep": 1, "flow": "bulk", "goodput_bps": 1.0}])])
    other = runs("iperf3", [8.0e6, 8.2e6], [60, 64])
    c = compare_sources(base, other, {"s": 15.0}).set_index("metric")
    assert (c["base_source"] == "ccemu").all() and (c["other_source"] == "iperf3").all()
    assert c.loc["goodput_bps", "differs"] is True and c.loc["goodput_bps", "diff"] == pytest.approx(8.1 / 9.55 - 1)
    assert c.loc["ss_exit_cwnd", "differs"] is False and c.loc["ss_exit_cwnd", "target"] == "25%"
    assert c.loc["rtt_p50_s", "differs"] is False


def test_late_cc_is_noted():
    # iperf3 sets -C after connect(): the sender's route gets the flows' algorithm as its
    # congctl where they share one; otherwise a flow is set up by the default, and noted
    from ccbench.emu import iperf3 as ip3
    from ccbench.emu.runner import _plan

    plan = _plan(_scenario().to_sim_config(), {"srv": "a", "cli": "b"}, 1_000_000, "iperf3")
    # the srv side sends the cubic download and the reno transfer: no single algorithm
    assert ip3.route_congctl(plan.flows) == {}
    notes = ip3.late_cc_notes(plan.flows, "bbr", plan.route_opts)
    assert len(notes) == 1 and notes[0].startswith("bulk: iperf3 sets -C cubic after connecting")
    assert "pacing" in notes[0]
    assert ip3.late_cc_notes(plan.flows, "cubic", plan.route_opts) == []
    one = _scenario().to_sim_config()
    one["flows"] = [f for f in one["flows"] if f["name"] != "file"]
    plan = _plan(one, {"srv": "a", "cli": "b"}, 1_000_000, "iperf3")
    assert plan.route_opts["srv"][-2:] == ["congctl", "cubic"]
    assert ip3.late_cc_notes(plan.flows, "bbr", plan.route_opts) == []
    # the built-in source sets its algorithm before connecting: no route attribute
    assert "congctl" not in _plan(one, {"srv": "a", "cli": "b"}, 1_000_000).route_opts["srv"]
