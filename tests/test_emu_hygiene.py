"""Emulator hygiene: work directories removed unless kept, a killed run's leftovers
(namespaces, pid file, work directory, probes) gone by the next run, and more than 254
host pairs addressed (a /16 per side) or refused with the limit named.

The addressing tests need nothing; the runs need root, /dev/net/tun, ip and ccemu (as
tests/test_emu.py, whose skip rule this file shares)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from test_emu import _reason

ROOT = Path(__file__).resolve().parents[1]
needs_emu = [pytest.mark.emu, pytest.mark.skipif(_reason is not None, reason=f"emulator unavailable: {_reason}")]

SCENARIO = """
[run]
duration = "{duration}"
[topology]
kind = "dumbbell"
pairs = {pairs}
access = {{ pair_delays = {delays} }}
[topology.bottleneck]
down = "10Mbit"
up = "10Mbit"
delay = "5ms"
queue = {{ kind = "droptail", limit = "50000B" }}

[[flows]]
name = "far"
pair = {far}
direction = "down"
transport = {{ kind = "udp" }}
app = {{ kind = "cbr", size = "200B", interval = "10ms" }}

[[flows]]
name = "near"
pair = 0
direction = "down"
transport = {{ kind = "udp" }}
app = {{ kind = "cbr", size = "200B", interval = "10ms" }}
"""


def _scenario(duration="2s", pairs=1, far=0, far_delay_ms=0):
    from ccbench.scenario import Scenario

    delays = "[" + ", ".join('"%dms"' % (far_delay_ms if i == far else 0) for i in range(pairs)) + "]"
    return Scenario.from_toml(SCENARIO.format(duration=duration, pairs=pairs, far=far, delays=delays))


# --- addressing (no root needed) ---------------------------------------------------------------


def test_addressing_plan_holds_more_than_254_pairs():
    from ccbench.emu.addresses import MAX_PAIRS, host_addr, side_prefix

    got = {i: (host_addr("srv", i), host_addr("cli", i)) for i in (0, 253, 254, 255, 1000, MAX_PAIRS - 1)}
    assert got[0] == ("10.78.0.1", "10.79.0.1")
    assert got[253] == ("10.78.0.254", "10.79.0.254")
    assert got[254] == ("10.78.0.255", "10.79.0.255")  # a host address in a /16
    assert got[255] == ("10.78.1.0", "10.79.1.0")
    assert got[MAX_PAIRS - 1] == ("10.78.255.254", "10.79.255.254")
    addrs = {host_addr("srv", i) for i in range(MAX_PAIRS)}
    assert len(addrs) == MAX_PAIRS and "10.78.0.0" not in addrs and "10.78.255.255" not in addrs
    assert side_prefix("srv") == "10.78.0.0/16" and side_prefix("cli") == "10.79.0.0/16"
    with pytest.raises(ValueError, match="65533"):
        host_addr("srv", MAX_PAIRS)


def test_more_pairs_than_the_plan_are_refused_with_the_limit():
    from ccbench.emu.runner import _plan
    from ccbench.emu import EmulationError

    cfg = {"topology": {"kind": "dumbbell", "pairs": 70000}, "flows": [], "duration_ns": 10**9}
    with pytest.raises(EmulationError) as e:
        _plan(cfg, {"srv": "a", "cli": "b"}, 10**6)
    assert "70000 host pairs" in str(e.value) and "at most 65534" in str(e.value)


# --- runs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("keep", [False, True], ids=["removed", "kept"])
def test_work_directory_removed_unless_kept(keep, tmp_path):
    pytest.importorskip("ccbench._core")
    if _reason is not None:
        pytest.skip(f"emulator unavailable: {_reason}")
    from ccbench.emu.runner import emulate

    before = set(Path("/tmp").glob("ccbench-emu-*"))
    run = emulate(_scenario(duration="1s"), keep=keep)
    made = set(Path("/tmp").glob("ccbench-emu-*")) - before
    rid = run.meta["emu"]["run_id"]
    if keep:
        assert run.meta["emu"]["files"] and Path(run.meta["emu"]["files"]).is_dir()
        assert (Path(run.meta["emu"]["files"]) / "sim.json").exists()
        import shutil

        shutil.rmtree(run.meta["emu"]["files"])
    else:
        assert run.meta["emu"]["files"] is None
        assert not [d for d in made if d.name.startswith(f"ccbench-emu-{rid}-")]
    assert not Path(f"/run/ccbench-emu/{rid}.pid").exists()


_CHILD = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, {py!r})
    from ccbench.scenario import Scenario
    from ccbench.emu.runner import emulate
    emulate(Scenario.from_toml({toml!r}))
    """
)


def _ccemu_pids_of(run_id: str) -> list[int]:
    """Processes whose command line names the run's namespaces (bottleneck, probes)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"ccb-{run_id}-" in cmd or f"ccbench-emu-{run_id}-" in cmd:
            out.append(int(d.name))
    return out


@pytest.mark.parametrize("_", [0], ids=["sigkill"])
def test_killed_run_leaves_nothing_after_the_next_run(_, tmp_path):
    if _reason is not None:
        pytest.skip(f"emulator unavailable: {_reason}")
    from ccbench.emu.runner import emulate
    from ccbench.emu import list_namespaces

    pid_dir = Path("/run/ccbench-emu")
    before = set(pid_dir.glob("*.pid")) if pid_dir.exists() else set()
    script = tmp_path / "child.py"
    script.write_text(_CHILD.format(py=str(ROOT / "python"), toml=SCENARIO.format(duration="20s", pairs=1, far=0, delays="[]")))
    child = subprocess.Popen([sys.executable, str(script)], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    rid = None
    while time.monotonic() < deadline and rid is None:
        new = (set(pid_dir.glob("*.pid")) if pid_dir.exists() else set()) - before
        for pf in new:
            if json.loads(pf.read_text() or "{}").get("pid") == child.pid:
                rid = pf.stem
        time.sleep(0.1)
    assert rid, "the child run did not start"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(_ccemu_pids_of(rid)) < 3:
        time.sleep(0.1)  # bottleneck and probes running
    workdir = Path(json.loads((pid_dir / f"{rid}.pid").read_text())["workdir"])
    assert workdir.is_dir()
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    # the probes and the bottleneck die with the run (PR_SET_PDEATHSIG) ...
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _ccemu_pids_of(rid):
        time.sleep(0.1)
    assert _ccemu_pids_of(rid) == []
    # ... its namespaces, pid file and work directory are left until the next run
    assert {f"ccb-{rid}-srv", f"ccb-{rid}-cli"} <= set(list_namespaces())
    assert (pid_dir / f"{rid}.pid").exists() and workdir.is_dir()
    emulate(_scenario(duration="1s"))
    assert not {f"ccb-{rid}-srv", f"ccb-{rid}-cli"} & set(list_namespaces())
    assert not (pid_dir / f"{rid}.pid").exists()
    assert not workdir.exists()


def test_pair_beyond_254_is_addressed_and_gets_its_own_delay():
    if _reason is not None:
        pytest.skip(f"emulator unavailable: {_reason}")
    from ccbench.emu.runner import emulate

    # 300 pairs; the far flow on pair 299 (10.78.1.44 -> 10.79.1.44) with 30 ms more
    # server-side access delay than pair 0: ccemu must map the address to pair 299
    run = emulate(_scenario(duration="2s", pairs=300, far=299, far_delay_ms=30))
    p = run.packets
    d = (p["t_deliver"] - p["t_write"]).groupby(p["flow"]).median()
    print(f"median one-way delay: far {d['far'] * 1e3:.2f} ms, near {d['near'] * 1e3:.2f} ms")
    assert len(p[p["flow"] == "far"]["t_deliver"].dropna()) >= 150  # it arrived
    assert 0.025 <= d["far"] - d["near"] <= 0.035
