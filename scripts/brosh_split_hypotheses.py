"""Reruns the hypothesis rows of the Brosh split/parallel analysis
(:mod:`ccbench.studies.brosh_split_notes`): the drop-tail testbed of
:mod:`ccbench.studies.brosh_split_testbed` with one change per row.

    PYTHONPATH=python python scripts/brosh_split_hypotheses.py [ROW ...] [--seeds 1,2,3] [--measure 120]

Prints one markdown row per hypothesis: the single connection's video loss, RTT and
95th percentile, and the reduction of the 95th percentile (merged delivery) by each
scheme, averaged over the web-flow counts; par-5-rr also with per-connection HOL only
and without HOL.
"""

from __future__ import annotations

import argparse

import numpy as np

from ccbench.studies import brosh_split_testbed as t

SCHEMES = ("single", "split-2", "split-4", "par-5-rr", "par-5-lb", "par-10-rr", "par-10-lb")
WEB = (0, 50, 100)
CAL = (200, 250, 275)
LINUX_TLP = {"tlp": True, "frto": True}
#: row -> (hypothesis, change, scenario_dict options, web-flow counts)
ROWS: dict[str, tuple[str, str, dict, tuple[int, ...]]] = {
    "baseline": ("(as configured)", "reno cross traffic, 100000 B, web 0/50/100, video without TLP/F-RTO", {}, WEB),
    "no-delack": ("delayed ACKs stretch each connection's RTT", "video `delayed_ack = false`",
                  {"video_tcp": {"delayed_ack": False}}, WEB),
    "tlp": ("today's Linux loss recovery (TLP, F-RTO)", "video `tlp = true, frto = true`",
            {"video_tcp": LINUX_TLP}, WEB),
    "queue-20k": ("Table 4's RTT of 0.101 s: a small effective queue", "limit 20000 B",
                  {"queue": "20000B"}, WEB),
    "packet-queue": ("a packet-limited queue (split pieces take slots)", "limit 100 pkt",
                     {"queue": "100pkt"}, WEB),
    "ftp-bic": ("2.6.9/2.6.17 default congestion control (BIC) for FTP and web", "FTP, web `cc = \"bic\"`",
                {"ftp_cc": "bic"}, WEB),
    "calibrated": ("load of Table 4 (loss 0.7-2.5 %, p95 0.5-7 s)", "BIC cross traffic, web 200/250/275",
                   {"ftp_cc": "bic"}, CAL),
    "cal-tlp": ("today's Linux loss recovery at Table 4's load", "calibrated + video TLP, F-RTO",
                {"ftp_cc": "bic", "video_tcp": LINUX_TLP}, CAL),
    "cal-no-delack": ("delayed ACKs at Table 4's load", "calibrated + video `delayed_ack = false`",
                      {"ftp_cc": "bic", "video_tcp": {"delayed_ack": False}}, CAL),
    "cal-video-bic": ("the video connections on the kernel default (BIC) too", "calibrated + video `cc = \"bic\"`",
                      {"ftp_cc": "bic", "video_tcp": {"cc": "bic"}}, CAL),
    "cal-packet-queue": ("a packet-limited queue at Table 4's load", "calibrated + limit 100 pkt",
                         {"ftp_cc": "bic", "queue": "100pkt"}, CAL),
}


def measure(row: str, seeds=(1, 2, 3), measure_s: float = 120.0) -> dict:
    _, _, opts, web = ROWS[row]
    s, _, _ = t.table(SCHEMES, web, measure_s, seeds, **opts)
    m = s.groupby("scheme", sort=False).mean(numeric_only=True)
    out = {"loss_pct": m.loc["single", "loss_pct"], "rtt_s": m.loc["single", "rtt_s"],
           "p95_single_s": m.loc["single", "p95_s"]}
    for sc in SCHEMES[1:]:
        out[sc] = m.loc[sc, "reduction_pct"]
    out["par-5-rr conn"] = m.loc["par-5-rr", "reduction_conn_pct"]
    out["par-5-rr nohol"] = m.loc["par-5-rr", "reduction_nohol_pct"]
    out["ftp split-4"] = m.loc["split-4", "ftp_change_pct"]
    out["to par-5-lb"] = m.loc["par-5-lb", "timeouts"]
    out["to par-10-lb"] = m.loc["par-10-lb", "timeouts"]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="*", default=list(ROWS))
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--measure", type=float, default=120.0)
    a = ap.parse_args()
    seeds = tuple(int(x) for x in a.seeds.split(","))
    cols = None
    for r in a.rows:
        res = measure(r, seeds, a.measure)
        if cols is None:
            cols = list(res)
            print("| row | " + " | ".join(cols) + " |\n|" + "---|" * (len(cols) + 1))
        print(f"| `{r}` | " + " | ".join(f"{res[c]:.3g}" if np.isfinite(res[c]) else "-" for c in cols) + " |",
              flush=True)


if __name__ == "__main__":
    main()
