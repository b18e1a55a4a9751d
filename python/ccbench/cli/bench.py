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
import statistics
import subprocess
import sys

import typer
from rich.console import Console
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


def run_workload(config: dict) -> dict:
    """Runs one workload in a fresh interpreter; returns its stats."""
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD], input=json.dumps(config), capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark child failed: {proc.stderr.strip().splitlines()[-1] if proc.stderr else proc.returncode}")
    return json.loads(proc.stdout)


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
    """Adds `wall_vs_reno` and `events_vs_reno` to the dumbbell rows (NaN elsewhere)."""
    reno = {r["workload"]: r for r in rows if r["cc"] == "reno"}
    for r in rows:
        base = reno.get(r["workload"]) if r["cc"] else None
        r["wall_vs_reno"] = r["wall_s"] / base["wall_s"] if base else float("nan")
        r["events_vs_reno"] = r["events"] / base["events"] if base else float("nan")
    return rows


def bench_cmd(
    workload: str = typer.Option("all", "--workload", "-w", help="udp, dumbbell, dumbbell-deep or all."),
    cc: str = typer.Option(
        ",".join(DEFAULT_CC), "--cc", help='Congestion controls for the dumbbells: names separated by commas, or "all".'
    ),
    duration: float = typer.Option(60.0, "--duration", help="Simulated seconds per workload."),
    repeat: int = typer.Option(3, "--repeat", "-n", help="Runs per workload; the median wall time is reported."),
    json_out: str = typer.Option("", "--json", help="Also write the rows to this JSON file."),
) -> None:
    """Measure simulator speed: wall time, events/s, bottleneck packets/s and peak memory.

    Workloads: "udp" (Poisson 1500-byte packets at 90% of 100 Mbit/s); "dumbbell"
    (10 bulk TCP flows, 100 Mbit/s, 50 ms RTT, 417-packet = 1-BDP drop-tail) and
    "dumbbell-deep" (the same with 4000 packets: no algorithm drops, so all carry
    the same traffic), once per congestion control. Each runs 60 simulated seconds
    by default; "vs reno" is the wall time over Reno's on the same buffer.

    Examples:

      ccbench bench

      ccbench bench -w dumbbell --cc all -n 5
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ccbench.cli.errors import fail

    if workload not in ("all", "udp", *BUFFERS):
        raise fail(f"--workload: {workload!r} is not a workload (accepted: udp, dumbbell, dumbbell-deep, all)")
    if duration <= 0:
        raise fail(f"--duration: {duration:g} is not a positive number of seconds")
    if repeat < 1:
        raise fail(f"--repeat: {repeat} (accepted: 1 or more)")
    ccs = parse_cc_list(cc)
    jobs = workloads(workload, duration, ccs)
    rows = []
    with Progress(
        TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=True
    ) as progress:
        task = progress.add_task("benchmarking", total=len(jobs) * repeat)
        for name, algo, cfg in jobs:
            progress.update(task, description=f"{name} {algo}".strip())
            runs = []
            for _ in range(repeat):
                runs.append(run_workload(cfg))
                progress.advance(task)
            rows.append(
                {
                    "workload": name,
                    "cc": algo,
                    "wall_s": statistics.median(r["wall_s"] for r in runs),
                    "events": runs[0]["events"],
                    "link_tx_pkts": runs[0]["link_tx_pkts"],
                    "bottleneck_tx_pkts": runs[0]["bottleneck_tx_pkts"],
                    "bottleneck_drops": runs[0].get("bottleneck_drops", 0),
                    "peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                }
            )
    summarize(rows)
    if json_out:
        with open(json_out, "w") as f:
            json.dump({"duration_s": duration, "repeat": repeat, "rows": rows}, f, indent=1)
    # Wide enough for every column also when the output is not a terminal (CI logs).
    console = Console()
    Console(width=max(console.width, 118)).print(render(rows, duration, repeat))


def render(rows: list[dict], duration: float, repeat: int) -> Table:
    table = Table(title=f"ccbench bench ({duration:g} s simulated, median of {repeat})", title_justify="left")
    cols = ("workload", "cc", "wall s", "vs reno", "M events/s", "events vs reno", "bottleneck pkts/s", "drops", "peak RSS MB")
    for col in cols:
        table.add_column(col, justify="left" if col in ("workload", "cc") else "right")

    def ratio(x: float) -> str:
        return "" if x != x else f"{x:.2f}x"

    for r in rows:
        offered = r["bottleneck_tx_pkts"] + r["bottleneck_drops"]
        drops = f"{100 * r['bottleneck_drops'] / offered:.2f}%" if offered else ""
        table.add_row(
            r["workload"],
            r["cc"],
            f"{r['wall_s']:.3f}",
            ratio(r["wall_vs_reno"]),
            f"{r['events'] / r['wall_s'] / 1e6:.2f}",
            ratio(r["events_vs_reno"]),
            f"{r['bottleneck_tx_pkts'] / r['wall_s']:,.0f}",
            drops,
            f"{r['peak_rss_mb']:.1f}",
        )
    return table


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_cmd)
