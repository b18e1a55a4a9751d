"""Sweeps that never lose or corrupt data: damaged points re-run and skipped by queries,
one sweep per directory, workers that die with their sweep, and read-only queries."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import ROOT, needs_core
from test_sweep import cli, sweep_toml  # noqa: F401 - fixture

pytestmark = needs_core

GRID = {"topology.bottleneck.queue.limit": ["5000B", "10000B"]}


@pytest.fixture
def done(tmp_path):
    """A finished 2-point sweep (one seed) in tmp_path/out."""
    from ccbench.sweep import load_sweep, run_sweep

    spec = load_sweep(sweep_toml(tmp_path, GRID, seeds=1))
    out = tmp_path / "out"
    res = run_sweep(spec, out, jobs=1, progress=False)
    assert res.ran == 2 and not res.errors
    return spec, out


def _points(out: Path) -> list[Path]:
    return sorted(p for p in (out / "runs").iterdir() if p.is_dir())


def test_record_holds_size_and_sha256_of_every_file(done):
    import hashlib

    _, out = done
    for d in _points(out):
        rec = json.loads((d / "summary.json").read_text())
        assert set(rec["files"]) == {"packets.parquet", "flows.parquet", "cwnd.parquet", "queue.parquet", "drops.parquet", "meta.json"}
        for name, info in rec["files"].items():
            data = (d / name).read_bytes()
            assert info == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        assert not list(d.glob(".*.tmp"))  # no temporary file left behind


def _truncate(f: Path) -> None:
    f.write_bytes(f.read_bytes()[: f.stat().st_size // 2])


def _corrupt(f: Path) -> None:
    b = bytearray(f.read_bytes())
    b[len(b) // 2] ^= 0xFF  # same size, one byte flipped
    f.write_bytes(bytes(b))


def _delete(f: Path) -> None:
    f.unlink()


@pytest.mark.parametrize(
    "damage, why",
    [(_truncate, "packets.parquet is truncated"), (_corrupt, "packets.parquet fails its SHA-256 checksum"), (_delete, "packets.parquet is missing")],
    ids=["truncated", "corrupted", "deleted"],
)
def test_damaged_table_is_skipped_by_query_and_rerun_on_resume(done, cli, damage, why):  # noqa: F811
    from ccbench.sweep import run_sweep

    spec, out = done
    bad, good = _points(out)
    damage(bad / "packets.parquet")
    # query: the bad point is left out, with one warning naming it and the file
    r = cli("query", str(out), "SELECT DISTINCT point FROM packets ORDER BY 1", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["point", good.name]
    warn = [ln for ln in r.stderr.splitlines() if ln.startswith("warning:")]
    assert len(warn) == 1 and bad.name in warn[0] and why in warn[0], r.stderr
    r = cli("query", str(out), "SELECT count(DISTINCT point) AS n FROM summary", "--format", "csv")
    assert r.stdout.split() == ["n", "1"]
    # report too (a command warns once per point: forget the query's warning)
    from ccbench.sweep import store as store_mod

    store_mod._WARNED.clear()
    r = cli("report", str(out), "--out", str(out / "r.html"))
    assert r.returncode == 0 and bad.name in r.stderr
    # resume: the bad point runs again, the good one is skipped
    before = (good / "packets.parquet").stat().st_mtime_ns
    res = run_sweep(spec, out, jobs=1, progress=False)
    assert res.executed == [bad.name] and res.skipped == 1 and why in res.repaired[bad.name]
    assert (good / "packets.parquet").stat().st_mtime_ns == before
    from ccbench.sweep.store import SweepStore

    assert SweepStore(out).damaged() == {}
    r = cli("query", str(out), "SELECT count(DISTINCT point) AS n FROM packets", "--format", "csv")
    assert r.stdout.split() == ["n", "2"] and "warning" not in r.stderr


def test_torn_record_and_damaged_summary_file(done, cli):  # noqa: F811
    from ccbench.sweep import run_sweep

    spec, out = done
    bad, _ = _points(out)
    (bad / "summary.json").write_text('{"point": "')  # torn
    (out / "summary.parquet").write_bytes(b"PAR1 not really")
    r = cli("query", str(out), "SELECT count(DISTINCT point) AS n FROM summary", "--format", "csv")
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["n", "1"] and "rebuilt" in r.stderr
    res = run_sweep(spec, out, jobs=1, progress=False)
    assert res.executed == [bad.name] and "summary.json" in res.repaired[bad.name]


# --- one sweep per directory ---------------------------------------------------------------------


def _child_holding_lock(out: Path) -> subprocess.Popen:
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from ccbench.sweep.lock import sweep_lock\n"
        "with sweep_lock(Path(sys.argv[1])):\n"
        "    print('locked', flush=True)\n"
        "    time.sleep(60)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    p = subprocess.Popen([sys.executable, "-c", code, str(out)], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout.readline().strip() == "locked"
    return p


def test_second_sweep_into_the_same_directory_refuses_or_waits(tmp_path, cli):  # noqa: F811
    p = sweep_toml(tmp_path, {"topology.bottleneck.queue.limit": ["5000B"]}, seeds=1)
    out = tmp_path / "out"
    holder = _child_holding_lock(out)
    try:
        r = cli("sweep", str(p), "--out", str(out), "--jobs", "1", "--quiet")
        assert r.returncode == 2
        line = r.stderr.strip()
        assert len(line.splitlines()) == 1 and "is in use by another sweep" in line and f"pid {holder.pid}" in line and "--wait" in line
        assert not (out / "runs").exists()  # it touched nothing
        # --wait: runs once the other one is gone
        import threading

        threading.Timer(1.0, holder.kill).start()
        t0 = time.monotonic()
        r = cli("sweep", str(p), "--out", str(out), "--jobs", "1", "--quiet", "--wait")
        assert r.returncode == 0, r.stderr
        assert time.monotonic() - t0 >= 0.9 and "ran 1" in r.stdout
    finally:
        holder.kill()
        holder.wait()
    assert not (out / ".lock").exists()


def test_two_sweeps_at_once_run_each_point_once(tmp_path):
    p = sweep_toml(tmp_path, {"topology.bottleneck.queue.limit": ["5000B", "6000B"]}, seeds=1)
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="200")
    cmd = [sys.executable, "-m", "ccbench", "sweep", str(p), "--out", str(out), "--jobs", "1", "--quiet", "--wait"]
    a = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    b = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    ra, rb = a.communicate(timeout=240), b.communicate(timeout=240)
    assert a.returncode == 0 and b.returncode == 0, (ra, rb)
    ran = sorted(int(o.split("ran ")[1].split(",")[0]) for o, _ in (ra, rb))
    assert ran == [0, 2], (ra, rb)  # whichever got the lock first ran both points


def test_stale_lock_of_a_dead_sweep_is_taken_over(tmp_path):
    from ccbench.sweep import load_sweep, run_sweep

    out = tmp_path / "out"
    holder = _child_holding_lock(out)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert json.loads((out / ".lock").read_text())["pid"] == holder.pid  # left behind
    res = run_sweep(load_sweep(sweep_toml(tmp_path, {"topology.bottleneck.queue.limit": ["5000B"]}, seeds=1)), out, jobs=1, progress=False)
    assert res.ran == 1 and not (out / ".lock").exists()


# --- workers die with their sweep ----------------------------------------------------------------


def _children(pid: int) -> set[int]:
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            kids |= {int(x) for x in (task / "children").read_text().split()}
        except OSError:
            pass
    return kids


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_sigkilled_sweep_leaves_no_workers(tmp_path):
    # 4 points of 60 s simulated: long enough to be running when the sweep is killed
    p = sweep_toml(tmp_path, {"topology.bottleneck.queue.limit": ["5000B", "6000B", "7000B", "8000B"], "run.duration": ["60s"]}, seeds=1)
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="200")
    sweep = subprocess.Popen(
        [sys.executable, "-m", "ccbench", "sweep", str(p), "--out", str(tmp_path / "out"), "--jobs", "2", "--quiet"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )
    workers: set[int] = set()
    deadline = time.monotonic() + 60
    while len(workers) < 2 and time.monotonic() < deadline and sweep.poll() is None:
        time.sleep(0.1)
        workers = _children(sweep.pid)
    assert len(workers) >= 2, "the sweep did not start its workers"
    sweep.send_signal(signal.SIGKILL)
    sweep.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [w for w in workers if _alive(w)], "workers outlived their sweep"


# --- --out ---------------------------------------------------------------------------------------


def test_out_that_is_a_file_or_unwritable_is_one_line(tmp_path, cli):  # noqa: F811
    p = sweep_toml(tmp_path, GRID, seeds=1)
    f = tmp_path / "afile"
    f.write_text("x")
    r = cli("sweep", str(p), "--out", str(f), "--quiet")
    assert r.returncode == 2 and r.stderr.strip() == f"error: --out: {f} is a file (accepted: a directory, or a path to create one at)"
    r = cli("sweep", str(p), "--out", str(f / "sub"), "--quiet")
    assert r.returncode == 2 and "is a file, so" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli("sweep", str(p), "--out", "/proc/ccbench-out", "--quiet")
    assert r.returncode == 2 and r.stderr.startswith("error: --out: ") and "/proc/ccbench-out" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


# --- read-only queries ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT 1 AS x) TO '{tmp}/leak.csv'",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_parquet('{out}/runs/*/packets.parquet')",
        "ATTACH '{tmp}/other.duckdb' AS o",
        "SET enable_external_access = true",
        "COPY packets TO '{out}/runs/x.parquet'",
    ],
    ids=["copy-to", "read-csv", "glob-own-files", "attach", "re-enable", "overwrite-own"],
)
def test_query_is_read_only_by_default(done, cli, tmp_path, sql):  # noqa: F811
    _, out = done
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    r = cli("query", str(out), sql.format(tmp=tmp_path, out=out))
    assert r.returncode == 2, r.stdout
    assert r.stderr.startswith("error: SQL:") and len(r.stderr.strip().splitlines()) == 1
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before  # nothing written


def test_query_unsafe_lifts_it(done, cli, tmp_path):  # noqa: F811
    _, out = done
    r = cli("query", str(out), f"COPY (SELECT count(*) AS n FROM packets) TO '{tmp_path}/n.csv'", "--unsafe")
    assert r.returncode == 0, r.stderr
    assert pd.read_csv(tmp_path / "n.csv")["n"].iloc[0] > 0
    r = cli("query", str(out), "SELECT count(*) AS n FROM read_csv('/etc/passwd', header = false, sep = ':')", "--unsafe", "--format", "csv")
    assert r.returncode == 0 and int(r.stdout.split()[1]) > 0


def test_views_still_read_every_table(done, cli):  # noqa: F811
    _, out = done
    for table in ("packets", "flows", "cwnd", "queue", "drops"):
        r = cli("query", str(out), f"SELECT count(DISTINCT point) AS n FROM {table}", "--format", "csv")
        assert r.returncode == 0, (table, r.stderr)
        assert r.stdout.split() in (["n", "2"], ["n", "1"], ["n", "0"])
    r = cli("query", str(out), "SELECT point, count(*) AS n FROM packets GROUP BY 1 ORDER BY 1", "--format", "csv")
    assert [ln.split(",")[0] for ln in r.stdout.split()[1:]] == [d.name for d in _points(out)]


def test_points_of_another_simulator_build_run_again(done):
    """Resuming into a directory filled by another build must not mix two simulators."""
    from ccbench.sweep import run_sweep
    from ccbench.sweep.engine import engine_id

    spec, out = done
    first, second = _points(out)
    rec = json.loads((first / "summary.json").read_text())
    assert rec["engine"] == engine_id("sim") and "core " in rec["engine"]
    rec["engine"] = "ccbench 0.0.1 core 000000000000"
    (first / "summary.json").write_text(json.dumps(rec))
    legacy = json.loads((second / "summary.json").read_text())
    del legacy["engine"]  # written before engines were recorded
    (second / "summary.json").write_text(json.dumps(legacy))
    res = run_sweep(spec, out, jobs=1, progress=False)
    assert res.ran == 2 and res.skipped == 0
    assert "another engine (ccbench 0.0.1" in res.repaired[first.name]
    assert "before runs recorded" in res.repaired[second.name]
    again = run_sweep(spec, out, jobs=1, progress=False)
    assert again.ran == 0 and again.skipped == 2


def test_kernel_points_without_engine_are_kept():
    from ccbench.sweep.engine import engine_id, stale

    assert stale({"status": "ok"}, "emu") is None
    assert stale({"engine": engine_id("emu")}, "emu") is None
    assert "another engine" in stale({"engine": "kernel 2.6.16"}, "emu")
