"""One scenario, several answers side by side: ``ccbench compare --ways sim,emu,model,estimate``.

* ``sim`` / ``emu``: the per-flow measurements of a run (``Run.flows``, plus the mean
  delay and the sender-stack buffering probability from the messages' four timestamps);
* ``model``: every valid row of :func:`ccbench.predict.predict` (one way per model,
  ``model:pftk`` ...), p and RTT measured in the simulator run where the path has no
  random-loss model;
* ``estimate``: for each CBR flow, Lübben & Fidler's service-curve estimate from the
  flow's own timestamps: the train is sampled and tested as a probe train
  (:func:`ccbench.netcal.probing.analyse_train`; stationarity and independence), the
  (1 - xi)-quantile of its delay gives the latency-rate curve S(t) = r [t - Δ^ξ]^+ with
  violation probability ε = xi, and the flow's own arrivals through that curve give
  the per-packet delay bound (:func:`ccbench.netcal.delay_bounds`), shown next to the observed
  (1 - xi)-quantile.

The long table has one row per (flow, metric, way) with ``vs_sim`` = (value - sim) /
sim and, for model ways, ``in_band``: whether model/sim lies within the model's known
accuracy (:mod:`.accuracy`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pandas as pd

from .accuracy import in_band

__all__ = ["WAYS", "METRICS", "Comparison", "available_ways", "run_metrics", "model_metrics", "estimate_metrics",
           "compare_long", "replica_means", "shown_flows", "side_by_side", "plot_comparison"]

WAYS = ("sim", "emu", "model", "estimate")

#: metric -> (label, unit kind)
METRICS: dict[str, tuple[str, str]] = {
    "goodput_bps": ("goodput", "rate"),
    "loss_rate": ("loss rate", "pct"),
    "rtt_p50_s": ("RTT p50", "ms"),
    "delay_mean_s": ("delay mean", "ms"),
    "delay_p50_s": ("delay p50", "ms"),
    "delay_p95_s": ("delay p95", "ms"),
    "delay_p99_s": ("delay p99", "ms"),
    "delay_q_s": ("delay (1-ξ) quantile / bound", "ms"),
    "completion_s": ("completion", "s"),
    "p_sender_buffering": ("P(sender buffering)", "frac"),
}


def available_ways() -> tuple[list[str], dict[str, str]]:
    """The ways this machine can run and, for the others, why not (emu needs root, TUN, ip, ccemu)."""
    ways, why = ["sim", "model", "estimate"], {}
    try:
        from ccbench.emu import EmulationError, require

        try:
            require()
            ways.insert(1, "emu")
        except EmulationError as e:
            why["emu"] = str(e)
    except ImportError as e:  # pragma: no cover
        why["emu"] = str(e)
    return ways, why


def _delays(run) -> dict[str, np.ndarray]:
    pk = run.packets
    if not len(pk):
        return {}
    d = (pk["t_deliver"] - pk["t_write"]).to_numpy()
    flows = pk["flow"].astype(str).to_numpy()
    ok = np.isfinite(d)
    return {f: d[ok & (flows == f)] for f in np.unique(flows[ok])}


def run_metrics(run, way: str, xi: float = 0.05) -> pd.DataFrame:
    """Per-flow metrics of a run as (flow, metric, way, value) rows."""
    from ccbench.netcal import sender_buffering_probability

    rows = []
    delays = _delays(run)
    pk = run.packets
    for r in run.flows.itertuples(index=False):
        flow = str(r.flow)
        for m in ("goodput_bps", "loss_rate", "rtt_p50_s", "delay_p50_s", "delay_p95_s", "delay_p99_s", "completion_s"):
            rows.append((flow, m, way, float(getattr(r, m, math.nan))))
        d = delays.get(flow)
        if d is not None and d.size:
            rows.append((flow, "delay_mean_s", way, float(d.mean())))
            k = min(d.size, max(1, int(math.ceil((1 - xi) * d.size - 1e-9))))
            rows.append((flow, "delay_q_s", way, float(np.partition(d, k - 1)[k - 1])))
            f = pk[(pk["flow"].astype(str) == flow) & pk["t_deliver"].notna()]
            rows.append((flow, "p_sender_buffering", way, sender_buffering_probability(
                f[["t_write", "t_first_tx", "t_arrive", "t_deliver"]])))
    return pd.DataFrame(rows, columns=["flow", "metric", "way", "value"])


def model_metrics(pred: pd.DataFrame) -> pd.DataFrame:
    """Valid prediction rows as (flow, metric, way, value), way ``model:NAME``."""
    rows = []
    for r in pred[pred["valid"]].itertuples(index=False):
        for m in ("goodput_bps", "delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_p99_s", "completion_s",
                  "p_sender_buffering"):
            v = float(getattr(r, m))
            if math.isfinite(v):
                rows.append((r.flow, m, f"model:{r.model}", v))
    return pd.DataFrame(rows, columns=["flow", "metric", "way", "value"])


@dataclass
class FlowEstimate:
    flow: str
    rate_bps: float
    status: str
    quantile_s: float = math.nan
    bound_s: float = math.nan
    observed_q_s: float = math.nan
    reason: str = ""


def estimate_metrics(scenario, run, xi: float = 0.05) -> tuple[pd.DataFrame, list[FlowEstimate]]:
    """Lübben & Fidler's estimate for every CBR flow of ``run`` (see the module doc)."""
    from ccbench.netcal import delay_bounds, estimate_service_curve
    from ccbench.netcal.probing import analyse_train, with_config
    from ccbench.netcal.simprobe import SIM_PROBING
    from ccbench.predict.inputs import flow_inputs

    # The flow's first 10 % is its warm-up (slow start of its connection and the
    # cross traffic), as a probe train's would be.
    config = with_config(SIM_PROBING, warmup_fraction=0.1)
    cbr = {fi.flow: fi for fi in flow_inputs(scenario) if fi.kind == "cbr"}
    pk = run.packets
    rows, out = [], []
    for flow, fi in cbr.items():
        f = pk[(pk["flow"].astype(str) == flow)].sort_values("t_write")
        f = f[f["t_deliver"].notna()]
        if len(f) < 2:
            out.append(FlowEstimate(flow, fi.cbr_rate_bps, "no_data", reason="no delivered messages"))
            continue
        t = f["t_write"].to_numpy()
        d = f["t_deliver"].to_numpy() - t
        outcome = analyse_train(fi.cbr_rate_bps, d, xi, t - t[0], config, np.random.default_rng(config.seed))
        k = min(d.size, max(1, int(math.ceil((1 - xi) * d.size - 1e-9))))
        observed = float(np.partition(d, k - 1)[k - 1])
        fe = FlowEstimate(flow, fi.cbr_rate_bps, outcome.status, observed_q_s=observed, reason=outcome.reason)
        if outcome.accepted:
            est = estimate_service_curve([fi.cbr_rate_bps], [outcome.quantile_s], xi)
            # The per-packet bound of the flow's own arrivals (exact for a step trace; the
            # envelope bound on a log lag grid adds up to a grid step of slack per lag).
            b = delay_bounds(t, f["bytes"].to_numpy(), est)
            fe.quantile_s, fe.bound_s = outcome.quantile_s, b.max_per_packet_delay_s
            rows.append((flow, "delay_q_s", "estimate", fe.bound_s))
        out.append(fe)
    return pd.DataFrame(rows, columns=["flow", "metric", "way", "value"]), out


_REPLICA = re.compile(r"^(.*)\[(\d+)\]$")


def replica_means(df: pd.DataFrame) -> pd.DataFrame:
    """Rows ``NAME[*]``: the mean over the replicas ``NAME[0]``, ``NAME[1]``, ... of a
    ``count`` flow, per metric and way. Single transfers of a random-loss path scatter
    widely (one loss more or less); the models predict the mean."""
    base = df["flow"].map(lambda f: (m.group(1) if (m := _REPLICA.match(str(f))) else None))
    rep = df[base.notna()].assign(flow=base[base.notna()] + "[*]")
    if not len(rep):
        return df.iloc[0:0]
    return rep.groupby(["flow", "metric", "way"], as_index=False, sort=False)["value"].mean()


def compare_long(parts: list[pd.DataFrame]) -> pd.DataFrame:
    """Concatenates (flow, metric, way, value) rows, adds the replica means
    (:func:`replica_means`), ``vs_sim`` and ``in_band``."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return pd.DataFrame(columns=["flow", "metric", "way", "value", "vs_sim", "in_band"])
    df = pd.concat(parts, ignore_index=True)
    df = df[np.isfinite(df["value"].astype(float))].reset_index(drop=True)
    df = pd.concat([df, replica_means(df)], ignore_index=True)
    sim = df[df["way"] == "sim"].set_index(["flow", "metric"])["value"]
    ref = [sim.get((f, m), math.nan) for f, m in zip(df["flow"], df["metric"])]
    ref = np.asarray(ref, dtype=float)
    val = df["value"].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        df["vs_sim"] = np.where(np.isfinite(ref) & (ref != 0), (val - ref) / ref, np.nan)
    band = []
    for way, metric, rel in zip(df["way"], df["metric"], df["vs_sim"]):
        if not way.startswith("model:"):
            band.append(None)
            continue
        from .accuracy import KNOWN_ACCURACY

        model = way.split(":", 1)[1]
        acc = KNOWN_ACCURACY.get(model)
        band.append(in_band(model, 1.0 + rel) if acc is not None and acc.metric == metric else None)
    df["in_band"] = band
    return df


def side_by_side(long: pd.DataFrame) -> pd.DataFrame:
    """Wide view: one row per (flow, metric), one column per way."""
    if not len(long):
        return pd.DataFrame()
    order = {m: i for i, m in enumerate(METRICS)}
    wide = long.pivot_table(index=["flow", "metric"], columns="way", values="value", aggfunc="first", sort=False)
    wide = wide.reset_index()
    wide["_o"] = wide["metric"].map(order)
    flows = list(dict.fromkeys(long["flow"]))
    wide["_f"] = wide["flow"].map({f: i for i, f in enumerate(flows)})
    return wide.sort_values(["_f", "_o"]).drop(columns=["_o", "_f"]).reset_index(drop=True)


@dataclass
class Comparison:
    long: pd.DataFrame
    prediction: Optional[pd.DataFrame] = None
    runs: dict[str, Any] = field(default_factory=dict)
    estimates: list[FlowEstimate] = field(default_factory=list)


def shown_flows(long: pd.DataFrame, max_replicas: int = 3) -> list[str]:
    """Flows to show: every flow, but a ``count`` flow with more than ``max_replicas``
    replicas by its mean row ``NAME[*]`` only."""
    names = list(dict.fromkeys(long["flow"]))
    groups: dict[str, int] = {}
    for f in names:
        m = _REPLICA.match(str(f))
        if m:
            groups[m.group(1)] = groups.get(m.group(1), 0) + 1
    out = []
    for f in names:
        m = _REPLICA.match(str(f))
        if m and groups[m.group(1)] > max_replicas:
            continue
        if str(f).endswith("[*]") and groups.get(str(f)[:-3], 0) <= max_replicas:
            continue
        out.append(f)
    return out


def plot_comparison(long: pd.DataFrame, path, max_flows: int = 12):
    """Per flow: goodput by way (left) and delay p50/p95/p99 by way (right), PNG/SVG."""
    from pathlib import Path

    from ccbench.plots import new_figure, save_figure

    long = long[long["flow"].isin(shown_flows(long))]
    flows = list(dict.fromkeys(long["flow"]))[:max_flows]
    n = max(len(flows), 1)
    fig, axes = new_figure(n, 2, figsize=(11, 2.6 * n), squeeze=False)
    for (ax_g, ax_d), flow in zip(axes, flows):
        f = long[long["flow"] == flow]
        g = f[f["metric"] == "goodput_bps"]
        ways = list(dict.fromkeys(g["way"]))
        ax_g.barh(range(len(ways)), g["value"].to_numpy() / 1e6, color=["C0" if w in ("sim", "emu") else "C2" for w in ways])
        ax_g.set_yticks(range(len(ways)), ways, fontsize=8)
        ax_g.set_xlabel("goodput (Mbit/s)")
        ax_g.set_title(flow, loc="left", fontsize=10)
        d = f[f["metric"].isin(["delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_q_s"])]
        dways = list(dict.fromkeys(d["way"]))
        for m, mk in (("delay_p50_s", "o"), ("delay_p95_s", "s"), ("delay_p99_s", "^"), ("delay_q_s", "x")):
            dm = d[d["metric"] == m]
            ys = [dways.index(w) for w in dm["way"]]
            ax_d.scatter(dm["value"].to_numpy() * 1e3, ys, marker=mk, label=METRICS[m][0], zorder=3)
        ax_d.set_yticks(range(len(dways)), dways, fontsize=8)
        ax_d.set_xlabel("delay (ms)")
        if dways:
            ax_d.legend(fontsize=7, loc="lower right")
        else:
            ax_d.text(0.5, 0.5, "no per-message delays (bulk flow)", ha="center", va="center", transform=ax_d.transAxes)
        for ax in (ax_g, ax_d):
            ax.grid(alpha=0.3)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    save_figure(fig, path, dpi=110)
    return path
