"""Probing a simulated scenario: the rate-stepped CBR-over-TCP probe of Lübben &
Fidler run in the simulator beside the scenario's own traffic.

How it works (every choice is a parameter; the package docstring explains why):

* **One run per rate.** For ``r_j = j · r_acc`` (``j = 1, 2, …``, at most
  ``r_max``) the scenario is simulated with one extra flow, ``"probe"``: CBR over TCP
  writing ``size`` bytes every ``size · 8 / r_j`` seconds. The probe starts at
  ``t = 0`` together with the scenario's flows; its first ``warmup_s`` seconds are
  simulated but not measured, so that slow start and its overshoot (the probe's and
  the cross traffic's) are over when the measured train begins. The probing analysis
  samples a train from its start onwards, so a train that began in slow start would
  measure slow start.
* **The delay** of a message is ``t_deliver − t_write``, with ``t_write`` the
  *scheduled* CBR write time, so sender-stack buffering counts (the paper's ``t1``).
  The saved table (:func:`simulate_probes`' first return value) has the CSV columns of
  :mod:`ccbench.netcal.io`, times relative to the start of the measured train.
* **Train length.** A train is first simulated long enough for ``I`` samples at the
  configured spacing (times ``safety``), or as long as the previous rate's final train
  (the correlation time of the delays grows with the rate, so the next rate usually
  needs at least as many extensions). When the analysis needs more packets (an
  extension or a stationarity retry ran out of train; :attr:`RateOutcome.needs_packets`)
  the *same* run (same seed, so the same prefix) is simulated again with a longer train,
  up to ``max_train_s`` of measured time (at least ``growth`` times longer each time,
  so that a rate needing several extensions is re-simulated only a few times), and the analysis is repeated with the random
  sampling stream restored, so the outcome is exactly what the analysis of the final
  train gives.
* **Analysed once.** Each rate's outcome is computed once (on its final train) and the
  estimate is built from those outcomes; re-analysing the saved table with
  :func:`~ccbench.netcal.probing.analyse_probes` and the same :class:`ProbingConfig`
  gives the same outcomes, because the rates are analysed in the same order with the
  same random stream.
* **Stop rule.** Probing stops at the first rate that is not accepted (non-stationary,
  or dependent/too short when ``on_exhausted="stop"``), as in the paper; rates above
  it are not simulated.
* **Probe socket.** ``nagle = false`` (``TCP_NODELAY``; the note's pitfall 3) and
  whatever ``transport`` adds (``cc``, ``ecn``, ``delayed_ack``, ...). Placement:
  on a dumbbell the probe gets a pair of its own (``direction = "down"``); other
  topologies need ``placement = {"src": ..., "dst": ...}``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ._checks import check_positive
from .errors import NetcalError
from .estimator import ServiceCurveEstimate
from .io import trains_from_frame
from .probing import ProbingConfig, ProbingResult, RateOutcome, analyse_train, effective_mean_gap

__all__ = ["probe_flow", "simulate_probes", "SIM_PROBING", "PROBE_FLOW"]

PROBE_FLOW = "probe"

#: The probing configuration the simulator probe uses by default; every value is
#: explained in the package docstring ("The simulator probe"): I = 150 samples spaced
#: at least 100 ms apart, no warm-up fraction (the warm-up is simulated before the
#: train), up to 6 extensions after which a stationary but still dependent rate is
#: accepted and flagged, and the floor rule for delays that mostly sit at their minimum.
SIM_PROBING = ProbingConfig(
    samples=150,
    mean_gap=2.0,
    mean_gap_s=0.1,
    warmup_fraction=0.0,
    max_extensions=6,
    stationarity_retries=2,
    on_exhausted="accept",
    floor_fraction=0.5,
    floor_blocks=4,
)


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
        "name": PROBE_FLOW,
        **placement,
        "transport": {"kind": "tcp", "nagle": False, **transport},
        "app": {"kind": "cbr", "size": f"{size_bytes}B", "interval": f"{interval_ns}ns"},
        "start": f"{round(start_s * 1e9)}ns",
        "stop": f"{round((start_s + duration_s) * 1e9)}ns",
    }


def _base_dict(scenario) -> dict[str, Any]:
    if isinstance(scenario, dict):
        return scenario
    to_dict = getattr(scenario, "to_dict", None)
    if to_dict is None:
        raise NetcalError(f"scenario must be a Scenario or a dict of its tables, got {type(scenario).__name__}")
    return to_dict()


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
    safety: float = 1.2,
    growth: float = 2.0,
    max_train_s: float = 600.0,
    progress: Callable[[int, int, float], None] | None = None,
) -> tuple[pd.DataFrame, ServiceCurveEstimate]:
    """Runs the probe at increasing rates in ``scenario`` (a :class:`Scenario` or the
    dict of its TOML tables, which may have no flows at all); returns the probe table
    (columns ``rate_bps, seq, bytes, t_send_s, t_recv_s``, the CSV format of
    :mod:`ccbench.netcal.io`, only the rates that were probed) and the service-curve
    estimate (``est.probing`` holds every per-rate outcome).

    ``config`` defaults to :data:`SIM_PROBING`. ``progress(step, n_steps, rate_bps)``
    is called before each rate. Raises :class:`NetcalError` for bad arguments or when
    no rate is stationary, :class:`~ccbench.scenario.ScenarioError` when the scenario
    (with the probe added) is invalid.
    """
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    config = SIM_PROBING if config is None else config
    r_acc = check_positive("r_acc", r_acc_bps)
    r_max = check_positive("r_max", r_max_bps)
    if r_max < r_acc:
        raise NetcalError(f"r_max ({r_max:g} bit/s) is below r_acc ({r_acc:g} bit/s)")
    if int(size_bytes) != size_bytes or size_bytes <= 0:
        raise NetcalError(f"probe size must be a positive whole number of bytes, got {size_bytes!r}")
    if not (warmup_s >= 0 and math.isfinite(warmup_s)):
        raise NetcalError(f"warm-up must be a finite time >= 0, got {warmup_s!r}")
    if not (max_train_s > 0) or safety < 1.0 or growth <= 1.0:
        raise NetcalError("max_train_s must be positive, safety >= 1 and growth > 1")
    transport = dict(transport or {})
    base = _base_dict(scenario)
    if placement is None:
        topo = base.get("topology", {})
        if isinstance(topo, dict) and topo.get("kind", "dumbbell") != "dumbbell":
            raise NetcalError("probe placement: give src and dst nodes for a non-dumbbell topology")
        placement = {"direction": "down"}
    if any(isinstance(f, dict) and f.get("name") == PROBE_FLOW for f in base.get("flows", []) or []):
        raise NetcalError(f"the scenario already has a flow named {PROBE_FLOW!r}; rename it")
    n_steps = int(math.floor(r_max / r_acc + 1e-9))
    I = int(config.samples)

    def run_train(rate: float, train_s: float) -> pd.DataFrame:
        data = dict(base)
        data["flows"] = list(base.get("flows", []) or []) + [
            probe_flow(rate, int(size_bytes), 0.0, warmup_s + train_s, transport, placement)
        ]
        run_table = dict(base.get("run", {}) or {})
        run_table["duration"] = f"{round((warmup_s + train_s + drain_s) * 1e9)}ns"
        data["run"] = run_table
        run = simulate(Scenario.from_dict(data), seed=seed)
        pk = run.packets
        p = pk[(pk["flow"] == PROBE_FLOW) & (pk["t_write"] >= warmup_s - 1e-12)]
        return pd.DataFrame({
            "rate_bps": float(rate),
            "seq": np.arange(len(p), dtype=np.int64),
            "bytes": p["bytes"].to_numpy(),
            "t_send_s": p["t_write"].to_numpy() - warmup_s,
            "t_recv_s": p["t_deliver"].to_numpy() - warmup_s,
        })

    rng = np.random.default_rng(config.seed)
    prev_train_s = 0.0  # the next rate starts with the train length the last one needed
    frames: list[pd.DataFrame] = []
    outcomes: list[RateOutcome] = []
    for k in range(n_steps):
        rate = (k + 1) * r_acc
        if progress is not None:
            progress(k, n_steps, rate)
        interval = size_bytes * 8.0 / rate
        gap = effective_mean_gap(config, interval)
        train_s = max(I * gap * safety * interval + config.warmup_s, 20 * interval, prev_train_s)
        state = rng.bit_generator.state
        while True:
            frame = run_train(rate, train_s)
            if frame["t_recv_s"].notna().sum() == 0:
                outcome = RateOutcome(rate, "too_short", reason="no probe message was delivered")
                break
            (t_send, delays), = trains_from_frame(frame).values()
            rng.bit_generator.state = state
            outcome = analyse_train(rate, delays, xi, t_send, config, rng)
            if outcome.needs_packets <= 0 or train_s >= max_train_s:
                break
            # The analysis wants a longer train: the same run again, long enough for the
            # packets it asked for (delivered ones; the undelivered tail is dropped).
            want = (outcome.needs_packets * safety + (len(frame) - len(delays))) * interval + config.warmup_s
            train_s = min(max(want, growth * train_s), max_train_s)
        frames.append(frame)
        outcomes.append(outcome)
        prev_train_s = train_s if outcome.accepted else 0.0
        if not outcome.accepted:
            break
    if progress is not None:
        progress(n_steps, n_steps, float("nan"))
    probes = pd.concat(frames, ignore_index=True)
    warnings: list[str] = []
    if outcomes and outcomes[-1].accepted:
        warnings.append(
            f"every probed rate up to r_max = {r_max:g} bit/s was stationary: the long-term "
            "attainable rate may be higher than the estimate shows"
        )
    if any(o.status == "accepted_dependent" for o in outcomes):
        warnings.append("some rates were accepted without passing the runs test (on_exhausted='accept')")
    result = ProbingResult(float(xi), config, tuple(outcomes), tuple(warnings))
    return probes, result.estimate()
