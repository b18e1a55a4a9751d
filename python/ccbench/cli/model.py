"""``ccbench model NAME --param value ...``: the analytical models."""

from __future__ import annotations

import importlib

import typer

# command name -> (module, function). Each function is a typer command of its own.
MODELS: dict[str, tuple[str, str]] = {
    "brosh": ("ccbench.models.brosh", "cli"),
    "weigle": ("ccbench.models.weigle", "cli"),
    "mathis": ("ccbench.models.mathis", "cli"),
    "pftk": ("ccbench.models.pftk", "cli"),
    "cardwell": ("ccbench.models.cardwell", "cli"),
    "wei-sync": ("ccbench.models.wei_sync", "cli_sync"),
    "wei-fairness": ("ccbench.models.wei_sync", "cli_fairness"),
    "wei-throughput": ("ccbench.models.wei_sync", "cli_throughput"),
    "fast": ("ccbench.models.wei_fast", "cli_fast"),
    "vegas": ("ccbench.models.wei_fast", "cli_vegas"),
    "luebben-window": ("ccbench.models.luebben", "cli_window"),
    "luebben-periodic": ("ccbench.models.luebben", "cli_periodic"),
}


def register(app: typer.Typer) -> None:
    model_app = typer.Typer(
        help="Analytical models (PFTK, Mathis, Cardwell, Brosh, Weigle, Wei, Lübben). "
        "Example: ccbench model pftk --rtt-ms 100 --loss 0.01",
        no_args_is_help=True,
    )
    for name, (module, func) in MODELS.items():
        model_app.command(name)(getattr(importlib.import_module(module), func))
    app.add_typer(model_app, name="model")
