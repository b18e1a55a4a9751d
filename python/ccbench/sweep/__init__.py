"""Parameter sweeps: a scenario x a grid of values x seeds, on one machine or a Dask
cluster, into one results store.

>>> from ccbench.sweep import load_sweep, run_sweep, load_summary   # doctest: +SKIP
>>> spec = load_sweep("examples/sweep_droprules.toml")               # doctest: +SKIP
>>> run_sweep(spec, "runs/droprules", jobs=4)                         # doctest: +SKIP
>>> load_summary("runs/droprules").groupby("flow").loss_rate.median() # doctest: +SKIP

See :mod:`ccbench.sweep.spec` for the sweep file, :mod:`ccbench.sweep.store` for the
directory layout and the DuckDB views.
"""

from .run import SweepResult, default_jobs, run_sweep
from .spec import Point, SweepError, SweepSpec, load_sweep, loads_sweep, point_id
from .store import SweepStore, connect, is_sweep_dir, load_summary

__all__ = [
    "SweepSpec",
    "SweepError",
    "Point",
    "load_sweep",
    "loads_sweep",
    "point_id",
    "run_sweep",
    "SweepResult",
    "default_jobs",
    "SweepStore",
    "load_summary",
    "connect",
    "is_sweep_dir",
]
