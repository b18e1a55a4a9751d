"""Readers of the ``ccemu`` output files and the message-timestamp logic.

Record layouts (little-endian) match ``crates/ccemu/src/{main,probe}.rs``.
All times in the files are CLOCK_MONOTONIC nanoseconds; callers subtract the run origin.
"""

from __future__ import annotations

from bisect import bisect_right
from pathlib import Path

import numpy as np

QUEUE = np.dtype([("t", "<u8"), ("bytes", "<u8"), ("link", "<u4"), ("pkts", "<u4")])
DROPS = np.dtype([("t", "<u8"), ("seq", "<u8"), ("link", "<u4"), ("flow", "<i4"), ("kind", "u1"), ("reason", "u1"), ("pad", "V6")])
TRACE = np.dtype([("t", "<u8"), ("start", "<u8"), ("end", "<u8"), ("flow", "<u4"), ("kind", "<u4")])
SEND = np.dtype([("msg", "<u8"), ("t_write", "<u8"), ("offset", "<u8"), ("bytes", "<u4"), ("pad", "<u4")])
TCP_RECV = np.dtype([("t", "<u8"), ("total", "<u8")])
UDP_RECV = np.dtype([("t", "<u8"), ("msg", "<u8")])
INFO = np.dtype(
    [
        ("t", "<u8"), ("pacing_rate", "<u8"), ("delivered", "<u8"), ("bytes_retrans", "<u8"),
        ("cwnd", "<u4"), ("ssthresh", "<u4"), ("srtt_us", "<u4"), ("rttvar_us", "<u4"), ("rto_us", "<u4"),
        ("inflight", "<u4"), ("sacked", "<u4"), ("lost", "<u4"), ("retrans", "<u4"), ("min_rtt_us", "<u4"),
        ("ca_state", "u1"), ("pad", "V7"),
    ]
)
assert INFO.itemsize == 80 and DROPS.itemsize == 32 and TRACE.itemsize == 32 and SEND.itemsize == 32


def read(path: Path, dtype: np.dtype) -> np.ndarray:
    """Reads a record file (empty array if missing; a torn last record is dropped)."""
    try:
        raw = Path(path).read_bytes()
    except OSError:
        return np.zeros(0, dtype=dtype)
    n = len(raw) // dtype.itemsize
    return np.frombuffer(raw[: n * dtype.itemsize], dtype=dtype)


def first_times(starts: np.ndarray, ends: np.ndarray, ts: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Byte ranges ``[start, end)`` seen at times ``ts`` -> the time each byte was *first*
    seen, as disjoint segments sorted by start (segment starts, ends, times)."""
    order = np.argsort(ts, kind="stable")
    S: list[int] = []
    E: list[int] = []
    T: list[int] = []
    for i in order:
        s, e, t = int(starts[i]), int(ends[i]), int(ts[i])
        if e <= s:
            continue
        if not S or s >= E[-1]:  # the common case: new data past everything seen
            S.append(s), E.append(e), T.append(t)
            continue
        k = max(bisect_right(S, s) - 1, 0)
        cur = s
        new: list[tuple[int, int]] = []
        while cur < e:
            if k < len(S) and S[k] <= cur < E[k]:
                cur = E[k]
                k += 1
            elif k < len(S) and S[k] <= cur:
                k += 1
            else:
                nxt = S[k] if k < len(S) else e
                hi = min(e, nxt)
                if hi > cur:
                    new.append((cur, hi))
                cur = max(hi, cur)
        for a, b in new:
            j = bisect_right(S, a)
            S.insert(j, a), E.insert(j, b), T.insert(j, t)
    return np.asarray(S, dtype=np.int64), np.asarray(E, dtype=np.int64), np.asarray(T, dtype=np.int64)


def byte_time(S: np.ndarray, E: np.ndarray, T: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Time byte ``x`` was first seen (NaN if never)."""
    out = np.full(len(x), np.nan)
    if len(S) == 0 or len(x) == 0:
        return out
    k = np.searchsorted(S, x, side="right") - 1
    ok = (k >= 0) & (E[np.clip(k, 0, None)] > x)
    out[ok] = T[k[ok]]
    return out


def range_time(S: np.ndarray, E: np.ndarray, T: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Time every byte of ``[a, b)`` had been seen (max over the bytes; NaN if a byte
    never was)."""
    out = np.full(len(a), np.nan)
    if len(S) == 0:
        return out
    i0 = np.searchsorted(S, a, side="right") - 1
    i1 = np.searchsorted(S, b - 1, side="right") - 1
    for m in range(len(a)):
        lo, hi = i0[m], i1[m]
        if lo < 0 or hi < lo:
            continue
        # covered without gaps?
        if S[lo] > a[m] or E[hi] < b[m]:
            continue
        if hi > lo and np.any(E[lo:hi] != S[lo + 1 : hi + 1]):
            continue
        out[m] = T[lo : hi + 1].max()
    return out


def transitions_into(states: np.ndarray, code: int) -> int:
    """Number of entries into state ``code`` in a sampled state sequence."""
    if len(states) == 0:
        return 0
    s = np.asarray(states)
    prev = np.concatenate([[-1], s[:-1]])
    return int(np.sum((s == code) & (prev != code)))
