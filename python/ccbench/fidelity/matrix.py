"""The fidelity matrix file: which scenarios ``ccbench fidelity`` runs on both backends.

A matrix is compact: a few named fields describe a dumbbell path and its traffic, and
the scenarios are the cross product of ``[axes]`` plus any explicit ``[[rows]]``::

    description = "reduced matrix"
    reps = 3                      # repetitions per scenario and backend (seeds 1..reps)
    duration = "20s"              # default run length

    [defaults]                    # every field a row does not give
    rate = "10Mbit"; rtt = "40ms"; buffer = "1bdp"; mix = "1"; cc = "cubic"; aqm = "droptail"

    [[axes]]                      # a cross product (each a list of field values);
    rate = ["10Mbit", "50Mbit"]   # several [[axes]] blocks add their products
    cc = ["reno", "cubic", "bbr"]  # ([axes] for a single one)

    [[rows]]                      # explicit scenarios (fields not given: [defaults])
    mix = "2-staggered"; rate = "20Mbit"; rtt = "100ms"

    [full]                        # only with --full: the rows of another matrix too
    include = "full.toml"

Fields: ``rate`` (bottleneck rate, both directions), ``rtt`` (base RTT: twice the
bottleneck's one-way delay), ``buffer`` (``"<x>bdp"`` in whole packets of 1500 B,
``"<x>bdp:bytes"`` in bytes, or a literal limit like ``"100pkt"`` / ``"64KB"``), ``mix``
(see :data:`MIXES`), ``cc`` (every TCP flow), ``aqm`` (``droptail``, ``red``, ``codel``,
``fq_codel``, ``pie``: the buffer is the AQM's limit, ECN off), ``duration``, ``name``,
``start_jitter`` (each flow starts up to this much late, drawn from the seed, as the
scenario key ``run.start_jitter``: on the simulator, where it stands for a flow's random
phase against the others (except where ``start_stagger`` replaces it); on the emulator only in the mixes with a
timer-driven message flow, :data:`TIMER_MIXES`; not part of the name),
``start_stagger`` (simulator only, scenario key ``run.start_stagger``: in the mixes whose
bulk flows start together, :data:`TOGETHER_MIXES`, they begin one after another this far
apart in an order drawn from the seed, as the kernel host starts its senders, and
``start_jitter`` is not applied there: a uniform spread would undo the staircase; not
part of the name),
``sndbuf`` (the TCP senders' send buffer, ``tcp_wmem[2]`` on the kernel host, e.g.
``"256KiB"``; unset: Linux's 4 MiB; the name ends in ``-sndbuf<size>``),
``host_delay`` and ``host_jitter`` (simulator only, default ``"4us"`` and ``"2500ns"``: the
emulated hosts' own latency as a delay on every access link plus Pareto jitter of that
sigma around it, measured through ccemu; ``"0s"`` turns either off; not part of the name),
``reps`` (this row's repetitions instead of the matrix's: rows whose per-flow split is
decided by start-up chance need more to pin a mean; ``--reps`` overrides every row).
"""

from __future__ import annotations

import itertools
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ccbench.scenario import ScenarioError
from ccbench.scenario.units import parse_duration, parse_queue_limit, parse_rate, parse_size

__all__ = ["Matrix", "MatrixRow", "MatrixError", "load_matrix", "loads_matrix", "MIXES", "FIELDS", "EXCHANGEABLE_MIXES"]

MSS_WIRE = 1500  # packet size a BDP in packets is counted in (the scenario default MTU)

#: flow mixes: name -> what it is (the flows are built by :func:`_flows`)
MIXES = {
    "1": "one bulk TCP flow",
    "2-staggered": "two bulk TCP flows, the second starting 5 s after the first",
    "4-rtt": "four bulk TCP flows of base RTTs 1, 1.25, 1.5 and 2 x rtt",
    "10-together": "ten bulk TCP flows started together",
    "udp-cbr": "one bulk TCP flow beside a VoIP-like UDP CBR flow (200 B every 20 ms)",
    "tcp-cbr": "one bulk TCP flow beside a TCP CBR flow (1000 B every 10 ms)",
    "short": "three transfers of 10 KB, 100 KB and 1 MB started 0, 2 and 4 s in, one at a time",
}
#: mixes whose flows share path and start: compared by goodput rank, not by name
EXCHANGEABLE_MIXES = ("10-together",)
AQMS = ("droptail", "red", "codel", "fq_codel", "pie")
FIELDS = ("name", "rate", "rtt", "buffer", "mix", "cc", "aqm", "duration", "start_jitter", "start_stagger", "sndbuf",
          "host_delay", "host_jitter", "reps")
#: host_delay / host_jitter: the simulator's model of the emulated hosts' latency (ccemu, measured)
DEFAULTS = {"rate": "10Mbit", "rtt": "40ms", "buffer": "1bdp", "mix": "1", "cc": "cubic", "aqm": "droptail",
            "start_jitter": "0s", "start_stagger": "0s", "host_delay": "4us", "host_jitter": "2500ns"}
TOP_KEYS = ("description", "reps", "duration", "defaults", "axes", "rows", "full")


class MatrixError(ScenarioError):
    """A bad matrix file: one line naming the field, the value and what is accepted."""

    def __init__(self, message: str):
        super().__init__([message])


@dataclass(frozen=True)
class MatrixRow:
    name: str
    rate: str
    rtt: str
    buffer: str
    mix: str
    cc: str
    aqm: str
    duration: str
    start_jitter: str = "0s"
    start_stagger: str = "0s"
    #: the TCP senders' send buffer (``tcp_wmem[2]`` on the kernel host); "" = Linux's 4 MiB
    sndbuf: str = ""
    #: the simulator's stand-in for the emulated hosts' latency: a delay on every access
    #: link and the sigma of Pareto jitter around it ("0s" for neither)
    host_delay: str = "4us"
    host_jitter: str = "2500ns"
    reps: Optional[int] = None  # None: the matrix's

    @property
    def rate_bps(self) -> float:
        return float(parse_rate(self.rate))

    @property
    def rtt_s(self) -> float:
        return parse_duration(self.rtt) / 1e9

    def bdp_bytes(self) -> float:
        return self.rate_bps * self.rtt_s / 8.0

    def queue_limit(self) -> str:
        """The buffer as a queue limit string of the scenario."""
        b = self.buffer.strip()
        if "bdp" in b:
            x, _, unit = b.partition("bdp")
            frac = float(x)
            if unit == ":bytes":
                return f"{max(2 * MSS_WIRE, round(frac * self.bdp_bytes()))}B"
            return f"{max(2, math.ceil(frac * self.bdp_bytes() / MSS_WIRE))}pkt"
        return b

    def scenario_dict(self, backend: str = "sim") -> dict[str, Any]:
        """The scenario of this row as the dict a scenario file parses into. The
        emulator's has ``start_jitter`` only for the mixes with a timer-driven message
        flow (its bulk flows have real start spreads), so the other rows' recorded runs
        stay resumable when the simulator's jitter changes."""
        queue: dict[str, Any] = {"kind": self.aqm, "limit": self.queue_limit()}
        if self.aqm != "droptail":
            queue["ecn"] = False  # fq_codel marks by default; the matrix compares loss-based TCP
        topo: dict[str, Any] = {
            "kind": "dumbbell",
            "bottleneck": {"down": self.rate, "up": self.rate, "delay": f"{self.rtt_s * 1e3 / 2:.6g}ms", "queue": queue},
        }
        flows = _flows(self)
        if self.sndbuf:
            for f in flows:
                if f["transport"]["kind"] == "tcp":
                    f["transport"]["sndbuf"] = self.sndbuf
        host_ns, jitter_ns = (parse_duration(self.host_delay), parse_duration(self.host_jitter)) if backend == "sim" else (0, 0)
        if self.mix == "4-rtt":
            # server-side access delay per pair adds twice itself to the RTT (the
            # emulator's in ms, as its recorded runs were keyed)
            pairs = [self.rtt_s * k / 2 for k in (0, 0.25, 0.5, 1.0)]
            topo["access"] = {"rate": "10Gbit", "delay": "0ms",
                              "pair_delays": [f"{round(d * 1e9) + host_ns}ns" if host_ns else f"{d * 1e3:.6g}ms" for d in pairs]}
        if host_ns > 0 or jitter_ns > 0:
            # The emulated hosts' own latency: through ccemu an ACK written to the
            # sender's device takes 8.1 us (median; p5 5.9, p95 16, p99 19.4) until the
            # data it releases is read back, the receiver's turnaround is alike, and the
            # simulator's hosts answer in 1.2 us. A delay plus Pareto jitter on every
            # access link (in order) reproduces that distribution; the emulator has the
            # real thing. Microseconds decide which packet of a burst a full queue takes.
            acc = topo.setdefault("access", {})
            acc["delay"] = f"{host_ns}ns"
            if jitter_ns > 0:
                acc["jitter"] = {"sigma": self.host_jitter, "dist": "pareto"}
        # the simulator samples its state every 1 ms, as the emulator polls TCP_INFO (its
        # own info_interval; the emulator's scenario keeps 10 ms, which it does not use,
        # so recorded kernel runs stay resumable): srtt percentiles over short spans,
        # slow-start exit times and 2-5 ms Open gaps between two recoveries, which the
        # kernel's samples show, were off on a 10 ms grid
        sample = "1ms" if backend == "sim" else "10ms"
        run: dict[str, Any] = {"duration": self.duration, "seed": 1, "state_sample": sample}
        staggered = backend == "sim" and self.mix in TOGETHER_MIXES and parse_duration(self.start_stagger) > 0
        if staggered:
            # the kernel host wakes the senders told to start together one after
            # another (0.10-0.13 ms apart through ccemu, in no fixed order): a uniform
            # spread of a few ms gives later flows too little queue in their first RTT
            # sample, HyStart's delay_min, and they leave slow start a round early
            run["start_stagger"] = self.start_stagger
        elif parse_duration(self.start_jitter) > 0 and (backend == "sim" or self.mix in TIMER_MIXES):
            # The emulator's message sources write on a timer in absolute time, so
            # without it every kernel repetition puts the CBR flow at the same phase
            # against the bulk flow's ACK clock, and at a full drop-tail queue that
            # phase decides which packets are lost (tcp-cbr, 10 Mbit/s, 100 ms: 0
            # losses in 3 matrix runs, 4-13 in 5 runs started otherwise). Its bulk
            # flows already start with the kernel's own spread.
            run["start_jitter"] = self.start_jitter
        if backend == "sim":
            # ccemu's probes connect before the run, on the idle path: the simulator's
            # handshake sample is taken the same way (a late flow's kernel SYN never saw
            # the queue the first flow built)
            for f in flows:
                if f["transport"]["kind"] == "tcp":
                    f["transport"]["syn_rtt"] = "idle"
        return {"run": run,
                "topology": topo, "flows": flows}

    def scenario(self, backend: str = "sim"):
        from ccbench.scenario import Scenario

        try:
            return Scenario.from_dict(self.scenario_dict(backend))
        except ScenarioError as e:
            raise MatrixError(f"rows.{self.name}: does not make a valid scenario: {str(e).splitlines()[0]}") from None


#: Mixes with a timer-driven message flow, whose emulated repetitions draw their start
#: (hence the timer's phase) like the simulator's.
TIMER_MIXES = ("udp-cbr", "tcp-cbr")
#: mixes whose bulk flows all start at once (``start_stagger`` applies)
TOGETHER_MIXES = ("4-rtt", "10-together")


def _tcp(name: str, cc: str, app: dict, start: str = "0s", pair: Optional[int] = None) -> dict[str, Any]:
    f: dict[str, Any] = {"name": name, "direction": "down", "transport": {"kind": "tcp", "cc": cc}, "app": app, "start": start}
    if pair is not None:
        f["pair"] = pair
    return f


def _flows(row: MatrixRow) -> list[dict[str, Any]]:
    bulk = {"kind": "bulk"}
    m, cc = row.mix, row.cc
    if m == "1":
        return [_tcp("bulk", cc, bulk)]
    if m == "2-staggered":
        return [_tcp("first", cc, bulk), _tcp("second", cc, bulk, start="5s", pair=1)]
    if m == "4-rtt":
        return [_tcp(f"rtt{k}", cc, bulk, pair=k) for k in range(4)]
    if m == "10-together":
        return [_tcp(f"bulk{k}", cc, bulk, pair=k) for k in range(10)]
    if m == "udp-cbr":
        return [_tcp("bulk", cc, bulk),
                {"name": "voip", "direction": "down", "pair": 1, "transport": {"kind": "udp"},
                 "app": {"kind": "cbr", "size": "200B", "interval": "20ms"}}]
    if m == "tcp-cbr":
        return [_tcp("bulk", cc, bulk), _tcp("cbr", cc, {"kind": "cbr", "size": "1000B", "interval": "10ms"}, pair=1)]
    if m == "short":
        return [_tcp(f"xfer{k}", cc, {"kind": "bulk", "bytes": size}, start=f"{2 * k}s", pair=k)
                for k, size in enumerate(("10KB", "100KB", "1MB"))]
    raise MatrixError(f"mix: {m!r} is not accepted (accepted: {', '.join(MIXES)})")  # pragma: no cover - checked


@dataclass
class Matrix:
    rows: list[MatrixRow]
    reps: int = 3
    description: str = ""
    source: Optional[str] = None
    extra: list[MatrixRow] = field(default_factory=list)  # the [full] rows

    def selected(self, full: bool = False, only: Optional[str] = None) -> list[MatrixRow]:
        """The rows to run: the matrix's, with ``full`` the [full] include's too; ``only``
        (comma-separated substrings) keeps the rows whose name contains one of them."""
        out = list(self.rows)
        if full:
            names = {r.name for r in out}
            out += [r for r in self.extra if r.name not in names]
        if only is not None:
            parts = [p.strip() for p in only.split(",")]
            if not parts or any(not p for p in parts):
                raise MatrixError(f"--rows: {only!r} is not accepted (accepted: comma-separated parts of row names)")
            out = [r for r in out if any(p in r.name for p in parts)]
            if not out:
                raise MatrixError(f"--rows: {only!r} matches no row of the matrix (accepted: parts of row names, e.g. 1-cubic)")
        return out


def _check_reps(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise MatrixError(f"{where}.reps: {value!r} is not accepted (accepted: an integer >= 1)")
    return value


def _check_value(key: str, value: Any, where: str) -> Any:
    if key == "reps":
        return _check_reps(value, where)
    if not isinstance(value, str) or not value.strip():
        raise MatrixError(f"{where}.{key}: {value!r} is not accepted (accepted: a non-empty string)")
    v = value.strip()
    try:
        if key == "rate":
            if parse_rate(v) <= 0:
                raise ValueError
        elif key in ("rtt", "duration"):
            if parse_duration(v) <= 0:
                raise ValueError
        elif key in ("start_jitter", "start_stagger", "host_delay", "host_jitter"):
            if parse_duration(v) < 0:
                raise ValueError
        elif key == "sndbuf":
            parse_size(v, positive=True)
        elif key == "buffer":
            if "bdp" in v:
                x, _, unit = v.partition("bdp")
                if float(x) <= 0 or unit not in ("", ":bytes"):
                    raise ValueError
            else:
                parse_queue_limit(v)
        elif key == "mix" and v not in MIXES:
            raise MatrixError(f"{where}.mix: {v!r} is not accepted (accepted: {', '.join(MIXES)})")
        elif key == "aqm" and v not in AQMS:
            raise MatrixError(f"{where}.aqm: {v!r} is not accepted (accepted: {', '.join(AQMS)})")
    except MatrixError:
        raise
    except (ValueError, TypeError, ScenarioError):
        accepted = {"rate": 'a rate > 0 like "10Mbit"', "rtt": 'a duration > 0 like "40ms"', "duration": 'a duration > 0 like "20s"',
                    "start_jitter": 'a duration >= 0 like "2ms"', "start_stagger": 'a duration >= 0 like "120us"',
                    "host_delay": 'a duration >= 0 like "4us"', "host_jitter": 'a duration >= 0 like "2500ns"',
                    "sndbuf": 'a size > 0 like "256KiB"',
                    "buffer": '"<x>bdp" (packets), "<x>bdp:bytes", or a limit like "100pkt" / "64KB"'}[key]
        raise MatrixError(f"{where}.{key}: {value!r} is not accepted (accepted: {accepted})") from None
    return v


def _check_fields(table: Any, where: str, allow_name: bool) -> dict[str, Any]:
    if not isinstance(table, dict):
        raise MatrixError(f"{where}: is not a table (accepted: a table of {', '.join(FIELDS)})")
    for k in table:
        if k not in FIELDS or (k == "name" and not allow_name):
            ok = [f for f in FIELDS if allow_name or f != "name"]
            raise MatrixError(f"{where}.{k}: is not a matrix field (accepted: {', '.join(ok)})")
    return table


def _row(values: dict[str, Any], where: str, default_duration: str) -> MatrixRow:
    vals = {k: _check_value(k, values[k], where) for k in FIELDS if k in values and k != "name"}
    full = {**DEFAULTS, "duration": default_duration, **vals}
    name = values.get("name")
    if name is not None and (not isinstance(name, str) or not name.strip() or any(c in name for c in "/\\ ")):
        raise MatrixError(f"{where}.name: {name!r} is not accepted (accepted: a non-empty name without spaces or slashes)")
    if name is None:
        name = "-".join([full["mix"], full["cc"], full["rate"], full["rtt"], full["buffer"].replace(":", "")]
                        + ([full["aqm"]] if full["aqm"] != "droptail" else [])
                        + ([f"sndbuf{full['sndbuf']}"] if full.get("sndbuf") else []))
    return MatrixRow(name=name, **{k: full[k] for k in FIELDS if k != "name" and k in full})


def _rows_of(data: dict[str, Any], source: Optional[str]) -> tuple[list[MatrixRow], dict[str, Any]]:
    for k in data:
        if k not in TOP_KEYS:
            raise MatrixError(f"{k}: is not a matrix key (accepted: {', '.join(TOP_KEYS)})")
    duration = _check_value("duration", data.get("duration", "20s"), "duration")
    defaults = _check_fields(data.get("defaults", {}), "defaults", allow_name=False)
    for k, v in defaults.items():
        _check_value(k, v, "defaults")
    base = dict(defaults)
    rows: list[MatrixRow] = []
    blocks = data.get("axes", [])
    blocks = [blocks] if isinstance(blocks, dict) else blocks
    if not isinstance(blocks, list):
        raise MatrixError("axes: is not a table or an array of tables (accepted: [axes] or [[axes]] entries)")
    for j, axes in enumerate(blocks):
        where = "axes" if len(blocks) == 1 else f"axes.{j}"
        _check_fields(axes, where, allow_name=False)
        keys = list(axes)
        for k in keys:
            if not isinstance(axes[k], list) or not axes[k]:
                raise MatrixError(f"{where}.{k}: {axes[k]!r} is not accepted (accepted: a non-empty list of values)")
        for combo in itertools.product(*(axes[k] for k in keys)):
            rows.append(_row({**base, **dict(zip(keys, combo))}, where, duration))
    explicit = data.get("rows", [])
    if not isinstance(explicit, list):
        raise MatrixError("rows: is not an array of tables (accepted: [[rows]] entries)")
    for i, r in enumerate(explicit):
        _check_fields(r, f"rows.{i}", allow_name=True)
        rows.append(_row({**base, **r}, f"rows.{i}", duration))
    seen: set[str] = set()
    for r in rows:
        if r.name in seen:
            raise MatrixError(f"rows: the scenario {r.name!r} is listed twice (accepted: distinct rows or names)")
        seen.add(r.name)
    return rows, {"duration": duration}


def loads_matrix(text: str, base_dir: Optional[Path] = None, source: Optional[str] = None) -> Matrix:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise MatrixError(f"{source or 'matrix'}: is not valid TOML ({e})") from None
    rows, _ = _rows_of(data, source)
    reps = data.get("reps", 3)
    if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
        raise MatrixError(f"reps: {reps!r} is not accepted (accepted: an integer >= 1)")
    desc = data.get("description", "")
    if not isinstance(desc, str):
        raise MatrixError(f"description: {desc!r} is not accepted (accepted: a string)")
    extra: list[MatrixRow] = []
    full = data.get("full")
    if full is not None:
        if not isinstance(full, dict) or set(full) - {"include"} or not isinstance(full.get("include"), str):
            raise MatrixError(f"full: {full!r} is not accepted (accepted: a table with include = \"other_matrix.toml\")")
        inc = (base_dir or Path(".")) / full["include"]
        if not inc.is_file():
            raise MatrixError(f"full.include: {full['include']!r} is not a file next to the matrix")
        extra = load_matrix(inc).rows
    if not rows and not extra:
        raise MatrixError("rows: the matrix has no scenario (accepted: an [axes] table or [[rows]] entries)")
    return Matrix(rows=rows, reps=reps, description=desc, source=source, extra=extra)


def load_matrix(path: str | Path) -> Matrix:
    p = Path(path)
    if not p.is_file():
        raise MatrixError(f"MATRIX: {str(path)!r} is not a file (accepted: a fidelity matrix .toml)")
    return loads_matrix(p.read_text(encoding="utf-8"), base_dir=p.parent, source=str(path))
