"""ccbench.analysis.window on hand-made cwnd and transfer tables."""

import numpy as np
import pandas as pd
import pytest

from ccbench.analysis import (
    AnalysisError,
    autocorrelation,
    cwnd_autocorrelation,
    resample_hold,
    transfer_time_stats,
    transfers_from_flows,
)


def test_resample_hold():
    g, v = resample_hold([1.0, 0.0, 0.25], [3, 1, 2], grid_s=0.5)
    np.testing.assert_allclose(g, [0.0, 0.5, 1.0])
    np.testing.assert_allclose(v, [1, 2, 3])
    g, v = resample_hold([0.0, 2.0], [1, 3], grid_s=1.0, t_end_s=3.0)
    np.testing.assert_allclose(v, [1, 1, 3, 3])
    with pytest.raises(AnalysisError, match="before the first sample"):
        resample_hold([1.0, 2.0], [1, 2], 0.5, t_start_s=0.0)


def test_autocorrelation_by_hand():
    # mean 2.5, deviations -1.5 -.5 .5 1.5, variance 1.25
    a = autocorrelation([1, 2, 3, 4], max_lag_samples=2)
    np.testing.assert_allclose(a, [1.0, (1.25 / 3) / 1.25, -0.75 / 1.25])
    np.testing.assert_allclose(autocorrelation([1, -1] * 5, 2), [1, -1, 1])
    with pytest.raises(AnalysisError, match="constant"):
        autocorrelation([2, 2, 2], 1)
    with pytest.raises(AnalysisError, match="samples"):
        autocorrelation([1, 2], 2)


def _cwnd():
    return pd.DataFrame({
        "flow": ["f", "f", "g", "g", "g", "g"],
        "t": [0.0, 2.0, 0.0, 1.0, 2.0, 3.0],
        "cwnd_pkts": [1.0, 3.0, 1.0, 2.0, 3.0, 4.0],
    })


def test_cwnd_autocorrelation():
    g = cwnd_autocorrelation(_cwnd(), "g", grid_s=1.0, max_lag_s=2.0)
    np.testing.assert_allclose(g["lag_s"], [0, 1, 2])
    np.testing.assert_allclose(g["acf"], [1.0, 1 / 3, -0.6])
    # samples on change only: held values 1 1 3 3 on the grid -> lags 1/3 and -1
    f = cwnd_autocorrelation(_cwnd(), "f", grid_s=1.0, max_lag_s=2.0, t_end_s=3.0)
    np.testing.assert_allclose(f["acf"], [1.0, 1 / 3, -1.0])
    with pytest.raises(AnalysisError, match="multiple"):
        cwnd_autocorrelation(_cwnd(), "g", grid_s=1.0, max_lag_s=1.5)
    with pytest.raises(AnalysisError, match=r"\['flow', 't', 'cwnd_pkts'\]"):
        cwnd_autocorrelation(_cwnd().drop(columns=["cwnd_pkts"]), "g", 1.0, 1.0)
    with pytest.raises(AnalysisError, match="no rows for flow"):
        cwnd_autocorrelation(_cwnd(), "h", 1.0, 1.0)


def test_transfer_time_stats():
    tr = pd.DataFrame({"size_bytes": [1000, 2000, 1000, 2000, 1000], "transfer_s": [1.0, 4.0, 2.0, 6.0, 3.0]})
    s = transfer_time_stats(tr)
    assert list(s["size"]) == [1000, 2000]
    assert list(s["n"]) == [3, 2]
    np.testing.assert_allclose(s["mean_s"], [2.0, 5.0])
    np.testing.assert_allclose(s["var_s"], [1.0, 2.0])
    np.testing.assert_allclose(s["std_s"], [1.0, np.sqrt(2.0)])
    pop = transfer_time_stats(tr, ddof=0)
    np.testing.assert_allclose(pop["var_s"], [2 / 3, 1.0])
    one = transfer_time_stats(tr.iloc[[0, 1, 2]])
    assert np.isnan(one.loc[one["size"] == 2000, "var_s"]).all()
    with pytest.raises(AnalysisError, match="finite"):
        transfer_time_stats(pd.DataFrame({"size_bytes": [1], "transfer_s": [np.nan]}))
    with pytest.raises(AnalysisError, match="no rows"):
        transfer_time_stats(tr.iloc[0:0])


def test_transfers_from_flows():
    flows = pd.DataFrame({"flow": ["a", "b", "c"], "bytes_delivered": [100, 100, 50],
                          "completion_s": [1.5, np.nan, 0.5]})
    t = transfers_from_flows(flows)
    assert list(t["flow"]) == ["a", "c"]
    assert list(t["size_bytes"]) == [100, 50]
    np.testing.assert_allclose(t["transfer_s"], [1.5, 0.5])
