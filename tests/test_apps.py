"""Applications end to end: presets, thin streams, split-N, parallel connections, web
sessions, trace and synthetic VBR replay."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_core

pytestmark = needs_core


def run(flows, duration="30s", loss=None, rate="10Mbit", seed=1):
    import ccbench
    from ccbench.scenario import Scenario

    bottleneck = {"down": rate, "up": rate, "delay": "50ms", "queue": {"kind": "droptail", "limit": "1000pkt"}}
    if loss is not None:
        bottleneck["loss"] = {"kind": "bernoulli", "p": loss}
    sc = Scenario.from_dict({"run": {"duration": duration}, "topology": {"kind": "dumbbell", "bottleneck": bottleneck}, "flows": flows})
    return ccbench.simulate(sc, seed=seed)


def test_thin_stream_presets_reproduce_table1_means():
    from ccbench.scenario.presets import STEWART_TABLE1

    for key in ("quake3", "skype-udp", "remote-desktop"):
        r = run([{"name": "g", "direction": "down", "transport": {"kind": "udp"}, "app": {"kind": "preset", "name": f"thin-{key}"}}],
                duration="2000s")
        p = r.packets
        gaps_ms = np.diff(p["t_write"].to_numpy()) * 1e3
        row = STEWART_TABLE1[key]
        print(f"\n{key}: {len(p)} messages, mean gap {gaps_ms.mean():.1f} ms (table {row.iat_avg}), "
              f"median {np.median(gaps_ms):.1f} (table {row.iat_med}), mean size {p['bytes'].mean():.1f} B (table {row.payload_avg})")
        # Heavy-tailed gaps: the sample mean converges slowly; 10% over 2000 s.
        assert gaps_ms.mean() == pytest.approx(row.iat_avg, rel=0.10)
        assert np.median(gaps_ms) == pytest.approx(row.iat_med, rel=0.05)
        assert p["bytes"].mean() == pytest.approx(row.payload_avg, rel=0.05)


def test_unknown_preset_lists_the_presets():
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError, match="brosh-voip"):
        run([{"name": "x", "direction": "down", "transport": {"kind": "udp"}, "app": {"kind": "preset", "name": "nope"}}])


def test_split_n_sends_each_message_as_n_segments():
    video = {"kind": "preset", "name": "live-video"}
    one = run([{"name": "v", "direction": "down", "transport": {"kind": "tcp", "nagle": False}, "app": video}], duration="10s")
    two = run([{"name": "v", "direction": "down", "split": 2, "transport": {"kind": "tcp", "nagle": False}, "app": video}], duration="10s")
    m1, m2 = one.flows.iloc[0], two.flows.iloc[0]
    assert m1.msgs_sent == m2.msgs_sent == 500
    assert m2.pkts_sent == pytest.approx(2 * m1.pkts_sent, abs=4)


def test_parallel_connections_deliver_in_message_order():
    flows = [{"name": "v", "direction": "down", "connections": 3, "scheduler": "round-robin",
              "transport": {"kind": "tcp", "nagle": False}, "app": {"kind": "preset", "name": "live-video"}}]
    r = run(flows, duration="20s", loss=0.02)
    p = r.packets
    d = p["t_deliver"].to_numpy()
    done = np.isfinite(d)
    assert done.sum() > 900
    assert np.all(np.diff(d[done]) >= 0), "the receiver releases messages in order across connections"
    assert sorted(r.cwnd["conn"].unique()) == [0, 1, 2]
    assert r.flows.iloc[0].msgs_delivered == done.sum()


def test_least_backlog_scheduler_runs_and_differs_from_round_robin():
    def p95(scheduler):
        flows = [{"name": "v", "direction": "down", "connections": 5, "scheduler": scheduler,
                  "transport": {"kind": "tcp", "nagle": False}, "app": {"kind": "preset", "name": "live-video"}}]
        return run(flows, duration="60s", loss=0.01).flows.iloc[0].delay_p95_s

    rr, lb = p95("round-robin"), p95("least-backlog")
    print(f"\n5 connections, 1% loss: p95 round-robin {rr * 1e3:.1f} ms, least-backlog {lb * 1e3:.1f} ms")
    assert np.isfinite([rr, lb]).all() and rr != lb


def test_web_sessions_wait_for_delivery_then_think():
    r = run([{"name": "w", "direction": "down", "transport": {"kind": "tcp"},
              "app": {"kind": "web", "size": "20kB", "size_dist": "fixed", "think": "500ms"}}], duration="60s")
    p = r.packets
    # Each response starts after the previous was delivered plus a think time.
    tw, td = p["t_write"].to_numpy(), p["t_deliver"].to_numpy()
    assert np.all(tw[1:] >= td[:-1])
    # ~ 60 s / (0.5 s think + ~0.2 s transfer) responses.
    assert 60 < len(p) < 110, len(p)


def test_synthetic_vbr_video_has_the_configured_mean_rate():
    r = run([{"name": "vbr", "direction": "down", "transport": {"kind": "tcp", "nagle": False},
              "app": {"kind": "vbr", "rate": "2Mbit", "duration": "30s"}}], duration="30s", rate="20Mbit")
    p = r.packets
    rate = p["bytes"].sum() * 8 / 30.0
    assert rate == pytest.approx(2e6, rel=0.05)
    assert p["bytes"].max() > 3 * p["bytes"].median(), "I frames are larger"


def test_trace_replay_from_csv(tmp_path):
    csv = tmp_path / "t.csv"
    csv.write_text("time_s,size_bytes\n0,1000\n0.04,500\n0.08,2000\n")
    r = run([{"name": "t", "direction": "down", "transport": {"kind": "udp"},
              "app": {"kind": "trace", "file": str(csv)}}], duration="1s")
    p = r.packets
    assert p["bytes"].tolist() == [1000, 500, 2000]
    assert p["t_write"].tolist() == pytest.approx([0, 0.04, 0.08])
