"""The models against the simulator on random-loss paths (p = 0.5-5 %): what
``ccbench compare --ways sim,model`` shows, pinned to each model's known accuracy
(:mod:`ccbench.predict.accuracy`, which states the paper's own spread and our numbers).

Paths: 100 Mbit/s dumbbell, RTT 50 ms, Bernoulli loss on the data direction, a queue
that never fills (the loss model alone limits the flows). Inputs come from the scenario
(p, base RTT, T0 = RTT + min_rto): the comparison is what a user gets. Two seeds per
point, averaged, keep the seed-to-seed spread (about ±10 % at 0.5 % for 60 s) below
the bands.
"""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_core

pytestmark = needs_core


def scenario(p: float, flows: list, duration: str):
    from ccbench.scenario import Scenario

    return Scenario.from_dict({
        "run": {"duration": duration, "state_sample": "100ms"},
        "topology": {"kind": "dumbbell", "bottleneck": {
            "down": "100Mbit", "up": "100Mbit", "delay": "25ms",
            "queue": {"kind": "droptail", "limit": "10000pkt"}, "loss": {"kind": "bernoulli", "p": p}}},
        "flows": flows})


def ratios(sc, flow: str, seeds=(1, 2)) -> dict[str, float]:
    """model / simulation on each model's own metric (mean over seeds), and in_band."""
    from ccbench.backends.sim import simulate
    from ccbench.predict import predict
    from ccbench.predict.accuracy import KNOWN_ACCURACY
    from ccbench.predict.compare import compare_long, model_metrics, run_metrics

    runs = [simulate(sc, seed=s) for s in seeds]
    pred = predict(sc, run=runs[0])
    sim = pd_mean([run_metrics(r, "sim") for r in runs])
    long = compare_long([sim, model_metrics(pred)])
    out = {}
    for model, acc in KNOWN_ACCURACY.items():
        row = long[(long.flow == flow) & (long.way == f"model:{model}") & (long.metric == acc.metric)]
        if len(row):
            out[model] = (1.0 + float(row["vs_sim"].iloc[0]), bool(row["in_band"].iloc[0]))
    return out


def pd_mean(frames):
    import pandas as pd

    df = pd.concat(frames)
    return df.groupby(["flow", "metric", "way"], as_index=False, sort=False)["value"].mean()


@pytest.mark.parametrize("cc", ["reno", "cubic"])
@pytest.mark.parametrize("p", [0.005, 0.02, 0.05])
def test_bulk_throughput_models_within_known_accuracy(cc, p):
    sc = scenario(p, [{"name": "bulk", "transport": {"kind": "tcp", "cc": cc}, "app": {"kind": "bulk"}}], "60s")
    r = ratios(sc, "bulk")
    assert {"pftk", "pftk-approx", "mathis", "luebben-periodic"} <= set(r)
    print(cc, p, {k: round(v[0], 3) for k, v in r.items()})
    for model, (ratio, ok) in r.items():
        assert ok, f"{model}: model/sim = {ratio:.3f} outside its known accuracy"
    # PFTK charges timeouts Linux does not take: it does not over-predict at 2-5 %
    if p >= 0.02:
        assert r["pftk"][0] < 1.0


@pytest.mark.parametrize("p", [0.005, 0.01, 0.02, 0.05])
def test_voip_over_tcp_mean_delay_brosh(p):
    sc = scenario(p, [{"name": "voip", "transport": {"kind": "tcp", "cc": "reno", "nagle": False},
                       "app": {"kind": "preset", "name": "brosh-voip"}}], "120s")
    r = ratios(sc, "voip")
    ratio, ok = r["brosh"]
    print("brosh", p, round(ratio, 3))
    assert ok, f"brosh mean delay model/sim = {ratio:.3f}"
    if p <= 0.02:  # the paper's own spread: < 10 % mean-delay error up to 2 % loss (we allow 12 %)
        assert abs(ratio - 1) < 0.12


@pytest.mark.parametrize("p", [0.005, 0.01, 0.02, 0.05])
def test_100kB_transfers_cardwell_and_weigle(p):
    sc = scenario(p, [{"name": "x", "count": 40, "start_every": "3s", "transport": {"kind": "tcp", "cc": "reno"},
                       "app": {"kind": "bulk", "bytes": "100kB"}}], "125s")
    from ccbench.backends.sim import simulate
    from ccbench.predict import predict

    c = np.concatenate([simulate(sc, seed=s).flows["completion_s"].to_numpy() for s in (1, 2)])
    assert np.isfinite(c).all()
    pred = predict(sc, loss_from="scenario").set_index(["flow", "model"])
    from ccbench.predict.accuracy import in_band

    for model in ("cardwell", "weigle"):
        ratio = pred.loc[("x[0]", model), "completion_s"] / c.mean()
        print(model, p, round(ratio, 3))
        assert in_band(model, ratio), f"{model}: model/sim = {ratio:.3f}"
        # the known over-prediction against Linux-like TCP (SACK/RACK/TLP), growing with p
        assert ratio > 1.0
        if p <= 0.01:
            assert ratio < 1.6


def test_compare_cli_on_the_random_loss_example(tmp_path):
    """``ccbench compare examples/models_random_loss.toml --ways sim,model``: every model row
    with a known accuracy lies within it (bulk Reno and CUBIC, VoIP over TCP, 100 KB)."""
    import pandas as pd
    from typer.testing import CliRunner

    from ccbench.cli import app
    from conftest import ROOT

    res = CliRunner().invoke(app, ["compare", str(ROOT / "examples/models_random_loss.toml"), "--ways", "sim,model",
                                   "-o", str(tmp_path), "-q"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    long = pd.read_csv(tmp_path / "compare.csv")
    judged = long[long["in_band"].notna() & ~long["flow"].str.match(r".*\[\d+\]$")]
    assert set(judged["way"]) == {"model:pftk", "model:pftk-approx", "model:mathis", "model:luebben-periodic",
                                  "model:brosh", "model:cardwell", "model:weigle"}
    bad = judged[~judged["in_band"].astype(bool)]
    assert bad.empty, bad[["flow", "way", "vs_sim"]]
    assert "web100k[*]" in res.output  # the 25 transfers shown by their mean
