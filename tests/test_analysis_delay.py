"""ccbench.analysis.delay on hand-made packets tables (expected values by hand)."""

import numpy as np
import pandas as pd
import pytest

from ccbench.analysis import (
    AnalysisError,
    additional_queuing_delay,
    ccdf,
    decomposition_summary,
    delay_cdf,
    delay_components,
    delay_percentiles,
    ecdf,
    jitter,
    jitter_mean_abs_diff,
    jitter_rfc3550,
    late_fraction,
)

NAN = float("nan")


@pytest.fixture
def packets():
    # flow A: totals .06 .07 .11 and one lost message; flow B: totals .03 .04
    rows = [
        ("A", 2, 100, 0.04, 0.05, 0.15, 0.15),
        ("B", 0, 50, 0.00, 0.00, 0.03, 0.03),
        ("A", 0, 100, 0.00, 0.01, 0.06, 0.06),
        ("A", 3, 100, 0.06, 0.06, NAN, NAN),
        ("B", 1, 50, 0.02, 0.02, 0.06, 0.06),
        ("A", 1, 100, 0.02, 0.02, 0.07, 0.09),
    ]
    return pd.DataFrame(rows, columns=["flow", "msg", "bytes", "t_write", "t_first_tx", "t_arrive", "t_deliver"])


def test_components_sorted_and_additive(packets):
    c = delay_components(packets, "A")
    assert list(c["msg"]) == [0, 1, 2, 3]
    np.testing.assert_allclose(c["total_s"][:3], [0.06, 0.07, 0.11])
    np.testing.assert_allclose(c["sender_s"][:3], [0.01, 0.0, 0.01], atol=1e-12)
    np.testing.assert_allclose(c["network_s"][:3], [0.05, 0.05, 0.10])
    np.testing.assert_allclose(c["receiver_s"][:3], [0.0, 0.02, 0.0], atol=1e-12)
    assert np.isnan(c["total_s"][3]) and list(c["delivered"]) == [True, True, True, False]
    both = delay_components(packets)
    assert list(pd.unique(both["flow"])) == ["A", "B"]


def test_ecdf_ccdf():
    x, f = ecdf([3.0, 1.0, np.nan, 2.0])
    np.testing.assert_allclose(x, [1, 2, 3])
    np.testing.assert_allclose(f, [1 / 3, 2 / 3, 1])
    _, g = ccdf([3.0, 1.0, 2.0])
    np.testing.assert_allclose(g, [2 / 3, 1 / 3, 0], atol=1e-12)
    with pytest.raises(AnalysisError):
        ecdf([np.nan])


def test_delay_cdf(packets):
    d = delay_cdf(packets, "A")
    np.testing.assert_allclose(d["delay_s"], [0.06, 0.07, 0.11])
    np.testing.assert_allclose(d["cdf"], [1 / 3, 2 / 3, 1])
    np.testing.assert_allclose(d["ccdf"], [2 / 3, 1 / 3, 0], atol=1e-12)
    n = delay_cdf(packets, "A", component="network")
    np.testing.assert_allclose(n["delay_s"], [0.05, 0.05, 0.10])


def test_percentiles(packets):
    p = delay_percentiles(packets, q=(50, 95)).set_index("flow")
    assert p.loc["A", "n"] == 3
    assert p.loc["A", "p50_s"] == pytest.approx(0.07)
    assert p.loc["A", "p95_s"] == pytest.approx(0.07 + 0.9 * 0.04)  # linear, rank 1.9
    assert p.loc["A", "max_s"] == pytest.approx(0.11)
    assert p.loc["B", "p50_s"] == pytest.approx(0.035)
    inv = delay_percentiles(packets, q=(50,), flows="A", method="inverted_cdf")
    assert inv["p50_s"].iloc[0] == pytest.approx(0.07)
    with pytest.raises(AnalysisError):
        delay_percentiles(packets, q=(150,))


def test_rfc3550_by_hand():
    j = jitter_rfc3550([0.0, 0.02, 0.04], [0.06, 0.09, 0.15])  # transits .06 .07 .11
    j1 = 0.01 / 16
    j2 = j1 + (0.04 - j1) / 16
    np.testing.assert_allclose(j, [0.0, j1, j2])
    # arrival order, not send order: transit 2 arrives first, then transit 5
    assert jitter_rfc3550([0.0, 1.0], [5.0, 3.0])[-1] == pytest.approx(3 / 16)
    # lost packet (NaN) is skipped
    assert jitter_rfc3550([0.0, 0.5, 1.0], [1.0, np.nan, 2.5])[-1] == pytest.approx(0.5 / 16)
    with pytest.raises(AnalysisError):
        jitter_rfc3550([0.0], [1.0, 2.0])


def test_mean_abs_diff_and_jitter_table(packets):
    assert jitter_mean_abs_diff([0.06, 0.07, np.nan, 0.11]) == pytest.approx(0.025)
    with pytest.raises(AnalysisError):
        jitter_mean_abs_diff([1.0])
    j = jitter(packets).set_index("flow")
    assert j.loc["A", "mean_abs_diff_s"] == pytest.approx(0.025)
    assert j.loc["A", "std_s"] == pytest.approx(np.sqrt(0.0014 / 3))  # Brosh's σ_D
    assert j.loc["A", "rfc3550_s"] == pytest.approx(0.01 / 16 + (0.04 - 0.01 / 16) / 16)
    assert j.loc["B", "rfc3550_s"] == pytest.approx(0.01 / 16)


def test_late_fraction(packets):
    lf = late_fraction(packets, deadline_s=0.065)
    assert lf["A"] == pytest.approx(3 / 4)  # .07 and .11 late, the lost one counts as late
    assert lf["B"] == 0.0
    assert late_fraction(packets, 0.065, flows="A", lost_as_late=False)["A"] == pytest.approx(2 / 3)
    assert late_fraction(packets, 0.065, flows="A", written_before_s=0.05)["A"] == pytest.approx(2 / 3)
    assert late_fraction(packets, 0.2, flows="A")["A"] == pytest.approx(1 / 4)
    with pytest.raises(AnalysisError, match="deadline_s"):
        late_fraction(packets, deadline_s=-0.1)


def test_decomposition_summary(packets):
    s = decomposition_summary(packets, "A").set_index("component")
    assert s.loc["total", "mean_s"] == pytest.approx(0.08)
    assert s.loc["network", "mean_s"] == pytest.approx(0.2 / 3)
    assert s.loc["sender", "share"] == pytest.approx((0.02 / 3) / 0.08)
    assert s.loc["receiver", "share"] == pytest.approx((0.02 / 3) / 0.08)
    assert s.loc[["sender", "network", "receiver"], "share"].sum() == pytest.approx(1.0)
    assert s.loc["total", "n"] == 3


def test_additional_queuing_delay(packets):
    a = additional_queuing_delay(packets, flows="A")
    np.testing.assert_allclose(a["extra_s"], [0.0, 0.0, 0.05], atol=1e-12)
    b = additional_queuing_delay(packets, base_owd_s=0.04, flows="A")
    np.testing.assert_allclose(b["extra_s"], [0.01, 0.01, 0.06])


def test_errors(packets):
    with pytest.raises(AnalysisError, match=r"t_arrive.*required") as e:
        delay_components(packets.drop(columns=["t_arrive"]))
    assert isinstance(e.value, ValueError)
    with pytest.raises(AnalysisError, match="no rows for flow"):
        delay_percentiles(packets, flows="nope")
    with pytest.raises(AnalysisError, match="no rows"):
        delay_components(packets.iloc[0:0])
    lost_only = packets[packets["msg"] == 3]
    with pytest.raises(AnalysisError, match="no delivered"):
        delay_percentiles(lost_only)
    with pytest.raises(AnalysisError, match="component"):
        delay_cdf(packets, component="wire")
