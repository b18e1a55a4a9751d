"""One spelling per concept across commands, progress on long commands, tables that fit.

* durations, rates and sizes are unit strings, parsed by the scenario parser; the old
  bare-number spellings and the old option names still work, hidden from --help;
* ``--out`` is always a directory, ``--format`` always an output format;
* a progress line on stderr (terminal only, not under CI);
* result tables fit 100 columns when COLUMNS=100.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer.main
from typer.testing import CliRunner

from ccbench.cli import app
from ccbench.cli.quantities import duration_s, packet_rate, size_bytes

ROOT = Path(__file__).resolve().parents[1]
runner = CliRunner()


def _leaves(cmd=None, path=()):
    cmd = cmd or typer.main.get_command(app)
    if not hasattr(cmd, "commands"):
        yield path, cmd
        return
    ctx = cmd.make_context("ccbench", ["--help"], resilient_parsing=True)
    for name in cmd.list_commands(ctx):
        yield from _leaves(cmd.get_command(ctx, name), (*path, name))


def _error(r) -> str:
    assert r.exit_code == 2, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return lines[0]


# ---- units ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, legacy, seconds",
    [("10s", None, 10.0), ("100ms", None, 0.1), ("2min", None, 120.0), ("10", "s", 10.0), ("50", "ms", 0.05),
     ("1.5s", "s", 1.5)],
)
def test_durations(text, legacy, seconds):
    assert duration_s(text, "--x", legacy=legacy) == pytest.approx(seconds)


@pytest.mark.parametrize(
    "text, size, legacy, pps",
    [("500pkt/s", 48, False, 500.0), ("500 packets/s", 48, False, 500.0), ("500pps", None, False, 500.0),
     ("200kbit", 50, False, 500.0), ("1Mbit/s", 1250, False, 100.0), ("500", 48, True, 500.0)],
)
def test_packet_rates(text, size, legacy, pps):
    assert packet_rate(text, "--rate", size, legacy=legacy) == pytest.approx(pps)


@pytest.mark.parametrize(
    "call, needle",
    [
        (lambda: duration_s("10", "--duration"), "a number needs a unit"),
        (lambda: duration_s("10 parsecs", "--duration", legacy="s"), "unknown unit 'parsecs'"),
        (lambda: duration_s("0s", "--duration"), "must be positive"),
        (lambda: packet_rate("500", "--rate", 48), "a number needs a unit"),
        (lambda: packet_rate("5 parsec", "--rate", 48), "unknown unit 'parsec'"),
        (lambda: packet_rate("5Mbit", "--max-rate", None), "not a packet rate"),
        (lambda: packet_rate("0pkt/s", "--rate", 48), "not a positive rate"),
        (lambda: size_bytes("48", "--size"), "a number needs a unit"),
        (lambda: size_bytes("48b", "--size"), "'b' would be bits"),
    ],
)
def test_bad_quantities_are_one_line_naming_the_option(call, needle, capsys):
    with pytest.raises(typer.Exit) as e:
        call()
    assert e.value.exit_code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --") and needle in err and len(err.splitlines()) == 1


def test_size_legacy_bare_bytes():
    assert size_bytes("48B", "--size") == 48 == size_bytes("48", "--size", legacy=True)
    assert size_bytes("1kB", "--size") == 1000


def test_no_visible_option_names_a_unit():
    """Units go in the value ("--rtt 50ms"), not the option name ("--rtt-ms")."""
    unit_suffix = re.compile(r"-(ns|us|ms|s|min|bps|kbps|mbps|pps|bytes|pkts)$")
    bad = []
    for path, cmd in _leaves():
        if path[0] == "model":
            continue  # the analytical models' options are renamed in their own change
        for p in cmd.params:
            if p.param_type_name == "option" and not p.hidden:
                bad += [f"{' '.join(path)} {o}" for o in p.opts if o.startswith("--") and unit_suffix.search(o)]
    assert bad == []


def test_out_is_always_a_directory_and_format_an_output_format():
    outs, formats = 0, 0
    for path, cmd in _leaves():
        for p in cmd.params:
            if p.param_type_name != "option" or p.hidden:
                continue
            if "--out" in p.opts:
                outs += 1
                assert "irectory" in (p.help or ""), f"{' '.join(path)} --out: {p.help}"
            if "--format" in p.opts:
                formats += 1
                assert re.search(r"\b(png|svg|csv|json|text|table)\b", p.help or ""), f"{' '.join(path)} --format"
            assert "--json" not in p.opts, f"{' '.join(path)}: --json is spelled --format json or --out DIR"
    assert outs >= 8 and formats >= 3


# ---- old spellings: hidden but working -----------------------------------------------


def _run_with_drops(tmp_path: Path) -> Path:
    from ccbench import probe

    n, rtt = 2000, 0.1
    t = np.arange(n) * 0.001
    lost = np.zeros(n, dtype=bool)
    lost[[100, 101, 103, 500, 550, 1200, 1900]] = True
    rec = pd.DataFrame({"seq": np.arange(n), "t_send_s": t, "lost": lost, "rtt_sample_s": rtt, "rtt_est_s": rtt,
                        "owd_s": np.where(lost, np.nan, rtt / 2)})
    probe.records_to_run(rec, {"size_bytes": 48, "seed": 1, "packets": n}).save(tmp_path / "p")
    return tmp_path / "p"


def test_rtt_and_its_old_spelling_agree(tmp_path):
    run_dir = _run_with_drops(tmp_path)
    new = runner.invoke(app, ["probe", "analyse", str(run_dir), "--rtt", "50ms"])
    old = runner.invoke(app, ["probe", "analyse", str(run_dir), "--rtt-ms", "50"])
    assert new.exit_code == 0 and new.output == old.output
    assert new.output != runner.invoke(app, ["probe", "analyse", str(run_dir)]).output
    assert "--rtt-ms" not in runner.invoke(app, ["probe", "analyse", "--help"]).output
    line = _error(runner.invoke(app, ["probe", "analyse", str(run_dir), "--rtt", "50"]))
    assert line.startswith("error: --rtt: '50' is not a valid duration")


def test_emu_check_format_json_and_the_old_flag():
    new = runner.invoke(app, ["emu", "check", "--format", "json"])
    old = runner.invoke(app, ["emu", "check", "--json"])
    assert new.exit_code == old.exit_code and json.loads(new.stdout).keys() == json.loads(old.stdout).keys()
    assert "error: --format: 'xml' is not accepted (accepted: text, json)" in _error(
        runner.invoke(app, ["emu", "check", "--format", "xml"]))


def test_report_out_is_a_directory_and_the_old_file_still_works(tmp_path):
    r = runner.invoke(app, ["run", str(ROOT / "examples" / "adsl1_voip.toml"), "--out", str(tmp_path / "run"), "-q"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "reports"), "--format", "png"])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "reports" / "report.html").stat().st_size > 1000
    r = runner.invoke(app, ["report", str(tmp_path / "run"), "--out", str(tmp_path / "old.html"), "--format", "png"])
    assert r.exit_code == 0 and (tmp_path / "old.html").is_file()


def test_bench_units_out_directory_and_old_spellings(tmp_path):
    r = runner.invoke(app, ["bench", "-w", "udp", "--duration", "200ms", "-n", "1", "--out", str(tmp_path / "b")])
    assert r.exit_code == 0, r.output
    rows = json.loads((tmp_path / "b" / "bench.json").read_text())
    assert rows["duration_s"] == pytest.approx(0.2) and rows["rows"][0]["workload"] == "udp"
    r = runner.invoke(app, ["bench", "-w", "udp", "--duration", "0.2", "-n", "1", "--json", str(tmp_path / "o.json")])
    assert r.exit_code == 0 and json.loads((tmp_path / "o.json").read_text())["duration_s"] == pytest.approx(0.2)
    assert "'2 parsecs'" in _error(runner.invoke(app, ["bench", "--duration", "2 parsecs"]))


# ---- progress and table widths --------------------------------------------------------


def test_progress_line_on_a_terminal_only(tmp_path):
    args = [sys.executable, "-m", "ccbench", "bench", "-w", "udp", "--duration", "100ms", "-n", "2"]
    base = {k: v for k, v in os.environ.items() if k not in ("CI", "FORCE_COLOR", "TTY_COMPATIBLE")}
    base["PYTHONPATH"] = str(ROOT / "python")
    on = subprocess.run(args, capture_output=True, text=True, env=dict(base, FORCE_COLOR="1"), timeout=120)
    assert on.returncode == 0 and "benchmarking" in on.stderr
    assert "benchmarking" not in on.stdout  # progress never mixes with the table
    off = subprocess.run(args, capture_output=True, text=True, env=base, timeout=120)
    assert off.returncode == 0 and off.stderr == ""
    ci = subprocess.run(args, capture_output=True, text=True, env=dict(base, FORCE_COLOR="1", CI="true"), timeout=120)
    assert ci.returncode == 0 and "benchmarking" not in ci.stderr


def _fake_study(monkeypatch, tmp_path):
    """A study with the shape of the real ones (many columns, long names), instant."""
    from ccbench import studies

    mod = types.ModuleType("ccbench_fake_study")
    mod.DESCRIPTION = "a stand-in"

    def run(full=False, out=None):
        cols = {"variant": ["droptail 0.5 BDP, 10 flows, RTT 100 ms, web + VoIP"] * 3}
        for k in range(3):  # natural width about 170 columns
            cols[f"paper_reduction_experiment_pct_{k}"] = np.linspace(0.001, 1234.5678, 3) * (k + 1)
            cols[f"ours_sd_{k}"] = np.linspace(0.5, 2.5, 3)
        return pd.DataFrame(cols)

    mod.run = run
    monkeypatch.setitem(sys.modules, "ccbench_fake_study", mod)
    monkeypatch.setitem(studies.STUDIES, "fake", "ccbench_fake_study")


def _widths(text: str) -> int:
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colours are not columns
    return max((len(line) for line in text.splitlines()), default=0)


def test_reproduce_shows_progress_and_its_table_fits_100_columns(monkeypatch, tmp_path):
    _fake_study(monkeypatch, tmp_path)
    r = runner.invoke(app, ["reproduce", "fake", "--out", str(tmp_path / "r")], env={"COLUMNS": "100", "CI": "",
                                                                                    "FORCE_COLOR": "1"})
    assert r.exit_code == 0, r.output
    assert "reproducing fake" in r.stderr
    assert _widths(r.stdout) <= 100, r.stdout
    assert "…" not in r.stdout  # wrapped, not cut
    assert "1235" in r.stdout  # 1234.5678 at 4 significant digits
    assert "experiment" in r.stdout  # snake_case headers wrap at their words


def test_run_table_fits_100_columns(tmp_path):
    env = dict(os.environ, COLUMNS="100", PYTHONPATH=str(ROOT / "python"))
    cp = subprocess.run([sys.executable, "-m", "ccbench", "run", str(ROOT / "examples" / "adsl1_voip.toml"), "--no-save"],
                        capture_output=True, text=True, env=env, timeout=120)
    assert cp.returncode == 0, cp.stderr
    assert "goodput" in cp.stdout and "voip" in cp.stdout
    assert _widths(cp.stdout) <= 100, cp.stdout
    # piped without COLUMNS: laid out for 100 columns too (not rich's 80, not wider)
    env.pop("COLUMNS")
    cp = subprocess.run([sys.executable, "-m", "ccbench", "run", str(ROOT / "examples" / "adsl1_voip.toml"), "--no-save"],
                        capture_output=True, text=True, env=env, timeout=120)
    assert cp.returncode == 0 and _widths(cp.stdout) <= 100
