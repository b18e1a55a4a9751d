"""Brosh et al., drop-tail testbed, Table 4: video over TCP (5 flows of 1448 B every
20 ms = 573 kbit/s) beside 5 FTP and 0-100 web flows at 30 Mbit/s, 100 ms RTT,
100-packet and 100000-byte queues (paper §5.3). Same scenario, columns and sizes as
Table 3 (:mod:`ccbench.studies.brosh_droptail`, whose docstring defines them); only the
media preset, the capacity, the byte limit and the web-flow counts differ
(:data:`ccbench.studies.brosh_droptail.TABLE4`).

Reduced: 60 s of video, seeds 1-2; full: 300 s, seeds 1-5 (the paper's five 5-minute
runs). Writes ``brosh_video.csv`` and ``brosh_video.png`` into ``out``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from .brosh_droptail import TABLE4, run_setup

DESCRIPTION = (
    "Brosh et al. drop-tail testbed, Table 4: 5 video-over-TCP (573 kbit/s) + 5 FTP + N web flows at 30 Mbit/s, "
    "100 ms RTT, 100-packet and 100000-byte queues; video loss, RTT, jitter, 95% delay vs the paper"
)


def run(full: bool = False, out: Path | None = None, progress=None) -> pd.DataFrame:
    """Table 4 at the reduced or full size (see the module docstring)."""
    return run_setup(TABLE4, full, out, progress)
