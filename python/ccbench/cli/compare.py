"""``ccbench compare``: the simulator against the real kernel TCP on one scenario.

Runs the scenario in the simulator (``backends.sim.simulate``) and in the emulator
(``backends.emu.emulate``) with the same seed, prints per flow goodput, RTT
percentiles, loss rate and application-delay percentiles side by side with the
relative difference (emu - sim) / sim, and plots the cwnd traces of both together.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import typer
from rich.console import Console
from rich.table import Table

from ccbench.cli.errors import fail
from ccbench.fmt import fmt_pct, fmt_rate, fmt_time

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


def compare_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
    seed: int = typer.Option(None, "--seed", "-s", help="Run seed (default: the scenario's run.seed)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory for both runs (sim/, emu/), the table (compare.csv) and cwnd.png. Default: runs/<scenario>-compare-seed<N>."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bars."),
) -> None:
    """Simulator vs real kernel TCP: goodput, RTT, loss and delay side by side, cwnd plotted together.

    Needs what ``ccbench emu run`` needs (root, /dev/net/tun, ip, ccemu).

    Example: sudo ccbench compare examples/adsl1_voip.toml --seed 1
    """
    from ccbench.backends.emu import emulate
    from ccbench.backends.sim import SimulationError, simulate
    from ccbench.cli.progress import sim_progress
    from ccbench.emu import EmulationError, require
    from ccbench.scenario import load_scenario

    sc = load_scenario(scenario)
    try:
        require()
    except EmulationError as e:
        raise fail(str(e))
    try:
        with sim_progress(f"simulating {scenario.name}", enabled=not quiet) as progress:
            sim = simulate(sc, seed=seed, progress=progress)
    except SimulationError as e:
        raise fail(f"simulator: {e}")
    try:
        with sim_progress(f"emulating {scenario.name}", enabled=not quiet) as progress:
            emu = emulate(sc, seed=seed, progress=progress)
    except EmulationError as e:
        raise fail(f"emulator: {e}")
    target = out or Path("runs") / f"{scenario.stem}-compare-seed{sim.meta['seed']}"
    sim.save(target / "sim")
    emu.save(target / "emu")
    df = compare_runs(sim, emu)
    df.to_csv(target / "compare.csv", index=False)
    console = Console()
    console.print(compare_table(df, f"{scenario.name}  seed {sim.meta['seed']}: simulator vs kernel {emu.meta['versions'].get('kernel', '')}"))
    if len(sim.cwnd) or len(emu.cwnd):
        png = plot_cwnd(sim, emu, target / "cwnd.png")
        console.print(f"cwnd plot: {png}")
    timing = emu.meta["emu"]["timing_error_ns"]
    for d, v in timing.items():
        p = v.get("percentiles", {})
        if v.get("count") and p.get("p99") is not None:
            console.print(f"[dim]emulator timing error {d}: p50 {fmt_time(p['p50'] / 1e9)}, p99 {fmt_time(p['p99'] / 1e9)}[/dim]")
    for msg in emu.meta["emu"]["ignored"]:
        console.print(f"[yellow]ignored by the emulator:[/yellow] {msg}")
    console.print(f"saved to {target}")


def register(app: typer.Typer) -> None:
    """Adds ``ccbench compare`` to the command line."""
    app.command("compare")(compare_cmd)
