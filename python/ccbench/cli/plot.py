"""``ccbench plot RUN_DIR --what ...``: figures of a saved run."""

from __future__ import annotations

from pathlib import Path

import typer

from ccbench.cli.errors import fail

WHAT = ("delay", "cwnd", "queue", "decomposition")


def plot_cmd(
    run_dir: Path = typer.Argument(..., help="A run directory written by `ccbench run` or `Run.save`.", show_default=False),
    what: list[str] = typer.Option(["delay"], "--what", "-w", help=f"Figures to draw, repeatable: {', '.join(WHAT)}."),
    fmt: str = typer.Option("png", "--format", "-f", help="png or svg."),
    out: Path = typer.Option(None, "--out", "-o", help="Output directory (default: RUN_DIR/plots)."),
    flow: str = typer.Option(None, "--flow", help="Only this flow (delay, cwnd, decomposition)."),
) -> None:
    """Draw figures of a saved run: delay CCDFs, cwnd traces, queue occupancy, and the
    sender/network/receiver delay decomposition.

    Example: ccbench plot runs/adsl --what delay --what queue --format svg
    """
    from ccbench.run import Run

    bad = [w for w in what if w not in WHAT]
    if bad:
        raise fail(f"--what: {bad[0]!r} is not a figure (accepted: {', '.join(WHAT)})")
    if fmt not in ("png", "svg"):
        raise fail(f"--format: {fmt!r} is not accepted (accepted: png, svg)")
    run = Run.load(run_dir)
    target = out or Path(run_dir) / "plots"
    target.mkdir(parents=True, exist_ok=True)
    flows = [flow] if flow else None
    for w in what:
        path = target / f"{w}.{fmt}"
        if w == "delay":
            run.plot.delay_ccdf(flows=flows, path=path)
        elif w == "cwnd":
            run.plot.cwnd(flows=flows, path=path)
        elif w == "queue":
            run.plot.queue(path=path)
        else:
            run.plot.decomposition(flow=flow, path=path)
        typer.echo(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("plot")(plot_cmd)
