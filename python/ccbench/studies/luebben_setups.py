"""The systems of Lübben & Fidler's figures (note: ``luebben-fidler-service-curve-benchmark.md``).

* :func:`testbed_dict`: the Emulab dumbbell of Sec. IV (Fig. 7, Table I; the same
  scenario as :mod:`ccbench.studies.luebben_fig9`) under one of the benchmark
  configurations :data:`CONFIGS` (buffer size, AQM, synthetic loss, congestion control),
  with or without a CBR probe at a given rate.
* :func:`ecn_aimd_dict`: the ECN-AIMD simulation of Sec. III-C2 (5 ms each way, no
  capacity limit, every packet ECN-marked with p = 1e-3; ``examples/estimate_ecn_aimd.toml``).
* :func:`window_delays`: the static-window system of Sec. III-C1 (Figs. 4 and 5a), packet
  by packet (the closed form is :func:`ccbench.models.luebben.static_window_service_curve_bits`).
* :func:`video_frames`: the synthetic H.264-like VBR source that stands in for the
  paper's movie traces (Figs. 6 and 17).

Choices the paper leaves open (each documented where it is made):

* **RED** (Fig. 15): Linux adaptive RED (``sch_red`` since 3.3, the paper's kernel is
  3.5), thresholds in 1500-byte packets, ``max_th = 3 · min_th`` (Floyd et al.'s
  recommendation for adaptive RED [47]), hard limit the BDP buffer (167 packets).
* **CoDel**: Linux defaults (target 5 ms, interval 100 ms, limit 1000 packets).
* **Synthetic losses** (Fig. 15b, 17): no cross traffic (the paper: "we omit any cross
  traffic"); the loss acts on the probe's data packets on the bottleneck. The paper
  sets the loss probability "so that the same long-term throughput rate is achieved"
  (9 Mbit/s); we calibrated it in this simulator so that a *greedy* NewReno flow on the
  probe's 20 ms path carries the fair share 9.4 Mbit/s (bisection on goodput, 120 s,
  seeds 1-3): Bernoulli ``p = 0.0055``; periodic every 228th packet
  (``tests/test_luebben_setups.py`` pins both within 15 %).
* **CUBIC and Scalable** (Fig. 16): the simulator's Linux modules with their Linux
  parameters (CUBIC beta 0.7; Scalable 7/8 and +1 per 100 ACKed segments, ``min(cwnd,
  100)``), not the paper's text values (CUBIC 4/5), as the paper ran Linux.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .luebben_fig9 import BUFFER, CROSS_DELAYS_MS, CROSS_TCP, PROBE_DELAY_MS, PROBE_SIZE, PROBE_TCP, RATE, WARMUP_S

#: Net fair share of one of 10 flows at 100 Mbit/s (1448 of 1538 wire bytes), the
#: paper's "9.4 Mbit/s" (note §4 item 6).
FAIR_SHARE_BPS = 9.4e6
#: Probe payload per packet and the paper's probing accuracy of the testbed.
R_ACC_BPS = 1e6

# Calibrated synthetic loss (module docstring).
BERNOULLI_P = 0.0055
PERIODIC_EVERY = 228

_RED = {"kind": "red", "limit": "167pkt", "avpkt": "1500B", "adaptive": True}

#: name -> (queue, congestion control, loss on the bottleneck or None, cross traffic?)
CONFIGS: dict[str, dict[str, Any]] = {
    "droptail-167": {"queue": {"kind": "droptail", "limit": BUFFER}, "cc": "reno", "loss": None, "cross": True},
    "droptail-21": {"queue": {"kind": "droptail", "limit": "21pkt"}, "cc": "reno", "loss": None, "cross": True},
    "droptail-83": {"queue": {"kind": "droptail", "limit": "83pkt"}, "cc": "reno", "loss": None, "cross": True},
    "droptail-251": {"queue": {"kind": "droptail", "limit": "251pkt"}, "cc": "reno", "loss": None, "cross": True},
    "red-5": {"queue": {**_RED, "min_th": "5pkt", "max_th": "15pkt"}, "cc": "reno", "loss": None, "cross": True},
    "red-20": {"queue": {**_RED, "min_th": "20pkt", "max_th": "60pkt"}, "cc": "reno", "loss": None, "cross": True},
    "codel": {"queue": {"kind": "codel"}, "cc": "reno", "loss": None, "cross": True},
    "bernoulli": {"queue": {"kind": "droptail", "limit": BUFFER}, "cc": "reno",
                  "loss": {"kind": "bernoulli", "p": BERNOULLI_P}, "cross": False},
    "periodic": {"queue": {"kind": "droptail", "limit": BUFFER}, "cc": "reno",
                 "loss": {"kind": "periodic", "every": PERIODIC_EVERY}, "cross": False},
    "cubic": {"queue": {"kind": "droptail", "limit": BUFFER}, "cc": "cubic", "loss": None, "cross": True},
    "scalable": {"queue": {"kind": "droptail", "limit": BUFFER}, "cc": "scalable", "loss": None, "cross": True},
}


def testbed_dict(config: str, probe_rate_bps: float | None = None, measure_s: float = 60.0, seed: int = 1,
                 cwnd_sample: str = "0s", greedy_probe: bool = False) -> dict:
    """The dumbbell of Sec. IV under ``config`` (:data:`CONFIGS`). With
    ``probe_rate_bps`` a CBR probe (1448-byte writes, Nagle off, 64 MB buffers) runs
    from 0 to ``WARMUP_S + measure_s``; without it the scenario has only the cross
    traffic (for :func:`ccbench.netcal.simprobe.simulate_probes`, which adds the probe).
    ``greedy_probe``: the probe is a bulk flow instead (loss calibration). Cross flows
    start at ``U(0, 1 s)`` drawn from ``seed``."""
    c = CONFIGS[config]
    rng = np.random.default_rng(seed)
    flows = []
    if probe_rate_bps is not None or greedy_probe:
        app = ({"kind": "bulk"} if greedy_probe else
               {"kind": "cbr", "size": f"{PROBE_SIZE}B", "interval": f"{round(PROBE_SIZE * 8 / probe_rate_bps * 1e9)}ns"})
        flows.append({"name": "probe", "transport": {**PROBE_TCP, "cc": c["cc"]}, "app": app,
                      "stop": f"{round((WARMUP_S + measure_s) * 1000)}ms"})
    if c["cross"]:
        for s in range(3):
            for r in range(3):
                flows.append({"name": f"cross{s + 1}{r + 1}", "transport": {**CROSS_TCP, "cc": c["cc"]},
                              "app": {"kind": "bulk"}, "start": f"{int(rng.integers(0, 1_000_000))}us"})
    # One host pair per flow in flow order; simulate_probes appends the probe last.
    delays = ([PROBE_DELAY_MS] if flows else []) + (list(CROSS_DELAYS_MS) if c["cross"] else [])
    if not flows:
        delays.append(PROBE_DELAY_MS)
    bottleneck: dict[str, Any] = {"down": RATE, "up": RATE, "delay": "0ms", "queue": dict(c["queue"])}
    if c["loss"] is not None:
        bottleneck["loss"] = dict(c["loss"])
    return {
        "run": {"duration": f"{round((WARMUP_S + measure_s + 3.0) * 1000)}ms", "queue_sample": "0s",
                "state_sample": cwnd_sample},
        "topology": {"kind": "dumbbell", "bottleneck": bottleneck,
                     "access": {"pair_delays": [f"{d}ms" for d in delays]}},
        "flows": flows,
    }


# --- Sec. III-C2: the ECN-AIMD system ----------------------------------------------------------

ECN_AIMD_P = 1e-3
ECN_AIMD_T_S = 0.005
#: Ott/Kemperman/Mathis: 1.31 / (sqrt(p) RTT) packets per second (the paper's 4143).
ECN_AIMD_THEORY_PPS = 1.31 / (math.sqrt(ECN_AIMD_P) * 2 * ECN_AIMD_T_S)
ECN_AIMD_TRANSPORT = {"cc": "aimd", "ecn": True, "delayed_ack": False}


def ecn_aimd_dict() -> dict:
    """No flows: 10 Gbit/s links (no capacity limit), 5 ms each way, every packet on the
    forward link ECN-marked with p = 1e-3 (``examples/estimate_ecn_aimd.toml``)."""
    return {
        "run": {"queue_sample": "0s", "state_sample": "0s"},
        "topology": {"kind": "dumbbell", "bottleneck": {
            "down": "10Gbit", "up": "10Gbit", "delay": "5ms",
            "loss": {"kind": "bernoulli", "p": ECN_AIMD_P, "action": "mark"}}},
        "flows": [],
    }


# --- Sec. III-C1: a static window ----------------------------------------------------------------

def window_delays(rate_pps: float, w_pkts: int, c_pps: float, t_s: float, n: int) -> np.ndarray:
    """Delays of ``n`` CBR packets (one every ``1/rate_pps``) through window flow control
    with a static window of ``w_pkts`` packets (Eqs. 2-3, packetised): packet k enters
    the network when it has arrived and packet ``k - w`` has been acknowledged; the
    network serves packets FIFO at ``c_pps`` (``inf``: no capacity limit) and delays
    them by ``t_s``; the ACK takes ``t_s`` back, less the packet's own service time, so
    that a round trip is exactly ``2 t_s`` as in the paper's fluid model (a packetised
    round trip of ``2T + L/C`` would put the long-term rate ``w / (2T + L/C)`` just below
    the fluid ``w / 2T``, and a probe at exactly ``w / 2T`` would look unstable).
    Delay = delivery - arrival."""
    a = np.arange(n) / rate_pps
    d = np.empty(n)
    serv = 0.0 if math.isinf(c_pps) else 1.0 / c_pps
    finish = -math.inf
    for k in range(n):
        release = a[k] if k < w_pkts else max(a[k], d[k - w_pkts] + t_s - serv)
        finish = max(release, finish) + serv
        d[k] = finish + t_s
    return d - a


# --- the video source ----------------------------------------------------------------------------

#: The synthetic H.264-like VBR source (:func:`ccbench.scenario.video.synthetic_vbr`, also the
#: scenario application ``{ kind = "vbr", ... }``): 25 fps, GOP IBBPBBPBBPBB, mean frame sizes
#: I : P : B = 5 : 2 : 1, lognormal per-frame variation with sigma 0.5 (mean preserved). The
#: paper's traces (an H.264 movie, 2000 pkt/s for Fig. 6, 4 Mbit/s for Fig. 17) are not public
#: with the paper; these parameters are a documented stand-in, not a fit.
VIDEO = {"fps": 25.0, "gop": "IBBPBBPBBPBB", "sigma": 0.5, "seed": 7}


def video_app(rate_bps: float, duration_s: float) -> dict:
    """The source as a scenario application table (one message per frame)."""
    return {"kind": "vbr", "rate": f"{rate_bps:.0f}bit", "duration": f"{round(duration_s * 1000)}ms", **VIDEO}


def video_frames(rate_bps: float, duration_s: float) -> tuple[np.ndarray, np.ndarray]:
    """(frame times in s, frame sizes in bytes) of :func:`video_app`'s stream."""
    from ccbench.scenario.video import synthetic_vbr

    t, b = synthetic_vbr(rate_bps, VIDEO["fps"], VIDEO["gop"], round(duration_s * 1e9), VIDEO["sigma"], VIDEO["seed"])
    return np.asarray(t, dtype=float) / 1e9, np.asarray(b, dtype=float)
