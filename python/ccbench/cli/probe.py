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
        "Protocol v2: random 128-bit session ids, HMAC-tagged packets, and an optional shared "
        "token (--token or CCBENCH_PROBE_TOKEN) the server requires. "
        "Needs the ccprobe binary (cargo build --release -p ccprobe).\n\n"
        "Examples:\n\n"
        "  ccbench probe server --port 9000\n\n"
        "  ccbench probe client --server 127.0.0.1:9000 --packets 20000 --rate 500pkt/s --pattern bursty --out runs/probe1\n\n"
        "  ccbench probe analyse runs/probe1 --plot loss.png"
    ),
    no_args_is_help=True,
)


@probe_app.command("server")
def server_cmd(
    bind: str = typer.Option("127.0.0.1", "--bind", help="Address to listen on (TCP control and UDP probes)."),
    port: int = typer.Option(9000, "--port", help="Port (TCP and UDP); 0 picks a free one."),
    max_clients: int = typer.Option(10, "--max-clients", help="Concurrent clients (at most 10, thesis §4.3)."),
    max_rate: str = typer.Option("1000pkt/s", "--max-rate", help='Per-client cap, e.g. "1000pkt/s" (above 1000 only on loopback); a client sending faster is stopped.'),
    idle_timeout: str = typer.Option("10s", "--idle-timeout", help='Time without packets or control messages before a client is cut off, e.g. "10s".'),
    exit_after: int = typer.Option(None, "--exit-after", help="Exit after this many sessions ended (default: run until interrupted)."),
    token: str = typer.Option(None, "--token", envvar="CCBENCH_PROBE_TOKEN", show_envvar=True, help="Shared token (8-1024 bytes) every client must know; prefer the environment variable (not visible in the process list)."),
    max_per_source: int = typer.Option(None, "--max-per-source", help="Connections per source address (IPv6: per /64). Default 3."),
    handshake_timeout: str = typer.Option("5s", "--handshake-timeout", help='Time a new connection has to complete the v2 handshake, e.g. "5s".'),
    max_duration: str = typer.Option("3600s", "--max-duration", help='Longest measurement, e.g. "3600s".'),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No per-session log lines."),
    debug_loss: float = typer.Option(0.0, "--debug-loss", hidden=True, help="TEST ONLY: drop received probes with this probability."),
    debug_seed: int = typer.Option(1, "--debug-seed", hidden=True, help="TEST ONLY: seed of --debug-loss/--debug-reorder."),
    debug_reorder: float = typer.Option(0.0, "--debug-reorder", hidden=True, help="TEST ONLY: hold back received probes with this probability."),
    debug_reorder_depth: int = typer.Option(50, "--debug-reorder-depth", hidden=True, help="TEST ONLY: ... for this many later packets."),
) -> None:
    """Run a probe server in the foreground (Ctrl-C stops it).

    Example: ccbench probe server --bind 127.0.0.1 --port 9000
    """
    from ccbench.cli.quantities import duration_s, packet_rate
    from ccbench.probe import ProbeError, check_token, find_ccprobe, probe_env, server_args

    max_rate = packet_rate(max_rate, "--max-rate", None, legacy=True)
    idle_timeout = duration_s(idle_timeout, "--idle-timeout", legacy="s")
    handshake_timeout = duration_s(handshake_timeout, "--handshake-timeout")
    max_duration = duration_s(max_duration, "--max-duration")
    try:
        check_token(token, "--token (or CCBENCH_PROBE_TOKEN)")
        exe = find_ccprobe()
    except ProbeError as e:
        raise fail(str(e))
    args = server_args(bind=bind, port=port, max_clients=max_clients, max_rate=max_rate, idle_timeout=idle_timeout,
                       exit_after=exit_after, quiet=quiet, debug_loss=debug_loss, debug_seed=debug_seed,
                       debug_reorder=debug_reorder, debug_reorder_depth=debug_reorder_depth,
                       max_per_source=max_per_source, handshake_timeout=handshake_timeout, max_duration=max_duration)
    proc = subprocess.Popen([str(exe), *args], env=probe_env(token))
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
    size: str = typer.Option("48B", "--size", help='Packet size, "48B" (header only) to "400B" (thesis: no fragmentation at MTU 500).'),
    rate: str = typer.Option("500pkt/s", "--rate", help='Average sending rate: packets, e.g. "500pkt/s" (default half the thesis\'s limit of 1 per ms), or bits, e.g. "200kbit".'),
    pattern: str = typer.Option("smooth", "--pattern", help="smooth (paced CBR) or bursty (TCP-like: rate x period packets back-to-back every period)."),
    burst_period: str = typer.Option("100ms", "--burst-period", help='On/off period of the bursty pattern (an \'RTT\'; at most "200ms").'),
    max_rate: str = typer.Option("1000pkt/s", "--max-rate", help='Hard cap on --rate, e.g. "1000pkt/s" (above 1000 only towards loopback).'),
    seed: int = typer.Option(1, "--seed", help="Seed of the random padding."),
    token: str = typer.Option(None, "--token", envvar="CCBENCH_PROBE_TOKEN", show_envvar=True, help="Shared token, if the server requires one."),
    out: Path = typer.Option(None, "--out", "-o", help="Run directory to write. Default: runs/probe-<date>-<time>."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="Print nothing but errors."),
) -> None:
    """Measure the loss process towards a probe server; save a run directory.

    Example: ccbench probe client --server 127.0.0.1:9000 --packets 20000 --out runs/probe1
    """
    from ccbench.cli.quantities import duration_s, packet_rate, size_bytes
    from ccbench.probe import ProbeError, check_token, probe

    if pattern not in ("smooth", "bursty"):
        raise fail(f"--pattern: expected smooth or bursty, got {pattern!r}")
    # Bare numbers are the options' old spellings: bytes, packets/s and seconds.
    size = size_bytes(size, "--size", legacy=True)
    rate = packet_rate(rate, "--rate", size, legacy=True)
    max_rate = packet_rate(max_rate, "--max-rate", None, legacy=True)
    burst_period = duration_s(burst_period, "--burst-period", legacy="s")
    target = out or Path("runs") / time.strftime("probe-%Y%m%d-%H%M%S")
    try:
        check_token(token, "--token (or CCBENCH_PROBE_TOKEN)")
        run = probe(server, out=target, packets=packets, size=size, rate=rate, pattern=pattern,
                    burst_period=burst_period, max_rate=max_rate, seed=seed, token=token)
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
    rtt: str = typer.Option(None, "--rtt", help='Normalise by this RTT, e.g. "50ms" (default: the probe\'s minimum RTT, or each flow\'s median RTT).', show_default=False),
    rtt_ms: float = typer.Option(None, "--rtt-ms", hidden=True, help="Old spelling of --rtt, in ms."),
) -> None:
    """Loss-process burstiness: fraction of loss intervals within 1 % of an RTT and
    within 1 RTT, against a Poisson process of the same rate.

    Example: ccbench probe analyse runs/probe1 --plot loss.png
    """
    from ccbench.analysis import AnalysisError, plot_loss_burstiness
    from ccbench.probe import ProbeError, loss_burstiness_of

    from ccbench.cli.quantities import duration_s

    if rtt is not None and rtt_ms is not None:
        raise fail("--rtt and --rtt-ms are the same option (accepted: one of them)")
    if rtt_ms is not None:
        rtt = f"{rtt_ms}ms"
    rtt_s = None if rtt is None else duration_s(rtt, "--rtt")
    try:
        lb = loss_burstiness_of(run_dir, rtt_s=rtt_s, label=run_dir.name)
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
