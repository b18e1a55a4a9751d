"""The simulations behind :mod:`ccbench.studies.luebben`, as independent tasks run in
parallel.

Every task is a plain dict in, a small picklable dict of numpy arrays out, so the same
functions run in a local process pool or on a Dask cluster:

* :func:`pmap` runs tasks with the sweep machinery's pool conventions
  (:func:`ccbench.sweep.run.default_jobs` workers that die with their parent); when the
  environment variable ``CCBENCH_DASK_SCHEDULER`` names a Dask scheduler
  (``tcp://host:8786``, the ``cluster`` extra) the tasks go there instead, as
  ``ccbench sweep --scheduler`` does.
* Tasks: :func:`task_estimate` (the rate-stepped probing of one testbed configuration),
  :func:`task_fixed_rate` (one CBR probe run: delay components and the probe's cwnd),
  :func:`task_ecn_estimate` (probing the ECN-AIMD system), :func:`task_video_reps`
  (a block of repetitions of the video over the ECN-AIMD system, reduced to the largest
  delays per frame), :func:`task_aimd_cwnd` (the Sec. V-C window under Bernoulli or
  periodic congestion signals).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import luebben_setups as setups

DASK_ENV = "CCBENCH_DASK_SCHEDULER"
DASK_TIMEOUT_S = 30  # seconds to reach the scheduler
PKT_BITS = setups.PROBE_SIZE * 8


def pmap(fn: Callable[[dict], dict], tasks: Sequence[dict], jobs: int | None = None,
         progress: Callable[[int, int], None] | None = None) -> list[dict]:
    """``[fn(t) for t in tasks]`` in parallel (order kept)."""
    tasks = list(tasks)
    out: list[Any] = [None] * len(tasks)
    done = 0

    def tick():
        if progress is not None:
            progress(done, len(tasks))

    address = os.environ.get(DASK_ENV)
    if address:
        from ccbench.sweep.spec import SweepError

        try:
            from dask.distributed import Client, as_completed
        except ImportError as e:
            raise SweepError(f"{DASK_ENV}: dask.distributed is not installed ({e}) (accepted: the cluster extra, "
                             "or unset the variable for a local pool)") from None
        try:
            client = Client(address, timeout=DASK_TIMEOUT_S)
        except Exception as e:  # noqa: BLE001 - any connection failure is the user's address
            raise SweepError(f"{DASK_ENV}: cannot connect to {address!r} ({e}) (accepted: the address of a running "
                             "dask scheduler, e.g. tcp://host:8786)") from None
        with client:
            futs = {client.submit(fn, t, pure=False): i for i, t in enumerate(tasks)}
            for f in as_completed(futs):
                out[futs[f]] = f.result()
                done += 1
                tick()
        return out
    from ccbench.sweep.run import default_jobs

    jobs = max(1, min(jobs or default_jobs(), len(tasks)))
    if jobs == 1:
        for i, t in enumerate(tasks):
            out[i] = fn(t)
            done += 1
            tick()
        return out
    from concurrent.futures import ProcessPoolExecutor, as_completed as done_order

    from ccbench.sweep.run import _die_with_parent

    with ProcessPoolExecutor(max_workers=jobs, initializer=_die_with_parent, initargs=(os.getpid(),)) as ex:
        futs = {ex.submit(fn, t): i for i, t in enumerate(tasks)}
        for f in done_order(futs):
            out[futs[f]] = f.result()
            done += 1
            tick()
    return out


def _simulate(d: dict, seed: int):
    from ccbench.backends.sim import simulate
    from ccbench.scenario import Scenario

    return simulate(Scenario.from_dict(d), seed=seed)


def _outcomes(est) -> dict:
    o = est.probing.outcomes
    return {
        "rates_bps": np.array([x.rate_bps for x in o]),
        "status": [x.status for x in o],
        "extensions": np.array([x.extensions for x in o]),
        # the accepted samples, so any quantile (xi = 0.05, 0.01) can be taken later
        "samples": [None if x.samples_s is None else np.asarray(x.samples_s, dtype=float) for x in o],
    }


def task_estimate(task: dict) -> dict:
    """Probe testbed configuration ``task["config"]`` at 1, 2, ... Mbit/s (r_acc = 1 Mbit/s,
    up to 12 Mbit/s) with ``task["samples"]`` samples per rate, xi = 0.05; ``task["probing"]``
    overrides fields of :data:`~ccbench.netcal.simprobe.SIM_PROBING`."""
    from ccbench.netcal.probing import with_config
    from ccbench.netcal.simprobe import SIM_PROBING, simulate_probes

    cfg = with_config(SIM_PROBING, samples=int(task["samples"]), **task.get("probing", {}))
    base = setups.testbed_dict(task["config"], None, 0.0, seed=task["seed"])
    base["flows"] = [f for f in base["flows"] if f["name"] != "probe"]
    _, est = simulate_probes(base, setups.R_ACC_BPS, 12e6, xi=0.05, config=cfg,
                             transport={**setups.PROBE_TCP, "cc": setups.CONFIGS[task["config"]]["cc"]},
                             seed=task["seed"], max_train_s=task.get("max_train_s", 600.0))
    return {"config": task["config"], **_outcomes(est)}


def task_fixed_rate(task: dict) -> dict:
    """One run of ``task["config"]`` with a CBR probe at ``task["rate_bps"]``: the probe's
    delay components after the warm-up, and (``cwnd``) its cwnd every 10 ms."""
    from .luebben_fig9 import probe_components

    d = setups.testbed_dict(task["config"], task["rate_bps"], task["measure_s"], seed=task["seed"],
                            cwnd_sample="10ms" if task.get("cwnd") else "0s")
    run = _simulate(d, task["seed"])
    c = probe_components(run)
    c = c[c["delivered"]]
    out = {k: c[f"{k}_s"].to_numpy(dtype=np.float32) for k in ("sender", "network", "receiver", "total")}
    out["t_write"] = c["t_write"].to_numpy(dtype=np.float64)
    if task.get("cwnd"):
        w = run.cwnd
        w = w[(w["flow"] == "probe") & (w["t"] >= setups.WARMUP_S) & (w["t"] <= setups.WARMUP_S + task["measure_s"])]
        out["cwnd"] = w["cwnd_pkts"].to_numpy(dtype=np.float32)
    return {**{k: task[k] for k in ("config", "rate_bps", "seed")}, **out}


def ecn_probing_config(samples: int):
    """The ECN-AIMD probing of ``examples/estimate_ecn_aimd.toml``: near the long-term rate
    the delays' correlation time is tens of seconds, so a rate is called non-stationary
    only after DF-GLS failed on long trains (netcal package docstring)."""
    from ccbench.netcal.probing import with_config
    from ccbench.netcal.simprobe import SIM_PROBING

    return with_config(SIM_PROBING, samples=int(samples), max_extensions=200, stationarity_retries=200)


def task_ecn_estimate(task: dict) -> dict:
    """Probe the ECN-AIMD system at ``r_acc_pps`` steps with ``xi``."""
    from ccbench.netcal.simprobe import simulate_probes

    r_acc = task["r_acc_pps"] * PKT_BITS
    _, est = simulate_probes(setups.ecn_aimd_dict(), r_acc, 6000 * PKT_BITS, xi=task["xi"],
                             config=ecn_probing_config(task["samples"]), transport=setups.ECN_AIMD_TRANSPORT,
                             warmup_s=5.0, seed=task["seed"], max_train_s=task.get("max_train_s", 3000.0))
    return {"r_acc_pps": task["r_acc_pps"], **_outcomes(est)}


def video_dict(rate_bps: float, warmup_s: float, measure_s: float) -> dict:
    """The video (one message per frame) over the ECN-AIMD system, from t = 0; the
    first ``warmup_s`` of frames bring the window to steady state and are not measured."""
    d = setups.ecn_aimd_dict()
    d["run"]["duration"] = f"{round((warmup_s + measure_s + 5.0) * 1000)}ms"
    d["flows"] = [{"name": "video", "transport": {"kind": "tcp", "nagle": False, "sndbuf": "64MB", "rcvbuf": "64MB",
                                                   **setups.ECN_AIMD_TRANSPORT},
                   "app": setups.video_app(rate_bps, warmup_s + measure_s),
                   "stop": f"{round((warmup_s + measure_s) * 1000)}ms"}]
    return d


def task_video_reps(task: dict) -> dict:
    """Repetitions ``task["seeds"]`` of :func:`video_dict`; returns, per measured frame,
    the ``task["k"]`` largest delays over the block (enough for the (1 - eps)-quantile
    over all repetitions) and the number of repetitions."""
    d = video_dict(task["rate_bps"], task["warmup_s"], task["measure_s"])
    rows = []
    for s in task["seeds"]:
        p = _simulate(d, int(s)).packets
        p = p[(p["flow"] == "video") & (p["t_write"] >= task["warmup_s"])]
        rows.append((p["t_deliver"] - p["t_write"]).to_numpy(dtype=np.float64))
    n = min(len(r) for r in rows)
    m = np.stack([r[:n] for r in rows])
    k = min(int(task["k"]), m.shape[0])
    return {"top": np.sort(m, axis=0)[-k:], "reps": m.shape[0]}


def merge_top(blocks: list[dict], k: int) -> tuple[np.ndarray, int]:
    """The ``k`` largest delays per frame over all blocks (ascending), and the total
    number of repetitions."""
    n = min(b["top"].shape[1] for b in blocks)
    allt = np.concatenate([b["top"][:, :n] for b in blocks], axis=0)
    return np.sort(allt, axis=0)[-k:], int(sum(b["reps"] for b in blocks))


def task_aimd_cwnd(task: dict) -> dict:
    """Sec. V-C: the textbook AIMD window (``cc = "aimd"``, every ACK counts) of a 5 Mbit/s
    CBR over a 20 ms path with no capacity limit, congestion signalled by ECN marks that
    are Bernoulli (``p``) or periodic (every ``every``-th packet); cwnd every 10 ms."""
    loss = ({"kind": "bernoulli", "p": task["p"], "action": "mark"} if task["kind"] == "bernoulli"
            else {"kind": "periodic", "every": task["every"], "action": "mark"})
    dur = 10.0 + task["measure_s"]
    d = {"run": {"duration": f"{round(dur * 1000)}ms", "queue_sample": "0s", "state_sample": "10ms"},
         "topology": {"kind": "dumbbell", "bottleneck": {"down": "10Gbit", "up": "10Gbit", "delay": "10ms", "loss": loss}},
         "flows": [{"name": "app", "transport": {"kind": "tcp", "nagle": False, "sndbuf": "64MB", "rcvbuf": "64MB",
                                                  **setups.ECN_AIMD_TRANSPORT},
                    "app": {"kind": "cbr", "size": f"{setups.PROBE_SIZE}B",
                            "interval": f"{round(PKT_BITS / task['rate_bps'] * 1e9)}ns"}}]}
    run = _simulate(d, task["seed"])
    w = run.cwnd
    w = w[(w["flow"] == "app") & (w["t"] >= 10.0)]
    p = run.packets
    p = p[(p["flow"] == "app") & (p["t_write"] >= 10.0)]
    snd = (p["t_first_tx"] - p["t_write"]).to_numpy(dtype=float)
    return {"kind": task["kind"], "t": w["t"].to_numpy(dtype=float), "cwnd": w["cwnd_pkts"].to_numpy(dtype=float),
            "p_buffered": float(np.mean(snd > 1e-6)) if snd.size else float("nan")}


TASKS = {"estimate": task_estimate, "fixed": task_fixed_rate, "ecn": task_ecn_estimate, "video": task_video_reps,
         "aimd": task_aimd_cwnd}


def run_task(task: dict) -> dict:
    """Dispatch on ``task["fn"]`` (one pool for every kind of task); the result keeps
    ``fn`` so the caller can sort them."""
    return {"fn": task["fn"], **TASKS[task["fn"]](task)}
