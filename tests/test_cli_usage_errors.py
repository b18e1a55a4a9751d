"""Every usage error of every ccbench command is one line and exit code 2.

The command tree is walked programmatically, so a command added later is covered
without touching this file. Each leaf command is run in-process (typer's CliRunner,
which goes through the same root group and error handler as the script) with

* an unknown option,
* its required arguments and options left out (when it has any),
* each typed option (number, choice) given a value of the wrong kind,

and a handful of the same mistakes run as real subprocesses, as a user types them.
"""

from __future__ import annotations

import enum
import os
import subprocess
import sys
import typing
from pathlib import Path, PurePath

import pytest
import typer.main
from typer.testing import CliRunner

from ccbench.cli import app

ROOT = Path(__file__).resolve().parents[1]
BOGUS = "--definitely-not-an-option"


def _walk(cmd, path=()):
    """(path, command) of every leaf command under ``cmd``."""
    commands = getattr(cmd, "commands", None)
    if commands is None:
        yield path, cmd
        return
    ctx = cmd.make_context("ccbench", ["--help"], resilient_parsing=True)
    for name in cmd.list_commands(ctx):
        sub = cmd.get_command(ctx, name)
        if sub is not None and not getattr(sub, "hidden", False):
            yield from _walk(sub, (*path, name))


LEAVES = list(_walk(typer.main.get_command(app)))
IDS = [" ".join(p) for p, _ in LEAVES]


def _annotation(param):
    desc = getattr(param, "type_descriptor", None)
    if desc is None:  # plain click: its ParamType
        return getattr(param, "type", None)
    tp = desc.annotation
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not type(None) and a is not Ellipsis]
        tp = args[0] if args else str
    return tp


def _kind(param) -> str:
    """number, choice, flag or text: what a value of the wrong kind is for it."""
    if getattr(param, "is_flag", False) or getattr(param, "count", False):
        return "flag"
    tp = _annotation(param)
    desc = getattr(param, "type_descriptor", None)
    if desc is not None and desc.choices:
        return "choice"
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return "choice"
    if tp is bool:
        return "flag"
    if tp in (int, float):
        return "number"
    name = str(getattr(tp, "name", "")).lower()  # plain click types
    if name in ("integer", "float"):
        return "number"
    if name == "choice":
        return "choice"
    return "text"


def _valid(param) -> str:
    """A value a parameter's type accepts (its command may still refuse it later)."""
    kind = _kind(param)
    if kind == "number":
        return "1"
    if kind == "choice":
        desc = getattr(param, "type_descriptor", None)
        choices = desc.choices if desc is not None and desc.choices else list(_annotation(param))
        first = choices[0]
        return str(getattr(first, "value", first))
    tp = _annotation(param)
    if isinstance(tp, type) and issubclass(tp, PurePath):
        return "no-such-file.toml"
    return "x"


def _name(param) -> str:
    if param.param_type_name == "argument":
        return str(param.metavar or param.name.upper())
    longs = [o for o in param.opts if o.startswith("--")]
    return (longs or list(param.opts))[0]


def _required_args(cmd, skip=None) -> list[str]:
    """Valid values for every required parameter except ``skip``: options first,
    arguments after them, so that parsing reaches the option under test."""
    opts, args = [], []
    for p in cmd.params:
        if p is skip or not p.required:
            continue
        if p.param_type_name == "argument":
            args.append(_valid(p))
        else:
            opts += [_name(p), _valid(p)]
    return opts + args


def _invoke(path, args):
    # COLUMNS: one error line must not be wrapped by a narrow terminal either.
    r = CliRunner().invoke(app, [*path, *args], env={"COLUMNS": "80"})
    return r


def _check_one_line(r, *must_contain: str) -> str:
    assert r.exception is None or isinstance(r.exception, SystemExit), (
        f"traceback: {type(r.exception).__name__}: {r.exception}"
    )
    assert "Traceback" not in r.output
    assert r.exit_code == 2, f"exit code {r.exit_code}: {r.output}"
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr, got {len(lines)}:\n{r.stderr}"
    assert lines[0].startswith("error: "), lines[0]
    for text in must_contain:
        assert text in lines[0], f"{text!r} not in {lines[0]!r}"
    return lines[0]


def test_the_walk_finds_every_command():
    names = set(IDS)
    # spot checks across the tree: plain commands, sub-apps, lazily loaded groups
    for expected in ("run", "validate", "sweep", "probe client", "emu run", "cc list", "model pftk", "estimate"):
        assert expected in names
    assert len(LEAVES) >= 25


@pytest.mark.parametrize("path, cmd", LEAVES, ids=IDS)
def test_unknown_option(path, cmd):
    line = _check_one_line(_invoke(path, [BOGUS]), BOGUS)
    assert "accepted:" in line and "--help" in line


@pytest.mark.parametrize("path, cmd", LEAVES, ids=IDS)
def test_missing_required_parameter(path, cmd):
    required = [p for p in cmd.params if p.required]
    if not required:
        pytest.skip("no required parameter")
    for p in required:
        r = _invoke(path, _required_args(cmd, skip=p))
        _check_one_line(r, "missing", _name(p))


@pytest.mark.parametrize("path, cmd", LEAVES, ids=IDS)
def test_bad_values_of_typed_options(path, cmd):
    typed = [p for p in cmd.params if p.param_type_name == "option" and _kind(p) in ("number", "choice")]
    if not typed:
        pytest.skip("no typed option")
    for p in typed:
        r = _invoke(path, [_name(p), "not-a-value", *_required_args(cmd, skip=p)])
        line = _check_one_line(r, _name(p), "'not-a-value'", "accepted:")
        if _kind(p) == "number":
            assert "number" in line or "integer" in line, line


@pytest.mark.parametrize("path, cmd", LEAVES, ids=IDS)
def test_an_option_given_twice(path, cmd):
    """A one-value option given twice is refused, naming it: click would keep the
    last value and drop the first without a word. Repeatable options pass."""
    single = [p for p in cmd.params if p.param_type_name == "option" and not p.multiple and _kind(p) != "flag"]
    if not single:
        pytest.skip("no one-value option")
    for p in single:
        v = _valid(p)
        r = _invoke(path, [_name(p), v, _name(p), v, *_required_args(cmd, skip=p)])
        _check_one_line(r, _name(p), "given 2 times", "accepted: once")
    many = [p for p in cmd.params if p.param_type_name == "option" and p.multiple]
    for p in many:
        r = _invoke(path, [_name(p), _valid(p), _name(p), _valid(p), BOGUS])
        assert "given 2 times" not in r.output


def test_unknown_command_in_every_group():
    r = _invoke((), ["runn"])
    line = _check_one_line(r, "'runn'", "did you mean 'run'", "accepted:")
    for group in ("model", "probe", "emu", "cc"):
        _check_one_line(_invoke((group,), ["nope"]), "'nope'", "accepted:")
    assert "validate" in line


def test_missing_option_value_and_extra_argument():
    _check_one_line(_invoke(("run",), ["--seed"]), "--seed")
    _check_one_line(_invoke(("cc", "list"), ["cubic", "extra"]), "extra")


def test_group_without_a_command_prints_its_help():
    r = _invoke(("probe",), [])
    assert r.exit_code == 2 and "Usage:" in r.output and "Traceback" not in r.output


def test_plain_click_errors_are_one_line_too():
    """Older typer releases raise the plain click package's exceptions."""
    click = pytest.importorskip("click")
    from ccbench.cli.errors import run_command

    @click.command()
    @click.option("--loss", type=float, default=0.0)
    @click.argument("scenario")
    def cmd(loss, scenario):  # pragma: no cover - never reached
        raise AssertionError

    for args, needle in (([BOGUS, "x"], BOGUS), (["--loss", "abc", "x"], "--loss"), ([], "SCENARIO")):
        code = run_command(lambda: cmd.main(args=args, prog_name="ccbench", standalone_mode=False))
        assert code == 2


def test_help_texts_keep_their_brackets():
    """Help is plain text: ``[sweep]`` and ``[packets]`` must not vanish as markup."""
    r = CliRunner().invoke(app, ["sweep", "--help"], env={"COLUMNS": "120"})
    assert r.exit_code == 0 and "[sweep]" in r.output and "[sweep.zip]" in r.output
    r = CliRunner().invoke(app, ["model", "wei-sync", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "[packets]" in r.output


@pytest.mark.parametrize(
    "args, needle",
    [
        (["runn"], "no such command 'runn'"),
        (["run", "--bogus", "x.toml"], "no such option --bogus"),
        (["run"], "missing argument SCENARIO"),
        (["model", "pftk", "--loss", "abc"], "--loss: 'abc' is not a probability (accepted: a number in [0, 1)"),
        (["bench", "--duration", "abc"], "--duration"),
    ],
)
def test_as_a_user_types_it(args, needle):
    env = dict(os.environ, COLUMNS="80", PYTHONPATH=str(ROOT / "python"))
    cp = subprocess.run([sys.executable, "-m", "ccbench", *args], capture_output=True, text=True, env=env, timeout=60)
    assert cp.returncode == 2, cp.stderr
    assert "Traceback" not in cp.stderr
    lines = [line for line in cp.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], cp.stderr


# ---- the mission's verbs as command names ---------------------------------------------


@pytest.mark.parametrize("verb,command", [("simulate", "run"), ("sim", "run"), ("emulate", "emu")])
def test_mission_verbs_run_their_command(verb, command):
    # The README says ccbench answers "four ways: simulate, emulate, model, benchmark";
    # a user types those words first, and they must not be told "did you mean estimate".
    r = _invoke([verb], ["--help"])
    assert r.exit_code == 0, r.output
    assert f"Usage: ccbench {command}" in r.output


def test_benchmark_names_both_commands_it_could_mean():
    line = _check_one_line(_invoke(["benchmark"], []), "'estimate'", "'bench'")
    assert "service curves" in line and "speed" in line
