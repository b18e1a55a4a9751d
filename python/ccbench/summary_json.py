"""The JSON document ``ccbench run --format json`` prints (as scripts use ``iperf3 -J``).

One schema whatever the number of seeds, so a script needs no branch:

- ``schema``: ``"ccbench.run/1"``; a key is only ever added under the same name,
  a change of meaning gets a new number;
- ``meta``: ``scenario`` (file stem), ``scenario_file``, ``backend`` (``sim`` or
  ``emu``), ``seeds`` (list), ``duration_s``, ``ccbench_version``, ``saved_to``
  (directory or null);
- ``runs``: one object per seed in order: ``seed``, ``flows`` (one object per flow
  with every column of the ``flows`` table, NaN as null), ``pcap`` (captures
  written, possibly empty);
- ``summary``: one object per flow over the seeds: ``flow``, ``transport``, ``cc``,
  ``n`` and for each metric of :data:`ccbench.repetitions.METRICS` its ``_mean`` and
  ``_ci`` (half-width of the 95 % t-interval; null with one seed).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

SCHEMA = "ccbench.run/1"

__all__ = ["SCHEMA", "run_document", "plain"]


def plain(value: Any) -> Any:
    """A JSON-ready value: numpy scalars as Python numbers, NaN and infinities as
    None (JSON has no NaN; ``json.loads`` of Python's ``NaN`` token fails elsewhere)."""
    if hasattr(value, "item") and not isinstance(value, (list, dict, str)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _records(frame) -> list[dict]:
    cols = [str(c) for c in frame.columns]
    return [{c: plain(v) for c, v in zip(cols, row)} for row in frame.astype(object).itertuples(index=False, name=None)]


def run_document(
    runs: Sequence,
    scenario_file: str | Path,
    *,
    summary=None,
    saved_to: str | Path | None = None,
) -> dict:
    """The document for ``runs`` (one :class:`ccbench.Run` per seed) of one scenario.
    ``summary`` is :func:`ccbench.repetitions.seed_summary` of them (computed when
    not given)."""
    from ccbench import __version__
    from ccbench.repetitions import seed_summary

    if summary is None:
        summary = seed_summary(runs)
    first = runs[0].meta
    config = first.get("sim_config", {})
    return {
        "schema": SCHEMA,
        "meta": {
            "scenario": Path(scenario_file).stem,
            "scenario_file": str(scenario_file),
            "backend": first.get("backend"),
            "seeds": [int(r.meta["seed"]) for r in runs],
            "duration_s": config["duration_ns"] / 1e9 if "duration_ns" in config else None,
            "ccbench_version": __version__,
            "saved_to": None if saved_to is None else str(saved_to),
        },
        "runs": [
            {"seed": int(r.meta["seed"]), "flows": _records(r.flows), "pcap": [dict(c) for c in r.meta.get("pcap", [])]}
            for r in runs
        ],
        "summary": _records(summary),
    }
