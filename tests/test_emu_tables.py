"""Emulator output handling that needs no root: byte-range first times, message
arrival times, CA-state transition counts, planning errors."""

from __future__ import annotations

import numpy as np
import pytest

from ccbench.emu import tables as T


def test_first_times_keeps_the_earliest_sighting():
    # [0,100) at t=1, [100,200) lost then retransmitted at t=5, [200,300) at t=2,
    # a duplicate of [0,100) at t=9 changes nothing.
    s = np.array([0, 200, 100, 0])
    e = np.array([100, 300, 200, 100])
    t = np.array([1, 2, 5, 9])
    S, E, TT = T.first_times(s, e, t)
    assert list(zip(S, E, TT)) == [(0, 100, 1), (100, 200, 5), (200, 300, 2)]
    assert list(T.byte_time(S, E, TT, np.array([0, 150, 299, 300]))[:3]) == [1, 5, 2]
    assert np.isnan(T.byte_time(S, E, TT, np.array([300]))[0])


def test_partial_overlap_paints_only_new_bytes():
    S, E, TT = T.first_times(np.array([0, 50]), np.array([100, 150]), np.array([1, 2]))
    assert list(zip(S, E, TT)) == [(0, 100, 1), (100, 150, 2)]


def test_message_arrival_is_the_last_byte_to_arrive():
    S, E, TT = T.first_times(np.array([0, 100, 200]), np.array([100, 200, 300]), np.array([1, 7, 3]))
    a = np.array([0, 150, 250])
    b = np.array([150, 260, 400])
    out = T.range_time(S, E, TT, a, b)
    assert out[0] == 7 and out[1] == 7
    assert np.isnan(out[2])  # bytes 300..400 never arrived


def test_transitions_into_counts_entries():
    assert T.transitions_into(np.array([0, 3, 3, 0, 3, 4, 4, 0]), 3) == 2
    assert T.transitions_into(np.array([0, 3, 3, 0, 3, 4, 4, 0]), 4) == 1
    assert T.transitions_into(np.array([], dtype=np.uint8), 3) == 0


def test_record_layouts():
    assert T.INFO.itemsize == 80 and T.SEND.itemsize == 32 and T.QUEUE.itemsize == 24


def test_plan_rejects_unsupported_topology_and_cc():
    from ccbench.emu.runner import EmulationError, _plan

    cfg = {"topology": {"kind": "graph"}, "flows": [], "duration_ns": 1, "seed": 1}
    with pytest.raises(EmulationError, match="graph.*not supported.*dumbbell"):
        _plan(cfg, {"srv": "a", "cli": "b"}, 1_000_000)
    cfg = {
        "topology": {"kind": "dumbbell", "pairs": 1},
        "duration_ns": 1,
        "seed": 1,
        "flows": [{"name": "x", "src": "srv0", "dst": "cli0", "transport": {"kind": "tcp", "cc": {"name": "nosuchcc", "params": {}}}, "app": {"kind": "bulk"}}],
    }
    with pytest.raises(EmulationError, match="nosuchcc.*not offered by this kernel; available"):
        _plan(cfg, {"srv": "a", "cli": "b"}, 1_000_000)


def test_ccemu_lookup_names_the_build_command(monkeypatch, tmp_path):
    from ccbench.emu import EmulationError, system

    monkeypatch.setenv("CCBENCH_CCEMU", str(tmp_path / "nope"))
    with pytest.raises(EmulationError, match="not an executable"):
        system.find_ccemu()
    monkeypatch.delenv("CCBENCH_CCEMU")
    from ccbench import binaries

    monkeypatch.setattr(binaries.shutil, "which", lambda name: None)
    monkeypatch.setattr(binaries, "REPO", tmp_path)
    with pytest.raises(EmulationError, match="cargo build --release -p ccemu"):
        system.find_ccemu()


def _fake_run(goodput, cwnd):
    import pandas as pd

    from ccbench.run import Run

    flows = pd.DataFrame(
        {"flow": ["a"], "transport": ["tcp"], "cc": ["reno"], "goodput_bps": [goodput], "loss_rate": [0.01],
         "rtt_p50_s": [0.05], "rtt_p95_s": [0.06], "delay_p50_s": [float("nan")], "delay_p95_s": [float("nan")],
         "delay_p99_s": [float("nan")]}
    )
    cw = pd.DataFrame({"flow": ["a"] * len(cwnd), "t": np.arange(len(cwnd)) * 0.01, "cwnd_pkts": np.asarray(cwnd, dtype=float)})
    empty = pd.DataFrame()
    return Run(packets=empty, flows=flows, cwnd=cw, queue=empty, drops=empty)


def test_compare_runs_relative_differences_and_plot(tmp_path):
    from ccbench.cli.compare import compare_runs, plot_cwnd

    sim, emu = _fake_run(10e6, [10, 20, 40]), _fake_run(9e6, [10, 20, 30])
    df = compare_runs(sim, emu).set_index("metric")
    assert df.at["goodput", "rel_diff"] == pytest.approx(-0.1)
    assert df.at["RTT p50", "rel_diff"] == pytest.approx(0.0)
    assert np.isnan(df.at["delay p50", "rel_diff"])
    png = plot_cwnd(sim, emu, tmp_path / "cwnd.png")
    assert png.stat().st_size > 1000


def test_emu_cli_registers_check_and_clean():
    import typer
    from typer.testing import CliRunner

    from ccbench.cli import compare, emu

    app = typer.Typer()
    emu.register(app)
    compare.register(app)
    r = CliRunner().invoke(app, ["emu", "check", "--json"])
    assert '"congestion_controls"' in r.output
    assert r.exit_code in (0, 1)
    r = CliRunner().invoke(app, ["compare", "--help"])
    assert r.exit_code == 0 and "kernel" in r.output
