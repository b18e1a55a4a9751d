"""``ccbench fidelity MATRIX.toml``: the simulator against kernel TCP over a matrix of scenarios."""

from __future__ import annotations

from pathlib import Path

import typer


def fidelity_cmd(
    matrix: Path = typer.Argument(..., metavar="MATRIX.toml", help="Fidelity matrix (examples/fidelity/default.toml).", show_default=False),
    full: bool = typer.Option(False, "--full", help="Also run the rows of the matrix's [full] include."),
    rows: list[str] = typer.Option(
        None, "--rows",
        help="Only the rows whose name contains one of these comma-separated parts; repeatable (--rows pie --rows red)."),
    reps: int = typer.Option(None, "--reps", help="Repetitions per scenario and backend (default: the matrix's reps)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory (default: runs/fidelity-<matrix name>); re-running resumes."),
    backends: str = typer.Option("sim,emu", "--backends", help="sim, emu or sim,emu (emu needs root)."),
    kernel: Path = typer.Option(None, "--kernel", help="Take the kernel rows from this fidelity_runs.csv/.parquet instead of running the emulator."),
    docs: Path = typer.Option(None, "--docs", help="Markdown file to (re)generate (default when both backends ran: OUT/FIDELITY.md; docs/FIDELITY.md of a source checkout for its own examples/fidelity/default.toml without --rows)."),
    traffic_source: str = typer.Option(
        "ccemu", "--traffic-source",
        help='What drives the kernel side\'s bulk TCP flows: "ccemu" (built-in probe) or "iperf3" (the distribution\'s, '
             "default socket settings and autotuning; UDP, CBR and short transfers keep the built-in source). Use its own "
             "--out: the runs of both sources do not mix."),
    sources_baseline: Path = typer.Option(
        None, "--sources-baseline",
        help="A fidelity_runs.csv/.parquet of the kernel run with the other traffic source: writes OUT/sources.csv, "
             "where this run's kernel numbers differ from it beyond the targets (same rule as the simulator's)."),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Parallel simulator runs (the emulator always runs one at a time)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Run every scenario of MATRIX on the emulator (real kernel TCP) and the simulator,
    several repetitions each, and compare them against the targets of issue 24.

    Writes into --out: fidelity_runs.parquet/.csv (per scenario, backend, repetition and
    flow: goodput and share, Jain's index while flows overlap, loss, srtt p50/p95,
    retransmits, cwnd reductions and their ratio, cwnd at slow-start exit, first loss,
    queue p50/p95, drops, CBR delays, completion times, the emulator's timing error),
    fidelity.parquet/.csv (kernel mean and spread, simulator mean, error = sim/kernel - 1,
    target, ok), report.html (cwnd/srtt/queue overlays) and docs/FIDELITY.md.

    Example: sudo ccbench fidelity examples/fidelity/default.toml

    Example: sudo ccbench fidelity examples/fidelity/default.toml --backends emu --traffic-source iperf3 --out runs/fid-iperf3
    """
    from ccbench.binaries import REPO
    from ccbench.cli.progress import output_console
    from ccbench.fidelity import MatrixError, load_matrix, parse_backends, run_fidelity
    from ccbench.fidelity.report import write_html, write_markdown

    if reps is not None and reps < 1:
        raise MatrixError(f"--reps: {reps} is not accepted (accepted: a count >= 1)")
    if jobs is not None and jobs < 1:
        raise MatrixError(f"--jobs: {jobs} is not accepted (accepted: a number of processes >= 1)")
    names = parse_backends(backends)
    if traffic_source not in ("ccemu", "iperf3"):
        raise MatrixError(f"--traffic-source: {traffic_source!r} is not accepted (accepted: ccemu, iperf3)")
    if traffic_source == "iperf3" and "emu" in names:
        from ccbench.emu import iperf3 as ip3
        from ccbench.emu import EmulationError

        try:
            ip3.find()
        except EmulationError as e:
            raise MatrixError(f"--traffic-source: {e}") from None
    if kernel is not None and "emu" in names:
        raise MatrixError("--kernel: is not accepted with --backends including emu (accepted: --backends sim --kernel FILE)")
    base = None
    if sources_baseline is not None:
        from ccbench.fidelity.run import load_kernel_table

        base = load_kernel_table(sources_baseline, "--sources-baseline")
    # a repeated --rows adds parts: typer would otherwise keep only the last one
    only = ",".join(rows) if rows else None
    m = load_matrix(matrix)
    target = out or Path("runs") / f"fidelity-{matrix.stem}"
    console = output_console()
    res = run_fidelity(m, target, names, full=full, reps=reps, jobs=jobs, kernel=kernel, progress=not quiet, console=console,
                       only=only, traffic_source=traffic_source)
    for k, msg in list(res.errors.items())[:10]:
        console.print(f"  [red]{k}[/red]: {msg}", highlight=False, soft_wrap=True)
    cmp = res.comparison
    judged = cmp[cmp["ok"].notna()]
    n_ok = int(judged["ok"].astype(bool).sum())
    console.print(f"{len(res.rows)} scenarios, {len(res.runs)} flow rows; judged metrics within target: {n_ok} / {len(judged)}",
                  highlight=False)
    if n_ok < len(judged):
        _print_worst(cmp, console, len(judged) - n_ok)
    report = write_html(res.out, cmp, [r.name for r in res.rows], f"Fidelity: {matrix.name}")
    msg = f"tables: {res.out / 'fidelity_runs.csv'}, {res.out / 'fidelity.csv'}; report: {report}"
    both = "sim" in names and ("emu" in names or kernel is not None)
    if docs is not None or both:
        default_md = res.out / "FIDELITY.md"
        if _is_checkout_default(matrix) and only is None:
            # a source checkout keeps the reduced matrix's numbers in docs/; any other
            # matrix, or a --rows subset, would overwrite them with a partial table
            default_md = REPO / "docs" / "FIDELITY.md"
        md = write_markdown(docs or default_md, cmp, res.runs, str(matrix), REPO,
                            str(kernel) if kernel else None)
        msg += f"; {md}"
    console.print(msg, highlight=False)
    if base is not None:
        _print_sources(base, res, console)
    if res.errors and res.runs.empty:
        raise SystemExit(1)


def _print_worst(cmp, console, n_bad: int) -> None:
    """The metrics furthest outside their target, so a reader sees what is off without
    opening the tables."""
    from ccbench.cli.reproduce import study_table
    from ccbench.fidelity.report import worst

    w = worst(cmp)
    console.print(study_table(w, f"furthest outside target ({len(w)} of {n_bad}; all in fidelity.csv)"))


def _is_checkout_default(matrix: Path) -> bool:
    """Whether ``matrix`` is this source checkout's own examples/fidelity/default.toml."""
    from ccbench.binaries import REPO

    own = REPO / "examples" / "fidelity" / "default.toml"
    try:
        return (REPO / ".git").exists() and Path(matrix).resolve() == own.resolve()
    except OSError:
        return False


def _print_sources(base, res, console) -> None:
    """Writes OUT/sources.csv and prints where the two kernel traffic sources differ."""
    from ccbench.fidelity.run import _secs
    from ccbench.fidelity.sources import compare_sources

    from ccbench.fidelity.matrix import EXCHANGEABLE_MIXES

    cmp = compare_sources(base, res.runs, {r.name: _secs(r.duration) for r in res.rows},
                          frozenset(r.name for r in res.rows if r.mix in EXCHANGEABLE_MIXES))
    cmp.to_csv(res.out / "sources.csv", index=False)
    judged = cmp[cmp["differs"].notna()]
    diff = judged[judged["differs"].astype(bool)]
    console.print(f"traffic sources {cmp['base_source'].iloc[0] if len(cmp) else '?'} vs {cmp['other_source'].iloc[0] if len(cmp) else '?'}: "
                  f"{len(diff)} of {len(judged)} judged metrics differ beyond the target; {res.out / 'sources.csv'}", highlight=False)
    for r in diff.itertuples():
        console.print(f"  {r.scenario} {r.flow} {r.metric}: {r.base_mean:.4g} -> {r.other_mean:.4g} ({r.diff:+.1%}, target {r.target})"
                      + ("" if r.timing_ok else " [emulator timing off]"), highlight=False)


def register(app: typer.Typer) -> None:
    app.command("fidelity")(fidelity_cmd)
