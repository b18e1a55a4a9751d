"""End to end: the analysis functions on real simulator runs.

* examples/adsl1_voip.toml plus a Reno download (UDP VoIP messages + a TCP flow);
* a drop-tail bottleneck shared by 16 Reno flows, whose loss process must be far
  burstier than a Poisson process of the same rate (Wei thesis §3.2, Figs 3.1-3.3).
"""

from pathlib import Path

import numpy as np
import pytest

import ccbench
from ccbench import analysis as an
from ccbench.scenario import Scenario, load_scenario

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def adsl_run():
    sc = load_scenario(ROOT / "examples" / "adsl1_voip.toml")
    d = sc.model_dump(mode="json", exclude_none=True)
    d["run"]["duration"] = "20s"
    d["flows"].append({"name": "dl", "direction": "down", "transport": {"kind": "tcp", "cc": "reno"},
                       "app": {"kind": "bulk"}})
    return ccbench.simulate(Scenario.from_dict(d), seed=1)


def test_delay_functions_on_sim(adsl_run):
    run = adsl_run
    comp = an.delay_components(run.packets, "voip.down")
    ok = comp["delivered"].to_numpy()
    assert ok.sum() > 500
    parts = comp.loc[ok, ["sender_s", "network_s", "receiver_s"]].sum(axis=1)
    np.testing.assert_allclose(parts, comp.loc[ok, "total_s"], atol=1e-9)
    # percentiles agree with the run's own flows table (same definition)
    pct = an.delay_percentiles(run.packets, q=(50, 95, 99)).set_index("flow")
    fl = run.flows.set_index("flow")
    for f in ("voip.down", "voip.up"):
        assert pct.loc[f, "p50_s"] == pytest.approx(fl.loc[f, "delay_p50_s"], rel=1e-9)
        assert pct.loc[f, "p95_s"] == pytest.approx(fl.loc[f, "delay_p95_s"], rel=1e-9)
    # with an infinite deadline only lost messages are late
    lost = 1 - fl.loc["voip.down", "msgs_delivered"] / fl.loc["voip.down", "msgs_sent"]
    assert an.late_fraction(run.packets, 1e9, flows="voip.down")["voip.down"] == pytest.approx(lost, abs=1e-12)
    lf = an.late_fraction(run.packets, 0.15, flows="voip.down")["voip.down"]
    assert lost <= lf <= 1
    j = an.jitter(run.packets).set_index("flow")
    assert (j[["rfc3550_s", "mean_abs_diff_s", "std_s"]] > 0).all().all()
    dec = an.decomposition_summary(run.packets)
    assert dec[dec.component != "total"].groupby("flow")["share"].sum().to_numpy() == pytest.approx(1.0)
    extra = an.additional_queuing_delay(run.packets, base_owd_s=0.050, flows="voip.down")["extra_s"]
    # the download fills the 20000-byte queue: up to ~107 ms extra (+ one packet time)
    assert extra.min() >= 0 and 0.05 < extra.max() < 0.125
    print("\nvoip.down: p95 %.1f ms, late(150 ms) %.3f, jitter RFC3550 %.2f ms, max extra queuing %.1f ms"
          % (pct.loc["voip.down", "p95_s"] * 1e3, lf, j.loc["voip.down", "rfc3550_s"] * 1e3, extra.max() * 1e3))


def test_goodput_and_window_on_sim(adsl_run):
    run = adsl_run
    g = an.goodput_series(run.packets, bin_s=1.0, t_end_s=20.0)
    v = run.packets[run.packets["flow"] == "voip.down"]
    assert (g["voip.down"] * 1.0 / 8).sum() == pytest.approx(v.loc[v["t_deliver"].notna(), "bytes"].sum())
    fl = run.flows.set_index("flow")
    c = run.cwnd[run.cwnd["flow"] == "dl"]
    pkt_bytes = fl.loc["dl", "bytes_delivered"] / c["delivered_pkts"].max()
    r = an.delivered_rate_series(run.cwnd, bin_s=1.0, pkt_bytes=pkt_bytes, flows="dl", t_end_s=20.0)
    assert r["dl"].mean() == pytest.approx(fl.loc["dl", "goodput_bps"], rel=0.05)
    acf = an.cwnd_autocorrelation(run.cwnd, "dl", grid_s=0.05, max_lag_s=2.0, t_start_s=2.0)
    assert acf["acf"].iloc[0] == pytest.approx(1.0) and (acf["acf"].abs() <= 1 + 1e-9).all()
    ev = an.loss_events(run.drops, rtt_s=0.2, per_flow=True)
    assert set(ev["flows"].str[0]) >= {"dl"}


@pytest.fixture(scope="module")
def reno16():
    d = {
        "run": {"duration": "30s", "queue_sample": "1s", "state_sample": "100ms"},
        "topology": {"kind": "dumbbell", "bottleneck": {
            "down": "20Mbit", "up": "20Mbit", "delay": "30ms",  # base RTT 60 ms
            "queue": {"kind": "droptail", "limit": "100pkt"}}},  # 1 BDP
        "flows": [{"name": "reno", "direction": "down", "count": 16,
                   "transport": {"kind": "tcp", "cc": "reno"}, "app": {"kind": "bulk"}}],
    }
    return ccbench.simulate(Scenario.from_dict(d), seed=1)


def test_droptail_losses_far_burstier_than_poisson(reno16, tmp_path):
    run = reno16
    rtt = 0.060
    b = an.loss_burstiness(run.drops, rtt_s=rtt, label="16 Reno, drop-tail")
    print(f"\n16 Reno / 20 Mbit/s / 60 ms / 100 pkt drop-tail, 30 s: {b.n_intervals + 1} drops")
    for x in (0.01, 1.0):
        print(f"  P[interval <= {x:g} RTT]: measured {b.frac_within[x]:.3f}, Poisson {b.poisson_within[x]:.3f}")
    assert b.n_intervals > 300
    # far burstier than Poisson: >= 5x the Poisson mass within 1 % of an RTT ...
    assert b.frac_within[0.01] > 5 * b.poisson_within[0.01]
    # ... and the losses cluster within one RTT more than a Poisson process would
    assert b.frac_within[1.0] > b.poisson_within[1.0]
    pdf = b.pdf()  # 6 bins per decade from 1e-6 RTT
    small = pdf[pdf["hi_rtt"] <= 0.0101]
    w = small["hi_rtt"] - small["lo_rtt"]
    # PDF below 1 % of an RTT: "more than 10 times" the Poisson density in NS-2 (Wei
    # Fig. 3.1); ours is 9-10x since the receiver ACKs ramping flows segment by segment
    # as Linux does (ns-2's TCP-Linux sink did not), so at least 5x is the claim kept.
    mass, pois = float((small["empirical"] * w).sum()), float((small["poisson"] * w).sum())
    print(f"  PDF mass in [1e-6, 1e-2] RTT: measured {mass:.3f}, Poisson {pois:.4f}; exactly 0: {b.frac_zero:.3f}")
    assert mass > 5 * pois
    an.plot_loss_burstiness(b, tmp_path / "burst.png")
    assert (tmp_path / "burst.png").exists()

    names = list(run.flows["flow"])
    s = an.loss_sync_rate(run.drops, rtt_s=rtt, flows=names)
    assert 0 < s.rate < 1 and s.n_events > 20
    c = run.cwnd
    fl = run.flows.set_index("flow")
    pkt_bytes = float(fl["bytes_delivered"].sum() / c.groupby("flow", observed=True)["delivered_pkts"].max().sum())
    rates = an.delivered_rate_series(c, bin_s=1.0, pkt_bytes=pkt_bytes, t_end_s=30.0)
    F = an.fairness_convergence_time(rates, capacity_bps=20e6)
    jain = an.jain_index(run.flows["goodput_bps"])
    print(f"  loss sync rate {s.rate:.3f} over {s.n_events} events; Jain {jain:.3f}; F = {F:.1f} s")
    assert jain > 0.9
