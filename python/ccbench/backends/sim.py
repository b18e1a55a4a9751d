"""The simulator backend: runs a Scenario in the Rust engine and returns a Run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from ccbench.run import Run

# pandas (and the pyarrow it loads, about 100 MB together) is imported only once the
# engine has returned and freed its state (``to_run``), so the two never add up in
# the run's peak memory. A streamed run needs it during the run, for its chunks.

# Rows per streamed chunk (at least; the engine offers rows at its progress points,
# every 262,144 events): about 9 MB of state columns, so a streamed run holds little
# beyond its engine. A chunk of a million rows (86 MB, then its pandas and Arrow
# copies) cost a 10,000-flow run more memory than not streaming at all.
CHUNK_ROWS = 100_000


class SimulationError(ValueError):
    """The simulator refused the scenario; ``field`` names the offending value."""

    def __init__(self, message: str, field: str | None = None):
        super().__init__(message)
        self.field = field


def _core():
    try:
        from ccbench import _core
    except ImportError as e:  # pragma: no cover - depends on the build
        raise RuntimeError(
            "the ccbench simulator extension is not built; run `make setup` (or `maturin develop --release`)"
        ) from e
    return _core


def simulate_config(config: dict, progress: Callable[[float], None] | None = None, sink=None, chunk_rows: int = CHUNK_ROWS) -> dict:
    """Runs a resolved simulator config (``Scenario.to_sim_config``); returns raw columns.
    With ``sink``, ``sink(table, columns, flow_names, link_names)`` receives the
    ``state`` and ``queue`` rows in chunks of ``chunk_rows`` during the run."""
    core = _core()
    try:
        return core.simulate(json.dumps(config), progress, sink, chunk_rows)
    except core.SimConfigError as e:
        raise user_facing_error(e, config) from None


class ParquetSink:
    """Streams the ``cwnd`` and ``queue`` tables to ``directory`` while a run goes on."""

    def __init__(self, directory: str | Path):
        from ccbench.parquet_chunks import ChunkedTable

        self.tables = {name: ChunkedTable(Path(directory) / f"{name}.parquet") for name in ("cwnd", "queue")}

    def __call__(self, table: str, cols: dict, flow_names: list, link_names: list) -> None:
        # Straight from the engine's columns to Arrow: no pandas during the run.
        if table == "state":
            self.tables["cwnd"].write(*cwnd_columns(cols, flow_names))
        else:
            self.tables["queue"].write(*queue_columns(cols, link_names))

    def finish(self, run: "Run") -> "Run":
        """Writes the rows the run still holds, and makes ``run`` read both tables
        from the files."""
        for name, chunked in self.tables.items():
            rest = getattr(run, name)
            if len(rest) or not chunked.rows:
                chunked.write(*frame_columns(rest))
            chunked.close()
            delattr(run, name)
        run._unread = {name: chunked.path for name, chunked in self.tables.items()}
        return run


def cwnd_columns(s: dict, flow_names: list) -> tuple[dict, dict]:
    """The ``cwnd`` table's columns (codes for categoricals) and categories, from the
    extension's columns."""
    from ccbench.parquet_chunks import CA_STATES

    cols = {name: s[name] if name != "conn" else s.get("conn", np.zeros(len(s["t"]), dtype=np.uint8)) for name in CWND_COLUMNS}
    cats = {"flow": list(flow_names)} if len(flow_names) else {}
    return cols, {**cats, "ca_state": list(CA_STATES)}


def queue_columns(q: dict, link_names: list) -> tuple[dict, dict]:
    """The ``queue`` table's columns and categories, from the extension's columns."""
    return {name: q[name] for name in QUEUE_COLUMNS}, ({"link": list(link_names)} if len(link_names) else {})


def frame_columns(df) -> tuple[dict, dict]:
    """A table's columns (codes for categoricals) and categories."""
    import pandas as pd

    cols, cats = {}, {}
    for name in df.columns:
        col = df[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            cols[name] = col.cat.codes.to_numpy()
            cats[name] = [str(x) for x in col.cat.categories]
        else:
            cols[name] = col.to_numpy()
    return cols, cats


def user_facing_error(e, config: dict) -> SimulationError:
    """The simulator names flows by index (``flows[2].transport.cc``); users know them by
    name, as the scenario errors do (``flows.download.transport.cc``)."""
    import re

    field = getattr(e, "field", None) or ""
    msg = getattr(e, "msg", None) or str(e)
    m = re.match(r"flows\[(\d+)\](.*)", field)
    if m and int(m.group(1)) < len(config.get("flows", [])):
        field = f"flows.{config['flows'][int(m.group(1))]['name']}{m.group(2)}"
    # the registry names parameters cc.params.beta; the scenario file writes cc.beta
    field = field.replace(".cc.params.", ".cc.")
    return SimulationError(f"{field}: {msg}" if field else msg, field or None)


def simulate(
    scenario,
    seed: int | None = None,
    progress: Callable[[float], None] | None = None,
    stream_to: str | Path | None = None,
    chunk_rows: int = CHUNK_ROWS,
    *,
    pcap=None,
) -> Run:
    """Simulates ``scenario`` with ``seed`` (default: the scenario's ``run.seed``) and
    returns the :class:`Run`.

    ``pcap`` (a :class:`ccbench.pcap.PcapOptions`) writes packet captures of links as
    the run goes; ``run.meta["pcap"]`` then lists each file with what it holds.

    ``scenario`` is a :class:`ccbench.Scenario`, a path to a scenario file (``str`` or
    ``pathlib.Path``) or a dict shaped like the file. A Scenario changed in place is
    validated again as a whole first (flow names, placement), so the run always
    matches what the scenario now says.

    >>> import ccbench
    >>> run = ccbench.simulate("examples/adsl1_voip.toml", seed=1)     # doctest: +SKIP
    >>> run.flows[["flow", "goodput_bps", "delay_p95_s"]]              # doctest: +SKIP

    ``stream_to``: a directory the ``cwnd`` and ``queue`` tables are written to in
    chunks of ``chunk_rows`` while the run goes on (``ccbench run`` streams into the
    run's folder), so a long run never holds them; the Run reads them from there.
    """
    scenario = as_scenario(scenario)
    config = scenario.to_sim_config(seed=seed)
    run_config = config
    if pcap is not None:
        Path(pcap.directory).mkdir(parents=True, exist_ok=True)
        # The saved sim_config stays the run's own: re-running it writes no capture.
        run_config = {**config, "pcap": pcap.entries()}
    sink = ParquetSink(stream_to) if stream_to is not None else None
    raw = simulate_config(run_config, progress, sink, chunk_rows)
    run = to_run(raw)
    if sink is not None:
        sink.finish(run)
    if pcap is not None:
        run.meta["pcap"] = [dict(c) for c in raw["pcap"]]
    from ccbench.run import versions

    run.meta.update(
        {
            "backend": "sim",
            "seed": config["seed"],
            "scenario": scenario.model_dump(mode="json"),
            "sim_config": config,
            "versions": versions(),
        }
    )
    return run


def as_scenario(scenario):
    """A validated Scenario from a Scenario, a file path or a dict; a Scenario is
    validated again (it may have been changed in place since it was built)."""
    import os

    from ccbench.scenario import Scenario, load_scenario

    if isinstance(scenario, Scenario):
        return scenario.revalidated()
    if isinstance(scenario, (str, os.PathLike)):
        return load_scenario(scenario)
    if isinstance(scenario, dict):
        return Scenario.from_dict(scenario)
    raise TypeError(
        f"simulate() takes a Scenario, a scenario file path (str or Path) or a dict, not {type(scenario).__name__}"
    )


def to_run(raw: dict) -> Run:
    """Turns the extension's columns into the Run tables (DESIGN.md schema).

    Linear in rows and flows: the columns become the tables without a copy
    (``copy=False``), and per-flow figures come from one grouping pass."""
    import pandas as pd

    from ccbench.run import Run, delay_stats

    flow_names = list(raw["flow_names"])
    link_names = list(raw["link_names"])
    reasons = list(raw["reasons"])
    flow_cat = pd.CategoricalDtype(flow_names)
    link_cat = pd.CategoricalDtype(link_names)

    def names(codes, cat, labels):
        return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int64), dtype=cat) if len(labels) else codes

    p = raw["packets"]
    packets = pd.DataFrame(
        {
            "flow": names(p["flow"], flow_cat, flow_names),
            "msg": p["msg"],
            "bytes": p["bytes"],
            "t_write": p["t_write"],
            "t_first_tx": p["t_first_tx"],
            "t_arrive": p["t_arrive"],
            "t_deliver": p["t_deliver"],
        },
        copy=False,
    )
    queue = queue_frame(raw["queue"], link_names)
    d = raw["drops"]
    drops = pd.DataFrame(
        {
            "link": names(d["link"], link_cat, link_names),
            "t": d["t"],
            "flow": names(d["flow"], flow_cat, flow_names),
            "seq": d["seq"],
            "kind": pd.Categorical.from_codes(np.asarray(d["kind"], dtype=np.int64), categories=["drop", "mark"]),
            "reason": pd.Categorical.from_codes(np.asarray(d["reason"], dtype=np.int64), categories=reasons),
        },
        copy=False,
    )
    cwnd = cwnd_frame(raw["state"], flow_names)
    f = raw["flows"]
    flows = pd.DataFrame({k: (list(v) if isinstance(v, list) else v) for k, v in f.items()})
    duration = (flows["end_s"] - flows["start_s"]).clip(lower=1e-12)
    flows["goodput_bps"] = flows["bytes_delivered"] * 8.0 / duration
    # Data packets dropped (queues and loss models) over data packets sent; for TCP
    # retransmissions count as packets sent, as a packet capture would count them.
    sent = flows["pkts_sent"].to_numpy(dtype=float)
    flows["loss_rate"] = np.where(sent > 0, flows["pkts_dropped"].to_numpy(dtype=float) / np.maximum(sent, 1), np.nan)
    flows = flows.merge(delay_stats(packets, flow_names), on="flow", how="left")
    return Run(packets=packets, flows=flows, cwnd=cwnd, queue=queue, drops=drops, meta={"stats": dict(raw["stats"])})


def _names(codes, labels: list):
    """Codes as a categorical of ``labels`` (codes as they are when there are none)."""
    if not len(labels):
        return codes
    import pandas as pd

    return pd.Categorical.from_codes(np.asarray(codes, dtype=np.int64), dtype=pd.CategoricalDtype(labels))


QUEUE_COLUMNS = ("link", "t", "backlog_bytes", "backlog_pkts")
CWND_COLUMNS = (
    "flow", "conn", "t", "cwnd_pkts", "ssthresh_pkts", "srtt_s", "rttvar_s", "rto_s", "inflight_pkts",
    "sacked_pkts", "lost_pkts", "retrans_pkts", "ca_state", "pacing_rate_bps", "delivered_pkts",
)


def queue_frame(q: dict, link_names: list) -> pd.DataFrame:
    """The ``queue`` table from the extension's columns (no copy)."""
    import pandas as pd

    return pd.DataFrame(
        {
            "link": _names(q["link"], link_names),
            "t": q["t"],
            "backlog_bytes": q["backlog_bytes"],
            "backlog_pkts": q["backlog_pkts"],
        },
        copy=False,
    )


def cwnd_frame(s: dict, flow_names: list) -> pd.DataFrame:
    """The ``cwnd`` table (TCP state samples) from the extension's columns (no copy)."""
    import pandas as pd

    from ccbench.run import CA_STATES

    return pd.DataFrame(
        {
            "flow": _names(s["flow"], flow_names),
            "conn": s.get("conn", np.zeros(len(s["t"]), dtype=np.uint8)),
            "t": s["t"],
            "cwnd_pkts": s["cwnd_pkts"],
            "ssthresh_pkts": s["ssthresh_pkts"],
            "srtt_s": s["srtt_s"],
            "rttvar_s": s["rttvar_s"],
            "rto_s": s["rto_s"],
            "inflight_pkts": s["inflight_pkts"],
            "sacked_pkts": s["sacked_pkts"],
            "lost_pkts": s["lost_pkts"],
            "retrans_pkts": s["retrans_pkts"],
            "ca_state": pd.Categorical.from_codes(np.asarray(s["ca_state"], dtype=np.int64), categories=list(CA_STATES)),
            "pacing_rate_bps": s["pacing_rate_bps"],
            "delivered_pkts": s["delivered_pkts"],
        },
        copy=False,
    )
