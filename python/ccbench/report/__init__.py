"""Self-contained HTML reports of a run or a sweep (``ccbench report DIR``).

One file, no external CSS, JavaScript or fonts; figures are inline ``data:`` images
(SVG by default, PNG on request), so the report opens offline and can be mailed.

>>> from ccbench.report import write_report               # doctest: +SKIP
>>> write_report("runs/adsl")                              # doctest: +SKIP   -> runs/adsl/report.html
>>> write_report("runs/droprules", "droprules.html")       # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from .run_report import run_report_html, write_run_report
from .sweep_report import sweep_report_html, write_sweep_report

__all__ = ["write_report", "report_kind", "run_report_html", "sweep_report_html", "write_run_report", "write_sweep_report"]


def report_kind(path: str | Path) -> str:
    """``"run"`` or ``"sweep"`` for a directory; raises for anything else."""
    from ccbench.sweep.spec import SweepError
    from ccbench.sweep.store import is_sweep_dir

    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    if not p.is_dir():
        raise SweepError(f"{p}: is not a directory (accepted: a run directory from `ccbench run` or a sweep directory from `ccbench sweep`)")
    if is_sweep_dir(p):
        return "sweep"
    if (p / "meta.json").exists():
        return "run"
    raise SweepError(f"{p}: is neither a run directory (no meta.json) nor a sweep directory (no sweep.json or summary.parquet)")


def write_report(path: str | Path, out: Optional[str | Path] = None, fmt: str = "svg", metrics: Optional[list[str]] = None) -> Path:
    """Writes the report of a run or sweep directory to ``out`` (default ``DIR/report.html``)."""
    from ccbench.sweep.spec import SweepError

    if fmt not in ("svg", "png"):
        raise SweepError(f"--format: {fmt!r} is not accepted (accepted: svg, png)")
    kind = report_kind(path)
    target = Path(out) if out is not None else Path(path) / "report.html"
    from ccbench.atomicio import check_out_file

    # only the directories of the path the user named, and none left behind on an error
    made = check_out_file(target, "--out")
    for d in made:
        d.mkdir()
    try:
        if kind == "sweep":
            from ccbench.schemes.report import is_schemes_dir, write_schemes_report

            if is_schemes_dir(path) and not metrics:  # `ccbench schemes` output: its own report
                return write_schemes_report(path, target, fmt)
            return write_sweep_report(path, target, fmt, metrics)
        if metrics:
            raise SweepError("--metric: only for sweep reports (a run report shows every flow metric)")
        return write_run_report(path, target, fmt)
    except BaseException:
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass
        raise
