"""The ``ccbench`` command line.

Every sub-command lives in its own module with a ``register(app)``; this one names
them (module and the one-line summary ``ccbench --help`` lists) and builds the root
group, which imports a command's module only when that command is used
(:mod:`ccbench.cli.lazy`), and turns every error into one line with exit code 2
(:mod:`ccbench.cli.errors`).
"""

from __future__ import annotations

import sys

import typer

from ccbench.cli.lazy import LazyGroup

#: command -> (module with ``register(app)``, summary for ``ccbench --help``), in the
#: order ``ccbench --help`` lists them. A module may register several commands.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("ccbench.cli.run", "Simulate a scenario and print per-flow throughput, loss and delay percentiles."),
    "validate": ("ccbench.cli.run", "Check a scenario file without running it: units, names, topology, routes."),
    "plot": ("ccbench.cli.plot", "Draw figures of a saved run: goodput, delay CDF and CCDF, cwnd, queue, delay decomposition."),
    "report": ("ccbench.cli.report", "Write one self-contained HTML report of a run or a sweep."),
    "sweep": ("ccbench.cli.sweep", "Run a scenario over a grid of values and seeds; resumable; results in one Parquet store."),
    "query": ("ccbench.cli.query", "Query a sweep's results with SQL (DuckDB)."),
    "cc": ("ccbench.cli.cc", "Congestion-control algorithms of the simulator and their parameters."),
    "presets": ("ccbench.cli.presets", "List the application presets a scenario can name."),
    "model": ("ccbench.cli.model", "Analytical models (PFTK, Mathis, Cardwell, Brosh, Weigle, Wei, Lübben)."),
    "predict": ("ccbench.cli.predict", "Every analytical model of every flow of a scenario, inputs from the file."),
    "estimate": ("ccbench.cli.estimate", "Estimate the service curve and attainable rate of a path (Lübben & Fidler)."),
    "reproduce": ("ccbench.cli.reproduce", "Reproduce a founding study and print our numbers next to the paper's."),
    "probe": ("ccbench.cli.probe", "Measure a real path's loss process with UDP probes (Wei thesis §4.3)."),
    "emu": ("ccbench.cli.emu", "Emulate a scenario with the real Linux kernel TCP (needs root)."),
    "compare": ("ccbench.cli.compare", "One scenario several ways side by side: simulator, kernel, models, service curve."),
    "schemes": ("ccbench.cli.schemes", "Compare congestion controls on one scenario: throughput-delay plot, goodput over time, RTT fairness."),
    "fidelity": ("ccbench.cli.fidelity", "Simulator against kernel TCP over a matrix of scenarios: errors, targets, overlays, docs/FIDELITY.md."),
    "bench": ("ccbench.cli.bench", "Measure simulator speed: wall time, events/s, packets/s and peak memory."),
}

#: The mission's own verbs, which a user reading the README types first: each runs the
#: command that does it. Not listed by ``--help`` (one name per command there).
ALIASES: dict[str, str] = {
    "simulate": "run",
    "sim": "run",
    "emulate": "emu",
    "models": "model",
    "reproduction": "reproduce",
}

#: Words that name two commands: the error names both instead of guessing.
AMBIGUOUS: dict[str, str] = {
    "benchmark": "'estimate' (service curves from timestamps) or 'bench' (simulator speed)",
}


class CcbenchGroup(LazyGroup):
    registry = COMMANDS

    def resolve_command(self, ctx, args):  # type: ignore[no-untyped-def]
        if args:
            name = args[0]
            if name in AMBIGUOUS:
                ctx.fail(f"No such command {name!r}. Did you mean {AMBIGUOUS[name]}?")
            if name in ALIASES:
                args = [ALIASES[name], *args[1:]]
        return super().resolve_command(ctx, args)


app = typer.Typer(
    name="ccbench",
    cls=CcbenchGroup,
    help=(
        "How much delay and throughput will this traffic get over TCP?\n\n"
        "ccbench answers from one scenario file four ways: simulate (packet-level, "
        "Linux-like TCP), emulate (real kernel TCP), model (analytical models) and "
        "benchmark (service curves from timestamps).\n\n"
        "Examples:\n\n"
        "  ccbench run examples/adsl1_voip.toml --seed 1 --out runs/adsl\n\n"
        "  ccbench validate examples/adsl1_voip.toml\n\n"
        "  ccbench model pftk --rtt 100ms --loss 1%\n\n"
        "  ccbench predict examples/brosh_droptail.toml\n\n"
        "  ccbench bench"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def _root() -> None:
    # A callback makes the app a group even before any command is loaded.
    pass


def main() -> None:
    """Entry point of the ``ccbench`` script."""
    from ccbench.cli.errors import run_cli

    sys.exit(run_cli(app))
