"""One-call estimation from a probe table or CSV file."""

from __future__ import annotations

from .estimator import ServiceCurveEstimate
from .io import load_probe_csv, trains_from_frame
from .probing import ProbingConfig, analyse_probes

__all__ = ["estimate_from_frame", "estimate_from_file"]


def estimate_from_frame(
    df,
    xi: float = 0.05,
    r_acc_bps: float | None = None,
    config: ProbingConfig | None = None,
    t_grid_s=None,
) -> ServiceCurveEstimate:
    """Validate a probe DataFrame (columns ``rate_bps, seq, bytes, t_send_s, t_recv_s``),
    run the probing analysis and return the ε-effective service-curve estimate.

    The per-rate outcomes are in ``result.probing``. Raises
    :class:`~ccbench.netcal.errors.NetcalError` on bad input or when no rate is stationary.
    """
    res = analyse_probes(trains_from_frame(df), xi, r_acc_bps, config or ProbingConfig())
    return res.estimate(t_grid_s)


def estimate_from_file(path, xi: float = 0.05, r_acc_bps: float | None = None,
                       config: ProbingConfig | None = None, t_grid_s=None) -> ServiceCurveEstimate:
    """:func:`estimate_from_frame` on a probe CSV (format: :mod:`ccbench.netcal.io`)."""
    return estimate_from_frame(load_probe_csv(path), xi, r_acc_bps, config, t_grid_s)
