"""Brosh et al. studies (issue 5): Table 3 (drop-tail, VoIP over TCP) and the split-N /
parallel-connection schemes, much reduced. Each test prints our numbers next to the
paper's (run with ``-s`` to see them)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import needs_core

pytestmark = needs_core


@pytest.fixture(scope="module")
def table3():
    from ccbench.studies import brosh_droptail as bd

    # 60 s of VoIP per run, seeds 1-8 (the study's reduced size is 60 s x 1 seed; with two
    # seeds, and again with four, the p95 at 10 and 15 web flows swapped places with a
    # simulator change: one seed's p95 of a 60 s run moves by 20 %; eight keep the order
    # for seeds 1-8 and 3-10 alike).
    return bd.table(bd.WEB_FLOWS, ("packet", "byte"), measure_s=60.0, seeds=tuple(range(1, 9)))


def test_table3_has_every_row_and_prints_next_to_paper(table3):
    from ccbench.studies import brosh_droptail as bd

    df = table3
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("\nBrosh Table 3 (VoIP), ours (60 s x 8 seeds) vs paper:")
        print(df[["queue", "web_flows"] + [c for k in bd.METRICS for c in (k, f"{k}_paper")]].round(3).to_string(index=False))
    for q in ("packet", "byte"):
        assert sorted(df.loc[df["queue"] == q, "web_flows"]) == list(bd.WEB_FLOWS)
    for k in bd.METRICS:
        assert np.isfinite(df[k]).all(), k
        assert np.isfinite(df[f"{k}_paper"]).all(), k
    # Physical floors: RTT at least the 100 ms propagation; delay at least one-way 50 ms.
    assert (df["rtt_s"] >= 0.1).all()
    assert (df["p95_s"] >= 0.05).all()
    # The queue kinds: a 100-packet queue holds up to 150 kB (400 ms at 3 Mbit/s), the
    # byte queue 50 kB (133 ms): RTT with the packet queue is larger at every N.
    pk = df[df["queue"] == "packet"].set_index("web_flows")
    by = df[df["queue"] == "byte"].set_index("web_flows")
    assert (pk["rtt_s"] > by["rtt_s"]).all()


@pytest.mark.parametrize("queue", ["packet", "byte"])
def test_table3_loss_and_delay_grow_with_web_flows(table3, queue):
    g = table3[table3["queue"] == queue].sort_values("web_flows")
    for k in ("loss_pct", "p95_s"):
        v = g[k].to_numpy()
        # Non-decreasing step by step (10 % slack for seed noise), and clearly up overall.
        assert np.all(v[1:] >= 0.9 * v[:-1]), (k, v)
        assert v[-1] > 1.5 * v[0], (k, v)
        # The paper's column grows too (a check of the transcription).
        p = g[f"{k}_paper"].to_numpy()
        assert np.all(np.diff(p) > 0)


@pytest.fixture(scope="module")
def split_table():
    from ccbench.studies import brosh_split_random as bs

    summ, per = bs.table(bs.REQUIRED, measure_s=300.0, seeds=(1, 2, 3, 4, 5))
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("\nBrosh split-N / parallel connections, 573 kbit/s video, 1% loss, 100 ms RTT (300 s x 5 seeds):")
        print(summ.drop(columns=["paper_source"]).round(3).to_string(index=False))
    return summ.set_index("variant")


def test_split_runs_are_sane(split_table):
    s = split_table
    # 1 % Bernoulli loss on the data direction: measured segment loss near 1 %.
    assert s["loss_pct"].between(0.7, 1.3).all()
    # Every message written is delivered; the median is the propagation delay (50 ms)
    # plus transmission: most messages see no loss at all.
    assert np.isfinite(s["p95_s"]).all()
    assert s["p50_s"].between(0.05, 0.06).all()


@pytest.mark.parametrize("variant", ["split-2", "par-5-rr"])
def test_scheme_lowers_p95_vs_one_connection(split_table, variant):
    s = split_table
    red = s.loc[variant, "reduction_pct"]
    print(f"\n{variant}: 95th percentile {s.loc[variant, 'p95_s'] * 1000:.1f} ms vs one connection "
          f"{s.loc['single', 'p95_s'] * 1000:.1f} ms: {red:+.1f}% reduction "
          f"(paper: model {s.loc[variant, 'paper_reduction_model_pct']:.0f}%, "
          f"experiment {s.loc[variant, 'paper_reduction_experiment_pct']:.0f}%)")
    assert s.loc[variant, "p95_s"] < s.loc["single", "p95_s"]


def test_least_backlog_5_lowers_p95_vs_one_connection(split_table):
    # With the 2.6-era media stack (no TLP, per-ACK counting) the single connection builds
    # a backlog after each loss, and 5 least-backlog connections lower the percentile
    # (with today's Linux stack, TLP and packet counting, they raised it by 17 %).
    s = split_table
    print(f"\npar-5-lb: {s.loc['par-5-lb', 'reduction_pct']:+.1f}% reduction "
          f"(no-HOL delay: {s.loc['par-5-lb', 'reduction_nohol_pct']:+.1f}%)")
    assert s.loc["par-5-lb", "p95_s"] < s.loc["single", "p95_s"]


def test_parallel_connections_remove_loss_delay_without_merge(split_table):
    # Without head-of-line blocking (t_arrive), spreading the stream over 5 connections
    # removes most of the loss-recovery tail: the 95th percentile falls by more than half.
    s = split_table
    for v in ("par-5-rr", "par-5-lb"):
        assert s.loc[v, "reduction_nohol_pct"] > 50, v
