"""``ccbench estimate --from-csv``: a typer command (the integrator registers it).

Register with ``app.command("estimate")(estimate_from_csv)`` on a ``typer.Typer()``.
Prints ``S̃^ε(t)`` and ``α̃^ε(t)`` at a few time scales as a rich table, with ξ,
``|R|`` and ε; ``--plot`` writes ``α̃(t)`` (PNG or SVG by suffix); ``--trace`` adds
delay and backlog bounds for an arrival trace (columns ``t_s``, ``bytes``). Data
errors exit with code 2 and a message naming the problem.
"""

from pathlib import Path
from typing import List, Optional

import typer

from ccbench.fmt import fmt_bits, fmt_rate, fmt_time

__all__ = ["estimate_from_csv", "print_estimate", "DEFAULT_TIME_SCALES"]

DEFAULT_TIME_SCALES = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0)


def estimate_from_csv(
    from_csv: Path = typer.Option(..., "--from-csv", help="probe CSV: rate_bps, seq, bytes, t_send_s, t_recv_s"),
    xi: float = typer.Option(0.05, "--xi", help="per-rate violation probability (1-xi quantiles), in (0, 1)"),
    r_acc_bps: Optional[float] = typer.Option(None, "--r-acc-bps", help="rate step r_acc; rates must be j*r_acc"),
    samples: int = typer.Option(750, "--samples", help="samples per rate (I)"),
    mean_gap: float = typer.Option(2.0, "--mean-gap", help="mean spacing of sampled packets"),
    max_extensions: int = typer.Option(20, "--max-extensions", help="extensions before giving up on independence"),
    stationarity_retries: int = typer.Option(2, "--stationarity-retries", help="extra DF-GLS attempts (0 = paper's rule)"),
    warmup_fraction: float = typer.Option(0.1, "--warmup-fraction", help="fraction of each train discarded"),
    seed: int = typer.Option(0, "--seed", help="seed of the random sampling"),
    time_scale: Optional[List[float]] = typer.Option(None, "--time-scale", help="time scale in s (repeatable)"),
    plot: Optional[Path] = typer.Option(None, "--plot", help="write alpha(t) to this .png or .svg"),
    trace: Optional[Path] = typer.Option(None, "--trace", help="arrival trace CSV (t_s, bytes) for delay bounds"),
) -> None:
    """Estimate the service curve and attainable rate from a probe CSV."""
    from rich.console import Console
    from rich.table import Table

    from .errors import NetcalError
    from .pipeline import estimate_from_file
    from .probing import ProbingConfig

    console = Console()
    try:
        cfg = ProbingConfig(samples=samples, mean_gap=mean_gap, max_extensions=max_extensions,
                            stationarity_retries=stationarity_retries, warmup_fraction=warmup_fraction, seed=seed)
        est = estimate_from_file(from_csv, xi, r_acc_bps, cfg)
        print_estimate(console, est, time_scale, plot, trace)
    except NetcalError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(code=2)


def print_estimate(console, est, time_scale=None, plot=None, trace=None) -> None:
    """Prints S~ and alpha~ at a few time scales (with eps), the accepted rates and, on
    request, trace bounds and the alpha~(t) plot. Shared by every `ccbench estimate` mode."""
    from rich.table import Table

    from .errors import NetcalError

    scales = sorted(time_scale) if time_scale else list(DEFAULT_TIME_SCALES)
    if any(s <= 0 for s in scales):
        raise NetcalError("--time-scale values must be positive")
    table = Table(title=f"service-curve estimate: xi={est.xi:g}, |R|={est.n_rates}, "
                        f"eps={est.eps:g}{' (vacuous: eps >= 1)' if est.vacuous else ''}")
    table.add_column("t (s)", justify="right")
    table.add_column("S~(t)", justify="right")
    table.add_column("alpha~(t)", justify="right")
    for s, sv, av in zip(scales, est.S(scales), est.alpha(scales)):
        table.add_row(f"{s:g}", fmt_bits(float(sv)), fmt_rate(float(av)))
    console.print(table)
    console.print(
        f"accepted rates: {', '.join(fmt_rate(r) for r in est.rates_bps)}; "
        f"latency {fmt_time(est.latency_s)}; long-term rate {fmt_rate(est.long_term_rate_bps)}; "
        f"eps = |R| * xi = {est.n_rates} * {est.xi:g} = {est.eps:g}",
        markup=False,
    )
    stop = est.probing.stop_rate_bps if est.probing is not None else None
    stopped = fmt_rate(stop) if stop is not None else "no rate (all stationary)"
    console.print(f"stopped at {stopped}", markup=False)
    for w in (est.probing.warnings if est.probing is not None else ()):
        console.print(f"warning: {w}", markup=False)
    if trace is not None:
        from .bounds import delay_bounds
        from .io import load_trace_csv

        tr = load_trace_csv(trace)
        b = delay_bounds(tr["t_s"].to_numpy(), tr["bytes"].to_numpy(), est)
        console.print(f"trace {trace.name}: max per-packet delay bound {fmt_time(b.max_per_packet_delay_s)}, "
                      f"envelope delay bound {fmt_time(b.envelope_delay_s)}, backlog bound "
                      f"{fmt_bits(b.backlog_bits)} (eps={est.eps:g})", markup=False)
    if plot is not None:
        from .plots import plot_attainable_rate

        out = plot_attainable_rate(est, plot)
        console.print(f"wrote {out}", markup=False)
