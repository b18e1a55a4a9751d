"""The simulator backend: runs a Scenario in the Rust engine and returns a Run."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pandas as pd

from ccbench.run import CA_STATES, Run, delay_stats, versions


class SimulationError(ValueError):
    """The simulator refused the scenario; ``field`` names the offending value."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _core():
    try:
        from ccbench import _core
    except ImportError as e:  # pragma: no cover - depends on the build
        raise RuntimeError(
            "the ccbench simulator extension is not built; run `make setup` (or `maturin develop --release`)"
        ) from e
    return _core


def simulate_config(config: dict, progress: Callable[[float], None] | None = None) -> dict:
    """Runs a resolved simulator config (``Scenario.to_sim_config``); returns raw columns."""
    core = _core()
    try:
        return core.simulate(json.dumps(config), progress)
    except core.SimConfigError as e:
        raise user_facing_error(e, config) from None


def user_facing_error(e, config: dict) -> SimulationError:
    """The simulator names flows by index (``flows[2].transport.cc``); users know them by
    name, as the scenario errors do (``flows.download.transport.cc``)."""
    import re

    field = getattr(e, "field", None) or ""
    msg = getattr(e, "msg", None) or str(e)
    m = re.match(r"flows\[(\d+)\](.*)", field)
    if m and int(m.group(1)) < len(config.get("flows", [])):
        field = f"flows.{config['flows'][int(m.group(1))]['name']}{m.group(2)}"
    # the registry names parameters cc.params.beta; the scenario file writes cc.beta
    field = field.replace(".cc.params.", ".cc.")
    return SimulationError(f"{field}: {msg}" if field else msg, field or None)


def simulate(scenario, seed: int | None = None, progress: Callable[[float], None] | None = None) -> Run:
    """Simulates ``scenario`` with ``seed`` (default: the scenario's ``run.seed``) and
    returns the :class:`Run`.

    ``scenario`` is a :class:`ccbench.Scenario`, a path to a scenario file (``str`` or
    ``pathlib.Path``) or a dict shaped like the file. A Scenario changed in place is
    validated again as a whole first (flow names, placement), so the run always
    matches what the scenario now says.

    >>> import ccbench
    >>> run = ccbench.simulate("examples/adsl1_voip.toml", seed=1)     # doctest: +SKIP
    >>> run.flows[["flow", "goodput_bps", "delay_p95_s"]]              # doctest: +SKIP
    """
    scenario = as_scenario(scenario)
    config = scenario.to_sim_config(seed=seed)
    raw = simulate_config(config, progress)
    run = to_run(raw)
    run.meta.update(
        {
            "backend": "sim",
            "seed": config["seed"],
            "scenario": scenario.model_dump(mode="json"),
            "sim_config": config,
            "versions": versions(),
        }
    )
    return run


def as_scenario(scenario):
    """A validated Scenario from a Scenario, a file path or a dict; a Scenario is
    validated again (it may have been changed in place since it was built)."""
    import os

    from ccbench.scenario import Scenario, load_scenario

    if isinstance(scenario, Scenario):
        return scenario.revalidated()
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(scenario)
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    raise TypeError(
        f"simulate() takes a Scenario, a scenario file path (str or Path) or a dict, not {type(scenario).__name__}"
    )


def to_run(raw: dict) -> Run:
    """Turns the extension's columns into the Run tables (DESIGN.md schema).

    Linear in rows and flows: the columns become the tables without a copy
    (``copy=False``), and per-flow figures come from one grouping pass."""
    flow_names = list(raw["flow_names"])
    link_names = list(raw["link_names"])
    reasons = list(raw["reasons"])
    flow_cat = pd.CategoricalDtype(flow_names)
    link_cat = pd.CategoricalDtype(link_names)

    def names(codes, cat, labels):
        return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int64), dtype=cat) if len(labels) else codes

    p = raw["packets"]
    packets = pd.DataFrame(
        {
            "flow": names(p["flow"], flow_cat, flow_names),
            "msg": p["msg"],
            "bytes": p["bytes"],
            "t_write": p["t_write"],
            "t_first_tx": p["t_first_tx"],
            "t_arrive": p["t_arrive"],
            "t_deliver": p["t_deliver"],
        },
        copy=False,
    )
    q = raw["queue"]
    queue = pd.DataFrame(
        {
            "link": names(q["link"], link_cat, link_names),
            "t": q["t"],
            "backlog_bytes": q["backlog_bytes"],
            "backlog_pkts": q["backlog_pkts"],
        },
        copy=False,
    )
    d = raw["drops"]
    drops = pd.DataFrame(
        {
            "link": names(d["link"], link_cat, link_names),
            "t": d["t"],
            "flow": names(d["flow"], flow_cat, flow_names),
            "seq": d["seq"],
            "kind": pd.Categorical.from_codes(np.asarray(d["kind"], dtype=np.int64), categories=["drop", "mark"]),
            "reason": pd.Categorical.from_codes(np.asarray(d["reason"], dtype=np.int64), categories=reasons),
        },
        copy=False,
    )
    s = raw["state"]
    cwnd = pd.DataFrame(
        {
            "flow": names(s["flow"], flow_cat, flow_names),
            "conn": s.get("conn", np.zeros(len(s["t"]), dtype=np.uint8)),
            "t": s["t"],
            "cwnd_pkts": s["cwnd_pkts"],
            "ssthresh_pkts": s["ssthresh_pkts"],
            "srtt_s": s["srtt_s"],
            "rttvar_s": s["rttvar_s"],
            "rto_s": s["rto_s"],
            "inflight_pkts": s["inflight_pkts"],
            "sacked_pkts": s["sacked_pkts"],
            "lost_pkts": s["lost_pkts"],
            "retrans_pkts": s["retrans_pkts"],
            "ca_state": pd.Categorical.from_codes(np.asarray(s["ca_state"], dtype=np.int64), categories=list(CA_STATES)),
            "pacing_rate_bps": s["pacing_rate_bps"],
            "delivered_pkts": s["delivered_pkts"],
        },
        copy=False,
    )
    f = raw["flows"]
    flows = pd.DataFrame({k: (list(v) if isinstance(v, list) else v) for k, v in f.items()})
    duration = (flows["end_s"] - flows["start_s"]).clip(lower=1e-12)
    flows["goodput_bps"] = flows["bytes_delivered"] * 8.0 / duration
    # Data packets dropped (queues and loss models) over data packets sent; for TCP
    # retransmissions count as packets sent, as a packet capture would count them.
    sent = flows["pkts_sent"].to_numpy(dtype=float)
    flows["loss_rate"] = np.where(sent > 0, flows["pkts_dropped"].to_numpy(dtype=float) / np.maximum(sent, 1), np.nan)
    flows = flows.merge(delay_stats(packets, flow_names), on="flow", how="left")
    return Run(packets=packets, flows=flows, cwnd=cwnd, queue=queue, drops=drops, meta={"stats": dict(raw["stats"])})
