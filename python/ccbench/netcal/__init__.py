"""Service-curve benchmark of Lübben & Fidler: probing, estimator, bounds, decomposition.

"A Benchmark for the Performance of Time-varying Closed-loop Flow Control with
Application to TCP" (study note: ``shared/notes/luebben-fidler-service-curve-benchmark.md``).

Typical use::

    from ccbench import netcal
    est = netcal.estimate_from_frame(df, xi=0.05, r_acc_bps=1e6)   # or estimate_from_file
    est.eps, est.alpha([0.1, 1.0])                                   # ε = |R|·ξ, α̃(t)
    b = netcal.delay_bounds(trace_t, trace_bytes, est)               # per-packet/envelope bounds

Pure Python (numpy, scipy, pandas, arch's DF-GLS, an own runs test that matches
statsmodels' ``runstest_1samp`` on tie-free data); no compiled extension needed.

Modules (one purpose each; every choice the paper leaves open is documented in the
module that makes it and is a parameter):

* :mod:`.probing`   rate steps, random sampling, DF-GLS + runs test, extension and
  thinning, stop rule (:class:`ProbingConfig`), probe-schedule planning;
* :mod:`.estimator` ``Δ̃^ξ`` order statistic, ``S̃^ε``, pseudo-inverse, ``α̃^ε``,
  ``ε = |R|·ξ`` (:class:`ServiceCurveEstimate`);
* :mod:`.bounds`    per-packet delay/backlog bounds (O(N log N) monotone divide and
  conquer), envelope delay/backlog bounds;
* :mod:`.envelope`  empirical envelope on a lag grid (conservative between lags);
* :mod:`.decomposition` four-timestamp delay components, CCDFs, P[sender buffering];
* :mod:`.io`        CSV/DataFrame formats and validation (:class:`NetcalError`);
* :mod:`.plots`     α̃(t), CCDFs, bounds (PNG/SVG); :mod:`.cli` the typer command.
"""

from __future__ import annotations

from .bounds import (
    DelayBoundResult,
    backlog_bound,
    delay_bounds,
    envelope_backlog_bound,
    envelope_delay_bound,
    per_packet_backlog_bound,
    per_packet_delay_bound,
)
from .decomposition import (
    COMPONENTS,
    buffering_vs_utilisation,
    ccdf,
    component_ccdfs,
    delay_components,
    sender_buffering_probability,
)
from .envelope import EmpiricalEnvelope, empirical_envelope
from .errors import NetcalError
from .estimator import (
    ServiceCurveEstimate,
    attainable_rate,
    delay_quantile,
    estimate_service_curve,
    log_time_grid,
    service_curve,
    service_curve_inverse,
)
from .io import (
    PROBE_COLUMNS,
    TIMESTAMP_COLUMNS,
    TRACE_COLUMNS,
    load_probe_csv,
    load_timestamps_csv,
    load_trace_csv,
    trains_from_frame,
    validate_probe_frame,
    validate_timestamp_frame,
    validate_trace_frame,
)
from .pipeline import estimate_from_file, estimate_from_frame
from .probing import (
    ProbeSchedule,
    ProbeStep,
    ProbingConfig,
    ProbingResult,
    RateOutcome,
    SampleTest,
    analyse_probes,
    analyse_train,
    check_samples,
    dfgls_test,
    plan_probe_schedule,
    runs_test,
)


def __getattr__(name: str):
    # Plots and the typer command import matplotlib/typer lazily.
    if name in ("plot_attainable_rate", "plot_delay_ccdfs", "plot_delay_bound", "plot_buffering"):
        from . import plots

        return getattr(plots, name)
    if name == "estimate_from_csv":
        from .cli import estimate_from_csv

        return estimate_from_csv
    raise AttributeError(f"module 'ccbench.netcal' has no attribute {name!r}")


__all__ = [
    "NetcalError",
    # probing
    "ProbingConfig", "ProbingResult", "RateOutcome", "SampleTest", "ProbeSchedule", "ProbeStep",
    "analyse_probes", "analyse_train", "check_samples", "dfgls_test", "runs_test", "plan_probe_schedule",
    # estimator
    "ServiceCurveEstimate", "estimate_service_curve", "delay_quantile", "service_curve",
    "service_curve_inverse", "attainable_rate", "log_time_grid",
    # bounds and envelope
    "DelayBoundResult", "delay_bounds", "per_packet_delay_bound", "per_packet_backlog_bound",
    "backlog_bound", "envelope_delay_bound", "envelope_backlog_bound",
    "EmpiricalEnvelope", "empirical_envelope",
    # decomposition
    "COMPONENTS", "delay_components", "ccdf", "component_ccdfs", "sender_buffering_probability",
    "buffering_vs_utilisation",
    # input
    "PROBE_COLUMNS", "TIMESTAMP_COLUMNS", "TRACE_COLUMNS", "load_probe_csv", "load_timestamps_csv",
    "load_trace_csv", "trains_from_frame", "validate_probe_frame", "validate_timestamp_frame",
    "validate_trace_frame", "estimate_from_frame", "estimate_from_file",
    # plots and CLI (lazy)
    "plot_attainable_rate", "plot_delay_ccdfs", "plot_delay_bound", "plot_buffering", "estimate_from_csv",
]
