"""Sweep specifications: a scenario, a grid of values, zipped lists, seeds, a backend.

A sweep lives in its own TOML file (the scenario model forbids unknown keys, so the
scenario file itself stays a plain scenario)::

    # SWEEP.toml
    scenario = "droprules/bytes_loose.toml"   # relative to this file; or an inline
                                              # [scenario] table (the scenario itself)
    description = "optional free text, shown in the report"

    [sweep]
    backend = "sim"          # "sim" (default); "emu" (ccbench.emu.runner);
                             # "model" is reserved
    seeds = 3                # a count: run.seed, run.seed + 1, ... (default: the
                             # scenario's run.seeds); or a list: seeds = [1, 7, 42]

    # grid: every other key of [sweep] is a scenario field by its dotted path and a
    # list of values; the sweep runs the cartesian product of all of them
    "topology.bottleneck.queue.limit" = ["20000B", "40000B"]
    "flows.download.transport.cc" = ["reno", "cubic"]    # flows by name (or index)

    # zip: equal-length lists varied together (one axis of the grid)
    [sweep.zip]
    "topology.bottleneck.queue.rule" = ["packets", "bytes-strict"]
    "topology.bottleneck.queue.limit" = ["14pkt", "20000B"]

Dotted keys may be written quoted (``"a.b.c" = [...]``) or bare (``a.b.c = [...]``,
which TOML turns into nested tables; both mean the same). A point of the sweep is one
combination of values plus one seed; its id (:attr:`Point.id`) is a hash of the
values and the seed and names its directory ``SWEEP_DIR/runs/<id>/``.

A path that no value can fill (a typo) is an error when the sweep is loaded; a value
that is invalid for some points only makes those points fail (recorded with
``status = "error"``), the others run.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from ccbench.scenario import Scenario, ScenarioError
from ccbench.scenario.errors import render_value

__all__ = ["SweepError", "SweepSpec", "Point", "load_sweep", "loads_sweep", "BACKENDS", "point_id", "si_column"]

BACKENDS = ("sim", "emu", "model")
_RESERVED = ("backend", "seeds", "zip")
_TOP_KEYS = ("scenario", "sweep", "description")


class SweepError(ScenarioError):
    """An invalid sweep file or sweep directory: one line per problem, naming the key."""

    def __init__(self, message: str | list[str], source: str | None = None):
        lines = [message] if isinstance(message, str) else list(message)
        if source:
            lines = [f"{source}: {m}" for m in lines]
        super().__init__(lines, source=source)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def point_id(values: dict[str, Any], seed: int) -> str:
    """Stable id of a point: the first 12 hex digits of SHA-1 over its values and seed."""
    return hashlib.sha1(_canonical({"values": values, "seed": int(seed)}).encode()).hexdigest()[:12]


def si_column(key: str, values: list[Any]) -> Optional[tuple[str, list[Optional[float]]]]:
    """The numeric twin of a swept parameter written with units: ``(name, numbers)``.

    ``"topology.bottleneck.queue.limit"`` swept over ``["20000B", "100000B"]`` gets the
    column ``"topology.bottleneck.queue.limit (B)"`` = ``[20000.0, 100000.0]``, so tables
    sort and plot by value ("100000B" sorts before "20000B" as text). Units are SI:
    seconds, bit/s, bytes, packets. None when the values are not all unit strings of
    one quantity (names, numbers, or bytes mixed with packets).
    """
    from ccbench.scenario.units import si_value

    present = [v for v in values if v is not None]
    parsed = [si_value(v) for v in present]
    if not parsed or any(p is None for p in parsed) or len({p[1] for p in parsed}) != 1:  # type: ignore[index]
        return None
    unit = parsed[0][1]  # type: ignore[index]
    return f"{key} ({unit})", [None if v is None else si_value(v)[0] for v in values]  # type: ignore[index]


def backend_available(name: str) -> tuple[bool, str]:
    """(usable, why-not) for a backend name."""
    if name == "sim":
        return True, ""
    if name == "emu":
        try:
            from ccbench.emu import runner as emu
        except ImportError:
            return False, 'backend "emu" needs ccbench.emu.runner, which is not part of this installation yet'
        if not hasattr(emu, "emulate"):
            return False, 'backend "emu": ccbench.emu.runner has no emulate(scenario, seed) yet'
        return True, ""
    if name == "model":
        return False, 'backend "model" is reserved: sweeps over analytical models are not implemented yet'
    return False, f"backend {render_value(name)} is unknown"


@dataclass(frozen=True)
class Point:
    """One run of the sweep: parameter values (dotted paths as written) and a seed."""

    values: dict[str, Any]
    seed: int
    index: int = 0

    @property
    def id(self) -> str:
        return point_id(self.values, self.seed)


@dataclass
class SweepSpec:
    """A validated sweep: base scenario, grid, zip, seeds and backend."""

    scenario: Scenario
    grid: dict[str, list[Any]] = field(default_factory=dict)
    zip: dict[str, list[Any]] = field(default_factory=dict)
    seeds: list[int] = field(default_factory=list)
    backend: str = "sim"
    description: str = ""
    source: Optional[str] = None
    scenario_source: Optional[str] = None

    def __post_init__(self) -> None:
        if not self.seeds:
            self.seeds = self.scenario.seed_list()
        self._check()

    # --- structure ---------------------------------------------------------------------------

    @property
    def parameters(self) -> list[str]:
        """Every swept path, grid first, then zipped, in file order."""
        return list(self.grid) + [k for k in self.zip if k not in self.grid]

    @property
    def axes(self) -> list[list[str]]:
        """The independent axes: one per grid key, one for the zipped keys together."""
        out = [[k] for k in self.grid]
        if self.zip:
            out.append(list(self.zip))
        return out

    def combinations(self) -> list[dict[str, Any]]:
        """Every combination of parameter values (without seeds), grid order, zip last."""
        keys = list(self.grid)
        grid_lists = [self.grid[k] for k in keys]
        zip_rows: list[dict[str, Any]] = [{}]
        if self.zip:
            n = len(next(iter(self.zip.values())))
            zip_rows = [{k: v[i] for k, v in self.zip.items()} for i in range(n)]
        out = []
        for combo in itertools.product(*grid_lists):
            for zrow in zip_rows:
                vals = dict(zip(keys, combo))
                vals.update(zrow)
                out.append(vals)
        return out

    def points(self) -> list[Point]:
        """Every point: each combination with each seed."""
        pts = []
        for combo in self.combinations():
            for seed in self.seeds:
                pts.append(Point(values=combo, seed=int(seed), index=len(pts)))
        return pts

    # --- scenarios ------------------------------------------------------------------------------

    def resolve_path(self, dotted: str) -> str:
        """Dotted path with flows named by index (``flows.voip.app`` -> ``flows.1.app``)."""
        return resolve_path(self.scenario, dotted)

    def scenario_for(self, values: dict[str, Any]) -> Scenario:
        """The scenario of a point; raises :class:`ScenarioError` for an invalid value."""
        return self.scenario.with_values({self.resolve_path(k): v for k, v in values.items()})

    def base_hash(self) -> str:
        """Hash of what every point shares (base scenario and backend)."""
        return hashlib.sha1(_canonical({"scenario": self.scenario.to_dict(), "backend": self.backend}).encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description, stored as ``SWEEP_DIR/sweep.json``."""
        return {
            "source": self.source,
            "scenario_source": self.scenario_source,
            "description": self.description,
            "backend": self.backend,
            "seeds": list(self.seeds),
            "grid": self.grid,
            "zip": self.zip,
            "parameters": self.parameters,
            "axes": self.axes,
            "scenario": self.scenario.to_dict(),
            "base_hash": self.base_hash(),
        }

    def dumps(self) -> str:
        """The sweep as a self-contained TOML file (inline scenario)."""
        import tomli_w

        sweep: dict[str, Any] = {"backend": self.backend, "seeds": list(self.seeds)}
        sweep.update(self.grid)
        if self.zip:
            sweep["zip"] = dict(self.zip)
        doc: dict[str, Any] = {}
        if self.description:
            doc["description"] = self.description
        doc["sweep"] = sweep
        doc["scenario"] = self.scenario.to_dict()
        return tomli_w.dumps(doc)

    # --- checks ---------------------------------------------------------------------------------

    def _check(self) -> None:
        where = "sweep"
        ok, why = backend_available(self.backend)
        if not ok:
            usable = [b for b in BACKENDS if backend_available(b)[0]]
            raise SweepError(f"{where}.backend: {why} (accepted: {', '.join(render_value(b) for b in usable)})", self.source)
        for i, s in enumerate(self.seeds):
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise SweepError(f"{where}.seeds[{i}]: {render_value(s)} is not a seed (accepted: whole numbers >= 0)", self.source)
        if len(set(self.seeds)) != len(self.seeds):
            raise SweepError(f"{where}.seeds: {render_value(self.seeds)} repeats a seed (accepted: distinct seeds)", self.source)
        for table, entries in ((where, self.grid), (f"{where}.zip", self.zip)):
            for key, vals in entries.items():
                if not isinstance(vals, list) or not vals:
                    raise SweepError(
                        f'{table}."{key}": {render_value(vals)} is not a list of values (accepted: a non-empty array, e.g. ["20000B", "40000B"])',
                        self.source,
                    )
                if entries is self.grid:
                    for i, v in enumerate(vals):
                        if _canonical(v) in {_canonical(w) for w in vals[:i]}:
                            raise SweepError(f'{table}."{key}": {render_value(v)} is listed twice (accepted: distinct values)', self.source)
        both = [k for k in self.zip if k in self.grid]
        if both:
            raise SweepError(f'sweep.zip."{both[0]}": is also a grid key of [sweep] (accepted: a path in one place only)', self.source)
        if self.zip:
            lengths = {k: len(v) for k, v in self.zip.items()}
            if len(set(lengths.values())) > 1:
                desc = ", ".join(f'"{k}" has {n}' for k, n in lengths.items())
                raise SweepError(f"sweep.zip: lists must have equal lengths ({desc})", self.source)
            rows = [_canonical([v[i] for v in self.zip.values()]) for i in range(next(iter(lengths.values())))]
            for i, r in enumerate(rows):
                if r in rows[:i]:
                    raise SweepError(f"sweep.zip: entry {i} repeats entry {rows.index(r)} (accepted: distinct combinations)", self.source)
        for key in self.parameters:
            self._check_path(key)

    def _check_path(self, key: str) -> None:
        table = "sweep.zip" if key in self.zip else "sweep"
        try:
            resolved = self.resolve_path(key)
        except SweepError as e:
            raise SweepError(f'{table}."{key}": {e.problems[0].message}', self.source) from None
        if resolved.split(".")[0] == "run" and resolved.split(".")[-1] in ("seed", "seeds"):
            raise SweepError(
                f'{table}."{key}": seeds are not swept through the scenario (accepted: sweep.seeds = N or [s1, s2, ...])',
                self.source,
            )
        # a path every value fails on for the same "unknown key" reason is a typo
        vals = self.grid.get(key, self.zip.get(key, []))
        unknown: Optional[str] = None
        for v in vals:
            try:
                self.scenario.with_values({resolved: v})
                return
            except ScenarioError as e:
                bad = [p for p in e.problems if "is not an accepted key" in p.message]
                if not bad:
                    return
                unknown = str(bad[0])
            except (TypeError, KeyError, IndexError, ValueError) as e:
                unknown = f"cannot be set ({type(e).__name__}: {e})"
        if unknown is not None:
            raise SweepError(f'{table}."{key}": not a scenario field: {unknown}', self.source)


def resolve_path(scenario: Scenario, dotted: str) -> str:
    """Replaces a flow name after ``flows.`` by the flow's index in the scenario."""
    parts = dotted.split(".")
    if any(p == "" for p in parts):
        raise SweepError(f"is not a dotted path (accepted: e.g. topology.bottleneck.queue.limit)")
    top = ("run", "topology", "flows")
    if parts[0] not in top:
        raise SweepError(f"{render_value(parts[0])} is not a scenario table (accepted: {', '.join(top)})")
    if parts[0] == "flows":
        names = [f.name for f in scenario.flows]
        if len(parts) < 3:
            raise SweepError(
                "names a whole flow (accepted: flows.<name>.<field>, e.g. flows."
                f"{names[0]}.transport.cc; flows: {', '.join(names)})"
            )
        ref = parts[1]
        if ref in names:  # a name first: a flow may be called "0"
            idx = names.index(ref)
        elif ref.isdigit():
            idx = int(ref)
            if idx >= len(names):
                raise SweepError(f"flow index {idx} is out of range (accepted: 0 .. {len(names) - 1}, or a name: {', '.join(names)})")
        else:
            raise SweepError(f"{render_value(ref)} is not a flow of the scenario (accepted: {', '.join(names)})")
        parts[1] = str(idx)
    return ".".join(parts)


def _flatten(table: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in table.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def spec_from_dict(data: dict[str, Any], base_dir: Path | None = None, source: str | None = None) -> SweepSpec:
    """Builds a :class:`SweepSpec` from the parsed sweep file."""
    if not isinstance(data, dict):
        raise SweepError("is not a table", source)
    for k in data:
        if k not in _TOP_KEYS:
            raise SweepError(f"{k}: is not an accepted key (accepted: {', '.join(_TOP_KEYS)})", source)
    scn_ref = data.get("scenario")
    scenario_source = None
    if scn_ref is None:
        raise SweepError(
            'scenario: is required but missing (accepted: scenario = "path.toml" relative to the sweep file, '
            "or an inline [scenario] table)",
            source,
        )
    if isinstance(scn_ref, str):
        from ccbench.scenario import load_scenario

        path = Path(scn_ref)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.exists():
            raise SweepError(f"scenario: {render_value(scn_ref)} does not exist (looked for {path})", source)
        scenario = load_scenario(path)
        scenario_source = str(path)
    elif isinstance(scn_ref, dict):
        try:
            scenario = Scenario.from_dict(scn_ref, source=source)
        except ScenarioError as e:
            raise ScenarioError([(f"scenario.{p.path}" if p.path else "scenario", p.message) for p in e.problems], source) from None
    else:
        raise SweepError(f"scenario: {render_value(scn_ref)} is not accepted (accepted: a file path string or a [scenario] table)", source)

    sweep = data.get("sweep", {})
    if not isinstance(sweep, dict):
        raise SweepError(f"sweep: {render_value(sweep)} is not a table (accepted: a [sweep] table)", source)
    backend = sweep.get("backend", "sim")
    if backend not in BACKENDS:
        raise SweepError(
            f"sweep.backend: {render_value(backend)} is not a backend (accepted: {', '.join(render_value(b) for b in BACKENDS)})",
            source,
        )
    seeds_raw = sweep.get("seeds")
    if seeds_raw is None:
        seeds = scenario.seed_list()
    elif isinstance(seeds_raw, bool) or not isinstance(seeds_raw, (int, list)):
        raise SweepError(f"sweep.seeds: {render_value(seeds_raw)} is not accepted (accepted: a count >= 1 or a list of seeds)", source)
    elif isinstance(seeds_raw, int):
        if seeds_raw < 1:
            raise SweepError(f"sweep.seeds: {seeds_raw} is not accepted (accepted: a count >= 1 or a list of seeds)", source)
        seeds = [scenario.run.seed + i for i in range(seeds_raw)]
    else:
        if not seeds_raw:
            raise SweepError("sweep.seeds: [] is empty (accepted: a count >= 1 or a non-empty list of seeds)", source)
        seeds = list(seeds_raw)
    zipped = sweep.get("zip", {})
    if not isinstance(zipped, dict):
        raise SweepError(f"sweep.zip: {render_value(zipped)} is not a table (accepted: a [sweep.zip] table of equal-length lists)", source)
    grid = _flatten({k: v for k, v in sweep.items() if k not in _RESERVED})
    description = data.get("description", "")
    if not isinstance(description, str):
        raise SweepError(f"description: {render_value(description)} is not a string", source)
    return SweepSpec(
        scenario=scenario,
        grid=grid,
        zip=_flatten(zipped),
        seeds=seeds,
        backend=backend,
        description=description,
        source=source,
        scenario_source=scenario_source,
    )


def loads_sweep(text: str, base_dir: Path | str | None = None, source: str | None = None) -> SweepSpec:
    """Parses sweep TOML text; a relative ``scenario`` path is taken from ``base_dir``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise SweepError(f"TOML syntax error: {str(e).splitlines()[0]}", source) from None
    return spec_from_dict(data, Path(base_dir) if base_dir is not None else None, source)


def load_sweep(path: Union[str, Path]) -> SweepSpec:
    """Reads and validates a sweep file (see the module docstring for the format)."""
    from ccbench.scenario.io import MAX_SCENARIO_BYTES
    from ccbench.scenario.limits import FileProblem, regular_file

    p = Path(path)
    if p.is_dir():
        raise SweepError("is a directory (accepted: a sweep TOML file)", str(p))
    try:
        regular_file(p, MAX_SCENARIO_BYTES)  # not /dev/zero, a FIFO or a huge file
        text = p.read_text(encoding="utf-8")
    except FileProblem as e:
        raise SweepError(f"cannot read the sweep file: it {e}", str(p)) from None
    except UnicodeDecodeError:
        raise SweepError("is not UTF-8 text (a binary file?) (accepted: a sweep TOML file)", str(p)) from None
    except OSError as e:
        raise SweepError(f"cannot read the sweep file ({e.strerror or e})", str(p)) from None
    return loads_sweep(text, base_dir=p.parent, source=str(p))
