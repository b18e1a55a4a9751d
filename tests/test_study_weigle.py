"""Weigle et al. study (issue 20), reduced: the LB-CC model matches the textbook-reno
stack within the paper's own spread, and the Linux stack differs from it."""

from __future__ import annotations

import pytest

from conftest import needs_core

pytestmark = needs_core


def test_textbook_profile_expands_to_the_legacy_switches():
    from ccbench.scenario.transport import Tcp

    j = Tcp.model_validate({"kind": "tcp", "stack": "textbook-reno"}).to_json()
    assert j["sack"] is False and j["tlp"] is False and j["frto"] is False and j["delayed_ack"] is False
    assert (j["init_cwnd"], j["mss"], j["header_bytes"]) == (1, 1460, 40)
    assert (j["rto"], j["min_rto_ms"], j["fast_recovery"]) == ("rfc6298", 200, "reno")
    assert j["cc"] == {"name": "reno", "params": {}}
    # Keys written next to the profile win; the default stack adds nothing.
    j = Tcp.model_validate({"kind": "tcp", "stack": "textbook-reno", "min_rto": "1s", "cc": "cubic"}).to_json()
    assert j["min_rto_ms"] == 1000 and j["cc"]["name"] == "cubic" and j["sack"] is False
    assert Tcp.model_validate({"kind": "tcp"}).to_json() == {"kind": "tcp"}


@pytest.fixture(scope="module")
def weigle_small():
    from ccbench.studies import weigle as w

    table, _ = w.table(figs=(1, 2, 3), runs=30)
    print("\n", table[w.SHOWN].round(3).to_string(index=False))
    return table.set_index(["fig", "stack"])


def test_model_matches_textbook_stack_within_the_papers_spread(weigle_small):
    from ccbench.studies.weigle import PAPER_SPREAD

    t = weigle_small
    # Figs 1 (56 kbit/s, K = 1) and 2 (1.54 Mbit/s): within 0.1. At 10 Mbit/s (Fig. 3)
    # the stack is ~10 % faster than the model (fast recovery keeps sending during the
    # RTT the model charges per loss); the paper's own spread, 80 % of cases within 0.1,
    # allows one such case in five (the study's Figs 1-5 row).
    for fig in (1, 2):
        assert abs(t.loc[(fig, "textbook-reno"), "err_M1"]) <= PAPER_SPREAD, fig
    assert abs(t.loc[(3, "textbook-reno"), "err_M1"]) <= 1.5 * PAPER_SPREAD
    # Eq. (19) at the measured p gives Table 1's "computed p_T" (0.058-0.059 % at p ~ 1 %).
    assert t.loc[(3, "textbook-reno"), "pT_computed_pct"] == pytest.approx(0.058, rel=0.1)


def test_linux_stack_beats_the_model_by_more_than_the_spread(weigle_small):
    from ccbench.studies.weigle import PAPER_SPREAD

    t = weigle_small
    # Linux repairs the second loss of a window without an RTO (SACK, RACK, TLP): no
    # timeouts, and at 10 Mbit/s it finishes well before the model's prediction.
    assert t.loc[(3, "linux"), "pT_obs_pct"] < 0.2 * t.loc[(3, "textbook-reno"), "pT_obs_pct"]
    assert t.loc[(3, "linux"), "err_M1"] < -1.5 * PAPER_SPREAD
    assert t.loc[(3, "linux"), "T1000_sim_s"] < t.loc[(3, "textbook-reno"), "T1000_sim_s"]
