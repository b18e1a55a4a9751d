"""``ccbench cc list``: the congestion-control algorithms and their tunables."""

from __future__ import annotations

import typer
from rich.table import Table


def list_cmd(
    name: str = typer.Argument(None, help="Show only this algorithm.", show_default=False),
) -> None:
    """List every congestion-control algorithm with its parameters and Linux defaults.

    Select one in a scenario by name, cc = "cubic", or with parameters,
    cc = { name = "cubic", beta = 0.8, hystart = false }. Parameters are shown in the
    units users think in (beta 0.7, c 0.4, rtt0 "25ms"); Linux's integer form
    (beta = 717 out of 1024, bic_scale = 41) is accepted too.
    """
    from ccbench.backends.sim import _core
    from ccbench.cli.errors import fail
    from ccbench.scenario.cc_params import display_params

    algos = _core().cc_list()
    if name is not None:
        chosen = [a for a in algos if a["name"] == name]
        if not chosen:
            raise fail(f"no congestion control {name!r} (available: {', '.join(a['name'] for a in algos)})")
        algos = chosen
    from ccbench.cli.progress import output_console

    console = output_console()
    for a in algos:
        t = Table(title=f"[bold]{a['name']}[/bold]: {a['summary']}", caption=a["source"], title_justify="left", caption_justify="left")
        t.add_column("parameter")
        t.add_column("default", justify="right")
        t.add_column("meaning")
        for row in display_params(a["name"], a["params"]):
            t.add_row(*row)
        if not a["params"]:
            t.add_row("-", "-", "no tunables")
        console.print(t)


def register(app: typer.Typer) -> None:
    cc_app = typer.Typer(help="Congestion-control algorithms of the simulator.", no_args_is_help=True)
    cc_app.command("list")(list_cmd)
    app.add_typer(cc_app, name="cc")
