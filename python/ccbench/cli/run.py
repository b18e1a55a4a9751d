"""``ccbench run`` and ``ccbench validate``."""

from __future__ import annotations

import math
from pathlib import Path

import typer

from ccbench.cli import pcap_opts
from ccbench.cli.errors import fail
from ccbench.fmt import fmt_number, fmt_pct, fmt_rate, fmt_time

_SI_PREFIX = {"k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def flow_table(run, title: str):
    """The per-flow table ``ccbench run`` prints (fits 100 columns; long flow names
    fold rather than widen it)."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    t.caption = "delay = t_deliver - t_write per message"
    for col in ("flow", "transport", "goodput", "loss", "p50", "p95", "p99", "max"):
        text = col in ("flow", "transport")
        t.add_column(col, justify="left" if text else "right", no_wrap=not text, overflow="fold")
    for r in run.flows.itertuples(index=False):
        transport = r.transport if not getattr(r, "cc", "") else f"{r.transport}/{r.cc}"
        t.add_row(
            str(r.flow), transport, fmt_rate(r.goodput_bps), fmt_pct(r.loss_rate),
            *(fmt_time(d, unit="ms") for d in (r.delay_p50_s, r.delay_p95_s, r.delay_p99_s, r.delay_max_s)),
        )
    return t


def seeds_table(summary, title: str, n: int):
    """The per-flow table of several seeds: mean ± half-width of the 95 % t-interval."""
    from rich.table import Table

    t = Table(title=title, title_justify="left")
    t.caption = f"mean ± 95% confidence half-width over {n} seeds (t-distribution); delay in ms"
    for col in ("flow", "transport", "goodput", "loss", "p50", "p95", "p99", "max"):
        text = col in ("flow", "transport")  # names fold rather than push numbers off the table
        t.add_column(col, justify="left" if text else "right", no_wrap=not text, overflow="fold")

    def pm(metric: str, scale: float, unit: str = "") -> str:
        # the mean and its half-width in the mean's unit, so the pair stays short
        mean, half = getattr(r, f"{metric}_mean"), getattr(r, f"{metric}_ci")
        if not math.isfinite(mean):
            return "-"
        if metric == "goodput_bps":
            unit = " " + fmt_rate(mean).split(" ", 1)[1]  # "kbit/s"
            scale = _SI_PREFIX.get(unit.strip()[0], 1.0) if unit.strip() != "bit/s" else 1.0
        text = fmt_number(mean / scale)
        if math.isfinite(half):
            text += f" ± {fmt_number(half / scale, 2)}"
        return text + unit

    for r in summary.itertuples(index=False):
        transport = r.transport if not getattr(r, "cc", "") else f"{r.transport}/{r.cc}"
        t.add_row(
            str(r.flow), transport, pm("goodput_bps", 1), pm("loss_rate", 0.01, "%"),
            *(pm(m, 1e-3) for m in ("delay_p50_s", "delay_p95_s", "delay_p99_s", "delay_max_s")),
        )
    return t


def run_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
    seed: int = typer.Option(None, "--seed", "-s", help="Seed of the first repetition (default: the scenario's run.seed)."),
    seeds: int = typer.Option(None, "--seeds", min=1, help="Repetitions: seeds SEED, SEED+1, ... (default: the scenario's run.seeds)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory to save the run in (Parquet tables + meta.json; with several seeds one seed-N/ folder each plus summary.parquet). Default: runs/<scenario>-seed<N>."),
    no_save: bool = typer.Option(False, "--no-save", help="Print the table only; do not save the run."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    fmt: str = typer.Option("text", "--format", "-f", help="text (tables) or json (one document on stdout: meta, every seed's flows, the mean and interval per flow; schema in the README)."),
    pcap: list[str] = pcap_opts.PCAP,
    pcap_snaplen: str = pcap_opts.SNAPLEN,
    pcap_max_size: str = pcap_opts.MAX_SIZE,
) -> None:
    """Simulate a scenario and print per-flow throughput, loss and delay percentiles.

    Every repetition of run.seeds runs (--seeds overrides the count); with
    more than one, the table shows per flow the mean and the 95% confidence
    interval (t-distribution) over the seeds, and each run is saved in
    OUT/seed-N/ beside OUT/summary.parquet (per-flow mean and interval) and
    OUT/flows.parquet (every seed's flow table).

    The run is saved before anything else is done with it, so nothing is lost:
    load it again in Python with ccbench.load_run(DIR).

    --pcap LINK writes OUT/LINK.pcap (also with --no-save): real IPv4/TCP/UDP
    headers, simulated time, zero-filled payload up to --pcap-snaplen.

    Example: ccbench run examples/adsl1_voip.toml --seed 3 --out runs/adsl

    Example: ccbench run examples/emu/cubic_10mbit.toml --pcap bottleneck_down+bottleneck_up --format json
    """
    from ccbench.cli.progress import output_console, sim_progress
    from ccbench.scenario import load_scenario

    if fmt not in ("text", "json"):
        raise fail(f"--format: {fmt!r} is not accepted (accepted: text, json)")
    sc = load_scenario(scenario)
    if out is not None and not no_save:
        from ccbench.atomicio import check_out_dir

        check_out_dir(out, "--out")  # before the simulation, not after it
    first = sc.run.seed if seed is None else seed
    seed_list = [first + i for i in range(sc.run.seeds if seeds is None else seeds)]
    console = output_console() if fmt == "text" else None
    capture = (pcap, pcap_snaplen, pcap_max_size)
    if len(seed_list) > 1:
        _run_seeds(sc, scenario, seed_list, out, no_save, quiet, console, capture)
        return
    target = out or Path("runs") / f"{scenario.stem}-seed{first}"
    with sim_progress(f"simulating {scenario.name}", enabled=not quiet) as progress:
        # The cwnd and queue tables stream into the run's folder as the run goes.
        run = _simulate(sc, first, progress, capture, target, stream_to=None if no_save else target)
    if not no_save:
        run.save(target)
    if console is None:
        _print_json([run], scenario, None if no_save else target)
        return
    stats = run.meta["stats"]
    console.print(flow_table(run, f"{scenario.name}  seed {run.meta['seed']}"))
    console.print(
        f"[dim]{stats['events']:,} events in {stats['wall_s']:.2f} s wall "
        f"({stats['events'] / max(stats['wall_s'], 1e-9) / 1e6:.1f} M events/s)[/dim]"
    )
    pcap_opts.print_captures(run.meta.get("pcap", []), console)
    if not no_save:
        console.print(f"saved to {target}")


def _simulate(sc, seed: int, progress, capture: tuple, directory: Path, stream_to=None):
    """One simulation, with the captures ``capture`` = (--pcap, --pcap-snaplen,
    --pcap-max-size) asks for written into ``directory``; size-limit warnings on
    stderr."""
    from ccbench.backends.sim import SimulationError, simulate

    opts = pcap_opts.pcap_options(*capture, directory)
    try:
        run = simulate(sc, seed=seed, progress=progress, stream_to=stream_to, pcap=opts)
    except SimulationError as e:
        err = pcap_opts.option_error(e)
        if err is not None:
            raise err from None
        raise
    pcap_opts.warn_captures(run.meta.get("pcap", []))
    return run


def _print_json(runs: list, scenario: Path, saved_to, summary=None) -> None:
    import json

    from ccbench.summary_json import run_document

    typer.echo(json.dumps(run_document(runs, scenario, summary=summary, saved_to=saved_to), indent=2))


def _run_seeds(sc, scenario: Path, seed_list: list[int], out, no_save: bool, quiet: bool, console, capture: tuple) -> None:
    """Every seed in turn, each saved as soon as it is done; then the summary."""
    from ccbench.cli.progress import sim_progress
    from ccbench.repetitions import seed_summary, seed_table

    target = out or Path("runs") / f"{scenario.stem}-seeds{seed_list[0]}-{seed_list[-1]}"
    runs = []
    events = wall = 0.0
    for i, s in enumerate(seed_list, 1):
        with sim_progress(f"simulating {scenario.name} seed {s} ({i}/{len(seed_list)})", enabled=not quiet) as progress:
            run = _simulate(sc, s, progress, capture, target / f"seed-{s}")
        if not no_save:
            run.save(target / f"seed-{s}")
        events += run.meta["stats"]["events"]
        wall += run.meta["stats"]["wall_s"]
        runs.append(run)
    summary = seed_summary(runs)
    if not no_save:
        summary.to_parquet(target / "summary.parquet", index=False)
        seed_table(runs).to_parquet(target / "flows.parquet", index=False)
    if console is None:
        _print_json(runs, scenario, None if no_save else target, summary)
        return
    title = f"{scenario.name}  seeds {seed_list[0]}..{seed_list[-1]}"
    console.print(seeds_table(summary, title, len(seed_list)))
    console.print(f"[dim]{events:,.0f} events in {wall:.2f} s wall over {len(seed_list)} runs[/dim]")
    for run in runs:
        pcap_opts.print_captures(run.meta.get("pcap", []), console)
    if not no_save:
        console.print(f"saved to {target}/seed-N/ (one run per seed) and {target}/summary.parquet")


def validate_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
) -> None:
    """Check a scenario file without running it: units, names, topology, routes, and
    the pre-flight estimate of memory and events (a run that would not fit in the
    memory available now is refused, with what to change).

    Prints "ok" and the estimate and exits 0, or one line per problem and exits 2.
    """
    import json

    from ccbench.scenario import load_scenario

    sc = load_scenario(scenario)
    config = sc.to_sim_config()
    try:
        from ccbench import _core
    except ImportError:
        raise fail("the simulator extension is not built; run `make setup` (or `maturin develop --release`)") from None
    try:
        est = _core.validate(json.dumps(config))
    except _core.SimConfigError as e:
        # backends.sim (and pandas with it) only when there is an error to explain.
        from ccbench.backends.sim import user_facing_error

        raise user_facing_error(e, config) from None
    typer.echo(f"ok: {scenario} ({len(config['flows'])} flows)")
    if est is not None:
        typer.echo(estimate_line(est))


def estimate_line(est: dict) -> str:
    """The pre-flight estimate in one line (``ccbench validate``)."""
    from ccbench.fmt import fmt_bytes

    avail = est["available_bytes"]
    return (
        f"estimate: {fmt_bytes(est['total_bytes'])} of memory for the run"
        + (f" ({fmt_bytes(avail)} available)" if avail == avail else "")
        + f"; {est['summary']}"
    )


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("validate")(validate_cmd)
