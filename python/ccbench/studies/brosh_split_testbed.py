"""Brosh et al. §7 as the paper ran it (Figs 26a/b, 28a/b): split-N and parallel
connections for live video over the drop-tail testbed of §5.3 (note §3.5, §4.6, §5).

Scenario (one run per scheme, web-flow count N and seed)
--------------------------------------------------------
* The video drop-tail testbed of Table 4 as :mod:`ccbench.studies.brosh_droptail`
  builds it (``scenario_dict(..., setup=TABLE4)``: dumbbell, 100 ms round-trip
  propagation, bottleneck **30 Mbit/s** both ways ("so that the ratio of cumulative bit
  rate of five CBR-TCP flows to link capacity was one to ten"), 5 FTP (``bulk``, TCP
  reno) and N web flows (``tg-web``, 512 B with exponential gaps of mean 50 ms), every
  flow with the 2.6 kernels' ACK counting, start phases drawn from the seed, warm-up and
  drain), with its **byte** queue of **100 000 B** (the only video queue size the paper
  gives; a 100-packet queue is a hypothesis row).
* The five CBR flows are video ``video0..video4`` (preset ``brosh-video``: 1448 B every
  20 ms = 573 kbit/s, one MSS per message) with that module's media settings
  (:data:`~ccbench.studies.brosh_droptail.MEDIA_TCP`: §8.1 guidelines, reno, no Nagle,
  SACK, IW 4, no slow start after idle, rate-halving recovery) and the loss recovery of
  the testbed's 2.6.9 / 2.6.17 kernels (:data:`ERA_TCP`: no tail-loss probe, which came
  with Linux 3.10, and no F-RTO, off by default before 2.6.24; set here explicitly).
  Today's Linux recovery is a hypothesis row (``video_tcp={"tlp": True, "frto": True}``).
* Every video flow uses the scheme under test (§7.1: "to understand the performance of
  split-N in a wide-scale deployment"; the paper does not say whether one or all five
  video flows used it; we apply it to all five, which is also what Figs 26b/28b's
  background-throughput question needs):

  - ``single``: one connection;
  - ``split-N``: each 1448-byte message written as N pieces back to back (no pacing of
    the pieces, §7.1);
  - ``par-N-rr``: N connections, messages round-robin (the paper's "blind" scheme);
  - ``par-N-lb``: N connections, each message to the connection with the smallest send
    queue that is not in a timeout state (the paper's "intelligent" scheme). The send
    queue is Linux's ``SIOCOUTQ``, ``write_seq - snd_una`` (unsent + unacknowledged
    bytes), "timeout state" is ``ca_state == Loss``; ties go round-robin.

In-order merge assumption
-------------------------
With N connections the simulator's receiver merges the streams by message number:
message i is delivered when it and every earlier message of the flow have been
delivered in order on their connections (§5: "the receiver must merge the streams by
RTP sequence number"). How the paper measured the delay across connections is not
stated, so three receiver readings are reported:

* ``p95_s``: merged, strict in-order delivery across connections (the simulator's
  ``t_deliver``): head-of-line blocking within and across connections;
* ``p95_conn_s``: in-order per connection only (a playout buffer that reorders by RTP
  sequence number and plays each message when its own connection delivers it): for
  round-robin the connection of message i is i mod N and the delivery time is the
  running maximum of ``t_arrive`` over that connection's messages (exact: every message
  is one MSS); not available for least-backlog (the scheduler's choice is not recorded)
  nor for split-N (equal to ``p95_s`` there: one connection);
* ``p95_nohol_s``: no head-of-line blocking at all (``t_arrive``, a receiver reading out
  of order such as TCP-RC).

Metrics (per video flow, then the mean over the 5 flows, then the mean over seeds)
-----------------------------------------------------------------------------------
95th percentile with Brosh's α-percentile (``method = "inverted_cdf"``) of the message
delay D = t_deliver - t_write (it includes the one-way propagation L = 50 ms) of the
messages written in the measurement window; never delivered = infinitely late.
``reduction_pct = 100 (1 - p95 / p95_single)`` at the same web-flow count (positive = the
scheme lowers the 95th percentile); ``reduction_excess_pct`` is the same for the delay
TCP adds, p95 - L - 1448 B / 30 Mbit/s (a reduction "by 90 %" of a 0.46 s percentile
would otherwise fall below L). ``loss_pct``: the video connections' data segments
dropped / sent; ``ftp_mbps``: goodput of the 5 FTP flows together (Figs 26b, 28b).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import brosh_droptail as bd

QUEUE = bd.TABLE4.queues["byte"]
ONE_WAY_S = 0.05 + 1448 * 8 / 30e6
WEB_FLOWS = (0, 10, 25, 50, 100)        # Table 4's web-flow counts
#: The testbed kernels' loss recovery, set on the video connections on top of the
#: §8.1 settings (explicitly, whatever the drop-tail module's default).
ERA_TCP = {"tlp": False, "frto": False}

#: name -> (split, connections, scheduler)
SCHEMES: dict[str, tuple[int, int, str]] = {
    "single": (1, 1, "round-robin"),
    "split-2": (2, 1, "round-robin"),
    "split-4": (4, 1, "round-robin"),
    "par-2-rr": (1, 2, "round-robin"),
    "par-5-rr": (1, 5, "round-robin"),
    "par-10-rr": (1, 10, "round-robin"),
    "par-2-lb": (1, 2, "least-backlog"),
    "par-5-lb": (1, 5, "least-backlog"),
    "par-10-lb": (1, 10, "least-backlog"),
}
#: The paper's statements per scheme (note §4.6): (reduction %, source); NaN = no number.
PAPER: dict[str, tuple[float, str]] = {
    "split-2": (30.0, "Fig. 26a: 'up to 30%' under low and moderate loss; none at 100 web flows"),
    "split-4": (np.nan, "Fig. 26a: higher split factors give diminishing gains or are worse than no split; "
                        "Fig. 26b: -27% FTP throughput"),
    "par-5-rr": (90.0, "Fig. 28a: 5 blind connections -90% on average"),
    "par-5-lb": (np.nan, "Fig. 28a: intelligent outperforms blind (Intro: 'up to 90%')"),
    "par-10-rr": (np.nan, "Fig. 28a: diminishing gains beyond 5 connections"),
    "par-10-lb": (np.nan, "Fig. 28a: diminishing gains beyond 5 connections"),
}


def scenario_dict(scheme: str = "single", n_web: int = 0, measure_s: float = 120.0, seed: int | None = None,
                  video_tcp: dict | None = None, ftp_cc: str | None = None, queue: str = QUEUE) -> dict:
    """The testbed scenario for ``scheme`` (a :data:`SCHEMES` key) and ``n_web`` web flows.

    ``video_tcp`` updates the video connections' transport table after :data:`ERA_TCP`
    (hypothesis tests, e.g. ``{"tlp": True}``); ``ftp_cc`` sets the FTP and web flows' congestion control
    (``"bic"``: the default of the paper's 2.6.9 / 2.6.17 kernels); ``queue`` the limit."""
    split, conns, sched = SCHEMES[scheme]
    d = bd.scenario_dict(n_web, "byte", measure_s, seed=seed, setup=bd.TABLE4)
    d["topology"]["bottleneck"]["queue"]["limit"] = queue
    for f in d["flows"]:
        name = f["name"]
        if name.startswith("video"):
            f["transport"] = {**bd.MEDIA_TCP, **ERA_TCP, **(video_tcp or {})}
            if split != 1:
                f["split"] = split
            if conns != 1:
                f["connections"] = conns
                f["scheduler"] = sched
        elif ftp_cc is not None:
            f["transport"]["cc"] = ftp_cc
    return d


def _p95(x: np.ndarray) -> float:
    return float(np.percentile(x, 95, method="inverted_cdf")) if x.size else np.nan


def _conn_delivery(g: pd.DataFrame, conns: int) -> np.ndarray:
    """Per-connection in-order delivery times of a round-robin flow's messages: the
    running maximum of ``t_arrive`` over the messages i, i+N, i+2N, ... of a connection."""
    ta = g["t_arrive"].to_numpy(dtype=float)
    ta = np.where(np.isfinite(ta), ta, np.inf)
    msg = g["msg"].to_numpy(dtype=np.int64)
    out = np.empty_like(ta)
    for k in range(conns):
        sel = (msg % conns) == k
        out[sel] = np.maximum.accumulate(ta[sel])
    return out


def run_metrics(run, scheme: str, warmup_s: float = bd.WARMUP_S, keep_delays: bool = False) -> dict:
    """The metrics of one run (video flows), as defined in the module docstring. With
    ``keep_delays`` the pooled per-message delays (merged and no-HOL) are returned too,
    under ``"_delays"``, for the CDF figure."""
    _, conns, sched = SCHEMES[scheme]
    p = run.packets
    p = p[p["flow"].astype(str).str.startswith("video")]
    p = p[p["t_write"].to_numpy(dtype=float) >= warmup_s].sort_values(["flow", "msg"])
    per = {"p95_s": [], "p50_s": [], "p95_conn_s": [], "p95_nohol_s": []}
    pooled_d, pooled_a = [], []
    for _, g in p.groupby("flow", sort=False, observed=True):
        tw = g["t_write"].to_numpy(dtype=float)
        d = g["t_deliver"].to_numpy(dtype=float) - tw
        d = np.where(np.isfinite(d), d, np.inf)  # never delivered = infinitely late
        a = g["t_arrive"].to_numpy(dtype=float) - tw
        a = np.where(np.isfinite(a), a, np.inf)
        per["p95_s"].append(_p95(d))
        per["p50_s"].append(float(np.percentile(d, 50, method="inverted_cdf")))
        per["p95_nohol_s"].append(_p95(a))
        if conns == 1:
            per["p95_conn_s"].append(_p95(d))
        elif sched == "round-robin":
            per["p95_conn_s"].append(_p95(_conn_delivery(g, conns) - tw))
        else:
            per["p95_conn_s"].append(np.nan)
        if keep_delays:
            pooled_d.append(d)
            pooled_a.append(a)
    f = run.flows
    name = f["flow"].astype(str)
    v, ftp, web = f[name.str.startswith("video")], f[name.str.startswith("ftp")], f[name.str.startswith("web")]
    sent = float(v["pkts_sent"].sum())
    out = {k: float(np.mean(x)) for k, x in per.items()}
    out.update({
        "loss_pct": 100.0 * float(v["pkts_dropped"].sum()) / sent if sent else np.nan,
        "rtt_s": float(v["rtt_p50_s"].mean()),
        "timeouts": float(v["timeouts"].sum()),
        "fast_recoveries": float(v["fast_recoveries"].sum()),
        "ftp_mbps": float(ftp["goodput_bps"].sum()) / 1e6,
        "web_mbps": float(web["goodput_bps"].sum()) / 1e6 if len(web) else 0.0,
    })
    if keep_delays:
        out["_delays"] = (np.concatenate(pooled_d), np.concatenate(pooled_a))
    return out


METRICS = ("p95_s", "p95_conn_s", "p95_nohol_s", "p50_s", "loss_pct", "rtt_s", "timeouts", "fast_recoveries",
           "ftp_mbps", "web_mbps")


def summarise(per: pd.DataFrame) -> pd.DataFrame:
    """One row per (web flows, scheme): means over seeds, ``p95_sd`` and the reductions
    against ``single`` at the same web-flow count, with the paper's statement beside."""
    g = per.groupby(["web_flows", "scheme"], sort=False)
    s = g[list(METRICS)].mean()
    s["p95_sd"] = g["p95_s"].std(ddof=1)
    s["seeds"] = g.size()
    s = s.reset_index()
    rows = []
    for n, grp in s.groupby("web_flows", sort=False):
        grp = grp.copy()
        base = grp[grp["scheme"] == "single"]
        b = base.iloc[0] if len(base) else None
        for col, out in (("p95_s", "reduction_pct"), ("p95_conn_s", "reduction_conn_pct"),
                         ("p95_nohol_s", "reduction_nohol_pct")):
            ref = float(b[col]) if b is not None else np.nan
            grp[out] = 100.0 * (1.0 - grp[col] / ref)
        ref = float(b["p95_s"]) - ONE_WAY_S if b is not None else np.nan
        grp["reduction_excess_pct"] = 100.0 * (1.0 - (grp["p95_s"] - ONE_WAY_S) / ref)
        ftp_ref = float(b["ftp_mbps"]) if b is not None else np.nan
        grp["ftp_change_pct"] = 100.0 * (grp["ftp_mbps"] / ftp_ref - 1.0)
        rows.append(grp)
    out = pd.concat(rows, ignore_index=True)
    out["paper_reduction_pct"] = [PAPER.get(k, (np.nan, ""))[0] for k in out["scheme"]]
    out["paper_source"] = [PAPER.get(k, (np.nan, ""))[1] for k in out["scheme"]]
    return out


def table(schemes=tuple(SCHEMES), web_flows=WEB_FLOWS, measure_s: float = 120.0, seeds=(1, 2, 3),
          progress=None, cdf_web: int | None = None, **opts) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Runs every (web flows, scheme, seed): (summary, per-seed table, CDF samples).

    The CDF samples are the pooled message delays of the first seed at ``cdf_web`` web
    flows (default: the first count), per scheme: ``{scheme: (merged, no_hol)}``.
    ``opts`` go to :func:`scenario_dict` (``video_tcp``, ``ftp_cc``, ``queue``)."""
    import ccbench
    from ccbench.scenario import Scenario

    cdf_web = web_flows[0] if cdf_web is None else cdf_web
    total = len(schemes) * len(web_flows) * len(seeds)
    per, cdfs, k = [], {}, 0
    for n in web_flows:
        for sc in schemes:
            for s in seeds:
                scn = Scenario.from_dict(scenario_dict(sc, n, measure_s, seed=s, **opts))
                keep = n == cdf_web and s == seeds[0]
                m = run_metrics(ccbench.simulate(scn, seed=s), sc, keep_delays=keep)
                if keep:
                    cdfs[sc] = m.pop("_delays")
                per.append({"web_flows": n, "scheme": sc, "seed": s, **m})
                k += 1
                if progress:
                    progress(k, total)
    per_df = pd.DataFrame(per)
    return summarise(per_df), per_df, cdfs
