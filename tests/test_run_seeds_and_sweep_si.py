"""``ccbench run`` over every seed of [run] seeds (mean and t-interval), and the
numeric SI twin of unit-string sweep parameters."""

from __future__ import annotations

import math

import pandas as pd
import pytest
import tomli_w

from conftest import needs_core

# a VoIP stream with jitter (so seeds differ) beside a download, 3 seeds from seed 5
SEEDS = {
    "run": {"duration": "3s", "seed": 5, "seeds": 3},
    "topology": {"kind": "dumbbell", "bottleneck": {"down": "1.5Mbit", "up": "256kbit", "delay": "50ms",
                                                    "queue": {"kind": "droptail", "limit": "20000B"}}},
    "flows": [
        {"name": "voip", "transport": {"kind": "udp"},
         "app": {"kind": "cbr", "size": "186B", "interval": "20ms", "jitter": {"dist": "normal", "sd": "2ms"}}},
        {"name": "bulk", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}},
    ],
}


@needs_core
def test_run_honours_seeds_saves_each_and_prints_mean_and_interval(tmp_path, ccbench_cli):
    from scipy import stats

    from ccbench import load_run

    scenario = tmp_path / "s.toml"
    scenario.write_text(tomli_w.dumps(SEEDS))
    out = tmp_path / "out"
    r = ccbench_cli("run", str(scenario), "--out", str(out), "-q")
    assert r.returncode == 0, r.stderr
    assert "seeds 5..7" in r.stdout and "±" in r.stdout and "over 3 seeds (t-distribution)" in r.stdout, r.stdout
    runs = [load_run(out / f"seed-{s}") for s in (5, 6, 7)]
    assert [x.meta["seed"] for x in runs] == [5, 6, 7]
    assert len({x.flows.loc[0, "delay_p95_s"] for x in runs}) == 3, "different seeds, different jitter"

    summary = pd.read_parquet(out / "summary.parquet").set_index("flow")
    for metric in ("goodput_bps", "delay_p95_s"):
        values = [x.flows.set_index("flow").loc["voip", metric] for x in runs]
        lo, hi = stats.t.interval(0.95, 2, loc=sum(values) / 3, scale=stats.sem(values))
        assert summary.loc["voip", f"{metric}_mean"] == pytest.approx(sum(values) / 3, rel=1e-12)
        assert summary.loc["voip", f"{metric}_ci"] == pytest.approx((hi - lo) / 2, rel=1e-9)
    assert summary.loc["voip", "n"] == 3
    per_seed = pd.read_parquet(out / "flows.parquet")
    assert sorted(per_seed["seed"].unique()) == [5, 6, 7] and len(per_seed) == 6

    # --seeds overrides the count; one seed is the plain single-run layout
    one = tmp_path / "one"
    r = ccbench_cli("run", str(scenario), "--out", str(one), "--seeds", "1", "--seed", "9", "-q")
    assert r.returncode == 0, r.stderr
    assert load_run(one).meta["seed"] == 9 and "±" not in r.stdout


def test_mean_ci_edge_cases():
    from ccbench.repetitions import mean_ci

    assert mean_ci([2.0]) == (2.0, pytest.approx(float("nan"), nan_ok=True))
    m, h = mean_ci([1.0, 3.0, float("nan")])
    assert m == 2.0 and h == pytest.approx(12.706204736, rel=1e-6)  # t_{0.975,1} x sd sqrt(2) / sqrt(2)
    assert math.isnan(mean_ci([])[0])


def test_sweep_summary_has_a_numeric_si_column_that_sorts_by_value():
    from ccbench.sweep.store import summary_frame

    recs = [
        {"point": f"p{i}", "values": {"topology.bottleneck.queue.limit": lim, "run.duration": dur,
                                     "flows.x.transport.cc": "cubic"}, "seed": 1, "status": "ok",
         "rows": [{"flow": "x", "goodput_bps": 1.0}]}
        for i, (lim, dur) in enumerate([("100000B", "1s"), ("20000B", "500ms"), ("64KiB", "2min")])
    ]
    df = summary_frame(recs, ["topology.bottleneck.queue.limit", "run.duration", "flows.x.transport.cc"])
    cols = list(df.columns)
    assert cols.index("topology.bottleneck.queue.limit (B)") == cols.index("topology.bottleneck.queue.limit") + 1
    assert df["topology.bottleneck.queue.limit (B)"].tolist() == [100000.0, 20000.0, 65536.0]
    assert df["run.duration (s)"].tolist() == [1.0, 0.5, 120.0]
    assert not any(c.startswith("flows.x.transport.cc (") for c in cols), "names have no SI twin"
    ordered = df.sort_values("topology.bottleneck.queue.limit (B)")["topology.bottleneck.queue.limit"].tolist()
    assert ordered == ["20000B", "64KiB", "100000B"]


def test_mixed_bytes_and_packets_get_no_si_column():
    from ccbench.sweep.spec import si_column

    assert si_column("q", ["14pkt", "20000B"]) is None
    assert si_column("q", ["14pkt", "20pkt", None]) == ("q (pkt)", [14.0, 20.0, None])
    assert si_column("r", ["1MB/s", "10Mbit"]) == ("r (bit/s)", [8e6, 1e7])


@needs_core
def test_a_real_sweep_stores_and_queries_the_si_column(tmp_path):
    from ccbench.sweep import SweepSpec, connect, run_sweep
    from ccbench.scenario import Scenario

    base = dict(SEEDS, run={"duration": "500ms", "seed": 1})
    spec = SweepSpec(scenario=Scenario.from_dict(base), grid={"topology.bottleneck.queue.limit": ["100000B", "20000B"]})
    run_sweep(spec, tmp_path / "sw", jobs=1, progress=False)
    con = connect(tmp_path / "sw")
    rows = con.execute(
        'SELECT "topology.bottleneck.queue.limit", "topology.bottleneck.queue.limit (B)" FROM runs ORDER BY 2'
    ).fetchall()
    assert rows == [("20000B", 20000.0), ("100000B", 100000.0)]
