"""Analysis of run tables: delay distributions, goodput, loss events, fairness.

Small modules, one purpose each; every function takes plain run tables
(``run.packets``, ``run.drops``, ``run.cwnd``, ``run.flows``, see DESIGN.md "Run
tables") or arrays, and raises :class:`AnalysisError` (a ``ValueError``) on bad input.

* :mod:`~ccbench.analysis.distribution`: the empirical CDF and CCDF (the only ones:
  plots, reports, studies and netcal call these).
* :mod:`~ccbench.analysis.delay`: delay components, CDF/CCDF, percentiles, jitter,
  late fraction, decomposition, additional queuing delay.
* :mod:`~ccbench.analysis.goodput`: goodput series, Jain's index, normalised
  throughput gain.
* :mod:`~ccbench.analysis.losses`: loss events, synchronisation rate, fairness
  convergence time, loss-process burstiness.
* :mod:`~ccbench.analysis.window`: cwnd autocorrelation, transfer-time statistics.
"""

from ._common import AnalysisError
from .delay import (
    COMPONENTS,
    additional_queuing_delay,
    decomposition_summary,
    delay_cdf,
    delay_components,
    delay_percentiles,
    flow_delays,
    jitter,
    jitter_mean_abs_diff,
    jitter_rfc3550,
    late_fraction,
)
from .distribution import ccdf, ecdf
from .goodput import delivered_rate_series, goodput_series, jain_index, normalized_throughput_gain
from .losses import (
    LossBurstiness,
    SyncRate,
    fairness_convergence_time,
    label_loss_events,
    loss_burstiness,
    loss_events,
    loss_intervals_rtt,
    loss_sync_rate,
    plot_loss_burstiness,
    select_losses,
)
from .window import (
    autocorrelation,
    cwnd_autocorrelation,
    resample_hold,
    transfer_time_stats,
    transfers_from_flows,
)

__all__ = [
    "AnalysisError",
    # delay
    "COMPONENTS", "delay_components", "flow_delays", "ecdf", "ccdf", "delay_cdf", "delay_percentiles",
    "jitter_rfc3550", "jitter_mean_abs_diff", "jitter", "late_fraction", "decomposition_summary",
    "additional_queuing_delay",
    # goodput
    "goodput_series", "delivered_rate_series", "jain_index", "normalized_throughput_gain",
    # losses
    "select_losses", "label_loss_events", "loss_events", "SyncRate", "loss_sync_rate",
    "fairness_convergence_time", "loss_intervals_rtt", "LossBurstiness", "loss_burstiness",
    "plot_loss_burstiness",
    # window
    "resample_hold", "autocorrelation", "cwnd_autocorrelation", "transfers_from_flows", "transfer_time_stats",
]
