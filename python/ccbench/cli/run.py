"""``ccbench run`` and ``ccbench validate``."""

from __future__ import annotations

from pathlib import Path

import typer

from ccbench.cli.errors import fail
from ccbench.fmt import fmt_pct, fmt_rate, fmt_time


def flow_table(run, title: str):
    """The per-flow table ``ccbench run`` prints (fits 100 columns; long flow names
    fold rather than widen it)."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    t.caption = "delay = t_deliver - t_write per message"
    for col in ("flow", "transport", "goodput", "loss", "p50", "p95", "p99", "max"):
        text = col in ("flow", "transport")
        t.add_column(col, justify="left" if text else "right", no_wrap=not text, overflow="fold")
    for r in run.flows.itertuples(index=False):
        transport = r.transport if not getattr(r, "cc", "") else f"{r.transport}/{r.cc}"
        t.add_row(
            str(r.flow), transport, fmt_rate(r.goodput_bps), fmt_pct(r.loss_rate),
            *(fmt_time(d, unit="ms") for d in (r.delay_p50_s, r.delay_p95_s, r.delay_p99_s, r.delay_max_s)),
        )
    return t


def run_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
    seed: int = typer.Option(None, "--seed", "-s", help="Run seed (default: the scenario's run.seed)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory to save the run in (Parquet tables + meta.json). Default: runs/<scenario>-seed<N>."),
    no_save: bool = typer.Option(False, "--no-save", help="Print the table only; do not save the run."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Simulate a scenario and print per-flow throughput, loss and delay percentiles.

    The run is saved before anything else is done with it, so nothing is lost:
    load it again with ``ccbench.Run.load(DIR)``.

    Example: ccbench run examples/adsl1_voip.toml --seed 3 --out runs/adsl
    """
    from ccbench.backends.sim import simulate
    from ccbench.cli.progress import sim_progress
    from ccbench.scenario import load_scenario

    sc = load_scenario(scenario)
    with sim_progress(f"simulating {scenario.name}", enabled=not quiet) as progress:
        run = simulate(sc, seed=seed, progress=progress)
    from ccbench.cli.progress import output_console

    console = output_console()
    if not no_save:
        target = out or Path("runs") / f"{scenario.stem}-seed{run.meta['seed']}"
        run.save(target)
    stats = run.meta["stats"]
    console.print(flow_table(run, f"{scenario.name}  seed {run.meta['seed']}"))
    console.print(
        f"[dim]{stats['events']:,} events in {stats['wall_s']:.2f} s wall "
        f"({stats['events'] / max(stats['wall_s'], 1e-9) / 1e6:.1f} M events/s)[/dim]"
    )
    if not no_save:
        console.print(f"saved to {target}")


def validate_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
) -> None:
    """Check a scenario file without running it: units, names, topology, routes.

    Prints "ok" and exits 0, or one line per problem and exits 2.
    """
    import json

    from ccbench.scenario import load_scenario

    sc = load_scenario(scenario)
    config = sc.to_sim_config()
    try:
        from ccbench import _core
    except ImportError:
        raise fail("the simulator extension is not built; run `make setup` (or `maturin develop --release`)") from None
    try:
        _core.validate(json.dumps(config))
    except _core.SimConfigError as e:
        # backends.sim (and pandas with it) only when there is an error to explain.
        from ccbench.backends.sim import user_facing_error

        raise user_facing_error(e, config) from None
    typer.echo(f"ok: {scenario} ({len(config['flows'])} flows)")


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("validate")(validate_cmd)
