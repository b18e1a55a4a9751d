"""``ccbench emu run | check | clean``: the real Linux kernel TCP through the ``ccemu``
userspace bottleneck (network namespaces; needs root and /dev/net/tun)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ccbench.cli import pcap_opts
from ccbench.cli.errors import fail

emu_app = typer.Typer(
    name="emu",
    help=(
        "Emulate a scenario with the real Linux kernel TCP: two network namespaces joined "
        "by the ccemu bottleneck, which runs the simulator's own queue and loss code in real "
        "time. Needs root, /dev/net/tun, `ip` and the ccemu binary (cargo build --release -p ccemu).\n\n"
        "Examples:\n\n"
        "  ccbench emu check\n\n"
        "  sudo ccbench emu run examples/adsl1_voip.toml --seed 1 --out runs/adsl-emu\n\n"
        "  sudo ccbench emu clean"
    ),
    no_args_is_help=True,
)


def _timing_lines(run) -> list[str]:
    lines = []
    for d, v in run.meta["emu"]["timing_error_ns"].items():
        p = v.get("percentiles", {})
        if not v.get("count"):
            continue

        def us(key):
            x = p.get(key)
            return "-" if x is None else f"{x / 1e3:.1f}"

        lines.append(
            f"{d}: {v['count']:,} departures, actual - scheduled (us): p50 {us('p50')}  p90 {us('p90')}  "
            f"p99 {us('p99')}  p99.9 {us('p99.9')}  max {us('p100')}"
        )
    return lines


@emu_app.command("run")
def run_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML).", show_default=False),
    seed: int = typer.Option(None, "--seed", "-s", help="Run seed (default: the scenario's run.seed)."),
    out: Path = typer.Option(None, "--out", "-o", help="Directory to save the run in. Default: runs/<scenario>-emu-seed<N>."),
    no_save: bool = typer.Option(False, "--no-save", help="Print the table only; do not save the run."),
    info_interval: str = typer.Option("1ms", "--info-interval", help='TCP_INFO sampling interval, e.g. "1ms".'),
    spin: str = typer.Option("50us", "--spin", help='The bottleneck spins this long before each departure, e.g. "50us".'),
    info_interval_ms: float = typer.Option(None, "--info-interval-ms", hidden=True, help="Old spelling of --info-interval, in ms."),
    spin_us: int = typer.Option(None, "--spin-us", hidden=True, help="Old spelling of --spin, in us."),
    rt_prio: int = typer.Option(10, "--rt-prio", help="SCHED_FIFO priority of the bottleneck threads (0 = normal scheduling)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    traffic_source: str = typer.Option(
        None, "--traffic-source",
        help='What drives the bulk TCP flows: "ccemu" (built-in probe) or "iperf3" (the distribution\'s, default socket '
             "settings and autotuning). Default: the scenario's [emu] traffic_source, else ccemu. UDP, CBR/on-off and "
             "bytes transfers always use the built-in source.", show_default=False),
    keep: bool = typer.Option(False, "--keep", help="Keep the work directory with the probes' raw files (its path is in meta.json, emu.files)."),
    pcap: list[str] = pcap_opts.PCAP,
    pcap_snaplen: str = pcap_opts.SNAPLEN,
    pcap_max_size: str = pcap_opts.MAX_SIZE,
) -> None:
    """Emulate a scenario (real kernel TCP) and print the same per-flow table as ``ccbench run``.

    --pcap bottleneck_down (or bottleneck_up, or both joined with +) writes the
    kernel's packets as they leave the bottleneck to OUT/LINK.pcap, handshake
    included, with wall-clock timestamps.

    Example: sudo ccbench emu run examples/adsl1_voip.toml --seed 1

    Example: sudo ccbench emu run examples/emu/cubic_10mbit.toml --pcap bottleneck_down+bottleneck_up

    Example: sudo ccbench emu run examples/emu/cubic_10mbit.toml --traffic-source iperf3
    """
    from ccbench.emu.runner import emulate
    from ccbench.cli.progress import sim_progress
    from ccbench.cli.quantities import duration_s
    from ccbench.cli.run import flow_table
    from ccbench.emu import EmulationError
    from ccbench.scenario import load_scenario

    # The hidden old spellings (bare ms and us) still work.
    info_interval_s = duration_s(info_interval if info_interval_ms is None else f"{info_interval_ms}ms", "--info-interval")
    spin_s = duration_s(spin if spin_us is None else f"{spin_us}us", "--spin", positive=False)
    if traffic_source is not None and traffic_source not in ("ccemu", "iperf3"):
        raise fail(f"--traffic-source: {traffic_source!r} is not accepted (accepted: ccemu, iperf3)")
    sc = load_scenario(scenario)
    target = out or Path("runs") / f"{scenario.stem}-emu-seed{sc.run.seed if seed is None else seed}"
    if out is not None and not no_save:
        from ccbench.atomicio import check_out_dir

        check_out_dir(out, "--out")  # before the run, not after it
    capture = pcap_opts.pcap_options(pcap, pcap_snaplen, pcap_max_size, target)
    try:
        with sim_progress(f"emulating {scenario.name}", enabled=not quiet) as progress:
            run = emulate(sc, seed=seed, progress=progress, info_interval=info_interval_s, spin_us=round(spin_s * 1e6), rt_prio=rt_prio, keep=keep, pcap=capture,
                          traffic_source=traffic_source)
    except EmulationError as e:
        raise fail(str(e))
    pcap_opts.warn_captures(run.meta.get("pcap", []))
    from ccbench.cli.progress import output_console

    console = output_console()
    if not no_save:
        run.save(target)
    console.print(flow_table(run, f"{scenario.name}  seed {run.meta['seed']}  (emulated, kernel {run.meta['versions']['kernel']})"))
    for line in _timing_lines(run):
        console.print(f"[dim]{line}[/dim]")
    if run.meta["emu"].get("traffic_source") == "iperf3":
        console.print(f"[dim]traffic source: {run.meta['emu'].get('iperf3')} for the bulk TCP flows[/dim]")
    for msg in run.meta["emu"].get("notes") or []:
        console.print(f"[yellow]note:[/yellow] {msg}")
    for msg in run.meta["emu"]["ignored"]:
        console.print(f"[yellow]ignored by the emulator:[/yellow] {msg}")
    pcap_opts.print_captures(run.meta.get("pcap", []), console)
    if not no_save:
        console.print(f"saved to {target}")


@emu_app.command("check")
def check_cmd(
    fmt: str = typer.Option("text", "--format", "-f", help="text or json."),
    as_json: bool = typer.Option(False, "--json", hidden=True, help="Old spelling of --format json."),
) -> None:
    """What this machine supports: root, /dev/net/tun, ip netns, the ccemu binary, congestion controls."""
    from ccbench.emu import check

    if fmt not in ("text", "json"):
        raise fail(f"--format: {fmt!r} is not accepted (accepted: text, json)")
    info = check()
    if as_json or fmt == "json":
        typer.echo(json.dumps(info, indent=2))
    else:
        def yn(ok):
            return "yes" if ok else "NO"

        typer.echo(f"root:                {yn(info['root'])}")
        typer.echo(f"/dev/net/tun:        {yn(info['tun'])}")
        typer.echo(f"ip:                  {info['ip'] or 'NO'}")
        typer.echo(f"ip netns:            {yn(info['netns'])}")
        typer.echo(f"sysctl:              {info['sysctl'] or 'NO'}")
        typer.echo(f"ccemu:               {info['ccemu'] or 'NO'}")
        typer.echo(f"iperf3:              {info.get('iperf3') or 'no (only needed for --traffic-source iperf3)'}")
        typer.echo(f"kernel:              {info['kernel']}")
        typer.echo(f"congestion controls: {' '.join(info['congestion_controls']) or '(none)'}")
        if info["problems"]:
            typer.echo("cannot emulate: " + "; ".join(info["problems"]))
        else:
            typer.echo("ready to emulate")
    if info["problems"]:
        raise typer.Exit(1)


@emu_app.command("clean")
def clean_cmd(force: bool = typer.Option(False, "--force", help="Also remove namespaces of runs that still look alive.")) -> None:
    """Remove leftover ccb-* network namespaces, pid files and work directories of crashed
    or killed runs (every `emu run` also does this for dead runs before it starts)."""
    import os

    from ccbench.emu import clean, list_namespaces

    if os.geteuid() != 0:
        left = list_namespaces()
        raise fail(f"not root: cannot delete network namespaces ({len(left)} ccb-* namespaces present)")
    removed = clean(force=force)
    typer.echo(f"removed {len(removed)} namespace(s)" + (": " + ", ".join(removed) if removed else ""))
    left = list_namespaces()
    if left:
        typer.echo(f"still present (runs alive; --force removes them): {', '.join(left)}")


def register(app: typer.Typer) -> None:
    """Adds the ``emu`` sub-app to the ``ccbench`` command line."""
    app.add_typer(emu_app, name="emu")


