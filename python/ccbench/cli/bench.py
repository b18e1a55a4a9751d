"""``ccbench bench``: simulator speed and memory on standard workloads.

Each workload runs in a fresh Python process that imports only the compiled
extension, so the peak RSS reported is the simulator's plus a bare interpreter's
(about 10 MB), not pandas'.
"""

from __future__ import annotations

import json
import subprocess
import sys

import typer
from rich.console import Console
from rich.table import Table

MS = 1_000_000
SEC = 1_000_000_000

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


def dumbbell_workload(cc: str, duration_s: float = 60.0, flows: int = 10) -> dict:
    """10 bulk TCP flows, 100 Mbit/s bottleneck, 50 ms RTT, 1-BDP (417-packet) drop-tail."""
    bottleneck = {"rate_bps": 100_000_000, "delay_ns": 25 * MS, "queue": {"kind": "droptail", "limit": 417, "rule": "packets"}, "monitor": True}
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


def workloads(which: str, duration_s: float) -> list[tuple[str, dict]]:
    out = []
    if which in ("all", "udp"):
        out.append(("udp 100M 90% load", udp_workload(duration_s)))
    if which in ("all", "dumbbell"):
        from ccbench.cli.cc_names import available_cc

        for cc in ("reno", "cubic", "bbr"):
            if cc in available_cc():
                out.append((f"dumbbell 10x{cc}", dumbbell_workload(cc, duration_s)))
    return out


def bench_cmd(
    workload: str = typer.Option("all", "--workload", "-w", help="udp, dumbbell or all."),
    duration: float = typer.Option(60.0, "--duration", help="Simulated seconds per workload."),
    repeat: int = typer.Option(3, "--repeat", "-n", help="Runs per workload; the median is reported."),
) -> None:
    """Measure simulator speed: events/s, bottleneck packets/s and peak memory.

    Workloads: "udp" (Poisson 1500-byte packets at 90% of 100 Mbit/s) and "dumbbell"
    (10 bulk TCP flows, 100 Mbit/s, 50 ms RTT, 417-packet drop-tail), each for
    60 simulated seconds by default.
    """
    import statistics

    if workload not in ("all", "udp", "dumbbell"):
        from ccbench.cli.errors import fail

        raise fail(f"--workload: {workload!r} is not a workload (accepted: udp, dumbbell, all)")
    table = Table(title=f"ccbench bench ({duration:g} s simulated, median of {repeat})", title_justify="left")
    for col in ("workload", "wall s", "M events/s", "link pkts/s (wall)", "peak RSS MB"):
        table.add_column(col, justify="right" if col != "workload" else "left")
    for name, cfg in workloads(workload, duration):
        runs = [run_workload(cfg) for _ in range(max(1, repeat))]
        wall = statistics.median(r["wall_s"] for r in runs)
        events = runs[0]["events"]
        pkts = runs[0]["bottleneck_tx_pkts"]
        rss = max(r["peak_rss_mb"] for r in runs)
        table.add_row(name, f"{wall:.3f}", f"{events / wall / 1e6:.2f}", f"{pkts / wall:,.0f}", f"{rss:.1f}")
    Console().print(table)


def register(app: typer.Typer) -> None:
    app.command("bench")(bench_cmd)
