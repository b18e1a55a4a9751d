"""Data-centre workloads on the fabrics (``leaf_spine``, ``fat_tree``).

- **Incast** (many to one): ``src = "*"`` with ``count = N`` gives replica r the
  r-th host other than ``dst`` (cycling), so N senders answer one aggregator at once
  as in the partition/aggregate pattern of DCTCP (Alizadeh et al. 2010, §2.3).
- **Random pairs**: ``src = "random"`` and/or ``dst = "random"`` draw the hosts per
  replica (uniformly, never src == dst), seeded by the run seed.
- **Poisson arrivals**: ``arrivals = "poisson"`` makes ``start_every`` the mean of
  exponential gaps between the replicas' starts.
- **Flow sizes**: ``app = { kind = "bulk", size_dist = "web_search" }`` (or
  ``"data_mining"``) draws each replica's bytes from the empirical CDFs of the
  pFabric simulations (Alizadeh et al., SIGCOMM 2013, Fig. 4): web search from the
  DCTCP measurements, data mining from VL2 (Greenberg et al. 2009); sizes in
  1460-byte packets, linear between the CDF's points.

Random draws happen when the simulator config is made (``to_sim_config(seed)``):
each repetition's seed gives its own hosts, starts and sizes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import fail

# numpy is imported inside the functions that draw a workload, so that `ccbench validate`
# (which compiles scenarios) never loads it.
if TYPE_CHECKING:
    import numpy as np

    from .flows import Flow, ResolvedFlow
    from .model import Scenario
    from .topology import _Fabric

__all__ = ["FLOW_SIZE_CDFS", "MSS_BYTES", "draw_sizes", "place_fabric", "apply_workload"]

MSS_BYTES = 1460

#: (cumulative probability, flow size in packets) points of each CDF.
FLOW_SIZE_CDFS: dict[str, tuple[tuple[float, float], ...]] = {
    "web_search": (
        (0.0, 6), (0.15, 6), (0.2, 13), (0.3, 19), (0.4, 33), (0.53, 53), (0.6, 133),
        (0.7, 667), (0.8, 1333), (0.9, 3333), (0.97, 6667), (1.0, 20000),
    ),
    "data_mining": (
        (0.0, 1), (0.5, 1), (0.6, 2), (0.7, 3), (0.8, 7), (0.9, 267), (0.95, 2107),
        (0.99, 66667), (1.0, 666667),
    ),
}

WILDCARDS = ("*", "random")


def draw_sizes(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` flow sizes in bytes from the named CDF (inverse-transform sampling)."""
    import numpy as np
    pts = FLOW_SIZE_CDFS[name]
    p = np.array([q for q, _ in pts])
    pkts = np.array([s for _, s in pts], dtype=float)
    return np.maximum(1, np.round(np.interp(rng.random(n), p, pkts) * MSS_BYTES)).astype(np.int64)


def _rng(seed: int, index: int, what: int) -> np.random.Generator:
    import numpy as np
    return np.random.default_rng([seed, index, what])


def place_fabric(topo: "_Fabric", flows: "list[Flow]") -> "list[ResolvedFlow]":
    """Resolves the flows of a fabric: named hosts, ``"*"`` (incast) and ``"random"``."""
    from .flows import ResolvedFlow
    from .model import _replica_names

    hosts = topo.host_names()
    switches = set(topo.node_names()) - set(hosts)
    known = set(hosts)
    out: list[ResolvedFlow] = []
    for i, f in enumerate(flows):
        for key in ("direction", "pair", "path"):
            if getattr(f, key) is not None:
                raise fail(f"is not for fabrics (accepted: src and dst)", at=("flows", i, key), value=getattr(f, key))
        if f.src is None:
            raise fail('has no endpoints (accepted in a fabric: src and dst, hosts h0, h1, ... or "*" / "random")', at=("flows", i, "src"))
        for key in ("src", "dst"):
            node = getattr(f, key)
            if node in WILDCARDS and not (node == "*" and key == "dst"):
                continue
            if node not in known:
                what = "a switch; flows run between hosts" if node in switches else "not a host of the fabric"
                raise fail(
                    f'is {what} (accepted: h0 .. h{len(hosts) - 1}, "random", and for src "*")',
                    at=("flows", i, key),
                    value=node,
                )
        if f.src == "*" and f.dst == "random":
            raise fail('"*" needs a fixed dst (accepted: a host; or src = "random")', at=("flows", i, "src"), value="*")
        if f.src == f.dst and f.src != "random":
            raise fail("is the same node as src (accepted: a different node)", at=("flows", i, "dst"), value=f.dst)
        others = [h for h in hosts if h != f.dst] if f.src == "*" else []
        for r, name in enumerate(_replica_names(f)):
            src = others[r % len(others)] if f.src == "*" else f.src
            out.append(ResolvedFlow(name, src, f.dst, f, i))
    return out


def apply_workload(scn: "Scenario", flows_json: list[dict[str, Any]], seed: int) -> list[dict[str, Any]]:
    """Draws what is random per run: hosts, Poisson starts, flow sizes."""
    from .topology import _Fabric

    resolved = scn.resolved_flows
    hosts = scn.topology.host_names() if isinstance(scn.topology, _Fabric) else []
    by_index: dict[int, list[int]] = {}
    for k, rf in enumerate(resolved):
        by_index.setdefault(rf.index, []).append(k)
    for index, rows in by_index.items():
        f = resolved[rows[0]].flow
        n = len(rows)
        if getattr(f, "arrivals", "regular") == "poisson":
            import numpy as np

            gaps = _rng(seed, index, 1).exponential(float(f.start_every or 0), n)
            starts = f.start + np.concatenate(([0.0], np.cumsum(gaps[:-1])))
            for k, t in zip(rows, starts):
                js = flows_json[k]
                js["start_ns"] = int(t)
                if "stop_ns" in js:
                    js["stop_ns"] = max(js["stop_ns"], js["start_ns"] + 1)
        size_dist = getattr(f.app, "size_dist", None)
        if f.app.kind == "bulk" and size_dist is not None:
            sizes = draw_sizes(size_dist, n, _rng(seed, index, 2))
            for k, b in zip(rows, sizes):
                flows_json[k]["app"] = {**flows_json[k]["app"], "bytes": int(b)}
        if "random" in (f.src, f.dst):
            rng = _rng(seed, index, 3)
            h = len(hosts)
            for k in rows:
                js = flows_json[k]
                if f.src == "random" and f.dst == "random":
                    a, b = rng.choice(h, 2, replace=False)
                    js["src"], js["dst"] = hosts[a], hosts[b]
                elif f.src == "random":
                    js["src"] = _other(hosts, js["dst"], rng)
                else:
                    js["dst"] = _other(hosts, js["src"], rng)
    return flows_json


def _other(hosts: list[str], not_this: str, rng: np.random.Generator) -> str:
    """A uniformly random host other than ``not_this``."""
    j = int(rng.integers(len(hosts) - 1))
    h = hosts[j]
    return hosts[-1] if h == not_this else h
