"""``ccbench schemes SCENARIO --cc reno,cubic,bbr``: a Pantheon-style scheme comparison."""

from __future__ import annotations

from pathlib import Path

import typer


def schemes_cmd(
    scenario: Path = typer.Argument(..., metavar="SCENARIO.toml", help="Scenario whose TCP flows take each scheme in turn.", show_default=False),
    cc: str = typer.Option(..., "--cc", help="Congestion controls to compare, comma-separated (ccbench cc list; emu: the kernel's).", show_default=False),
    seeds: int = typer.Option(None, "--seeds", help="Runs per scheme, seeds run.seed .. run.seed + N - 1 (default: the scenario's run.seeds)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory (default: runs/schemes-<scenario name>); re-running resumes."),
    backend: str = typer.Option("sim", "--backend", help="sim (simulator) or emu (kernel TCP; needs root; schemes the kernel lacks are skipped)."),
    jobs: int = typer.Option(None, "--jobs", "-j", help="Parallel runs (default: every core for sim, 1 for emu)."),
    fmt: str = typer.Option("svg", "--format", help="Figure format inside report.html: svg or png."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Compare congestion controls on one scenario, as Pantheon and flent do.

    Runs the scenario once per scheme and seed with every TCP flow using the scheme,
    then writes into --out: schemes.parquet and schemes.csv (per run: throughput,
    95th percentile one-way delay, loss, Jain's index), schemes_flows.parquet,
    throughput_delay.svg (throughput against p95 one-way delay, log x inverted,
    per-run points and a 1-sigma ellipse per scheme), goodput_time.svg,
    rtt_fairness.svg (flows of different base RTTs) and report.html.

    Example: ccbench schemes examples/schemes_rtt_fair.toml --cc reno,cubic,bbr --seeds 3
    """
    from ccbench.cli.progress import output_console
    from ccbench.fmt import fmt_number, fmt_pct, fmt_rate, fmt_time
    from ccbench.schemes import SchemesError, parse_cc_list, run_schemes, scheme_means, write_schemes_report

    if backend not in ("sim", "emu"):
        raise SchemesError(f"--backend: {backend!r} is not accepted (accepted: sim, emu)")
    if fmt not in ("svg", "png"):
        raise SchemesError(f"--format: {fmt!r} is not accepted (accepted: svg, png)")
    if jobs is not None and jobs < 1:
        raise SchemesError(f"--jobs: {jobs} is not accepted (accepted: a number of processes >= 1)")
    if seeds is not None and seeds < 1:
        raise SchemesError(f"--seeds: {seeds} is not accepted (accepted: a count >= 1)")
    names = parse_cc_list(cc)
    target = out or Path("runs") / f"schemes-{scenario.stem}"
    console = output_console()
    res = run_schemes(scenario, names, target, seeds=seeds, backend=backend, jobs=jobs, progress=not quiet, console=console)
    for s, why in res.skipped.items():
        console.print(f"skipped {s}: {why}", highlight=False)
    from rich.table import Table

    t = Table(title=f"{scenario.name}: {len(res.runs)} runs ({backend})", title_justify="left")
    for c in ("scheme", "runs", "throughput", "p95 one-way delay", "loss", "Jain"):
        t.add_column(c, justify="left" if c == "scheme" else "right")
    for _, r in scheme_means(res.runs).iterrows():
        t.add_row(str(r["scheme"]), str(int(r["runs"])), fmt_rate(r["throughput_bps"]), fmt_time(r["owd_p95_s"], unit="ms"),
                  fmt_pct(r["loss_rate"]), fmt_number(r["jain"]))
    console.print(t)
    for pid, msg in list(res.errors.items())[:10]:
        console.print(f"  [red]{pid}[/red]: {msg}", highlight=False, soft_wrap=True)
    report = write_schemes_report(res.out, fmt=fmt)
    console.print(f"tables: {res.out / 'schemes.parquet'}, {res.out / 'schemes.csv'}; report: {report}", highlight=False)
    if res.errors and res.runs.empty:
        raise SystemExit(1)


def register(app: typer.Typer) -> None:
    app.command("schemes")(schemes_cmd)
