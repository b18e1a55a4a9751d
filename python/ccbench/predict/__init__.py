"""The analytical models driven by a scenario: ``ccbench.predict(scenario) -> DataFrame``.

>>> import ccbench
>>> scn = ccbench.load_scenario("examples/emu/reno_10mbit.toml")          # doctest: +SKIP
>>> ccbench.predict(scn)[["flow", "model", "valid", "goodput_bps", "why_not"]]   # doctest: +SKIP

One row per flow and model, with the columns of ``Run.flows`` where they mean the same
(``goodput_bps``, ``delay_p50_s``, ``delay_p95_s``, ``delay_p99_s``, ``completion_s``)
plus ``model``, ``valid`` and ``why_not`` and the inputs each row used (``loss_rate`` =
p, ``loss_source``, ``rtt_s``, ``t0_s``, ``b``, ``w_max_pkts``). Which models apply is
decided per flow (:mod:`.rows`); every input is derived from the scenario
(:mod:`.inputs`, :mod:`.path`).

Where p comes from (``loss_source``):

* ``scenario``: the forward path has a random-loss model (Bernoulli, periodic,
  Gilbert-Elliott); p is its loss rate and the RTT the base RTT of the topology;
* ``sim`` / ``emu``: otherwise the losses are the flows' own (drop-tail, AQM): the
  scenario is run (``loss_from="sim"``, the default, or ``"emu"``) and each flow's
  measured loss rate, median RTT and median RTO are the inputs; pass ``run=`` to reuse
  a run you have; ``loss_from="scenario"`` runs nothing and leaves those rows invalid;
* ``given``: ``loss=`` sets p for every flow (what-if).
"""

from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np
import pandas as pd

from .inputs import FlowInputs, flow_inputs
from .rows import COLUMNS, MODEL_NAMES, rows_for

__all__ = ["predict", "predict_and_run", "prepare", "measured_inputs", "measured_from_rows", "COLUMNS", "MODEL_NAMES", "LOSS_FROM", "FlowInputs"]

LOSS_FROM = ("sim", "emu", "scenario")


def measured_from_rows(rows) -> dict[str, tuple[float, float, float, float]]:
    """:func:`measured_inputs` from plain flow rows (dicts with the ``Run.flows`` columns,
    as a sweep stores them), the median over rows of the same flow (seeds). No RTO is
    stored there: T0 is then RTT + min_rto."""
    df = pd.DataFrame(list(rows))
    out = {}
    if not len(df) or "flow" not in df.columns:
        return out
    for flow, g in df.groupby("flow", sort=False):
        def med(col):
            return float(pd.to_numeric(g[col], errors="coerce").median()) if col in g.columns else math.nan

        sent, events = med("pkts_sent"), med("loss_events")
        p = med("loss_rate")
        out[str(flow)] = (0.0 if not math.isfinite(p) else p, med("rtt_p50_s"), math.nan,
                          events / sent if sent > 0 and math.isfinite(events) else math.nan)
    return out


def measured_inputs(run) -> dict[str, tuple[float, float, float, float]]:
    """Per flow name: (loss rate, median RTT [s], median RTO [s], loss-indication rate)
    measured in ``run``. The loss-indication rate is loss events (fast recoveries and
    timeouts) per packet sent: the p PFTK measured in its traces ("the ratio of loss
    indications to packets sent"); on drop-tail queues losses come in bursts and it is
    well below the packet loss rate."""
    out = {}
    rto = {}
    if len(run.cwnd):
        c = run.cwnd[["flow", "rto_s"]].copy()
        c["flow"] = c["flow"].astype(str)
        rto = c.groupby("flow")["rto_s"].median().to_dict()
    for r in run.flows.itertuples(index=False):
        name = str(r.flow)
        p = float(getattr(r, "loss_rate", math.nan))
        sent = float(getattr(r, "pkts_sent", math.nan))
        events = float(getattr(r, "loss_events", math.nan))
        ind = events / sent if sent > 0 and math.isfinite(events) else math.nan
        out[name] = (0.0 if not math.isfinite(p) else p, float(getattr(r, "rtt_p50_s", math.nan)),
                     float(rto.get(name, math.nan)), ind)
    return out


def _run_for_loss(scenario, loss_from: str, seed: Optional[int], duration_s: Optional[float]):
    scn = scenario
    if duration_s is not None:
        scn = scenario.with_values({"run.duration": f"{round(duration_s * 1e9)}ns"})
    if loss_from == "emu":
        from ccbench.emu.runner import emulate

        return emulate(scn, seed=seed)
    from ccbench.backends.sim import simulate

    return simulate(scn, seed=seed)


def prepare(scenario, *, loss_from: str = "sim", run=None, loss: Optional[float] = None,
            seed: Optional[int] = None, duration_s: Optional[float] = None,
            measured: Optional[dict] = None) -> tuple[list[FlowInputs], Any]:
    """The inputs of every flow with p set; runs the scenario when a flow needs a measured p.
    ``measured`` (flow -> (p, RTT, RTO, loss-indication rate), as :func:`measured_inputs`
    returns, e.g. medians over a sweep point's seeds) replaces the run; its source is
    ``loss_from``. Returns ``(inputs, run)`` (``run`` is None when nothing was run or given)."""
    if loss_from not in LOSS_FROM:
        raise ValueError(f"loss_from={loss_from!r} is not accepted (accepted: {', '.join(LOSS_FROM)})")
    if loss is not None and not (isinstance(loss, (int, float)) and 0 <= loss < 1):
        raise ValueError(f"loss={loss!r} is not accepted (accepted: a probability 0 <= p < 1)")
    fis = flow_inputs(scenario)
    if loss is not None:
        for fi in fis:
            fi.with_loss(float(loss), "given")
        return fis, run
    need_run = []
    for fi in fis:
        p, notes = fi.path.loss()
        fi.notes.extend(notes)
        if fi.path.has_random_loss() and p is not None:
            fi.with_loss(p, "scenario")
        else:
            need_run.append(fi)
    if measured is not None:
        source = loss_from
    else:
        if need_run and run is None and loss_from != "scenario":
            run = _run_for_loss(scenario, loss_from, seed, duration_s)
        measured = measured_inputs(run) if run is not None else {}
        source = (run.meta.get("backend", loss_from) if run is not None else "")
    for fi in need_run:
        if fi.flow in measured:
            p, rtt, rto, ind = measured[fi.flow]
            fi.with_loss(p, source, rtt_s=rtt if fi.transport == "tcp" else None,
                         t0_s=rto if fi.transport == "tcp" else None)
            if math.isfinite(ind) and fi.transport == "tcp":
                fi.p_indication = ind
        else:
            fi.with_loss(None, "")
    return fis, run


def predict(scenario, *, loss_from: str = "sim", run=None, loss: Optional[float] = None,
            deadline_s: float = 0.15, seed: Optional[int] = None, duration_s: Optional[float] = None,
            measured: Optional[dict] = None) -> pd.DataFrame:
    """Every applicable model's answer for every flow of ``scenario`` (see the module doc).

    ``deadline_s`` is the playout deadline of Brosh's late fraction P{D > deadline}.
    ``duration_s`` shortens the run that measures p (default: the scenario's duration).
    :func:`predict_and_run` also returns the run that measured p.
    """
    return predict_and_run(scenario, loss_from=loss_from, run=run, loss=loss, deadline_s=deadline_s, seed=seed,
                           duration_s=duration_s, measured=measured)[0]


def predict_and_run(scenario, *, loss_from: str = "sim", run=None, loss: Optional[float] = None,
                    deadline_s: float = 0.15, seed: Optional[int] = None,
                    duration_s: Optional[float] = None, measured: Optional[dict] = None) -> tuple[pd.DataFrame, Any]:
    """:func:`predict` and the run that measured p (None when none was needed or given)."""
    fis, run = prepare(scenario, loss_from=loss_from, run=run, loss=loss, seed=seed, duration_s=duration_s,
                       measured=measured)
    rows = [row for fi in fis for row in rows_for(fi, deadline_s)]
    df = pd.DataFrame(rows)
    for c in COLUMNS:
        if c not in df.columns:
            df[c] = np.nan if c not in ("why_not", "note", "loss_source") else ""
    df = df[list(COLUMNS)]
    df["valid"] = df["valid"].astype(bool)
    for fi in fis:
        if fi.notes:
            m = df["flow"] == fi.flow
            df.loc[m, "note"] = df.loc[m, "note"].str.cat(["; ".join(fi.notes)] * int(m.sum()), sep=" ").str.strip()
    return df, run
