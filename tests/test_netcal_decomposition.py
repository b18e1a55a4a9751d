"""Delay decomposition from four timestamps; CCDFs; P[sender-stack buffering]."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ccbench.netcal import (
    buffering_vs_utilisation,
    ccdf,
    component_ccdfs,
    delay_components,
    sender_buffering_probability,
)


def records(rate, n, p_buf, rng):
    t_write = np.arange(n) * 0.01
    snd = np.where(rng.random(n) < p_buf, rng.exponential(0.05, n) + 1e-6, 0.0)
    net = 0.01 + rng.uniform(0, 0.02, n)
    rcv = np.where(rng.random(n) < 0.02, rng.exponential(0.03, n), 0.0)
    t1 = t_write + snd
    t2 = t1 + net
    t3 = t2 + rcv
    return pd.DataFrame({"t_write": t_write, "t_first_tx": t1, "t_arrive": t2, "t_deliver": t3,
                         "rate_bps": rate}), snd, net, rcv


def test_components_are_the_timestamp_differences():
    rng = np.random.default_rng(0)
    df, snd, net, rcv = records(5e6, 2000, 0.3, rng)
    comp = delay_components(df)
    np.testing.assert_allclose(comp["sender"], snd, atol=1e-12)
    np.testing.assert_allclose(comp["network"], net, atol=1e-12)
    np.testing.assert_allclose(comp["receiver"], rcv, atol=1e-12)
    np.testing.assert_allclose(comp["e2e"], snd + net + rcv, atol=1e-12)
    assert sender_buffering_probability(df) == pytest.approx(np.mean(snd > 0))
    assert sender_buffering_probability(df, threshold_s=0.05) == pytest.approx(np.mean(snd > 0.05))


def test_ccdf_values():
    x, p = ccdf([3.0, 1.0, 2.0, 2.0])
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(p, [0.75, 0.25, 0.0])
    rng = np.random.default_rng(1)
    df, *_ = records(5e6, 3000, 0.3, rng)
    c = component_ccdfs(df)
    assert set(c) == {"e2e", "sender", "network", "receiver"}
    xs, ps = c["sender"]
    # P[Δ_snd > 0] is the buffering probability: the CCDF's value at x = 0
    assert ps[0] == pytest.approx(sender_buffering_probability(df))
    xn, pn = c["network"]
    assert xn.min() >= 0.01 and xn.max() <= 0.03 and np.all(np.diff(pn) <= 0)


def test_buffering_against_utilisation():
    rng = np.random.default_rng(2)
    parts = [records(r, 4000, pb, rng)[0] for r, pb in ((1e6, 0.05), (5e6, 0.3), (9e6, 0.9))]
    table = buffering_vs_utilisation(pd.concat(parts, ignore_index=True), 9.4e6)
    np.testing.assert_allclose(table["utilisation"], np.array([1, 5, 9]) / 9.4)
    np.testing.assert_allclose(table["p_buffering"], [0.05, 0.3, 0.9], atol=0.03)
    assert np.all(table["ci_low"] <= table["p_buffering"]) and np.all(table["p_buffering"] <= table["ci_high"])
    assert np.all(np.diff(table["p_buffering"]) > 0)
