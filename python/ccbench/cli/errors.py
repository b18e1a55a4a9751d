"""One place that turns every error a user can cause into a single line on stderr.

Two kinds reach the user:

* usage errors of the command line itself (a mistyped command, an unknown option, a
  missing argument, ``--loss abc``), raised by the CLI framework's click. Typer
  ships its own copy of click (``typer._click``) and older releases use the plain
  ``click`` package, so these are recognised by class *name* in either copy, never
  by importing one of them;
* ccbench's own errors (a bad scenario, a refused simulation, a missing optional
  dependency).

Both print ``error: ...`` naming the option or field and what is accepted, and exit
with code 2: never a traceback. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import typer

#: ccbench's "the input was wrong" errors, by module: an error can only have been
#: raised if its module was imported, so looking in ``sys.modules`` costs no import
#: (``ccbench.backends.sim`` pulls in pandas).
USER_ERRORS: tuple[tuple[str, str], ...] = (
    ("ccbench.scenario.errors", "ScenarioError"),  # also SweepError
    ("ccbench.scenario.units", "UnitError"),
    ("ccbench.backends.sim", "SimulationError"),
    ("ccbench.emu.system", "EmulationError"),
    ("ccbench.netcal.errors", "NetcalError"),
    ("ccbench.analysis._common", "AnalysisError"),
    ("ccbench.probe", "ProbeError"),
    ("ccbench.plots", "PlotError"),
    ("ccbench.atomicio", "OutputPathError"),  # an --out that cannot be written
    ("ccbench.run", "RunFileError"),  # a damaged run directory
)

#: Optional dependency stacks (pyproject ``[project.optional-dependencies]``): the
#: top-level module a command imports -> the extra that installs it.
EXTRAS: dict[str, str] = {
    "dask": "cluster",
    "distributed": "cluster",
    "arch": "stats",
    "statsmodels": "stats",
}


def user_errors() -> tuple[type[BaseException], ...]:
    """Exception classes that mean "the input was wrong", not "ccbench is broken"."""
    classes: list[type[BaseException]] = [FileNotFoundError, IsADirectoryError, NotADirectoryError]
    for module, name in USER_ERRORS:
        mod = sys.modules.get(module)
        if mod is not None and hasattr(mod, name):
            classes.append(getattr(mod, name))
    return tuple(classes)


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Prints ``error: message`` on stderr and returns the Exit to raise."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def missing_extra(module: str, what: str) -> str:
    """The one line for a command that needs an optional dependency not installed."""
    extra = EXTRAS.get(module.split(".")[0], "all")
    return f"{what} needs the optional '{extra}' dependencies ({module} is not installed): pip install 'ccbench[{extra}]'"


def require_extra(module: str, what: str) -> None:
    """Raises the one-line error of :func:`missing_extra` unless ``module`` can be
    imported (checked without importing it)."""
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package is missing
        found = False
    if not found:
        raise fail(missing_extra(module, what))


# ---- usage errors of either copy of click --------------------------------------------


def _class_names(e: BaseException) -> set[str]:
    return {c.__name__ for c in type(e).__mro__}


def _is_click_error(e: BaseException) -> bool:
    """A ``ClickException`` of typer's vendored click or of the plain click package."""
    return "ClickException" in _class_names(e) and type(e).__module__.split(".")[0] in ("click", "typer")


def _is_click_exit(e: BaseException) -> bool:
    return type(e).__name__ == "Exit" and type(e).__module__.split(".")[0] in ("click", "typer")


def _is_click_abort(e: BaseException) -> bool:
    return type(e).__name__ == "Abort" and type(e).__module__.split(".")[0] in ("click", "typer")


def _param_name(param: Any) -> str:
    """``--seed`` (an option, by its long name) or ``SCENARIO`` (an argument)."""
    if getattr(param, "param_type_name", "") == "argument":
        return str(getattr(param, "metavar", None) or (param.name or "").upper())
    opts = list(getattr(param, "opts", []) or [])
    longs = [o for o in opts if o.startswith("--")]
    return (longs or opts or [param.name or "?"])[0]


_TYPE_WORDS = {
    int: "an integer",
    float: "a number",
    bool: "true or false",
    str: "text",
}
_CLICK_TYPE_WORDS = {
    "integer": "an integer",
    "float": "a number",
    "boolean": "true or false",
    "text": "text",
    "path": "a path",
    "file": "a file",
    "filename": "a file",
}


def _describe_annotation(tp: Any) -> str:
    import enum
    import typing
    from pathlib import PurePath

    origin = typing.get_origin(tp)
    if origin in (list, tuple, set) or origin is typing.Union:
        args = [a for a in typing.get_args(tp) if a is not type(None) and a is not Ellipsis]
        inner = _describe_annotation(args[0]) if args else "a value"
        return inner if origin is typing.Union else f"{inner} (repeatable)"
    if origin is typing.Literal:
        return ", ".join(str(a) for a in typing.get_args(tp))
    if isinstance(tp, type):
        if issubclass(tp, enum.Enum):
            return ", ".join(str(m.value) for m in tp)
        if issubclass(tp, PurePath):
            return "a path"
        for base, word in _TYPE_WORDS.items():
            if tp is base:
                return word
        return tp.__name__
    return str(tp)


def accepted(param: Any) -> str:
    """What a parameter accepts, in words: ``a number``, ``smooth, bursty``, ..."""
    desc = getattr(param, "type_descriptor", None)  # typer >= 0.2x (pydantic coercion)
    if desc is not None:
        choices = getattr(desc, "choices", None)
        if choices:
            return ", ".join(str(getattr(c, "value", c)) for c in choices)
        text = _describe_annotation(desc.annotation)
        info = getattr(desc, "parameter_info", None)
        lo, hi = getattr(info, "min", None), getattr(info, "max", None)
        if lo is not None and hi is not None:
            text += f" from {lo} to {hi}"
        elif lo is not None:
            text += f" >= {lo}"
        elif hi is not None:
            text += f" <= {hi}"
        return text
    ptype = getattr(param, "type", None)  # plain click
    if ptype is None:
        return "see --help"
    choices = getattr(ptype, "choices", None)
    if choices:
        return ", ".join(str(getattr(c, "value", c)) for c in choices)
    name = str(getattr(ptype, "name", "")).lower()
    return _CLICK_TYPE_WORDS.get(name, name or "see --help")


def _bad_value(e: BaseException) -> Any:
    """The value the user gave, if the framework kept it (typer's pydantic coercion
    chains the ValidationError; plain click puts it in the message)."""
    cause = e.__cause__
    errors = getattr(cause, "errors", None)
    if callable(errors):
        try:
            errs = errors()
        except Exception:  # noqa: BLE001 - any shape: fall back to the message
            return None
        if errs and "input" in errs[0]:
            return errs[0]["input"]
    return None


def _options_of(command: Any) -> str:
    names = []
    for p in getattr(command, "params", []) or []:
        if getattr(p, "param_type_name", "") == "option" and not getattr(p, "hidden", False):
            names.append(_param_name(p))
    return ", ".join(names + ["--help"])


def _commands_of(group: Any, ctx: Any) -> str:
    try:
        names = [n for n in group.list_commands(ctx)]
    except Exception:  # noqa: BLE001
        names = list(getattr(group, "commands", {}) or {})
    return ", ".join(names)


def usage_line(e: BaseException) -> str:
    """One line for a click usage error: the command, the option or argument, the
    value when known, and what is accepted."""
    names = _class_names(e)
    ctx = getattr(e, "ctx", None)
    where = f"{ctx.command_path}: " if ctx is not None and ctx.command_path else ""
    message = " ".join(str(getattr(e, "message", "") or e).split())
    param = getattr(e, "param", None)
    if "NoSuchOption" in names:
        opt = getattr(e, "option_name", "") or message
        did = getattr(e, "possibilities", None)
        hint = f" (did you mean {' or '.join(sorted(did))}?)" if did else ""
        command = ctx.command if ctx is not None else None
        return f"{where}no such option {opt}{hint}; accepted: {_options_of(command)}"
    if "MissingParameter" in names:
        kind = getattr(e, "param_type", None) or getattr(param, "param_type_name", "parameter")
        if param is None:
            return f"{where}missing {kind} ({message})" if message else f"{where}missing {kind}"
        help_text = " ".join(str(getattr(param, "help", "") or "").split())
        more = f": {help_text}" if help_text else ""
        what = accepted(param)
        what = f" ({what})" if what != "text" else ""
        return f"{where}missing {kind} {_param_name(param)}{what}{more}"
    if "BadParameter" in names and param is not None:
        value = _bad_value(e)
        if value is not None:
            return f"{where}{_param_name(param)}: {value!r} is not accepted (accepted: {accepted(param)})"
        return f"{where}{_param_name(param)}: {message} (accepted: {accepted(param)})"
    if message.startswith("No such command"):
        # "No such command 'runn'. Did you mean 'run'?"
        group = ctx.command if ctx is not None else None
        text = message.rstrip(".").replace(". Did you mean", " (did you mean")
        if "(did you mean" in text:
            text += ")"
        return f"{where}{text[0].lower()}{text[1:]}; accepted: {_commands_of(group, ctx)}"
    if message:
        return f"{where}{message[0].lower()}{message[1:]}"
    return f"{where}{type(e).__name__}"


# ---- the one wrapper every invocation goes through -----------------------------------


def run_command(invoke: Callable[[], Any]) -> int:
    """Runs ``invoke`` (a click main in non-standalone mode) and returns the exit code,
    printing every user-facing error as one line."""
    try:
        code = invoke()
        # Without standalone mode click returns (not raises) the code of an Exit.
        return code if isinstance(code, int) else 0
    except typer.Exit as e:
        return e.exit_code
    except KeyboardInterrupt:
        typer.echo("interrupted", err=True)
        return 130
    except ModuleNotFoundError as e:
        top = (e.name or "").split(".")[0]
        if top not in EXTRAS:
            raise
        typer.echo(f"error: {missing_extra(e.name or top, 'this command')}", err=True)
        return 2
    except user_errors() as e:
        msg = str(e).strip() or type(e).__name__
        if isinstance(e, FileNotFoundError) and e.filename:
            msg = f"no such file: {e.filename}"
        elif isinstance(e, IsADirectoryError) and e.filename:
            msg = f"is a directory, not a file: {e.filename}"
        elif isinstance(e, NotADirectoryError) and e.filename:
            msg = f"not a directory: {e.filename}"
        typer.echo(f"error: {msg}", err=True)
        return 2
    except Exception as e:  # the framework's own: usage errors, Exit, Abort
        if _is_click_exit(e):
            return int(getattr(e, "exit_code", 0))
        if _is_click_abort(e):
            typer.echo("aborted", err=True)
            return 1
        if not _is_click_error(e):
            raise
        if "NoArgsIsHelpError" in _class_names(e):
            e.show()  # the help text itself, as asked for
            return 2
        typer.echo(f"error: {usage_line(e)}", err=True)
        return int(getattr(e, "exit_code", 2) or 2)


def run_cli(app: typer.Typer, args: list[str] | None = None) -> int:
    """Runs a typer app as the ``ccbench`` command; returns the exit code."""
    import typer.main

    command = typer.main.get_command(app)
    return run_command(lambda: command.main(args=args, prog_name="ccbench", standalone_mode=False))
