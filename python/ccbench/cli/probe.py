"""``ccbench probe server | client | analyse``: measure the loss process of a real path
with UDP probes (Wei thesis §4.3) and compare its burstiness with a Poisson process."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import typer

from ccbench.cli.errors import fail
from ccbench.fmt import fmt_time

probe_app = typer.Typer(
    name="probe",
    help=(
        "Path loss-process probe (Wei thesis §4.3): a client sends numbered, checksummed UDP "
        "packets (smooth or bursty) to a server, which reports losses over a TCP control "
        "connection (128-packet reordering window; at most 10 clients; 10 s idle cut-off). "
        "Needs the ccprobe binary (cargo build --release -p ccprobe).\n\n"
        "Examples:\n\n"
        "  ccbench probe server --port 9000\n\n"
        "  ccbench probe client --server 127.0.0.1:9000 --packets 20000 --pattern bursty --out runs/probe1\n\n"
        "  ccbench probe analyse runs/probe1 --plot loss.png"
    ),
    no_args_is_help=True,
)


@probe_app.command("server")
def server_cmd(
    bind: str = typer.Option("127.0.0.1", "--bind", help="Address to listen on (TCP control and UDP probes)."),
    port: int = typer.Option(9000, "--port", help="Port (TCP and UDP); 0 picks a free one."),
    max_clients: int = typer.Option(10, "--max-clients", help="Concurrent clients (at most 10, thesis §4.3)."),
    max_rate: float = typer.Option(1000.0, "--max-rate", help="Per-client cap, packets/s (above 1000 only on loopback); a client sending faster is stopped."),
    idle_timeout: float = typer.Option(10.0, "--idle-timeout", help="Seconds without packets or control messages before a client is cut off."),
    exit_after: int = typer.Option(None, "--exit-after", help="Exit after this many sessions ended (default: run until interrupted)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No per-session log lines."),
    debug_loss: float = typer.Option(0.0, "--debug-loss", hidden=True, help="TEST ONLY: drop received probes with this probability."),
    debug_seed: int = typer.Option(1, "--debug-seed", hidden=True, help="TEST ONLY: seed of --debug-loss/--debug-reorder."),
    debug_reorder: float = typer.Option(0.0, "--debug-reorder", hidden=True, help="TEST ONLY: hold back received probes with this probability."),
    debug_reorder_depth: int = typer.Option(50, "--debug-reorder-depth", hidden=True, help="TEST ONLY: ... for this many later packets."),
) -> None:
    """Run a probe server in the foreground (Ctrl-C stops it).

    Example: ccbench probe server --bind 127.0.0.1 --port 9000
    """
    from ccbench.probe import ProbeError, find_ccprobe, server_args

    try:
        exe = find_ccprobe()
    except ProbeError as e:
        raise fail(str(e))
    args = server_args(bind=bind, port=port, max_clients=max_clients, max_rate=max_rate, idle_timeout=idle_timeout,
                       exit_after=exit_after, quiet=quiet, debug_loss=debug_loss, debug_seed=debug_seed,
                       debug_reorder=debug_reorder, debug_reorder_depth=debug_reorder_depth)
    proc = subprocess.Popen([str(exe), *args])
    try:
        code = proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait()
        raise typer.Exit(130)
    if code:
        raise typer.Exit(code)


@probe_app.command("client")
def client_cmd(
    server: str = typer.Option(..., "--server", help="Probe server as HOST:PORT.", show_default=False),
    packets: int = typer.Option(10_000, "--packets", "-n", help="Number of UDP test packets."),
    size: int = typer.Option(48, "--size", help="Packet size in bytes, 48 (header only) to 400 (thesis: no fragmentation at MTU 500)."),
    rate: float = typer.Option(500.0, "--rate", help="Average sending rate, packets/s (default half the thesis's limit of 1 per ms)."),
    pattern: str = typer.Option("smooth", "--pattern", help="smooth (paced CBR) or bursty (TCP-like: rate x period packets back-to-back every period)."),
    burst_period: float = typer.Option(0.1, "--burst-period", help="On/off period of the bursty pattern, s (an 'RTT'; at most 0.2)."),
    max_rate: float = typer.Option(1000.0, "--max-rate", help="Hard cap on --rate, packets/s (above 1000 only towards loopback)."),
    seed: int = typer.Option(1, "--seed", help="Seed of the random padding."),
    out: Path = typer.Option(None, "--out", "-o", help="Run directory to write. Default: runs/probe-<date>-<time>."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
) -> None:
    """Measure the loss process towards a probe server; save a run directory.

    Example: ccbench probe client --server 127.0.0.1:9000 --packets 20000 --out runs/probe1
    """
    from ccbench.probe import ProbeError, probe

    if pattern not in ("smooth", "bursty"):
        raise fail(f"--pattern: expected smooth or bursty, got {pattern!r}")
    target = out or Path("runs") / time.strftime("probe-%Y%m%d-%H%M%S")
    try:
        run = probe(server, out=target, packets=packets, size=size, rate=rate, pattern=pattern,
                    burst_period=burst_period, max_rate=max_rate, seed=seed)
    except ProbeError as e:
        raise fail(str(e))
    if not quiet:
        p = run.meta["probe"]
        rtt = run.meta["rtt_s"]
        rtt_txt = fmt_time(rtt, missing="unknown")
        typer.echo(
            f"{p['packets']} packets ({p['pattern']}, {p['size_bytes']} B, {p['rate_pps']:g} pkt/s) to {p['server']}: "
            f"lost {p['lost']} ({100 * p['loss_rate']:.3f} %), min RTT {rtt_txt}"
        )
        typer.echo(f"saved to {target}")


@probe_app.command("analyse")
def analyse_cmd(
    run_dir: Path = typer.Argument(..., help="Run directory (simulator, emulator or probe).", show_default=False),
    plot: Path = typer.Option(None, "--plot", help="Write the CDF/PDF figure (Wei Figs 3.1-3.3) to this .png or .svg."),
    rtt_ms: float = typer.Option(None, "--rtt-ms", help="Normalise by this RTT (default: the probe's minimum RTT, or each flow's median RTT)."),
) -> None:
    """Loss-process burstiness: fraction of loss intervals within 1 % of an RTT and
    within 1 RTT, against a Poisson process of the same rate.

    Example: ccbench probe analyse runs/probe1 --plot loss.png
    """
    from ccbench.analysis import AnalysisError, plot_loss_burstiness
    from ccbench.probe import ProbeError, loss_burstiness_of

    if rtt_ms is not None and not rtt_ms > 0:
        raise fail(f"--rtt-ms: must be > 0, got {rtt_ms}")
    try:
        lb = loss_burstiness_of(run_dir, rtt_s=None if rtt_ms is None else rtt_ms * 1e-3, label=run_dir.name)
        if plot is not None:
            plot_loss_burstiness(lb, plot)
    except (ProbeError, AnalysisError, FileNotFoundError) as e:
        raise fail(str(e))
    typer.echo(f"{run_dir}: {lb.n_intervals} loss intervals, {lb.rate_per_rtt:.4g} losses per RTT")
    typer.echo(f"{'interval <=':>14} {'measured':>9} {'Poisson':>9}")
    for th in lb.frac_within:
        name = "1% of an RTT" if th == 0.01 else ("1 RTT" if th == 1.0 else f"{th:g} RTT")
        typer.echo(f"{name:>14} {100 * lb.frac_within[th]:8.1f}% {100 * lb.poisson_within[th]:8.1f}%")
    if plot is not None:
        typer.echo(f"plot written to {plot}")


def register(app: typer.Typer) -> None:
    """Adds the ``probe`` sub-app to the ``ccbench`` command line."""
    app.add_typer(probe_app, name="probe")
