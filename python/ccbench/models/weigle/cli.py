"""``ccbench model weigle``: LB-CC transfer-time model from the command line (typer + rich)."""

from __future__ import annotations

import enum
import math
from pathlib import Path
from typing import Optional

import typer

from .params import WeigleParams
from .recursion import n_delta, transfer_time


class ProtocolChoice(str, enum.Enum):
    reno = "reno"
    tahoe = "tahoe"
    scalable = "scalable"
    highspeed = "highspeed"
    srf = "srf"


class SemanticsChoice(str, enum.Enum):
    printed = "printed"
    corrected = "corrected"


class ExitChoice(str, enum.Enum):
    auto = "auto"
    window = "window"
    threshold = "threshold"


def cli(
    protocol: ProtocolChoice = typer.Option(ProtocolChoice.reno, "--protocol",
                                            help="LB-CC protocol mapping (Section 3)."),
    loss: float = typer.Option(0.01, "--loss", help="Per-segment loss probability p (0 <= p < 1)."),
    rtt_s: float = typer.Option(0.1, "--rtt-s", help="Mean round-trip time RTT (s)."),
    t0_s: float = typer.Option(1.0, "--t0-s", help="Average single retransmission timeout TO (s) (Eq. 20)."),
    segments: int = typer.Option(1000, "--segments", help="Transfer size n (segments)."),
    transfer_bytes: Optional[float] = typer.Option(
        None, "--bytes", help="Transfer size (bytes); overrides --segments (n = ceil(bytes / MSS))."),
    w_max: float = typer.Option(64.0, "--w-max", help="Flow-control window limit K (segments)."),
    rate_bps: Optional[float] = typer.Option(
        None, "--rate-bps", help="Bottleneck capacity C (bit/s); ACK gap >= MSS/C. Default: no limit."),
    mss_bytes: float = typer.Option(1460.0, "--mss-bytes", help="Segment size B (bytes)."),
    low_window: Optional[float] = typer.Option(
        None, "--low-window", help="L (segments): initial ssthresh / threshold cap. Default per protocol."),
    semantics: SemanticsChoice = typer.Option(
        SemanticsChoice.corrected, "--semantics",
        help="'printed' = the paper's mappings literally; 'corrected' = documented fixes."),
    ss_exit: ExitChoice = typer.Option(
        ExitChoice.auto, "--ss-exit", help="Slow-start exit: 'window' (Eq. 7), 'threshold' (Eq. 11), "
                                           "'auto' (window if corrected, threshold if printed)."),
    p_timeout: Optional[float] = typer.Option(
        None, "--p-timeout", help="Observed per-segment timeout probability p_T (replaces Eq. 19)."),
    grid_step: Optional[float] = typer.Option(
        None, "--grid-step", help="CA window grid step Delta (segments); alone = uniform grid. "
                                  "Default: 1/8 up to window 12.5, then geometric."),
    grid_rel_step: Optional[float] = typer.Option(
        None, "--grid-rel-step", help="Relative CA grid step r above Delta/r (default 0.01; 0 = uniform)."),
    early_stop: bool = typer.Option(
        True, "--early-stop/--no-early-stop", help="Stop at N_eps and extrapolate linearly (Section 6)."),
    eps: float = typer.Option(1e-12, "--eps", help="Early-stop tolerance epsilon on |psi_n - psi_{n-1}| (s)."),
    eps_run: int = typer.Option(
        10, "--eps-run", help="Consecutive levels the eps test must hold (1 = the paper's test)."),
    delta: float = typer.Option(0.1, "--delta", help="Relative tolerance delta for N_delta (Section 6.1)."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Write E[T_n] (+/- 1 sd) vs n to this PNG or SVG file."),
) -> None:
    """Mean and standard deviation of the time to transfer n segments (Weigle et al. 2009)."""
    from rich.console import Console
    from rich.table import Table

    if plot is not None and plot.suffix.lower() not in (".png", ".svg"):
        raise typer.BadParameter(f"plot={str(plot)!r} is invalid; accepted: a path ending in .png or .svg",
                                 param_hint="--plot")
    try:
        params = WeigleParams(
            protocol=protocol.value, loss=loss, rtt_s=rtt_s, t0_s=t0_s, w_max=w_max, rate_bps=rate_bps,
            mss_bytes=mss_bytes, low_window=low_window, semantics=semantics.value,
            ss_exit=None if ss_exit is ExitChoice.auto else ss_exit.value,
            p_timeout=p_timeout, grid_step=grid_step, grid_rel_step=grid_rel_step)
        if transfer_bytes is not None:
            if not (transfer_bytes > 0):
                raise ValueError(f"bytes={transfer_bytes!r} is invalid; accepted: a size in bytes > 0")
            segments = int(math.ceil(transfer_bytes / mss_bytes))
        if segments < 1:
            raise ValueError(f"segments={segments!r} is invalid; accepted: an integer >= 1")
        n_ref = 10_000
        res = transfer_time(params, max(segments, n_ref), early_stop=early_stop, eps=eps, eps_run=eps_run)
        nd = n_delta(res, delta, n_ref)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    mean, sd = res.mean_at(segments), float(res.sd_s[segments - 1])
    theta = float(res.theta_bps()[segments - 1])
    table = Table(title=f"LB-CC transfer time: {params.protocol}, {params.semantics} semantics")
    table.add_column("quantity")
    table.add_column("value", justify="right")
    table.add_column("unit")
    rows = [
        ("segments n", f"{segments}", "segments"),
        ("E[T_n]", f"{mean:.6g}", "s"),
        ("sd[T_n]", f"{sd:.6g}", "s"),
        ("Theta_n = nB/E[T_n]", f"{theta / 1e6:.6g}", "Mbit/s"),
        ("N_eps", "not reached" if res.n_eps is None else f"{res.n_eps}",
         f"segments (eps={eps:g} s, run {eps_run})"),
        (f"N_delta (delta={delta:g})", f"{nd}", "segments (Theta_inf = Theta_10000)"),
        ("levels computed", f"{res.n_computed}", "segments"),
        ("t_TO (Eq. 20)", f"{res.t_to:.6g}", "s"),
        ("CA grid (min step, points)", f"{res.grid_step:.6g}, {res.grid_points}", "segments, -"),
        ("solver", res.solver, "-"),
        ("compute time", f"{res.seconds:.3g}", "s"),
    ]
    for r in rows:
        table.add_row(*r)
    Console().print(table)
    if plot is not None:
        from ccbench.plots import new_figure  # no pyplot: the backend stays the user's
        import numpy as np

        n_axis = np.arange(1, segments + 1)
        mu, s = res.mean_s[:segments], res.sd_s[:segments]
        fig, ax = new_figure(figsize=(6, 4))
        ax.plot(n_axis, mu, label="E[T_n] (LB-CC)")
        ax.fill_between(n_axis, np.maximum(mu - s, 0), mu + s, alpha=0.25, label="+/- 1 sd")
        ax.set_xlabel("segments n")
        ax.set_ylabel("transfer time (s)")
        ax.set_title(f"{params.protocol}, p={params.loss:g}, RTT={params.rtt_s:g} s, K={params.w_max:g}")
        ax.legend()
        fig.savefig(plot)
        Console().print(f"plot written to {plot}")
