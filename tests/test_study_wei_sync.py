"""End-to-end check of the Wei loss-synchronisation study (issue 4), much reduced.

Reno only, 16 flows + 50 UDP on/off noise flows on 100 Mbit/s / 200 ms, 4 seeds of 250 s
per scheme (first 30 s discarded). The thesis (Table 3.2, Reno): DropTail 0.20, randomized
pacing 0.50, Persistent ECN 0.97. We check the qualitative facts, not the numbers:
λ in (0, 1]; pacing raises λ over bursty TCP; Persistent ECN raises it further, close to 1.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import needs_core

pytestmark = needs_core

N_FLOWS = 16
SEEDS = (1, 2, 3, 4)
DURATION_S = 250.0
WARMUP_S = 30.0


@pytest.fixture(scope="module")
def reno_runs() -> pd.DataFrame:
    from ccbench.studies import wei_sync as w

    jobs = [("reno", sc, N_FLOWS, s, DURATION_S, WARMUP_S) for sc in ("droptail", "pacing", "pecn") for s in SEEDS]
    return w.run_all(jobs, workers=1)


@pytest.fixture(scope="module")
def table(reno_runs) -> pd.DataFrame:
    from ccbench.studies import wei_sync as w

    t = w.summarize(reno_runs)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print("\nWei loss synchronisation, Reno, much-reduced size (ours vs thesis Table 3.2):")
        print(t.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        print(reno_runs[["scheme", "seed", "sync", "events", "drops", "marks", "tcp_goodput_mbps", "wall_s"]]
              .to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    return t


def _mean(runs: pd.DataFrame, scheme: str) -> float:
    return float(runs.loc[runs["scheme"] == scheme, "sync"].mean())


def test_sync_rate_is_a_probability_and_every_run_has_events(reno_runs, table):
    assert len(reno_runs) == 3 * len(SEEDS)
    sync = reno_runs["sync"].to_numpy(dtype=float)
    assert np.isfinite(sync).all(), reno_runs
    assert ((sync > 0) & (sync <= 1)).all(), reno_runs
    # enough loss events after the warm-up for a rate to mean something
    assert (reno_runs["events"] >= 10).all(), reno_runs[["scheme", "seed", "events"]]
    # the noise takes ~10 % and the TCP flows most of the rest under DropTail
    dt = reno_runs[reno_runs["scheme"] == "droptail"]
    assert (dt["tcp_goodput_mbps"] > 75).all(), dt


def test_bursty_droptail_is_far_from_synchronised(reno_runs, table):
    # Wei's point: sub-RTT-bursty TCP samples a bursty DropTail loss process, so only a
    # fraction of the flows sees each loss event (thesis 0.20; we get about 0.45)
    assert _mean(reno_runs, "droptail") < 0.7


def test_randomized_pacing_raises_sync_for_reno(reno_runs, table):
    # thesis: 0.204 -> 0.501
    assert _mean(reno_runs, "pacing") > _mean(reno_runs, "droptail")


def test_persistent_ecn_raises_sync_further(reno_runs, table):
    # thesis: 0.966, above pacing's 0.501
    pecn = _mean(reno_runs, "pecn")
    assert pecn > _mean(reno_runs, "pacing")
    assert pecn > 0.9
    assert (reno_runs.loc[reno_runs["scheme"] == "pecn", "marks"] > 0).all()


def test_table_and_plot_files(reno_runs, table, tmp_path):
    from ccbench.studies import wei_sync as w

    assert list(table["paper"].round(3)) == [0.204, 0.501, 0.966]
    w.plot(table, tmp_path / "wei_sync.png")
    png = (tmp_path / "wei_sync.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000


# --- issue 21: why RED comes out less synchronised than DropTail for Reno -------------------
# The RED row of Table 3.2 depends on max_p adaptation: with the study's adaptive RED
# (Linux red_adaptative_algo) Reno is *less* synchronised than under DropTail (ours ~0.32
# vs ~0.44), with ns-2's automatic parameters and a fixed max_p (q_weight_ = -1) it is
# *more* (~0.58, thesis 0.60). docs/REPRODUCTIONS.md, "Why DropTail and RED differ".


@pytest.fixture(scope="module")
def red_runs() -> pd.DataFrame:
    from ccbench.studies import wei_sync as w

    jobs = [
        ("reno", sc, N_FLOWS, s, 200.0, 40.0, red)
        for s in (1, 2, 3)
        for sc, red in (("droptail", "adaptive"), ("red", "adaptive"), ("red", "ns2-fixed"))
    ]
    runs = w.run_all(jobs, workers=1)
    runs["red"] = [j[6] for j in jobs]
    return runs


def test_red_synchronisation_depends_on_max_p_adaptation(red_runs):
    r = red_runs
    dt = float(r.loc[r["scheme"] == "droptail", "sync"].mean())
    adaptive = float(r.loc[(r["scheme"] == "red") & (r["red"] == "adaptive"), "sync"].mean())
    fixed = float(r.loc[(r["scheme"] == "red") & (r["red"] == "ns2-fixed"), "sync"].mean())
    # adaptive RED: less synchronised than DropTail (the reversed result of issue 21)
    assert adaptive < dt - 0.05, (adaptive, dt)
    # ns-2 automatic RED with fixed max_p: more synchronised than DropTail, as the thesis finds
    assert fixed > dt + 0.05, (fixed, dt)
    # and RED with thresholds of a few dozen packets on a 1667-packet BDP leaves the link
    # underused in both variants (DropTail's TCP goodput is ~86 Mbit/s)
    red = r[r["scheme"] == "red"]
    assert (red["tcp_goodput_mbps"] < 75).all(), red[["red", "seed", "tcp_goodput_mbps"]]


def test_red_mode_is_checked():
    from ccbench.studies import wei_sync as w

    with pytest.raises(ValueError, match="red 'ns3' is not one of"):
        w.scenario_dict("reno", "red", 16, 10.0, red="ns3")
    q = w.scenario_dict("reno", "red", 16, 10.0, red="ns2-fixed")["topology"]["bottleneck"]["queue"]
    assert q["adaptive"] is False and q["w_q"] < 1e-4


def test_hypothesis_note_is_in_the_summary_and_the_doc():
    from pathlib import Path

    from ccbench.studies.summary_notes import NOTES
    from ccbench.studies.wei_sync_notes import HYPOTHESES_MD

    text = NOTES["wei"](Path("no-such-results-dir"))
    assert text.startswith("### Why DropTail and RED differ: hypotheses tested")
    doc = (Path(__file__).resolve().parents[1] / "docs" / "REPRODUCTIONS.md").read_text()
    assert HYPOTHESES_MD in doc  # the generated page carries the note verbatim


def test_hypothesis_script_runs_a_row():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "wei_sync_hypotheses.py"
    spec = importlib.util.spec_from_file_location("wei_sync_hypotheses", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = mod.run_row("red-ns2-fixed", [1], 16, 120.0, 30.0)
    assert len(r) == 1 and r["scheme"].iloc[0] == "red" and 0 < r["sync"].iloc[0] <= 1
