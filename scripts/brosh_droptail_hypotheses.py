"""Reruns the hypotheses table of docs/REPRODUCTIONS.md, "Brosh Tables 3 and 4: why our
numbers differ" (issue 22): every row is the study's setup
(:mod:`ccbench.studies.brosh_droptail`) with one thing changed.

    PYTHONPATH=python python scripts/brosh_droptail_hypotheses.py                  # every Table 3 row
    PYTHONPATH=python python scripts/brosh_droptail_hypotheses.py web-nodelay ftp-bic --measure 300 --seeds 1,2,3,4,5
    PYTHONPATH=python python scripts/brosh_droptail_hypotheses.py --table 4 baseline buf-2.6
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

import pandas as pd

from ccbench.studies import brosh_droptail as B

Tweak = Callable[[dict[str, Any]], None]


def _flows(d: dict[str, Any], *prefixes: str) -> list[dict[str, Any]]:
    return [f for f in d["flows"] if f["name"].startswith(prefixes)]


def _tcp(prefixes: tuple[str, ...], **keys: Any) -> Tweak:
    """Sets transport keys on the flows whose names start with ``prefixes``."""
    def tweak(d: dict[str, Any]) -> None:
        for f in _flows(d, *prefixes):
            f["transport"].update(keys)
    return tweak


def _web_udp(d: dict[str, Any]) -> None:
    # tg over UDP: 512-byte datagrams (+28 B of IP/UDP headers), no congestion response.
    for f in _flows(d, "web"):
        f["transport"] = {"kind": "udp", "header": "28B"}


def _ftp_sync(d: dict[str, Any]) -> None:
    for f in _flows(d, "ftp"):
        f["start"] = "0us"


def _queue(**keys: Any) -> Tweak:
    return lambda d: d["topology"]["bottleneck"]["queue"].update(keys)


def _access(rate: str) -> Tweak:
    return lambda d: d["topology"].update(access={"rate": rate})


def _all(*tweaks: Tweak) -> Tweak:
    def tweak(d: dict[str, Any]) -> None:
        for t in tweaks:
            t(d)
    return tweak


def _paper_loss(d: dict[str, Any]) -> None:
    """Diagnostic, not a setup: Bernoulli loss on the data direction at the paper's
    measured rate for this (queue, N), as if the testbed's losses were not overflow."""
    n = sum(f.get("count", 1) for f in _flows(d, "web"))
    q = d["topology"]["bottleneck"]
    setup = B.TABLE4 if q["down"] == B.TABLE4.capacity else B.TABLE3
    kind = next(k for k, v in setup.queues.items() if v == q["queue"]["limit"])
    q["loss"] = {"kind": "bernoulli", "p": setup.paper[(kind, n)][0] / 100}


MEDIA = ("voip", "video")
ALL = ("voip", "video", "ftp", "web")
#: Linux 2.6.9 defaults: tcp_wmem max 131072 B, tcp_rmem max 174760 B (no autotuning to 4 MB).
BUF_26 = {"sndbuf": "131072B", "rcvbuf": "174760B"}
STACK_26 = {"recovery": "rate-halving", "tlp": False, "frto": False}

#: row name -> (hypothesis, change, tweak)
ROWS: dict[str, tuple[str, str, Tweak]] = {
    "baseline": ("(packet counting, the setup before issue 22)", "", lambda d: None),
    "web-nodelay": ("web packets stay 512 B (tg writes with TCP_NODELAY)", "web `nagle = false`",
                    _tcp(("web",), nagle=False)),
    "web-udp": ("tg web traffic over UDP (unresponsive)", "web over UDP, 540 B datagrams", _web_udp),
    "ftp-sync": ("FTP start times", "all 5 FTP flows start at 0", _ftp_sync),
    "ftp-bic": ("Linux 2.6.17 default cc (BIC) for FTP", "FTP `cc = bic`", _tcp(("ftp",), cc="bic")),
    "all-bic": ("BIC on every host", "every TCP flow `cc = bic`", _tcp(ALL, cc="bic")),
    "ack-counting": ("Linux 2.6 ACK counting (tcp_abc = 0; paper §3.2, §6.3) on every host: the study now",
                     "every TCP flow `abc = \"per-ack\"`", _tcp(ALL, abc="per-ack")),
    "ack-counting-bg": ("as above, the FTP and web flows only", "FTP and web `abc = \"per-ack\"`",
                        _tcp(("ftp", "web"), abc="per-ack")),
    "ack-counting+byte-35k": ("ACK counting and a 35 kB effective byte limit together", "both changes",
                              _all(_tcp(ALL, abc="per-ack"), _queue(limit="35000B"))),
    "ftp-aimd-1": ("(control for the next row) FTP as the textbook AIMD window, a = 1",
                   "FTP `cc = { name = \"aimd\", a = 1 }`", _tcp(("ftp",), cc={"name": "aimd", "a": 1.0})),
    "ftp-ai-half": ("2.6 per-ACK counting (tcp_abc = 0) with delayed ACKs: FTP grows 1/2 segment per RTT",
                    "FTP `cc = { name = \"aimd\", a = 0.5 }` (a proxy, before the `abc` switch)",
                    _tcp(("ftp",), cc={"name": "aimd", "a": 0.5})),
    "media-today": ("the 2.6-era media options matter (study: rate halving, no TLP, no F-RTO)",
                    "media back to PRR + TLP + F-RTO", _tcp(MEDIA, recovery="prr", tlp=True, frto=True)),
    "all-2.6": ("2.6-era stack on the background flows too", "FTP and web: rate halving, no TLP / F-RTO",
                _tcp(("ftp", "web"), **STACK_26)),
    "media-no-delack": ("receiver ACKs every segment (bidirectional tool piggybacks ACKs)",
                        "media `delayed_ack = false`", _tcp(MEDIA, delayed_ack=False)),
    "iw4-all": ("init_cwnd 4 on every host (RFC 3390, 2.6 default)", "FTP and web `init_cwnd = 4`",
                _tcp(("ftp", "web"), init_cwnd=4)),
    "buf-2.6": ("2.6.9 socket-buffer maxima", "every TCP flow sndbuf 131072 B, rcvbuf 174760 B", _tcp(ALL, **BUF_26)),
    "buf-2.6-truesize": ("2.6.9 send buffer counted in skb truesize (~2.3 kB per 1448-byte segment)",
                         "every TCP flow sndbuf 82 kB (131072 x 1448 / 2300), rcvbuf 174760 B",
                         _tcp(ALL, sndbuf="82000B", rcvbuf="174760B")),
    "access-100m": ("testbed hosts on 100 Mbit/s Ethernet (burstiness into the queue)", "access links 100 Mbit/s",
                    _access("100Mbit")),
    "bytes-loose": ("NIST Net's byte limit admits while below the limit", "queue rule `bytes-loose`",
                    _queue(rule="bytes-loose")),
    "in-service": ("the packet being transmitted counts against the limit", "`count_in_service = true`",
                   _queue(count_in_service=True)),
    "byte-35k": ("a smaller effective byte limit (per-packet overhead counted)", "byte queue 35000 B",
                 _queue(limit="35000B")),
    "byte-as-33pkt": ("the byte limit implemented as packets of 1500 B", "byte queue = 33 packets (50000 / 1500)",
                      _queue(limit="33pkt")),
    "pkt-as-bytes": ("the packet limit implemented as bytes of 1500-byte packets", "packet queue = 150000 B",
                     _queue(limit="150000B")),
    "ftp-win-65k": ("(Table 4) FTP window limited by a fixed 87380-byte receive buffer (65 kB advertised)",
                    "FTP `rcvbuf = 65535B`", _tcp(("ftp",), rcvbuf="65535B")),
    "paper-loss": ("(diagnostic) the paper's loss rate as random drops: does the delay column follow?",
                   "Bernoulli loss on the data direction at the paper's rate for each row", _paper_loss),
    "tiny-10pkt": ("(Table 4) the 30 Mbit/s emulator holds far fewer packets than configured (RTT 0.101 s)",
                   "both queues 10 packets", _queue(limit="10pkt")),
    "tiny-25pkt": ("(Table 4) as above, 25 packets", "both queues 25 packets", _queue(limit="25pkt")),
}
#: Rows that change one queue kind only.
ONLY = {"ack-counting+byte-35k": ("byte",), "bytes-loose": ("byte",), "byte-35k": ("byte",), "byte-as-33pkt": ("byte",), "pkt-as-bytes": ("packet",)}


#: Every row starts from the study's setup with today's packet counting (``abc = "off"``,
#: the setup before issue 22); the row ``ack-counting`` is the study's setup itself.
PACKET_COUNTING = _tcp(ALL, abc="off")


def run_row(name: str, setup: B.Setup, measure_s: float, seeds: list[int], web_flows) -> pd.DataFrame:
    tweak = _all(PACKET_COUNTING, ROWS[name][2])
    queues = ONLY.get(name, ("packet", "byte"))
    df = B.table(web_flows, queues, measure_s, tuple(seeds), setup=setup, tweak=tweak)
    df.insert(0, "row", name)
    return df


def markdown(df: pd.DataFrame, setup: B.Setup) -> str:
    """One line per row: the columns the notes' hypotheses table shows (smallest and
    largest N of each queue kind)."""
    lo, hi = setup.web_flows[0], setup.web_flows[-1]

    def cell(g: pd.DataFrame, q: str, n: int, k: str, fmt: str) -> str:
        v = g[(g["queue"] == q) & (g["web_flows"] == n)][k]
        return format(float(v.iloc[0]), fmt) if len(v) else "-"

    head = (f"| row | hypothesis | change | pkt loss % N={lo} / {hi} | pkt RTT s N={lo} / {hi} | pkt p95 s N={lo} / {hi} | "
            f"byte loss % N={lo} / {hi} | byte RTT s N={lo} / {hi} | byte p95 s N={lo} / {hi} | verdict |\n"
            + "|---" * 10 + "|\n")
    paper = pd.DataFrame([{"queue": q, "web_flows": n, "loss_pct": v[0], "rtt_s": v[1], "p95_s": v[3]}
                          for (q, n), v in setup.paper.items()])
    lines = []
    for name, g in [("(paper)", paper)] + list(df.groupby("row", sort=False)):
        hyp, change = ("", "") if name == "(paper)" else ROWS[name][:2]
        cells = [f"{cell(g, q, lo, k, f)} / {cell(g, q, hi, k, f)}" for q in ("packet", "byte")
                 for k, f in (("loss_pct", ".2f"), ("rtt_s", ".3f"), ("p95_s", ".2f"))]
        lines.append(f"| `{name}` | {hyp} | {change} | " + " | ".join(cells) + " | |\n")
    return head + "".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rows", nargs="*", default=list(ROWS), help=f"rows to run (default all: {', '.join(ROWS)})")
    ap.add_argument("--table", type=int, choices=(3, 4), default=3)
    ap.add_argument("--measure", type=float, default=60.0, help="seconds of media measurement per run")
    ap.add_argument("--seeds", default="1,2", help="comma-separated seeds")
    ap.add_argument("--web", default=None, help="comma-separated web-flow counts (default: the table's)")
    ap.add_argument("--csv", default=None, help="also write every column to this CSV")
    ap.add_argument("--from-csv", default=None, help="no simulation: print the markdown table of a CSV --csv wrote")
    a = ap.parse_args()
    bad = [r for r in a.rows if r not in ROWS]
    if bad:
        ap.error(f"row: {bad[0]!r} is not a row (accepted: {', '.join(ROWS)})")
    setup = B.TABLE3 if a.table == 3 else B.TABLE4
    if a.from_csv:
        print(markdown(pd.read_csv(a.from_csv), setup))
        return
    seeds = [int(s) for s in a.seeds.split(",")]
    web = tuple(int(x) for x in a.web.split(",")) if a.web else setup.web_flows
    out = pd.concat([run_row(r, setup, a.measure, seeds, web) for r in a.rows], ignore_index=True)
    if a.csv:
        out.to_csv(a.csv, index=False)
    cols = ["row", "queue", "web_flows", "loss_pct", "loss_pct_paper", "rtt_s", "srtt_s", "rtt_s_paper", "queue_kb",
            "jitter_s", "jitter_s_paper", "p95_s", "p95_s_paper", "ftp_mbps", "web_mbps"]
    with pd.option_context("display.width", 250, "display.max_columns", 30, "display.max_rows", 500):
        print(out[cols].round(3).to_string(index=False))
    print(markdown(out, setup))


if __name__ == "__main__":
    main()
