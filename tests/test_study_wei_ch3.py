"""Wei thesis Ch. 3 figures (issue 21, item 3), much reduced: the qualitative results the
study reproduces. 100 Mbit/s, 200 ms, 1680-packet buffer, 50 UDP on/off noise flows
(:mod:`ccbench.studies.wei_sync`'s path), Reno; ~15 s of CPU in all.

* λ falls with the number of flows under DropTail (Fig. 3.9: 4 vs 32 flows);
* randomized pacing raises the fraction of flows that detect a loss event (Fig. 3.8, 16 flows);
* the loss process is far burstier than Poisson (Fig. 3.1: intervals < 1 % RTT);
* Persistent ECN converges to fairness (eq. 3.7) faster than DropTail, and neither beats the
  bound of eq. (3.8).
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

    jobs = [("sync-n", "droptail", 4, s, 800.0, 60.0, 1.0) for s in (1, 2, 3)]
    jobs += [("sync-n", "droptail", 32, 1, 300.0, 60.0, 1.0)]
    jobs += [("sync-n", sc, 16, s, 500.0, 60.0, 1.0) for sc in ("droptail", "pacing") for s in (1, 2)]
    jobs += [("convergence", sc, 16, 1, 400.0, 60.0, 1.0) for sc in ("droptail", "pecn")]
    jobs += [("intervals", "droptail", 16, 1, 200.0, 60.0, 1.0)]
    rows = C.run_all(jobs)
    return rows, C.runs_frame(rows)


def _m(df: pd.DataFrame, **kw) -> pd.DataFrame:
    for k, v in kw.items():
        df = df[df[k] == v]
    assert len(df), kw
    return df


def test_sync_rate_falls_with_the_number_of_flows(runs):
    _, df = runs
    sn = _m(df, part="sync-n", scheme="droptail")
    l4, l32 = _m(sn, n_flows=4)["sync"].mean(), _m(sn, n_flows=32)["sync"].mean()
    assert 0 < l32 < l4 <= 1, (l4, l32)
    assert l4 - l32 > 0.1, (l4, l32)  # measured 0.60 vs 0.32


def test_pacing_raises_the_detection_fraction(runs):
    _, df = runs
    bursty = _m(df, part="sync-n", scheme="droptail", n_flows=16)["detect_frac"].mean()
    paced = _m(df, part="sync-n", scheme="pacing", n_flows=16)["detect_frac"].mean()
    assert paced > bursty + 0.05, (bursty, paced)  # measured 0.45 vs 0.56 (thesis Fig 3.8: 0.30 vs 0.70)


def test_loss_process_is_far_burstier_than_poisson(runs):
    _, df = runs
    iv = _m(df, part="intervals").iloc[0]
    assert iv["within_1pct"] > 0.4, iv  # thesis Fig 3.1: 80 %; measured 0.72
    assert iv["within_1pct"] > 10 * iv["poisson_1pct"], iv


def test_persistent_ecn_converges_faster_than_droptail_and_above_the_bound(runs):
    from ccbench.studies.wei_ch3_table import claims

    _, df = runs
    cv = _m(df, part="convergence")
    f_dt = float(_m(cv, scheme="droptail")["F_rtts"].iloc[0])
    f_pe = float(_m(cv, scheme="pecn")["F_rtts"].iloc[0])
    assert math.isfinite(f_pe) and f_pe < f_dt, (f_dt, f_pe)
    assert float(_m(cv, scheme="pecn")["sync"].iloc[0]) > 0.95
    t = claims(df)
    bound_rows = t[t["quantity"].str.startswith("F (eq. 3.7)")]
    assert len(bound_rows) == 2 and (bound_rows["agrees"] == "yes").all(), bound_rows


def test_table_feeds_the_summary(runs, tmp_path):
    from ccbench.studies import summary
    from ccbench.studies.catalogue import PAPERS
    from ccbench.studies.wei_ch3_table import claims

    rows, df = runs
    t = claims(df)
    assert {"item", "quantity", "ours", "paper", "agrees"} <= set(t.columns)
    item = next(i for p in PAPERS for i in p.items if i.key == "claims:Fig. 3.8")
    status, text = summary.item_result(item, {"wei-ch3": (t, {})})
    assert status in ("reproduced", "partly", "not yet") and "fraction of flows" in text, (status, text)
