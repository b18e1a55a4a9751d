"""ccbench.analysis.goodput on hand-made tables."""

import numpy as np
import pandas as pd
import pytest

from ccbench.analysis import (
    AnalysisError,
    delivered_rate_series,
    goodput_series,
    jain_index,
    normalized_throughput_gain,
)

NAN = float("nan")


def _packets():
    rows = [
        ("x", 0, 100, 0.1),
        ("x", 1, 200, 0.5),
        ("x", 2, 300, 1.2),
        ("x", 3, 400, 1.9),
        ("x", 4, 500, NAN),  # lost
        ("y", 0, 1000, 0.99),
    ]
    df = pd.DataFrame(rows, columns=["flow", "msg", "bytes", "t_deliver"])
    df["t_write"] = df["t_first_tx"] = df["t_arrive"] = 0.0
    return df


def test_goodput_series_bins():
    g = goodput_series(_packets(), bin_s=1.0)
    assert list(g.index) == [0.0, 1.0]
    np.testing.assert_allclose(g["x"], [8 * 300 / 1.0, 8 * 700 / 1.0])
    np.testing.assert_allclose(g["y"], [8000.0, 0.0])
    h = goodput_series(_packets(), bin_s=0.5, flows=["x"], t_end_s=2.0)
    assert list(h.columns) == ["x"]
    np.testing.assert_allclose(h["x"], [8 * 100 / 0.5, 8 * 200 / 0.5, 8 * 300 / 0.5, 8 * 400 / 0.5])


def test_goodput_delivery_at_end_edge_and_start_offset():
    p = _packets()
    p.loc[3, "t_deliver"] = 2.0
    g = goodput_series(p, bin_s=1.0, flows="x", t_end_s=2.0)
    np.testing.assert_allclose(g["x"], [2400.0, 5600.0])
    s = goodput_series(p, bin_s=1.0, flows="x", t_start_s=0.3, t_end_s=2.3)
    assert list(s.index) == [0.3, 1.3]
    np.testing.assert_allclose(s["x"], [8 * 500, 8 * 400])


def test_goodput_errors():
    with pytest.raises(AnalysisError, match="bin_s"):
        goodput_series(_packets(), bin_s=0)
    with pytest.raises(AnalysisError, match=r"\['bytes'\]"):
        goodput_series(_packets().drop(columns=["bytes"]), bin_s=1.0)
    with pytest.raises(AnalysisError, match="no rows for flow"):
        goodput_series(_packets(), bin_s=1.0, flows="z")


def test_delivered_rate_series_interpolates_counter():
    c = pd.DataFrame({"flow": ["f"] * 3, "t": [0.0, 1.0, 2.0], "delivered_pkts": [0, 10, 30]})
    r = delivered_rate_series(c, bin_s=1.0, pkt_bytes=1000)
    np.testing.assert_allclose(r["f"], [80_000.0, 160_000.0])
    h = delivered_rate_series(c, bin_s=0.5, pkt_bytes=1000)
    np.testing.assert_allclose(h["f"], [80_000.0, 80_000.0, 160_000.0, 160_000.0])


def test_jain_index():
    assert jain_index([5, 5, 5, 5]) == pytest.approx(1.0)
    assert jain_index([1, 0, 0, 0]) == pytest.approx(0.25)
    assert jain_index(pd.Series([1.0, 2.0, 3.0])) == pytest.approx(36 / 42)
    for bad in ([], [1, -1], [0, 0], [1, np.nan]):
        with pytest.raises(AnalysisError):
            jain_index(bad)


def test_normalized_throughput_gain():
    # fair share 10/4 = 2.5; the group's mean 5 -> gain 1
    assert normalized_throughput_gain([6e6, 4e6], 10e6, n_flows=4) == pytest.approx(1.0)
    assert normalized_throughput_gain(2e6, 10e6, n_flows=4) == pytest.approx(-0.2)
    assert normalized_throughput_gain([5.0, 5.0], 10.0) == pytest.approx(0.0)
    with pytest.raises(AnalysisError, match="n_flows"):
        normalized_throughput_gain([1.0, 2.0, 3.0], 10.0, n_flows=2)
    with pytest.raises(AnalysisError, match="capacity_bps"):
        normalized_throughput_gain([1.0], -1.0)
