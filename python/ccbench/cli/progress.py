"""A progress bar in simulated time that appears only for runs longer than a moment."""

from __future__ import annotations

import time
from contextlib import contextmanager

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn


@contextmanager
def sim_progress(label: str, delay_s: float = 1.5, enabled: bool = True):
    """Yields a callback ``f(fraction)``; the bar shows once ``delay_s`` has passed."""
    start = time.monotonic()
    state: dict = {"progress": None, "task": None}

    def update(frac: float) -> None:
        if not enabled:
            return
        if state["progress"] is None:
            if time.monotonic() - start < delay_s or frac >= 1.0:
                return
            p = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>5.1f}% simulated time"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
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
