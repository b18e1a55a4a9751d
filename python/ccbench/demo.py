"""``python -m ccbench.demo`` (what ``make demo`` runs): the question ccbench exists
for, answered once.

A VoIP call on an ADSL line, and a CUBIC download that starts a few seconds in
(``examples/adsl1_voip_download.toml``). The demo simulates it, saves the run, prints
the per-flow table and the VoIP delay percentiles before the download starts (the
call alone) and after (beside the download), writes the HTML report and prints its
path. The "before" window is every message written before the first flow that
starts late; the "after" window is every message written from then on.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import pandas as pd

from ccbench.fmt import fmt_time

DEFAULT_SCENARIO = Path(__file__).resolve().parents[2] / "examples" / "adsl1_voip_download.toml"
PERCENTILES = (50, 95, 99)


def windows(run) -> tuple[float, float, list[str]]:
    """``(t_split, t_end, late)``: the start of the first flow that starts after 0 s,
    the run's end and the names of the flows that start then."""
    flows = run.flows
    late = flows[flows["start_s"] > 0]
    if late.empty:
        raise ValueError("no flow starts after 0 s: nothing to compare before and after")
    t = float(late["start_s"].min())
    return t, float(flows["end_s"].max()), [str(f) for f in late.loc[late["start_s"] == t, "flow"]]


def before_after(run, t_split: float) -> pd.DataFrame:
    """Delay percentiles of every flow with messages, over the messages written before
    ``t_split`` and from ``t_split`` on: columns ``flow, window, n, p50_s, p95_s,
    p99_s, max_s``."""
    from ccbench.analysis.delay import delay_percentiles

    p = run.packets
    rows = []
    for window, sel in (("before", p[p["t_write"] < t_split]), ("after", p[p["t_write"] >= t_split])):
        sel = sel[sel["t_deliver"].notna()]
        if sel.empty:
            continue
        d = delay_percentiles(sel, PERCENTILES, flows=[str(f) for f in pd.unique(sel["flow"].astype(str))])
        d.insert(1, "window", window)
        rows.append(d)
    out = pd.concat(rows, ignore_index=True)
    return out.sort_values(["flow", "window"], key=lambda c: c.map({"before": 0, "after": 1}) if c.name == "window" else c,
                           kind="stable").reset_index(drop=True)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m ccbench.demo", description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", type=Path, default=DEFAULT_SCENARIO, help="scenario file (default: %(default)s)")
    ap.add_argument("--out", type=Path, default=Path("runs/demo"), help="run directory to write (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: the scenario's)")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.table import Table

    from ccbench.backends.sim import simulate
    from ccbench.cli.run import flow_table
    from ccbench.report import write_report
    from ccbench.scenario import load_scenario

    console = Console()
    scn = load_scenario(args.scenario)
    run = simulate(scn, seed=args.seed)
    run.save(args.out)
    console.print(flow_table(run, f"{args.scenario.name}  seed {run.meta.get('seed')}"))

    t_split, t_end, late = windows(run)
    table = before_after(run, t_split)
    who = ", ".join(late)
    t = Table(title=f"delay per message: alone (0-{fmt_time(t_split)}) and beside {who} ({fmt_time(t_split)}-{fmt_time(t_end)})",
              title_justify="left")
    for col in ("flow", "window", "msgs", *(f"p{q}" for q in PERCENTILES), "max"):
        t.add_column(col, justify="left" if col in ("flow", "window") else "right", no_wrap=True)
    span = {"before": "alone", "after": f"+ {who}"}
    for r in table.itertuples(index=False):
        t.add_row(str(r.flow), span[r.window], str(r.n),
                  *(fmt_time(getattr(r, f"p{q}_s"), unit="ms") for q in PERCENTILES), fmt_time(r.max_s, unit="ms"))
    console.print(t)
    report = write_report(args.out)
    # paths on lines of their own, never wrapped: they are for copying
    console.print(f"run saved in {args.out}", highlight=False, soft_wrap=True)
    console.print(f"report: {report}", highlight=False, soft_wrap=True)
    console.print(f"figures: ccbench plot {args.out}", highlight=False, soft_wrap=True)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
