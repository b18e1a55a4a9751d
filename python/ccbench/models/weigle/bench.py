"""Timings of the LB-CC recursion (``benchmark()``); not run by the test-suite by default."""

from __future__ import annotations

import time

from .params import WeigleParams
from .recursion import build_chain, transfer_time


def benchmark(n: int = 100_000, w_max: float = 1000.0, protocols=("reno", "highspeed"),
              loss: float = 0.01, printer=print) -> dict:
    """Time mean + variance of T_n for n segments and K = w_max; prints and returns the timings.

    For each protocol: the chain build, the full recursion to ``n`` (wall and CPU
    seconds) and the early-stopped recursion (``N_eps``, eps = 1e-12) with extrapolation.
    """
    out = {}
    for proto in protocols:
        params = WeigleParams(protocol=proto, loss=loss, rtt_s=0.1, t0_s=1.0, w_max=w_max, rate_bps=1e9)
        t0 = time.perf_counter()
        ch = build_chain(params)
        t_build = time.perf_counter() - t0
        w0, c0 = time.perf_counter(), time.process_time()
        full = transfer_time(params, n, chain=ch)
        t_full, c_full = time.perf_counter() - w0, time.process_time() - c0
        w0 = time.perf_counter()
        es = transfer_time(params, n, chain=ch, early_stop=True)
        t_es = time.perf_counter() - w0
        rel = abs(es.mean_at(n) - full.mean_at(n)) / full.mean_at(n)
        out[proto] = dict(build_s=t_build, full_wall_s=t_full, full_cpu_s=c_full, early_wall_s=t_es,
                          n_eps=es.n_eps, grid_points=ch.grid.size, ss_depth=ch.c_max, solver=full.solver,
                          mean_s=full.mean_at(n), sd_s=float(full.sd_s[n - 1]), early_rel_err=rel,
                          us_per_level=1e6 * t_full / n)
        printer(f"{proto:10s} K={w_max:g} n={n}: build {t_build:.3f} s | full {t_full:.2f} s wall "
                f"({c_full:.2f} s CPU, {1e6 * t_full / n:.0f} us/level, {ch.grid.size} CA grid points, "
                f"SS depth {ch.c_max}, solver {full.solver}) | early stop N_eps={es.n_eps} {t_es:.2f} s, "
                f"rel. diff {rel:.1e} | E[T_n]={full.mean_at(n):.6g} s sd={full.sd_s[n - 1]:.6g} s")
    return out
