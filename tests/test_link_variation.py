"""Trace-driven links (Mahimahi traces, rate schedules) and link jitter (netem's
distributions, with and without reordering), in the simulator."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from conftest import needs_core

ROOT = Path(__file__).resolve().parent.parent
TRACES = ROOT / "examples" / "traces"


def scenario(down, flows, duration="20s", delay="10ms", jitter=None, limit="300pkt", up="100Mbit"):
    from ccbench.scenario import Scenario

    b = {"down": down, "up": up, "delay": delay, "queue": {"kind": "droptail", "limit": limit}}
    if jitter is not None:
        b["jitter"] = jitter
    return Scenario.from_dict(
        {"run": {"duration": duration}, "topology": {"kind": "dumbbell", "bottleneck": b}, "flows": flows}
    )


def udp(name, size, interval, start="0s", jitter=None):
    app = {"kind": "cbr", "size": size, "interval": interval}
    if jitter is not None:
        app["jitter"] = jitter
    return {"name": name, "direction": "down", "start": start, "transport": {"kind": "udp"}, "app": app}


def trace_capacity_bps(path: Path) -> float:
    ms = [int(x) for x in path.read_text().split()]
    return len(ms) * 1500 * 8 / (ms[-1] / 1000)


# ---- trace and schedule: scenario side ------------------------------------------------


def test_a_trace_rate_is_its_mean_and_round_trips(tmp_path):
    from ccbench.scenario import dumps_scenario, loads_scenario

    sc = scenario({"trace": str(TRACES / "cellular.down")}, [udp("u", "1500B", "1ms")])
    down = sc.topology.bottleneck.down
    assert int(down) == round(trace_capacity_bps(TRACES / "cellular.down"))
    cfg = sc.to_sim_config(1)["topology"]["bottleneck"]["down"]
    assert cfg["rate_var"]["kind"] == "trace" and cfg["rate_var"]["ms"][-1] == 20000
    again = loads_scenario(dumps_scenario(sc))
    assert again.topology.bottleneck.down == down


@pytest.mark.parametrize(
    "content, expected",
    [
        (None, "no such trace file"),
        ("", "is empty"),
        ("1\n2\nx7\n", "line 3: 'x7' is not a whole number"),
        ("1\n5\n3\n", "line 3: 3 is before the previous line's 5"),
        ("1\n\n3\n", "line 2: empty line"),
        ("0\n0\n", "must last a nonzero time"),
        ("dir", "is a directory"),
    ],
)
def test_bad_trace_files_get_one_line_naming_the_problem(tmp_path, content, expected):
    from ccbench.scenario import ScenarioError

    path = tmp_path / "t.down"
    if content == "dir":
        path.mkdir()
    elif content is not None:
        path.write_text(content)
    with pytest.raises(ScenarioError) as e:
        scenario({"trace": str(path)}, [udp("u", "1500B", "1ms")])
    msg = str(e.value)
    assert msg.count("\n") == 0 and msg.startswith("topology.bottleneck.down:") and expected in msg, msg


def test_the_cli_refuses_a_bad_trace_with_exit_code_2(tmp_path):
    (tmp_path / "bad.up").write_text("3\n2\n")
    toml = tmp_path / "s.toml"
    toml.write_text(
        '[run]\nduration = "1s"\n[topology]\nkind = "dumbbell"\n'
        f'bottleneck = {{ down = "10Mbit", up = {{ trace = "{tmp_path / "bad.up"}" }} }}\n'
        '[[flows]]\nname = "u"\ntransport = { kind = "udp" }\napp = { kind = "cbr", size = "100B", interval = "10ms" }\n'
    )
    r = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(toml)], capture_output=True, text=True)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and "line 2" in lines[0] and "topology.bottleneck.up" in lines[0], r.stderr


@pytest.mark.parametrize(
    "sched, expected",
    [
        ([["1s", "10Mbit"]], 'the first point at "0s"'),
        ([["0s", "10Mbit"], ["0s", "2Mbit"]], "times must increase"),
        ([["0s", "10Mbit"], ["1s", "0bit"]], "stop for ever"),
        ([["0s", "10Mbit"], ["1s"]], "is not a [time, rate] pair"),
    ],
)
def test_bad_schedules_are_refused(sched, expected):
    from ccbench.scenario import ScenarioError

    with pytest.raises(ScenarioError) as e:
        scenario({"schedule": sched}, [udp("u", "1500B", "1ms")])
    assert expected in str(e.value), str(e.value)


def test_the_trace_generator_reproduces_the_shipped_traces(tmp_path):
    subprocess.run([sys.executable, str(ROOT / "scripts" / "make_traces.py"), "--out", str(tmp_path)],
                   check=True, capture_output=True)
    for shipped in sorted(TRACES.iterdir()):
        assert (tmp_path / shipped.name).read_bytes() == shipped.read_bytes(), shipped.name


# ---- trace and schedule: the simulator ---------------------------------------------


@needs_core
def test_an_overloaded_trace_link_carries_exactly_its_opportunities():
    """UDP 1500-byte packets at twice the trace's capacity: each opportunity carries one
    packet, so the link delivers opportunities x 1500 B per period."""
    import ccbench

    trace = TRACES / "cellular.down"
    cap = trace_capacity_bps(trace)
    gap = round(1500 * 8 / (2 * 20e6) * 1e9)  # twice the best state's 20 Mbit/s
    run = ccbench.simulate(scenario({"trace": str(trace)}, [udp("u", "1500B", f"{gap}ns")], duration="20s",
                                    limit="1000pkt"), seed=1)
    p = run.packets
    got = p["t_arrive"].notna().sum() * 1500 * 8 / 20.0
    # packets delivered after 20 s (still on the 10 ms wire) are not counted: < 0.1 %
    assert got == pytest.approx(cap, rel=0.005)


@needs_core
def test_a_greedy_tcp_flow_gets_the_trace_capacity():
    """The Done-when check: a CUBIC download over the cellular-like trace carries what
    the trace implies (opportunities x 1500 B / period) within a few percent."""
    import ccbench

    trace = TRACES / "cellular.down"
    cap = trace_capacity_bps(trace)
    flows = [{"name": "bulk", "direction": "down", "transport": {"kind": "tcp", "cc": "cubic"}, "app": {"kind": "bulk"}}]
    run = ccbench.simulate(scenario({"trace": str(trace)}, flows, duration="40s", limit="200pkt"), seed=1)
    wire = run.flows.iloc[0]["goodput_bps"] * 1500 / 1448
    assert wire == pytest.approx(cap, rel=0.04), (wire, cap)


@needs_core
def test_a_quiet_flow_waits_half_an_opportunity_gap_on_average():
    """One opportunity per millisecond (12 Mbit/s) and sparse Poisson packets, at times
    unrelated to the millisecond grid: each waits for the next opportunity, U(0, 1] ms."""
    import ccbench

    poisson = udp("u", "100B", "10ms", jitter={"dist": "exponential"})
    run = ccbench.simulate(scenario({"trace": str(TRACES / "constant-12mbit.down")}, [poisson], duration="30s"), seed=1)
    p = run.packets.dropna(subset=["t_arrive"])
    wait = (p["t_arrive"] - p["t_write"]).to_numpy() - 0.010
    assert wait.min() >= 0 and wait.max() <= 0.001 + 1e-6
    assert wait.mean() == pytest.approx(0.0005, abs=0.00005)


@needs_core
def test_a_schedule_gives_each_phase_its_rate():
    import ccbench

    sched = {"schedule": [["0s", "10Mbit"], ["2s", "2Mbit"], ["3s", "0bit"], ["3.5s", "6Mbit"]], "repeat": "5s"}
    sc = scenario(sched, [udp("u", "1500B", "0.6ms")], duration="10s", limit="100000pkt")
    assert int(sc.topology.bottleneck.down) == round((10e6 * 2 + 2e6 * 1 + 6e6 * 1.5) / 5)
    run = ccbench.simulate(sc, seed=1)
    t = run.packets["t_arrive"].dropna().to_numpy() - 0.010  # leave the serialiser
    for lo, hi, rate in [(0.1, 1.9, 10e6), (2.1, 2.9, 2e6), (3.05, 3.45, 0.0), (3.6, 4.9, 6e6), (5.1, 6.9, 10e6)]:
        got = ((t >= lo) & (t < hi)).sum() * 1500 * 8 / (hi - lo)
        assert got == pytest.approx(rate, rel=0.01, abs=30e3), (lo, hi, got)


# ---- jitter ------------------------------------------------------------------------


def netem_pareto_table() -> np.ndarray:
    """iproute2's pareto.c table (shape 3, mean-shifted, x 4/3, clamped), in sigmas."""
    i = np.arange(65536, 0, -16, dtype=float)
    v = (np.power(i / 65536, -1 / 3) - 1.5) * (4 / 3) * 8192
    return np.rint(np.minimum(v, 32767)) / 8192


def one_way(run, base_s):
    p = run.packets.dropna(subset=["t_arrive"]).sort_values("msg")
    return (p["t_arrive"] - p["t_write"]).to_numpy() - base_s, p["t_arrive"].to_numpy()


@needs_core
@pytest.mark.parametrize("dist", ["normal", "uniform", "pareto"])
def test_cbr_delays_follow_the_configured_distribution(dist):
    import ccbench
    from scipy import stats

    sigma = 0.005
    jit = {"sigma": "5ms", "dist": dist, "reorder": True}
    run = ccbench.simulate(scenario("100Mbit", [udp("u", "125B", "2ms")], duration="20s", delay="50ms",
                                    jitter=jit), seed=3)
    d, _ = one_way(run, 10e-6)  # 125 B at 100 Mbit/s = 10 us on the bottleneck
    z = (d - 0.050) / sigma
    assert len(z) > 9000
    if dist == "normal":
        ref = stats.norm()
    elif dist == "uniform":
        ref = stats.uniform(-1, 2)
    else:
        table = netem_pareto_table()
        ref = stats.rv_discrete(values=(np.arange(len(table)), np.full(len(table), 1 / len(table))))
        z_table = np.sort(table)
        assert z.mean() == pytest.approx(z_table.mean(), abs=0.03)
        assert z.std() == pytest.approx(z_table.std(), rel=0.05)
        ks = stats.ks_2samp(z, z_table).statistic
        assert ks < 0.03, ks
        return
    assert z.mean() == pytest.approx(ref.mean(), abs=0.03)
    assert z.std() == pytest.approx(ref.std(), rel=0.03)
    assert stats.kstest(z, ref.cdf).statistic < 0.02


@needs_core
def test_the_order_keeping_delay_never_reorders():
    import ccbench

    jit = {"sigma": "5ms", "dist": "normal", "reorder": False}
    run = ccbench.simulate(scenario("100Mbit", [udp("u", "125B", "2ms")], duration="20s", delay="50ms",
                                    jitter=jit), seed=3)
    d, arrive = one_way(run, 10e-6)
    assert np.all(np.diff(arrive) >= 0)
    # each packet is delivered at max(previous, own): never earlier than its own draw
    # would put it, so the delays sit above the reordering model's
    assert d.mean() > 0.050 and d.std() < 0.005


@needs_core
def test_the_reordering_model_reorders_at_the_expected_rate():
    """CBR every 5 ms, delays i.i.d. N(50 ms, 5 ms): packet k+1 arrives before packet k
    when D_k - D_{k+1} > 5 ms, with D_k - D_{k+1} ~ N(0, 2 sigma^2):
    P = 1 - Phi(5 / (5 sqrt 2)) = 0.240."""
    import ccbench
    from scipy import stats

    jit = {"sigma": "5ms", "dist": "normal", "reorder": True}
    run = ccbench.simulate(scenario("100Mbit", [udp("u", "125B", "5ms")], duration="50s", delay="50ms",
                                    jitter=jit), seed=5)
    _, arrive = one_way(run, 0)
    rate = np.mean(np.diff(arrive) < 0)
    expected = 1 - stats.norm.cdf(1 / math.sqrt(2))
    assert rate == pytest.approx(expected, abs=0.02), rate


@needs_core
def test_tcp_survives_reordering_and_correlated_jitter():
    import ccbench

    flows = [{"name": "bulk", "direction": "down", "transport": {"kind": "tcp", "cc": "cubic"}, "app": {"kind": "bulk"}}]
    jit = {"sigma": "3ms", "dist": "paretonormal", "correlation": 0.25, "reorder": True}
    run = ccbench.simulate(scenario("10Mbit", flows, duration="10s", delay="20ms", jitter=jit), seed=1)
    f = run.flows.iloc[0]
    assert 3e6 < f["goodput_bps"] <= 10e6


@needs_core
def test_constant_links_are_unchanged_by_a_zero_jitter():
    """sigma = 0 draws the mean every time: the same run as without jitter, but
    through the random-delay path."""
    import ccbench

    flows = [{"name": "bulk", "direction": "down", "transport": {"kind": "tcp", "cc": "reno"}, "app": {"kind": "bulk"}}]
    a = ccbench.simulate(scenario("10Mbit", flows, duration="5s"), seed=1).flows.iloc[0]
    for reorder in (False, True):
        jit = {"sigma": "0ms", "reorder": reorder}
        b = ccbench.simulate(scenario("10Mbit", flows, duration="5s", jitter=jit), seed=1).flows.iloc[0]
        assert b["bytes_delivered"] == a["bytes_delivered"]


@needs_core
def test_the_handshake_counts_a_jittered_links_mean_delay():
    """The SYN's RTT sample counts a jittered link at its configured (mean) delay. It used
    to count 0 there: a dumbbell with jitter on the down link started with half its RTT
    as srtt, so a short transfer's srtt and first RTO were wrong."""
    import ccbench

    flows = [{"name": "x", "direction": "down", "transport": {"kind": "tcp", "cc": "cubic", "syn_rtt": "idle"},
              "app": {"kind": "bulk", "bytes": "4000B"}}]

    def first_srtt(jitter):
        sc = scenario("10Mbit", flows, duration="2s", delay="20ms", jitter=jitter)
        st = ccbench.simulate(sc, seed=1).cwnd
        return float(st[st["srtt_s"] > 0]["srtt_s"].iloc[0])

    plain = first_srtt(None)
    assert plain == pytest.approx(0.040, abs=0.001)
    assert first_srtt({"sigma": "1ns", "reorder": False}) == pytest.approx(plain, abs=1e-6)
