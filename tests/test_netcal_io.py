"""Input validation: CSV/DataFrame probe format, clear NetcalError messages."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.netcal import (
    NetcalError,
    PROBE_COLUMNS,
    estimate_from_file,
    estimate_from_frame,
    load_probe_csv,
    load_trace_csv,
    validate_probe_frame,
    validate_timestamp_frame,
)


def probe_df(rates=(1e6, 2e6, 3e6), n=2500, seed=0, overload_from=3e6):
    rng = np.random.default_rng(seed)
    parts = []
    for r in rates:
        t = np.arange(n) * 12_000 / r
        if r >= overload_from:
            d = 0.01 + 0.5 * t / t[-1] + 0.001 * rng.random(n)
        else:
            d = 0.01 + 0.002 * rng.random(n)
        parts.append(pd.DataFrame({"rate_bps": r, "seq": np.arange(n), "bytes": 1500,
                                   "t_send_s": t, "t_recv_s": t + d}))
    return pd.concat(parts, ignore_index=True)


def test_frame_and_csv_give_the_same_estimate(tmp_path):
    df = probe_df()
    est = estimate_from_frame(df, xi=0.05, r_acc_bps=1e6)
    np.testing.assert_allclose(est.rates_bps, [1e6, 2e6])
    assert est.eps == pytest.approx(0.1)
    path = tmp_path / "probe.csv"
    df.sample(frac=1.0, random_state=1).to_csv(path, index=False)  # row order does not matter
    est2 = estimate_from_file(path, xi=0.05, r_acc_bps=1e6)
    np.testing.assert_allclose(est2.delay_quantiles_s, est.delay_quantiles_s)
    clean = load_probe_csv(path)
    assert list(clean.columns) == list(PROBE_COLUMNS) + ["delay_s"]
    assert clean["rate_bps"].is_monotonic_increasing


def test_missing_columns_are_named_and_required_listed():
    df = probe_df().drop(columns=["t_recv_s", "bytes"])
    with pytest.raises(NetcalError) as exc:
        validate_probe_frame(df)
    msg = str(exc.value)
    assert "missing column(s) bytes, t_recv_s" in msg
    assert "required columns are rate_bps, seq, bytes, t_send_s, t_recv_s" in msg
    assert isinstance(exc.value, ValueError)


def test_unsorted_timestamps():
    df = probe_df()
    i = df.index[(df["rate_bps"] == 2e6) & (df["seq"] == 100)][0]
    df.loc[i, "t_send_s"] = 0.0
    with pytest.raises(NetcalError, match=r"unsorted timestamps: t_send_s decreases at seq 100 of the train at rate 2e\+06"):
        validate_probe_frame(df)


def test_xi_outside_unit_interval():
    for xi in (0.0, 1.0, 2.0, -0.5):
        with pytest.raises(NetcalError, match=r"xi must lie in the open interval \(0, 1\)"):
            estimate_from_frame(probe_df(), xi=xi)


def test_no_stationary_rate_at_all():
    with pytest.raises(NetcalError, match="no probe rate showed a stationary"):
        estimate_from_frame(probe_df(overload_from=0.0), xi=0.05)


def test_other_bad_inputs(tmp_path):
    df = probe_df()
    with pytest.raises(NetcalError, match="no such file"):
        load_probe_csv(tmp_path / "nope.csv")
    bad = tmp_path / "bad.csv"
    bad.write_text("")
    with pytest.raises(NetcalError, match="cannot parse"):
        load_probe_csv(bad)
    d = df.copy()
    d["seq"] = d["seq"].astype(object)
    d.loc[3, "seq"] = "x"
    with pytest.raises(NetcalError, match="non-numeric"):
        validate_probe_frame(d)
    d = df.copy()
    d.loc[5, "t_recv_s"] = d.loc[5, "t_send_s"] - 1.0
    with pytest.raises(NetcalError, match="negative delay"):
        validate_probe_frame(d)
    d = df.copy()
    d.loc[5, "seq"] = 4
    with pytest.raises(NetcalError, match="duplicate seq 4"):
        validate_probe_frame(d)
    d = df.copy()
    d.loc[5, "t_recv_s"] = np.nan
    with pytest.raises(NetcalError, match="in-order"):
        validate_probe_frame(d)
    with pytest.raises(NetcalError, match="rate_bps must be positive"):
        validate_probe_frame(df.assign(rate_bps=-1.0))
    with pytest.raises(NetcalError, match="DataFrame"):
        validate_probe_frame([1, 2, 3])
    with pytest.raises(NetcalError, match="expected 500000 bit/s at step 1, found 1e\\+06"):
        estimate_from_frame(df, xi=0.05, r_acc_bps=0.5e6)


def test_trailing_undelivered_packets_are_cut():
    df = probe_df()
    last = df.index[(df["rate_bps"] == 1e6) & (df["seq"] >= 2490)]
    df.loc[last, "t_recv_s"] = np.nan
    clean = validate_probe_frame(df)
    assert (clean["rate_bps"] == 1e6).sum() == 2490
    assert clean["delay_s"].notna().all()


def test_timestamp_and_trace_validation(tmp_path):
    ok = pd.DataFrame({"t_write": [0.0, 1.0], "t_first_tx": [0.1, 1.0], "t_arrive": [0.2, 1.5], "t_deliver": [0.3, np.nan]})
    assert len(validate_timestamp_frame(ok)) == 1  # never-delivered row dropped
    with pytest.raises(NetcalError, match="t_arrive < t_first_tx"):
        validate_timestamp_frame(ok.assign(t_arrive=[0.05, 1.5]))
    with pytest.raises(NetcalError, match="missing column.*t_deliver"):
        validate_timestamp_frame(ok.drop(columns="t_deliver"))
    p = tmp_path / "trace.csv"
    pd.DataFrame({"t_s": [0.0, 0.2, 0.1], "bytes": [1, 2, 3]}).to_csv(p, index=False)
    with pytest.raises(NetcalError, match="unsorted timestamps: t_s decreases at row 2"):
        load_trace_csv(p)
