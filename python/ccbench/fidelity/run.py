"""Running a fidelity matrix on both backends, on the sweep machinery.

Each (backend, scenario) is one sweep whose only axis is the seed (repetitions 1..reps),
stored in ``OUT/<backend>/<scenario>/`` (resumable: a re-run skips every finished
repetition and runs a failed one again). Emulator sweeps run one point at a time (the
kernel and the userspace bottleneck need the cores), simulator sweeps in parallel.

Outputs in ``OUT``: ``fidelity_runs.parquet`` / ``.csv`` (one row per scenario, backend,
repetition and flow with :data:`~ccbench.fidelity.metrics.METRICS`, the emulator's
timing error per run, plus a ``(all)`` row per run: aggregate goodput and share) and
``fidelity.parquet`` / ``.csv`` (:func:`~ccbench.fidelity.compare.compare`).

``traffic_source="iperf3"`` runs the emulator's bulk TCP flows with iperf3 instead of
the built-in probe (``[emu] traffic_source`` of each row's scenario); the runs table's
``traffic_source`` column says per row which one ran ("" for simulator rows), its
``kernel`` column the kernel release the emulated run measured, and
``fidelity.json``'s ``kernel_settings`` per scenario the source, the sysctls read back in
the namespaces, the offloads and, for iperf3, its socket buffers.

``kernel=FILE`` takes the kernel rows from a runs table written earlier (a committed
fixture under ``tests/data/kernel/``) instead of running the emulator: the CI guard.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pandas as pd

from .compare import ALL_FLOWS, compare, rank_exchangeable
from .matrix import EXCHANGEABLE_MIXES, Matrix, MatrixError, MatrixRow
from .metrics import METRICS, run_metrics

__all__ = ["FidelityResult", "run_fidelity", "parse_backends", "load_kernel_table"]

BACKENDS = ("sim", "emu")


@dataclass
class FidelityResult:
    out: Path
    rows: list[MatrixRow]
    runs: pd.DataFrame
    comparison: pd.DataFrame
    errors: dict[str, str] = field(default_factory=dict)
    sysctls: dict[str, dict] = field(default_factory=dict)  # scenario -> kernel settings of its first run


def parse_backends(text: str) -> list[str]:
    names = [t.strip() for t in str(text).split(",")]
    bad = [n for n in names if n not in BACKENDS]
    if not names or bad or len(set(names)) != len(names):
        raise MatrixError(f"--backends: {text!r} is not accepted (accepted: sim, emu or sim,emu)")
    return names


def load_kernel_table(path: str | Path, option: str = "--kernel") -> pd.DataFrame:
    p = Path(path)
    if not p.is_file():
        raise MatrixError(f"{option}: {str(path)!r} is not a file (accepted: a fidelity_runs.csv or .parquet)")
    df = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(p)
    need = {"scenario", "backend", "rep", "flow"}
    if not need <= set(df.columns):
        raise MatrixError(f"{option}: {p} has no {', '.join(sorted(need - set(df.columns)))} column (accepted: a fidelity runs table)")
    return df[df["backend"] == "emu"].copy()


def _aggregate_row(m: pd.DataFrame, rate_bps: float) -> dict:
    """The run's aggregate: goodput and share of the flows that run to the end (finished
    transfers have their own goodput span) over the whole span of the run (a flow that
    starts late contributes its bytes, not its own rate), Jain's index, drops and queue."""
    bulk = m[m["transport"] == "tcp"]
    long = m[m["completion_s"].isna()]
    span = float(long["end_s"].max() - long["start_s"].min()) if len(long) else float("nan")
    gp = float(long["bytes_delivered"].sum()) * 8 / span if len(long) and span > 0 else float("nan")
    return {"flow": ALL_FLOWS, "transport": "", "goodput_bps": gp, "share": gp / rate_bps,
            "jain": float(bulk["jain"].iloc[0]) if len(bulk) else float("nan"),
            "drops": float(m["drops"].sum()), "queue_p50_pkts": float(m["queue_p50_pkts"].iloc[0]),
            "queue_p95_pkts": float(m["queue_p95_pkts"].iloc[0])}


def _settings(run) -> dict:
    """What the kernel ran with in ``run``: the traffic source, sysctls set and read back,
    route options, offloads and, per iperf3 flow, iperf3's socket buffers."""
    emu = run.meta.get("emu") or {}
    buffers = {name: {k: (f.get("iperf3") or {}).get(k) for k in ("sndbuf_actual", "rcvbuf_actual", "sock_bufsize", "server_rcvbuf_actual")}
               for name, f in (emu.get("flows") or {}).items() if f.get("source") == "iperf3"}
    return {"traffic_source": emu.get("traffic_source", "ccemu"), "iperf3": emu.get("iperf3"),
            "sysctls": emu.get("sysctls"), "route_options": emu.get("route_options"), "ignored": emu.get("ignored"),
            "notes": emu.get("notes"), "kernel": (run.meta.get("versions") or {}).get("kernel"), "read_back": emu.get("kernel_settings"),
            "offloads": emu.get("offloads"), "iperf3_buffers": buffers or None, "kernel_hz": emu.get("kernel_hz")}


def _sweep_rows(row: MatrixRow, backend: str, reps: int, out: Path, jobs: Optional[int], traffic_source: str = "ccemu"):
    """Runs (or resumes) one scenario on one backend; yields per-run metric frames."""
    from ccbench.run import Run
    from ccbench.sweep import SweepSpec, SweepStore, run_sweep

    scn = row.scenario(backend)
    if backend == "emu" and traffic_source != "ccemu":
        from ccbench.scenario import Scenario

        # through the dict: the sweep stores the scenario's set keys only
        scn = Scenario.from_dict({**row.scenario_dict(backend), "emu": {"traffic_source": traffic_source}})
    spec = SweepSpec(scenario=scn, seeds=list(range(1, reps + 1)), backend=backend, source=row.name)
    d = out / backend / row.name
    if jobs is None:
        jobs = 1 if backend == "emu" else min(reps, max(1, len(os.sched_getaffinity(0))))
    res = run_sweep(spec, d, jobs=jobs, progress=False)
    store = SweepStore(d)
    frames, settings = [], {}
    for rec in store.records([p.id for p in spec.points()]):
        if rec.get("status") != "ok":
            continue
        run = Run.load(store.point_dir(rec["point"]))
        m = run_metrics(run, row.rate_bps)
        m = pd.concat([m, pd.DataFrame([_aggregate_row(m, row.rate_bps)])], ignore_index=True)
        timing = [c for c in m.columns if c.startswith("emu_") or c == "timing_ok"]
        m[timing] = m[timing].ffill()  # the run's emulator timing also on its "(all)" row
        m["traffic_source"] = ((run.meta.get("emu") or {}).get("traffic_source") or "ccemu") if backend == "emu" else ""
        # the kernel build each emulated run measured: a committed table pools recordings
        # made on different machines, and FIDELITY.md names them from this column
        m["kernel"] = ((run.meta.get("versions") or {}).get("kernel") or "") if backend == "emu" else ""
        m.insert(0, "rep", int(rec["seed"]))
        m.insert(0, "backend", backend)
        m.insert(0, "scenario", row.name)
        frames.append(m)
        emu = run.meta.get("emu") or {}
        if emu and not settings:
            settings = _settings(run)
    return frames, dict(res.errors), settings


def run_fidelity(matrix: Matrix, out: str | Path, backends: list[str], full: bool = False,
                 reps: Optional[int] = None, jobs: Optional[int] = None, kernel: Optional[str | Path] = None,
                 progress: bool = True, console=None, only: Optional[str] = None,
                 traffic_source: str = "ccemu") -> FidelityResult:
    from ccbench.sweep.run import _progress

    rows = matrix.selected(full, only)
    forced = reps  # --reps: every row; otherwise a row's own reps, else the matrix's
    reps = reps or matrix.reps
    out = Path(out)
    # A bad --kernel table is reported before any scenario runs, not after all of them.
    kernel_table = load_kernel_table(kernel) if kernel is not None else None
    if kernel_table is not None and not kernel_table["scenario"].isin([r.name for r in rows]).any():
        have = ", ".join(sorted(map(str, kernel_table["scenario"].unique()))[:3])
        raise MatrixError(f"--kernel: {kernel} has no run of this matrix's scenarios (it has {have}, ...; "
                          "accepted: the runs table recorded for this matrix)")
    out.mkdir(parents=True, exist_ok=True)
    if "emu" in backends and kernel is None:
        from ccbench.sweep import SweepError
        from ccbench.sweep.run import _preflight_emu

        try:
            _preflight_emu()
        except SweepError as e:  # say it of this command's option, not of a sweep file
            raise MatrixError("--backends: " + str(e).removeprefix('sweep.backend: ')) from None
    frames: list[pd.DataFrame] = []
    errors: dict[str, str] = {}
    sysctls: dict[str, dict] = {}
    todo = [(b, r) for r in rows for b in backends if not (b == "emu" and kernel is not None)]
    with _progress(len(todo), 0, f"fidelity {Path(matrix.source or '').name}".strip(), progress, console) as advance:
        for b, r in todo:
            f, err, settings = _sweep_rows(r, b, forced or r.reps or reps, out, jobs, traffic_source)
            frames += f
            errors.update({f"{b}/{r.name}/{k}": v for k, v in err.items()})
            if settings:
                sysctls[r.name] = settings
            advance(len(errors))
    if kernel_table is not None:
        frames.append(kernel_table[kernel_table["scenario"].isin([r.name for r in rows])])
    runs = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["scenario", "backend", "rep", "flow"])
    durations = {r.name: _secs(r.duration) for r in rows}
    exchangeable = {r.name for r in rows if r.mix in EXCHANGEABLE_MIXES}
    cmp = compare(rank_exchangeable(runs, exchangeable), list(METRICS), durations)
    runs.to_parquet(out / "fidelity_runs.parquet", index=False)
    runs.to_csv(out / "fidelity_runs.csv", index=False)
    cmp.to_parquet(out / "fidelity.parquet", index=False)
    cmp.to_csv(out / "fidelity.csv", index=False)
    (out / "fidelity.json").write_text(json.dumps({"matrix": matrix.source, "full": full, "reps": reps, "backends": backends,
                                                   "traffic_source": traffic_source if "emu" in backends and kernel is None else None,
                                                   "kernel_table": str(kernel) if kernel else None,
                                                   "scenarios": [r.__dict__ for r in rows], "kernel_settings": sysctls},
                                                  indent=1, default=str), encoding="utf-8")
    return FidelityResult(out=out, rows=rows, runs=runs, comparison=cmp, errors=errors, sysctls=sysctls)


def _secs(d: str) -> float:
    from ccbench.scenario.units import parse_duration

    return parse_duration(d) / 1e9
