"""The CLI as a user runs it: run, validate, and clear one-line errors."""

from __future__ import annotations

import textwrap

import pytest

from conftest import needs_core

pytestmark = needs_core

GOOD = """
[run]
duration = "5s"

[topology]
kind = "dumbbell"
bottleneck = { down = "1.5Mbit", up = "256kbit", delay = "50ms", queue = { kind = "droptail", limit = "20000B" } }

[[flows]]
name = "voip"
transport = { kind = "udp" }
app = { kind = "cbr", size = "186B", interval = "20ms" }
"""


def write(tmp_path, text: str):
    p = tmp_path / "s.toml"
    p.write_text(textwrap.dedent(text))
    return p


def test_run_prints_table_and_saves(tmp_path, ccbench_cli):
    out = tmp_path / "run"
    r = ccbench_cli("run", str(write(tmp_path, GOOD)), "--out", str(out), "--seed", "4")
    assert r.returncode == 0, r.stderr
    assert "voip" in r.stdout and "kbit/s" in r.stdout
    from ccbench import Run

    run = Run.load(out)
    assert run.meta["seed"] == 4
    assert len(run.packets) == 250
    # propagation 50 ms + 186 B at 1.5 Mbit/s (992 us) + two 10 Gbit/s access hops.
    assert run.flows.loc[0, "delay_p50_s"] == pytest.approx(0.050992 + 2 * 149e-9, abs=1e-9)


def test_validate_ok(tmp_path, ccbench_cli):
    r = ccbench_cli("validate", str(write(tmp_path, GOOD)))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("ok")


BAD = {
    "unknown key": (GOOD.replace('duration = "5s"', 'duration = "5s"\ncolour = "red"'), "colour"),
    "negative rate": (GOOD.replace('down = "1.5Mbit"', 'down = "-1.5Mbit"'), "-1.5Mbit"),
    "bad unit": (GOOD.replace('interval = "20ms"', 'interval = "20 parsecs"'), "20 parsecs"),
    "queue limit 0": (GOOD.replace('limit = "20000B"', 'limit = "0B"'), "limit"),
    "flow to a missing node": (
        """
[topology]
kind = "graph"
nodes = ["a", "b"]
links = [{ from = "a", to = "b", rate = "1Mbit", delay = "1ms" }, { from = "b", to = "a", rate = "1Mbit", delay = "1ms" }]

[[flows]]
name = "x"
src = "a"
dst = "nowhere"
transport = { kind = "udp" }
app = { kind = "cbr", size = "100B", interval = "10ms" }
""",
        "nowhere",
    ),
}


@pytest.mark.parametrize(
    "case,command", [(c, "run") for c in sorted(BAD)] + [("unknown key", "validate"), ("flow to a missing node", "validate")]
)
def test_bad_scenarios_give_one_line_errors(tmp_path, ccbench_cli, case, command):
    text, needle = BAD[case]
    r = ccbench_cli(command, str(write(tmp_path, text)), *(["--no-save"] if command == "run" else []))
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    lines = [l for l in r.stderr.strip().splitlines() if l.strip()]
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("error: ")
    assert needle in lines[0], lines[0]


def test_missing_file_is_a_clear_error(ccbench_cli, tmp_path):
    r = ccbench_cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert "nope.toml" in r.stderr


def test_help_teaches_with_examples(ccbench_cli):
    r = ccbench_cli("--help")
    assert r.returncode == 0
    assert "ccbench run examples/adsl1_voip.toml" in r.stdout
