"""Probing analysis of Lübben & Fidler (Sec. III-B, "practical probing scheme").

Rates ``r_j = j · r_acc`` are probed in ascending order with one constant-rate packet
train each. Per rate, ``I`` end-to-end delays are sampled at random from the train and
tested

* for **stationarity** with the Elliott–Rothenberg–Stock DF-GLS unit-root test
  (:class:`arch.unitroot.DFGLS`); the null hypothesis is a unit root, so the samples
  count as stationary when the null is rejected at level ``alpha_stationarity``;
* for **independence** with the Wald–Wolfowitz runs test (:func:`runs_test`, two-sided
  normal approximation) at level ``alpha_independence``.

If both pass, ``Δ̃^ξ(r)`` is taken from those ``I`` samples and the next rate is probed.
If only stationarity holds, the probing is *extended*: after the ``e``-th extension
``(e + 1)·I`` samples exist and every ``(e + 1)``-th of them is kept (thinning back to
``I``), and both tests are re-run on that subset. The first rate that is not shown
stationary ends the probing; the accepted rates form ``R``.

Choices the paper leaves open (all are fields of :class:`ProbingConfig`)
------------------------------------------------------------------------
* **Sampling** (``sampling``, ``mean_gap``): ``"geometric"`` (default) samples packets
  of the train at i.i.d. geometric index gaps with mean ``mean_gap`` packets (the packet
  analogue of Poisson sampling; the first sample is at a random offset), so that
  ``(e + 1)·I`` samples span ``≈ (e + 1)·I·mean_gap`` packets; ``"systematic"`` takes
  every ``round(mean_gap)``-th packet after a random offset. Default ``mean_gap = 2``.
  The random stream is seeded (``seed``, default 0) so results are reproducible.
  ``mean_gap_s`` (default 0: off) sets a least mean spacing in *time*: the gap in
  packets becomes ``max(mean_gap, mean_gap_s / packet interval)``, the interval being
  the median spacing of the send times (the simulator probe uses 0.1 s; see the
  package docstring).
* **Thinning offset** (``thinning``): after the ``e``-th extension the kept samples
  are, by default (``"last"``), those with 0-based index ``e, 2e + 1, …`` (the last of
  each group of ``e + 1``), i.e. ``samples[e::e+1]``; ``"first"`` keeps
  ``samples[0::e+1]``.
* **Warm-up removal** (``warmup_fraction``, ``warmup_s``): packets sent before
  ``t_start + max(warmup_s, warmup_fraction · train duration)`` are discarded
  (default: the first 10 % of the train). With no send times, the first
  ``warmup_fraction`` of the packets are discarded.
* **DF-GLS**: constant-only detrending (``dfgls_trend="c"``; with ``"ct"`` a linearly
  growing delay — the signature of overload — would look trend-stationary), lag order
  by BIC (``dfgls_method="bic"``) up to arch's default maximum (``dfgls_max_lags``),
  level 0.05. BIC rather than arch's default AIC: on a random-service queue AIC
  over-fitted the lag order and wrongly stopped about 5 % of stationary low-rate
  trains with I = 250 (2 of 40 per rate), BIC none of 240. If arch reports the
  regression infeasible (a locally constant or exactly deterministic series) the
  samples are **not** shown stationary.
* **Runs test** (``runs_cutoff``, ``"median"`` or ``"mean"``): indicator ``x > median`` (ties with the median count as "below", which
  keeps the test meaningful when many delays equal the propagation delay), two-sided,
  normal approximation without continuity correction, level 0.05. Fewer than two
  values on either side gives no evidence of dependence (treated as independent).
* **Constant samples**: when ``max − min ≤ constant_tol_s`` (default 1 ns, the
  simulator's clock resolution) the samples are stationary and independent by
  definition (both tests are undefined for a constant series); this is how the
  deterministic systems of the paper's Fig. 4 are handled.
* **Clock resolution**: before the tests the delays are rounded to ``constant_tol_s``
  (float noise of ~1e-15 s on equal delays would split ties at the median at random).
* **Floor rule** (``floor_fraction``, ``floor_blocks``; default off): when at least
  ``floor_fraction`` of the samples equal the sample minimum (within
  ``constant_tol_s``) and each of ``floor_blocks`` consecutive blocks contains one, the
  samples are stationary without DF-GLS (the system keeps emptying: it regenerates);
  the runs test still decides independence. For delays that sit at the propagation
  delay with rare spikes, on which DF-GLS is unreliable.
* **Stationarity retries** (``stationarity_retries``, default 2): when DF-GLS does not
  reject a unit root, the probing is extended and the thinned subset re-tested, up to
  two more times, before the rate counts as non-stationary. The paper stops at the
  first failure (``stationarity_retries=0`` restores that). Reason: DF-GLS's GLS
  detrending leans on the first observation, so a stationary train whose first sample
  is a large delay occasionally fails (in 1 of 40 repetitions of the random-server
  test this ended the whole probing at the lowest rate, 1 Mbit/s); a genuinely
  overloaded train (growing delays) fails every retry. Retries count towards
  ``max_extensions``.
* **Maximum number of extensions** (``max_extensions``, default 20) and what happens
  when it, or the train, runs out (``on_exhausted``): ``"stop"`` (default) treats the
  rate like a non-stationary one and ends the probing; ``"accept"`` accepts the last
  thinned subset and flags the rate ``accepted_dependent``.
* **Quantile**: from the ``I`` accepted samples, with :func:`~ccbench.netcal.estimator.delay_quantile`.
* One train per rate; whether one TCP connection persists across rates is up to the
  measurement (the simulator integration uses :func:`plan_probe_schedule`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Mapping

import numpy as np
from scipy import stats

from ._checks import check_positive, check_probability, check_xi
from .errors import NetcalError
from .estimator import ServiceCurveEstimate, delay_quantile, estimate_service_curve

__all__ = [
    "ProbingConfig",
    "SampleTest",
    "RateOutcome",
    "ProbingResult",
    "ProbeStep",
    "ProbeSchedule",
    "runs_test",
    "dfgls_test",
    "check_samples",
    "sample_positions",
    "analyse_train",
    "analyse_probes",
    "plan_probe_schedule",
]

_SAMPLING = ("geometric", "systematic")
_ON_EXHAUSTED = ("stop", "accept")


@dataclass(frozen=True)
class ProbingConfig:
    """Every open choice of the probing scheme; see the module docstring."""

    samples: int = 750
    sampling: str = "geometric"
    mean_gap: float = 2.0
    mean_gap_s: float = 0.0
    warmup_fraction: float = 0.1
    warmup_s: float = 0.0
    max_extensions: int = 20
    stationarity_retries: int = 2
    alpha_stationarity: float = 0.05
    alpha_independence: float = 0.05
    dfgls_trend: str = "c"
    dfgls_method: str = "bic"
    dfgls_max_lags: int | None = None
    constant_tol_s: float = 1e-9
    floor_fraction: float | None = None
    floor_blocks: int = 4
    thinning: str = "last"
    runs_cutoff: str = "median"
    on_exhausted: str = "stop"
    seed: int | None = 0

    def __post_init__(self):
        if int(self.samples) != self.samples or self.samples < 20:
            raise NetcalError(f"samples (I) must be an integer >= 20, got {self.samples!r}")
        if self.sampling not in _SAMPLING:
            raise NetcalError(f"sampling must be one of {_SAMPLING}, got {self.sampling!r}")
        if not (self.mean_gap >= 1.0):
            raise NetcalError(f"mean_gap must be >= 1 packet, got {self.mean_gap!r}")
        if not (0.0 <= self.warmup_fraction < 1.0):
            raise NetcalError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}")
        if not (self.mean_gap_s >= 0.0) or not math.isfinite(self.mean_gap_s):
            raise NetcalError(f"mean_gap_s must be a finite number of seconds >= 0, got {self.mean_gap_s!r}")
        if self.warmup_s < 0:
            raise NetcalError(f"warmup_s must be >= 0, got {self.warmup_s!r}")
        if int(self.stationarity_retries) != self.stationarity_retries or self.stationarity_retries < 0:
            raise NetcalError(f"stationarity_retries must be an integer >= 0, got {self.stationarity_retries!r}")
        if int(self.max_extensions) != self.max_extensions or self.max_extensions < 0:
            raise NetcalError(f"max_extensions must be an integer >= 0, got {self.max_extensions!r}")
        check_probability("alpha_stationarity", self.alpha_stationarity)
        check_probability("alpha_independence", self.alpha_independence)
        if self.dfgls_trend not in ("c", "ct"):
            raise NetcalError(f"dfgls_trend must be 'c' or 'ct', got {self.dfgls_trend!r}")
        if self.on_exhausted not in _ON_EXHAUSTED:
            raise NetcalError(f"on_exhausted must be one of {_ON_EXHAUSTED}, got {self.on_exhausted!r}")
        if self.thinning not in ("last", "first"):
            raise NetcalError(f"thinning must be 'last' or 'first', got {self.thinning!r}")
        if self.runs_cutoff not in ("median", "mean"):
            raise NetcalError(f"runs_cutoff must be 'median' or 'mean', got {self.runs_cutoff!r}")
        if self.constant_tol_s < 0:
            raise NetcalError("constant_tol_s must be >= 0")
        if self.floor_fraction is not None and not (0.0 < self.floor_fraction <= 1.0):
            raise NetcalError(f"floor_fraction must be None or in (0, 1], got {self.floor_fraction!r}")
        if int(self.floor_blocks) != self.floor_blocks or self.floor_blocks < 1:
            raise NetcalError(f"floor_blocks must be an integer >= 1, got {self.floor_blocks!r}")


# --------------------------------------------------------------------------- tests


def runs_test(x, cutoff: str | float = "median") -> tuple[float, float]:
    """Wald–Wolfowitz runs test for randomness of the sequence ``x``.

    The indicator is ``x > cutoff`` (ties count as below). Returns ``(z, p)`` with the
    two-sided normal-approximation p-value. With fewer than two values on either side of
    the cutoff the test has no power; ``(0.0, 1.0)`` is returned.
    """
    x = np.asarray(x, dtype=float).ravel()
    if cutoff == "median":
        c = float(np.median(x))
    elif cutoff == "mean":
        c = float(np.mean(x))
    else:
        c = float(cutoff)
    ind = x > c
    n1 = int(ind.sum())
    n0 = int(ind.size - n1)
    if n1 < 2 or n0 < 2:
        return 0.0, 1.0
    runs = 1 + int(np.count_nonzero(ind[1:] != ind[:-1]))
    n = n0 + n1
    mean = 2.0 * n0 * n1 / n + 1.0
    var = 2.0 * n0 * n1 * (2.0 * n0 * n1 - n) / (n * n * (n - 1.0))
    if var <= 0:
        return 0.0, 1.0
    z = (runs - mean) / math.sqrt(var)
    return float(z), float(2.0 * stats.norm.sf(abs(z)))


def dfgls_test(x, config: ProbingConfig = ProbingConfig()) -> tuple[float, float, int] | None:
    """DF-GLS statistic, p-value and lag order, or ``None`` if arch finds it infeasible."""
    from arch.unitroot import DFGLS
    from arch.utility.exceptions import InfeasibleTestException

    y = np.asarray(x, dtype=float).ravel()
    try:
        res = DFGLS(
            y,
            trend=config.dfgls_trend,
            method=config.dfgls_method,
            max_lags=config.dfgls_max_lags,
        )
        stat, p, lags = float(res.stat), float(res.pvalue), int(res.lags)
    except (InfeasibleTestException, np.linalg.LinAlgError, ValueError, ZeroDivisionError):
        return None
    if not (math.isfinite(stat) and math.isfinite(p)):
        return None
    return stat, p, lags


@dataclass(frozen=True)
class SampleTest:
    """Outcome of the two tests on one set of samples."""

    stationary: bool
    independent: bool
    dfgls_stat: float = float("nan")
    dfgls_pvalue: float = float("nan")
    dfgls_lags: int = -1
    runs_z: float = float("nan")
    runs_pvalue: float = float("nan")
    note: str = ""


def _regenerates(y: np.ndarray, config: ProbingConfig) -> bool:
    """The floor rule: at least ``floor_fraction`` of the samples sit at the sample
    minimum (within ``constant_tol_s``) and every one of ``floor_blocks`` consecutive
    blocks of the samples contains such a sample."""
    at_floor = y <= float(np.min(y)) + config.constant_tol_s
    if float(np.mean(at_floor)) < float(config.floor_fraction):  # type: ignore[arg-type]
        return False
    return all(bool(b.any()) for b in np.array_split(at_floor, int(config.floor_blocks)))


def check_samples(x, config: ProbingConfig = ProbingConfig()) -> SampleTest:
    """Stationarity (DF-GLS) and independence (runs test) of one sample set."""
    y = np.asarray(x, dtype=float).ravel()
    if y.size == 0 or not np.all(np.isfinite(y)):
        raise NetcalError("delay samples must be non-empty and finite")
    if float(np.max(y) - np.min(y)) <= config.constant_tol_s:
        return SampleTest(True, True, note="constant samples")
    if config.constant_tol_s > 0:
        # Compare delays at the clock resolution: differences of float timestamps leave
        # ~1e-15 s of noise on equal delays, which would otherwise split ties at the
        # median at random (runs test) and add a spurious variance (DF-GLS).
        y = np.round(y / config.constant_tol_s) * config.constant_tol_s
    if config.floor_fraction is not None and _regenerates(y, config):
        z, pr = runs_test(y, config.runs_cutoff)
        return SampleTest(True, pr >= config.alpha_independence, runs_z=z, runs_pvalue=pr,
                          note="stationary by the floor rule (at the minimum delay in every block)")
    d = dfgls_test(y, config)
    if d is None:
        return SampleTest(False, False, note="DF-GLS infeasible (deterministic series)")
    stat, p, lags = d
    stationary = p < config.alpha_stationarity
    z, pr = runs_test(y, config.runs_cutoff)
    return SampleTest(
        stationary=stationary,
        independent=pr >= config.alpha_independence,
        dfgls_stat=stat,
        dfgls_pvalue=p,
        dfgls_lags=lags,
        runs_z=z,
        runs_pvalue=pr,
    )


# ---------------------------------------------------------------------- sampling


def effective_mean_gap(config: ProbingConfig, packet_interval_s: float | None) -> float:
    """Mean sample spacing in packets: ``max(mean_gap, mean_gap_s / packet interval)``
    (``mean_gap`` alone when ``mean_gap_s = 0`` or the packet interval is unknown)."""
    gap = float(config.mean_gap)
    if config.mean_gap_s > 0 and packet_interval_s is not None and packet_interval_s > 0:
        gap = max(gap, config.mean_gap_s / packet_interval_s)
    return gap


def _packet_interval(t_send: np.ndarray | None) -> float | None:
    """Median spacing of the send times (the CBR interval), or ``None``."""
    if t_send is None or t_send.size < 2:
        return None
    dt = np.diff(t_send)
    med = float(np.median(dt))
    return med if med > 0 else None


def sample_positions(n_available: int, config: ProbingConfig, rng: np.random.Generator,
                     mean_gap: float | None = None) -> np.ndarray:
    """Indices (ascending) of all packets the sampling process picks from a train of
    ``n_available`` packets. The first ``k·I`` of them are the samples after ``k − 1``
    extensions. ``mean_gap`` (packets) overrides ``config.mean_gap``."""
    gap = float(config.mean_gap if mean_gap is None else mean_gap)
    if n_available <= 0:
        return np.zeros(0, dtype=np.int64)
    if config.sampling == "systematic":
        step = max(int(round(gap)), 1)
        start = int(rng.integers(0, step))
        return np.arange(start, n_available, step, dtype=np.int64)
    p = 1.0 / gap
    n_draw = int(n_available * p * 1.1) + 50
    gaps = rng.geometric(p, size=n_draw)
    pos = np.cumsum(gaps) - 1
    while pos[-1] < n_available - 1 and pos.size < 10 * n_available + 100:
        more = pos[-1] + np.cumsum(rng.geometric(p, size=n_draw))
        pos = np.concatenate([pos, more])
    return pos[pos < n_available].astype(np.int64)


@dataclass(frozen=True)
class RateOutcome:
    """The analysis of one probe rate.

    ``status`` is ``"accepted"``, ``"accepted_dependent"`` (``on_exhausted="accept"``),
    ``"nonstationary"``, ``"dependent"`` (independence never reached within
    ``max_extensions``), ``"too_short"`` (the train ran out of packets) or
    ``"not_analysed"`` (above the stopping rate).
    """

    rate_bps: float
    status: str
    extensions: int = 0
    n_packets: int = 0
    test: SampleTest | None = None
    quantile_s: float = float("nan")
    samples_s: np.ndarray | None = field(default=None, repr=False)
    reason: str = ""
    #: When the train ran out before the analysis could finish (``too_short``, or a
    #: retry/extension that found too few packets): how many packets after the
    #: warm-up the next step needs (0 otherwise). A simulator can re-run a longer train.
    needs_packets: int = 0

    @property
    def accepted(self) -> bool:
        return self.status in ("accepted", "accepted_dependent")


def _drop_warmup(delays: np.ndarray, t_send: np.ndarray | None, config: ProbingConfig) -> np.ndarray:
    n = delays.size
    if n == 0:
        return delays
    if t_send is None:
        return delays[int(math.floor(config.warmup_fraction * n)):]
    t0, t1 = float(t_send[0]), float(t_send[-1])
    cut = t0 + max(config.warmup_s, config.warmup_fraction * (t1 - t0))
    return delays[t_send >= cut]


def analyse_train(
    rate_bps: float,
    delays_s,
    xi: float,
    t_send_s=None,
    config: ProbingConfig = ProbingConfig(),
    rng: np.random.Generator | None = None,
) -> RateOutcome:
    """Sample, test, extend/thin and take the quantile for one packet train."""
    xi = check_xi(xi)
    d = np.asarray(delays_s, dtype=float).ravel()
    ts = None if t_send_s is None else np.asarray(t_send_s, dtype=float).ravel()
    if ts is not None and ts.shape != d.shape:
        raise NetcalError("t_send_s and delays_s differ in length")
    if not np.all(np.isfinite(d)):
        raise NetcalError(f"rate {rate_bps:g} bit/s: delays must be finite")
    rng = np.random.default_rng(config.seed) if rng is None else rng
    body = _drop_warmup(d, ts, config)
    gap = effective_mean_gap(config, _packet_interval(ts))
    pos = sample_positions(body.size, config, rng, gap)
    I = int(config.samples)
    last: tuple[np.ndarray, SampleTest, int] | None = None  # stationary but dependent
    last_test: SampleTest | None = None
    st_failures = 0
    for e in range(int(config.max_extensions) + 1):
        k = (e + 1) * I
        if pos.size < k:
            need = int(math.ceil(k * gap * 1.05)) + 1
            reason = (
                f"train too short: {body.size} packets after warm-up give {pos.size} samples,"
                f" {k} needed for extension {e}"
            )
            if last_test is not None and not last_test.stationary:
                return RateOutcome(rate_bps, "nonstationary", e - 1, body.size, last_test,
                                   reason=f"DF-GLS does not reject a unit root; {reason}",
                                   needs_packets=need)
            if last is not None and config.on_exhausted == "accept":
                sub, test, ee = last
                return RateOutcome(rate_bps, "accepted_dependent", ee, body.size, test,
                                   delay_quantile(sub, xi), sub, reason, needs_packets=need)
            status = "too_short" if e == 0 else "dependent"
            return RateOutcome(rate_bps, status, max(e - 1, 0), body.size, last_test, reason=reason,
                               needs_packets=need)
        sub = body[pos[:k]][(e if config.thinning == "last" else 0) :: e + 1]
        test = check_samples(sub, config)
        last_test = test
        if not test.stationary:
            st_failures += 1
            if st_failures > config.stationarity_retries or e == config.max_extensions:
                return RateOutcome(rate_bps, "nonstationary", e, body.size, test,
                                   reason=test.note or "DF-GLS does not reject a unit root")
            continue
        if test.independent:
            return RateOutcome(rate_bps, "accepted", e, body.size, test,
                               delay_quantile(sub, xi), sub)
        last = (sub, test, e)
    sub, test, ee = last  # type: ignore[misc]
    reason = f"runs test still rejects independence after {config.max_extensions} extensions"
    if config.on_exhausted == "accept":
        return RateOutcome(rate_bps, "accepted_dependent", ee, body.size, test,
                           delay_quantile(sub, xi), sub, reason)
    return RateOutcome(rate_bps, "dependent", ee, body.size, test, reason=reason)


@dataclass(frozen=True)
class ProbingResult:
    """All per-rate outcomes, the accepted set ``R`` and where probing stopped."""

    xi: float
    config: ProbingConfig
    outcomes: tuple[RateOutcome, ...]
    warnings: tuple[str, ...] = ()

    @property
    def accepted(self) -> tuple[RateOutcome, ...]:
        return tuple(o for o in self.outcomes if o.accepted)

    @property
    def rates_bps(self) -> np.ndarray:
        return np.array([o.rate_bps for o in self.accepted], dtype=float)

    @property
    def quantiles_s(self) -> np.ndarray:
        return np.array([o.quantile_s for o in self.accepted], dtype=float)

    @property
    def stop_rate_bps(self) -> float | None:
        """The first rate not accepted (the stopping rate), or ``None``."""
        for o in self.outcomes:
            if not o.accepted and o.status != "not_analysed":
                return o.rate_bps
        return None

    @property
    def eps(self) -> float:
        return len(self.accepted) * self.xi

    def estimate(self, t_grid_s=None) -> ServiceCurveEstimate:
        """The service-curve estimate from the accepted rates (Eq. 7)."""
        if not self.accepted:
            first = self.outcomes[0] if self.outcomes else None
            why = "" if first is None else (
                f"; the lowest rate {first.rate_bps:g} bit/s was {first.status}"
                f"{': ' + first.reason if first.reason else ''}"
            )
            raise NetcalError("no probe rate showed a stationary, independent delay sample" + why)
        return estimate_service_curve(self.rates_bps, self.quantiles_s, self.xi, t_grid_s, probing=self)

    def to_frame(self):
        import pandas as pd

        rows = []
        for o in self.outcomes:
            t = o.test
            rows.append({
                "rate_bps": o.rate_bps, "status": o.status, "extensions": o.extensions,
                "n_packets": o.n_packets, "quantile_s": o.quantile_s,
                "dfgls_stat": np.nan if t is None else t.dfgls_stat,
                "dfgls_pvalue": np.nan if t is None else t.dfgls_pvalue,
                "runs_z": np.nan if t is None else t.runs_z,
                "runs_pvalue": np.nan if t is None else t.runs_pvalue,
                "reason": o.reason,
            })
        return pd.DataFrame(rows)


def _check_grid(rates: np.ndarray, r_acc: float) -> None:
    for j, r in enumerate(rates, start=1):
        expected = j * r_acc
        if not math.isclose(r, expected, rel_tol=1e-6, abs_tol=1e-6):
            raise NetcalError(
                f"probe rates must be r_j = j * r_acc ({r_acc:g} bit/s) without gaps: "
                f"expected {expected:g} bit/s at step {j}, found {r:g} bit/s "
                f"(rates present: {', '.join(f'{x:g}' for x in rates)})"
            )


def analyse_probes(
    trains,
    xi: float,
    r_acc_bps: float | None = None,
    config: ProbingConfig = ProbingConfig(),
) -> ProbingResult:
    """Run the probing analysis over all rates in ascending order.

    ``trains`` is either a probe DataFrame (columns of :mod:`ccbench.netcal.io`) or a
    mapping ``rate_bps -> (t_send_s, delays_s)`` (``t_send_s`` may be ``None``). With
    ``r_acc_bps`` the rates must be exactly ``r_acc, 2 r_acc, …`` (checked); without it
    the rates present are used as they are.
    """
    xi = check_xi(xi)
    if not isinstance(trains, Mapping):
        from .io import trains_from_frame

        trains = trains_from_frame(trains)
    if len(trains) == 0:
        raise NetcalError("no probe trains given")
    rates = np.array(sorted(float(r) for r in trains), dtype=float)
    if np.any(rates <= 0):
        raise NetcalError("probe rates must be positive (bit/s)")
    if r_acc_bps is not None:
        _check_grid(rates, check_positive("r_acc_bps", r_acc_bps))
    by_rate = {float(r): v for r, v in trains.items()}
    rng = np.random.default_rng(config.seed)
    outcomes: list[RateOutcome] = []
    stopped = False
    for r in rates:
        if stopped:
            outcomes.append(RateOutcome(float(r), "not_analysed", reason="above the stopping rate"))
            continue
        t_send, delays = by_rate[float(r)]
        o = analyse_train(float(r), delays, xi, t_send, config, rng)
        outcomes.append(o)
        if not o.accepted:
            stopped = True
    warnings: list[str] = []
    if not stopped:
        warnings.append(
            f"every probed rate up to {rates[-1]:g} bit/s was stationary: the long-term "
            "attainable rate may be higher than the estimate shows"
        )
    if any(o.status == "accepted_dependent" for o in outcomes):
        warnings.append("some rates were accepted without passing the runs test (on_exhausted='accept')")
    return ProbingResult(xi, config, tuple(outcomes), tuple(warnings))


# ---------------------------------------------------------------------- planning


@dataclass(frozen=True)
class ProbeStep:
    """One constant-rate train: rate, packet size, spacing, length."""

    rate_bps: float
    packet_bytes: int
    interval_s: float
    n_packets: int
    warmup_packets: int

    @property
    def duration_s(self) -> float:
        return self.n_packets * self.interval_s


@dataclass(frozen=True)
class ProbeSchedule:
    """Ascending rate steps ``r_j = j · r_acc`` for a simulator or testbed run.

    Probing may stop early: run the steps in order and stop after the first rate that
    :func:`analyse_train` does not accept.
    """

    r_acc_bps: float
    packet_bytes: int
    steps: tuple[ProbeStep, ...]
    config: ProbingConfig

    @property
    def rates_bps(self) -> np.ndarray:
        return np.array([s.rate_bps for s in self.steps])

    @property
    def total_duration_s(self) -> float:
        return float(sum(s.duration_s for s in self.steps))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame([
            {"rate_bps": s.rate_bps, "packet_bytes": s.packet_bytes, "interval_s": s.interval_s,
             "n_packets": s.n_packets, "warmup_packets": s.warmup_packets, "duration_s": s.duration_s}
            for s in self.steps
        ])


def plan_probe_schedule(
    r_acc_bps: float,
    r_max_bps: float,
    packet_bytes: int = 1500,
    config: ProbingConfig = ProbingConfig(),
    planned_extensions: int = 4,
    min_train_s: float = 0.0,
    safety: float = 1.2,
) -> ProbeSchedule:
    """Plan rates, train lengths and packet size for a probe run.

    Rates are ``j · r_acc`` for ``j = 1 … ⌊r_max / r_acc⌋`` (choose ``r_max`` above the
    expected long-term rate, e.g. the bottleneck capacity, so that the stopping rate is
    reached). Each train is long enough for the warm-up plus ``planned_extensions``
    extensions of ``I`` samples at ``mean_gap`` packets each, times ``safety``:

        n = ⌈ (I · mean_gap · (planned_extensions + 1) · safety) / (1 − warmup_fraction) ⌉

    and at least ``min_train_s`` (and ``warmup_s`` plus the sampled part) long. Packets
    are spaced ``packet_bytes · 8 / r`` seconds.
    """
    r_acc = check_positive("r_acc_bps", r_acc_bps)
    r_max = check_positive("r_max_bps", r_max_bps)
    if r_max < r_acc:
        raise NetcalError(f"r_max_bps ({r_max:g}) is below r_acc_bps ({r_acc:g})")
    if int(packet_bytes) != packet_bytes or packet_bytes <= 0:
        raise NetcalError(f"packet_bytes must be a positive integer, got {packet_bytes!r}")
    if planned_extensions < 0 or safety < 1.0:
        raise NetcalError("planned_extensions must be >= 0 and safety >= 1")
    n_steps = int(math.floor(r_max / r_acc + 1e-9))
    sampled = config.samples * config.mean_gap * (planned_extensions + 1) * safety
    steps = []
    for j in range(1, n_steps + 1):
        r = j * r_acc
        interval = packet_bytes * 8.0 / r
        n = int(math.ceil(sampled / (1.0 - config.warmup_fraction)))
        n_warm_s = int(math.ceil(config.warmup_s / interval))
        n = max(n, n_warm_s + int(math.ceil(sampled)), int(math.ceil(min_train_s / interval)))
        warm = max(int(math.ceil(config.warmup_fraction * n)), n_warm_s)
        steps.append(ProbeStep(r, int(packet_bytes), interval, n, warm))
    return ProbeSchedule(r_acc, int(packet_bytes), tuple(steps), config)


def with_config(config: ProbingConfig, **changes) -> ProbingConfig:
    """A copy of ``config`` with some fields changed (validated)."""
    return replace(config, **changes)
