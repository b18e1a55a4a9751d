"""``ccbench estimate``: the service-curve benchmark of Lübben & Fidler.

Two modes, one analysis (the same :class:`~ccbench.netcal.ProbingConfig` in both, so a
probe table saved with ``--save-probes`` re-analyses with ``--from-csv`` to the same
estimate):

* ``ccbench estimate SCENARIO.toml``: probe the scenario in the simulator with a
  CBR-over-TCP flow named ``probe`` beside the scenario's own traffic
  (:func:`ccbench.netcal.simprobe.simulate_probes`). The file may have no ``[[flows]]``.
* ``ccbench estimate --from-csv FILE``: analyse a probe table measured elsewhere
  (columns ``rate_bps, seq, bytes, t_send_s, t_recv_s``; see :mod:`ccbench.netcal.io`).

Registered by ``estimate.register(app)``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import List, Optional

import typer

from ccbench.fmt import fmt_number, fmt_rate

__all__ = ["estimate_cmd", "register", "parse_probe_rate"]


def parse_probe_rate(text: str, size_bytes: int, what: str) -> float:
    """``"1Mbit"`` -> 1e6 bit/s; ``"100pkt/s"`` -> 100 packets of ``size_bytes`` per
    second, in bit/s. A bad value is the one-line error naming ``what``."""
    from ccbench.cli.quantities import PKT_RATE, packet_rate

    pps = packet_rate(text, what, size_bytes)  # validates either spelling
    if PKT_RATE.match(str(text)) is None:
        # A bit rate is returned as written: going through packets per second and back
        # would give 2000000.0000000002 for "2Mbit" and break j*r_acc rate checks.
        from ccbench.scenario.units import parse_rate

        return float(parse_rate(text))
    return pps * size_bytes * 8.0


def _load_scenario_dict(path: Path) -> dict:
    """The scenario file as a dict of its TOML tables (it may have no flows); TOML
    errors become a one-line :class:`ScenarioError`."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    from ccbench.scenario import ScenarioError

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise ScenarioError([f"{path}: cannot read the scenario file ({e.strerror or e})"], source=str(path)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        msg = " ".join(str(e).split())
        raise ScenarioError([f"{path}: TOML syntax error: {msg}"], source=str(path)) from None
    return data


def _fmt_pps(bps: float, size: int) -> str:
    return f"{fmt_number(bps / (8.0 * size))} pkt/s"


def estimate_cmd(
    scenario: Optional[Path] = typer.Argument(
        None, help="Scenario file (TOML) to probe in the simulator; it may have no flows.", show_default=False),
    from_csv: Optional[Path] = typer.Option(
        None, "--from-csv", help="Analyse this probe CSV (rate_bps, seq, bytes, t_send_s, t_recv_s) instead.",
        show_default=False),
    r_acc: Optional[str] = typer.Option(
        None, "--r-acc", help='Rate step r_acc: a bit rate ("1Mbit") or a packet rate ("100pkt/s" = packets of '
        '--size per second). Required with SCENARIO; with --from-csv it checks that the rates are j*r_acc.'),
    r_max: Optional[str] = typer.Option(
        None, "--r-max", help="Highest rate to probe (same units as --r-acc); choose it above the expected "
        "long-term rate. Required with SCENARIO."),
    size: str = typer.Option("1448B", "--size", help="Probe write size (one MSS by default); also the packet "
                             "size of pkt/s rates."),
    xi: float = typer.Option(0.05, "--xi", help="Per-rate violation probability: (1-xi)-quantiles; eps = |R|*xi."),
    samples: int = typer.Option(150, "--samples", help="Samples per rate (I)."),
    sample_spacing: str = typer.Option(
        "100ms", "--sample-spacing", help="Least mean time between samples (mean gap = max(2 packets, this)); "
        '"0s" = 2 packets, the plain packet-count rule.'),
    max_extensions: int = typer.Option(6, "--max-extensions", help="Extensions (thinning) to reach independent "
                                       "samples."),
    stationarity_retries: int = typer.Option(
        2, "--stationarity-retries", help="Extensions allowed after DF-GLS fails before a rate is declared "
        "non-stationary (0 = the paper's rule). Near the long-term rate the delays' correlation time grows without "
        "bound; raise this with --max-extensions and --max-train to probe close to it."),
    max_train: str = typer.Option(
        "600s", "--max-train", help="SCENARIO: longest measured train per rate (simulated time)."),
    on_dependent: str = typer.Option(
        "accept", "--on-dependent", help='After --max-extensions a stationary but dependent rate is "accept"ed '
        '(flagged) or "stop"s the probing (the paper\'s rule taken strictly).'),
    cc: Optional[str] = typer.Option(None, "--cc", help="Probe congestion control (default: the simulator's)."),
    ecn: Optional[bool] = typer.Option(None, "--ecn/--no-ecn", help="Probe ECN (default: the simulator's).",
                                       show_default=False),
    delayed_ack: Optional[bool] = typer.Option(
        None, "--delayed-ack/--no-delayed-ack", help="Probe receiver's delayed ACKs (default: the simulator's).",
        show_default=False),
    warmup: Optional[str] = typer.Option(
        None, "--warmup", help='SCENARIO: simulated time before each measured train (default "10s"). '
        '--from-csv: time dropped from the start of each train (default "0s").'),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="Simulation seed (default: the scenario's run.seed); "
                                       "also seeds the random sampling (default 0)."),
    time_scale: Optional[List[str]] = typer.Option(None, "--time-scale", help='Time scale to print, e.g. "100ms" '
                                                   "(repeatable; a bare number is seconds)."),
    plot: Optional[Path] = typer.Option(None, "--plot", help="Write alpha~(t) to this .png or .svg."),
    trace: Optional[Path] = typer.Option(None, "--trace", help="Arrival trace CSV (t_s, bytes): delay bounds."),
    save_probes: Optional[Path] = typer.Option(
        None, "--save-probes", help="SCENARIO: write the probe table as CSV (re-analyse it with --from-csv)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Estimate the service curve S~(t) and attainable rate alpha~(t) (Lübben & Fidler).

    Probes with constant-rate TCP traffic at r_acc, 2 r_acc, ... and stops at the first
    rate whose delays are not stationary (DF-GLS); prints S~ and alpha~ with
    eps = |R| * xi. "100pkt/s" rates mean packets of --size bytes per second.

    Examples:

      ccbench estimate examples/estimate_ecn_aimd.toml --r-acc 100pkt/s --r-max 5000pkt/s --xi 1e-4 --cc aimd
      --ecn --no-delayed-ack --warmup 5s --max-extensions 200 --stationarity-retries 200 --max-train 3000s

      ccbench estimate home.toml --r-acc 1Mbit --r-max 12Mbit --plot alpha.png --save-probes probes.csv

      ccbench estimate --from-csv probes.csv --r-acc 1Mbit
    """
    from dataclasses import replace

    from ccbench.cli.errors import require_extra

    require_extra("arch", "ccbench estimate (the DF-GLS stationarity test)")
    from ccbench.netcal import NetcalError
    from ccbench.netcal.cli import print_estimate
    from ccbench.netcal.simprobe import SIM_PROBING

    if (scenario is None) == (from_csv is None):
        raise NetcalError("give either a SCENARIO file or --from-csv FILE (exactly one)")
    from ccbench.cli.quantities import duration_s
    from ccbench.cli.quantities import size_bytes as parse_size_bytes

    size_bytes = parse_size_bytes(size, "--size")
    warmup_s = duration_s(warmup if warmup is not None else ("10s" if scenario is not None else "0s"),
                          "--warmup", positive=False)
    spacing_s = duration_s(sample_spacing, "--sample-spacing", positive=False)
    max_train_s = duration_s(max_train, "--max-train")
    scales = [duration_s(t, "--time-scale", legacy="s") for t in time_scale or []]
    if on_dependent not in ("accept", "stop"):
        raise NetcalError(f"--on-dependent must be accept or stop, got {on_dependent!r}")
    if not (0.0 < xi < 1.0):
        raise NetcalError(f"--xi must lie in the open interval (0, 1), got {xi!r}")
    cfg = replace(
        SIM_PROBING,
        samples=samples,
        mean_gap_s=spacing_s,
        max_extensions=max_extensions,
        stationarity_retries=stationarity_retries,
        on_exhausted=on_dependent,
        seed=0 if seed is None else seed,
        warmup_s=0.0 if scenario is not None else warmup_s,
    )
    r_acc_bps = None if r_acc is None else parse_probe_rate(r_acc, size_bytes, "--r-acc")
    r_max_bps = None if r_max is None else parse_probe_rate(r_max, size_bytes, "--r-max")
    if r_acc_bps is not None and r_max_bps is not None and r_acc_bps > r_max_bps:
        raise NetcalError(f"--r-acc {r_acc} is above --r-max {r_max}")
    from ccbench.cli.progress import output_console

    console = output_console()
    if from_csv is not None:
        from ccbench.netcal import estimate_from_file

        if save_probes is not None:
            raise NetcalError("--save-probes needs a SCENARIO (the CSV is already saved)")
        est = estimate_from_file(from_csv, xi, r_acc_bps, cfg)
    else:
        if r_acc_bps is None or r_max_bps is None:
            raise NetcalError("probing a SCENARIO needs --r-acc and --r-max (e.g. --r-acc 1Mbit --r-max 12Mbit)")
        est, probes = _simulate(scenario, r_acc_bps, r_max_bps, xi, size_bytes, cfg, cc, ecn, delayed_ack,
                                warmup_s, seed, quiet, max_train_s)
        if save_probes is not None:
            save_probes.parent.mkdir(parents=True, exist_ok=True)
            probes.to_csv(save_probes, index=False, float_format="%.17g")
    print_estimate(console, est, scales or None, plot, trace)
    if est.probing is not None:
        largest = float(est.rates_bps.max())
        console.print(f"largest stationary rate {fmt_rate(largest)} = {_fmt_pps(largest, size_bytes)} "
                      f"(packets of {size_bytes} B)", markup=False)
    if xi < 1.0 / samples:
        console.print(f"note: xi = {xi:g} < 1/I = 1/{samples}: each delay quantile is the sample maximum, so the "
                      "nominal xi is not resolved by the sample", markup=False)
    if scenario is not None and save_probes is not None:
        console.print(f"wrote {save_probes}", markup=False)


def _simulate(scenario, r_acc_bps, r_max_bps, xi, size_bytes, cfg, cc, ecn, delayed_ack, warmup_s, seed, quiet,
              max_train_s):
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ccbench.netcal.simprobe import PROBE_FLOW, probe_flow, simulate_probes
    from ccbench.scenario import Scenario

    data = _load_scenario_dict(scenario)
    transport: dict = {}
    if cc is not None:
        transport["cc"] = cc
    if ecn is not None:
        transport["ecn"] = ecn
    if delayed_ack is not None:
        transport["delayed_ack"] = delayed_ack
    # Validate the scenario with the probe before any simulation: every problem is a
    # ScenarioError naming the field.
    trial = dict(data)
    trial["flows"] = list(data.get("flows", []) or []) + [
        probe_flow(r_acc_bps, size_bytes, 0.0, 1.0, transport, {"direction": "down"})
    ]
    topo = data.get("topology", {})
    if isinstance(topo, dict) and topo.get("kind", "dumbbell") == "dumbbell":
        if not any(isinstance(f, dict) and f.get("name") == PROBE_FLOW for f in data.get("flows", []) or []):
            Scenario.from_dict(trial, source=str(scenario))
    from ccbench.cli.progress import progress_wanted

    err = Console(stderr=True)
    progress = Progress(
        TextColumn("[bold]probing[/bold] {task.fields[rate]}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not progress_wanted(not quiet),
    )
    task = progress.add_task("probing", total=int(math.floor(r_max_bps / r_acc_bps + 1e-9)), rate="")

    def on_rate(k: int, n: int, rate: float) -> None:
        if math.isfinite(rate):
            progress.update(task, completed=k, rate=f"{fmt_rate(rate)} ({_fmt_pps(rate, size_bytes)})")
        else:
            progress.update(task, completed=n)

    with progress:
        probes, est = simulate_probes(
            data, r_acc_bps, r_max_bps, xi=xi, size_bytes=size_bytes, config=cfg, transport=transport,
            warmup_s=warmup_s, seed=seed, progress=on_rate, max_train_s=max_train_s,
        )
    return est, probes


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate_cmd)
