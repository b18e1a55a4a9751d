"""The top-level ``Scenario``: ``[run]``, ``[topology]`` and ``[[flows]]``.

A scenario file::

    [run]
    duration = "60s"        # simulated time (default 60s)
    seed = 1                # seed of the first repetition (default 1)
    seeds = 5               # repetitions: seeds 1, 2, ..., 5 (default 1)
    queue_sample = "10ms"   # queue occupancy sampling interval ("0s" = never)
    state_sample = "10ms"   # TCP state (cwnd, srtt, ...) sampling interval
    state_on_change = false # also sample at every cwnd / CA-state change

    [topology]
    ...                     # see ccbench.scenario.topology

    [[flows]]
    ...                     # see ccbench.scenario.flows

    [emu]                   # the emulator only (the simulator ignores it)
    traffic_source = "ccemu"  # what drives bulk TCP flows: "ccemu" (built-in) or "iperf3"
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, PrivateAttr, ValidationError, model_validator

from .base import Table, mark_paths
from .errors import ScenarioError, fail, from_validation_error
from .flows import Flow, ResolvedFlow
from .topology import Dumbbell, Graph, ParkingLot, Topology
from .units import Duration, PositiveDuration, format_duration

__all__ = ["Emu", "Run", "Scenario"]


class Run(Table):
    duration: PositiveDuration = 60_000_000_000
    seed: int = Field(1, ge=0, lt=2**64)
    seeds: int = Field(1, ge=1)
    queue_sample: Duration = 10_000_000
    state_sample: Duration = 10_000_000
    state_on_change: bool = False
    #: Each flow starts up to this much later than its ``start``, uniformly at random
    #: from the run seed: hosts do not open connections in the same microsecond, and
    #: identical starts leave slow start in lock step (for flows told to start
    #: together, ``start_stagger`` models how a host actually spreads them).
    #: The emulator applies it too (its message sources' timer phase, say).
    start_jitter: Duration = 0
    #: Flows that share a start time take consecutive slots of this length, in an order
    #: drawn from the run seed, each starting at a uniform point of its slot: a host
    #: starts its senders one at a time (ten flows told to start together through
    #: ccemu sent their first data 0.10-0.13 ms apart on average, now and then two at
    #: once: two cores waking ten processes). Applied before ``start_jitter``.
    #: The emulator leaves it out: its hosts stagger their senders by themselves.
    start_stagger: Duration = 0


class Emu(Table):
    #: What drives the emulator's greedy bulk TCP flows: "ccemu" (its own probe) or
    #: "iperf3" (the distribution's, default socket settings; ``ccbench.emu.iperf3``).
    #: UDP, CBR / on-off and ``bytes`` transfers always use the built-in source.
    traffic_source: Literal["ccemu", "iperf3"] = "ccemu"


class Scenario(Table):
    """A complete scenario. Build it with :func:`~ccbench.scenario.load_scenario`,
    :meth:`from_dict` or :meth:`from_toml`; every problem is a :class:`ScenarioError`."""

    run: Run = Run()
    topology: Topology
    flows: list[Flow] = Field(min_length=1)
    emu: Emu = Emu()

    _resolved: list[ResolvedFlow] = PrivateAttr(default_factory=list)
    _pairs: Optional[int] = PrivateAttr(default=None)

    # --- validation -------------------------------------------------------------------

    @model_validator(mode="after")
    def _place_flows(self):
        topo = self.topology
        if isinstance(topo, Dumbbell):
            self._resolved, self._pairs = _place_dumbbell(topo, self.flows)
        else:
            self._resolved = _place_named(topo, self.flows)
        seen: dict[str, int] = {}
        for rf in self._resolved:
            if rf.name in seen and seen[rf.name] != rf.index:
                raise fail(
                    f"is already used by flows[{seen[rf.name]}] (accepted: unique flow names)",
                    at=("flows", rf.index, "name"),
                    value=rf.flow.name,
                )
            seen[rf.name] = rf.index
        mark_paths(self, "")
        return self

    # --- constructors -------------------------------------------------------------------

    @classmethod
    def from_dict(cls, data: Any, source: Optional[str] = None) -> "Scenario":
        """Validates a dict shaped like the TOML file; raises :class:`ScenarioError`."""
        from .limits import check_data, check_model

        check_data(data, source=source)  # depth, finite floats, 64-bit integers (the parse boundary)
        try:
            scn = cls.model_validate(data)
        except ValidationError as e:
            raise from_validation_error(e, data, source=source) from None
        check_model(scn, data, source=source)
        return scn

    @classmethod
    def from_toml(cls, text: str, source: Optional[str] = None) -> "Scenario":
        from .io import loads_scenario

        return loads_scenario(text, source=source)

    # --- saving -------------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """The scenario as the TOML file writes it (unit strings, only keys that were set)."""
        return self.model_dump(mode="python", by_alias=True, exclude_unset=True, exclude_none=True)

    def dumps(self) -> str:
        """The scenario as TOML text."""
        from .io import dumps_scenario

        return dumps_scenario(self)

    def to_toml(self, path) -> None:
        """Writes the scenario to a TOML file."""
        from .io import save_scenario

        save_scenario(self, path)

    def with_values(self, values: dict[str, Any]) -> "Scenario":
        """A copy with dotted keys replaced, validated again: the paths of sweep files.

        ``scn.with_values({"topology.bottleneck.queue.limit": "40000B", "flows.voip.app.interval": "10ms"})``.
        A flow is named by its ``name`` (as in error messages and sweep files) or by its
        index (``"flows.0.transport.cc"``); a name wins, so a flow may be called "0".
        A path that is not in the scenario, or a bad value, is a :class:`ScenarioError`.
        """
        data = self.to_dict()
        for dotted, value in values.items():
            parts = dotted.split(".")
            if not dotted or any(p == "" for p in parts):
                raise ScenarioError([(dotted, "is not a dotted path (accepted: e.g. topology.bottleneck.queue.limit)")])
            cur: Any = data
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                if isinstance(cur, list):
                    key: Any = _list_index(cur, part, ".".join(parts[:i]))
                elif isinstance(cur, dict):
                    key = part
                    if not last and key not in cur:
                        cur[key] = {}
                    elif not last and key == "cc" and isinstance(cur[key], str):
                        cur[key] = {"name": cur[key]}  # cc = "cubic" is { name = "cubic" }
                else:
                    where = ".".join(parts[:i])
                    raise ScenarioError([(where, f"is a value, not a table: {dotted} cannot be set")])
                if last:
                    cur[key] = value
                else:
                    cur = cur[key]
        return Scenario.from_dict(data)

    def revalidated(self) -> "Scenario":
        """A freshly validated copy: checks what in-place assignments to nested tables
        cannot (flow names, placement, pairs) before the scenario is run."""
        return Scenario.from_dict(self.to_dict())

    # --- compiled views --------------------------------------------------------------------

    @property
    def resolved_flows(self) -> list[ResolvedFlow]:
        """Every simulated flow (``count`` and ``direction = "both"`` expanded), in order."""
        return list(self._resolved)

    @property
    def pairs(self) -> Optional[int]:
        """Dumbbell pairs in use (given, or as many as the flows need); None otherwise."""
        return self._pairs

    def flow_names(self) -> list[str]:
        """Names of the simulated flows, e.g. ``["download", "voip.down", "voip.up"]``."""
        return [rf.name for rf in self._resolved]

    def seed_list(self) -> list[int]:
        """Seeds of the repetitions: ``seed, seed + 1, ..., seed + seeds - 1``."""
        return [self.run.seed + i for i in range(self.run.seeds)]

    def to_sim_config(self, seed: Optional[int] = None, *, stagger_starts: bool = True) -> dict[str, Any]:
        """The simulator's input (``ccsim::config::SimConfig``) as a JSON-ready dict
        (``stagger_starts=False``: without ``[run] start_stagger``, for the emulator)."""
        from .compile import to_sim_config

        return to_sim_config(self, seed, stagger_starts=stagger_starts)

    def describe(self) -> str:
        """A few lines for humans: topology, flows, run."""
        topo = self.topology
        if isinstance(topo, Dumbbell):
            head = topo.describe(self._pairs or 1)
        else:
            head = topo.describe()
        lines = [head, "flows:"]
        width = max(len(n) for n in self.flow_names())
        for rf in self._resolved:
            f = rf.flow
            when = ""
            if f.start or f.stop is not None:
                end = format_duration(f.stop) if f.stop is not None else "end"
                when = f"  [{format_duration(f.start)} .. {end}]"
            lines.append(
                f"  {rf.name:<{width}}  {rf.src} -> {rf.dst}  {f.transport.describe()}, {f.app.describe()}{when}"
            )
        r = self.run
        seeds = f"seed {r.seed}" if r.seeds == 1 else f"seeds {r.seed}..{r.seed + r.seeds - 1}"
        lines.append(f"run: {format_duration(r.duration)}, {seeds}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.describe()


def _list_index(items: list, part: str, where: str) -> int:
    """The index of the list item named ``part`` (its ``name`` key), or ``part`` as a number."""
    names = [x.get("name") if isinstance(x, dict) else None for x in items]
    if part in names:
        return names.index(part)
    if part.isdigit() and int(part) < len(items):
        return int(part)
    shown = ", ".join(str(n) for n in names if n is not None)
    raise ScenarioError(
        [(f"{where}.{part}", f"is not an entry of {where} (accepted: a name, {shown}, or an index 0 .. {len(items) - 1})")]
    )


# --- flow placement ----------------------------------------------------------------------------


def _replica_names(flow: Flow) -> list[str]:
    return [flow.name] if flow.count == 1 else [f"{flow.name}[{r}]" for r in range(flow.count)]


def _dumbbell_pair_of(node: str) -> Optional[int]:
    for prefix in ("srv", "cli"):
        if node.startswith(prefix) and node[len(prefix) :].isdigit():
            return int(node[len(prefix) :])
    return None


def _place_dumbbell(topo: Dumbbell, flows: list[Flow]) -> tuple[list[ResolvedFlow], int]:
    explicit: set[int] = set()
    for i, f in enumerate(flows):
        if f.path is not None:
            raise fail(
                'is for parking lots (accepted in a dumbbell: direction = "down", "up" or "both", and pair)',
                at=("flows", i, "path"),
                value=f.path,
            )
        if f.pair is not None:
            explicit.add(f.pair)
        if f.src is not None:
            for key, node in (("src", f.src), ("dst", f.dst)):
                p = _dumbbell_pair_of(node or "")
                if p is None:
                    raise fail(
                        "is not a dumbbell host (accepted: srv0, srv1, ... on the server side, cli0, cli1, ... "
                        'on the client side; or use direction = "down" / "up" and pair)',
                        at=("flows", i, key),
                        value=node,
                    )
                explicit.add(p)

    def auto_pairs():
        p = 0
        while True:
            if p not in explicit:
                yield p
            p += 1

    auto = auto_pairs()
    placed: list[tuple[int, int, str, str, str]] = []  # (index, pair, name, src, dst)
    for i, f in enumerate(flows):
        for base in _replica_names(f):
            if f.src is not None:
                p = max(_dumbbell_pair_of(f.src) or 0, _dumbbell_pair_of(f.dst or "") or 0)
                placed.append((i, p, base, f.src, f.dst or ""))
                continue
            p = f.pair if f.pair is not None else next(auto)
            direction = f.direction or "down"
            if direction in ("down", "both"):
                name = base if direction == "down" else f"{base}.down"
                placed.append((i, p, name, f"srv{p}", f"cli{p}"))
            if direction in ("up", "both"):
                name = base if direction == "up" else f"{base}.up"
                placed.append((i, p, name, f"cli{p}", f"srv{p}"))

    needed = max(p for _, p, *_ in placed) + 1
    pairs = topo.pairs if topo.pairs is not None else needed
    for i, p, name, src, dst in placed:
        if p >= pairs:
            f = flows[i]
            how = "is given" if f.pair is not None or f.src is not None else "would get its own"
            raise fail(
                f"needs pair {p} ({how}) but topology.pairs = {pairs} (accepted: topology.pairs >= {p + 1}, "
                f"or pair = 0 .. {pairs - 1} to share a pair with other flows)",
                at=("flows", i, "pair" if f.pair is not None else "name"),
                value=f.pair if f.pair is not None else name,
            )
    n_delays = len(topo.access.pair_delays)
    if n_delays and n_delays != pairs:
        raise fail(
            f"has {n_delays} delays but the flows use {pairs} pairs (accepted: one delay per pair)",
            at=("topology", "access", "pair_delays"),
        )
    return [ResolvedFlow(name, src, dst, flows[i], i, p) for i, p, name, src, dst in placed], pairs


def _place_named(topo: ParkingLot | Graph, flows: list[Flow]) -> list[ResolvedFlow]:
    from .topology import _Fabric

    if isinstance(topo, _Fabric):
        from .datacenter import place_fabric

        return place_fabric(topo, flows)
    nodes = topo.node_names()
    known = set(nodes)
    kind = "graph" if isinstance(topo, Graph) else "parking lot"
    out: list[ResolvedFlow] = []
    for i, f in enumerate(flows):
        for key in ("direction", "pair"):
            if getattr(f, key) is not None:
                raise fail(
                    f"is for dumbbells (accepted in a {kind}: src and dst"
                    + (', or path = "long" / "cross0" ...)' if isinstance(topo, ParkingLot) else ")"),
                    at=("flows", i, key),
                    value=getattr(f, key),
                )
        if f.path is not None:
            if not isinstance(topo, ParkingLot):
                raise fail("is for parking lots (accepted in a graph: src and dst)", at=("flows", i, "path"), value=f.path)
            ends = topo.path_nodes(f.path)
            if ends is None:
                paths = ", ".join(['"long"'] + [f'"cross{h}"' for h in range(topo.hops)])
                raise fail(f"is not a path of this parking lot (accepted: {paths})", at=("flows", i, "path"), value=f.path)
            src, dst = ends
        elif f.src is not None:
            src, dst = f.src, f.dst or ""
            for key, node in (("src", src), ("dst", dst)):
                if node not in known:
                    raise fail(
                        f'is not a node of the {kind}: flow "{f.name}" cannot start or end there '
                        f"(accepted: one of {', '.join(nodes)})",
                        at=("flows", i, key),
                        value=node,
                    )
        else:
            hint = 'path = "long" / "cross0" ... or src and dst' if isinstance(topo, ParkingLot) else "src and dst"
            raise fail(f"has no endpoints (accepted in a {kind}: {hint})", at=("flows", i, "src"))
        if src == dst:
            raise fail("is the same node as src (accepted: a different node)", at=("flows", i, "dst"), value=dst)
        for base in _replica_names(f):
            out.append(ResolvedFlow(base, src, dst, f, i))
    return out
