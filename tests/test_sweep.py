"""Parameter sweeps: grid x seeds in a local pool and on a Dask cluster, resuming,
failing points, the Parquet store, DuckDB queries and the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, needs_core

pytestmark = needs_core

# One UDP flow that overloads a 1.5 Mbit/s line (so queues fill and drop), 2 s simulated.
BASE = {
    "run": {"duration": "2s", "seed": 1},
    "topology": {
        "kind": "dumbbell",
        "bottleneck": {"down": "1.5Mbit", "up": "256kbit", "delay": "50ms",
                       "queue": {"kind": "droptail", "limit": "20000B", "rule": "bytes-strict"}},
    },
    "flows": [
        {"name": "load", "direction": "down", "transport": {"kind": "udp"},
         "app": {"kind": "cbr", "size": "1500B", "interval": "7.5ms", "jitter": {"dist": "exponential"}}},
    ],
}

GRID = {
    "topology.bottleneck.queue.limit": ["5000B", "10000B", "20000B"],
    "topology.bottleneck.queue.rule": ["bytes-strict", "bytes-loose"],
}

VOLATILE = ["wall_s", "host"]  # differ between executions by nature


def sweep_toml(tmp: Path, grid: dict, seeds=2, extra: str = "", zipped: dict | None = None) -> Path:
    import tomli_w

    (tmp / "base.toml").write_text(tomli_w.dumps(BASE))
    doc = {"scenario": "base.toml", "sweep": {"seeds": seeds, **grid}}
    if zipped:
        doc["sweep"]["zip"] = zipped
    p = tmp / "sweep.toml"
    p.write_text(tomli_w.dumps(doc) + extra)
    return p


class Result:
    def __init__(self, returncode: int, stdout: str, stderr: str):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli_app():
    """The ccbench app; until the integrator registers sweep/query/report in
    ccbench.cli, a small app with just those commands (same error handling)."""
    import typer

    from ccbench.cli import app

    if {"sweep", "query", "report"} <= {c.name for c in app.registered_commands}:
        return app
    from ccbench.cli import query, report, sweep

    own = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    sweep.register(own)
    query.register(own)
    report.register(own)
    return own


@pytest.fixture
def cli(capsys, monkeypatch):
    """Runs the CLI in this process (fast), as ``ccbench ARGS`` would; returns code/stdout/stderr."""
    from ccbench.cli.errors import run_cli

    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: str) -> Result:
        monkeypatch.setattr(sys, "argv", ["ccbench", *args])
        capsys.readouterr()
        try:
            code = run_cli(cli_app())
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
        out, err = capsys.readouterr()
        return Result(code, out, err)

    return run


def cli_process(*args: str) -> subprocess.CompletedProcess:
    """The CLI in a subprocess, as a user runs it."""
    app = cli_app()
    from ccbench.cli import app as main_app

    if app is main_app:
        cmd = [sys.executable, "-m", "ccbench", *args]
    else:
        code = (
            "import sys, typer\n"
            "from ccbench.cli import sweep, query, report\n"
            "from ccbench.cli.errors import run_cli\n"
            "app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)\n"
            "sweep.register(app); query.register(app); report.register(app)\n"
            "sys.exit(run_cli(app))\n"
        )
        cmd = [sys.executable, "-c", code, *args]
    env = dict(os.environ, COLUMNS="200", PYTHONPATH=str(ROOT / "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


@pytest.fixture(scope="module")
def local_sweep(tmp_path_factory):
    """The 3 x 2 grid with 2 seeds, run once in a local pool of 2 processes."""
    from ccbench.sweep import load_sweep, run_sweep

    tmp = tmp_path_factory.mktemp("sweep")
    spec = load_sweep(sweep_toml(tmp, GRID, seeds=2))
    out = tmp / "out"
    t0 = time.perf_counter()
    res = run_sweep(spec, out, jobs=2, progress=False)
    print(f"local sweep of 12 points: {time.perf_counter() - t0:.1f} s")
    return spec, out, res


def test_grid_with_seeds_gives_twelve_rows(local_sweep):
    spec, out, res = local_sweep
    assert len(spec.points()) == 12 and res.total == 12 and res.ran == 12 and res.skipped == 0
    assert res.errors == {}
    df = pd.read_parquet(out / "summary.parquet")
    assert len(df) == 12
    assert df["point"].nunique() == 12
    assert set(df["status"]) == {"ok"} and df["error"].isna().all()
    # parameters are columns named by their dotted path, with the values as written
    assert set(df["topology.bottleneck.queue.limit"]) == {"5000B", "10000B", "20000B"}
    assert set(df["topology.bottleneck.queue.rule"]) == {"bytes-strict", "bytes-loose"}
    assert sorted(df["seed"].unique().tolist()) == [1, 2]
    for col in ("goodput_bps", "loss_rate", "delay_p50_s", "delay_p95_s", "delay_p99_s", "rtt_p50_s", "flow"):
        assert col in df.columns
    assert (df["goodput_bps"] > 1.0e6).all() and (df["loss_rate"] > 0).all()
    # a bigger buffer means more delay: the sweep really changed the scenario
    med = df.groupby("topology.bottleneck.queue.limit")["delay_p50_s"].median()
    assert med["5000B"] < med["10000B"] < med["20000B"]
    # every point has its run directory with the per-packet tables, loadable as a Run
    from ccbench.run import Run

    for rd, pid in zip(df["run_dir"], df["point"]):
        assert rd == f"runs/{pid}"
        assert (out / rd / "packets.parquet").exists() and (out / rd / "summary.json").exists()
    run = Run.load(out / df["run_dir"].iloc[0])
    assert len(run.packets) > 100 and run.meta["sweep"]["point"] == df["point"].iloc[0]
    # the run got the point's values and seed
    row = df.iloc[0]
    q = run.meta["scenario"]["topology"]["bottleneck"]["queue"]
    assert q["limit"] == row["topology.bottleneck.queue.limit"] and q["rule"] == row["topology.bottleneck.queue.rule"]
    assert run.meta["seed"] == row["seed"]


def test_rerun_skips_every_finished_point(local_sweep):
    from ccbench.sweep import load_sweep, run_sweep

    spec, out, _ = local_sweep
    markers = sorted(out.glob("runs/*/summary.json"))
    assert len(markers) == 12
    before = {p: p.stat().st_mtime_ns for p in markers}
    tables = {p: p.stat().st_mtime_ns for p in out.glob("runs/*/packets.parquet")}
    time.sleep(0.05)
    res = run_sweep(load_sweep(spec.source), out, jobs=2, progress=False)
    assert res.ran == 0 and res.executed == [] and res.skipped == 12
    assert {p: p.stat().st_mtime_ns for p in markers} == before
    assert {p: p.stat().st_mtime_ns for p in out.glob("runs/*/packets.parquet")} == tables
    assert len(res.summary) == 12


def test_point_ids_are_stable_and_name_directories(local_sweep):
    from ccbench.sweep import point_id

    spec, out, _ = local_sweep
    ids = [p.id for p in spec.points()]
    assert len(set(ids)) == 12
    assert sorted(ids) == sorted(p.name for p in (out / "runs").iterdir())
    v = {"topology.bottleneck.queue.limit": "5000B", "topology.bottleneck.queue.rule": "bytes-strict"}
    assert point_id(v, 1) == point_id(dict(reversed(list(v.items()))), 1)  # key order does not matter
    assert point_id(v, 1) != point_id(v, 2)
    # a pure function of values + seed: SHA-1 of their canonical JSON (stable across versions)
    import hashlib

    canon = json.dumps({"seed": 1, "values": v}, sort_keys=True, separators=(",", ":"))
    assert point_id(v, 1) == hashlib.sha1(canon.encode()).hexdigest()[:12] == "6b908d9405f5"


def test_failing_point_is_recorded_and_the_rest_complete(tmp_path):
    from ccbench.sweep import load_sweep, run_sweep

    grid = {"topology.bottleneck.queue.limit": ["10000B", "-3B", "20000B"]}
    spec = load_sweep(sweep_toml(tmp_path, grid, seeds=1))
    res = run_sweep(spec, tmp_path / "out", jobs=2, progress=False)
    df = res.summary
    assert len(df) == 3 and res.ran == 3
    bad = df[df["topology.bottleneck.queue.limit"] == "-3B"]
    good = df[df["topology.bottleneck.queue.limit"] != "-3B"]
    assert bad["status"].tolist() == ["error"]
    msg = bad["error"].iloc[0]
    assert "topology.bottleneck.queue.limit" in msg and '"-3B"' in msg
    assert bad["goodput_bps"].isna().all() and bad["run_dir"].isna().all()
    assert good["status"].tolist() == ["ok", "ok"] and good["goodput_bps"].notna().all()
    assert list(res.errors.values()) == [msg]
    # a re-run retries the failed point only (by default); --keep-errors skips it too
    res2 = run_sweep(load_sweep(spec.source), tmp_path / "out", jobs=1, progress=False)
    assert res2.executed == [bad["point"].iloc[0]]
    res3 = run_sweep(load_sweep(spec.source), tmp_path / "out", jobs=1, progress=False, retry_errors=False)
    assert res3.ran == 0


def test_same_sweep_on_a_dask_cluster_gives_identical_rows(local_sweep, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    from ccbench.sweep import load_sweep, run_sweep

    spec, out, _ = local_sweep
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        res = run_sweep(load_sweep(spec.source), tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    print(f"dask sweep of 12 points (with cluster start): {time.perf_counter() - t0:.1f} s")
    assert res.ran == 12 and res.errors == {}
    local = pd.read_parquet(out / "summary.parquet").drop(columns=VOLATILE)
    dask = pd.read_parquet(tmp_path / "dask" / "summary.parquet").drop(columns=VOLATILE)
    key = ["point", "flow"]
    pd.testing.assert_frame_equal(
        local.sort_values(key).reset_index(drop=True), dask.sort_values(key).reset_index(drop=True), check_exact=True
    )
    # the client wrote the per-packet tables
    for rd in dask["run_dir"]:
        assert (tmp_path / "dask" / rd / "packets.parquet").exists()


def test_bad_scheduler_address_is_one_line(local_sweep, tmp_path):
    from ccbench.sweep import SweepError, load_sweep, run_sweep

    spec, _, _ = local_sweep
    with pytest.raises(SweepError, match=r"--scheduler: cannot connect to 'tcp://127\.0\.0\.1:9'"):
        run_sweep(load_sweep(spec.source), tmp_path / "x", scheduler="tcp://127.0.0.1:9", progress=False, scheduler_timeout=2)


def test_duckdb_views(local_sweep):
    from ccbench.sweep import connect

    _, out, _ = local_sweep
    con = connect(out)
    assert con.execute("SELECT count(*) FROM summary").fetchone()[0] == 12
    assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 12
    rows = con.execute(
        'SELECT "topology.bottleneck.queue.limit" AS lim, count(*) FROM summary GROUP BY 1 ORDER BY 1'
    ).fetchall()
    assert rows == [("10000B", 4), ("20000B", 4), ("5000B", 4)]
    n_pkts = con.execute("SELECT count(*) FROM packets").fetchone()[0]
    per = con.execute("SELECT count(DISTINCT point) FROM packets").fetchone()[0]
    assert per == 12 and n_pkts > 12 * 100
    # the packet table joins the summary on point
    j = con.execute("SELECT count(*) FROM packets p JOIN runs r USING (point) WHERE r.seed = 1").fetchone()[0]
    assert 0 < j < n_pkts


def test_query_cli(local_sweep, cli):
    _, out, _ = local_sweep
    r = cli("query", str(out), 'SELECT "topology.bottleneck.queue.rule" AS rule, count(*) AS n FROM summary GROUP BY 1 ORDER BY 1')
    assert r.returncode == 0, r.stderr
    assert "bytes-loose" in r.stdout and "bytes-strict" in r.stdout and "6" in r.stdout
    r = cli("query", str(out), "SELECT count(*) AS n FROM summary", "--format", "csv")
    assert r.returncode == 0 and r.stdout.split() == ["n", "12"]
    r = cli("query", str(out), "SELEKT 1")
    assert r.returncode == 2 and r.stderr.startswith("error: SQL:") and len(r.stderr.strip().splitlines()) == 1
    r = cli("query", str(out / "nope"), "SELECT 1")
    assert r.returncode == 2 and r.stderr.strip() == f"error: no such file: {out / 'nope'}"


def test_sweep_cli_end_to_end(tmp_path, cli):
    p = sweep_toml(tmp_path, {"topology.bottleneck.queue.limit": ["10000B", "20000B"]}, seeds=[3])
    r = cli_process("sweep", str(p), "--jobs", "1", "--out", str(tmp_path / "o"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert "2 points: ran 2, skipped 0" in r.stdout and "0 failed" in r.stdout
    df = pd.read_parquet(tmp_path / "o" / "summary.parquet")
    assert df["seed"].tolist() == [3, 3]
    r = cli("sweep", str(p), "--out", str(tmp_path / "o"), "--quiet")
    assert "ran 0, skipped 2" in r.stdout
    # the sweep file, self-contained, is kept with the results and runs again as is
    assert (tmp_path / "o" / "sweep.toml").exists()
    meta = json.loads((tmp_path / "o" / "sweep.json").read_text())
    assert meta["parameters"] == ["topology.bottleneck.queue.limit"] and meta["seeds"] == [3]


# --- the sweep file ---------------------------------------------------------------------------


def _load(tmp_path, text: str):
    from ccbench.sweep import loads_sweep
    import tomli_w

    (tmp_path / "base.toml").write_text(tomli_w.dumps(BASE))
    return loads_sweep(text, base_dir=tmp_path, source="s.toml")


def test_spec_grid_zip_seeds_and_flow_names(tmp_path):
    spec = _load(
        tmp_path,
        'scenario = "base.toml"\n[sweep]\nseeds = [5, 9]\n'
        'topology.bottleneck.queue.limit = ["10000B", "20000B"]\n'  # bare dotted key = nested tables
        '[sweep.zip]\n"flows.load.app.size" = ["1000B", "1500B", "500B"]\n"flows.load.app.interval" = ["5ms", "7.5ms", "2.5ms"]\n',
    )
    assert spec.grid == {"topology.bottleneck.queue.limit": ["10000B", "20000B"]}
    assert spec.axes == [["topology.bottleneck.queue.limit"], ["flows.load.app.size", "flows.load.app.interval"]]
    pts = spec.points()
    assert len(pts) == 2 * 3 * 2 and {p.seed for p in pts} == {5, 9}
    assert {(p.values["flows.load.app.size"], p.values["flows.load.app.interval"]) for p in pts} == {
        ("1000B", "5ms"), ("1500B", "7.5ms"), ("500B", "2.5ms")}
    assert spec.resolve_path("flows.load.app.size") == "flows.0.app.size"
    scn = spec.scenario_for(pts[0].values)
    assert scn.flows[0].app.size == 1000
    # seeds as a count start at the scenario's run.seed; by default the scenario's seeds
    assert _load(tmp_path, 'scenario = "base.toml"\n[sweep]\nseeds = 3\n').seeds == [1, 2, 3]
    assert _load(tmp_path, 'scenario = "base.toml"\n').seeds == [1]
    # an inline scenario
    import tomli_w

    inline = _load(tmp_path, tomli_w.dumps({"scenario": BASE, "sweep": {"run.duration": ["1s", "2s"]}}))
    assert [p.values for p in inline.points()] == [{"run.duration": "1s"}, {"run.duration": "2s"}]


@pytest.mark.parametrize(
    "body, expected",
    [
        ('[sweep]\n"topology.bottleneck.queue.limt" = ["1B"]', r'sweep\."topology\.bottleneck\.queue\.limt": not a scenario field.*limt: is not an accepted key'),
        ('[sweep]\n"flows.voip.app.size" = ["1B"]', r'sweep\."flows\.voip\.app\.size": "voip" is not a flow of the scenario \(accepted: load\)'),
        ('[sweep]\n"network.x" = [1]', r'"network" is not a scenario table \(accepted: run, topology, flows\)'),
        ('[sweep]\n"run.duration" = "2s"', r'sweep\."run\.duration": "2s" is not a list of values'),
        ('[sweep]\n"run.duration" = ["1s", "1s"]', r'"1s" is listed twice'),
        ('[sweep.zip]\na = [1, 2]\nb = [1]', r"sweep\.zip: lists must have equal lengths"),
        ('[sweep]\nbackend = "model"', r'sweep\.backend: backend "model" is reserved.*\(accepted: "sim"'),
        ('[sweep]\nbackend = "ns3"', r'sweep\.backend: "ns3" is not a backend \(accepted: "sim", "emu", "model"\)'),
        ('[sweep]\nseeds = 0', r"sweep\.seeds: 0 is not accepted \(accepted: a count >= 1 or a list of seeds\)"),
        ('[sweep]\n"run.seed" = [1, 2]', r"seeds are not swept through the scenario \(accepted: sweep\.seeds"),
        ('[sweep]\nx = 1\n[other]\ny = 2', r"other: is not an accepted key \(accepted: scenario, sweep, description\)"),
    ],
)
def test_spec_errors_name_the_key(tmp_path, body, expected):
    from ccbench.scenario import ScenarioError
    from ccbench.sweep import SweepError

    with pytest.raises(SweepError, match=expected) as ei:
        _load(tmp_path, 'scenario = "base.toml"\n' + body)
    assert isinstance(ei.value, ScenarioError) and isinstance(ei.value, ValueError)
    assert len(str(ei.value).splitlines()) == 1 and str(ei.value).startswith("s.toml: ")


def test_emu_backend_is_used_when_it_exists_or_refused_clearly(tmp_path):
    import importlib.util

    from ccbench.sweep import SweepError

    has_emu = importlib.util.find_spec("ccbench.emu.runner") is not None
    text = 'scenario = "base.toml"\n[sweep]\nbackend = "emu"\n'
    if has_emu and hasattr(importlib.import_module("ccbench.emu.runner"), "emulate"):
        assert _load(tmp_path, text).backend == "emu"
    else:
        with pytest.raises(SweepError, match=r'sweep\.backend: backend "emu" .*\(accepted: "sim"\)'):
            _load(tmp_path, text)


def test_missing_scenario_and_cli_errors(tmp_path, cli):
    (tmp_path / "s.toml").write_text('scenario = "nope.toml"\n')
    r = cli("sweep", str(tmp_path / "s.toml"), "--out", str(tmp_path / "o"))
    assert r.returncode == 2
    assert r.stderr.strip() == f'error: {tmp_path / "s.toml"}: scenario: "nope.toml" does not exist (looked for {tmp_path / "nope.toml"})'
    p = sweep_toml(tmp_path, {"run.duration": ["1s"]}, seeds=1)
    r = cli("sweep", str(p), "--jobs", "0")
    assert r.returncode == 2 and r.stderr.strip() == "error: --jobs: 0 is not accepted (accepted: a number of processes >= 1)"


def test_another_base_scenario_in_the_same_directory_is_refused(tmp_path):
    from ccbench.sweep import SweepError, load_sweep, run_sweep

    p = sweep_toml(tmp_path, {"run.duration": ["1s"]}, seeds=1)
    run_sweep(load_sweep(p), tmp_path / "o", jobs=1, progress=False)
    text = p.read_text()
    (tmp_path / "base.toml").write_text((tmp_path / "base.toml").read_text().replace("50ms", "60ms"))
    with pytest.raises(SweepError, match="holds a sweep of another base scenario"):
        run_sweep(load_sweep(p), tmp_path / "o", jobs=1, progress=False)
    assert text == p.read_text()


def test_example_sweep_file_loads():
    from ccbench.sweep import load_sweep

    spec = load_sweep(ROOT / "examples" / "sweep_droprules.toml")
    assert len(spec.points()) == 6 * 3 and spec.seeds == [1, 2, 3]
    for combo in spec.combinations():
        spec.scenario_for(combo)  # every rule/limit pair is valid
