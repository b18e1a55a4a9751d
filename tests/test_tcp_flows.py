"""TCP flows end to end: sender-stack delay, fixed-size transfers, option errors."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import needs_core

pytestmark = needs_core


def dumbbell(flows, duration="60s", loss=None, rate="10Mbit", delay="20ms", state_sample="1ms"):
    from ccbench.scenario import Scenario

    bottleneck = {"down": rate, "up": rate, "delay": delay, "queue": {"kind": "droptail", "limit": "1000pkt"}}
    if loss is not None:
        bottleneck["loss"] = loss
    return Scenario.from_dict(
        {"run": {"duration": duration, "state_sample": state_sample}, "topology": {"kind": "dumbbell", "bottleneck": bottleneck}, "flows": flows}
    )


def _waiting_and_room(run):
    """Per state sample: messages written but not yet sent, and whether cwnd had room."""
    tw, tf = run.packets["t_write"].to_numpy(), run.packets["t_first_tx"].to_numpy()
    t = run.cwnd["t"].to_numpy()
    waiting = np.searchsorted(np.sort(tw), t, side="right") - np.searchsorted(np.sort(tf[np.isfinite(tf)]), t, side="right")
    return waiting, (run.cwnd["inflight_pkts"] < run.cwnd["cwnd_pkts"]).to_numpy()


def test_cbr_over_tcp_waits_in_the_stack_exactly_while_the_window_is_full():
    """CBR over TCP at 50% of a 10 Mbit/s path with 0.2% random loss (Lübben §1.7):
    a message waits in the sender (t_first_tx > t_write) only while what is queued
    exceeds what cwnd lets out. Checked at every 1 ms state sample: whenever a message
    is waiting, in-flight >= cwnd. Exactly so for a sender that sends what each ACK
    frees (``tso_defer = false``); Linux's TSO deferral may also hold a message while
    the window has room, until the ACK due within 1 ms (checked below)."""
    import ccbench

    interval_ns = round(1448 * 8 / 5e6 * 1e9)

    def scenario(**tcp):
        return dumbbell(
            [{"name": "cbr", "direction": "down", "transport": {"kind": "tcp", "cc": "reno", "nagle": False, **tcp},
              "app": {"kind": "cbr", "size": "1448B", "interval": f"{interval_ns}ns"}}],
            loss={"kind": "bernoulli", "p": 0.002},
        )

    lwait, lroom = _waiting_and_room(ccbench.simulate(scenario(), seed=1))
    held = np.sum((lwait > 0) & lroom)
    assert held < 0.02 * np.sum(lwait > 0), (held, np.sum(lwait > 0))
    run = ccbench.simulate(scenario(tso_defer=False), seed=1)
    p = run.packets
    tw, tf = p["t_write"].to_numpy(), p["t_first_tx"].to_numpy()
    sent = np.isfinite(tf)
    stack = tf[sent] - tw[sent]
    assert np.all(np.diff(tf[sent]) >= 0), "messages leave in write order"
    waiting, room = _waiting_and_room(run)
    print(f"\nmessages {len(p)}, with stack delay {np.mean(stack > 0):.3f}, max {stack.max() * 1e3:.1f} ms; "
          f"samples with a waiting message {np.sum(waiting > 0)} of {len(waiting)}")
    assert 0 < np.mean(stack > 0) < 0.5, "loss episodes, and only they, cause stack delay at 50% load"
    assert np.sum(waiting > 0) > 50
    assert np.sum((waiting > 0) & room) == 0, "a message waited while the window had room"


def test_fixed_size_transfer_reports_its_completion_time():
    import ccbench

    # 1 MB over 10 Mbit/s, RTT 40 ms, no loss: slow start from IW10 then the link rate.
    sc = dumbbell([{"name": "get", "direction": "down", "transport": {"kind": "tcp", "cc": "reno"},
                    "app": {"kind": "bulk", "bytes": "1000000B"}}], duration="10s")
    f = ccbench.simulate(sc, seed=1).flows.iloc[0]
    assert f.bytes_delivered == 1_000_000
    # Lower bound: the bytes at the link rate plus one RTT; upper: that plus slow start.
    at_rate = 1_000_000 / 1448 * 1500 * 8 / 10e6
    assert at_rate + 0.04 < f.completion_s < at_rate + 0.4, f.completion_s


@pytest.mark.parametrize(
    "transport,needle",
    [
        ({"kind": "tcp", "mss": 0}, "mss"),
        ({"kind": "tcp", "cc": "warp9"}, "warp9"),
        ({"kind": "tcp", "sndbuf": "-4MB"}, "sndbuf"),
        ({"kind": "tcp", "cc": {"name": "reno", "beta": 0.7}}, "beta"),
    ],
)
def test_invalid_tcp_options_give_clear_errors(transport, needle):
    import ccbench
    from ccbench.backends.sim import SimulationError
    from ccbench.scenario import ScenarioError

    with pytest.raises((ScenarioError, SimulationError)) as e:
        sc = dumbbell([{"name": "x", "direction": "down", "transport": transport, "app": {"kind": "bulk"}}], duration="1s")
        ccbench.simulate(sc)
    msg = str(e.value)
    assert needle in msg and "\n" not in msg.strip(), msg
    if needle == "warp9":
        assert "reno" in msg, "the error lists the algorithms that exist"
