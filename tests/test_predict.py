"""``ccbench predict`` / ``ccbench.predict``: inputs from the scenario, validity per row,
where p comes from, the unit convention of ``ccbench model``, ``ccbench compare`` with
models and the service-curve estimate, and the models in the HTML report."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from conftest import ROOT, needs_core

# `examples/fidelity/` holds `ccbench fidelity` matrices (predict refuses them: tested below).
EXAMPLES = sorted(p for p in (ROOT / "examples").rglob("*.toml") if p.parent.name != "fidelity")


def dumbbell(flows, loss=None, rate="10Mbit", delay="20ms", queue=None, duration="10s"):
    from ccbench.scenario import Scenario

    b = {"down": rate, "up": rate, "delay": delay, "queue": queue or {"kind": "droptail", "limit": "100pkt"}}
    if loss is not None:
        b["loss"] = loss
    return Scenario.from_dict({"run": {"duration": duration}, "topology": {"kind": "dumbbell", "bottleneck": b},
                               "flows": flows})


def tcp(name, app, **tr):
    return {"name": name, "transport": {"kind": "tcp", **tr}, "app": app}


def invoke(*args):
    from ccbench.cli import app

    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200"})


# --------------------------------------------------------------------------- inputs


def test_inputs_come_from_topology_and_transport():
    from ccbench.predict.inputs import flow_inputs

    sc = dumbbell([tcp("a", {"kind": "bulk"}, mss=1000, rcvbuf="100kB", min_rto="300ms")], rate="8Mbit",
                  delay="20ms")
    (fi,) = flow_inputs(sc)
    # 40 ms propagation; a 1052-byte data packet serialised on the 8 Mbit/s bottleneck
    # and on both 10 Gbit/s access links, a 52-byte ACK on the three reverse links.
    ser = 1052 * 8 / 8e6 + 2 * 1052 * 8 / 10e9 + 52 * 8 / 8e6 + 2 * 52 * 8 / 10e9
    assert fi.base_rtt_s == pytest.approx(0.040 + ser, rel=1e-12)
    assert (fi.mss, fi.header, fi.b) == (1000, 52, 1.0)
    # min(sndbuf 4 MiB, window of rcvbuf 100 kB) / MSS: Linux's buffer holds 160/256 payload
    assert fi.w_max_pkts == pytest.approx(62.5)
    assert fi.bottleneck_bps == 8e6 and fi.buffer_bytes == 100 * 1052
    fi.with_loss(0.01, "given")
    assert fi.t0_s == pytest.approx(fi.base_rtt_s + 0.3)  # Linux: srtt + max(4 rttvar, min_rto)


def test_a_flow_alone_for_part_of_its_span_is_capped_at_its_time_averaged_share():
    """Two greedy flows, the second from 5 s of a 12 s run: the first flow's share is
    the link for 5 s and half of it for 7 s (computed here by hand), the second's half;
    with every flow running throughout it stays the plain count."""
    from ccbench.predict.inputs import effective_sharers, flow_inputs

    staggered = dumbbell([tcp("first", {"kind": "bulk"}), {**tcp("second", {"kind": "bulk"}), "start": "5s"}],
                         duration="12s")
    first, second = flow_inputs(staggered)
    cap = first.bottleneck_bps * first.mss / first.packet_bytes
    assert first.fair_share_bps == pytest.approx((5 * cap + 7 * cap / 2) / 12)
    assert second.fair_share_bps == pytest.approx(cap / 2)
    together = flow_inputs(dumbbell([tcp("a", {"kind": "bulk"}), tcp("b", {"kind": "bulk"}), tcp("c", {"kind": "bulk"})]))
    assert [f.sharing for f in together] == [3.0, 3.0, 3.0]
    # a flow that stops early leaves the link to the others for the rest of their span
    assert effective_sharers((0, 10), [(0, 10), (0, 5)]) == pytest.approx(10 / (5 / 2 + 5))


def test_parking_lot_and_graph_paths():
    from ccbench.predict.path import flow_path
    from ccbench.scenario import Scenario

    pl = Scenario.from_dict({
        "topology": {"kind": "parking_lot", "hops": 3, "rate": "10Mbit", "delay": "10ms",
                     "per_hop": [{}, {"rate": "5Mbit"}, {}]},
        "flows": [tcp("long", {"kind": "bulk"}) | {"path": "long"}, tcp("x1", {"kind": "bulk"}) | {"path": "cross1"}]})
    long_, x1 = (flow_path(pl, rf) for rf in pl.resolved_flows)
    assert [lk.name for lk in long_.forward[1:-1]] == ["hop0", "hop1", "hop2"]
    assert long_.bottleneck.name == "hop1" and long_.bottleneck.rate_bps == 5e6
    assert [lk.name for lk in x1.forward[1:-1]] == ["hop1"]
    g = Scenario.from_dict({
        "topology": {"kind": "graph", "nodes": ["a", "r1", "r2", "r3", "b"], "links": [
            {"from": "a", "to": "r1", "rate": "1Gbit", "delay": "1ms", "duplex": True},
            {"from": "r1", "to": "r2", "rate": "10Mbit", "delay": "5ms", "duplex": True},
            {"from": "r2", "to": "b", "rate": "1Gbit", "delay": "1ms", "duplex": True},
            {"from": "r1", "to": "r3", "rate": "100Mbit", "delay": "1ms", "duplex": True},
            {"from": "r3", "to": "r2", "rate": "100Mbit", "delay": "1ms", "duplex": True}]},
        "flows": [tcp("f", {"kind": "bulk"}) | {"src": "a", "dst": "b"}]})
    path = flow_path(g, g.resolved_flows[0])
    assert [lk.name for lk in path.forward] == ["a->r1", "r1->r3", "r3->r2", "r2->b"]  # smallest delay
    assert path.bottleneck.rate_bps == 100e6


# --------------------------------------------------------------------------- rows


def test_which_models_apply_and_why_not():
    from ccbench.predict import predict

    sc = dumbbell([
        tcp("bulk", {"kind": "bulk"}, cc="reno"),
        tcp("xfer", {"kind": "bulk", "bytes": "100kB"}, cc="cubic"),
        tcp("voip", {"kind": "preset", "name": "brosh-voip"}, nagle=False),
        {"name": "udp", "transport": {"kind": "udp"}, "app": {"kind": "cbr", "size": "200B", "interval": "20ms"}},
    ], loss={"kind": "bernoulli", "p": 0.01})
    df = predict(sc).set_index(["flow", "model"])
    assert set(df.loc["bulk"].index) == {"pftk", "pftk-approx", "mathis", "wei-sync", "luebben-window", "luebben-periodic"}
    assert df.loc[("bulk", "pftk"), "valid"] and df.loc[("bulk", "pftk"), "loss_source"] == "scenario"
    assert df.loc[("bulk", "pftk"), "loss_rate"] == pytest.approx(0.01)
    assert not df.loc[("bulk", "wei-sync"), "valid"] and "several greedy" in df.loc[("bulk", "wei-sync"), "why_not"]
    assert not df.loc[("bulk", "luebben-window"), "valid"]
    assert df.loc[("xfer", "cardwell"), "valid"] and df.loc[("xfer", "cardwell"), "completion_s"] > 0
    assert not df.loc[("xfer", "weigle"), "valid"] and "LB-CC" in df.loc[("xfer", "weigle"), "why_not"]
    v = df.loc[("voip", "brosh")]
    assert v["valid"] and v["delay_p50_s"] <= v["delay_p95_s"] <= v["delay_p99_s"] and 0 <= v["late_fraction"] < 1
    assert not df.loc[("udp", "-"), "valid"] and "UDP" in df.loc[("udp", "-"), "why_not"]
    # every invalid row says why, every valid row has a number
    assert (df[~df["valid"]]["why_not"].str.len() > 0).all()
    assert df[df["valid"]][["goodput_bps", "completion_s", "delay_p50_s", "p_sender_buffering"]].notna().any(axis=1).all()


def test_validity_domains():
    from ccbench.predict import predict

    # PFTK needs losses; a loss-free, window-limited flow is the static-window curve.
    sc = dumbbell([tcp("w", {"kind": "bulk"}, rcvbuf="20kB")], loss={"kind": "bernoulli", "p": 0.0},
                  rate="100Mbit", delay="25ms")
    df = predict(sc).set_index("model")
    assert not df.loc["pftk", "valid"] and "p > 0" in df.loc["pftk", "why_not"]
    lw = df.loc["luebben-window"]
    assert lw["valid"]
    # min(w/RTT, C) with w = W_max x MSS = the window of rcvbuf (160/256 of it, as Linux's
    # scaling_ratio): the window, not the 100 Mbit/s link, limits
    assert lw["goodput_bps"] == pytest.approx(20000 * 160 / 256 * 8 / lw["rtt_s"], rel=1e-9)
    # Brosh assumes a CBR source below TCP's throughput: video at 5 % loss is not.
    sc = dumbbell([tcp("v", {"kind": "preset", "name": "brosh-video"}, nagle=False)],
                  loss={"kind": "bernoulli", "p": 0.05}, delay="100ms")
    b = predict(sc).set_index("model").loc["brosh"]
    assert not b["valid"] and "not below the PFTK throughput" in b["why_not"]
    # BBR is not an AIMD window.
    sc = dumbbell([tcp("b", {"kind": "bulk"}, cc="bbr")], loss={"kind": "bernoulli", "p": 0.01})
    assert "AIMD" in predict(sc).set_index("model").loc["pftk", "why_not"]


def test_loss_sources():
    from ccbench.predict import predict

    ge = {"kind": "gilbert_elliott", "p_gb": 0.01, "p_bg": 0.24, "loss_bad": 0.5}
    df = predict(dumbbell([tcp("a", {"kind": "bulk"})], loss=ge))
    assert df["loss_rate"].iloc[0] == pytest.approx(0.01 / 0.25 * 0.5)
    # drop-tail losses without a run: rows say where p would come from
    dt = dumbbell([tcp("a", {"kind": "bulk"})])
    r = predict(dt, loss_from="scenario").set_index("model").loc["pftk"]
    assert not r["valid"] and "--loss-from sim" in r["why_not"]
    r = predict(dt, loss=0.02).set_index("model").loc["pftk"]
    assert r["valid"] and r["loss_source"] == "given" and r["loss_rate"] == 0.02
    with pytest.raises(ValueError, match="loss_from"):
        predict(dt, loss_from="kernel")


@needs_core
def test_loss_from_sim_uses_the_measured_flow():
    from ccbench.predict import predict_and_run

    sc = dumbbell([tcp("a", {"kind": "bulk"}, cc="reno"), tcp("b", {"kind": "bulk"}, cc="reno")],
                  queue={"kind": "droptail", "limit": "20pkt"})
    df, run = predict_and_run(sc, duration_s=8.0)
    assert run is not None and run.meta["backend"] == "sim"
    f = run.flows.set_index("flow")
    r = df.set_index(["flow", "model"]).loc[("a", "pftk")]
    assert r["loss_source"] == "sim" and r["rtt_s"] == pytest.approx(f.at["a", "rtt_p50_s"])
    # the steady-state formulas take the loss-indication rate (PFTK's trace p)
    assert r["loss_rate"] == pytest.approx(f.at["a", "loss_events"] / f.at["a", "pkts_sent"])
    ws = df.set_index(["flow", "model"]).loc[("a", "wei-sync")]
    assert ws["valid"] and 0 < ws["sync_rate"] <= 1


# --------------------------------------------------------------------------- CLI


@needs_core
def test_predict_cli_on_every_example():
    assert len(EXAMPLES) >= 8
    for path in EXAMPLES:
        res = invoke("predict", path, "--duration", "2s", "-q")
        assert res.exit_code == 0, (path, res.output)
        if "no flows, nothing to predict" in res.output:
            continue
        from ccbench.cli.predict import load_for_models

        names = load_for_models(path).flow_names()
        lines = [ln.strip() for ln in res.output.splitlines()]
        for name in names:  # one "flow: models" line per flow
            assert any(ln.startswith(f"{name}: ") for ln in lines), (path, name)


def test_predict_cli_bad_input_is_one_line():
    res = invoke("predict", ROOT / "examples/emu/reno_10mbit.toml", "--loss", "7 percent")
    assert res.exit_code == 2 and "--loss" in res.output and "probability" in res.output
    res = invoke("predict", ROOT / "examples/emu/reno_10mbit.toml", "--loss-from", "kernel")
    assert res.exit_code == 2 and "sim, emu, scenario" in res.output


def _same(a, b) -> bool:
    """Same output but for the lines that report compute time."""
    def keep(r):
        return [ln for ln in r.output.splitlines() if " time " not in ln]

    return a.exit_code == 0 and keep(a) == keep(b)


def test_model_commands_take_unit_strings_and_old_spellings():
    new = invoke("model", "pftk", "--rtt", "100ms", "--loss", "1%", "--mss", "1448B")
    old = invoke("model", "pftk", "--rtt-ms", "100", "--loss", "0.01", "--mss", "1448")
    assert new.exit_code == 0 and new.output == old.output
    assert "77.85" in new.output  # PFTK eq. 32 at RTT 100 ms, p = 1 %, T0 = 4 RTT, b = 2
    a = invoke("model", "brosh", "--rtt", "200ms", "--size", "174B", "--interval", "20ms", "--deadline", "150ms")
    b = invoke("model", "brosh", "--rtt-s", "0.2", "--size-bytes", "174", "--interval-s", "0.02", "--deadline-s", "0.15")
    assert _same(a, b)
    c = invoke("model", "weigle", "--size", "100kB", "--rtt", "50ms", "--t0", "250ms")
    d = invoke("model", "weigle", "--bytes", "100000", "--rtt-s", "0.05", "--t0-s", "0.25")
    assert _same(c, d)
    e = invoke("model", "wei-sync", "--slots", "2000pkt")
    f = invoke("model", "wei-sync", "--S", "2000")
    assert _same(e, f)
    help_text = invoke("model", "pftk", "--help").output
    assert "--rtt " in help_text and "--rtt-ms" not in help_text  # old spellings hidden
    bad = invoke("model", "pftk", "--rtt", "100")
    assert bad.exit_code == 2 and "--rtt" in bad.output and "needs a unit" in bad.output


@needs_core
def test_compare_ways_sim_model_estimate(tmp_path):
    import pandas as pd

    sc = tmp_path / "voip.toml"
    sc.write_text("""
[run]
duration = "40s"
[topology]
kind = "dumbbell"
bottleneck = { down = "10Mbit", up = "10Mbit", delay = "25ms", loss = { kind = "bernoulli", p = 0.02 } }
[[flows]]
name = "voip"
transport = { kind = "tcp", cc = "reno", nagle = false }
app = { kind = "cbr", size = "174B", interval = "20ms", jitter = { dist = "normal", sd = "1ms" } }
[[flows]]
name = "bulk"
transport = { kind = "tcp", cc = "reno" }
app = { kind = "bulk" }
""")
    res = invoke("compare", sc, "--ways", "sim,model,estimate", "-o", tmp_path / "out", "-q")
    assert res.exit_code == 0, res.output
    long = pd.read_csv(tmp_path / "out" / "compare.csv")
    ways = set(long["way"])
    assert {"sim", "model:brosh", "model:pftk", "model:mathis", "estimate"} <= ways
    mean = long[(long.flow == "voip") & (long.metric == "delay_mean_s")].set_index("way")
    assert bool(mean.at["model:brosh", "in_band"])  # Brosh within its known accuracy here
    q = long[(long.flow == "voip") & (long.metric == "delay_q_s")].set_index("way")["value"]
    assert q["estimate"] >= 0.9 * q["sim"]  # a bound at eps = xi, next to the observed quantile
    assert (tmp_path / "out" / "compare.png").stat().st_size > 10_000
    assert (tmp_path / "out" / "prediction.csv").exists() and (tmp_path / "out" / "sim" / "meta.json").exists()
    assert re.search(r"estimate voip: S\(t\) = 69\.6 kbit/s \[t - [\d.]+ m?s\]\+", res.output)
    bad = invoke("compare", sc, "--ways", "sim,kernel")
    assert bad.exit_code == 2 and "--ways" in bad.output


@needs_core
def test_run_report_has_the_models(tmp_path):
    from ccbench.backends.sim import simulate
    from ccbench.report import write_report

    sc = dumbbell([tcp("a", {"kind": "bulk"}, cc="reno")], loss={"kind": "bernoulli", "p": 0.01}, duration="5s")
    simulate(sc).save(tmp_path / "run")
    html = write_report(tmp_path / "run").read_text()
    assert "Models beside the run" in html and "model: pftk" in html and "vs measured" in html


@needs_core
def test_sweep_report_has_the_models(tmp_path):
    from ccbench.report import write_report

    (tmp_path / "s.toml").write_text(f"""
scenario = "{(ROOT / 'examples/emu/reno_10mbit.toml').as_posix()}"
[sweep]
seeds = 2
"run.duration" = ["4s"]
"topology.bottleneck.queue.limit" = ["20pkt", "40pkt"]
""")
    res = invoke("sweep", tmp_path / "s.toml", "-o", tmp_path / "sw")
    assert res.exit_code == 0, res.output
    html = write_report(tmp_path / "sw").read_text()
    assert "Models beside the measurements" in html and "measured (median over seeds)" in html
    assert html.count("model: pftk<") == 2  # one table per parameter combination


def test_predict_refuses_a_fidelity_matrix():
    res = invoke("predict", ROOT / "examples" / "fidelity" / "default.toml", "--loss-from", "scenario")
    assert res.exit_code == 2 and "ccbench fidelity" in res.output
