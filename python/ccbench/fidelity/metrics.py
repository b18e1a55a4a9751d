"""The fidelity metrics of one run, one row per flow (issue 24 §3).

Every metric comes from the tables both backends write in the same format (``flows``,
``cwnd``, ``queue``, ``drops``), so a kernel run and a simulator run are measured by the
same code:

* ``goodput_bps`` (a finished transfer's over its completion time), ``share`` (of the
  bottleneck rate), ``loss_rate``, ``completion_s`` (transfers) and
  ``delay_p50_s`` / ``delay_p95_s`` / ``delay_p99_s`` (CBR messages): the flow table;
* ``rtt_p50_s`` / ``rtt_p95_s``: percentiles of the smoothed RTT (``srtt_s``) sampled at
  regular times in the cwnd table, from the flow's start to its completion (a transfer)
  or the end of the run. The flow tables' own RTT columns cannot be compared across
  backends: the simulator's are percentiles of every raw RTT sample (one per ACK, so
  wider than srtt's), the emulator's of the polled srtt including the frozen value of a
  finished transfer's socket until the run ends (14 s of it for a 1 s transfer);
* ``retrans_pkts``: retransmitted bytes over the MSS;
* ``drops``: the flow's packets dropped at the bottleneck (``drops`` table);
* ``first_loss_s``: first drop of the flow after its start;
* ``cwnd_reductions``: entries into the CWR/Recovery/Loss states in the cwnd samples
  (``tcp_set_ca_state``); ``reduction_ratio``: median over them of ssthresh set on entry
  over the cwnd just before (CUBIC's beta 0.7, Reno's 0.5);
* ``ss_exit_cwnd`` / ``ss_exit_s``: the largest cwnd up to the first sample with a finite
  ssthresh (slow start ends there, by HyStart or by the first loss), and when, after the
  flow's start;
* ``jain`` (Jain, Chiu, Hawe 1984, eq. 1) and ``goodput_cv`` of the bulk TCP flows over
  the window in which all of them run (from ``delivered_pkts``), the same for every flow
  of the run;
* ``queue_p50_pkts`` / ``queue_p95_pkts``: the downstream bottleneck's backlog samples.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["run_metrics", "METRICS", "emu_timing"]

MSS = 1448  # the scenario default payload per segment (1500 B MTU, timestamps)
SSTHRESH_INF = 1e6  # above this ssthresh is the kernel's "infinite" initial value
REDUCING = ("cwr", "recovery", "loss")

METRICS = (
    "goodput_bps", "share", "loss_rate", "rtt_p50_s", "rtt_p95_s", "retrans_pkts", "drops", "first_loss_s",
    "cwnd_reductions", "reduction_ratio", "ss_exit_cwnd", "ss_exit_s", "jain", "goodput_cv",
    "queue_p50_pkts", "queue_p95_pkts", "completion_s", "delay_p50_s", "delay_p95_s", "delay_p99_s",
)


def _cwnd_metrics(c: pd.DataFrame, start_s: float) -> dict[str, float]:
    out = {"cwnd_reductions": 0.0, "reduction_ratio": float("nan"), "ss_exit_cwnd": float("nan"), "ss_exit_s": float("nan")}
    if c.empty:
        return out
    c = c.sort_values("t")
    cw = c["cwnd_pkts"].to_numpy(float)
    ss = c["ssthresh_pkts"].to_numpy(float)
    st = c["ca_state"].astype(str).to_numpy()
    t = c["t"].to_numpy(float)
    finite = np.flatnonzero(np.isfinite(ss) & (ss < SSTHRESH_INF))
    if finite.size:
        i = int(finite[0])
        out["ss_exit_cwnd"] = float(np.nanmax(cw[: i + 1]))
        out["ss_exit_s"] = float(t[i] - start_s)
    reducing = np.isin(st, REDUCING)
    entries = np.flatnonzero(reducing[1:] & ~reducing[:-1]) + 1
    out["cwnd_reductions"] = float(entries.size)
    ratios = [ss[i] / cw[i - 1] for i in entries if cw[i - 1] > 0 and np.isfinite(ss[i]) and ss[i] < SSTHRESH_INF]
    if ratios:
        out["reduction_ratio"] = float(np.median(ratios))
    return out


def _srtt_percentiles(c: pd.DataFrame, start_s: float, completion_s: float) -> tuple[float, float]:
    """(p50, p95) of the regularly sampled srtt while the flow is active (see module doc)."""
    if c.empty:
        return float("nan"), float("nan")
    t = c["t"].to_numpy(float)
    srtt = c["srtt_s"].to_numpy(float)
    end = start_s + completion_s if np.isfinite(completion_s) else np.inf
    live = (t >= start_s) & (srtt > 0)
    v = srtt[live & (t <= end)]
    if not v.size:  # a transfer shorter than the sampling interval: the srtt it ended with
        v = srtt[live][:1]
    if not v.size:
        return float("nan"), float("nan")
    return float(np.percentile(v, 50)), float(np.percentile(v, 95))


def _overlap_fairness(run, bulk: list[str]) -> tuple[float, float]:
    """(Jain's index, coefficient of variation) of the bulk flows' delivered packets
    while all of them run; NaN for fewer than two flows."""
    if len(bulk) < 2 or run.cwnd.empty:
        return float("nan"), float("nan")
    f = run.flows.set_index(run.flows["flow"].astype(str))
    lo = float(f.loc[bulk, "start_s"].max())
    hi = float(f.loc[bulk, "end_s"].min())
    if not hi > lo:
        return float("nan"), float("nan")
    c = run.cwnd[run.cwnd["flow"].astype(str).isin(bulk)]
    x = []
    for name in bulk:
        g = c[c["flow"].astype(str) == name].groupby("t")["delivered_pkts"].sum().sort_index()
        if g.empty:
            return float("nan"), float("nan")
        x.append(float(np.interp(hi, g.index, g.values) - np.interp(lo, g.index, g.values)))
    a = np.asarray(x)
    if not np.any(a > 0):
        return float("nan"), float("nan")
    return float(a.sum() ** 2 / (a.size * np.square(a).sum())), float(a.std() / a.mean())


def _queue(run) -> tuple[float, float]:
    q = run.queue
    if q.empty:
        return float("nan"), float("nan")
    q = q[q["link"].astype(str) == "bottleneck_down"]
    if q.empty:
        return float("nan"), float("nan")
    v = q["backlog_pkts"].to_numpy(float)
    return float(np.percentile(v, 50)), float(np.percentile(v, 95))


def emu_timing(run, rate_bps: float) -> dict[str, float]:
    """The emulator's departure-time error of the run, per direction (``down`` data, ``up``
    ACKs): p50 and p99 in seconds, the share within 120 us, and ``timing_ok``: p99 in
    both directions below one 1500 B packet time at the bottleneck rate (a row whose
    emulator timing is off is marked, not used). Empty for a simulator run."""
    t = ((run.meta.get("emu") or {}).get("timing_error_ns")) or {}
    if not t:
        return {}
    pkt_s = 1500 * 8 / rate_bps
    out: dict[str, float] = {}
    ok = True
    for d, v in t.items():
        short = "down" if "down" in d else ("up" if "up" in d else d)
        pct = v.get("percentiles", {})
        p50 = float(pct.get("p50", float("nan"))) / 1e9
        p99 = float(pct.get("p99", float("nan"))) / 1e9
        out[f"emu_{short}_err_p50_s"] = p50
        out[f"emu_{short}_err_p99_s"] = p99
        out[f"emu_{short}_within_120us"] = float(v.get("frac_within_120us", float("nan")))
        if not (p99 < pkt_s):
            ok = False
    out["timing_ok"] = bool(ok)
    return out


def run_metrics(run, rate_bps: float) -> pd.DataFrame:
    """One row per flow of ``run`` with :data:`METRICS` (see the module doc)."""
    fl = run.flows.copy()
    fl["flow"] = fl["flow"].astype(str)
    drops = run.drops
    dflow = drops["flow"].astype(str) if not drops.empty else pd.Series(dtype=str)
    # bulk flows: TCP, no completion time (not a transfer) and no message delays (not CBR);
    # the emulator counts a bulk flow's writes as messages, so msgs_sent cannot tell
    bulk = [r.flow for r in fl.itertuples()
            if str(r.transport) == "tcp" and not np.isfinite(r.completion_s) and not np.isfinite(r.delay_p50_s)]
    jain, cv = _overlap_fairness(run, bulk)
    q50, q95 = _queue(run)
    rows = []
    for r in fl.itertuples():
        mine = drops[dflow == r.flow] if not drops.empty else drops
        first = float(mine["t"].min() - r.start_s) if not mine.empty else float("nan")
        c = run.cwnd[run.cwnd["flow"].astype(str) == r.flow] if not run.cwnd.empty else run.cwnd
        # a finished transfer's goodput is over its own lifetime (bytes / completion time) on
        # both backends: the flow tables divide by different spans for it
        rtt50, rtt95 = _srtt_percentiles(c, float(r.start_s), float(r.completion_s)) if r.transport == "tcp" else (float("nan"),) * 2
        gp = float(r.bytes_delivered) * 8 / float(r.completion_s) if np.isfinite(r.completion_s) and r.completion_s > 0 else float(r.goodput_bps)
        row = {
            "flow": r.flow, "transport": r.transport, "start_s": float(r.start_s), "end_s": float(r.end_s),
            "bytes_delivered": float(r.bytes_delivered), "goodput_bps": gp, "share": gp / rate_bps, "loss_rate": float(r.loss_rate),
            "rtt_p50_s": rtt50, "rtt_p95_s": rtt95,
            "retrans_pkts": float(r.retrans_bytes) / MSS, "drops": float(len(mine)), "first_loss_s": first,
            "jain": jain, "goodput_cv": cv, "queue_p50_pkts": q50, "queue_p95_pkts": q95,
            "completion_s": float(r.completion_s), "delay_p50_s": float(r.delay_p50_s),
            "delay_p95_s": float(r.delay_p95_s), "delay_p99_s": float(r.delay_p99_s),
        }
        if r.transport == "tcp":
            row.update(_cwnd_metrics(c, float(r.start_s)))
        else:
            row.update({"cwnd_reductions": float("nan"), "reduction_ratio": float("nan"),
                        "ss_exit_cwnd": float("nan"), "ss_exit_s": float("nan")})
        rows.append(row)
    out = pd.DataFrame(rows, columns=["flow", "transport", "start_s", "end_s", "bytes_delivered", *METRICS])
    for k, v in emu_timing(run, rate_bps).items():
        out[k] = v
    return out
