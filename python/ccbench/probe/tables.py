"""The ``ccprobe`` client's per-packet records and the Run tables made from them (the
package doc says what each table holds)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from ccbench.run import CA_STATES, Run, delay_stats, versions

FLOW = "probe"


def read_records(path: str | Path) -> pd.DataFrame:
    """The client's per-packet records (``.csv`` or ``.jsonl``): ``seq, t_send_s, lost,
    rtt_sample_s, rtt_est_s, owd_s`` (NaN where unknown)."""
    p = Path(path)
    if p.suffix == ".csv":
        df = pd.read_csv(p)
    else:
        df = pd.read_json(p, lines=True)
    df["lost"] = df["lost"].astype(bool)
    for c in ("t_send_s", "rtt_sample_s", "rtt_est_s", "owd_s"):
        df[c] = pd.to_numeric(df[c], errors="coerce").astype(float)
    df["seq"] = df["seq"].astype(np.int64)
    return df


def records_to_run(records: pd.DataFrame, summary: Mapping[str, Any]) -> Run:
    """A :class:`Run` from the client's records and summary (see the module doc)."""
    r = records.sort_values("seq").reset_index(drop=True)
    n = len(r)
    size = int(summary.get("size_bytes", 48))
    t = r["t_send_s"].to_numpy(dtype=float)
    lost = r["lost"].to_numpy(dtype=bool)
    owd = r["owd_s"].to_numpy(dtype=float)
    owd_ok = owd[~lost & np.isfinite(owd)]
    clocks_offset = bool(owd_ok.size and owd_ok.min() < 0)
    arrive = np.where(lost | clocks_offset, np.nan, t + owd)
    packets = pd.DataFrame({
        "flow": pd.Categorical([FLOW] * n, categories=[FLOW]),
        "msg": r["seq"].to_numpy(dtype=np.int64),
        "bytes": np.full(n, size, dtype=np.int64),
        "t_write": t,
        "t_first_tx": t,
        "t_arrive": arrive,
        "t_deliver": arrive.copy(),
        "lost": lost,
    })
    drops = pd.DataFrame({
        "link": pd.Categorical(["path"] * int(lost.sum()), categories=["path"]),
        "t": t[lost],
        "flow": pd.Categorical([FLOW] * int(lost.sum()), categories=[FLOW]),
        "seq": r["seq"].to_numpy(dtype=np.int64)[lost],
        "kind": pd.Categorical(["drop"] * int(lost.sum()), categories=["drop", "mark"]),
        "reason": pd.Categorical(["path"] * int(lost.sum()), categories=["path"]),
    })
    samples = r["rtt_sample_s"].to_numpy(dtype=float)
    samples = samples[np.isfinite(samples)]
    rtt_min = float(samples.min()) if samples.size else math.nan
    n_lost = int(lost.sum())
    duration = float(t[-1] - t[0]) if n > 1 else math.nan
    delivered = (n - n_lost) * size
    loss_events = 0
    if n_lost and math.isfinite(rtt_min) and rtt_min > 0:
        from ccbench.analysis import loss_events as _loss_events

        loss_events = len(_loss_events(drops, rtt_min))
    flows = pd.DataFrame([{
        "flow": FLOW, "transport": "udp", "cc": "none",
        "bytes_sent": n * size, "bytes_delivered": delivered,
        "goodput_bps": delivered * 8.0 / duration if duration and duration > 0 else math.nan,
        "retrans_bytes": 0, "loss_events": loss_events, "timeouts": 0, "fast_recoveries": 0,
        "rtt_p50_s": float(np.percentile(samples, 50)) if samples.size else math.nan,
        "rtt_p95_s": float(np.percentile(samples, 95)) if samples.size else math.nan,
        "completion_s": float(t[-1]) if n else math.nan,
        "pkts_sent": n, "pkts_dropped": n_lost,
        "loss_rate": n_lost / n if n else math.nan,
    }])
    flows = flows.merge(delay_stats(packets, [FLOW]), on="flow", how="left")
    cwnd = pd.DataFrame({
        "flow": pd.Categorical([], categories=[FLOW]), "t": np.array([], float), "cwnd_pkts": np.array([], float),
        "ssthresh_pkts": np.array([], float), "srtt_s": np.array([], float), "rttvar_s": np.array([], float),
        "rto_s": np.array([], float), "inflight_pkts": np.array([], float),
        "ca_state": pd.Categorical([], categories=list(CA_STATES)), "pacing_rate_bps": np.array([], float),
        "delivered_pkts": np.array([], float),
    })
    queue = pd.DataFrame({"link": pd.Categorical([], categories=["path"]), "t": np.array([], float),
                          "backlog_bytes": np.array([], float), "backlog_pkts": np.array([], float)})
    meta = {
        "backend": "probe",
        "seed": summary.get("seed"),
        "rtt_s": rtt_min if math.isfinite(rtt_min) else None,
        "rtt_estimate": "minimum RTT sample (report arrival minus the timestamp of the packet that triggered it; "
                        "Wei thesis §4.3: underestimates the RTT)",
        "loss_time": "send time of the lost packet",
        "one_way_delay": ("NaN: server and client clocks are offset (negative one-way delay seen)" if clocks_offset
                          else "server receive clock minus client send clock (exact on one host)"),
        "probe": dict(summary),
        "versions": versions(),
    }
    return Run(packets=packets, flows=flows, cwnd=cwnd, queue=queue, drops=drops, meta=meta)
