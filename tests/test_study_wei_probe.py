"""Wei §4.3 probe analysis (issue 21, item 4) on the simulator, much reduced (~5 s): the
probe's loss intervals under drop-tail are burstier than a Poisson process of the same rate,
and RED spreads the link's losses (fewer intervals below 1 % of an RTT)."""

from __future__ import annotations

import pytest

from conftest import needs_core

pytestmark = needs_core


@pytest.fixture(scope="module")
def table():
    import ccbench
    import pandas as pd
    from ccbench.scenario import Scenario
    from ccbench.studies import wei_probe as P

    rows = []
    for q in P.QUEUES:
        for s in (1, 2):
            r = ccbench.simulate(Scenario.from_dict(P.scenario_dict(q, 60.0)), seed=s)
            rows += P.analyse(r, "sim", q, s)
    runs = pd.DataFrame([{k: v for k, v in r.items() if not k.startswith("_")} for r in rows])
    return P.summarize(runs, "emulator part not requested")


def _row(t, queue, losses):
    r = t[(t["backend"] == "sim") & (t["queue"] == queue) & (t["losses"] == losses)]
    assert len(r) == 1, t
    return r.iloc[0]


def test_probe_losses_under_droptail_are_burstier_than_poisson(table):
    pr = _row(table, "droptail", "probe")
    assert pr["n_losses"] > 30, pr
    assert pr["within_1rtt"] > pr["poisson_1rtt"] + 0.3, pr  # measured 0.94 vs 0.38
    assert pr["within_1pct"] > 5 * pr["poisson_1pct"], pr


def test_red_spreads_the_link_losses(table):
    dt, red = _row(table, "droptail", "link"), _row(table, "red", "link")
    assert red["within_1pct"] < dt["within_1pct"], (dt, red)
    assert red["within_1rtt"] < dt["within_1rtt"], (dt, red)


def test_a_skipped_emulator_is_named(table):
    note = table[table["backend"] == "emu"]["note"].iloc[0]
    assert note.startswith("skipped: ") and "not requested" in note


def test_a_machine_that_cannot_emulate_is_detected(monkeypatch):
    from ccbench.studies.wei_probe import _emu_problem

    monkeypatch.setenv("CCBENCH_CCEMU", "/nonexistent/ccemu")
    problem = _emu_problem()
    assert problem is not None and "cannot emulate" in problem, problem
