"""``ccbench compare``: one scenario answered several ways, side by side.

``--ways sim,emu,model,estimate`` (default: every way this machine can run; the
emulator needs root and network namespaces): the simulator, the emulator (real kernel
TCP), the analytical models (:mod:`ccbench.predict`) and Lübben & Fidler's
service-curve estimate from each CBR flow's timestamps. Per flow and metric one column
per way and the difference of each to the simulator; model rows are marked against
the model's known accuracy (:mod:`ccbench.predict.accuracy`). With sim and emu the
cwnd traces of both are plotted together (``compare_runs`` / ``plot_cwnd``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ccbench.cli.errors import fail
from ccbench.fmt import fmt_number, fmt_pct, fmt_rate, fmt_time

#: (column of run.flows, label, unit kind)
METRICS = (
    ("goodput_bps", "goodput", "rate"),
    ("rtt_p50_s", "RTT p50", "ms"),
    ("rtt_p95_s", "RTT p95", "ms"),
    ("loss_rate", "loss rate", "pct"),
    ("delay_p50_s", "delay p50", "ms"),
    ("delay_p95_s", "delay p95", "ms"),
    ("delay_p99_s", "delay p99", "ms"),
)


def compare_runs(sim, emu) -> pd.DataFrame:
    """One row per (flow, metric): ``sim``, ``emu``, ``rel_diff`` = (emu - sim) / sim
    (NaN when either is NaN or sim is 0)."""
    rows = []
    fs = sim.flows.set_index("flow")
    fe = emu.flows.set_index("flow")
    for flow in [f for f in fs.index if f in fe.index]:
        for col, label, unit in METRICS:
            a = float(fs.at[flow, col]) if col in fs.columns else math.nan
            b = float(fe.at[flow, col]) if col in fe.columns else math.nan
            rel = (b - a) / a if (math.isfinite(a) and math.isfinite(b) and a != 0) else math.nan
            rows.append({"flow": flow, "metric": label, "column": col, "unit": unit, "sim": a, "emu": b, "rel_diff": rel})
    return pd.DataFrame(rows, columns=["flow", "metric", "column", "unit", "sim", "emu", "rel_diff"])


def _fmt(x: float, unit: str) -> str:
    if unit == "rate":
        return fmt_rate(x)
    if unit == "ms":
        return fmt_time(x, unit="ms")
    return fmt_pct(x)


def compare_table(df: pd.DataFrame, title: str) -> Table:
    t = Table(title=title, title_justify="left")
    for col in ("flow", "metric", "sim", "emu", "emu vs sim"):
        t.add_column(col, justify="left" if col in ("flow", "metric") else "right", no_wrap=True)
    last = None
    for r in df.itertuples(index=False):
        rel = "-" if not math.isfinite(r.rel_diff) else f"{r.rel_diff * 100:+.1f}%"
        t.add_row(str(r.flow) if r.flow != last else "", r.metric, _fmt(r.sim, r.unit), _fmt(r.emu, r.unit), rel)
        last = r.flow
    return t


def plot_cwnd(sim, emu, path: str | Path):
    """cwnd over time of every TCP flow, simulator and kernel on the same axes (PNG)."""
    from ccbench.plots import new_figure

    flows = sorted(set(sim.cwnd["flow"].astype(str)) | set(emu.cwnd["flow"].astype(str)))
    n = max(len(flows), 1)
    fig, axes = new_figure(n, 1, figsize=(9, 2.8 * n), sharex=True, squeeze=False)
    for ax, flow in zip(axes[:, 0], flows):
        for run, label, style in ((sim, "simulator", "-"), (emu, "kernel (emulator)", "-")):
            c = run.cwnd[run.cwnd["flow"].astype(str) == flow]
            if len(c):
                ax.step(c["t"].to_numpy(), c["cwnd_pkts"].to_numpy(), style, where="post", lw=1, label=label)
        ax.set_ylabel("cwnd (packets)")
        ax.set_title(flow, loc="left", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("time (s)")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    return path


def _value(x: float, unit: str) -> str:
    if unit == "s":
        return fmt_time(x)
    if unit == "frac":
        return fmt_number(x)
    return _fmt(x, unit)


def ways_table(long: pd.DataFrame, title: str, xi: float) -> Table:
    """Per flow and metric: the value of each way and its difference to the simulator
    (a ``count`` flow with many replicas by the mean over them, ``NAME[*]``)."""
    from ccbench.predict.compare import METRICS, shown_flows

    long = long[long["flow"].isin(shown_flows(long))]
    t = Table(title=title, title_justify="left")
    t.caption = ("vs sim = (way - sim) / sim; model rows: [green]in[/green] / [red]out of[/red] the model's known "
                 f"accuracy (ccbench.predict.accuracy); delay (1-ξ) quantile / bound: ξ = {xi:g}, sim/emu observed, "
                 "estimate = Lübben & Fidler bound; NAME\\[*] = mean over a count flow's replicas (all in compare.csv)")
    for col in ("flow", "metric", "way", "value", "vs sim"):
        t.add_column(col, justify="left" if col in ("flow", "metric", "way") else "right", no_wrap=True)
    order = {m: i for i, m in enumerate(METRICS)}
    last_flow = last_metric = None
    flows = list(dict.fromkeys(long["flow"]))
    df = long.assign(_f=long["flow"].map({f: i for i, f in enumerate(flows)}), _m=long["metric"].map(order),
                     _w=long["way"].map(lambda w: {"sim": 0, "emu": 1, "estimate": 3}.get(w, 2)))
    for r in df.sort_values(["_f", "_m", "_w"], kind="stable").itertuples(index=False):
        label, unit = METRICS.get(r.metric, (r.metric, ""))
        label = escape(label)
        rel = "" if r.way == "sim" or not math.isfinite(r.vs_sim) else f"{r.vs_sim * 100:+.1f}%"
        if r.in_band is True:
            rel = f"[green]{rel}[/green]"
        elif r.in_band is False:
            rel = f"[red]{rel}[/red]"
        t.add_row(str(r.flow) if r.flow != last_flow else "",
                  label if (r.flow, r.metric) != (last_flow, last_metric) else "", r.way, _value(r.value, unit), rel)
        last_flow, last_metric = r.flow, r.metric
    return t


def compare_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
    ways: str = typer.Option(None, "--ways", help="Comma-separated ways: sim, emu, model, estimate. Default: every way "
                             "this machine can run (emu needs root, /dev/net/tun, ip and ccemu)."),
    seed: int = typer.Option(None, "--seed", "-s", help="Run seed (default: the scenario's run.seed)."),
    xi: float = typer.Option(0.05, "--xi", help="Violation probability of the service-curve estimate: its delay "
                             "bound is set against the observed (1-xi)-quantile."),
    deadline: str = typer.Option("150ms", "--deadline", help="Playout deadline of the models' late fraction."),
    duration: str = typer.Option(None, "--duration", help='Simulated/emulated time (e.g. "30s"; default: the '
                                 "scenario's)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory for the runs (sim/, emu/), compare.csv, "
                             "prediction.csv and the figures. Default: runs/<scenario>-compare-seed<N>."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """One scenario four ways: simulator, kernel (emulator), analytical models, service-curve estimate.

    Per flow: goodput, loss, RTT, delay mean and percentiles, completion time, each way side by side with its difference to the simulator; model rows marked against the model's known accuracy. Figure: per flow, goodput and delay percentiles by way.

    Examples:

      ccbench compare examples/brosh_droptail.toml --ways sim,model --duration 40s

      sudo ccbench compare examples/emu/reno_10mbit.toml   # every way
    """
    from ccbench.backends.sim import SimulationError, simulate
    from ccbench.cli.progress import sim_progress
    from ccbench.predict import options
    from ccbench.predict.compare import (WAYS, available_ways, compare_long, estimate_metrics, model_metrics,
                                         plot_comparison, run_metrics)

    can, why = available_ways()
    if ways is None:
        chosen = can
    else:
        chosen = [w.strip() for w in ways.split(",") if w.strip()]
        bad = [w for w in chosen if w not in WAYS]
        if bad or not chosen:
            raise typer.BadParameter(f"--ways: {ways!r} is not accepted (accepted: a comma-separated list of "
                                     f"{', '.join(WAYS)})")
        for w in chosen:
            if w not in can:
                raise fail(f"--ways {w}: this machine cannot run it ({why.get(w, 'unavailable')})")
    if not (0 < xi < 1):
        raise typer.BadParameter(f"--xi: {xi!r} is not accepted (accepted: a probability 0 < xi < 1)")
    deadline_s = options.duration_s(deadline, "--deadline")
    duration_s = options.duration_s(duration, "--duration")
    from ccbench.cli.predict import load_for_models

    sc = load_for_models(scenario)
    if sc is None:
        raise fail(f"{scenario}: the scenario has no flows (accepted: a scenario with [[flows]])")
    if duration_s is not None:
        sc = sc.with_values({"run.duration": f"{round(duration_s * 1e9)}ns"})
    console = Console(width=max(Console().width, 120))
    runs: dict = {}
    # The simulator run also measures p for the models and carries the timestamps the
    # estimate uses, so it runs whenever any of those ways is asked for.
    if any(w in chosen for w in ("sim", "model", "estimate")):
        try:
            with sim_progress(f"simulating {scenario.name}", enabled=not quiet) as progress:
                runs["sim"] = simulate(sc, seed=seed, progress=progress)
        except SimulationError as e:
            raise fail(f"simulator: {e}")
    if "emu" in chosen:
        from ccbench.emu.runner import emulate
        from ccbench.emu import EmulationError

        try:
            with sim_progress(f"emulating {scenario.name}", enabled=not quiet) as progress:
                runs["emu"] = emulate(sc, seed=seed, progress=progress)
        except EmulationError as e:
            raise fail(f"emulator: {e}")
    seed_used = next(iter(runs.values())).meta["seed"]
    target = out or Path("runs") / f"{scenario.stem}-compare-seed{seed_used}"
    parts = []
    for way in ("sim", "emu"):
        if way in runs:
            runs[way].save(target / way)
            if way in chosen:
                parts.append(run_metrics(runs[way], way, xi))
    if "sim" not in chosen and "sim" in runs:
        parts.append(run_metrics(runs["sim"], "sim", xi))  # the reference column
    estimates = []
    if "model" in chosen:
        from ccbench.predict import predict

        pred = predict(sc, run=runs["sim"], deadline_s=deadline_s)
        pred.to_csv(target / "prediction.csv", index=False)
        parts.append(model_metrics(pred))
    if "estimate" in chosen:
        est_rows, estimates = estimate_metrics(sc, runs.get("emu") if "sim" not in runs else runs["sim"], xi)
        parts.append(est_rows)
    long = compare_long(parts)
    long.to_csv(target / "compare.csv", index=False)
    console.print(ways_table(long, f"{scenario.name}  seed {seed_used}: {', '.join(chosen)}", xi))
    if "model" in chosen:
        invalid = pred[~pred["valid"]]
        for (model, why_not), g in invalid.groupby(["model", "why_not"], sort=False):
            names = list(g["flow"])
            who = ", ".join(names) if len(names) <= 4 else f"{names[0]} .. {names[-1]} ({len(names)} flows)"
            console.print(escape(f"not applicable: {model} for {who}: {why_not}"), style="dim")
    for fe in estimates:
        if fe.status.startswith("accepted"):
            console.print(escape(
                f"estimate {fe.flow}: S(t) = {fmt_rate(fe.rate_bps)} [t - {fmt_time(fe.quantile_s)}]+, eps = {xi:g}; "
                f"delay bound {fmt_time(fe.bound_s)} vs observed (1-xi)-quantile {fmt_time(fe.observed_q_s)}"
                + (" (samples dependent)" if fe.status != "accepted" else "")))
        else:
            console.print(escape(f"estimate {fe.flow}: no service curve ({fe.status}: {fe.reason})"), style="yellow")
    if len(long):
        console.print(f"figure: {plot_comparison(long, target / 'compare.png')}")
    if "sim" in runs and "emu" in runs and (len(runs["sim"].cwnd) or len(runs["emu"].cwnd)):
        console.print(f"cwnd plot: {plot_cwnd(runs['sim'], runs['emu'], target / 'cwnd.png')}")
    if "emu" in runs:
        emu = runs["emu"]
        for d, v in emu.meta["emu"]["timing_error_ns"].items():
            p = v.get("percentiles", {})
            if v.get("count") and p.get("p99") is not None:
                console.print(f"[dim]emulator timing error {d}: p50 {fmt_time(p['p50'] / 1e9)}, "
                              f"p99 {fmt_time(p['p99'] / 1e9)}[/dim]")
        for msg in emu.meta["emu"]["ignored"]:
            console.print(f"[yellow]ignored by the emulator:[/yellow] {msg}")
    for w in ("emu",):
        if ways is None and w in why:
            console.print(f"[dim]not run: {w} ({why[w]})[/dim]")
    console.print(f"saved to {target}")


def register(app: typer.Typer) -> None:
    """Adds ``ccbench compare`` to the command line."""
    app.command("compare")(compare_cmd)
