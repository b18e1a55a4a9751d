"""``ccbench model NAME --param value ...``: the analytical models."""

from __future__ import annotations

import importlib

import typer

# command name -> (module, function). Each function is a typer command of its own.
MODELS: dict[str, tuple[str, str]] = {}


def register(app: typer.Typer) -> None:
    model_app = typer.Typer(
        help="Analytical models (PFTK, Mathis, Cardwell, Brosh, Weigle, Wei, Lübben). "
        "Example: ccbench model pftk --rtt 100ms --loss 0.01",
        no_args_is_help=True,
    )
    for name, (module, func) in MODELS.items():
        model_app.command(name)(getattr(importlib.import_module(module), func))
    app.add_typer(model_app, name="model")
