"""``ccbench reproduce STUDY [--full] [--out DIR]``: the founding studies' experiments;
``--all`` runs every study, ``--summary`` writes docs/REPRODUCTIONS.md from the results."""

from __future__ import annotations

import datetime
import importlib
import inspect
import json
import time
from pathlib import Path
from typing import Optional

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


def _run_study(study: str, full: bool, target: Path, quiet: bool) -> None:
    from ccbench.cli.progress import output_console, task_progress
    from ccbench.studies import STUDIES

    mod = importlib.import_module(STUDIES[study])
    target.mkdir(parents=True, exist_ok=True)
    size = "full" if full else "reduced"
    t0 = time.perf_counter()
    with task_progress(f"reproducing {study}", enabled=not quiet) as advance:
        advance(0, f"({size} size; tables and figures to {target})")
        kw = {}
        if "progress" in inspect.signature(mod.run).parameters:
            # Studies with many runs report "k/N runs" on the same line.
            kw["progress"] = lambda k, n: advance(0, f"({size} size) {k}/{n} runs")
        df = mod.run(full=full, out=target, **kw)
    # What the summary needs to say how the recorded numbers were made.
    meta = {"study": study, "size": size, "date": datetime.date.today().isoformat(),
            "wall_s": round(time.perf_counter() - t0, 1)}
    (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    output_console().print(study_table(df, f"{study}: ours vs paper ({size} size)"))
    typer.echo(f"table and figures in {target}")


def reproduce_cmd(
    study: Optional[str] = typer.Argument(None, help="Study to reproduce; `ccbench reproduce list` lists them.", show_default=False),
    full: bool = typer.Option(False, "--full", help="The paper's full size (long); default: a reduced size that runs in minutes."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory for the table (CSV) and figures (default runs/reproduce-STUDY; with --all or --summary, the parent of the per-study directories, default runs)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress line."),
    all_studies: bool = typer.Option(False, "--all", help="Run every study (into OUT/reproduce-STUDY)."),
    summary: bool = typer.Option(False, "--summary", help="Write the reproduction summary (docs/REPRODUCTIONS.md) from the recorded results in OUT/reproduce-*/; alone, it only assembles (no simulation)."),
    summary_path: Path = typer.Option(Path("docs/REPRODUCTIONS.md"), "--summary-path", help="Where --summary writes."),
) -> None:
    """Reproduce a founding study and print our numbers next to the paper's.

    Examples: ccbench reproduce wei-sync --out runs/wei;
    ccbench reproduce --all --summary (every study, then docs/REPRODUCTIONS.md);
    ccbench reproduce --summary (the page from results already recorded under runs/)
    """
    from ccbench.studies import STUDIES

    if study == "list":
        for name, module in STUDIES.items():
            mod = importlib.import_module(module)
            typer.echo(f"{name:16} {mod.DESCRIPTION}")
        return
    if study is not None and all_studies:
        raise fail(f"study: {study!r} given together with --all (accepted: one of them)")
    if study is None and not all_studies and not summary:
        raise fail(f"study: missing (accepted: {', '.join(STUDIES)}, list, or --all / --summary)")
    if study is not None and study not in STUDIES:
        raise fail(f"study: {study!r} is not a study (accepted: {', '.join(STUDIES)}, or list)")
    if study is not None:
        target = out or Path("runs") / f"reproduce-{study}"
        _run_study(study, full, target, quiet)
        results = target.parent
    else:
        results = out or Path("runs")
        if all_studies:
            for name in STUDIES:
                _run_study(name, full, results / f"reproduce-{name}", quiet)
    if summary:
        from ccbench.studies.summary import write

        typer.echo(f"summary written to {write(summary_path, results)}")


def register(app: typer.Typer) -> None:
    app.command("reproduce")(reproduce_cmd)
