"""The analytical models beside the measured flows, in the HTML report of a run or a sweep.

One table per report: for every flow the measured row (the run, or the median over a
sweep point's seeds) and one row per model (:func:`ccbench.predict.predict` with p,
RTT and RTO taken from that measurement where the path has no random-loss model),
with the model's difference to the measurement on the metric the model predicts and
whether that lies within the model's known accuracy (:mod:`ccbench.predict.accuracy`).
Models that do not apply say why. A report never fails because of this section: a
scenario the models cannot read gets a note instead.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from . import html as H

__all__ = ["models_table", "run_models_sections", "sweep_models_sections"]

SHOWN = ("goodput_bps", "delay_p50_s", "delay_p95_s", "delay_p99_s", "completion_s")
_NOTE = ("models fed with p, RTT and RTO measured in this run where the path has no random-loss model "
         "(loss_source); 'vs measured' compares the metric the model predicts (goodput, mean delay for Brosh, "
         "completion time for Cardwell/Weigle); 'in band': within the model's known accuracy "
         "(ccbench.predict.accuracy)")


def models_table(measured: pd.DataFrame, pred: pd.DataFrame, way: str = "measured") -> pd.DataFrame:
    """Measured rows and model rows per flow. ``measured`` has ``Run.flows`` columns
    (plus ``delay_mean_s`` if known)."""
    from ccbench.predict.accuracy import KNOWN_ACCURACY, in_band

    m = measured.set_index("flow")
    rows: list[dict[str, Any]] = []
    for flow in list(dict.fromkeys(pred["flow"])):
        meas = m.loc[flow] if flow in m.index else None
        base = {"flow": flow, "way": way}
        if meas is not None:
            rows.append({**base, **{c: _f(meas.get(c)) for c in SHOWN}, "loss_rate": _f(meas.get("loss_rate"))})
        for r in pred[pred["flow"] == flow].itertuples(index=False):
            row = {"flow": flow, "way": f"model: {r.model}", **{c: _f(getattr(r, c)) for c in SHOWN},
                   "loss_rate": _f(r.loss_rate), "loss_source": r.loss_source}
            acc = KNOWN_ACCURACY.get(r.model)
            if r.valid and acc is not None and meas is not None:
                ref = _f(meas.get(acc.metric))
                val = _f(getattr(r, acc.metric))
                if math.isfinite(ref) and ref != 0 and math.isfinite(val):
                    row["vs measured"] = f"{(val - ref) / ref * 100:+.1f}% ({acc.metric})"
                    ok = in_band(r.model, val / ref)
                    row["in band"] = "" if ok is None else ("yes" if ok else "no")
            row["note"] = r.note if r.valid else f"not applicable: {r.why_not}"
            rows.append(row)
    cols = ["flow", "way", *SHOWN, "loss_rate", "loss_source", "vs measured", "in band", "note"]
    out = pd.DataFrame(rows)
    for c in cols:
        if c not in out.columns:
            out[c] = ""
    return out[cols]


def _reasons(pred: pd.DataFrame) -> list[str]:
    """The distinct reasons the models gave for not applying, flow by flow."""
    return list(dict.fromkeys(f"{r.flow}: {r.why_not}" for r in pred.itertuples(index=False) if not r.valid))


def _f(v) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _row_class(r) -> str:
    return "" if str(r["way"]).startswith("model") else "measured"


def run_models_sections(run) -> list[str]:
    """The "Models" section of a run report."""
    try:
        from ccbench.predict import predict
        from ccbench.scenario import Scenario

        data = run.meta.get("scenario")
        if not data:
            return [H.section("Models", H.note("no scenario in the run's metadata: no model rows"), anchor="models")]
        pred = predict(Scenario.from_dict(data), run=run)
        if not pred["valid"].any():
            return [H.section("Models", H.note(f"no model applies to any flow ({'; '.join(_reasons(pred))})"),
                              anchor="models")]
        flows = run.flows.copy()
        flows["flow"] = flows["flow"].astype(str)
        tab = models_table(flows, pred, way=f"measured ({run.meta.get('backend', 'run')})")
    except Exception as e:  # noqa: BLE001 - an older or foreign run: the report still renders
        return [H.section("Models", H.note(f"models not available for this run: {e}"), anchor="models")]
    return [H.section("Models beside the run", H.table(tab, max_rows=400, row_class=_row_class), H.note(_NOTE),
                      anchor="models")]


def sweep_models_sections(store, meta: dict[str, Any], ok: pd.DataFrame, max_points: int = 20) -> list[str]:
    """The "Models" section of a sweep report: per parameter combination (median over
    seeds) the measured rows and the models fed with those medians."""
    try:
        from ccbench.predict import measured_from_rows, predict
        from ccbench.sweep.spec import load_sweep

        spec_path = store.root / "sweep.toml"
        if not spec_path.exists():
            return [H.section("Models", H.note("no sweep.toml in the sweep directory: no model rows"), anchor="models")]
        spec = load_sweep(spec_path)
        groups: dict[str, list[dict]] = {}
        values: dict[str, dict] = {}
        for rec in store.records():
            if rec.get("status") != "ok":
                continue
            key = json.dumps(rec.get("values", {}), sort_keys=True, default=str)
            groups.setdefault(key, []).extend(rec.get("rows") or rec.get("flows") or [])
            values[key] = rec.get("values", {})
        tables = []
        why_not: dict[str, None] = {}
        for key in list(groups)[:max_points]:
            rows = groups[key]
            pred = predict(spec.scenario_for(values[key]), measured=measured_from_rows(rows),
                           loss_from=meta.get("backend", "sim"))
            if not pred["valid"].any():  # nothing to set beside the measurement: one line below, not a table
                why_not.update(dict.fromkeys(_reasons(pred)))
                continue
            measured = pd.DataFrame(rows).groupby("flow", sort=False).median(numeric_only=True).reset_index()
            tab = models_table(measured, pred, way="measured (median over seeds)")
            label = ", ".join(f"{k} = {v}" for k, v in values[key].items()) or "(no parameters)"
            tables += [f"<h3>{H.esc(label)}</h3>", H.table(tab, max_rows=200, row_class=_row_class)]
        if len(groups) > max_points:
            tables.append(H.note(f"first {max_points} of {len(groups)} parameter combinations"))
        if not groups:
            tables.append(H.note("no finished point: no model rows"))
        elif why_not:
            what = "no model applies to any flow" if not tables else "other combinations: no model applies"
            tables.append(H.note(f"{what} ({'; '.join(why_not)})"))
    except Exception as e:  # noqa: BLE001 - the sweep report still renders
        return [H.section("Models", H.note(f"models not available for this sweep: {e}"), anchor="models")]
    return [H.section("Models beside the measurements", *tables, H.note(_NOTE), anchor="models")]
