"""One place that turns ccbench's own errors into a single line on stderr.

A user who wrote a bad scenario sees ``error: flows.voip.app.interval: ...`` and exit
code 2, never a traceback. Unexpected exceptions still show their traceback: those
are bugs to report.
"""

from __future__ import annotations

import sys

import typer


def user_errors() -> tuple[type[BaseException], ...]:
    """Exception classes that mean "the input was wrong", not "ccbench is broken"."""
    classes: list[type[BaseException]] = [FileNotFoundError, IsADirectoryError]
    from ccbench.backends.sim import SimulationError

    classes.append(SimulationError)
    try:
        from ccbench.scenario import ScenarioError

        classes.append(ScenarioError)
    except ImportError:  # pragma: no cover
        pass
    try:
        from ccbench.emu import EmulationError

        classes.append(EmulationError)
    except ImportError:  # pragma: no cover
        pass
    try:
        from ccbench.netcal import NetcalError

        classes.append(NetcalError)
    except ImportError:  # pragma: no cover
        pass
    return tuple(classes)


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Prints ``error: message`` on stderr and returns the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def run_cli(app: typer.Typer) -> int:
    try:
        # Without standalone mode click returns (not raises) the code of a typer.Exit.
        code = app(standalone_mode=False)
        return code if isinstance(code, int) else 0
    except typer.Exit as e:
        return e.exit_code
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except user_errors() as e:
        msg = str(e).strip() or type(e).__name__
        if isinstance(e, FileNotFoundError) and e.filename:
            msg = f"no such file: {e.filename}"
        typer.echo(f"error: {msg}", err=True)
        return 2
    except Exception as e:  # click's usage errors
        import click

        if isinstance(e, click.ClickException):
            e.show()
            return e.exit_code
        raise
