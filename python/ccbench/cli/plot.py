"""``ccbench plot RUN_DIR [--what ...]``: figures of a saved run.

A figure with nothing to show is not written: the command says why in one line and
exits 1 when that figure was asked for (``--what``); without ``--what`` it draws every
figure the run has data for and notes the others. Unknown names (``--what``,
``--flow``, ``--link``, ``--format``, ``--bin``) are usage errors: one line, exit 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ccbench.cli.errors import fail

WHAT = ("goodput", "delay", "cwnd", "queue", "decomposition")
#: drawn when --what is not given
DEFAULT_WHAT = ("goodput", "delay", "cwnd", "queue")
FORMATS = ("png", "svg", "pdf")


def plot_cmd(
    run_dir: Path = typer.Argument(..., help="A run directory written by `ccbench run` or `Run.save`.", show_default=False),
    what: Optional[List[str]] = typer.Option(
        None, "--what", "-w", show_default=False, metavar="FIGURE",
        help=f"Figure to draw, repeatable: {', '.join(WHAT)}. Default: {', '.join(DEFAULT_WHAT)} (those the run has data for)."),
    flow: Optional[List[str]] = typer.Option(
        None, "--flow", show_default=False, metavar="FLOW",
        help="Only this flow, repeatable; a scenario name selects all its flows (voip: voip.down and voip.up; web: web[0], web[1], ...)."),
    link: Optional[List[str]] = typer.Option(None, "--link", show_default=False, metavar="LINK", help="Queue figure: only this link, repeatable."),
    bin: Optional[str] = typer.Option(
        None, "--bin", show_default=False, metavar="DURATION",
        help="Goodput figure: bin width, a duration with unit (e.g. 500ms). Default: about 60 bins over the run."),
    fmt: str = typer.Option("png", "--format", "-f", metavar="FORMAT", help=f"Image format: {', '.join(FORMATS)}."),
    out: Path = typer.Option(None, "--out", "-o", metavar="DIR", help="Output directory (default: RUN_DIR/plots)."),
) -> None:
    """Draw figures of a saved run: goodput over time per flow, the delay CDF and CCDF,
    cwnd traces, queue occupancy (with its limit, and in ms at the link rate), and the
    sender/network/receiver delay decomposition.

    Example: ccbench plot runs/adsl --what delay --what queue --flow voip --format svg
    """
    from ccbench.cli.quantities import duration_s
    from ccbench.plots import NothingToPlot, UnknownSelection

    asked = list(what or [])
    bad = [w for w in asked if w not in WHAT]
    if bad:
        raise fail(f"--what: {bad[0]!r} is not a figure (accepted: {', '.join(WHAT)})")
    if fmt not in FORMATS:
        raise fail(f"--format: {fmt!r} is not accepted (accepted: {', '.join(FORMATS)})")
    bin_s = None if bin is None else duration_s(bin, "--bin")
    from ccbench.run import Run

    run = Run.load(run_dir)
    plots = run.plot
    try:
        flows = plots.select_flows(flow) if flow else None
    except UnknownSelection as e:
        raise fail(f"--flow: {e}")
    target = out or Path(run_dir) / "plots"
    target.mkdir(parents=True, exist_ok=True)
    missing = 0
    for w in asked or DEFAULT_WHAT:
        try:
            if w == "decomposition":
                paths = _decomposition(plots, flows, target, fmt)
            else:
                path = target / f"{w}.{fmt}"
                if w == "goodput":
                    plots.goodput(flows=flows, bin=bin_s, path=path)
                elif w == "delay":
                    plots.delay(flows=flows, path=path)
                elif w == "cwnd":
                    plots.cwnd(flows=flows, path=path)
                else:
                    plots.queue(links=link or None, path=path)
                paths = [path]
        except UnknownSelection as e:
            raise fail(f"--link: {e}" if w == "queue" else f"--flow: {e}")
        except NothingToPlot as e:
            if asked:
                typer.echo(f"error: {w}: not written: {e}", err=True)
                missing += 1
            else:
                typer.echo(f"note: {w}: not drawn: {e}")
            continue
        for p in paths:
            typer.echo(f"wrote {p}")
        for n in plots.notes:
            typer.echo(f"note: {w}: {n}")
    if missing:
        raise typer.Exit(1)


def _decomposition(plots, flows, target: Path, fmt: str) -> list[Path]:
    """One figure per selected flow with messages (``decomposition-FLOW.fmt``), or
    ``decomposition.fmt`` of the first such flow when no --flow was given."""
    if flows is None:
        path = target / f"decomposition.{fmt}"
        plots.decomposition(path=path)
        return [path]
    from ccbench.plots import NothingToPlot

    paths, skipped = [], []
    for f in flows:
        try:
            path = target / f"decomposition-{f}.{fmt}"
            plots.decomposition(flow=f, path=path)
            paths.append(path)
        except NothingToPlot as e:
            skipped.append(str(e))
    if not paths:
        raise NothingToPlot("; ".join(skipped))
    plots.notes = skipped
    return paths


def register(app: typer.Typer) -> None:
    app.command("plot")(plot_cmd)
