"""The second round of DropTail hypotheses for Wei's Table 3.1 (issue 21): the ``--counting``
mode and the scenario rows of ``scripts/wei_sync_hypotheses.py`` (docs/REPRODUCTIONS.md, "Why
DropTail and RED differ: hypotheses tested"). Pure-pandas checks plus one short run (~2 s: 16 flows, 200 s)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pandas as pd
import pytest

from conftest import needs_core


@pytest.fixture(scope="module")
def hyp():
    path = Path(__file__).resolve().parents[1] / "scripts" / "wei_sync_hypotheses.py"
    spec = importlib.util.spec_from_file_location("wei_sync_hypotheses", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_reductions_are_the_ssthresh_changes_after_the_warmup(hyp):
    # two flows, unsorted as the simulator's interleaved samples; a NaN run is no change
    st = pd.DataFrame({
        "flow": ["a", "b", "a", "b", "a", "b", "a", "b", "a", "b"],
        "t": [0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0],
        "ssthresh_pkts": [2e9, float("nan"), 2e9, float("nan"), 50.0, 80.0, 50.0, 80.0, 30.0, 80.0],
    }).sample(frac=1.0, random_state=3)
    r = hyp.reductions(st, warmup_s=0.5)
    assert sorted(zip(r["flow"], r["t"])) == [("a", 2.0), ("a", 4.0), ("b", 2.0)]
    # the warm-up drops the earlier cuts; the first sample of a flow is never a cut
    assert list(hyp.reductions(st, warmup_s=3.0)["t"]) == [4.0]


def test_second_round_rows_change_what_they_say(hyp):
    from ccbench.scenario import Scenario
    from ccbench.studies import wei_sync as W

    def build(name):
        cc, scheme, tweak = hyp.ROWS[name]
        d = W.scenario_dict(cc, scheme, 16, 10.0)
        tweak(d)
        Scenario.from_dict(d)  # every row is a valid scenario
        return scheme, d

    new = [r for r in hyp.ROWS if r.split("-paced")[0] in (
        "noise-5pct", "no-noise", "noise-bursts", "access-100m", "rtt-spread", "no-sack",
        "tcp-linux-2.6.16", "rtt50", "rtt10", "textbook-reno-no-noise")]
    assert len(new) == 20
    for name in new:  # each has its paced twin, the same change under pacing
        assert build(name)[0] == ("pacing" if name.endswith("-paced") else "droptail"), name
    peak = build("noise-5pct")[1]["flows"][1]["app"]["peak_rate"]
    assert peak == f"{W.NOISE_PEAK_BPS / 2 / 1e3:g}kbit"  # mean 5 % of 100 Mbit/s
    assert len(build("no-noise")[1]["flows"]) == 1
    delays = build("rtt-spread")[1]["topology"]["access"]["pair_delays"]
    assert len(delays) == 16 + W.N_NOISE and delays[0] == "0.000ms" and delays[15] == "20.000ms"
    assert set(delays[16:]) == {"0ms"}
    bn = build("rtt50")[1]["topology"]["bottleneck"]
    assert bn["delay"] == "25ms" and bn["queue"]["limit"] == "417pkt"  # 1 BDP at 50 ms
    assert hyp.WINDOW_S["rtt50"] == 0.05 and hyp.WINDOW_S["rtt10-paced"] == 0.01
    tcp = build("tcp-linux-2.6.16")[1]["flows"][0]["transport"]
    assert tcp["recovery"] == "rate-halving" and tcp["tlp"] is False and tcp["abc"] == "l1"


@needs_core
def test_counting_rules_are_ordered_as_their_definitions(hyp):
    r = hyp.counting("droptail", 1, 16, 200.0, 30.0)
    assert r["events"] >= 5
    for k in ("study", "rtt/4", "rtt/2", "2rtt", "srtt", "gap", "all-flows", "tcp-events", "own-events", "reactions"):
        assert 0 < r[k] <= 1, (k, r)
    # a flow's own loss events and its window cuts start at its own drops: a subset of the
    # events in which it lost a packet
    assert r["own-events"] <= r["study"] and r["reactions"] <= r["study"], r
    # every flow cut its window after the warm-up, and the cuts are charged to events
    assert r["cuts_per_event"] > 0.1 and r["reactions"] > 0.1, r
    # chaining drops less than one window apart never makes more events than the windows
    assert r["gap_events"] <= r["events"]
    assert math.isfinite(r["tcp_goodput_mbps"]) and r["tcp_goodput_mbps"] > 50


@pytest.mark.parametrize("args, says", [
    (["rtt50"], "rows: rtt50 change the path's RTT (accepted: with --counting"),
    (["--counting", "nosuch"], "rows: nosuch not known (accepted: droptail, pacing,"),
])
def test_script_refuses_rows_it_cannot_run_in_one_line(args, says):
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root / "python")}
    p = subprocess.run([sys.executable, str(root / "scripts" / "wei_sync_hypotheses.py"), *args],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith(says), p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "Traceback" not in p.stderr
