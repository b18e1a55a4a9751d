"""The scheme comparison's figures (SVG files beside the tables) and its HTML report
(the house report blocks of :mod:`ccbench.report.html`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pandas as pd

from ccbench.report import html as H

from . import figures
from .run import MARKER, scheme_means, scheme_table

__all__ = ["draw_figures", "write_schemes_report", "is_schemes_dir"]

FIGURES = ("throughput_delay", "goodput_time", "rtt_fairness")


def is_schemes_dir(path: str | Path) -> bool:
    return (Path(path) / MARKER).exists()


def _goodput_series(out: Path, runs: pd.DataFrame, marker: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Scheme -> goodput over time of its first seed's run (the TCP flows)."""
    from ccbench.plots import NothingToPlot, RunPlots
    from ccbench.run import load_run

    out_series = {}
    for scheme, g in runs.groupby("scheme", sort=False):
        point = g.sort_values("seed")["point"].iloc[0]
        rd = out / "runs" / point
        if not (rd / "meta.json").exists():
            continue
        run = load_run(rd)
        names = [str(f) for f in run.flows["flow"] if str(f).split("[")[0] in marker["flows"]]
        try:
            out_series[scheme] = RunPlots(run).goodput_series(names)
        except NothingToPlot:
            continue
    return out_series


def draw_figures(out: str | Path) -> dict[str, Any]:
    """name -> figure (or the reason it is missing, a string) for a scheme directory."""
    from ccbench.plots import NothingToPlot

    out = Path(out)
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    runs, flows = scheme_table(out)
    figs: dict[str, Any] = {}
    makers = {
        "throughput_delay": lambda: figures.throughput_delay(runs),
        "goodput_time": lambda: figures.goodput_over_time(_goodput_series(out, runs, marker)),
        "rtt_fairness": lambda: figures.rtt_fairness(flows),
    }
    for name, make in makers.items():
        try:
            figs[name] = make()
        except NothingToPlot as e:
            figs[name] = str(e)
    return figs


CAPTIONS = {
    "throughput_delay": "Throughput against 95th percentile one-way delay (log, inverted: better is up and right); "
    "small points are runs, large points the scheme's mean, curves the 1-sigma covariance ellipse (as Pantheon).",
    "goodput_time": "Goodput of each TCP flow over time, one panel per scheme (first seed).",
    "rtt_fairness": "RTT fairness (flent rtt_fair): goodput of each flow against its base RTT, mean over seeds with min-max bars.",
}


def write_schemes_report(out: str | Path, target: str | Path | None = None, fmt: str = "svg", save_files: bool = True) -> Path:
    """Writes ``OUT/report.html`` (or ``target``) and, with ``save_files``, each figure as
    ``OUT/<name>.svg``; returns the report's path."""
    from ccbench.plots import save_figure

    out = Path(out)
    marker = json.loads((out / MARKER).read_text(encoding="utf-8"))
    runs, _ = scheme_table(out)
    figs = draw_figures(out)
    means = scheme_means(runs)
    facts = {"backend": marker["backend"], "schemes": ", ".join(marker["schemes"]), "seeds": ", ".join(map(str, marker["seeds"])),
             "TCP flows": ", ".join(marker["flows"]), "scenario": marker.get("scenario_source") or "(inline)"}
    body = [H.table(pd.DataFrame({"": list(facts), "value": list(facts.values())}))]
    if marker.get("skipped"):
        body.append(H.section("Skipped schemes", *[H.note(f"{s}: {why}") for s, why in marker["skipped"].items()]))
    body.append(H.section("Per scheme (mean over seeds)", H.table(means)))
    for name in FIGURES:
        f = figs.get(name)
        if isinstance(f, str) or f is None:
            body.append(H.section(name.replace("_", " "), H.note(f"not drawn: {f}")))
            continue
        if save_files:
            save_figure(f, out / f"{name}.svg")
        body.append(H.section(name.replace("_", " "), H.figure(f, name, CAPTIONS[name], fmt=fmt)))
    body.append(H.section("Per run", H.table(runs.drop(columns=["point"]))))
    body.append(H.note(
        "one-way delay = RTT percentile minus the ACK path's base delay (propagation plus one ACK's serialisation); "
        "throughput = the TCP flows' goodput summed; Jain's index over the TCP flows' goodput"
    ))
    target = Path(target) if target is not None else out / "report.html"
    target.write_text(H.page("ccbench schemes: " + ", ".join(marker["schemes"]), body,
                             subtitle=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())), encoding="utf-8")
    return target
