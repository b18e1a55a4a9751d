"""``ccbench bench`` as a user runs it (short workloads: this checks the command, not
the speed, which is machine-dependent)."""

import json
import shutil

import pytest


def test_bench_compares_algorithms_with_reno(tmp_path, ccbench_cli):
    out = tmp_path / "bench.json"
    r = ccbench_cli("bench", "-w", "dumbbell", "--cc", "bbr,cubic", "--duration", "10", "-n", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "vs reno" in r.stdout and "bbr" in r.stdout
    rows = json.loads(out.read_text())["rows"]
    # Reno is always run first: the others are measured against it.
    assert [x["cc"] for x in rows] == ["reno", "bbr", "cubic"]
    assert rows[0]["wall_vs_reno"] == 1.0
    for x in rows:
        assert x["events"] > 0 and x["wall_s"] > 0 and x["bottleneck_tx_pkts"] > 0
    # BBR v1 in a one-BDP buffer drops a large share of its packets (the traffic the
    # ratio column has to be read with); the loss-based algorithms drop little.
    drop = {x["cc"]: x["bottleneck_drops"] / (x["bottleneck_tx_pkts"] + x["bottleneck_drops"]) for x in rows}
    assert drop["bbr"] > 3 * drop["reno"]


def test_bench_deep_buffer_drops_nothing(tmp_path, ccbench_cli):
    out = tmp_path / "bench.json"
    r = ccbench_cli("bench", "-w", "dumbbell-deep", "--cc", "reno,bbr", "--duration", "3", "-n", "1", "--json", str(out))
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["rows"]
    assert {x["cc"] for x in rows} == {"reno", "bbr"}
    assert all(x["bottleneck_drops"] == 0 for x in rows)


def test_bench_rejects_unknown_algorithm_and_workload(ccbench_cli):
    r = ccbench_cli("bench", "--cc", "reno,turbo")
    assert r.returncode == 2
    assert "--cc: turbo is not a congestion control" in r.stderr and "cubic" in r.stderr
    r = ccbench_cli("bench", "-w", "mesh")
    assert r.returncode == 2 and "--workload" in r.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_bench_counts_instructions_exactly(tmp_path, ccbench_cli):
    out = tmp_path / "bench.json"
    args = ("bench", "--instructions", "-w", "dumbbell-deep", "--cc", "reno,cubic", "--duration", "1", "--json")
    r = ccbench_cli(*args, str(out))
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.read_text())["rows"]
    assert all(x["instructions"] > 1_000_000 for x in rows)
    # The count is of the simulator alone and does not depend on the machine's load:
    # a second run gives the same figure to within valgrind's own run-to-run noise.
    r2 = ccbench_cli(*args, str(tmp_path / "again.json"))
    again = json.loads((tmp_path / "again.json").read_text())["rows"]
    for a, b in zip(rows, again):
        assert abs(a["instructions"] - b["instructions"]) / a["instructions"] < 1e-3
