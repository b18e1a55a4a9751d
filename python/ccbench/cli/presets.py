"""``ccbench presets``: the application presets a scenario can name."""

from __future__ import annotations

import typer


def presets_cmd() -> None:
    """List the application presets: use one as app = { kind = "preset", name = "brosh-voip" }
    (optionally with size and interval to override the preset's)."""
    from rich.table import Table

    from ccbench.cli.progress import output_console

    from ccbench.scenario.presets import PRESETS

    t = Table(title="application presets", title_justify="left")
    t.add_column("name")
    t.add_column("what it is")
    for name, (desc, _) in PRESETS.items():
        t.add_row(name, desc)
    output_console().print(t)


def register(app: typer.Typer) -> None:
    app.command("presets")(presets_cmd)
