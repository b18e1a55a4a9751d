"""Running a scenario once per congestion control and seed (Pantheon-style scheme
comparison) on the sweep machinery, and the per-run table.

Every TCP flow of the scenario gets the scheme's ``cc``; the comparison is a sweep
whose one axis zips ``flows.<name>.transport.cc`` of all TCP flows (so the points are
resumable, run in parallel with ``jobs`` and land in the sweep store), plus a file
``schemes.json`` that marks the directory as a scheme comparison.

The per-run table (``schemes.parquet`` / ``schemes.csv``), one row per (scheme, seed):

* ``throughput_bps``: the TCP flows' goodput summed (Pantheon's "average throughput"
  of a run is the receiver's delivered bytes over the run);
* ``owd_p95_s``: 95th percentile one-way delay. Both backends report each flow's RTT
  percentiles; a data packet's one-way delay is its RTT sample minus the reverse
  path's base delay (propagation plus one ACK's serialisation), which holds when the
  ACK path has no queue (true of the dumbbells this command is for: the ACKs travel
  the uncongested direction). Over several flows: the bytes-delivered weighted mean
  of the flows' values;
* ``loss_rate``: data packets lost over sent, summed over the TCP flows;
* ``jain``: Jain's fairness index of the TCP flows' goodput,
  (sum x)^2 / (n sum x^2) (Jain, Chiu, Hawe, DEC-TR-301 1984, eq. 1).

The per-flow table (``schemes_flows.parquet``) keeps each TCP flow's goodput and base
RTT for the RTT-fairness figure (flent's ``rtt_fair`` tests).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import pandas as pd

from ccbench.sweep.spec import SweepError, SweepSpec

__all__ = ["SchemesResult", "run_schemes", "scheme_table", "jain_index", "parse_cc_list", "MARKER"]

#: The file that marks a sweep directory as a scheme comparison.
MARKER = "schemes.json"
RUN_COLUMNS = ("scheme", "seed", "point", "throughput_bps", "owd_p95_s", "loss_rate", "jain", "flows")


class SchemesError(SweepError):
    """A bad ``--cc`` list, scenario or backend for a scheme comparison."""


@dataclass
class SchemesResult:
    out: Path
    schemes: list[str]
    skipped: dict[str, str] = field(default_factory=dict)  # scheme -> why not run
    runs: Optional[pd.DataFrame] = None
    flows: Optional[pd.DataFrame] = None
    errors: dict[str, str] = field(default_factory=dict)
    wall_s: float = 0.0


def jain_index(x) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2): 1 for equal shares, 1/n when one
    of n takes everything; NaN for no flows or all zero."""
    a = np.asarray(list(x), dtype=float)
    a = a[np.isfinite(a)]
    if a.size == 0 or not np.any(a > 0):
        return float("nan")
    return float(a.sum() ** 2 / (a.size * np.square(a).sum()))


def parse_cc_list(text: str) -> list[str]:
    """``"reno, cubic,bbr"`` -> ``["reno", "cubic", "bbr"]``; repeats and blanks refused."""
    names = [t.strip() for t in str(text).split(",")]
    if not names or any(not n for n in names):
        raise SchemesError(f"--cc: {text!r} is not a comma-separated list of names (accepted: e.g. reno,cubic,bbr)")
    dup = [n for i, n in enumerate(names) if n in names[:i]]
    if dup:
        raise SchemesError(f"--cc: {dup[0]!r} is listed twice (accepted: distinct names)")
    return names


def _tcp_flows(scenario) -> list[str]:
    from ccbench.scenario.transport import Tcp

    return [f.name for f in scenario.flows if isinstance(f.transport, Tcp)]


def _check_schemes(names: list[str], backend: str) -> tuple[list[str], dict[str, str]]:
    """(schemes to run, skipped scheme -> reason). Unknown simulator names are errors;
    on the emulator, names the kernel lacks are skipped with a note."""
    from ccbench.cli.cc_names import available_cc

    sim = set(available_cc())
    if backend == "sim":
        bad = [n for n in names if n not in sim]
        if bad:
            raise SchemesError(f"--cc: {bad[0]!r} is not a congestion control of the simulator (accepted: {', '.join(sorted(sim))})")
        return names, {}
    from ccbench.emu.system import available_cc as kernel_cc

    have = set(kernel_cc())
    skipped = {n: "the kernel does not offer it (tcp_available_congestion_control; try modprobe tcp_" + n + ")" for n in names if n not in have}
    run = [n for n in names if n in have]
    if not run:
        raise SchemesError(f"--cc: the kernel offers none of {', '.join(names)} (available: {', '.join(sorted(have)) or 'none'})")
    return run, skipped


def build_spec(scenario, schemes: list[str], seeds: list[int], backend: str, source: Optional[str] = None) -> SweepSpec:
    flows = _tcp_flows(scenario)
    if not flows:
        raise SchemesError("scenario: has no TCP flow to compare schemes on (accepted: at least one flow with transport.kind = \"tcp\")")
    zipped = {f"flows.{name}.transport.cc": list(schemes) for name in flows}
    return SweepSpec(scenario=scenario, zip=zipped, seeds=list(seeds), backend=backend, source=source)


def run_schemes(
    scenario,
    schemes: list[str],
    out: str | Path,
    seeds: Optional[int | list[int]] = None,
    backend: str = "sim",
    jobs: Optional[int] = None,
    progress: bool = True,
    console=None,
) -> SchemesResult:
    """Runs ``scenario`` (a path or a :class:`~ccbench.scenario.Scenario`) once per scheme
    and seed into ``out``; writes the tables (see the module doc) and returns them."""
    import time

    from ccbench.scenario import Scenario, load_scenario
    from ccbench.sweep import run_sweep

    t0 = time.perf_counter()
    source = None
    if not isinstance(scenario, Scenario):
        source = str(scenario)
        scenario = load_scenario(scenario)
    if backend not in ("sim", "emu"):
        raise SchemesError(f"--backend: {backend!r} is not accepted (accepted: sim, emu)")
    if seeds is None:
        seed_list = scenario.seed_list()
    elif isinstance(seeds, int):
        if seeds < 1:
            raise SchemesError(f"--seeds: {seeds} is not accepted (accepted: a count >= 1)")
        seed_list = [scenario.run.seed + i for i in range(seeds)]
    else:
        seed_list = list(seeds)
    run_names, skipped = _check_schemes(list(schemes), backend)
    spec = build_spec(scenario, run_names, seed_list, backend, source)
    out = Path(out)
    res = run_sweep(spec, out, jobs=jobs, progress=progress, console=console)
    (out / MARKER).write_text(
        json.dumps({"schemes": run_names, "skipped": skipped, "seeds": seed_list, "backend": backend,
                    "flows": _tcp_flows(scenario), "scenario_source": source}, indent=1),
        encoding="utf-8",
    )
    runs, flows = scheme_table(out)
    runs.to_parquet(out / "schemes.parquet", index=False)
    runs.to_csv(out / "schemes.csv", index=False)
    flows.to_parquet(out / "schemes_flows.parquet", index=False)
    return SchemesResult(out=out, schemes=run_names, skipped=skipped, runs=runs, flows=flows,
                         errors=dict(res.errors), wall_s=time.perf_counter() - t0)


def _reverse_base_s(scenario) -> dict[str, float]:
    """Base delay of each flow's ACK path (propagation + one ACK's serialisation)."""
    from ccbench.predict.inputs import flow_inputs

    return {fi.flow: fi.base_rtt_s - fi.one_way_s for fi in flow_inputs(scenario)}


def scheme_table(out: str | Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-run table, per-flow table) of a scheme-comparison directory."""
    from ccbench.scenario import Scenario
    from ccbench.sweep.store import SweepStore

    store = SweepStore(out)
    meta = store.read_meta()
    marker = json.loads((Path(out) / MARKER).read_text(encoding="utf-8"))
    if meta is None:
        raise SchemesError(f"{out}: is not a scheme comparison (no sweep.json)")
    scenario = Scenario.from_dict(meta["scenario"])
    rev = _reverse_base_s(scenario)
    base_rtt = {}
    from ccbench.predict.inputs import flow_inputs

    for fi in flow_inputs(scenario):
        base_rtt[fi.flow] = fi.base_rtt_s
    users = marker["flows"]
    key = f"flows.{users[0]}.transport.cc"
    summ = store.summary()
    ok = summ[summ["status"] == "ok"].copy()
    ok = ok[ok[key].isin(marker["schemes"])]
    # resolved flow names of the TCP flows: "tcp" or "tcp[3]" of a count flow
    tcp_names = {rf.name for rf in scenario.resolved_flows if rf.flow.name in users}
    ok = ok[ok["flow"].astype(str).isin(tcp_names)]
    run_rows, flow_rows = [], []
    for (scheme, seed, point), g in ok.groupby([key, "seed", "point"], sort=False):
        gp = g["goodput_bps"].astype(float)
        owd = g["rtt_p95_s"].astype(float) - g["flow"].map(rev).astype(float)
        w = g["bytes_delivered"].astype(float)
        fin = owd.notna() & (w > 0)
        owd_run = float(np.average(owd[fin], weights=w[fin])) if fin.any() else float("nan")
        sent = (g["loss_rate"].astype(float) * g["bytes_sent"].astype(float)).sum()
        loss = float(sent / g["bytes_sent"].astype(float).sum()) if g["bytes_sent"].sum() > 0 else float("nan")
        run_rows.append({"scheme": scheme, "seed": int(seed), "point": point, "throughput_bps": float(gp.sum()),
                         "owd_p95_s": owd_run, "loss_rate": loss, "jain": jain_index(gp), "flows": int(len(g))})
        for _, r in g.iterrows():
            flow_rows.append({"scheme": scheme, "seed": int(seed), "point": point, "flow": str(r["flow"]),
                              "base_rtt_s": base_rtt.get(str(r["flow"]), float("nan")),
                              "goodput_bps": float(r["goodput_bps"]), "loss_rate": float(r["loss_rate"]),
                              "owd_p95_s": float(r["rtt_p95_s"]) - rev.get(str(r["flow"]), float("nan"))})
    order = {s: i for i, s in enumerate(marker["schemes"])}
    runs = pd.DataFrame(run_rows, columns=list(RUN_COLUMNS))
    runs = runs.sort_values(["scheme", "seed"], key=lambda c: c.map(order) if c.name == "scheme" else c, kind="stable").reset_index(drop=True)
    flows = pd.DataFrame(flow_rows, columns=["scheme", "seed", "point", "flow", "base_rtt_s", "goodput_bps", "loss_rate", "owd_p95_s"])
    return runs, flows


def scheme_means(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over the seeds per scheme, in the order the schemes were given."""
    order = list(dict.fromkeys(runs["scheme"]))
    m = runs.groupby("scheme", sort=False)[["throughput_bps", "owd_p95_s", "loss_rate", "jain"]].mean()
    m["runs"] = runs.groupby("scheme", sort=False).size()
    return m.reindex(order).reset_index()
