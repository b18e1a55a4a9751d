"""Running a sweep: a local process pool (default) or a Dask cluster.

Every point is independent: it builds its scenario from the base and its values,
runs it, saves its tables under ``SWEEP_DIR/runs/<id>/`` and writes its record last
(the done marker). A re-run skips every point with an ``ok`` record (and, unless
``retry_errors=False``, runs the failed ones again). A point that fails (invalid
value, simulator error, crashed worker) is recorded with ``status = "error"`` and
its message; the sweep goes on.

Local: ``concurrent.futures.ProcessPoolExecutor`` with ``jobs`` processes (default:
every core); the workers write their points themselves. Dask: ``scheduler =
"tcp://host:port"`` submits the same points to ``dask.distributed.Client(address)``;
the workers (which need ``ccbench`` installed) return each run to this process, which
writes it, so the cluster needs no shared filesystem.
"""

from __future__ import annotations

import os
import socket
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

import pandas as pd

from .engine import engine_id, stale
from .spec import Point, SweepError, SweepSpec
from .lock import sweep_lock
from .store import SweepStore, flow_rows

__all__ = ["run_sweep", "SweepResult", "plan", "default_jobs"]


@dataclass
class SweepResult:
    """What a call to :func:`run_sweep` did."""

    out: Path
    total: int
    skipped: int
    executed: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)  # id -> message, this call and earlier
    repaired: dict[str, str] = field(default_factory=dict)  # id -> what was damaged (run again)
    wall_s: float = 0.0
    summary: Optional[pd.DataFrame] = None

    @property
    def ran(self) -> int:
        return len(self.executed)

    @property
    def ok(self) -> int:
        return self.total - len(self.errors)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


# --- one point (runs in a worker) ------------------------------------------------------------


def _error_text(exc: BaseException) -> str:
    from ccbench.scenario import ScenarioError

    try:
        from ccbench.backends.sim import SimulationError
    except ImportError:  # pragma: no cover
        SimulationError = ()  # type: ignore[assignment]
    msg = str(exc).strip().replace("\n", "; ")
    if isinstance(exc, (ScenarioError, SimulationError)) and msg:
        return msg
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _backend(name: str) -> Callable:
    if name == "sim":
        from ccbench.backends.sim import simulate

        return simulate
    if name == "emu":
        from ccbench.emu.runner import emulate  # checked when the sweep was loaded

        return emulate
    raise SweepError(f'sweep.backend: "{name}" cannot run points (accepted: "sim", "emu")')


def _record(task: dict[str, Any], status: str, error: Optional[str], rows: list, wall_s: float) -> dict[str, Any]:
    return {
        "point": task["id"],
        "values": task["values"],
        "seed": task["seed"],
        "backend": task["backend"],
        "status": status,
        "error": error,
        "rows": rows,
        "wall_s": wall_s,
        "host": socket.gethostname(),
        "engine": engine_id(task["backend"]),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def compute_point(task: dict[str, Any]):
    """Runs one point; returns ``(record, run or None)``. Never raises for a bad point."""
    from ccbench.scenario import Scenario

    t0 = time.perf_counter()
    try:
        scn = Scenario.from_dict(task["base"]).with_values(task["resolved"])
        run = _backend(task["backend"])(scn, seed=task["seed"])
        run.meta["sweep"] = {"point": task["id"], "values": task["values"], "seed": task["seed"]}
        rows = flow_rows(run)
    except Exception as e:  # noqa: BLE001 - recorded, the sweep goes on
        return _record(task, "error", _error_text(e), [], time.perf_counter() - t0), None
    return _record(task, "ok", None, rows, time.perf_counter() - t0), run


def execute_point(task: dict[str, Any]) -> dict[str, Any]:
    """Runs one point and writes it into the store (local workers share the disk)."""
    record, run = compute_point(task)
    try:
        SweepStore(task["root"]).write_point(record, run)
    except Exception as e:  # noqa: BLE001 - e.g. disk full: record it without the tables
        record = dict(record, status="error", error=f"saving the run failed: {_error_text(e)}", rows=[])
        SweepStore(task["root"]).write_point(record, None)
    return record


# --- planning -----------------------------------------------------------------------------------


def plan(
    spec: SweepSpec, store: SweepStore, retry_errors: bool = True, damaged: Optional[dict[str, str]] = None
) -> tuple[list[dict[str, Any]], list[Point], list[Point]]:
    """(tasks to run, every point, points skipped because they are done).

    A done point whose files are missing, truncated or fail their checksum runs again;
    ``damaged`` (if given) collects ``{id: what was wrong}`` for them."""
    base = spec.scenario.to_dict()
    todo, skipped = [], []
    points = spec.points()
    seen: set[str] = set()
    for pt in points:
        pid = pt.id
        if pid in seen:  # pragma: no cover - values are checked distinct
            continue
        seen.add(pid)
        rec = store.read_point(pid)
        status = None if rec is None else rec.get("status")
        if status == "ok" or (status == "error" and not retry_errors):
            why = store.damage(pid, rec) or (stale(rec, spec.backend) if status == "ok" else None)
            if why is None:
                skipped.append(pt)
                continue
            if damaged is not None:
                damaged[pid] = why
        elif rec is None and (store.point_dir(pid) / "summary.json").exists() and damaged is not None:
            damaged[pid] = "summary.json is unreadable"
        try:
            resolved = {spec.resolve_path(k): v for k, v in pt.values.items()}
        except SweepError as e:  # pragma: no cover - paths are checked at load time
            raise SweepError(str(e)) from None
        todo.append(
            {
                "id": pid,
                "values": pt.values,
                "resolved": resolved,
                "seed": pt.seed,
                "backend": spec.backend,
                "base": base,
                "root": str(store.root.resolve()),
            }
        )
    return todo, points, skipped


# --- progress -----------------------------------------------------------------------------------


@contextmanager
def _progress(total: int, done: int, label: str, enabled: bool, console=None):
    if not enabled or total == 0:
        yield lambda n_err: None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    prog = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[errors]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )
    with prog:
        tid = prog.add_task(label, total=total, completed=done, errors="")

        def advance(n_err: int) -> None:
            prog.update(tid, advance=1, errors=f"[red]{n_err} failed[/red]" if n_err else "")

        yield advance


# --- the sweep ----------------------------------------------------------------------------------


def run_sweep(
    spec: SweepSpec | str | Path,
    out: str | Path,
    jobs: Optional[int] = None,
    scheduler: Optional[str] = None,
    retry_errors: bool = True,
    progress: bool = True,
    console=None,
    scheduler_timeout: float = 15.0,
    wait: bool = False,
) -> SweepResult:
    """Runs every point of ``spec`` (a :class:`SweepSpec` or a sweep file) not yet done
    into ``out``; returns a :class:`SweepResult`.

    ``jobs``: local worker processes (default: all cores; 1 runs in this process).
    ``scheduler``: a Dask scheduler address (``tcp://host:8786``); then ``jobs`` is unused;
    ``scheduler_timeout``: seconds to wait for the connection.
    ``wait``: if another sweep holds ``out`` (its lock file), wait for it instead of
    raising :class:`SweepError`.
    """
    t0 = time.perf_counter()
    if not isinstance(spec, SweepSpec):
        from .spec import load_sweep

        spec = load_sweep(spec)
    if jobs is not None and jobs < 1:
        raise SweepError(f"--jobs: {jobs} is not accepted (accepted: a number of processes >= 1)")
    store = SweepStore(out)
    store.check_out_dir()
    with sweep_lock(store.root, wait=wait):
        return _locked_sweep(spec, store, jobs, scheduler, retry_errors, progress, console, scheduler_timeout, t0)


def _locked_sweep(spec, store, jobs, scheduler, retry_errors, progress, console, scheduler_timeout, t0) -> SweepResult:
    store.open_for(spec)
    damaged: dict[str, str] = {}
    tasks, points, skipped = plan(spec, store, retry_errors=retry_errors, damaged=damaged)
    result = SweepResult(out=store.root, total=len(points), skipped=len(skipped), repaired=damaged)
    n_err = 0

    def finished(record: dict[str, Any]) -> None:
        nonlocal n_err
        result.executed.append(record["point"])
        if record["status"] != "ok":
            n_err += 1

    if tasks and spec.backend == "emu" and not scheduler:
        _preflight_emu()
    label = f"sweep {Path(spec.source).name if spec.source else ''}".strip()
    ids = [pt.id for pt in points]
    try:
        if tasks:
            if scheduler:
                _run_dask(tasks, store, scheduler, scheduler_timeout, finished, label, progress, len(skipped), len(points), console, lambda: n_err)
            else:
                if jobs is None:
                    jobs = 1 if spec.backend == "emu" else default_jobs()
                _run_local(tasks, min(jobs, len(tasks)), finished, label, progress, len(skipped), len(points), console, lambda: n_err)
    finally:
        # also after Ctrl-C or a lost cluster: the summary holds every point done so far
        result.summary = store.consolidate(ids, spec.parameters)
    for rec in store.records(ids):
        if rec.get("status") != "ok":
            result.errors[rec["point"]] = rec.get("error") or "unknown error"
    result.wall_s = time.perf_counter() - t0
    return result


def _preflight_emu() -> None:
    """Emulation needs root, /dev/net/tun, ip and ccemu: say what is missing once,
    instead of failing every point with the same message."""
    try:
        from ccbench.emu import system
    except ImportError:  # pragma: no cover - checked with the backend
        return
    try:
        system.require()
    except Exception as e:  # noqa: BLE001 - EmulationError
        raise SweepError(f'sweep.backend: "emu": {e}') from None


def _run_local(tasks, jobs, finished, label, show, done, total, console, n_err) -> None:
    if jobs <= 1:
        with _progress(total, done, label, show, console) as advance:
            for task in tasks:
                finished(execute_point(task))
                advance(n_err())
        return
    from concurrent.futures import as_completed
    from concurrent.futures.process import BrokenProcessPool

    # the workers start (fork) at the first submit: before the progress bar's thread
    pool = ProcessPoolExecutor(max_workers=jobs, initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        futures = {pool.submit(execute_point, t): t for t in tasks}
        with _progress(total, done, label, show, console) as advance:
            for fut in as_completed(futures):
                task = futures.pop(fut)
                try:
                    record = fut.result()
                except BrokenProcessPool as e:
                    record = _crashed(task, f"the worker process died ({e})")
                except Exception as e:  # noqa: BLE001
                    record = _crashed(task, _error_text(e))
                finished(record)
                advance(n_err())
    except BaseException:
        pool.shutdown(wait=False, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


def _die_with_parent(parent: int) -> None:
    """Worker initializer: a worker must not outlive its sweep. Without this, a SIGKILLed
    sweep leaves its workers blocked forever on the pool's pipe (see ccbench.procutil);
    where prctl is missing, a thread polls the parent pid instead."""
    from ccbench.procutil import die_with_parent

    if not die_with_parent(parent):  # pragma: no cover - not Linux
        _watch_parent(parent)


def _watch_parent(parent: int) -> None:  # pragma: no cover - only where prctl is missing
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="ccbench-parent-watch").start()


def _crashed(task: dict[str, Any], message: str) -> dict[str, Any]:
    record = _record(task, "error", message, [], float("nan"))
    SweepStore(task["root"]).write_point(record, None)
    return record


def _run_dask(tasks, store, address, timeout, finished, label, show, done, total, console, n_err) -> None:
    try:
        from dask.distributed import Client, as_completed
    except ImportError as e:  # pragma: no cover - dask is a dependency
        raise SweepError(f"--scheduler: dask.distributed is not installed ({e})") from None
    try:
        client = Client(address, timeout=f"{timeout}s")
    except (OSError, TimeoutError) as e:
        raise SweepError(f"--scheduler: cannot connect to {address!r} ({e}) (accepted: the address of a running dask scheduler, e.g. tcp://host:8786)") from None
    try:
        with _progress(total, done, label, show, console) as advance:
            futures = {}
            for t in tasks:
                fut = client.submit(compute_point, t, pure=False, key=f"ccbench-point-{t['id']}-{os.getpid()}-{time.monotonic_ns()}")
                futures[fut] = t
            for fut in as_completed(list(futures)):
                task = futures.pop(fut)
                try:
                    record, run = fut.result()
                    record = dict(record)
                    try:
                        store.write_point(record, run)
                    except Exception as e:  # noqa: BLE001
                        record = _crashed(task, f"saving the run failed: {_error_text(e)}")
                except Exception as e:  # noqa: BLE001 - worker died, cancelled, unpicklable...
                    record = _crashed(task, f"dask: {_error_text(e)}")
                fut.release()
                finished(record)
                advance(n_err())
    finally:
        client.close()
