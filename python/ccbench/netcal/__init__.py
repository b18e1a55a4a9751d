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
* :mod:`.plots`     α̃(t), CCDFs, bounds (PNG/SVG); :mod:`.cli` the table printer
  (``print_estimate``) and the older ``--from-csv``-only command;
* :mod:`.simprobe`  the probe run in the simulator (:func:`~.simprobe.simulate_probes`),
  behind ``ccbench estimate SCENARIO.toml`` (:mod:`ccbench.cli.estimate`).

The simulator probe
-------------------
``ccbench estimate SCENARIO.toml --r-acc 100pkt/s --r-max 5000pkt/s`` (or
:func:`~.simprobe.simulate_probes`) measures a simulated system the way the paper
measures a testbed:

1. **Traffic.** For each rate ``r_j = j · r_acc`` the scenario is simulated once with
   an extra flow ``"probe"``: CBR over TCP, one ``--size`` write (default 1448 B = one
   MSS, so one write is one segment) every ``size · 8 / r_j`` s, Nagle off
   (``TCP_NODELAY``, the note's pitfall 3), on a dumbbell pair of its own. ``--cc``,
   ``--ecn``, ``--delayed-ack`` set the probe's TCP; the scenario's own flows (there may
   be none) run unchanged beside it. A packet rate "100pkt/s" means 100 writes of
   ``--size`` per second.
2. **Warm-up.** The probe starts at ``t = 0`` with the scenario's flows; its first
   ``--warmup`` (default 10 s) is simulated but not recorded. The analysis samples a
   train from its start, so the probe connection (slow start and its overshoot) and the
   cross traffic must be in steady state when the recorded train begins: simulating
   the warm-up is exactly "start measuring only in steady state", and the recorded train
   needs no further warm-up fraction (``warmup_fraction = 0``).
3. **Delay.** ``t_deliver − t_write`` per message, ``t_write`` the scheduled write
   time (sender-stack buffering counts). The probe table is saved (``--save-probes``)
   in the CSV format of :mod:`.io`; ``--from-csv`` re-analyses it with the same
   configuration and gives the same estimate (rates are analysed in the same order with
   the same seeded random stream; each train is analysed once and that outcome is the
   estimate's, so the simulator run and the CSV analysis cannot disagree).
4. **Train length and extensions.** A train is first long enough for ``I`` samples,
   or as long as the previous rate's final train. When the analysis asks for more
   (:attr:`RateOutcome.needs_packets`: an extension or stationarity retry ran out of
   train) the same run (same seed, hence the same prefix) is simulated again, at least
   twice as long, up to 600 s; that is the simulator's "extend the probing".
5. **Stop rule.** The paper's: the first rate that is not accepted ends the probing;
   higher rates are not simulated.

Choices for the simulator probe (:data:`.simprobe.SIM_PROBING`; the plain
:class:`ProbingConfig` defaults, used for measured CSVs through the Python API, are
unchanged and the existing behaviour for other systems is kept unless these are asked
for):

* **Samples spaced in time** (``mean_gap_s = 0.1`` s, ``--sample-spacing``): the mean
  gap between sampled packets is ``max(2 packets, 0.1 s · packet rate)``. With a gap
  of 2 packets, ``I`` samples cover only ``2I`` packets from the start of the train
  (0.1 s at 4000 pkt/s), far shorter than the time scale of the delays (a mark at
  p = 1e-3 comes every 1000 packets; near the long-term rate the delay's
  autocorrelation lasts seconds), so the tests would judge the first instant of a
  train. A spacing in time makes the sampled span ``I · 0.1 s`` at every rate and the
  extensions (thinning by ``e + 1``) stretch it further, as the paper intends.
* **I = 150** (``--samples``). With ``ξ < 1/I`` the quantile is the sample maximum
  whatever ``I`` is below ``1/ξ`` (ξ = 1e-4 in the paper's Sec. III-C2 needs 10⁴
  samples for a true quantile; with I = 750 it was the maximum too). ``I`` then only
  sets the power of the two tests; 150 samples spaced ≥ 0.1 s give DF-GLS and the
  runs test enough power and keep a 40-rate probing within seconds of simulation per
  rate. The command prints a note when ``ξ < 1/I``. Use ``--samples 750`` for the
  paper's testbed setting.
* **Extensions and dependent rates** (``max_extensions = 6``, ``on_exhausted =
  "accept"``, ``--on-dependent``). Close to the long-term rate the correlation time of
  the delays grows without bound; reaching runs-test independence by the paper's
  linear thinning would need trains of many minutes per rate. After 6 extensions
  (spacing 0.7 s, span 105 s at I = 150) a rate that DF-GLS still finds stationary is
  accepted and flagged ``accepted_dependent`` (its quantile is from dependent samples:
  the ε of that rate is nominal) and a warning is printed. ``--on-dependent stop``
  restores the strict rule (a still-dependent rate ends the probing).
* **Floor rule** (``floor_fraction = 0.5``, ``floor_blocks = 4``). At low rates the
  delay sits at its minimum (propagation + transmission: the probe's queues are empty)
  almost always, with rare spikes after a mark or loss. DF-GLS assumes a continuous
  autoregressive series and on such zero-inflated series sometimes fails to reject a
  unit root (the brief saw probing stop at 400 pkt/s). The rule: when at least half of
  the samples equal the sample minimum (within 1 ns) *and* each quarter of the samples
  contains such a sample, the series is stationary without DF-GLS (the system empties
  again and again throughout the train, i.e. it regenerates; an overloaded system's
  backlog grows and never returns to empty, and a unit-root series does not sit on one
  value half of the time). Independence is still decided by the runs test. Near the
  long-term rate the delay is above its minimum most of the time, so DF-GLS alone
  decides where the probing stops. Off (``None``) in the plain :class:`ProbingConfig`.
* **Clock resolution** (all configurations): before the tests, delays are rounded to
  ``constant_tol_s`` (1 ns, the simulator's clock). Differences of float timestamps
  leave ~1e-15 s of noise on equal delays, which split the ties at the median of the
  runs test at random and made near-constant trains look dependent.
* **Stationarity retries** stay at 2 (the package default), DF-GLS constant-only with
  BIC lags at level 0.05, runs test about the median at level 0.05.
* **Result on the paper's ECN-AIMD system** (Sec. III-C2; ``tests/test_netcal_sim.py``,
  ``examples/estimate_ecn_aimd.toml``): the probe's window is the paper's textbook AIMD
  (``cc = "aimd"``: +1/w per unmarked ACK, halved on every echoed mark, each ACK echoing
  its own segment's mark). Its long-term rate in this simulator is 4215 pkt/s (2 × 2000 s;
  the fluid formula's 4143 ignores that segments in flight at a halving still arrive at
  the old rate for one RTT; an independent ACK-clocked window model gives 4220-4260).
  With r_acc = 100 pkt/s and ξ = 1e-4 the largest stationary rate is **4100 pkt/s**
  (−1.0 % from 4143; the paper found 4100), stopping at 4200, for seeds 1, 3, 4 (4200 for
  seed 2), in about a minute. That needs long trains: the delays' correlation time is
  about 30 s at 4000 pkt/s and 100 s at 4100 pkt/s, so a rate is called non-stationary
  only after DF-GLS fails on trains up to 3000 s (``max_extensions = 200``,
  ``stationarity_retries = 200``, ``max_train_s = 3000``). With :data:`SIM_PROBING`'s
  default 2 retries the probing stops at 3700-4000 pkt/s. Linux Reno with ECN
  (``cc = "reno"``) carries about 4070 pkt/s here: one CWR reduction per RTT with PRR
  and no growth during it.
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
