#!/usr/bin/env python3
"""Writes the synthetic Mahimahi link traces in examples/traces/ (no downloads).

A Mahimahi trace has one integer millisecond per line, each a delivery opportunity for
one 1500-byte packet; the file repeats with its last timestamp as period. So a trace
of rate R bit/s has R / 12000 lines per second.

    python scripts/make_traces.py [--out examples/traces] [--seed 17]

- ``constant-12mbit.down``: one opportunity every millisecond for 1 s (12 Mbit/s).
- ``stepped.down``: 12, 3, 24 and 6 Mbit/s for 2 s each (period 8 s).
- ``cellular.down`` / ``cellular.up``: a Markov-modulated Poisson process, the
  cellular-like shape of the Sprout/Pantheon traces: a four-state chain (rates below)
  holds each state for an exponential time (mean 400 ms) and jumps to a neighbouring
  state; within a state, opportunities arrive as a Poisson process of the state's rate
  (times floored to the millisecond). 20 s, seeded, so the files are reproducible.

Only the standard library is used (``random.Random`` with an integer seed gives the
same stream on every platform and Python version).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

OPPORTUNITY_BITS = 1500 * 8
#: Cellular states (Mbit/s): a fade, a poor, a fair and a good channel.
CELLULAR_DOWN_MBIT = (0.5, 3.0, 9.0, 20.0)
CELLULAR_UP_MBIT = (0.25, 1.0, 3.0, 6.0)
MEAN_HOLD_S = 0.4


def constant(rate_bps: float, period_ms: int) -> list[int]:
    """Evenly spaced opportunities at ``rate_bps`` over ``period_ms``."""
    n = round(rate_bps * period_ms / 1000 / OPPORTUNITY_BITS)
    return [((k + 1) * period_ms) // n for k in range(n)]


def stepped(levels_mbit: list[float], step_ms: int) -> list[int]:
    out: list[int] = []
    for i, mbit in enumerate(levels_mbit):
        out += [i * step_ms + t for t in constant(mbit * 1e6, step_ms)]
    return out


def mmpp(rates_mbit: tuple[float, ...], duration_s: float, seed: int) -> list[int]:
    """Markov-modulated Poisson opportunities, floored to ms, ending at the period."""
    rng = random.Random(seed)
    state = len(rates_mbit) // 2
    t, out = 0.0, []
    while t < duration_s:
        end = min(duration_s, t + rng.expovariate(1.0 / MEAN_HOLD_S))
        lam = rates_mbit[state] * 1e6 / OPPORTUNITY_BITS
        t = t + rng.expovariate(lam)
        while t < end:
            out.append(int(t * 1000))
            t += rng.expovariate(lam)
        t = end
        # a birth-death chain: the channel drifts between neighbouring states
        state = min(len(rates_mbit) - 1, max(0, state + rng.choice((-1, 1))))
    period = int(duration_s * 1000)
    return [ms for ms in out if ms < period] + [period]


def write(path: Path, ms: list[int]) -> None:
    path.write_text("".join(f"{m}\n" for m in ms), encoding="ascii")
    mean = len(ms) * OPPORTUNITY_BITS / (ms[-1] / 1000)
    print(f"{path}: {len(ms)} opportunities, period {ms[-1]} ms, mean {mean / 1e6:.2f} Mbit/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "examples" / "traces")
    ap.add_argument("--seed", type=int, default=17)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    write(a.out / "constant-12mbit.down", constant(12e6, 1000))
    write(a.out / "stepped.down", stepped([12, 3, 24, 6], 2000))
    write(a.out / "cellular.down", mmpp(CELLULAR_DOWN_MBIT, 20.0, a.seed))
    write(a.out / "cellular.up", mmpp(CELLULAR_UP_MBIT, 20.0, a.seed + 1))


if __name__ == "__main__":
    main()
