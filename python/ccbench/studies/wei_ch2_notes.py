"""The ``docs/REPRODUCTIONS.md`` paragraph on Wei's Chapter 2 (``wei-vegas``, ``wei-fast``):
what the thesis's figure captions leave open, and how the two Vegas decisions differ. The
numbers are read from the recorded results; the reasoning is fixed text."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def _cell(tab: pd.DataFrame, fig: str, quantity: str, decision: str) -> str:
    r = tab[(tab["fig"] == fig) & (tab["quantity"] == quantity) & (tab["decision"] == decision)]
    return str(r["ours"].iloc[0]) if len(r) else "?"


def note(results: Path) -> str:
    out = ["\n### Wei Chapter 2: which path, and the two Vegas decisions\n\n",
           "The captions of Figs 2.1-2.4 all say 800 Mbit/s, 200 ms, 1000-byte packets, which makes cd = 20 000 "
           "packets; yet Fig. 2.1's window (19 067-19 068) is below cd, and Fig. 2.2's 100 x 115.1 - 1985 = 9525 "
           "packets of cd is half of it. The numbers fit together with c ≈ 95 300 packets/s (≈ 1049 wire bytes "
           "per packet), d = 200 ms in Fig. 2.1 and 100 ms in Fig. 2.2 (so the \"doubled delay\" of Figs 2.3/2.4 "
           "is the captions' 200 ms) and alpha d = 20 packets per flow in Fig. 2.2. `wei-vegas` runs the captions' "
           "path with alpha = beta = 20 and compares what survives the missing parameters: Theorem 2.1.5's bounds "
           "recomputed for our c and d, checked on every sample; the per-flow queue; the one-packet swings.\n\n"]
    p = Path(results) / "reproduce-wei-vegas" / "wei_vegas.csv"
    if p.is_file():
        t = pd.read_csv(p)
        q = "mean queue / N [pkts per flow]"
        out.append(
            "Linux 2.6.16 decided on Brakmo's `diff = w - w baseRTT/rtt`, the theorem's (w/d - w/D) d, and every "
            "2.6.16 sample stays inside the bounds. Today's `tcp_vegas.c` computes `cwnd (rtt - baseRTT)/baseRTT` "
            "(truncated) and decides on the current cwnd with the previous round's minimum RTT: with alpha = beta = "
            "A it stops once w q/d reaches A, i.e. about A d/D packets per flow, and it can cycle around that. "
            f"Fig. 2.2's path, packets queued per flow: 2.6.16 {_cell(t, 'fig2.2', q, '2.6.16')}, today "
            f"{_cell(t, 'fig2.2', q, 'today')} (the band [A d/D, (A+1) d/D) is in the table). The thesis's "
            "100-packet queue swing (one packet per flow) needs the flows in step: ours are after a common slow "
            f"start (`fig2.2`: swing {_cell(t, 'fig2.2', 'queue swing / N [pkts per flow]', '2.6.16')} per flow) "
            "and drift out of step after a start in congestion avoidance "
            f"(`fig2.2-ca`: {_cell(t, 'fig2.2-ca', 'queue swing / N [pkts per flow]', '2.6.16')}).\n")
    return "".join(out)
