"""ccbench.analysis.losses on hand-made drops tables and loss-time arrays."""

import numpy as np
import pandas as pd
import pytest

from ccbench.analysis import (
    AnalysisError,
    LossBurstiness,
    fairness_convergence_time,
    label_loss_events,
    loss_burstiness,
    loss_events,
    loss_intervals_rtt,
    loss_sync_rate,
    plot_loss_burstiness,
)


@pytest.fixture
def drops():
    rows = [  # deliberately not in time order
        (0.40, "B", "drop"),
        (0.00, "A", "drop"),
        (0.02, "B", "drop"),
        (0.09, "A", "drop"),
        (0.12, "C", "drop"),
        (0.35, "A", "drop"),
        (0.60, "D", "mark"),
        (0.52, "B", "drop"),
        (1.00, "C", "drop"),
    ]
    df = pd.DataFrame(rows, columns=["t", "flow", "kind"])
    df["link"] = "bn"
    df["seq"] = np.arange(len(df))
    df["reason"] = np.where(df["kind"] == "mark", "persistent", "overflow")
    return df[["link", "t", "flow", "seq", "kind", "reason"]]


def test_window_segmentation_wei(drops):
    ev = loss_events(drops, rtt_s=0.1)
    # events start at 0.00 (A,B,A), 0.12 (C), 0.35 (A,B), 0.52 (B), 1.00 (C)
    np.testing.assert_allclose(ev["t_start"], [0.0, 0.12, 0.35, 0.52, 1.0])
    assert list(ev["n_losses"]) == [3, 1, 2, 1, 1]
    assert list(ev["flows"]) == [("A", "B"), ("C",), ("A", "B"), ("B",), ("C",)]
    lab = label_loss_events(drops, rtt_s=0.1)
    assert list(lab["event"]) == [0, 0, 0, 1, 2, 2, 3, 4]


def test_gap_segmentation(drops):
    ev = loss_events(drops, rtt_s=0.1, mode="gap")
    # gaps .02 .07 .03 chain 0.00..0.12 into one event longer than one RTT
    assert list(ev["n_losses"]) == [4, 2, 1, 1]
    assert ev["t_end"].iloc[0] == pytest.approx(0.12)
    with pytest.raises(AnalysisError, match="mode"):
        loss_events(drops, 0.1, mode="burst")


def test_per_flow_events(drops):
    ev = loss_events(drops, rtt_s=0.1, per_flow=True)
    # A: {0.00, 0.09}, {0.35}; B: {0.02}, {0.40}, {0.52}; C: {0.12}, {1.00}
    assert len(ev) == 7
    assert ev.groupby(ev["flows"].str[0]).size().to_dict() == {"A": 2, "B": 3, "C": 2}
    assert list(ev["event"]) == list(range(7)) and ev["t_start"].is_monotonic_increasing
    ev2 = loss_events(drops, rtt_s={"A": 0.05, "B": 0.1, "C": 0.1}, per_flow=True)
    assert (ev2["flows"].str[0] == "A").sum() == 3
    with pytest.raises(AnalysisError, match="no RTT given"):
        loss_events(drops, rtt_s={"A": 0.05}, per_flow=True)


def test_sync_rate(drops):
    s = loss_sync_rate(drops, rtt_s=0.1, flows=["A", "B", "C", "D"])
    assert s.n_events == 5
    assert s.per_flow.to_dict() == pytest.approx({"A": 0.4, "B": 0.6, "C": 0.4, "D": 0.0})
    assert s.rate == pytest.approx(0.35)
    # default flows: only those that lost something
    assert loss_sync_rate(drops, 0.1).rate == pytest.approx(1.4 / 3)
    # with ECN marks as the signal, D's mark at 0.60 falls in the event started at 0.52
    m = loss_sync_rate(drops, 0.1, flows=["A", "B", "C", "D"], kinds=("drop", "mark"))
    assert m.per_flow["D"] == pytest.approx(0.2) and m.n_events == 5
    with pytest.raises(AnalysisError, match="not in flows"):
        loss_sync_rate(drops, 0.1, flows=["A", "B"])
    with pytest.raises(AnalysisError, match="no losses"):
        loss_sync_rate(drops, 0.1, link="other")
    with pytest.raises(AnalysisError, match=r"missing column.*'kind'"):
        loss_sync_rate(drops.drop(columns=["kind"]), 0.1)
    with pytest.raises(AnalysisError, match="rtt_s"):
        loss_sync_rate(drops, -0.1)


def _rates(a, b, t0=0.0):
    return pd.DataFrame({"a": a, "b": b}, index=t0 + np.arange(len(a), dtype=float))


def test_fairness_convergence_exact_crossing():
    # c = 10, N = 2, threshold 0.8 -> x̄ must exceed 4. b's running mean at bin ends:
    # 0, 1, 8/3, 3.5 (violation at τ=4), 4.2, 4.67. In bin 5 (rate 7):
    # (14 + 7(τ-4)) / τ = 4  ->  τ = 14/3.
    F = fairness_convergence_time(_rates([8] * 6, [0, 2, 6, 6, 7, 7]), capacity_bps=10)
    assert F == pytest.approx(14 / 3)
    # same series shifted in time: F counts from the first bin start
    assert fairness_convergence_time(_rates([8] * 6, [0, 2, 6, 6, 7, 7], t0=10.0), 10) == pytest.approx(14 / 3)
    # fair from the start
    assert fairness_convergence_time(_rates([5, 5], [5, 5]), 10) == 0.0
    # a falls back to 4 exactly at the end: not converged
    assert fairness_convergence_time(_rates([8, 8, 8, 0, 0, 0], [8] * 6), 10) == float("inf")
    # threshold is a parameter: at 0.5 (x̄ > 2.5) last violation at τ=2 (x̄_b = 1), then (2 + 6(τ-2))/τ = 2.5
    assert fairness_convergence_time(_rates([8] * 6, [0, 2, 6, 6, 7, 7]), 10, threshold=0.5) == pytest.approx(10 / 3.5)


def test_fairness_convergence_errors():
    r = _rates([8, 8, 8], [1, 2, 3])
    with pytest.raises(AnalysisError, match="equal width"):
        fairness_convergence_time(r.set_axis([0.0, 1.0, 3.0]), 10)
    with pytest.raises(AnalysisError, match="bin_s"):
        fairness_convergence_time(r.iloc[:1], 10)
    assert fairness_convergence_time(r.iloc[:1], 10, bin_s=1.0) == float("inf")
    with pytest.raises(AnalysisError, match="n_flows"):
        fairness_convergence_time(r, 10, n_flows=1)
    with pytest.raises(AnalysisError):
        fairness_convergence_time(r.iloc[0:0], 10)


def test_intervals_from_array_and_drops(drops):
    t = [1.2, 0.0, 0.0004, 0.0010, 0.05, 0.2]
    np.testing.assert_allclose(loss_intervals_rtt(t, 0.1), [0.004, 0.006, 0.49, 1.5, 10.0])
    np.testing.assert_allclose(loss_intervals_rtt(drops, 0.1), np.array([0.02, 0.07, 0.03, 0.23, 0.05, 0.12, 0.48]) / 0.1)
    per = loss_intervals_rtt(drops, 0.1, per_flow=True)
    np.testing.assert_allclose(np.sort(per), np.sort([0.9, 2.6, 3.8, 1.2, 8.8]))
    with pytest.raises(AnalysisError):
        loss_intervals_rtt(t, 0.1, per_flow=True)


def test_burstiness_by_hand():
    r = loss_burstiness([0.0, 0.0004, 0.0010, 0.05, 0.2, 1.2], rtt_s=0.1, label="hand")
    assert r.n_intervals == 5
    assert r.rate_per_rtt == pytest.approx(1 / 2.4)
    assert r.frac_within[0.01] == pytest.approx(0.4)
    assert r.frac_within[1.0] == pytest.approx(0.6)
    assert r.poisson_within[0.01] == pytest.approx(1 - np.exp(-0.01 / 2.4))
    assert r.poisson_within[1.0] == pytest.approx(1 - np.exp(-1 / 2.4))
    c = r.cdf([0.005, 0.5, 20.0])
    np.testing.assert_allclose(c["empirical"], [0.2, 0.6, 1.0])
    np.testing.assert_allclose(c["poisson"], 1 - np.exp(-np.array([0.005, 0.5, 20.0]) / 2.4))
    p = r.pdf([0.001, 0.01, 0.1, 1, 10, 100])
    np.testing.assert_allclose(p["empirical"], np.array([2, 0, 1, 1, 1]) / (5 * np.diff([0.001, 0.01, 0.1, 1, 10, 100])))
    mu = 1 / 2.4
    assert p["poisson"].iloc[2] == pytest.approx((np.exp(-mu * 0.1) - np.exp(-mu * 1)) / 0.9)


def test_poisson_process_is_not_bursty():
    rng = np.random.default_rng(7)
    rtt = 0.05
    t = np.cumsum(rng.exponential(0.5 * rtt, size=20000))  # 2 losses per RTT
    r = loss_burstiness(t, rtt_s=rtt)
    assert r.rate_per_rtt == pytest.approx(2.0, rel=0.03)
    for x in (0.01, 1.0):
        assert r.frac_within[x] == pytest.approx(r.poisson_within[x], abs=0.01)
    # a bursty process (clusters of 5 losses 0.1 ms apart) is far above Poisson at 1% RTT
    starts = np.cumsum(rng.exponential(2 * rtt, size=2000))
    b = loss_burstiness((starts[:, None] + 1e-4 * np.arange(5)).ravel(), rtt_s=rtt)
    assert b.frac_within[0.01] == pytest.approx(0.8, abs=0.01)
    assert b.poisson_within[0.01] < 0.05


def test_burstiness_errors():
    with pytest.raises(AnalysisError, match="at least 2 losses"):
        loss_burstiness([1.0], 0.1)
    with pytest.raises(AnalysisError, match="same instant"):
        loss_burstiness([1.0, 1.0], 0.1)
    with pytest.raises(AnalysisError, match="rtt_s"):
        loss_burstiness([1.0, 2.0], 0.0)


def test_plot(tmp_path):
    r = loss_burstiness([0.0, 0.0004, 0.0010, 0.05, 0.2, 1.2], rtt_s=0.1, label="hand")
    for name in ("b.png", "b.svg"):
        fig = plot_loss_burstiness([r, LossBurstiness(np.array([0.5, 1.5]), 1.0, label="other")], tmp_path / name)
        assert (tmp_path / name).stat().st_size > 1000
        assert len(fig.axes) == 2
    with pytest.raises(AnalysisError, match="png or .svg"):
        plot_loss_burstiness(r, tmp_path / "b.pdf")
