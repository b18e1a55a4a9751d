"""Simulator fidelity against kernel TCP over a matrix of scenarios (issue 24).

>>> from ccbench.fidelity import load_matrix, run_fidelity      # doctest: +SKIP
>>> res = run_fidelity(load_matrix("examples/fidelity/default.toml"), "runs/fidelity", ["sim", "emu"])  # doctest: +SKIP
>>> res.comparison[res.comparison.ok == False]                  # doctest: +SKIP

:mod:`.matrix` (the matrix file), :mod:`.metrics` (per-run metrics), :mod:`.compare`
(means, errors, targets), :mod:`.run` (both backends on the sweep machinery),
:mod:`.report` (HTML overlays and ``docs/FIDELITY.md``).
"""

from .compare import TARGETS, Target, compare, worst_rows
from .matrix import MIXES, Matrix, MatrixError, MatrixRow, load_matrix, loads_matrix
from .metrics import METRICS, run_metrics
from .run import FidelityResult, load_kernel_table, parse_backends, run_fidelity

__all__ = [
    "Matrix", "MatrixRow", "MatrixError", "MIXES", "load_matrix", "loads_matrix",
    "METRICS", "run_metrics", "TARGETS", "Target", "compare", "worst_rows",
    "FidelityResult", "run_fidelity", "parse_backends", "load_kernel_table",
]
