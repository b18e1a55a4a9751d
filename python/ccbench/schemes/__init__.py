"""Scheme comparison, Pantheon-style: one scenario, every TCP flow with each congestion
control in turn, several seeds; a per-run table, the throughput/delay plot with
covariance ellipses, goodput over time and RTT fairness, and an HTML report.

>>> from ccbench.schemes import run_schemes, write_schemes_report        # doctest: +SKIP
>>> res = run_schemes("examples/schemes_dumbbell.toml", ["cubic", "bbr"], "runs/schemes", seeds=3)  # doctest: +SKIP
>>> res.runs.groupby("scheme").throughput_bps.mean()                     # doctest: +SKIP
>>> write_schemes_report("runs/schemes")                                 # doctest: +SKIP
"""

from .figures import covariance_ellipse, goodput_over_time, rtt_fairness, throughput_delay
from .report import draw_figures, is_schemes_dir, write_schemes_report
from .run import SchemesError, SchemesResult, jain_index, parse_cc_list, run_schemes, scheme_means, scheme_table

__all__ = [
    "run_schemes",
    "SchemesResult",
    "SchemesError",
    "scheme_table",
    "scheme_means",
    "jain_index",
    "parse_cc_list",
    "covariance_ellipse",
    "throughput_delay",
    "goodput_over_time",
    "rtt_fairness",
    "draw_figures",
    "write_schemes_report",
    "is_schemes_dir",
]
