"""``ccbench bench``: simulator speed and memory on standard workloads.

Each workload runs in a fresh Python process that imports only the compiled
extension, so the peak RSS reported is the simulator's plus a bare interpreter's
(about 10 MB), not pandas'.

The dumbbell runs once per congestion control and buffer. "vs reno" divides a run's
wall time by Reno's on the same buffer; "events vs reno" does the same for the event
count, which tells an algorithm whose code is slow (more time for the same events)
from one whose traffic is heavier (more events: losses, retransmissions, pacing
timers).
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Callable

import typer
from rich.table import Table

MS = 1_000_000
SEC = 1_000_000_000

# The dumbbell's two buffers: one bandwidth-delay product (417 packets), where the
# algorithms' loss behaviour differs (BBR v1 drops ~12 % there, as the kernel does),
# and one deeper than the ten send buffers together (10 x 512 KB = 3620 segments),
# where no algorithm drops a packet and all carry the same traffic.
BDP_PKTS = 417
DEEP_PKTS = 4000
BUFFERS = {"dumbbell": BDP_PKTS, "dumbbell-deep": DEEP_PKTS}
DEFAULT_CC = ("reno", "cubic", "bbr")

# Peak RSS from VmHWM (this process image's high-water mark): ru_maxrss would carry
# over the parent's peak across fork+exec.
_CHILD = r"""
import json, sys
from ccbench import _core
stats = _core.run_stats(sys.stdin.read())
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
stats["peak_rss_mb"] = int(hwm[0].split()[1]) / 1024.0 if hwm else float("nan")
print(json.dumps(stats))
"""


def udp_workload(duration_s: float = 60.0) -> dict:
    """Poisson arrivals of 1500-byte UDP packets at 90% of a 100 Mbit/s link."""
    rate = 100_000_000
    interval = round(1500 * 8 / rate / 0.9 * SEC)
    link = {"rate_bps": rate, "delay_ns": 10 * MS, "queue": {"kind": "droptail", "limit": 1000, "rule": "packets"}, "monitor": True}
    return {
        "seed": 1,
        "duration_ns": int(duration_s * SEC),
        "topology": {
            "kind": "graph",
            "nodes": ["a", "b"],
            "links": [{"from": "a", "to": "b", **link}, {"from": "b", "to": "a", **link, "monitor": False}],
        },
        "flows": [
            {
                "name": "udp",
                "src": "a",
                "dst": "b",
                "transport": {"kind": "udp"},
                "app": {"kind": "cbr", "size_bytes": 1500, "interval_ns": interval, "jitter": {"dist": "exponential"}},
            }
        ],
    }


def dumbbell_workload(cc: str, duration_s: float = 60.0, flows: int = 10, buffer_pkts: int = BDP_PKTS) -> dict:
    """10 bulk TCP flows, 100 Mbit/s bottleneck, 50 ms RTT, drop-tail of `buffer_pkts`
    packets (one BDP by default), 512 KB send and receive buffers."""
    bottleneck = {
        "rate_bps": 100_000_000,
        "delay_ns": 25 * MS,
        "queue": {"kind": "droptail", "limit": buffer_pkts, "rule": "packets"},
        "monitor": True,
    }
    return {
        "seed": 1,
        "duration_ns": int(duration_s * SEC),
        "topology": {"kind": "dumbbell", "pairs": flows, "bottleneck": {"down": bottleneck, "up": {**bottleneck, "monitor": False}}},
        "flows": [
            {
                "name": f"bulk{i}",
                "src": f"srv{i}",
                "dst": f"cli{i}",
                "transport": {"kind": "tcp", "cc": {"name": cc, "params": {}}, "sndbuf_bytes": 524288, "rcvbuf_bytes": 524288},
                "app": {"kind": "bulk"},
            }
            for i in range(flows)
        ],
    }


# --- scale: cost against the number of flows ----------------------------------------------

SCALE_SIZES = (10, 100, 1_000, 10_000, 100_000)

# The whole path a user takes (scenario, config, engine, tables), timed after the
# imports; the engine's own wall time comes back in the run's stats. simulate()
# imports pandas only once the engine has returned (so the two do not add up in
# the peak): the child runs under `-X importtime`, and the modules first imported
# inside the timed call are taken out of its time (`imports_s`), as the imports
# made before it always were.
_SCALE_CHILD = r"""
import json, sys, time
import ccbench
from ccbench.backends.sim import simulate
from ccbench.scenario import Scenario
data = json.loads(sys.stdin.read())
sys.stderr.write("ccbench-bench: timed\n"); sys.stderr.flush()
t0 = time.perf_counter()
run = simulate(Scenario.from_dict(data), seed=1)
total = time.perf_counter() - t0
sys.stderr.write("ccbench-bench: done\n"); sys.stderr.flush()
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM:")]
out = dict(run.meta["stats"])
out.update(total_s=total, rows=sum(len(getattr(run, t)) for t in ("packets", "cwnd", "queue", "drops")))
out["peak_rss_mb"] = int(hwm[0].split()[1]) / 1024.0 if hwm else float("nan")
print(json.dumps(out))
"""

# `-X importtime` lines: "import time: SELF | CUMULATIVE | NAME", the name indented
# by its nesting; a line with one space before the name is an import made from code.
_IMPORT_LINE = re.compile(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$")


def timed_imports_s(stderr: str) -> float:
    """Seconds of the top-level imports `-X importtime` logged between the child's
    "timed" and "done" markers."""
    inside, us = False, 0
    for line in stderr.splitlines():
        if line.startswith("ccbench-bench: "):
            inside = line.endswith("timed")
            continue
        m = _IMPORT_LINE.match(line) if inside else None
        if m:
            us += int(m.group(1))
    return us * 1e-6


def scale_scenario(topology: str, flows: int) -> dict:
    """The scale workloads (scenario dicts, as the TOML file would say).

    dumbbell: one bulk CUBIC flow per host pair over a 10 Gbit/s, 20 ms RTT
    bottleneck, 1 s. leaf-spine: 128 hosts (8 leaves x 16, 4 spines) at 10/40
    Gbit/s, DCTCP with marking at 65 packets on every switch queue, greedy flows
    between random host pairs arriving as a Poisson process over the first half of
    20 ms.
    """
    tcp = {"kind": "tcp", "cc": "cubic"}
    if topology == "dumbbell":
        return {
            "run": {"duration": "1s"},
            "topology": {
                "kind": "dumbbell",
                "bottleneck": {"down": "10Gbit", "up": "10Gbit", "delay": "10ms", "queue": {"kind": "droptail", "limit": "2000pkt"}},
            },
            "flows": [{"name": "f", "count": flows, "transport": tcp, "app": {"kind": "bulk"}}],
        }
    return {
        "run": {"duration": "20ms"},
        "topology": {
            "kind": "leaf_spine", "leaves": 8, "spines": 4, "hosts_per_leaf": 16,
            "host": {"rate": "10Gbit", "delay": "1us"}, "fabric": {"rate": "40Gbit", "delay": "1us"},
            "queue": {"kind": "droptail", "limit": "250pkt"}, "mark_threshold": "65pkt",
        },
        "flows": [
            {
                "name": "f", "count": flows, "src": "random", "dst": "random",
                "arrivals": "poisson", "start_every": f"{max(1, 10_000_000 // flows)}ns",
                "transport": {"kind": "tcp", "cc": "dctcp", "ecn": True}, "app": {"kind": "bulk"},
            }
        ],
    }


def run_scale(topology: str, flows: int) -> dict:
    """One scale point in a fresh interpreter (the full Python path)."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _SCALE_CHILD], input=json.dumps(scale_scenario(topology, flows)),
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0:
        lines = [x for x in proc.stderr.strip().splitlines() if not x.startswith(("import time:", "ccbench-bench: "))]
        last = lines[-1] if lines else f"exit {proc.returncode}"
        raise RuntimeError(f"scale run ({topology}, {flows} flows) failed: {last}")
    row = {"workload": topology, "flows": flows, **json.loads(proc.stdout)}
    row["imports_s"] = timed_imports_s(proc.stderr)
    row["total_s"] = max(row["total_s"] - row["imports_s"], 0.0)
    return row


def growth(rows: list[dict], key: str) -> list[float]:
    """Exponent b of key ~ flows^b between each row and the one before (NaN first)."""
    import math

    out = [float("nan")]
    for a, b in zip(rows, rows[1:]):
        ok = a[key] > 0 and b[key] > 0 and b["flows"] != a["flows"]
        out.append(math.log(b[key] / a[key]) / math.log(b["flows"] / a["flows"]) if ok else float("nan"))
    return out


SCALE_COLUMNS: tuple = (
    ("workload", lambda r: r["workload"]),
    ("flows", lambda r: f"{r['flows']:,}"),
    ("total s", lambda r: f"{r['total_s']:.2f}"),
    ("engine s", lambda r: f"{r['wall_s']:.2f}"),
    ("total/engine", lambda r: f"{r['total_s'] / max(r['wall_s'], 1e-9):.2f}"),
    ("events", lambda r: f"{r['events']:,}"),
    ("packet-hops/s", lambda r: f"{r['link_tx_pkts'] / max(r['wall_s'], 1e-9):,.0f}"),
    ("peak RSS MB", lambda r: f"{r['peak_rss_mb']:.0f}"),
    ("time exp", lambda r: "" if r["time_exp"] != r["time_exp"] else f"{r['time_exp']:.2f}"),
    ("memory exp", lambda r: "" if r["mem_exp"] != r["mem_exp"] else f"{r['mem_exp']:.2f}"),
)


def scale_cmd_rows(sizes: tuple[int, ...], topologies: tuple[str, ...], progress=None) -> list[dict]:
    """Runs every (topology, size) point; adds the growth exponents of total time
    and peak memory between consecutive sizes."""
    rows: list[dict] = []
    for topo in topologies:
        part = []
        for n in sizes:
            if progress:
                progress(f"scale {topo} {n:,} flows")
            part.append(run_scale(topo, n))
        for r, t, m in zip(part, growth(part, "total_s"), growth(part, "peak_rss_mb")):
            r["time_exp"], r["mem_exp"] = t, m
        rows += part
    return rows


def run_workload(config: dict, count_instructions: bool = False) -> dict:
    """Runs one workload in a fresh interpreter; returns its stats. With
    `count_instructions`, under callgrind, counting only the simulator's build and run
    (`instructions`): a figure that does not move with the machine's load."""
    cmd = [sys.executable, "-c", _CHILD]
    if count_instructions:
        cmd = ["valgrind", "--tool=callgrind", "--toggle-collect=*build_and_run*", "--callgrind-out-file=/dev/null", *cmd]
    proc = subprocess.run(cmd, input=json.dumps(config), capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr else proc.returncode}")
    stats = json.loads(proc.stdout)
    if count_instructions:
        m = re.search(r"Collected\s*:\s*(\d+)", proc.stderr)
        if not m:
            raise RuntimeError("callgrind printed no instruction count")
        stats["instructions"] = int(m.group(1))
    return stats


def parse_cc_list(text: str) -> tuple[str, ...]:
    """`--cc` value: "all", or names separated by commas, each one the simulator has."""
    from ccbench.cli.cc_names import available_cc
    from ccbench.cli.errors import fail

    known = available_cc()
    if text.strip() == "all":
        names = known
    else:
        names = tuple(n.strip() for n in text.split(",") if n.strip())
        bad = [n for n in names if n not in known]
        if bad or not names:
            raise fail(f"--cc: {', '.join(bad) or repr(text)} is not a congestion control (accepted: all, or any of {', '.join(known)})")
    # Reno first: every other run is compared with it.
    return ("reno", *[n for n in names if n != "reno"])


def workloads(which: str, duration_s: float, ccs: tuple[str, ...] = DEFAULT_CC) -> list[tuple[str, str, dict]]:
    """(workload, cc, config) for every run the selection asks for."""
    out = []
    if which in ("all", "udp"):
        out.append(("udp", "", udp_workload(duration_s)))
    for name, buffer_pkts in BUFFERS.items():
        if which in ("all", name):
            for cc in ccs:
                out.append((name, cc, dumbbell_workload(cc, duration_s, buffer_pkts=buffer_pkts)))
    return out


def summarize(rows: list[dict]) -> list[dict]:
    """Adds `wall_vs_reno`, `events_vs_reno` and (when counted) `instructions_vs_reno`
    to the dumbbell rows (NaN elsewhere)."""
    reno = {r["workload"]: r for r in rows if r["cc"] == "reno"}
    nan = float("nan")
    for r in rows:
        base = reno.get(r["workload"]) if r["cc"] else None
        r["wall_vs_reno"] = r["wall_s"] / base["wall_s"] if base else nan
        r["events_vs_reno"] = r["events"] / base["events"] if base else nan
        counted = base and r.get("instructions") and base.get("instructions")
        r["instructions_vs_reno"] = r["instructions"] / base["instructions"] if counted else nan
    return rows


def bench_cmd(
    workload: str = typer.Option("all", "--workload", "-w", help="udp, dumbbell, dumbbell-deep, all, or scale."),
    cc: str = typer.Option(
        ",".join(DEFAULT_CC), "--cc", help='Congestion controls for the dumbbells: names separated by commas, or "all".'
    ),
    duration: str = typer.Option("60s", "--duration", help='Simulated time per workload, e.g. "60s" (a bare number is seconds).'),
    repeat: int = typer.Option(5, "--repeat", "-n", help="Runs per workload (round-robin); the best wall time is reported."),
    out: Path = typer.Option(None, "--out", "-o", help="Also write the rows to bench.json in this directory.", show_default=False),
    json_out: str = typer.Option("", "--json", hidden=True, help="Old spelling: the JSON file itself."),
    sizes: str = typer.Option(
        ",".join(str(n) for n in SCALE_SIZES), "--sizes", help="-w scale: flow counts, separated by commas."
    ),
    scale_topology: str = typer.Option(
        "dumbbell,leaf-spine", "--topology", help="-w scale: dumbbell, leaf-spine or both (comma-separated)."
    ),
    instructions: bool = typer.Option(
        False,
        "--instructions",
        help="Count the simulator's instructions under valgrind (one run each, ~50x slower) "
        "instead of timing: exact and repeatable on a loaded or shared machine.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Measure simulator speed: wall time, events/s, bottleneck packets/s and peak memory.

    Workloads: "udp" (Poisson 1500-byte packets at 90% of 100 Mbit/s); "dumbbell"
    (10 bulk TCP flows, 100 Mbit/s, 50 ms RTT, 417-packet = 1-BDP drop-tail) and
    "dumbbell-deep" (the same with 4000 packets: no algorithm drops, so all carry
    the same traffic), once per congestion control. Each runs 60 simulated seconds
    by default; "vs reno" is the wall time over Reno's on the same buffer. Wall
    times are the best of --repeat runs, taken round-robin over the workloads.

    Examples:

      ccbench bench

      ccbench bench -w dumbbell --cc all -n 5 --duration 10s

    "scale" runs the whole Python path (scenario, engine, tables) once per flow
    count, on a 10 Gbit/s dumbbell (one CUBIC flow per pair, 1 s) and a 128-host
    leaf-spine (DCTCP, random pairs, 20 ms), and prints total and engine time,
    packet-hops/s, peak RSS and the growth exponents between sizes:

      nice ccbench bench -w scale --sizes 1000,10000,100000
    """
    from ccbench.cli.errors import fail
    from ccbench.cli.progress import task_progress

    if workload == "scale":
        return scale_cmd(sizes, scale_topology, str(out / "bench.json") if out is not None else json_out)
    if workload not in ("all", "udp", *BUFFERS):
        raise fail(f"--workload: {workload!r} is not a workload (accepted: udp, dumbbell, dumbbell-deep, all, scale)")
    from ccbench.cli.quantities import duration_s

    duration = duration_s(duration, "--duration", legacy="s")
    if repeat < 1:
        raise fail(f"--repeat: {repeat} (accepted: 1 or more)")
    if instructions and shutil.which("valgrind") is None:
        raise fail("--instructions needs valgrind (Debian: apt-get install -y valgrind)")
    ccs = parse_cc_list(cc)
    jobs = workloads(workload, duration, ccs)
    if instructions:
        repeat = 1
    # Repeats go round-robin over the workloads, so a slow spell of a shared machine
    # hits every workload alike; the best of the repeats is reported (as `timeit`
    # does): interference only ever adds time.
    runs: list[list[dict]] = [[] for _ in jobs]
    with task_progress("benchmarking", total=len(jobs) * repeat, enabled=not quiet) as advance:
        for _ in range(repeat):
            for k, (name, algo, cfg) in enumerate(jobs):
                advance(0, f"{name} {algo}".strip())
                runs[k].append(run_workload(cfg, instructions))
                advance()
    rows = []
    for (name, algo, _), rs in zip(jobs, runs):
        rows.append(
            {
                "workload": name,
                "cc": algo,
                "wall_s": min(r["wall_s"] for r in rs),
                "wall_median_s": statistics.median(r["wall_s"] for r in rs),
                "events": rs[0]["events"],
                "link_tx_pkts": rs[0]["link_tx_pkts"],
                "bottleneck_tx_pkts": rs[0]["bottleneck_tx_pkts"],
                "bottleneck_drops": rs[0].get("bottleneck_drops", 0),
                "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
                "instructions": rs[0].get("instructions"),
            }
        )
    summarize(rows)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        json_out = str(out / "bench.json")
    if json_out:
        with open(json_out, "w") as f:
            json.dump({"duration_s": duration, "repeat": repeat, "rows": rows}, f, indent=1)
    from ccbench.cli.progress import output_console

    table = render_instructions(rows, duration) if instructions else render(rows, duration, repeat)
    output_console().print(table)


def _ratio(x: float) -> str:
    return "" if x != x else f"{x:.2f}x"


def _drop_share(r: dict) -> str:
    """Share of the packets offered to the bottleneck that it dropped."""
    offered = r["bottleneck_tx_pkts"] + r["bottleneck_drops"]
    return f"{100 * r['bottleneck_drops'] / offered:.2f}%" if offered else ""


# A table column: its header and how a row's cell is written. Header and cell sit
# together so that the two tables cannot fall out of step.
Column = tuple[str, Callable[[dict], str]]

WALL_COLUMNS: tuple[Column, ...] = (
    ("workload", lambda r: r["workload"]),
    ("cc", lambda r: r["cc"]),
    ("wall s", lambda r: f"{r['wall_s']:.3f}"),
    ("vs reno", lambda r: _ratio(r["wall_vs_reno"])),
    ("M events/s", lambda r: f"{r['events'] / r['wall_s'] / 1e6:.2f}"),
    ("events vs reno", lambda r: _ratio(r["events_vs_reno"])),
    ("bottleneck pkts/s", lambda r: f"{r['bottleneck_tx_pkts'] / r['wall_s']:,.0f}"),
    ("drops", _drop_share),
    ("peak RSS MB", lambda r: f"{r['peak_rss_mb']:.1f}"),
)

INSTRUCTION_COLUMNS: tuple[Column, ...] = (
    ("workload", lambda r: r["workload"]),
    ("cc", lambda r: r["cc"]),
    ("M instructions", lambda r: f"{r['instructions'] / 1e6:,.1f}"),
    ("vs reno", lambda r: _ratio(r["instructions_vs_reno"])),
    ("events vs reno", lambda r: _ratio(r["events_vs_reno"])),
    ("instructions/event", lambda r: f"{r['instructions'] / r['events']:,.0f}"),
    ("drops", _drop_share),
)


def _table(title: str, columns: tuple[Column, ...], rows: list[dict]) -> Table:
    table = Table(title=title, title_justify="left")
    for header, _ in columns:
        table.add_column(header, justify="left" if header in ("workload", "cc") else "right")
    for r in rows:
        table.add_row(*(cell(r) for _, cell in columns))
    return table


def render(rows: list[dict], duration: float, repeat: int) -> Table:
    return _table(f"ccbench bench ({duration:g} s simulated, best of {repeat})", WALL_COLUMNS, rows)


def render_instructions(rows: list[dict], duration: float) -> Table:
    return _table(f"ccbench bench --instructions ({duration:g} s simulated)", INSTRUCTION_COLUMNS, rows)


def scale_cmd(sizes: str, topology: str, json_out: str) -> None:
    """``ccbench bench -w scale``."""
    from ccbench.cli.errors import fail

    try:
        counts = tuple(int(x.replace("_", "")) for x in sizes.split(",") if x.strip())
    except ValueError:
        counts = ()
    if not counts or min(counts) < 1:
        raise fail(f"--sizes: {sizes!r} (accepted: positive flow counts separated by commas, e.g. 10,100,1000)")
    topos = tuple(t.strip() for t in topology.split(",") if t.strip())
    if not topos or any(t not in ("dumbbell", "leaf-spine") for t in topos):
        raise fail(f"--topology: {topology!r} (accepted: dumbbell, leaf-spine, or both separated by a comma)")
    from ccbench.cli.progress import output_console

    from rich.console import Console

    # Ten columns: wide enough also when the output is not a terminal (CI logs).
    console = Console(width=max(output_console().width, 140))
    with console.status("") as status:
        rows = scale_cmd_rows(tuple(sorted(counts)), topos, lambda text: status.update(text))
    if json_out:
        Path(json_out).parent.mkdir(parents=True, exist_ok=True)
        with open(json_out, "w") as f:
            json.dump({"rows": rows}, f, indent=1)
    console.print(_table("ccbench bench -w scale (best of 1; exponents: growth in flows)", SCALE_COLUMNS, rows))


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_cmd)
