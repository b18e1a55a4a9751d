"""The ``ccbench`` command line.

Every sub-command lives in its own module; this one assembles them and turns the
project's own errors into one-line messages with a non-zero exit code.
"""

from __future__ import annotations

import sys

import typer

from ccbench.cli import bench, cc, plot, presets, run

app = typer.Typer(
    name="ccbench",
    help=(
        "How much delay and throughput will this traffic get over TCP?\n\n"
        "ccbench answers from one scenario file four ways: simulate (packet-level, "
        "Linux-like TCP), emulate (real kernel TCP), model (analytical models) and "
        "benchmark (service curves from timestamps).\n\n"
        "Examples:\n\n"
        "  ccbench run examples/adsl1_voip.toml --seed 1 --out runs/adsl\n\n"
        "  ccbench validate examples/adsl1_voip.toml\n\n"
        "  ccbench model pftk --rtt-ms 100 --loss 0.01\n\n"
        "  ccbench bench"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

run.register(app)
plot.register(app)
cc.register(app)
presets.register(app)
bench.register(app)


def _register_optional() -> None:
    """Sub-commands whose modules may grow independently (models, estimator, ...)."""
    from ccbench.cli import compare, emu, estimate, model, probe, query, report, reproduce, sweep

    estimate.register(app)
    reproduce.register(app)
    probe.register(app)
    emu.register(app)
    compare.register(app)
    model.register(app)
    sweep.register(app)
    query.register(app)
    report.register(app)


_register_optional()


def main() -> None:
    """Entry point of the ``ccbench`` script."""
    from ccbench.cli.errors import run_cli

    sys.exit(run_cli(app))
