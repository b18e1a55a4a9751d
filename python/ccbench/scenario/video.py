"""Video traces: a CSV loader and a small synthetic H.264-like VBR generator.

Trace CSV: columns ``time_s`` (seconds from the flow's start, non-decreasing) and
``size_bytes`` (one message per frame).

The generator is deliberately simple and documented, not a codec model: frames at a
fixed rate ``fps`` follow a group-of-pictures pattern (``IBBPBBPBBPBB``); frame types
get mean sizes in the ratio I : P : B = 5 : 2 : 1 (a common rule of thumb for H.264
at moderate quality), scaled so the long-run mean rate is ``rate_bps``; each frame's
size is lognormal around its type's mean with the given ``sigma`` (mean preserved).
"""

from __future__ import annotations

import numpy as np

from .errors import fail

__all__ = ["load_trace_csv", "synthetic_vbr", "FRAME_WEIGHTS"]

FRAME_WEIGHTS = {"I": 5.0, "P": 2.0, "B": 1.0}


# A trace is one row per message: 256 MiB of CSV is ~10^7 messages, more than a run can use.
MAX_TRACE_BYTES = 256 * 2**20


def load_trace_csv(path: str) -> tuple[list[int], list[int]]:
    """(times in ns, sizes in bytes) from a trace CSV; one-line errors name the problem."""
    import pandas as pd

    from .limits import FileProblem, regular_file

    try:
        regular_file(path, MAX_TRACE_BYTES)  # before pandas: reading /dev/zero never ends
        df = pd.read_csv(path)
    except FileProblem as e:
        raise fail(f"the trace file {e}", at=("file",), value=path) from None
    except (OSError, UnicodeDecodeError, ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise fail(f"is not a readable CSV ({first}) (accepted: a CSV with columns time_s and size_bytes)", at=("file",), value=path) from None
    missing = [c for c in ("time_s", "size_bytes") if c not in df.columns]
    if missing:
        raise fail(f"lacks column(s) {', '.join(missing)} (accepted: a CSV with time_s and size_bytes)", at=("file",), value=path)
    try:
        t = df["time_s"].to_numpy(dtype=float)
        b = df["size_bytes"].to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise fail("has a value that is not a number (accepted: numbers in time_s and size_bytes)", at=("file",), value=path) from None
    if len(t) == 0 or np.any(~np.isfinite(t)) or np.any(np.diff(t) < 0) or t[0] < 0:
        raise fail("time_s must be finite, start at >= 0 and never decrease", at=("file",), value=path)
    # 2^63 ns is 292 years: beyond it a time does not fit the simulator's clock
    if t[-1] >= 2.0**63 / 1e9:
        raise fail("time_s is too large (accepted: at most 9.2e9 s)", at=("file",), value=path)
    if np.any(~np.isfinite(b)) or np.any(b < 1) or np.any(b != np.round(b)) or np.any(b > 2**32 - 1):
        raise fail("size_bytes must be whole numbers from 1 to 4294967295", at=("file",), value=path)
    return [int(round(x * 1e9)) for x in t], [int(x) for x in b]


def synthetic_vbr(rate_bps: float, fps: float, gop: str, duration_ns: int, sigma: float, seed: int) -> tuple[list[int], list[int]]:
    """Frame times (ns) and sizes (bytes) of a synthetic VBR stream (module docstring)."""
    rng = np.random.default_rng(seed)
    n = max(1, int(duration_ns * 1e-9 * fps))
    kinds = np.array([gop[i % len(gop)] for i in range(n)])
    weights = np.array([FRAME_WEIGHTS[k] for k in kinds])
    mean_frame = rate_bps / 8.0 / fps
    scale = mean_frame * len(gop) / sum(FRAME_WEIGHTS[k] for k in gop)
    # Lognormal with mean 1: mu = -sigma^2 / 2.
    noise = rng.lognormal(-sigma * sigma / 2.0, sigma, n) if sigma > 0 else np.ones(n)
    sizes = np.maximum(1, np.round(weights * scale * noise)).astype(int)
    times = np.round(np.arange(n) * 1e9 / fps).astype(int)
    return times.tolist(), sizes.tolist()
