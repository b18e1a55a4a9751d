"""Probing a simulated scenario: the rate-stepped CBR-over-TCP probe of Lübben &
Fidler run in the simulator beside the scenario's own traffic.

For each rate ``r_j = j · r_acc`` a fresh run of the scenario gets one extra flow, the
probe: CBR over TCP writing ``size`` bytes every ``size·8/r_j`` seconds from the start
of the run. Its first ``warmup_s`` seconds are not measured, so that the probe's own
connection and the cross traffic are in steady state (slow start and its overshoot
are over) when the train the probe schedule asks for
(:func:`~ccbench.netcal.probing.plan_probe_schedule`) begins: the estimator samples
the *start* of a train, so a train that begins in slow start measures slow start. The
delay of each probe message is ``t_deliver − t_write``, with ``t_write`` the *scheduled*
write time, so sender-stack buffering counts, as in the paper. Rates are probed in
increasing order and probing stops at the first rate whose train is not stationary.

Choices the paper leaves open (all parameters): each rate is its own run, the probe is
an extra flow on a pair of its own (``placement``), the probe socket disables Nagle
(``TCP_NODELAY``: the note's pitfall 3), and the probe's writes are ``size`` bytes
(default one MSS, so a write is one segment).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from .errors import NetcalError
from .estimator import ServiceCurveEstimate
from .pipeline import estimate_from_frame
from .probing import ProbingConfig, analyse_train, plan_probe_schedule

__all__ = ["probe_flow", "simulate_probes"]


def probe_flow(
    rate_bps: float,
    size_bytes: int,
    start_s: float,
    duration_s: float,
    transport: dict[str, Any],
    placement: dict[str, Any],
) -> dict[str, Any]:
    """The probe as a scenario flow table."""
    interval_ns = max(1, round(size_bytes * 8 / rate_bps * 1e9))
    return {
        "name": "probe",
        **placement,
        "transport": {"kind": "tcp", "nagle": False, **transport},
        "app": {"kind": "cbr", "size": f"{size_bytes}B", "interval": f"{interval_ns}ns"},
        "start": f"{round(start_s * 1e9)}ns",
        "stop": f"{round((start_s + duration_s) * 1e9)}ns",
    }


def simulate_probes(
    scenario,
    r_acc_bps: float,
    r_max_bps: float,
    *,
    xi: float = 0.05,
    size_bytes: int = 1448,
    config: ProbingConfig | None = None,
    transport: dict[str, Any] | None = None,
    placement: dict[str, Any] | None = None,
    warmup_s: float = 10.0,
    drain_s: float = 2.0,
    seed: int | None = None,
    progress: Callable[[int, int, float], None] | None = None,
) -> tuple[pd.DataFrame, ServiceCurveEstimate]:
    """Runs the probe at increasing rates in ``scenario`` (a :class:`Scenario` or the
    dict of its TOML tables); returns the probe table (columns
    ``rate_bps, seq, bytes, t_send_s, t_recv_s``, the CSV format of
    :mod:`ccbench.netcal.io`) and the service-curve estimate.

    ``placement`` says where the probe runs: ``{"direction": "down"}`` (default, on a
    dumbbell: a pair of its own) or ``{"src": ..., "dst": ...}`` on other topologies.
    ``progress(step, n_steps, rate_bps)`` is called before each rate.
    """
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    config = config or ProbingConfig()
    transport = dict(transport or {})
    # A dict (the TOML tables) may have no flows of its own: the probe alone is a
    # valid thing to measure.
    base = scenario if isinstance(scenario, dict) else scenario.to_dict()
    if placement is None:
        if base.get("topology", {}).get("kind", "dumbbell") != "dumbbell":
            raise NetcalError("probe placement: give src and dst nodes for a non-dumbbell topology")
        placement = {"direction": "down"}
    schedule = plan_probe_schedule(r_acc_bps, r_max_bps, size_bytes, config)
    names = {f["name"] for f in base.get("flows", [])}
    if "probe" in names:
        raise NetcalError("the scenario already has a flow named 'probe'; rename it")
    rows = []
    rng = np.random.default_rng(config.seed)
    for k, step in enumerate(schedule.steps):
        if progress is not None:
            progress(k, len(schedule.steps), step.rate_bps)
        data = dict(base)
        data["flows"] = list(base.get("flows", [])) + [
            probe_flow(step.rate_bps, size_bytes, 0.0, warmup_s + step.duration_s, transport, placement)
        ]
        run_table = dict(base.get("run", {}))
        run_table["duration"] = f"{round((warmup_s + step.duration_s + drain_s) * 1e9)}ns"
        data["run"] = run_table
        run = simulate(Scenario.from_dict(data), seed=seed)
        p = run.packets[(run.packets["flow"] == "probe") & (run.packets["t_write"] >= warmup_s)]
        t_send = p["t_write"].to_numpy()
        t_recv = p["t_deliver"].to_numpy()
        rows.append(
            pd.DataFrame(
                {"rate_bps": step.rate_bps, "seq": np.arange(len(p)), "bytes": p["bytes"].to_numpy(),
                 "t_send_s": t_send - warmup_s, "t_recv_s": t_recv - warmup_s}
            )
        )
        delivered = np.isfinite(t_recv)
        outcome = analyse_train(step.rate_bps, (t_recv - t_send)[delivered], xi, t_send[delivered], config, rng)
        if outcome.status == "nonstationary":
            break
    probes = pd.concat(rows, ignore_index=True)
    # A train cut off by the end of the run leaves undelivered messages at its end:
    # the estimator drops those (it needs in-order delivery, which TCP provides).
    return probes, estimate_from_frame(probes, xi, r_acc_bps, config)
