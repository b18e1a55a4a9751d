"""``ccbench model brosh``: command-line front end (typer) for the Brosh delay model.

The integrator registers :func:`cli` as a typer command; standalone::

    app = typer.Typer(); app.command("brosh")(cli)
"""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .params import BroshParams

__all__ = ["cli", "plot_ccdf"]

_DEFAULT_DEADLINES = [0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 1.0]


def plot_ccdf(results: dict, path: Path, title: str = "") -> Path:
    """Write the delay CCDF P{D > d} of one or more results to ``path`` (PNG/SVG/PDF)."""
    from ccbench.plots import new_figure  # no pyplot: the backend stays the user's

    fig, ax = new_figure(figsize=(6.0, 4.0))
    for label, res in results.items():
        x, y = res.distribution.ccdf()
        keep = y > 0
        ax.step(x[keep] * 1e3, y[keep], where="post", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("per-packet TCP delay d (ms)")
    ax.set_ylabel("P{D > d}")
    ax.grid(True, which="both", alpha=0.3)
    if title:
        ax.set_title(title, fontsize=9)
    if len(results) > 1 or next(iter(results), ""):
        ax.legend(fontsize=8)
    path = Path(path)
    fig.savefig(path)
    return path


def cli(
    rate_bps: Optional[float] = typer.Option(
        None, "--rate-bps", help="Application bit rate in bit/s over --size-bytes writes (give this or --interval-s)."),
    interval_s: Optional[float] = typer.Option(
        None, "--interval-s", help="Packetization interval in seconds (default 0.02 s if --rate-bps is not given)."),
    size_bytes: float = typer.Option(174.0, "--size-bytes", help="Application packet size a in bytes (VoIP 174, video 1448)."),
    rtt_s: float = typer.Option(0.1, "--rtt-s", help="Round-trip time in seconds."),
    loss: float = typer.Option(0.01, "--loss", help="Segment loss probability p (0 <= p < 1), e.g. 0.02 for 2%."),
    mss_bytes: float = typer.Option(1448.0, "--mss-bytes", help="TCP maximum segment size in bytes."),
    one_way_s: Optional[float] = typer.Option(None, "--one-way-s", help="One-way network delay L in seconds (default RTT/2)."),
    rto_s: Optional[float] = typer.Option(None, "--rto-s", help="Base retransmission timeout T0 in seconds (default 4*RTT)."),
    loss_model: str = typer.Option("random", "--loss-model", help="Segment loss model: random | correlated."),
    queue: str = typer.Option("packet", "--queue", help="Bottleneck queue unit: packet | byte (byte: drop prob. proportional to size)."),
    limited_transmit: bool = typer.Option(True, "--limited-transmit/--no-limited-transmit", help="RFC 3042 limited transmit."),
    deadline_s: List[float] = typer.Option(
        None, "--deadline-s", help="Playout deadline(s) in seconds for the late fraction P{D > deadline}; repeatable."),
    split: int = typer.Option(1, "--split", help="Split each packet into N pieces (a/N bytes at N*f pps)."),
    parallel: int = typer.Option(1, "--parallel", help="Stripe packets round-robin over N TCP connections."),
    accounting: str = typer.Option("conserving", "--accounting", help="conserving (every packet sent once) | table (Eq. 2 literally)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write the delay CCDF to this PNG/SVG/PDF file."),
) -> None:
    """Brosh et al. CBR-over-TCP delay model: per-packet delay statistics and late fractions."""
    from rich.console import Console
    from rich.table import Table

    from .solve import solve

    console = Console()
    try:
        prm = BroshParams(
            size_bytes=size_bytes, interval_s=interval_s, rate_bps=rate_bps, rtt_s=rtt_s, loss=loss,
            mss_bytes=mss_bytes, one_way_s=one_way_s, rto_s=rto_s, loss_model=loss_model, queue=queue,
            limited_transmit=limited_transmit, split=split, parallel=parallel, accounting=accounting,
        )
        res = solve(prm)
    except ValueError as exc:
        console.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(code=2)
    deadlines = list(deadline_s) if deadline_s else _DEFAULT_DEADLINES
    d = res.distribution
    cp = prm.chain_params()
    tab = Table(title=(
        f"Brosh model: a={prm.size_bytes:g} B, f={prm.f_pps:g} pkt/s ({prm.rate_bps / 1e3:.1f} kbit/s), "
        f"RTT={prm.rtt_s * 1e3:g} ms, p={prm.loss:g}, {prm.loss_model}/{prm.queue}"
        + (f", split={split}" if split > 1 else "") + (f", parallel={parallel}" if parallel > 1 else "")))
    tab.add_column("quantity")
    tab.add_column("value", justify="right")
    rows = [
        ("mean delay", f"{d.mean_s * 1e3:.1f} ms"),
        ("std (jitter)", f"{d.std_s * 1e3:.1f} ms"),
        ("median", f"{d.percentile(0.5) * 1e3:.1f} ms"),
        ("95th percentile", f"{d.percentile(0.95) * 1e3:.1f} ms"),
        ("99th percentile", f"{d.percentile(0.99) * 1e3:.1f} ms"),
        ("maximum", f"{d.max_s() * 1e3:.1f} ms"),
        ("maximum over P >= 1e-6", f"{d.max_s(1e-6) * 1e3:.1f} ms"),
    ]
    rows += [(f"late fraction, deadline {x * 1e3:g} ms", f"{d.late_fraction(x):.4%}") for x in deadlines]
    rows += [
        ("packet rate (model / target)", f"{res.packet_rate_pps:.3f} / {cp.f_pps:.3f} pkt/s per connection"),
        ("fast retransmits / timeouts", f"{res.fast_retransmit_rate_hz:.4g} / {res.timeout_rate_hz:.4g} per s"),
        ("application-limited time", f"{res.al_time_fraction:.2%}"),
        ("states (recurrent)", f"{res.n_states} ({res.n_recurrent})"),
        ("solve time", f"{res.build_time_s + res.solve_time_s:.3f} s"),
    ]
    for k, v in rows:
        tab.add_row(k, v)
    console.print(tab)
    if plot is not None:
        out = plot_ccdf({f"p={prm.loss:g}, RTT={prm.rtt_s * 1e3:g} ms": res}, plot, title="Brosh et al. delay model")
        console.print(f"wrote {out}")
