"""Progress on stderr for commands that take more than a moment, and the console
result tables are printed on.

Progress goes to stderr, so a table or CSV on stdout stays clean when piped; it is
drawn only on a terminal and never under CI (``CI`` set), where a redrawn bar would
only fill the log.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

#: Result tables are laid out for this width when stdout is not a terminal and
#: COLUMNS is not set (rich would otherwise assume 80 and cut them).
TABLE_WIDTH = 100


def output_console():
    """The console results are printed on: the terminal's width, else ``$COLUMNS``,
    else :data:`TABLE_WIDTH`."""
    from rich.console import Console

    console = Console()
    if console.is_terminal or os.environ.get("COLUMNS"):
        return console
    return Console(width=TABLE_WIDTH)


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


def progress_wanted(enabled: bool = True) -> bool:
    """A live bar only on a terminal, not under CI, and when not asked to be quiet."""
    return enabled and not os.environ.get("CI") and _stderr_console().is_terminal


@contextmanager
def task_progress(label: str, total: int | None = None, enabled: bool = True) -> Iterator[Callable[..., None]]:
    """A progress line on stderr for ``total`` steps (a spinner with the elapsed time
    when the count is unknown). Yields ``advance(steps=1, detail=None)``; ``detail``
    replaces the text after the label (what is running now)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = [SpinnerColumn(), TextColumn("[bold]{task.description}[/bold] {task.fields[detail]}")]
    if total is not None:
        columns += [BarColumn(), MofNCompleteColumn()]
    columns.append(TimeElapsedColumn())
    progress = Progress(*columns, console=_stderr_console(), transient=True, disable=not progress_wanted(enabled))
    task = progress.add_task(label, total=total, detail="")

    def advance(steps: int = 1, detail: str | None = None) -> None:
        progress.update(task, advance=steps, **({"detail": detail} if detail is not None else {}))

    with progress:
        yield advance


@contextmanager
def sim_progress(label: str, delay_s: float = 1.5, enabled: bool = True):
    """A bar in simulated time, shown once ``delay_s`` has passed (a short run stays
    silent). Yields a callback ``f(fraction)`` for the simulator's progress hook."""
    start = time.monotonic()
    state: dict = {"progress": None, "task": None}
    enabled = progress_wanted(enabled)

    def update(frac: float) -> None:
        if not enabled:
            return
        if state["progress"] is None:
            if time.monotonic() - start < delay_s or frac >= 1.0:
                return
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            p = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>5.1f}% simulated time"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=_stderr_console(),
                transient=True,
            )
            p.start()
            state["progress"], state["task"] = p, p.add_task(label, total=1.0)
        state["progress"].update(state["task"], completed=frac)

    try:
        yield update
    finally:
        if state["progress"] is not None:
            state["progress"].stop()
