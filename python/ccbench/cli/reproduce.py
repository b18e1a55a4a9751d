"""``ccbench reproduce STUDY [--full] [--out DIR]``: the founding studies' experiments."""

from __future__ import annotations

import importlib
from pathlib import Path

import typer

from ccbench.cli.errors import fail


def study_table(df, title: str):
    """The ours-versus-paper table: fits the console width (100 columns when not a
    terminal); long headers and cells wrap inside their column instead of being cut
    (snake_case headers at their words)."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    cells = [[f"{v:.4g}" if isinstance(v, float) else str(v) for v in row] for row in df.itertuples(index=False)]
    for k, c in enumerate(df.columns):
        numeric = df[c].dtype.kind in "iuf"
        # A number column is as wide as its widest number (at least 10): its header
        # wraps, and the room left goes to the text columns.
        widest = max((len(row[k]) for row in cells), default=0)
        t.add_column(str(c).replace("_", " "), justify="right" if numeric else "left", overflow="fold",
                     max_width=max(widest, 10) if numeric else None)
    for row in cells:
        t.add_row(*row)
    return t


def reproduce_cmd(
    study: str = typer.Argument(..., help="Study to reproduce; `ccbench reproduce list` lists them.", show_default=False),
    full: bool = typer.Option(False, "--full", help="The paper's full size (long); default: a reduced size that runs in minutes."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory for the table (CSV) and figures (default runs/reproduce-STUDY)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress line."),
) -> None:
    """Reproduce a founding study and print our numbers next to the paper's.

    Example: ccbench reproduce wei-sync --out runs/wei
    """
    from ccbench.cli.progress import output_console, task_progress
    from ccbench.studies import STUDIES

    if study == "list":
        for name, module in STUDIES.items():
            mod = importlib.import_module(module)
            typer.echo(f"{name:16} {mod.DESCRIPTION}")
        return
    if study not in STUDIES:
        raise fail(f"study: {study!r} is not a study (accepted: {', '.join(STUDIES)}, or list)")
    mod = importlib.import_module(STUDIES[study])
    target = out or Path("runs") / f"reproduce-{study}"
    target.mkdir(parents=True, exist_ok=True)
    size = "full" if full else "reduced"
    with task_progress(f"reproducing {study}", enabled=not quiet) as advance:
        advance(0, f"({size} size; tables and figures to {target})")
        df = mod.run(full=full, out=target)
    output_console().print(study_table(df, f"{study}: ours vs paper ({size} size)"))
    typer.echo(f"table and figures in {target}")


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce_cmd)
