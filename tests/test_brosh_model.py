"""Brosh et al. model vs simulation (``ccbench reproduce brosh-model``): the qualitative
results the study pins, on a few short runs (the whole file takes seconds)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.studies import brosh_model as B
from ccbench.studies import brosh_model_runs as R


def _sim(key, rtt, p, abc="per-ack", measure=60.0):
    return R.random_loss_point((key, rtt, p, 1, measure, 10.0, abc))


def test_voip_model_error_is_small_up_to_2pct_loss():
    # Paper Sec. 5.1: VoIP mean-delay error below 10 % on average up to 2 % loss.
    errs = []
    for p in (0.005, 0.01, 0.02):
        sim = _sim("voip64", 0.1, p)
        mod = R.model_point("voip64", 0.1, p)
        errs.append((mod["m_mean_s"] - sim["mean_s"]) / sim["mean_s"])
    assert max(abs(e) for e in errs) < 0.2, errs
    assert np.mean(np.abs(errs)) < 0.1, errs


def test_delay_rises_with_loss_and_rtt():
    means = [_sim("voip64", 0.1, p)["mean_s"] for p in (0.005, 0.02, 0.05)]
    assert means[0] < means[1] < means[2], means
    by_rtt = [_sim("voip64", rtt, 0.01)["mean_s"] for rtt in (0.02, 0.1, 0.3)]
    assert by_rtt[0] < by_rtt[1] < by_rtt[2], by_rtt
    # The model agrees on both trends.
    m = [R.model_point("voip64", 0.1, p)["m_mean_s"] for p in (0.005, 0.02, 0.05)]
    assert m[0] < m[1] < m[2]


def test_byte_counting_raises_voip_delay():
    # Paper Sec. 6.3 / Fig. 19: byte counting (RFC 3465) grows cwnd slower for sub-MSS
    # segments, so the VoIP delay rises; per-ACK counting is the paper's Linux 2.6.
    ack = _sim("voip64", 0.1, 0.02, "per-ack")
    abc = _sim("voip64", 0.1, 0.02, "l2")
    assert abc["mean_s"] > 1.05 * ack["mean_s"], (ack["mean_s"], abc["mean_s"])
    # The drop-tail point over three seeds: one seed's p95 is a coin flip (seed 1:
    # 1.51 vs 1.50 s; seeds 2 and 3 order the other way on the previous simulator).
    p95 = {abc_mode: np.mean([R.droptail_abc_point((20, "packet", abc_mode, seed, 30.0))["p95_s"] for seed in (1, 2, 3)])
           for abc_mode in ("per-ack", "l2")}
    assert p95["l2"] > p95["per-ack"], p95


def test_video_backlog_dominates_voip_recovery_dominates():
    # Fig. 17b: VoIP delay is mostly loss recovery, video's mostly send backlog.
    v = _sim("voip64", 0.1, 0.02)
    w = _sim("video573", 0.1, 0.02)
    assert v["backlog_share"] < 0.5 < w["backlog_share"]
    assert v["p95_s"] < w["p95_s"]


def test_summary_item_status_follows_the_checks():
    df = pd.DataFrame([
        {"fig": "8", "quantity": "q1", "setting": "s", "sim": 0.05, "model": np.nan, "paper": 0.1, "unit": "",
         "agrees": True, "note": ""},
        {"fig": "8", "quantity": "q2", "setting": "s", "sim": 0.05, "model": np.nan, "paper": 0.1, "unit": "",
         "agrees": "", "note": ""},
        {"fig": "14", "quantity": "q3", "setting": "s", "sim": 0.05, "model": 0.01, "paper": 0.02, "unit": "",
         "agrees": False, "note": ""},
    ])
    assert B.summary_item(df, "figs5-11")[0] == "reproduced"
    status, text = B.summary_item(df, "fig14")
    assert status == "not yet" and "differs" in text


@pytest.mark.parametrize("value", ["bytes", "2"])
def test_abc_field_is_validated(value):
    from ccbench.scenario import Scenario
    from ccbench.scenario.errors import ScenarioError

    d = R.random_loss_scenario(R.SOURCES["voip64"], 0.1, 0.01, 1.0, 1.0, abc=value)
    with pytest.raises(ScenarioError) as e:
        Scenario.from_dict(d)
    msg = str(e.value)
    assert "transport.abc" in msg and value in msg and '"l2"' in msg and "\n" not in msg


def test_half_mss_packets_lower_the_peak_delay():
    # Fig. 18: same bytes/s, two close-by losses; the half-MSS flow's backlog is sent in
    # coalesced full segments, so its peak delay is much lower (paper: 45 %).
    summary, series = R.trace_pair(seconds=18.0)
    peak = summary.set_index("flow")["peak_delay_s"]
    # 51 % lower before the receiver's window ramp was modelled, 18 % after (its
    # immediate ACKs while rcv_ssthresh grows reach both flows differently).
    assert peak["MSS/2"] < 0.9 * peak["MSS"], peak.to_dict()
    assert set(series["kind"]) == {"delay_s", "cwnd_pkts"}
