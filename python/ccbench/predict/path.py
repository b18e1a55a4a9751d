"""The links a flow's packets cross, read from the scenario's topology.

A model needs what the packet-level backends see on the flow's path: the propagation
and serialisation delays (the base RTT), the slowest link (the bottleneck) with its
queue, and the loss models on the way. :func:`flow_path` returns the forward (data)
and reverse (ACK) links of one resolved flow for the three topology kinds, in the order
the packets cross them, using the same placement and routing rules as the simulator:

* dumbbell: server access link (``pair_delays[i]`` or ``access.delay``), the bottleneck
  direction, client access link; "up" flows the other way round;
* parking lot: access link, the hops of the path (all for ``long``, hop i for
  ``cross{i}``), access link; the ACKs cross the ``reverse`` links;
* graph: explicit ``routes`` first, otherwise the smallest total delay (Dijkstra), as
  the simulator's default routing;
* leaf-spine and fat tree: host link, the fabric hops between the two hosts' switches
  (ECMP picks which spine or core, but every choice has the same links' rates and
  delays), host link.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any, Optional

from ccbench.scenario.queue import DropTail
from ccbench.scenario.topology import Dumbbell, FatTree, Graph, LeafSpine, ParkingLot

__all__ = ["Link", "FlowPath", "flow_path", "loss_probability"]


@dataclass(frozen=True)
class Link:
    """One direction of a link: rate [bit/s], one-way propagation delay [s], its queue
    and loss model (scenario objects, ``loss`` may be None)."""

    name: str
    rate_bps: float
    delay_s: float
    queue: Any = None
    loss: Any = None

    def serialisation_s(self, nbytes: float) -> float:
        return nbytes * 8.0 / self.rate_bps

    def buffer_bytes(self, packet_bytes: float) -> Optional[float]:
        """The queue limit in bytes (packets x ``packet_bytes`` for a packet limit)."""
        limit = getattr(self.queue, "limit", None)
        if limit is None:
            return None
        return float(limit.value) * (packet_bytes if limit.is_packets else 1.0)

    @property
    def is_droptail(self) -> bool:
        return self.queue is None or isinstance(self.queue, DropTail)


@dataclass(frozen=True)
class FlowPath:
    forward: tuple[Link, ...]
    reverse: tuple[Link, ...]

    def base_rtt_s(self, data_bytes: float, ack_bytes: float) -> float:
        """Propagation both ways plus the serialisation of one data packet on every forward
        link and of one ACK on every reverse link (store-and-forward, empty queues)."""
        fwd = sum(lk.delay_s + lk.serialisation_s(data_bytes) for lk in self.forward)
        rev = sum(lk.delay_s + lk.serialisation_s(ack_bytes) for lk in self.reverse)
        return fwd + rev

    def one_way_s(self, data_bytes: float) -> float:
        return sum(lk.delay_s + lk.serialisation_s(data_bytes) for lk in self.forward)

    @property
    def bottleneck(self) -> Link:
        """The slowest forward link (the first of equals: where the queue builds)."""
        return min(self.forward, key=lambda lk: lk.rate_bps)

    def loss(self) -> tuple[Optional[float], list[str]]:
        """Loss probability of a data packet over the forward links' loss models:
        1 - prod(1 - p_i); None when a model has no stationary rate (a trace). Marks
        (``action = "mark"``) are left out here (see :func:`loss_probability`)."""
        keep, notes = 1.0, []
        for lk in self.forward:
            if lk.loss is None or getattr(lk.loss, "action", "drop") != "drop":
                continue
            p = loss_probability(lk.loss)
            if p is None:
                notes.append(f"{lk.name}: {lk.loss.kind} loss has no stationary rate")
                return None, notes
            keep *= 1.0 - p
        return 1.0 - keep, notes

    def has_random_loss(self) -> bool:
        return any(lk.loss is not None and getattr(lk.loss, "action", "drop") == "drop" for lk in self.forward)


def loss_probability(loss: Any) -> Optional[float]:
    """Long-run loss probability of one loss model: Bernoulli p, periodic 1/every, the
    Gilbert-Elliott chain's stationary mix (pi_bad = p_gb / (p_gb + p_bg)); None for a
    trace (its rate depends on the traffic)."""
    kind = loss.kind
    if kind == "bernoulli":
        return float(loss.p)
    if kind == "periodic":
        return 1.0 / loss.every
    if kind == "gilbert_elliott":
        tot = loss.p_gb + loss.p_bg
        if tot == 0:
            return float(loss.loss_good)
        bad = loss.p_gb / tot
        return bad * loss.loss_bad + (1 - bad) * loss.loss_good
    return None


def flow_path(scenario, rf) -> FlowPath:
    """Forward and reverse links of the resolved flow ``rf`` in ``scenario``."""
    topo = scenario.topology
    if isinstance(topo, Dumbbell):
        return _dumbbell(topo, rf)
    if isinstance(topo, ParkingLot):
        return _parking_lot(topo, rf)
    if isinstance(topo, (LeafSpine, FatTree)):
        return _fabric(topo, rf)
    return _graph(topo, rf)


def _fabric_hops(topo, a: int, b: int) -> int:
    """Switch-to-switch links between hosts ``h{a}`` and ``h{b}``: 0 under one leaf or
    edge switch; 2 through a spine, or through an aggregation switch of one pod; 4
    through a core switch between pods."""
    if isinstance(topo, LeafSpine):
        return 0 if a // topo.hosts_per_leaf == b // topo.hosts_per_leaf else 2
    half = topo.k // 2
    per_pod = half * half
    if a // per_pod != b // per_pod:
        return 4
    return 0 if a // half == b // half else 2


def _fabric(topo, rf) -> FlowPath:
    h, f = topo.host, topo.fabric
    q = topo.switch_queue()
    host = Link("host", h.rate, h.delay / 1e9, q)
    fabric = Link("fabric", f.rate, f.delay / 1e9, q)
    hops = _fabric_hops(topo, int(rf.src[1:]), int(rf.dst[1:]))
    path = (host, *([fabric] * hops), host)
    return FlowPath(path, path)


def _dumbbell(topo: Dumbbell, rf) -> FlowPath:
    a, b = topo.access, topo.bottleneck
    pair = rf.pair or 0
    srv_delay = a.pair_delays[pair] if pair < len(a.pair_delays) else a.delay
    srv = Link(f"srv{pair}-access", a.rate, srv_delay / 1e9, a.queue)
    cli = Link(f"cli{pair}-access", a.rate, a.delay / 1e9, a.queue)
    down = Link("bottleneck_down", b.down, b.down_delay_ns / 1e9, b.queue, b.loss)
    up = Link("bottleneck_up", b.up, b.up_delay_ns / 1e9, b.up_queue if b.up_queue is not None else b.queue, b.up_loss)
    if rf.src.startswith("srv"):
        return FlowPath((srv, down, cli), (cli, up, srv))
    return FlowPath((cli, up, srv), (srv, down, cli))


def _router_of(topo: ParkingLot, node: str) -> int:
    """Index of the router a parking-lot node hangs on (r{i} itself for a router)."""
    if node == "long_src":
        return 0
    if node == "long_dst":
        return topo.hops
    if node.startswith("x") and node.endswith("_src"):
        return int(node[1:-4])
    if node.startswith("x") and node.endswith("_dst"):
        return int(node[1:-4]) + 1
    return int(node[1:])  # r{i}


def _parking_lot(topo: ParkingLot, rf) -> FlowPath:
    a = topo.access
    acc = Link("access", a.rate, a.delay / 1e9, a.queue)
    lo, hi = sorted((_router_of(topo, rf.src), _router_of(topo, rf.dst)))
    # Hosts hang on their router by an access link; a router endpoint has none.
    ends = [acc] if not rf.src.startswith("r") else []
    fwd, rev = list(ends), list(ends)
    r = topo.reverse
    for i in range(lo, hi):
        rate, delay, queue, loss = topo.hop(i)
        fwd.append(Link(f"hop{i}", rate, delay / 1e9, queue, loss))
        rev.insert(len(ends), Link(f"hop{i}_rev", r.rate if r.rate is not None else rate,
                                   (r.delay if r.delay is not None else delay) / 1e9,
                                   r.queue if r.queue is not None else DropTail()))
    if not rf.dst.startswith("r"):
        fwd.append(acc)
        rev.append(acc)
    return FlowPath(tuple(fwd), tuple(rev))


def _graph(topo: Graph, rf) -> FlowPath:
    links: dict[tuple[str, str], Link] = {}
    for gl in topo.links:
        for name, f, t in gl.directions():
            links.setdefault((f, t), Link(name, gl.rate, gl.delay / 1e9, gl.queue, gl.loss))
    routes = {(r.at, r.dst): r.next for r in topo.routes}
    return FlowPath(_route(links, routes, rf.src, rf.dst), _route(links, routes, rf.dst, rf.src))


def _route(links: dict, routes: dict, src: str, dst: str) -> tuple[Link, ...]:
    out: list[Link] = []
    node, seen = src, {src}
    while node != dst:
        nxt = routes.get((node, dst)) or _next_hop(links, node, dst)
        if nxt is None or (node, nxt) not in links or nxt in seen and nxt != dst:
            raise ValueError(f"no route from {src} to {dst} in the graph (stuck at {node})")
        out.append(links[(node, nxt)])
        seen.add(nxt)
        node = nxt
    return tuple(out)


def _next_hop(links: dict, src: str, dst: str) -> Optional[str]:
    """First hop of the smallest-delay path (Dijkstra; ties by node name)."""
    dist = {src: 0.0}
    heap: list[tuple[float, str, Optional[str]]] = [(0.0, src, None)]
    first: dict[str, Optional[str]] = {}
    while heap:
        d, node, hop = heapq.heappop(heap)
        if node in first:
            continue
        first[node] = hop
        if node == dst:
            return hop
        for (f, t), lk in sorted(links.items()):
            if f == node and t not in first:
                nd = d + lk.delay_s
                if nd < dist.get(t, math.inf):
                    dist[t] = nd
                    heapq.heappush(heap, (nd, t, hop or t))
    return None
