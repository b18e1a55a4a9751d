"""``ccbench sweep SWEEP.toml``: run a parameter sweep locally or on a Dask cluster."""

from __future__ import annotations

from pathlib import Path

import typer

from ccbench.sweep.spec import SweepError


def sweep_cmd(
    sweep_file: Path = typer.Argument(..., metavar="SWEEP.toml", help="Sweep file (see `ccbench.sweep.spec`).", show_default=False),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Local worker processes (default: every core; 1 = in this process)."),
    scheduler: str = typer.Option(None, "--scheduler", help="Run on a Dask cluster: scheduler address, e.g. tcp://10.0.0.1:8786."),
    out: Path = typer.Option(None, "--out", "-o", help="Sweep directory (default: runs/<sweep file name>)."),
    retry_errors: bool = typer.Option(True, "--retry-errors/--keep-errors", help="Run failed points again on a re-run (default) or keep their error rows."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Only list the points (id, values, seed) and whether they are done."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    wait: bool = typer.Option(False, "--wait", help="If another sweep is running into --out, wait for it to finish (default: refuse)."),
) -> None:
    """Run a scenario over a grid of values and seeds; resumable; results in one Parquet store.

    The sweep file names a scenario and the values to vary by dotted path:

      scenario = "droprules/bytes_loose.toml"
      [sweep]
      seeds = 3
      "topology.bottleneck.queue.limit" = ["20000B", "40000B"]
      [sweep.zip]       # varied together
      "flows.voip.app.size" = ["186B", "400B"]
      "flows.voip.app.interval" = ["20ms", "40ms"]

    Points already done in --out are skipped. Then: ccbench query DIR "SQL",
    ccbench report DIR.

    Example: ccbench sweep examples/sweep_droprules.toml --jobs 4 --out runs/droprules
    """
    from ccbench.cli.errors import require_extra
    from ccbench.cli.progress import output_console
    from ccbench.sweep import SweepStore, load_sweep, run_sweep
    from ccbench.sweep.engine import stale

    if jobs is not None and jobs < 1:
        raise SweepError(f"--jobs: {jobs} is not accepted (accepted: a number of processes >= 1)")
    if jobs is not None and scheduler:
        raise SweepError("--jobs and --scheduler exclude each other (accepted: one of them)")
    if scheduler:
        require_extra("dask.distributed", "--scheduler")
    spec = load_sweep(sweep_file)
    target = out or Path("runs") / sweep_file.stem
    console = output_console()
    if dry_run:
        store = SweepStore(target)
        from rich.table import Table

        t = Table(title=f"{sweep_file.name}: {len(spec.points())} points", title_justify="left")
        t.add_column("id", no_wrap=True, min_width=12)
        for c in (*spec.parameters, "seed", "status"):
            t.add_column(c, overflow="fold")
        for pt in spec.points():
            st = store.status(pt.id) if store.runs_dir.exists() else None
            why = store.damage(pt.id) if st else None
            if why:
                st = f"damaged ({why}): to run"
            elif st == "ok" and (why := stale(store.read_point(pt.id) or {}, spec.backend)):
                st = f"stale ({why}): to run"
            t.add_row(pt.id, *[_show(pt.values[k]) for k in spec.parameters], str(pt.seed), st or "to run")
        console.print(t)
        return
    res = run_sweep(spec, target, jobs=jobs, scheduler=scheduler, retry_errors=retry_errors, progress=not quiet, console=console, wait=wait)
    for pid, why in res.repaired.items():
        console.print(f"  [yellow]{pid}[/yellow]: ran again ({why})", highlight=False, soft_wrap=True)
    n_ok = res.total - len(res.errors)
    console.print(
        f"{res.total} points: ran {res.ran}, skipped {res.skipped} (done before), "
        f"{n_ok} ok, [{'red' if res.errors else 'green'}]{len(res.errors)} failed[/] in {res.wall_s:.1f} s"
    )
    for pid, msg in list(res.errors.items())[:10]:
        console.print(f"  [red]{pid}[/red]: {msg}", highlight=False, soft_wrap=True)
    if len(res.errors) > 10:
        console.print(f"  ... and {len(res.errors) - 10} more (ccbench query {target} \"SELECT point, error FROM runs WHERE status = 'error'\")")
    console.print(f"results: {target / 'summary.parquet'}  (ccbench query {target} \"SELECT * FROM summary\"; ccbench report {target})")
    if res.errors and n_ok == 0:
        raise SystemExit(1)  # every point failed


def _show(v) -> str:
    import json

    return v if isinstance(v, str) else json.dumps(v)


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep_cmd)
