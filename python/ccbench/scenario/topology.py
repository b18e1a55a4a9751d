"""Topologies: dumbbell, parking lot, and an explicit graph.

Dumbbell (the home-gateway picture: servers on the Internet side, clients at home)::

    [topology]
    kind = "dumbbell"
    pairs = 2                  # optional: default = as many pairs as the flows need
    bottleneck = { down = "1.5Mbit", up = "256kbit", delay = "50ms",
                   queue = { kind = "droptail", limit = "20000B" } }
    # more bottleneck keys: down_delay / up_delay (override `delay` per direction),
    # up_queue (default: same as queue), loss (on the down link), up_loss,
    # jitter (random delay on the down link), up_jitter,
    # monitor (sample both bottleneck queues; default true)
    # A link rate may also be a Mahimahi trace or a schedule (scenario/linkrate.py):
    #   down = { trace = "examples/traces/cellular.down" }
    #   down = { schedule = [["0s", "10Mbit"], ["5s", "2Mbit"]], repeat = "10s" }
    access = { rate = "10Gbit", delay = "0ms", pair_delays = ["5ms", "20ms"] }
    # access jitter: the hosts' stack latency, a random delay around each access
    # link's delay, per packet, in order (dist/correlation as the bottleneck's jitter):
    #   access = { delay = "4us", jitter = { sigma = "2500ns", dist = "pareto" } }

    Nodes: srv0..srv{N-1}, cli0..cli{N-1}, routers rtr_srv, rtr_cli. "down" is
    srv -> cli (rtr_srv -> rtr_cli is the bottleneck's down link).

    **RTT.** A packet from srv{i} to cli{i} crosses the server's access link
    (``pair_delays[i]``, or ``access.delay``), the bottleneck (``down_delay`` or
    ``delay``) and the client's access link (``access.delay``); so the base RTT of pair
    i (no queueing, no serialisation) is::

        RTT_i = down_delay + up_delay + 2 * (server access delay_i + access.delay)

    With the usual ``access.delay = 0`` and one ``delay``, RTT = 2 x bottleneck delay:
    ``delay = "50ms"`` is the 100 ms RTT of the Stewart ADSL experiments. In short: the
    RTT you think of is 2 x (bottleneck delay + the access delays on the path).

Parking lot (K bottlenecks in a row, one long flow across all, cross traffic per hop)::

    [topology]
    kind = "parking_lot"
    hops = 3
    rate = "10Mbit"            # every forward hop r{i} -> r{i+1}
    delay = "10ms"
    queue = { kind = "droptail", limit = "100pkt" }
    per_hop = [ {}, { rate = "5Mbit" }, {} ]      # optional overrides, one per hop
    reverse = { rate = "10Mbit", delay = "10ms" }  # ACK path; default: as forward

    Nodes: routers r0..rK, long_src (at r0), long_dst (at rK), x{i}_src (at r{i}),
    x{i}_dst (at r{i+1}). Flows use path = "long" or path = "cross{i}", or src/dst.

Graph (anything else)::

    [topology]
    kind = "graph"
    nodes = ["a", "r1", "r2", "b"]
    links = [ { from = "a", to = "r1", rate = "1Gbit", delay = "1ms", duplex = true },
              { from = "r1", to = "r2", rate = "10Mbit", delay = "20ms", monitor = true,
                queue = { kind = "codel" }, name = "core" },
              { from = "r2", to = "r1", rate = "10Mbit", delay = "20ms" },
              { from = "r2", to = "b", rate = "1Gbit", delay = "1ms", duplex = true } ]
    routes = [ { at = "r1", dst = "b", next = "r2" } ]   # optional; default shortest delay

    Each link is one direction; ``duplex = true`` adds the same link the other way
    (named NAME_rev). Links are named ``from->to`` unless ``name`` is given.

Data-centre fabrics (routes: ECMP, one of the shortest paths per flow by hash)::

    [topology]
    kind = "leaf_spine"        # or kind = "fat_tree" with k = 4 (k pods, k^3/4 hosts)
    leaves = 8
    spines = 4
    hosts_per_leaf = 16
    host = { rate = "10Gbit", delay = "1us" }     # host <-> leaf
    fabric = { rate = "40Gbit", delay = "1us" }   # leaf <-> spine (switch <-> switch)
    queue = { kind = "droptail", limit = "250pkt" }   # every switch port
    mark_threshold = "65pkt"   # optional: DCTCP's step marking (ECN CE above K) on
                               # every switch queue (RED with min_th = K, probability 1)
    monitor = false            # sample every switch queue (default false: many links)

    Nodes: hosts h0..h{H-1} numbered leaf by leaf, switches leaf{j}, spine{s}
    (fat tree: edge{p}_{e}, agg{p}_{a}, core{c}). Links: h{i}_up (NIC), h{i}_down
    (switch port to the host: where incast queues), leaf{j}_spine{s}, spine{s}_leaf{j}.
    Flows name hosts with src/dst; ``src = "*"`` with ``count`` spreads the replicas
    over every other host (many-to-one incast), ``"random"`` picks hosts at random.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from .base import Table, tagged
from .errors import fail
from .linkrate import LinkJitter, LinkRate, rate_json, rate_text
from .loss import Loss
from .queue import DropTail, Queue, Red
from .units import Duration, QLimit, QueueLimit, Rate, format_duration, format_rate

__all__ = [
    "Bottleneck",
    "Access",
    "Dumbbell",
    "HopOverride",
    "ReverseLinks",
    "ParkingLot",
    "GraphLink",
    "Route",
    "Graph",
    "FabricLink",
    "LeafSpine",
    "FatTree",
    "Topology",
    "link_json",
]


def link_json(
    rate: int, delay: int, queue: Any, loss: Any = None, monitor: bool = False, jitter: Any = None
) -> dict[str, Any]:
    """One direction of a link as ``ccsim::config::LinkConfig``."""
    out: dict[str, Any] = {**rate_json(rate), "delay_ns": delay, "queue": queue.to_json()}
    if loss is not None:
        out["loss"] = loss.to_json()
    if jitter is not None:
        out["jitter"] = jitter.to_json()
    out["monitor"] = monitor
    return out


def _queue_text(q: Any) -> str:
    if isinstance(q, DropTail):
        return f"droptail {q.limit} ({q.effective_rule})"
    return q.kind


class HostJitter(LinkJitter):
    """Random host latency on an access link: as a link's ``jitter``, but in order by
    default (a host's stack delays its packets; it does not reorder them)."""

    reorder: bool = False


class Access(Table):
    """Links between each host and its router (both directions alike)."""

    rate: Rate = 10_000_000_000
    delay: Duration = 0
    #: Server-side access delay per pair (one per pair), replacing ``delay`` there.
    pair_delays: list[Duration] = Field(default_factory=list)
    #: Default: the simulator's 100000-packet FIFO (never the bottleneck).
    queue: Optional[Queue] = None
    #: Random delay around ``delay``, per packet, each direction of each host's link
    #: drawing its own: the hosts' stack and NIC latency. Real hosts are never exactly
    #: in phase; without it, flows whose packets meet a full queue at the same instant
    #: lose in the same order every run (Floyd and Jacobson's phase effects).
    jitter: Optional[HostJitter] = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"rate_bps": self.rate, "delay_ns": self.delay, "pair_delays_ns": list(self.pair_delays)}
        if self.queue is not None:
            out["queue"] = self.queue.to_json()
        if self.jitter is not None:
            out["jitter"] = self.jitter.to_json()
        return out


# --- dumbbell -----------------------------------------------------------------------------


class Bottleneck(Table):
    down: LinkRate
    up: LinkRate
    #: One-way propagation delay of each direction (unless down_delay/up_delay given).
    delay: Duration = 0
    down_delay: Optional[Duration] = None
    up_delay: Optional[Duration] = None
    queue: Queue = DropTail()
    #: Default: the same discipline as ``queue``.
    up_queue: Optional[Queue] = None
    #: Loss model on the down link.
    loss: Optional[Loss] = None
    #: Loss model on the up link (none by default, also when ``loss`` is given).
    up_loss: Optional[Loss] = None
    #: Random delay on the down link (netem's jitter), and on the up link.
    jitter: Optional[LinkJitter] = None
    up_jitter: Optional[LinkJitter] = None
    monitor: bool = True

    @property
    def down_delay_ns(self) -> int:
        return self.delay if self.down_delay is None else self.down_delay

    @property
    def up_delay_ns(self) -> int:
        return self.delay if self.up_delay is None else self.up_delay

    def to_json(self) -> dict[str, Any]:
        up_q = self.up_queue if self.up_queue is not None else self.queue
        return {
            "down": link_json(self.down, self.down_delay_ns, self.queue, self.loss, self.monitor, self.jitter),
            "up": link_json(self.up, self.up_delay_ns, up_q, self.up_loss, self.monitor, self.up_jitter),
        }


class Dumbbell(Table):
    kind: Literal["dumbbell"] = "dumbbell"
    pairs: Optional[int] = Field(None, ge=1)
    bottleneck: Bottleneck
    access: Access = Access()

    @model_validator(mode="after")
    def _check(self):
        n = len(self.access.pair_delays)
        if self.pairs is not None and n and n != self.pairs:
            raise fail(
                f"has {n} delays for pairs = {self.pairs} (accepted: one delay per pair, or none)",
                at=("access", "pair_delays"),
            )
        return self

    def node_names(self, pairs: int) -> list[str]:
        return ["rtr_srv", "rtr_cli"] + [f"srv{i}" for i in range(pairs)] + [f"cli{i}" for i in range(pairs)]

    def base_rtt_ns(self, pair: int) -> int:
        """Round-trip propagation delay between srv{pair} and cli{pair}."""
        srv = self.access.pair_delays[pair] if pair < len(self.access.pair_delays) else self.access.delay
        b = self.bottleneck
        return b.down_delay_ns + b.up_delay_ns + 2 * (srv + self.access.delay)

    def to_json(self, pairs: int) -> dict[str, Any]:
        return {
            "kind": "dumbbell",
            "pairs": pairs,
            "bottleneck": self.bottleneck.to_json(),
            "access": self.access.to_json(),
        }

    def describe(self, pairs: int) -> str:
        b = self.bottleneck
        rtts = sorted({self.base_rtt_ns(i) for i in range(pairs)})
        rtt = ", ".join(format_duration(r) for r in rtts)
        q = _queue_text(b.queue)
        if b.up_queue is not None:
            q += f", up {_queue_text(b.up_queue)}"
        return (
            f"dumbbell, {pairs} pair{'s' * (pairs != 1)}: bottleneck down {rate_text(b.down)} / up "
            f"{rate_text(b.up)}, base RTT {rtt}, queue {q}"
        )


# --- parking lot -------------------------------------------------------------------------------


class HopOverride(Table):
    rate: Optional[LinkRate] = None
    delay: Optional[Duration] = None
    queue: Optional[Queue] = None
    loss: Optional[Loss] = None


class ReverseLinks(Table):
    """The reverse (ACK) direction of every hop; unset values copy the forward hop,
    except the queue, which defaults to a 1000-packet FIFO."""

    rate: Optional[Rate] = None
    delay: Optional[Duration] = None
    queue: Optional[Queue] = None


class ParkingLot(Table):
    kind: Literal["parking_lot"] = "parking_lot"
    hops: int = Field(ge=1)
    rate: LinkRate
    delay: Duration = 0
    queue: Queue = DropTail()
    loss: Optional[Loss] = None
    #: Random delay on every forward hop.
    jitter: Optional[LinkJitter] = None
    per_hop: list[HopOverride] = Field(default_factory=list)
    reverse: ReverseLinks = ReverseLinks()
    monitor: bool = True
    access: Access = Access()

    @model_validator(mode="after")
    def _check(self):
        if self.per_hop and len(self.per_hop) != self.hops:
            raise fail(
                f"has {len(self.per_hop)} entries for hops = {self.hops} (accepted: one table per hop, {{}} for no change)",
                at=("per_hop",),
            )
        if self.access.pair_delays:
            raise fail("is not used by a parking lot (accepted: access.delay)", at=("access", "pair_delays"))
        return self

    def hop(self, i: int) -> tuple[int, int, Any, Any]:
        """(rate, delay, queue, loss) of forward hop i."""
        o = self.per_hop[i] if self.per_hop else HopOverride()
        return (
            o.rate if o.rate is not None else self.rate,
            o.delay if o.delay is not None else self.delay,
            o.queue if o.queue is not None else self.queue,
            o.loss if o.loss is not None else self.loss,
        )

    def node_names(self) -> list[str]:
        k = self.hops
        names = [f"r{i}" for i in range(k + 1)] + ["long_src", "long_dst"]
        for i in range(k):
            names += [f"x{i}_src", f"x{i}_dst"]
        return names

    def path_nodes(self, path: str) -> Optional[tuple[str, str]]:
        if path == "long":
            return "long_src", "long_dst"
        if path.startswith("cross") and path[5:].isdigit() and int(path[5:]) < self.hops:
            i = int(path[5:])
            return f"x{i}_src", f"x{i}_dst"
        return None

    def to_json(self) -> dict[str, Any]:
        fwd, rev = [], []
        r = self.reverse
        for i in range(self.hops):
            rate, delay, queue, loss = self.hop(i)
            fwd.append(link_json(rate, delay, queue, loss, self.monitor, self.jitter))
            rev.append(
                link_json(
                    r.rate if r.rate is not None else rate,
                    r.delay if r.delay is not None else delay,
                    r.queue if r.queue is not None else DropTail(),
                )
            )
        return {"kind": "parking_lot", "hops": self.hops, "hop_links": fwd, "reverse_links": rev, "access": self.access.to_json()}

    def describe(self) -> str:
        rates = sorted({format_rate(self.hop(i)[0]) for i in range(self.hops)})
        return f"parking lot, {self.hops} hops at {'/'.join(rates)}, {format_duration(self.delay)} per hop, queue {_queue_text(self.queue)}"


# --- graph -----------------------------------------------------------------------------------


class GraphLink(Table):
    from_: str = Field(alias="from")
    to: str
    rate: LinkRate
    delay: Duration = 0
    queue: Queue = DropTail()
    loss: Optional[Loss] = None
    jitter: Optional[LinkJitter] = None
    name: Optional[str] = None
    monitor: bool = False
    #: Also add the same link in the opposite direction (named NAME_rev).
    duplex: bool = False

    @property
    def link_name(self) -> str:
        return self.name if self.name is not None else f"{self.from_}->{self.to}"

    def directions(self) -> list[tuple[str, str, str]]:
        """(name, from, to) of the one or two links this entry stands for."""
        out = [(self.link_name, self.from_, self.to)]
        if self.duplex:
            rev = f"{self.name}_rev" if self.name is not None else f"{self.to}->{self.from_}"
            out.append((rev, self.to, self.from_))
        return out


class Route(Table):
    at: str
    dst: str
    next: str


class Graph(Table):
    kind: Literal["graph"] = "graph"
    nodes: list[str] = Field(min_length=2)
    links: list[GraphLink]
    routes: list[Route] = Field(default_factory=list)

    @model_validator(mode="after")
    def _check(self):
        seen: set[str] = set()
        for i, n in enumerate(self.nodes):
            if n in seen:
                raise fail("is listed twice (accepted: unique node names)", at=("nodes", i), value=n)
            seen.add(n)
        known = ", ".join(self.nodes)
        names: dict[str, int] = {}
        for i, link in enumerate(self.links):
            for key, node in (("from", link.from_), ("to", link.to)):
                if node not in seen:
                    raise fail(f"is not a node (accepted: one of {known})", at=("links", i, key), value=node)
            for name, _, _ in link.directions():
                if name in names:
                    raise fail(
                        f"is already the name of links[{names[name]}] (accepted: unique link names)",
                        at=("links", i, "name"),
                        value=name,
                    )
                names[name] = i
        for i, r in enumerate(self.routes):
            for key in ("at", "dst", "next"):
                node = getattr(r, key)
                if node not in seen:
                    raise fail(f"is not a node (accepted: one of {known})", at=("routes", i, key), value=node)
            if not any(f == r.at and t == r.next for link in self.links for _, f, t in link.directions()):
                raise fail(f'has no link from "{r.at}" to it', at=("routes", i, "next"), value=r.next)
        return self

    def node_names(self) -> list[str]:
        return list(self.nodes)

    def to_json(self) -> dict[str, Any]:
        links = []
        for link in self.links:
            for name, f, t in link.directions():
                links.append(
                    {"name": name, "from": f, "to": t,
                     **link_json(link.rate, link.delay, link.queue, link.loss, link.monitor, link.jitter)}
                )
        return {
            "kind": "graph",
            "nodes": list(self.nodes),
            "links": links,
            "routes": [{"at": r.at, "dst": r.dst, "next": r.next} for r in self.routes],
        }

    def describe(self) -> str:
        n = sum(len(link.directions()) for link in self.links)
        mon = [name for link in self.links if link.monitor for name, _, _ in link.directions()]
        return f"graph, {len(self.nodes)} nodes, {n} links" + (f", monitored: {', '.join(mon)}" if mon else "")


# --- data-centre fabrics ------------------------------------------------------------------------


class FabricLink(Table):
    rate: Rate
    delay: Duration = 0


class _Fabric(Table):
    host: FabricLink
    fabric: FabricLink
    #: Every switch port's queue.
    queue: Queue = DropTail(limit=QLimit(250, "pkt"))
    #: DCTCP marking threshold K: the switch queues CE-mark above K packets/bytes.
    mark_threshold: Optional[QueueLimit] = None
    #: The hosts' NIC queue (default: the simulator's deep FIFO, never the bottleneck).
    nic_queue: Optional[Queue] = None
    monitor: bool = False

    @model_validator(mode="after")
    def _check_mark(self):
        if self.mark_threshold is not None and not isinstance(self.queue, DropTail):
            raise fail(
                f'replaces the switch queue with step marking; it needs queue kind "droptail" (got "{self.queue.kind}")',
                at=("mark_threshold",),
            )
        if self.mark_threshold is not None:
            self.switch_queue()  # RED's own checks: threshold below the limit
        return self

    def switch_queue(self) -> Queue:
        """The switch queue: as given, or with ``mark_threshold`` DCTCP's step marking
        (Alizadeh et al. 2010, §3.1: mark CE when the instantaneous queue exceeds K),
        built as Linux does it: RED with min = K, max = K + 1 byte, probability 1 and
        no averaging (w_q = 1)."""
        k = self.mark_threshold
        if k is None:
            return self.queue
        avpkt = 1500
        k_bytes = k.value * avpkt if k.is_packets else k.value
        try:
            return Red.model_validate(
                {
                    "limit": str(self.queue.limit), "min_th": f"{k_bytes}B", "max_th": f"{k_bytes + 1}B",
                    "avpkt": f"{avpkt}B", "max_p": 1.0, "w_q": 1.0, "gentle": False, "ecn": True,
                }
            )
        except Exception:
            raise fail(f"must be below the queue limit ({self.queue.limit})", at=("mark_threshold",), value=str(k)) from None

    def _links_json(self) -> dict[str, Any]:
        q = self.switch_queue()
        out: dict[str, Any] = {
            "host_link": link_json(self.host.rate, self.host.delay, q, monitor=self.monitor),
            "fabric_link": link_json(self.fabric.rate, self.fabric.delay, q, monitor=self.monitor),
        }
        if self.nic_queue is not None:
            out["nic_queue"] = self.nic_queue.to_json()
        return out

    def _describe(self, shape: str) -> str:
        mark = f", DCTCP marking above {self.mark_threshold}" if self.mark_threshold is not None else ""
        return (
            f"{shape}: hosts at {format_rate(self.host.rate)}, fabric {format_rate(self.fabric.rate)}, "
            f"switch queue {_queue_text(self.queue)}{mark}, ECMP"
        )

    @property
    def host_count(self) -> int:
        raise NotImplementedError

    def host_names(self) -> list[str]:
        return [f"h{i}" for i in range(self.host_count)]


class LeafSpine(_Fabric):
    kind: Literal["leaf_spine"] = "leaf_spine"
    leaves: int = Field(ge=1, le=4096)
    spines: int = Field(ge=1, le=4096)
    hosts_per_leaf: int = Field(ge=1, le=100_000)

    @property
    def host_count(self) -> int:
        return self.leaves * self.hosts_per_leaf

    def node_names(self) -> list[str]:
        return self.host_names() + [f"leaf{j}" for j in range(self.leaves)] + [f"spine{s}" for s in range(self.spines)]

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": "leaf_spine", "leaves": self.leaves, "spines": self.spines,
            "hosts_per_leaf": self.hosts_per_leaf, **self._links_json(),
        }

    def describe(self) -> str:
        return self._describe(f"leaf-spine, {self.leaves} leaves x {self.spines} spines, {self.host_count} hosts")


class FatTree(_Fabric):
    kind: Literal["fat_tree"] = "fat_tree"
    #: Ports per switch (even): k pods, (k/2)^2 core switches, k^3/4 hosts.
    k: int = Field(ge=2, le=128)

    @model_validator(mode="after")
    def _even(self):
        if self.k % 2:
            raise fail("must be even (accepted: 2, 4, 6, ... 128)", at=("k",), value=self.k)
        return self

    @property
    def host_count(self) -> int:
        return self.k**3 // 4

    def node_names(self) -> list[str]:
        k, half = self.k, self.k // 2
        names = self.host_names()
        for p in range(k):
            names += [f"edge{p}_{e}" for e in range(half)] + [f"agg{p}_{a}" for a in range(half)]
        return names + [f"core{c}" for c in range(half * half)]

    def to_json(self) -> dict[str, Any]:
        return {"kind": "fat_tree", "k": self.k, **self._links_json()}

    def describe(self) -> str:
        return self._describe(f"fat tree, k = {self.k}, {self.host_count} hosts")


Topology = tagged(Dumbbell, ParkingLot, Graph, LeafSpine, FatTree)
"""Any topology, chosen by ``kind``."""
