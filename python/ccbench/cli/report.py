"""``ccbench report RUN_OR_SWEEP_DIR``: one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import typer

from ccbench.fmt import fmt_bytes


def report_cmd(
    directory: Path = typer.Argument(..., metavar="RUN_OR_SWEEP_DIR", help="A run directory (ccbench run) or a sweep directory (ccbench sweep).", show_default=False),
    out: Path = typer.Option(None, "--out", "-o", help="Directory to write report.html in (default: DIR). A path ending in .html is taken as the file itself."),
    fmt: str = typer.Option("svg", "--format", "-f", help="Figure format inside the page: svg (vector) or png."),
    metric: list[str] = typer.Option(None, "--metric", "-m", help="Sweep reports: metrics to plot, repeatable (default: goodput, loss, delay and RTT percentiles)."),
) -> None:
    """Write one self-contained HTML report (inline figures; opens offline).

    A run: its scenario, the per-flow table, drops, delay CCDFs, cwnd and queue traces.
    A sweep: status, the summary table (median over seeds), failed points, and a figure
    per (metric, swept parameter) with the median and min-max over seeds.

    Example: ccbench report runs/droprules --out reports/droprules
    """
    from ccbench.report import write_report

    # --out is a directory, as for every command; the old spelling (the .html file
    # itself) still works.
    target = None if out is None else (out if out.suffix.lower() in (".html", ".htm") else out / "report.html")
    path = write_report(directory, target, fmt=fmt, metrics=list(metric or []) or None)
    typer.echo(f"wrote {path} ({fmt_bytes(path.stat().st_size)})")


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
