"""Input formats of :mod:`ccbench.netcal` and their validation.

Probe measurements (CSV or DataFrame)
-------------------------------------
One row per probe packet; one constant-rate train per distinct ``rate_bps``. Required
columns (extra columns are ignored):

==============  =====================================================================
``rate_bps``    probe rate of the packet's train, bit/s (``r_j = j · r_acc``)
``seq``         packet number within its train (integer, unique per rate)
``bytes``       application packet (write) size in bytes
``t_send_s``    *scheduled* CBR send time of the packet in seconds (the paper's ``t1``;
                use the schedule, not the time ``write()`` returned, so that blocking
                in a full socket buffer counts as delay)
``t_recv_s``    time the receiving application got the packet, seconds (``t4``); empty
                or NaN if it was never delivered
==============  =====================================================================

Both times must come from one clock (or synchronised clocks). The end-to-end delay is
``t_recv_s − t_send_s``. Rows may come in any order; per rate they are sorted by
``seq`` and then ``t_send_s`` must be non-decreasing (otherwise: "unsorted
timestamps"). Undelivered packets at the end of a train (a suffix in ``seq`` order) are
dropped as cut off by the end of the measurement; an undelivered packet followed by a
delivered one is an error, because the method assumes reliable in-order delivery
(TCP). The simulator produces the same columns.

Four-timestamp records (delay decomposition)
--------------------------------------------
Columns ``t_write`` (application write), ``t_first_tx`` (first transmission on the
wire), ``t_arrive`` (arrival of the successful copy at the receiver), ``t_deliver``
(delivery to the receiving application), seconds; optional ``rate_bps`` groups records
by probe rate. Rows with NaN ``t_deliver`` (never delivered) are dropped.

Arrival traces (delay bounds)
-----------------------------
Columns ``t_s`` (arrival time of the packet at the sender application, seconds,
non-decreasing) and ``bytes`` (positive).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .errors import NetcalError

__all__ = [
    "PROBE_COLUMNS",
    "TIMESTAMP_COLUMNS",
    "TRACE_COLUMNS",
    "read_csv",
    "validate_probe_frame",
    "trains_from_frame",
    "load_probe_csv",
    "validate_timestamp_frame",
    "load_timestamps_csv",
    "validate_trace_frame",
    "load_trace_csv",
]

PROBE_COLUMNS = ("rate_bps", "seq", "bytes", "t_send_s", "t_recv_s")
TIMESTAMP_COLUMNS = ("t_write", "t_first_tx", "t_arrive", "t_deliver")
TRACE_COLUMNS = ("t_s", "bytes")


def read_csv(path) -> pd.DataFrame:
    """Read a CSV file, turning I/O and parse failures into :class:`NetcalError`."""
    p = Path(path)
    if not p.is_file():
        raise NetcalError(f"no such file: {p}")
    try:
        # Floats must read back exactly (re-analysing a saved probe table gives the
        # same estimate): pandas >= 3 parses round-trip by default and deprecates the
        # option; older pandas needs it.
        exact = {} if int(pd.__version__.split(".")[0]) >= 3 else {"float_precision": "round_trip"}
        return pd.read_csv(p, **exact)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise NetcalError(f"cannot parse {p} as CSV: {exc}") from None


def _require(df, required, what: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise NetcalError(f"{what} must be a pandas DataFrame, got {type(df).__name__}")
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise NetcalError(
            f"{what}: missing column(s) {', '.join(missing)}; required columns are "
            f"{', '.join(required)} (found: {', '.join(map(str, df.columns)) or 'none'})"
        )
    if len(df) == 0:
        raise NetcalError(f"{what}: no rows")


def _numeric(df: pd.DataFrame, cols, what: str) -> pd.DataFrame:
    out = df.copy()
    for c in cols:
        conv = pd.to_numeric(out[c], errors="coerce")
        bad = conv.isna() & out[c].notna()
        if bad.any():
            i = bad.idxmax()
            raise NetcalError(f"{what}: column {c} has a non-numeric value {out[c][i]!r} (row {i})")
        out[c] = conv.astype(float)
    return out


def validate_probe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Check a probe table and return it cleaned: sorted by ``(rate_bps, seq)``, trailing
    undelivered packets dropped, with a ``delay_s`` column."""
    what = "probe data"
    _require(df, PROBE_COLUMNS, what)
    d = _numeric(df[list(PROBE_COLUMNS)], PROBE_COLUMNS, what)
    for c in ("rate_bps", "seq", "bytes", "t_send_s"):
        if d[c].isna().any():
            i = d[c].isna().idxmax()
            raise NetcalError(f"{what}: column {c} is empty in row {i}")
    if (d["rate_bps"] <= 0).any() or not np.isfinite(d["rate_bps"]).all():
        raise NetcalError(f"{what}: rate_bps must be positive and finite")
    if (d["bytes"] <= 0).any():
        raise NetcalError(f"{what}: bytes must be positive")
    if not np.isfinite(d["t_send_s"]).all():
        raise NetcalError(f"{what}: t_send_s must be finite")
    d = d.sort_values(["rate_bps", "seq"], kind="stable").reset_index(drop=True)
    keep = np.ones(len(d), dtype=bool)
    for rate, g in d.groupby("rate_bps", sort=True):
        seq = g["seq"].to_numpy()
        if np.any(np.diff(seq) == 0):
            k = int(np.argmax(np.diff(seq) == 0))
            raise NetcalError(f"{what}: duplicate seq {seq[k]:g} in the train at rate {rate:g} bit/s")
        ts = g["t_send_s"].to_numpy()
        if np.any(np.diff(ts) < 0):
            k = int(np.argmax(np.diff(ts) < 0)) + 1
            raise NetcalError(
                f"{what}: unsorted timestamps: t_send_s decreases at seq {seq[k]:g} of the "
                f"train at rate {rate:g} bit/s ({ts[k - 1]!r} -> {ts[k]!r}); send times must "
                "be non-decreasing in seq order"
            )
        tr = g["t_recv_s"].to_numpy()
        lost = np.isnan(tr)
        if lost.any():
            delivered = np.flatnonzero(~lost)
            last = delivered[-1] if delivered.size else -1
            inner = np.flatnonzero(lost[: last + 1])
            if inner.size:
                raise NetcalError(
                    f"{what}: packet seq {seq[inner[0]]:g} at rate {rate:g} bit/s has no t_recv_s "
                    "but later packets were delivered; the method assumes reliable in-order "
                    "delivery (only a trailing cut-off of undelivered packets is allowed)"
                )
            idx = g.index.to_numpy()[lost]
            keep[idx] = False
        neg = (tr - ts) < -1e-9
        if np.any(neg):
            k = int(np.argmax(neg))
            raise NetcalError(
                f"{what}: t_recv_s < t_send_s (negative delay) at seq {seq[k]:g} of rate "
                f"{rate:g} bit/s; are the clocks synchronised?"
            )
    d = d[keep].reset_index(drop=True)
    if len(d) == 0:
        raise NetcalError(f"{what}: no delivered packets")
    d["delay_s"] = np.maximum(d["t_recv_s"] - d["t_send_s"], 0.0)
    return d


def trains_from_frame(df: pd.DataFrame) -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """``rate_bps -> (t_send_s, delay_s)`` arrays, validated (see :func:`validate_probe_frame`)."""
    d = validate_probe_frame(df)
    return {
        float(rate): (g["t_send_s"].to_numpy(), g["delay_s"].to_numpy())
        for rate, g in d.groupby("rate_bps", sort=True)
    }


def load_probe_csv(path) -> pd.DataFrame:
    """Read and validate a probe CSV (format in the module docstring)."""
    return validate_probe_frame(read_csv(path))


def validate_timestamp_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Check four-timestamp records; drop never-delivered rows; order must be
    ``t_write ≤ t_first_tx ≤ t_arrive ≤ t_deliver`` (1 ns tolerance)."""
    what = "timestamp records"
    _require(df, TIMESTAMP_COLUMNS, what)
    extra = [c for c in ("rate_bps",) if c in df.columns]
    d = _numeric(df[list(TIMESTAMP_COLUMNS) + extra], list(TIMESTAMP_COLUMNS) + extra, what)
    d = d[d["t_deliver"].notna()].reset_index(drop=True)
    if len(d) == 0:
        raise NetcalError(f"{what}: no delivered packets")
    for c in TIMESTAMP_COLUMNS[:3]:
        if d[c].isna().any():
            raise NetcalError(f"{what}: column {c} is empty for a delivered packet (row {d[c].isna().idxmax()})")
    for a, b in zip(TIMESTAMP_COLUMNS[:-1], TIMESTAMP_COLUMNS[1:]):
        bad = (d[b] - d[a]) < -1e-9
        if bad.any():
            i = int(bad.idxmax())
            raise NetcalError(f"{what}: {b} < {a} in row {i}; timestamps must be ordered "
                              f"{' <= '.join(TIMESTAMP_COLUMNS)}")
    return d


def load_timestamps_csv(path) -> pd.DataFrame:
    return validate_timestamp_frame(read_csv(path))


def validate_trace_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Check an arrival trace (``t_s`` non-decreasing, ``bytes`` positive)."""
    what = "arrival trace"
    _require(df, TRACE_COLUMNS, what)
    d = _numeric(df[list(TRACE_COLUMNS)], TRACE_COLUMNS, what)
    if d.isna().any().any():
        raise NetcalError(f"{what}: empty values in t_s or bytes")
    t = d["t_s"].to_numpy()
    if np.any(np.diff(t) < 0):
        k = int(np.argmax(np.diff(t) < 0)) + 1
        raise NetcalError(f"{what}: unsorted timestamps: t_s decreases at row {k} ({t[k - 1]!r} -> {t[k]!r})")
    if (d["bytes"] <= 0).any():
        raise NetcalError(f"{what}: bytes must be positive")
    return d.reset_index(drop=True)


def load_trace_csv(path) -> pd.DataFrame:
    return validate_trace_frame(read_csv(path))
