"""Reproductions of the founding studies: one module per study, each with its
scenarios, a reduced default size that runs in minutes, a ``full`` size, and a table
of our numbers next to the paper's. ``ccbench reproduce STUDY [--full]`` runs one.

Each module exposes ``run(full: bool = False, out: Path | None = None[, progress]) -> pandas.DataFrame``
(the ours-versus-paper table, also written to ``out`` with its figures) and a
``DESCRIPTION`` string.
"""

STUDIES = {
    "wei-sync": "ccbench.studies.wei_sync",
    "wei-vegas": "ccbench.studies.wei_vegas",
    "wei-fast": "ccbench.studies.wei_fast",
    "wei-ch3": "ccbench.studies.wei_ch3",
    "wei-probe": "ccbench.studies.wei_probe",
    "brosh-droptail": "ccbench.studies.brosh_droptail",
    "brosh-video": "ccbench.studies.brosh_video",
    "brosh-split": "ccbench.studies.brosh_split",
    "brosh-model": "ccbench.studies.brosh_model",
    "luebben-fig9": "ccbench.studies.luebben_fig9",
    "luebben": "ccbench.studies.luebben",
    "stewart": "ccbench.studies.stewart",
    "weigle": "ccbench.studies.weigle",
}
