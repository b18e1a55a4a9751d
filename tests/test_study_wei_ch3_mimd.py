"""Wei thesis Ch. 3, the parts beyond Reno (:mod:`ccbench.studies.wei_ch3_mimd`), much
reduced: the qualitative results the study shows on the wei-ch3 path (100 Mbit/s, 200 ms).

* Fig. 3.16: randomized pacing costs Reno throughput at a small buffer (1/4 BDP, 16 flows),
  and costs S-TCP almost nothing (its 1/8 decrease keeps the link busy when synchronised);
* Fig. 3.25: Persistent ECN costs Reno more than DropTail, less with a larger buffer;
* Figs 3.13-3.14: without noise, 8 bursty S-TCP flows end a 300 s run far less fair than 2,
  and the largest-window flow sees more loss events than the smallest (λ_i grows with w_i,
  the mechanism that lets MIMD converge at all); RED's randomised drops make them far fairer;
* the claims table carries the new rows in the summary's layout.
"""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import needs_core

pytestmark = needs_core


@pytest.fixture(scope="module")
def rows():
    from ccbench.studies import wei_ch3 as C

    jobs = [("ntg", sc, 16, 1, 200.0, 60.0, 0.25, cc) for cc in ("reno", "scalable") for sc in ("droptail", "pacing")]
    jobs += [("ntg", "pecn", 16, 1, 200.0, 60.0, b, "reno") for b in (0.25, 1.0)]
    jobs += [("mimd-n", sc, n, 1, 300.0, 60.0, 1.0, "scalable") for n in (2, 8) for sc in ("droptail", "pacing")]
    jobs += [("mimd-n", "red", 8, 1, 300.0, 60.0, 1.0, "scalable")]
    jobs += [("conv-cc", "droptail", 8, 1, 200.0, 60.0, 1.0, "highspeed")]
    return C.run_all(jobs)


@pytest.fixture(scope="module")
def runs(rows):
    from ccbench.studies import wei_ch3 as C

    return C.runs_frame(rows)


def _one(df: pd.DataFrame, **kw) -> pd.Series:
    for k, v in kw.items():
        df = df[df[k] == v]
    assert len(df) == 1, kw
    return df.iloc[0]


def test_pacing_costs_reno_throughput_but_not_scalable(runs):
    ntg = {(cc, sc): _one(runs, part="ntg", cc=cc, scheme=sc, buffer_bdp=0.25)["ntg"]
           for cc in ("reno", "scalable") for sc in ("droptail", "pacing")}
    reno = ntg["reno", "pacing"] - ntg["reno", "droptail"]
    stcp = ntg["scalable", "pacing"] - ntg["scalable", "droptail"]
    assert reno < -0.015, ntg  # measured -0.078 vs -0.035
    assert abs(stcp) < 0.01 and abs(stcp) < abs(reno) / 3, ntg  # measured -0.003 vs -0.002
    assert all(-0.5 < v < 0.05 for v in ntg.values()), ntg


def test_persistent_ecn_costs_reno_more_with_a_small_buffer(runs):
    small = _one(runs, part="ntg", cc="reno", scheme="pecn", buffer_bdp=0.25)["ntg"]
    large = _one(runs, part="ntg", cc="reno", scheme="pecn", buffer_bdp=1.0)["ntg"]
    paced_dt = _one(runs, part="ntg", cc="reno", scheme="pacing", buffer_bdp=0.25)["ntg"]
    assert small < paced_dt < 0, (small, paced_dt)  # measured -0.26 vs -0.078
    assert small < large - 0.1, (small, large)  # measured -0.26 vs -0.065 (Fig. 3.25's steps)


def test_scalable_fairness_without_noise(runs):
    two = _one(runs, part="mimd-n", n_flows=2, scheme="droptail")
    eight = _one(runs, part="mimd-n", n_flows=8, scheme="droptail")
    assert 0 < eight["min_share"] < two["min_share"] - 0.2, (two["min_share"], eight["min_share"])  # 0.35 vs 0.77
    assert eight["end_ratio"] > 2.0, eight["end_ratio"]  # fastest/slowest over the last 100 s: 6.3
    # λ_i rises with the window (Kelly's assumption, not Chiu-Jain's): measured 1.36 at a window ratio 6.9
    assert eight["w_hi_lo"] > 2.0 and 1.1 < eight["lam_hi_lo"] < eight["w_hi_lo"], eight[["lam_hi_lo", "w_hi_lo"]]
    assert not eight["converged"]
    # randomised drops (RED) pull the same flows together: fastest/slowest 1.6 vs 6.3, smallest 0.75 vs 0.35
    red = _one(runs, part="mimd-n", n_flows=8, scheme="red")
    assert red["end_ratio"] < eight["end_ratio"] / 2 and red["min_share"] > eight["min_share"] + 0.2, red


def test_claims_and_figures(rows, runs, tmp_path):
    from ccbench.studies.wei_ch3_mimd import claims
    from ccbench.studies.wei_ch3_mimd_plots import write_figures

    t = pd.DataFrame(claims(runs))
    assert {"Fig. 3.13", "Fig. 3.14", "Fig. 3.16", "Fig. 3.25", "Figs 3.12-3.22"} <= set(t["item"]), set(t["item"])
    assert set(t["agrees"]) <= {"yes", "no", ""}
    r = _one(t, quantity="paced Reno loses throughput (NTG paced - bursty)")
    assert r["agrees"] == "yes" and r["ours"] < 0
    hs = t[t["setting"].str.startswith("HS-TCP N = 8")]
    assert len(hs) == 1 and "Table 3.2: 0.25" in hs["note"].iloc[0], hs
    write_figures(tmp_path, runs, rows)
    for name in ("wei_ch3_mimd.png", "wei_ch3_convergence_cc.png", "wei_ch3_ntg.png"):
        assert (tmp_path / name).stat().st_size > 10_000, name


def test_scenario_rejects_an_unknown_part():
    from ccbench.studies.wei_ch3_mimd import scenario

    with pytest.raises(ValueError, match="part 'x'"):
        scenario("x", "droptail", 2, 10.0)
    d = scenario("ntg", "pecn-bursty", 4, 10.0, 0.5, cc="highspeed")
    tcp = d["flows"][0]["transport"]
    assert tcp["cc"] == "highspeed" and "pacing" not in tcp and tcp["ecn"]
    assert d["topology"]["bottleneck"]["queue"]["kind"] == "pecn" and len(d["flows"]) == 2
    m = scenario("mimd-n", "pacing", 8, 10.0)
    assert len(m["flows"]) == 1 and m["run"]["start_jitter"] == "1s" and m["flows"][0]["transport"]["pacing"] == "random"
