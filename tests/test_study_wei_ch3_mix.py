"""Wei thesis Ch. 3, paced and bursty Reno sharing the bottleneck (Figs 3.19, 3.20, 3.26), much
reduced: 16 flows (8 + 8) on the wei-sync path for 500 s, seed 1; ~15 s of CPU in all.

* DropTail: the bursty half gets more than its fair share, the paced half less, and the paced
  flows detect more loss events (Fig. 3.19 and §3.2.4's reason);
* Persistent ECN: every flow sees the marks and the throughput gap nearly closes (Fig. 3.26;
  the thesis's "paced higher in all cases" is not reproduced, and the table says so);
* the table rows, the figure, the summary item and the notes paragraph are built from the runs.
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from conftest import needs_core

pytestmark = needs_core


@pytest.fixture(scope="module")
def runs():
    from ccbench.studies import wei_ch3 as C

    jobs = [("mix", sc, 16, 1, 500.0, 60.0, 1.0) for sc in ("droptail", "pecn")]
    jobs += [("convergence", sc, 16, 1, 500.0, 60.0, 1.0) for sc in ("droptail", "pacing")]
    return C.runs_frame(C.run_all(jobs))


def _one(df: pd.DataFrame, part: str, scheme: str) -> pd.Series:
    r = df[(df["part"] == part) & (df["scheme"] == scheme)]
    assert len(r) == 1, (part, scheme)
    return r.iloc[0]


def test_scenario_splits_the_flows_into_a_bursty_and_a_paced_half():
    from ccbench.studies.wei_ch3_mix import scenario

    d = scenario("pecn", 5, 10.0, 0.25)
    tcp = {f["name"]: f for f in d["flows"] if f["transport"]["kind"] == "tcp"}
    assert (tcp["bursty"]["count"], tcp["paced"]["count"]) == (2, 3)
    assert tcp["bursty"]["transport"]["pacing"] is False and tcp["paced"]["transport"]["pacing"] == "random"
    assert tcp["bursty"]["transport"]["ecn"] and tcp["paced"]["transport"]["ecn"]
    q = d["topology"]["bottleneck"]["queue"]
    assert (q["kind"], q["limit"], q["upper"]) == ("pecn", "417pkt", "417pkt")
    assert "ecn" not in scenario("droptail", 4, 10.0)["flows"][0]["transport"]
    with pytest.raises(ValueError, match="mix scheme"):
        scenario("red", 4, 10.0)
    with pytest.raises(ValueError, match="at least 2"):
        scenario("droptail", 1, 10.0)


def test_a_class_of_one_flow_is_measured():
    from ccbench.studies.wei_ch3_mix import measure

    r = measure("droptail", 2, 1, 30.0, 5.0)  # one bursty flow ("bursty"), one paced ("paced")
    assert r["mbps_bursty"] > 1 and r["mbps_paced"] > 1, r
    assert 0 < r["paced_share"] < 1, r


def test_droptail_mix_favours_the_bursty_flows_which_detect_fewer_loss_events(runs):
    r = _one(runs, "mix", "droptail")
    assert r["ntg_bursty"] > 0 > r["ntg_paced"], r  # measured +0.16 / -0.16
    assert r["paced_share"] < 0.46, r  # measured 0.42 (fair 0.50)
    assert r["sync_paced"] > r["sync_bursty"] + 0.05, r  # measured 0.59 vs 0.39
    assert r["reductions_paced"] > r["reductions_bursty"], r
    assert r["drops_paced"] > r["drops_bursty"], r


def test_persistent_ecn_closes_the_gap(runs):
    dt, pe = _one(runs, "mix", "droptail"), _one(runs, "mix", "pecn")
    gap_dt = abs(1 - dt["mbps_paced"] / dt["mbps_bursty"])
    gap_pe = abs(1 - pe["mbps_paced"] / pe["mbps_bursty"])
    assert gap_pe < 0.06 and gap_pe < gap_dt / 2, (gap_dt, gap_pe)  # measured 0.011 vs 0.28
    assert pe["sync_bursty"] > 0.85 and pe["sync_paced"] > 0.95, pe
    assert pe["reductions_paced"] == pytest.approx(pe["reductions_bursty"], rel=0.05), pe


def test_claims_rows_judge_the_thesis_statements(runs):
    from ccbench.studies.wei_ch3_mix import claims

    t = pd.DataFrame(claims(runs))
    by = t.set_index("quantity")
    assert by.loc["share of DropTail mixes with bursty NTG > 0", "agrees"] == "yes"
    assert by.loc["share of DropTail mixes where paced flows detect more loss events (λ)", "agrees"] == "yes"
    assert by.loc["P-ECN shrinks the paced-bursty throughput gap", "agrees"] == "yes"
    f20 = t[t["item"].isin(["Fig. 3.20", "§3.2.4"])]
    assert len(f20) == 4 and set(f20["setting"]) == {"Reno N = 16, B = 1 BDP"}, f20
    assert len(t[t["quantity"].str.startswith("paced share")]) == 2
    # the verdicts follow the numbers: a P-ECN mix where the paced class wins every run
    pe = runs[runs["part"] == "mix"].copy()
    pe.loc[pe["scheme"] == "pecn", "mbps_paced"] = pe["mbps_bursty"] * 1.01
    t2 = pd.DataFrame(claims(pe)).set_index("quantity")
    assert t2.loc["share of P-ECN mixes where the paced class gets more throughput", "agrees"] == "yes"
    assert math.isnan(t2.loc["share of DropTail mixes with bursty NTG > 0", "paper"])
    assert not any(t2.index.str.contains("isolated")), "no isolated runs given: no Fig. 3.20 rows"


def test_figure_summary_item_and_note(runs, tmp_path):
    from ccbench.studies import summary
    from ccbench.studies.catalogue import PAPERS
    from ccbench.studies.wei_ch3_mix import figure, note
    from ccbench.studies.wei_ch3_table import claims

    figure(runs, tmp_path / "mix.png")
    assert (tmp_path / "mix.png").stat().st_size > 10_000
    t = claims(runs)
    for key, words in (("claims:Fig. 3.19|Fig. 3.20|§3.2.4", "bursty NTG > 0"),
                       ("claims:Fig. 3.26", "paced class gets more")):
        item = next(i for p in PAPERS for i in p.items if i.key == key)
        status, text = summary.item_result(item, {"wei-ch3": (t, {})})
        assert status in ("reproduced", "partly", "not yet") and words in text, (status, text)
    n = note(t)
    assert n.startswith("* **Paced and bursty flows together") and "of the TCP throughput" in n, n
    assert note(t[t["item"] != "Fig. 3.19"]) == ""
