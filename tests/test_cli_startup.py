"""``ccbench --help`` and ``ccbench validate`` start fast, and optional stacks are extras.

Start-up is checked by what a fresh interpreter has imported after the command, not
by wall time (which a loaded CI machine makes flaky): pandas, scipy, matplotlib,
duckdb, Dask, statsmodels, arch and the analytical models cost most of the former
two seconds, and none of them is needed to print help or to check a scenario file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ccbench.cli import COMMANDS, app
from ccbench.cli.errors import run_command

ROOT = Path(__file__).resolve().parents[1]

HEAVY = ("pandas", "numpy", "scipy", "matplotlib", "duckdb", "dask", "distributed", "statsmodels", "arch", "pyarrow")

_PROBE = """
import json, runpy, sys
sys.argv = ["ccbench", *json.loads(sys.argv[1])]
try:
    runpy.run_module("ccbench", run_name="__main__")
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def _modules_after(*args: str) -> tuple[int, set[str], str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"), COLUMNS="100")
    cp = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(args)], capture_output=True, text=True,
                        cwd=ROOT, env=env, timeout=60)
    last = json.loads(cp.stdout.strip().splitlines()[-1])
    return last["code"], set(last["modules"]), cp.stdout


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_help_imports_no_heavy_module_and_no_command():
    code, modules, out = _modules_after("--help")
    assert code == 0 and "validate" in out and "reproduce" in out
    assert _heavy(modules) == []
    assert "ccbench._core" not in modules and "pydantic" not in modules
    # no command module is imported to list the commands
    assert not [m for m in modules if m.startswith("ccbench.") and m.split(".")[1] not in ("cli",)]
    assert not {"ccbench.cli.run", "ccbench.cli.model", "ccbench.cli.compare"} & modules


def test_validate_imports_no_heavy_module():
    code, modules, out = _modules_after("validate", "examples/adsl1_voip.toml")
    assert code == 0 and out.startswith("ok: examples/adsl1_voip.toml")
    assert _heavy(modules) == []
    assert "ccbench.backends.sim" not in modules and "ccbench.cli.model" not in modules


def test_validate_error_still_explains_with_the_field(tmp_path):
    """The error path may load the simulator backend: its message names the field."""
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[topology]\nkind = "graph"\nnodes = ["a", "b"]\n'
        'links = [{ from = "a", to = "b", rate = "1Mbit", delay = "1ms" }, '
        '{ from = "b", to = "a", rate = "1Mbit", delay = "1ms" }]\n'
        '[[flows]]\nname = "x"\nsrc = "a"\ndst = "nowhere"\ntransport = { kind = "udp" }\n'
        'app = { kind = "cbr", size = "100B", interval = "10ms" }\n'
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    cp = subprocess.run([sys.executable, "-m", "ccbench", "validate", str(bad)], capture_output=True, text=True,
                        env=env, timeout=60)
    assert cp.returncode == 2 and "Traceback" not in cp.stderr
    assert len(cp.stderr.strip().splitlines()) == 1 and "nowhere" in cp.stderr


def test_every_registered_command_is_listed_and_loads():
    r = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0
    for name, (_, summary) in COMMANDS.items():
        assert name in r.output and summary.split(":")[0][:30] in r.output
        sub = CliRunner().invoke(app, [name, "--help"], env={"COLUMNS": "200"})
        assert sub.exit_code == 0 and "Usage: ccbench " + name in sub.output, sub.output


def test_missing_extra_is_named(monkeypatch, tmp_path):
    """A command whose optional stack is not installed names the extra to install."""
    monkeypatch.setitem(sys.modules, "arch", None)  # import arch -> ModuleNotFoundError
    r = CliRunner().invoke(app, ["estimate", "--from-csv", str(tmp_path / "p.csv")])
    assert r.exit_code == 2
    assert r.stderr.strip().splitlines() == [
        "error: ccbench estimate (the DF-GLS stationarity test) needs the optional 'stats' dependencies "
        "(arch is not installed): pip install 'ccbench[stats]'"
    ]
    monkeypatch.setitem(sys.modules, "dask", None)
    spec = tmp_path / "s.toml"
    spec.write_text('scenario = "x.toml"\n')
    r = CliRunner().invoke(app, ["sweep", str(spec), "--scheduler", "tcp://127.0.0.1:1"])
    assert r.exit_code == 2 and "pip install 'ccbench[cluster]'" in r.stderr and len(r.stderr.splitlines()) == 1


def test_an_import_of_a_missing_extra_anywhere_is_one_line(capsys):
    def needs_dask():
        raise ModuleNotFoundError("No module named 'distributed'", name="distributed")

    assert run_command(needs_dask) == 2
    err = capsys.readouterr().err
    assert err.strip() == (
        "error: this command needs the optional 'cluster' dependencies (distributed is not installed): "
        "pip install 'ccbench[cluster]'"
    )

    def real_bug():
        raise ModuleNotFoundError("No module named 'nope'", name="nope")

    with pytest.raises(ModuleNotFoundError):
        run_command(real_bug)


def test_extras_are_declared_and_not_in_the_base_install():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(meta["dependencies"])
    extras = meta["optional-dependencies"]
    for pkg, extra in (("dask", "cluster"), ("arch", "stats")):
        assert pkg not in base
        assert any(d.startswith(pkg) for d in extras[extra])
        assert any(d.startswith(pkg) for d in extras["test"])  # make setup installs --extras test
    assert "statsmodels" not in base
    assert any(d.startswith("typer>=") and "<" in d for d in meta["dependencies"])  # pinned to a tested range
