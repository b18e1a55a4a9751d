"""``ccbench predict SCENARIO.toml``: every analytical model's answer for every flow.

The inputs come from the scenario (:mod:`ccbench.predict`); the table says per flow
which models apply and, for the others, why not.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ccbench.cli.errors import fail
from ccbench.fmt import fmt_number, fmt_pct, fmt_rate, fmt_time

__all__ = ["predict_cmd", "register", "load_for_models", "prediction_table"]


def load_for_models(path: Path):
    """The scenario of ``path``; a sweep file gives its base scenario; None for a file
    with no flows (there is nothing per flow to predict)."""
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    from ccbench.scenario import ScenarioError, load_scenario

    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise ScenarioError([f"{path}: cannot read the scenario file ({e.strerror or e})"], source=str(path)) from None
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError([f"{path}: TOML syntax error: {' '.join(str(e).split())}"], source=str(path)) from None
    if "sweep" in data:
        from ccbench.sweep.spec import load_sweep

        return load_sweep(path).scenario
    # A flow-less file is not validated as a scenario (a Scenario needs flows), so its
    # top-level keys are checked here: anything else (a `ccbench fidelity` matrix, a
    # typo) is refused rather than read as "no flows".
    from ccbench.scenario import Scenario

    unknown = sorted(set(data) - set(Scenario.model_fields))
    if unknown:
        raise ScenarioError(
            [f"{path}: {', '.join(unknown)}: not scenario keys (accepted keys: {', '.join(Scenario.model_fields)}, "
             "or a sweep file's [sweep]; a `ccbench fidelity` matrix runs with `ccbench fidelity`)"],
            source=str(path),
        )
    if not data.get("flows"):
        return None
    return load_scenario(path)


def _num(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def prediction_table(df, title: str, why: bool = True) -> Table:
    """The rich table ``ccbench predict`` prints (one row per flow and model)."""
    t = Table(title=title, title_justify="left")
    t.caption = ("goodput = payload bit/s; delay = write to delivery; p = loss rate used and where it came from "
                 "(scenario loss model, sim/emu run, or given)")
    for col in ("flow", "model", "goodput", "delay p50", "p95", "p99", "completion", "p (source)", "note / why not"):
        t.add_column(col, justify="left" if col in ("flow", "model", "note / why not", "p (source)") else "right",
                     no_wrap=col not in ("note / why not",), overflow="fold")
    last = None
    for r in df.itertuples(index=False):
        p = _num(r.loss_rate)
        ptxt = "-" if not math.isfinite(p) else f"{fmt_pct(p)} ({r.loss_source})"
        if r.valid:
            vals = (fmt_rate(_num(r.goodput_bps)), *(fmt_time(_num(x), unit="ms") for x in
                                                      (r.delay_p50_s, r.delay_p95_s, r.delay_p99_s)),
                    fmt_time(_num(r.completion_s)))
            text = str(r.note) if why else ""
            extra = []
            if math.isfinite(_num(r.late_fraction)):
                extra.append(f"late {fmt_pct(_num(r.late_fraction))}")
            if math.isfinite(_num(r.sync_rate)):
                extra.append(f"sync rate {fmt_number(_num(r.sync_rate))}")
            if math.isfinite(_num(r.p_sender_buffering)):
                extra.append(f"P[stack buffering] {fmt_number(_num(r.p_sender_buffering))}")
            if math.isfinite(_num(r.completion_sd_s)):
                extra.append(f"sd {fmt_time(_num(r.completion_sd_s))}")
            text = escape("; ".join(extra + ([text] if text else [])))
            model = f"[green]{r.model}[/green]"
        else:
            vals = ("-",) * 5
            text = f"[yellow]{escape(str(r.why_not))}[/yellow]"
            model = f"[dim]{r.model}[/dim]"
        t.add_row(str(r.flow) if r.flow != last else "", model, *vals, ptxt, text)
        last = r.flow
    return t


def applies_lines(df) -> list[str]:
    """One line per flow: which models apply."""
    out = []
    for flow, g in df.groupby("flow", sort=False):
        ok = [m for m, v in zip(g["model"], g["valid"]) if v]
        out.append(f"{flow}: {', '.join(ok) if ok else 'no model applies'}")
    return out


def predict_cmd(
    scenario: Path = typer.Argument(..., help="Scenario file (TOML); a sweep file predicts its base scenario.",
                                    show_default=False),
    loss_from: str = typer.Option("sim", "--loss-from", help="Where p comes from when the path has no random-loss "
                                  "model (drop-tail/AQM losses): 'sim' (run the simulator), 'emu' (the emulator; "
                                  "root), or 'scenario' (run nothing; those rows say why not)."),
    loss: Optional[str] = typer.Option(None, "--loss", "-p", help='Use this loss rate for every flow instead '
                                       '("1%" or 0.01): a what-if.'),
    deadline: str = typer.Option("150ms", "--deadline", help="Playout deadline of the late fraction P{D > deadline} "
                                 "(Brosh)."),
    seed: Optional[int] = typer.Option(None, "--seed", "-s", help="Seed of the run that measures p."),
    duration: Optional[str] = typer.Option(None, "--duration", help='Length of the run that measures p (e.g. "20s"; '
                                           "default: the scenario's duration)."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Also write the full prediction table (every column) here."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No notes column."),
) -> None:
    """Analytical models of every flow of a scenario, with the inputs taken from the file.

    Greedy TCP: PFTK (eq. 32 and 33), Mathis, Wei's loss synchronisation, Lübben's static-window and periodic-loss models. Finite transfers: Cardwell, Weigle (LB-CC). CBR over TCP: Brosh (delay percentiles, late fraction). Outside its domain a model's row says why instead of printing a number.

    RTT, MSS, W_max (min(sndbuf, rcvbuf)), T0 (RTT + min_rto) and the bottleneck come from the topology and transport; p from the path's loss model, else from a simulation (measured RTT too).

    Examples:

      ccbench predict examples/brosh_droptail.toml --duration 30s

      ccbench predict examples/emu/reno_10mbit.toml --loss 1% --csv pred.csv
    """
    from ccbench.predict import LOSS_FROM, options, predict_and_run

    if loss_from not in LOSS_FROM:
        raise typer.BadParameter(f"--loss-from: {loss_from!r} is not accepted (accepted: {', '.join(LOSS_FROM)})")
    p = options.probability(loss, "--loss")
    deadline_s = options.duration_s(deadline, "--deadline")
    duration_s = options.duration_s(duration, "--duration")
    sc = load_for_models(scenario)
    console = Console(width=max(Console().width, 150))
    if sc is None:
        console.print(f"{scenario}: no flows, nothing to predict (the models answer per flow; "
                      "`ccbench estimate` probes a flow-less scenario)")
        return
    if loss_from == "emu" and p is None:
        from ccbench.emu import EmulationError, require

        try:
            require()
        except EmulationError as e:
            raise fail(f"--loss-from emu: {e}")
    df, run = predict_and_run(sc, loss_from=loss_from, loss=p, deadline_s=deadline_s, seed=seed,
                              duration_s=duration_s)
    src = "" if run is None else f"; p of drop-tail/AQM flows measured in the {run.meta.get('backend')} run (seed {run.meta.get('seed')})"
    console.print(prediction_table(df, f"{scenario.name}: analytical models{src}", why=not quiet))
    for line in applies_lines(df):
        console.print(f"  {line}")
    if csv is not None:
        csv.parent.mkdir(parents=True, exist_ok=True)
        df.to_csv(csv, index=False)
        console.print(f"wrote {csv}")


def register(app: typer.Typer) -> None:
    """Adds ``ccbench predict`` to the command line."""
    app.command("predict")(predict_cmd)
