"""Runs the wei-sync path in ns-2 (NS-2 TCP-Linux, the thesis's simulator) and measures λ with
ccbench's counting: Table 3.1's DropTail row against the receiver (an ACK per packet or
delayed ACKs) and the spread of the senders' access delays (0: every ACK clock in one phase).

    PYTHONPATH=python python scripts/wei_ns2_sync.py                   # 48 runs, ~5 min on 2 cores
    PYTHONPATH=python python scripts/wei_ns2_sync.py --algorithms reno --seeds 1,2 --out /tmp/x.csv
    PYTHONPATH=python python scripts/wei_ns2_sync.py --queues red,ared --receivers ack --spreads-ms 0 --merge

Needs ``ns`` (``apt install ns2``). The recorded result is tests/data/ns2/wei_sync_ns2.csv,
summarised in docs/REPRODUCTIONS.md ("DropTail: the ACK clock's phase").
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pandas as pd

from ccbench.studies import wei_ns2


def _csv_list(text: str, kind=str, what: str = "value") -> list:
    out = []
    for x in (x.strip() for x in text.split(",")):
        if not x:
            continue
        try:
            out.append(kind(x))
        except ValueError:
            raise ValueError(f"{what} {x!r} is not a {'whole number' if kind is int else 'number'}") from None
    if not out:
        raise ValueError(f"{what}: empty list")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--algorithms", default="reno,highspeed,scalable", help="comma list (default: %(default)s)")
    ap.add_argument("--queues", default="droptail", help="droptail, red (ns-2's defaults), ared (adaptive_ 1)")
    ap.add_argument("--receivers", default="ack,delack", help="ack = Sack1 sink, delack = Sack1/DelAck")
    ap.add_argument("--spreads-ms", default="0,1", help="access-delay spread U(0, x) ms (default: %(default)s)")
    ap.add_argument("--seeds", default="1,2,3,4")
    ap.add_argument("--flows", type=int, default=16)
    ap.add_argument("--duration", type=float, default=400.0, help="simulated seconds (default: %(default)s)")
    ap.add_argument("--warmup", type=float, default=40.0, help="seconds discarded (default: %(default)s)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", type=Path, default=Path("tests/data/ns2/wei_sync_ns2.csv"))
    ap.add_argument("--merge", action="store_true", help="keep the rows of OUT that this grid does not rerun")
    a = ap.parse_args(argv)
    try:
        if a.out.is_dir():
            raise ValueError(f"--out {str(a.out)!r} is a directory (accepted: a CSV file to write)")
        if a.flows < 1 or a.workers < 1:
            raise ValueError(f"--flows {a.flows} / --workers {a.workers}: give at least 1")
        if not 0 <= a.warmup < a.duration:
            raise ValueError(f"--warmup {a.warmup:g} s must be >= 0 and below --duration {a.duration:g} s")
        spreads = _csv_list(a.spreads_ms, float, "--spreads-ms")
        if any(x < 0 for x in spreads):
            raise ValueError(f"--spreads-ms {a.spreads_ms}: a spread is a delay, give values >= 0")
        runs = wei_ns2.grid(_csv_list(a.algorithms, what="--algorithms"), _csv_list(a.receivers, what="--receivers"),
                            spreads, _csv_list(a.seeds, int, "--seeds"), a.flows, a.duration, a.warmup,
                            _csv_list(a.queues, what="--queues"))
        for r in runs:  # fail on a bad name before any run starts
            wei_ns2.tcl(r, Path("x"))
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not wei_ns2.available():
        print("error: ns-2 is not installed (`apt install ns2`)", file=sys.stderr)
        return 2
    rows = []
    with ProcessPoolExecutor(max_workers=max(1, a.workers)) as ex:
        for k, row in enumerate(ex.map(wei_ns2.measure, runs)):
            rows.append(row)
            print(f"[{k + 1}/{len(runs)}] {row['queue']} {row['algorithm']} {row['receiver']} spread {row['spread_ms']:g} ms "
                  f"seed {row['seed']}: λ {row['sync']:.3f}, noise share of drops {row['noise_drop_share']:.2f}, "
                  f"Jain {row['jain']:.2f}", flush=True)
    df = pd.DataFrame(rows)
    if a.merge and a.out.is_file():
        old = pd.read_csv(a.out)
        key = ["queue", "algorithm", "receiver", "spread_ms", "seed", "n_flows", "duration_s"]
        rerun = set(map(tuple, df[key].itertuples(index=False)))
        old = old[[tuple(r) not in rerun for r in old[key].itertuples(index=False)]]
        df = pd.concat([old, df], ignore_index=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(a.out, index=False)
    print(df.groupby(["queue", "algorithm", "receiver", "spread_ms"], sort=False)[["sync", "noise_drop_share", "jain"]]
          .agg(["mean", "min", "max"]).round(3).to_string())
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
