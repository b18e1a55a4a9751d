"""Hostile and careless input, as an attacker or a tired user gives it: every case must
end with exit code 2 and one line ``error: ...`` naming the field or option, never a
traceback, never a hang (a device such as /dev/zero must not be read), never an abort.

Table-driven: each case is (id, how to build the input, the command line, a fragment
the one line must contain). Runs the CLI in this process (fast); a traceback escapes
``run_cli`` and fails the case.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Callable

import pytest

from conftest import needs_core

pytestmark = needs_core

BASE = """[run]
duration = "1s"
[topology]
kind = "dumbbell"
[topology.bottleneck]
down = "1.5Mbit"
up = "256kbit"
delay = "50ms"
queue = { kind = "droptail", limit = "20000B" }
[[flows]]
name = "voip"
transport = { kind = "udp" }
app = { kind = "cbr", size = "186B", interval = "20ms" }
"""
BULK = BASE.replace('transport = { kind = "udp" }', 'transport = { kind = "tcp" }').replace(
    'app = { kind = "cbr", size = "186B", interval = "20ms" }', 'app = { kind = "bulk" }'
)
APP = 'app = { kind = "cbr", size = "186B", interval = "20ms" }'


def sub(old: str, new: str, base: str = BASE) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


def tcp(opts: str) -> str:
    return sub('transport = { kind = "tcp" }', f'transport = {{ kind = "tcp", {opts} }}', BULK)


def trace(file: str) -> str:
    return sub(APP, f'app = {{ kind = "trace", file = "{file}" }}')


# (id, scenario text or bytes or a callable(tmp) -> path, fragment of the error line)
SCENARIOS: list[tuple[str, object, str]] = [
    # --- the file itself ---
    ("binary-file", bytes(range(256)) * 8, "not UTF-8 text"),
    ("random-bytes", os.urandom(4096).replace(b"\n", b"x") + b"\xff", "not UTF-8 text"),
    ("nul-bytes", b"[run]\x00\nduration = \"1s\"\n", "TOML syntax error"),
    ("utf16-bom", "\ufeff[run]".encode("utf-16"), "not UTF-8 text"),
    ("empty-file", b"", "is empty"),
    ("only-comment", "# nothing\n", "topology: is required"),
    ("toml-syntax", "[run\nduration = 1", "TOML syntax error at line 1"),
    ("deep-arrays", "a = " + "[" * 5000 + "]" * 5000 + "\n", "nesting is too deep"),
    ("deep-inline-tables", "a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n", "nesting is too deep"),
    ("deep-but-parsable", "a = " + "[" * 60 + "]" * 60 + "\n", "nested deeper than 32 levels"),
    ("huge-key-count", "\n".join(f"k{i} = {i}" for i in range(20000)) + "\n" + BASE, "is not an accepted key"),
    # --- numbers: overflow, NaN, infinity, 64 bits ---
    ("exponent-overflow-duration", sub('interval = "20ms"', 'interval = "1e999ms"'), "flows.voip.app.interval"),
    ("exponent-overflow-rate", sub('down = "1.5Mbit"', 'down = "1e400Mbit"'), "topology.bottleneck.down"),
    ("exponent-overflow-size", sub('limit = "20000B"', 'limit = "1e30B"'), "topology.bottleneck.queue.limit"),
    ("run-duration-overflow", sub('duration = "1s"', 'duration = "1e300s"'), "run.duration"),
    ("int-beyond-64-bits", sub('duration = "1s"', 'duration = "1s"\nseed = 99999999999999999999999'), "run.seed"),
    ("int-beyond-64-bits-mss", tcp("mss = 18446744073709551617"), "flows.voip.transport.mss"),
    ("seed-2^64", sub('duration = "1s"', 'duration = "1s"\nseed = 18446744073709551616'), "run.seed"),
    ("seed-negative", sub('duration = "1s"', 'duration = "1s"\nseed = -1'), "run.seed"),
    ("seeds-float", sub('duration = "1s"', 'duration = "1s"\nseeds = 1e308'), "run.seeds"),
    ("seeds-zero", sub('duration = "1s"', 'duration = "1s"\nseeds = 0'), "run.seeds"),
    ("cc-param-nan", tcp('cc = { name = "cubic", beta = nan }'), "flows.voip.transport.cc.beta"),
    ("cc-param-inf", tcp('cc = { name = "cubic", beta = inf }'), "flows.voip.transport.cc.beta"),
    ("cc-param-neg-inf", tcp('cc = { name = "cubic", beta = -inf }'), "flows.voip.transport.cc.beta"),
    ("loss-nan", sub('delay = "50ms"', 'delay = "50ms"\nloss = { kind = "bernoulli", p = nan }'), "topology.bottleneck.loss"),
    ("loss-inf", sub('delay = "50ms"', 'delay = "50ms"\nloss = { kind = "bernoulli", p = inf }'), "topology.bottleneck.loss"),
    ("loss-above-one", sub('delay = "50ms"', 'delay = "50ms"\nloss = { kind = "bernoulli", p = 1.5 }'), "topology.bottleneck.loss"),
    ("rate-nan", sub('down = "1.5Mbit"', 'down = "nanMbit"'), "topology.bottleneck.down"),
    ("rate-inf", sub('down = "1.5Mbit"', 'down = "infMbit"'), "topology.bottleneck.down"),
    ("rate-zero", sub('down = "1.5Mbit"', 'down = "0Mbit"'), "topology.bottleneck.down"),
    ("jitter-sd-overflow", sub('interval = "20ms" }', 'interval = "20ms", jitter = { dist = "normal", sd = "1e400ms" } }'), "flows.voip.app.jitter"),
    ("bare-number-rate", sub('down = "1.5Mbit"', "down = 1500000"), "topology.bottleneck.down"),
    ("bare-float-nan", sub('transport = { kind = "udp" }', 'transport = { kind = "udp", header = nan }'), "flows.voip.transport.header"),
    # --- negative and absurd sizes and times ---
    ("negative-size", sub('size = "186B"', 'size = "-186B"'), "flows.voip.app.size"),
    ("zero-size", sub('size = "186B"', 'size = "0B"'), "flows.voip.app.size"),
    ("size-beyond-u32", sub('size = "186B"', 'size = "99999999999999999999999B"'), "flows.voip.app.size"),
    ("fractional-size", sub('size = "186B"', 'size = "186.5B"'), "flows.voip.app.size"),
    ("negative-interval", sub('interval = "20ms"', 'interval = "-20ms"'), "flows.voip.app.interval"),
    ("zero-interval", sub('interval = "20ms"', 'interval = "0ms"'), "flows.voip.app.interval"),
    ("negative-delay", sub('delay = "50ms"', 'delay = "-50ms"'), "topology.bottleneck.delay"),
    ("negative-queue", sub('limit = "20000B"', 'limit = "-1pkt"'), "topology.bottleneck.queue.limit"),
    ("negative-duration", sub('duration = "1s"', 'duration = "-1s"'), "run.duration"),
    ("zero-duration", sub('duration = "1s"', 'duration = "0s"'), "run.duration"),
    ("negative-mss", tcp("mss = -1"), "flows.voip.transport.mss"),
    ("negative-init-cwnd", tcp("init_cwnd = -10"), "flows.voip.transport.init_cwnd"),
    ("unit-garbage", sub('interval = "20ms"', 'interval = "20 fortnights"'), "flows.voip.app.interval"),
    ("unit-empty-string", sub('interval = "20ms"', 'interval = ""'), "flows.voip.app.interval"),
    ("unit-unicode", sub('interval = "20ms"', 'interval = "20ｍs"'), "flows.voip.app.interval"),
    ("very-long-string", sub('interval = "20ms"', 'interval = "' + "9" * 100000 + 'ms"'), "flows.voip.app.interval"),
    # --- types and names ---
    ("flows-not-a-list", sub("[[flows]]", "flows = 3\n[[nope]]"), "flows"),
    ("flow-name-duplicate", BASE + '[[flows]]\nname = "voip"\ntransport = { kind = "udp" }\n' + APP + "\n", "flows"),
    ("unknown-key", sub('duration = "1s"', 'duration = "1s"\nfoo = 1'), "run.foo"),
    ("unknown-cc", tcp('cc = "nosuchcc"'), "flows.voip.transport.cc"),
    ("unknown-kind", sub('kind = "dumbbell"', 'kind = "torus"'), "topology"),
    ("bool-as-size", sub('size = "186B"', "size = true"), "flows.voip.app.size"),
    ("array-as-rate", sub('down = "1.5Mbit"', 'down = ["1Mbit"]'), "topology.bottleneck.down"),
    ("pair-beyond-pairs", sub('[[flows]]\nname = "voip"', '[[flows]]\nname = "voip"\npair = 5', sub('kind = "dumbbell"', 'kind = "dumbbell"\npairs = 2')), "flows.voip.pair"),
    ("pair-huge", sub('[[flows]]\nname = "voip"', '[[flows]]\nname = "voip"\npair = 99999999999999999999'), "flows.voip.pair"),
    ("count-a-billion", sub('[[flows]]\nname = "voip"', '[[flows]]\nname = "voip"\ncount = 1000000000'), "flows.voip.count"),
    ("count-both-directions", sub('[[flows]]\nname = "voip"', '[[flows]]\nname = "voip"\ndirection = "both"\ncount = 60000'), "flows.voip.count"),
    ("key-with-line-separator", sub('duration = "1s"', 'duration = "1s"\n"a\u2028b\u0085c" = 1'), "run.a\\u2028b\\u0085c"),
    ("raw-escape-codes", sub('kind = "dumbbell"', 'kind = "\u001b[2J\u0085dumbbell"'), "TOML syntax error"),
    ("value-with-escape-codes", sub('kind = "dumbbell"', 'kind = "\\u001b[2J\\u0085dumbbell"'), "\\u001b[2J\\u0085dumbbell"),
    # --- files a scenario names ---
    ("trace-missing", trace("/nonexistent/trace.csv"), "flows.voip.app.file"),
    ("trace-empty", lambda tmp: trace(_file(tmp, "empty.csv", b"")), "flows.voip.app.file"),
    ("trace-directory", lambda tmp: trace(str(tmp)), "flows.voip.app.file"),
    ("trace-dev-zero", trace("/dev/zero"), "flows.voip.app.file"),
    ("trace-dev-null", trace("/dev/null"), "flows.voip.app.file"),
    ("trace-fifo", lambda tmp: trace(_fifo(tmp)), "flows.voip.app.file"),
    ("trace-binary", lambda tmp: trace(_file(tmp, "bin.csv", bytes(range(256)) * 10)), "flows.voip.app.file"),
    ("trace-header-only", lambda tmp: trace(_file(tmp, "h.csv", b"time_s,size_bytes\n")), "flows.voip.app.file"),
    ("trace-wrong-columns", lambda tmp: trace(_file(tmp, "w.csv", b"a,b\n1,2\n")), "flows.voip.app.file"),
    ("trace-text-values", lambda tmp: trace(_file(tmp, "t.csv", b"time_s,size_bytes\nabc,def\n")), "flows.voip.app.file"),
    ("trace-nan-time", lambda tmp: trace(_file(tmp, "n.csv", b"time_s,size_bytes\nnan,100\n")), "flows.voip.app.file"),
    ("trace-inf-time", lambda tmp: trace(_file(tmp, "i.csv", b"time_s,size_bytes\ninf,100\n")), "flows.voip.app.file"),
    ("trace-huge-time", lambda tmp: trace(_file(tmp, "h2.csv", b"time_s,size_bytes\n1e300,100\n")), "flows.voip.app.file"),
    ("trace-negative-size", lambda tmp: trace(_file(tmp, "s.csv", b"time_s,size_bytes\n0,-5\n")), "flows.voip.app.file"),
    ("trace-size-beyond-u32", lambda tmp: trace(_file(tmp, "s2.csv", b"time_s,size_bytes\n0,99999999999\n")), "flows.voip.app.file"),
    ("trace-decreasing", lambda tmp: trace(_file(tmp, "d.csv", b"time_s,size_bytes\n1,10\n0,10\n")), "flows.voip.app.file"),
]


def _file(tmp: Path, name: str, data: bytes) -> str:
    p = tmp / name
    p.write_bytes(data)
    return str(p)


def _fifo(tmp: Path) -> str:
    p = tmp / "fifo.csv"
    os.mkfifo(p)
    return str(p)


@pytest.fixture
def cli(capsys, monkeypatch):
    from ccbench.cli import app
    from ccbench.cli.errors import run_cli

    monkeypatch.setenv("COLUMNS", "200")

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["ccbench", *args])
        capsys.readouterr()
        try:
            code = run_cli(app)
        except SystemExit as e:  # click's own exits
            code = e.code if isinstance(e.code, int) else 1
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _one_line(code: int, err: str, fragment: str) -> None:
    """Exit 2 and ``error: <field>: ...``: one line (one per problem where a file has
    several, each naming its field), the fragment in it."""
    import re

    lines = err.strip().splitlines()
    assert code == 2, f"exit {code}: {err}"
    assert "Traceback" not in err
    assert lines and lines[0].startswith("error: "), err
    assert len(lines) <= 11, f"more than one line per problem, or more than 10 problems listed: {err}"
    assert all(re.match(r"^(\S+: |\.\.\. and \d+ more problems$)", ln) for ln in [lines[0][len("error: "):], *lines[1:]]), err
    assert fragment in err, f"{fragment!r} not in {err!r}"


def _scenario_path(tmp_path: Path, body) -> Path:
    if callable(body):
        body = body(tmp_path)
    p = tmp_path / "hostile.toml"
    p.write_bytes(body if isinstance(body, bytes) else body.encode("utf-8"))
    return p


@pytest.mark.parametrize("body, fragment", [c[1:] for c in SCENARIOS], ids=[c[0] for c in SCENARIOS])
def test_hostile_scenario_is_one_line(tmp_path, cli, body, fragment):
    p = _scenario_path(tmp_path, body)
    for cmd in (("validate", str(p)), ("run", str(p), "--no-save", "--quiet")):
        code, _, err = cli(*cmd)
        _one_line(code, err, fragment)


# --- paths and options -------------------------------------------------------------------------


def _mk(tmp: Path) -> dict[str, str]:
    good = tmp / "good.toml"
    good.write_text(BASE)
    afile = tmp / "afile"
    afile.write_text("x")
    (tmp / "dir").mkdir()
    (tmp / "d.html").mkdir()
    fifo = tmp / "fifo.toml"
    os.mkfifo(fifo)
    sweep_dir = tmp / "sweep_dir"
    sweep_dir.mkdir()
    (sweep_dir / "sweep.json").write_text("{not json")
    (sweep_dir / "runs").mkdir()
    run_dir = tmp / "run_dir"
    run_dir.mkdir()
    (run_dir / "meta.json").write_text("{}")
    for t in ("packets", "flows", "cwnd", "queue", "drops"):
        (run_dir / f"{t}.parquet").write_bytes(b"PAR1garbagePAR1")
    (tmp / "bin.toml").write_bytes(bytes(range(256)))
    sw = tmp / "sweep.toml"
    sw.write_text('scenario = "good.toml"\n[sweep]\n"run.duration" = ["1s"]\n')
    return {"good": str(good), "afile": str(afile), "dir": str(tmp / "dir"), "fifo": str(fifo), "tmp": str(tmp),
            "sweep_dir": str(sweep_dir), "run_dir": str(run_dir), "sweep": str(sw), "bin": str(tmp / "bin.toml"), "htmldir": str(tmp / "d.html")}


# (id, argv with {placeholders}, fragment)
COMMANDS: list[tuple[str, list[str], str]] = [
    ("scenario-is-directory", ["validate", "{dir}"], "is a directory"),
    ("scenario-missing", ["validate", "{tmp}/nope.toml"], "does not exist"),
    ("scenario-dev-zero", ["validate", "/dev/zero"], "not a regular file"),
    ("scenario-fifo", ["run", "{fifo}", "--quiet"], "not a regular file"),
    ("run-out-is-a-file", ["run", "{good}", "--out", "{afile}", "--quiet"], "--out: "),
    ("run-out-under-a-file", ["run", "{good}", "--out", "{afile}/sub", "--quiet"], "--out: "),
    ("run-seed-beyond-64-bits", ["run", "{good}", "--seed", "99999999999999999999999", "--quiet", "--no-save"], "seed"),
    ("run-seed-negative", ["run", "{good}", "--seed", "-5", "--quiet", "--no-save"], "seed"),
    ("sweep-file-dev-zero", ["sweep", "/dev/zero"], "not a regular file"),
    ("sweep-file-binary", ["sweep", "{bin}"], "not UTF-8"),
    ("sweep-file-directory", ["sweep", "{dir}"], "is a directory"),
    ("sweep-out-is-a-file", ["sweep", "{sweep}", "--out", "{afile}", "--quiet"], "--out: "),
    ("sweep-jobs-zero", ["sweep", "{sweep}", "--jobs", "0"], "--jobs"),
    ("query-not-a-sweep", ["query", "{dir}", "SELECT 1"], "is not a sweep directory"),
    ("query-damaged-sweep-json", ["query", "{sweep_dir}", "SELECT 1"], "sweep.json"),
    ("query-bad-format", ["query", "{sweep_dir}", "SELECT 1", "--format", "xml"], "--format"),
    ("query-negative-limit", ["query", "{sweep_dir}", "SELECT 1", "--limit", "-1"], "--limit"),
    ("report-out-html-is-a-directory", ["report", "{run_dir}", "--out", "{htmldir}"], "--out: "),
    ("report-out-is-a-file", ["report", "{run_dir}", "--out", "{afile}"], "--out: "),
    ("report-out-under-a-file", ["report", "{run_dir}", "--out", "{afile}/r.html"], "--out: "),
    ("report-bad-format", ["report", "{run_dir}", "--format", "gif"], "--format"),
    ("report-damaged-run-tables", ["report", "{run_dir}"], "parquet"),
    ("plot-damaged-run-tables", ["plot", "{run_dir}"], "parquet"),
]


@pytest.mark.parametrize("argv, fragment", [c[1:] for c in COMMANDS], ids=[c[0] for c in COMMANDS])
def test_hostile_paths_and_options_are_one_line(tmp_path, cli, argv, fragment):
    names = _mk(tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    code, _, err = cli(*[a.format(**names) for a in argv])
    _one_line(code, err, fragment)
    if argv[0] == "report":  # no directory created on the way to an error
        assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_corpus_is_large():
    assert len(SCENARIOS) * 2 + len(COMMANDS) >= 60 and len(SCENARIOS) >= 60
