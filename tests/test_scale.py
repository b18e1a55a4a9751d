"""Scale (issue 18): data-centre fabrics and workloads, the pre-flight estimate,
linear table building and lazily read runs. Each test runs in well under a second
or two; the scale benchmark itself is a command (`ccbench bench -w scale`)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ccbench
from ccbench.backends.sim import ParquetSink, simulate, simulate_config, to_run
from ccbench.run import Run, delay_stats
from ccbench.scenario import ScenarioError, load_scenario
from ccbench.scenario.datacenter import FLOW_SIZE_CDFS, MSS_BYTES, draw_sizes

ROOT = Path(__file__).resolve().parents[1]
INCAST = ROOT / "examples" / "dc_incast.toml"


def fabric(**over) -> dict:
    topo = {
        "kind": "leaf_spine", "leaves": 2, "spines": 4, "hosts_per_leaf": 8,
        "host": {"rate": "10Gbit", "delay": "1us"}, "fabric": {"rate": "10Gbit", "delay": "1us"},
        "queue": {"kind": "droptail", "limit": "250pkt"},
    }
    topo.update(over)
    return topo


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ccbench", *args], capture_output=True, text=True, cwd=ROOT)


# --- fabrics and workloads ---------------------------------------------------------------------


def test_ecmp_spreads_flows_over_every_spine():
    # 64 flows from leaf0's hosts to leaf1's: each takes one spine, chosen by hash.
    sc = ccbench.Scenario.from_dict(
        {
            "run": {"duration": "2ms", "state_sample": "0s", "queue_sample": "0s"},
            "topology": fabric(),
            "flows": [
                {"name": f"f{i}", "src": f"h{i % 8}", "dst": f"h{8 + i % 8}", "transport": {"kind": "tcp"},
                 "app": {"kind": "bulk", "bytes": "20kB"}}
                for i in range(64)
            ],
        }
    )
    cfg = sc.to_sim_config()
    cfg["log_links"] = [f"leaf0_spine{s}" for s in range(4)]
    raw = simulate_config(cfg)
    log = raw["link_log"]
    names = list(raw["link_names"])
    per_spine: dict[str, set] = {}
    for link, flow in zip(log["link"], log["flow"]):
        per_spine.setdefault(names[link], set()).add(int(flow))
    assert sorted(per_spine) == cfg["log_links"], "every spine carries traffic"
    counts = [len(v) for v in per_spine.values()]
    assert sum(counts) == 64, "a flow's data stays on one spine (per-flow hashing)"
    assert min(counts) >= 6, counts  # 16 expected per spine


def run_incast(cc: str, mark: bool) -> Run:
    d = load_scenario(INCAST).to_dict()
    d["flows"][0].update(count=20, transport={"kind": "tcp", "cc": cc, "ecn": mark})
    if not mark:
        d["topology"].pop("mark_threshold")
    # Long enough for a lost last segment: alone in flight, it waits for the loss probe
    # at 2 srtt + 200 ms (Linux adds TCP_RTO_MIN for a single outstanding packet).
    d["run"]["duration"] = "1s"
    return simulate(ccbench.Scenario.from_dict(d), seed=1)


def test_incast_dctcp_marks_where_cubic_drops():
    dctcp, cubic = run_incast("dctcp", True), run_incast("cubic", False)
    for run in (dctcp, cubic):
        # Every sender finishes its 64 kB, and the aggregator's port is the only hot spot.
        assert run.flows["bytes_delivered"].eq(64_000).all()
        assert set(run.drops["link"].astype(str)) == {"h0_down"}
    kinds = lambda run: run.drops["kind"].astype(str).value_counts().to_dict()  # noqa: E731
    d, c = kinds(dctcp), kinds(cubic)
    assert c.get("mark", 0) == 0 and c["drop"] > 100, c
    assert d["mark"] > 100 and d.get("drop", 0) < c["drop"] / 5, (d, c)
    # DCTCP finishes at about line rate (1.28 MB through one 10 Gbit/s port: 1.02 ms)
    # without a timeout. CUBIC repairs most drops by SACK within that time too, but a
    # sender whose last segment the full port drops has nothing after it to be SACKed:
    # that is the incast stall, a loss probe 200 ms later (seed 1 with Linux's TSO
    # deferral: 3 of 20 senders).
    assert dctcp.flows["timeouts"].sum() == 0
    assert dctcp.flows["completion_s"].max() < 1.1e-3
    assert dctcp.flows["completion_s"].max() < 1.01 * cubic.flows["completion_s"].max()


def test_fat_tree_incast_and_random_pairs_with_poisson_arrivals_and_sizes():
    sc = ccbench.Scenario.from_dict(
        {
            "run": {"duration": "5ms", "state_sample": "0s"},
            "topology": {"kind": "fat_tree", "k": 4, "host": {"rate": "1Gbit"}, "fabric": {"rate": "1Gbit"},
                         "mark_threshold": "20pkt"},
            "flows": [
                {"name": "inc", "src": "*", "dst": "h3", "count": 30, "transport": {"kind": "tcp", "cc": "dctcp", "ecn": True},
                 "app": {"kind": "bulk", "bytes": "3kB"}},
                {"name": "bg", "src": "random", "dst": "random", "count": 200, "arrivals": "poisson", "start_every": "10us",
                 "transport": {"kind": "tcp"}, "app": {"kind": "bulk", "size_dist": "data_mining"}},
            ],
        }
    )
    flows = sc.to_sim_config(seed=4)["flows"]
    inc = [f for f in flows if f["name"].startswith("inc")]
    assert [f["src"] for f in inc[:3]] == ["h0", "h1", "h2"] and inc[3]["src"] == "h4"  # skips h3
    assert inc[15]["src"] == "h0"  # 15 other hosts, then round again
    bg = [f for f in flows if f["name"].startswith("bg")]
    assert all(f["src"] != f["dst"] for f in bg) and len({f["src"] for f in bg}) == 16
    starts = np.array([f["start_ns"] for f in bg])
    assert np.all(np.diff(starts) >= 0) and 5_000 < np.diff(starts).mean() < 20_000
    assert {f["app"]["bytes"] for f in bg} != {None}
    assert sc.to_sim_config(seed=4)["flows"] == flows and sc.to_sim_config(seed=5)["flows"] != flows
    run = simulate(sc, seed=4)
    assert len(run.flows) == 230 and run.flows["bytes_delivered"].sum() > 0


def test_flow_size_cdfs_match_their_quantiles():
    rng = np.random.default_rng(1)
    for name, pts in FLOW_SIZE_CDFS.items():
        sizes = draw_sizes(name, 200_000, rng)
        for p, pkts in pts[1:-1]:
            # Below a CDF point's size lie (at least) its probability's draws.
            assert np.mean(sizes <= pkts * MSS_BYTES + 1) == pytest.approx(p, abs=0.01), (name, p)
    assert np.quantile(draw_sizes("data_mining", 10_001, rng), 0.45) == MSS_BYTES  # half are one packet


@pytest.mark.parametrize(
    "topo, field, text",
    [
        ({"kind": "fat_tree", "k": 5, "host": {"rate": "1Gbit"}, "fabric": {"rate": "1Gbit"}}, "topology.k", "even"),
        (fabric(mark_threshold="300pkt"), "topology.mark_threshold", "below the queue limit"),
    ],
)
def test_fabric_errors_name_the_field(topo, field, text):
    with pytest.raises(ScenarioError) as e:
        ccbench.Scenario.from_dict({"topology": topo, "flows": [{"name": "f", "src": "h0", "dst": "h1",
                                                                  "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}}]})
    assert field in str(e.value) and text in str(e.value)


def test_flows_between_switches_are_refused():
    with pytest.raises(ScenarioError, match=r"flows\.f\.src.*a switch"):
        ccbench.Scenario.from_dict({"topology": fabric(), "flows": [
            {"name": "f", "src": "spine0", "dst": "h1", "transport": {"kind": "tcp"}, "app": {"kind": "bulk"}}]})


# --- pre-flight estimate --------------------------------------------------------------------------


def huge(tmp_path: Path, **run) -> Path:
    p = tmp_path / "huge.toml"
    lines = ["[run]"] + [f'{k} = "{v}"' for k, v in run.items()]
    p.write_text(
        "\n".join(lines)
        + '\n[topology]\nkind = "dumbbell"\npairs = 100000000\nbottleneck = { down = "10Gbit", up = "10Gbit", delay = "10ms" }\n'
        + '[[flows]]\nname = "f"\ncount = 10\ntransport = { kind = "tcp" }\napp = { kind = "bulk" }\n'
    )
    return p


def test_a_huge_scenario_is_refused_in_under_a_second_with_the_estimate(tmp_path):
    from ccbench.backends.sim import _core

    for run, field in (({"state_sample": "1ns"}, "run.state_sample"), ({}, "flows")):
        path = huge(tmp_path, duration="60s", **run)
        t = time.perf_counter()
        config = load_scenario(path).to_sim_config()
        with pytest.raises(_core().SimConfigError) as e:
            _core().validate(json.dumps(config))
        assert time.perf_counter() - t < 1.0
        assert e.value.field == field and "of memory" in e.value.msg and "available" in e.value.msg
    r = cli("validate", str(huge(tmp_path, state_sample="1ns")))
    assert r.returncode == 2 and r.stderr.count("\n") <= 1, r.stderr
    assert "run.state_sample" in r.stderr and "raise run.state_sample (now 1ns)" in r.stderr and "Traceback" not in r.stderr


def test_validate_prints_the_estimate():
    r = cli("validate", str(INCAST))
    assert r.returncode == 0, r.stderr
    assert "estimate:" in r.stdout and "of memory for the run" in r.stdout and "events" in r.stdout


def test_estimate_tracks_the_run():
    from ccbench.backends.sim import _core

    sc = load_scenario(INCAST)
    cfg = sc.to_sim_config()
    est = _core().estimate(json.dumps(cfg))
    run = simulate(sc)
    assert est["state_rows"] == pytest.approx(len(run.cwnd), rel=0.1)
    assert est["queue_rows"] == pytest.approx(len(run.queue), rel=0.1)


# --- tables -----------------------------------------------------------------------------------------


def delay_stats_per_flow_masks(packets: pd.DataFrame, flows: list[str]) -> pd.DataFrame:
    """The table as it was built before issue 18: one mask per flow (quadratic)."""
    delay = packets["t_deliver"] - packets["t_write"]
    rows = []
    for name in flows:
        d = delay[(packets["flow"] == name).to_numpy()].dropna().to_numpy()
        if d.size:
            p50, p95, p99 = np.percentile(d, [50, 95, 99])
            rows.append((name, p50, p95, p99, d.max()))
        else:
            rows.append((name, np.nan, np.nan, np.nan, np.nan))
    return pd.DataFrame(rows, columns=["flow", "delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s"])


def test_vectorised_delay_table_equals_the_per_flow_one():
    sc = load_scenario(ROOT / "examples" / "adsl1_voip.toml").with_values({"run.duration": "20s"})
    run = simulate(sc, seed=2)
    names = list(run.flows["flow"])
    assert len(run.packets) > 1000
    pd.testing.assert_frame_equal(delay_stats(run.packets, names), delay_stats_per_flow_masks(run.packets, names))
    # Plain string flow names (the emulator's tables) and a flow without messages.
    plain = run.packets.assign(flow=run.packets["flow"].astype(str))
    pd.testing.assert_frame_equal(
        delay_stats(plain, names + ["idle"]), delay_stats_per_flow_masks(plain, names + ["idle"])
    )


def test_saved_runs_are_read_lazily(tmp_path):
    run = simulate(load_scenario(INCAST))
    run.save(tmp_path / "r")
    back = Run.load(tmp_path / "r")
    assert "cwnd" not in back.__dict__
    pd.testing.assert_frame_equal(back.flows, run.flows)
    assert "flows" in back.__dict__ and "cwnd" not in back.__dict__
    assert len(back.cwnd) == len(run.cwnd)
    with pytest.raises(AttributeError):
        back.nonexistent  # noqa: B018


def test_to_run_shares_the_columns():
    raw = simulate_config(load_scenario(INCAST).to_sim_config())
    t = raw["state"]["t"]
    run = to_run(raw)
    assert np.shares_memory(run.cwnd["t"].to_numpy(), t)


def test_long_runs_stream_cwnd_and_queue_to_parquet_in_chunks(tmp_path):
    import pyarrow.parquet as pq

    from ccbench.cli.bench import dumbbell_workload

    # 10 flows for 10 s: ~500k events, so the engine hands chunks over mid-run.
    cfg = dumbbell_workload("cubic", 10.0)
    held = to_run(simulate_config(cfg))
    sink = ParquetSink(tmp_path)
    raw = simulate_config(cfg, sink=sink, chunk_rows=500)
    streamed = sink.finish(to_run(raw))
    assert pq.ParquetFile(tmp_path / "cwnd.parquet").num_row_groups >= 2
    assert len(raw["state"]["t"]) < len(held.cwnd), "the engine handed rows over during the run"
    pd.testing.assert_frame_equal(streamed.cwnd, held.cwnd)
    pd.testing.assert_frame_equal(streamed.queue, held.queue)
    streamed.save(tmp_path)  # the streamed files are the run's own: kept as they are
    pd.testing.assert_frame_equal(Run.load(tmp_path).cwnd, held.cwnd)


def test_ccbench_run_streams_into_the_run_folder(tmp_path):
    r = cli("run", str(INCAST), "--out", str(tmp_path / "r"), "-q")
    assert r.returncode == 0, r.stderr
    back = Run.load(tmp_path / "r")
    assert len(back.cwnd) == 2000 and len(back.queue) == 400
