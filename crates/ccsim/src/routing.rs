//! Static routing in memory linear in nodes and links.
//!
//! A full `routes[at][dst]` table costs nodes² entries: 3.2 GB for a dumbbell of
//! 10,000 pairs. Most nodes of a large topology are *stubs*, hosts hanging off one
//! router by one link each way, and a stub needs no table: it sends everything up
//! its one link, and every other node reaches it through its gateway router (as an
//! IP router keeps one prefix per subnet, not one route per host). Only the *core*
//! (the routers, and hosts with more than one neighbour) keeps a table, core².
//!
//! Core routes are shortest paths by propagation delay, ties broken by hop count,
//! one reverse Dijkstra per core destination. With `ecmp`, every outgoing link on a
//! shortest path is kept and a flow picks one by hash (per-flow ECMP, RFC 2992's
//! hash-threshold family: all packets of a connection take one path, so ECMP causes
//! no reordering). Without it the one link Dijkstra settles first is kept, as before
//! the tables were compressed, so existing topologies route exactly as they did.

use crate::ids::{LinkId, NodeId};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A table entry: a link id, `NO_ROUTE`, or `ECMP | group`.
const NO_ROUTE: u32 = u32::MAX;
const ECMP: u32 = 1 << 31;
/// `core` of a stub node.
const STUB: u32 = u32::MAX;

/// The next hop of a packet: one link, or an ECMP group to hash over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    Link(LinkId),
    Ecmp(u32),
    Unreachable,
}

#[derive(Clone, Copy, Debug, Default)]
struct NodeRoute {
    /// Index in the core table, or `STUB`.
    core: u32,
    /// A stub's one outgoing link.
    uplink: u32,
    /// Core index of the node through which others reach this one (its own for a
    /// core node, its router for a stub).
    gw: u32,
    /// A stub's one incoming link (gateway -> stub).
    downlink: u32,
    /// `core * ncore`: this node's row of the table.
    row: u32,
}

#[derive(Clone, Debug, Default)]
pub struct Routing {
    node: Vec<NodeRoute>,
    /// `table[core(at) * ncore + gw(dst)]`.
    table: Vec<u32>,
    /// ECMP groups: (start, len) in `group_links`.
    groups: Vec<(u32, u32)>,
    group_links: Vec<LinkId>,
}

/// What routing needs to know of a link.
pub struct Edge {
    pub from: NodeId,
    pub to: NodeId,
    pub delay_ns: u64,
}

impl Routing {
    /// Routes over `nodes` nodes joined by `edges` (indexed by `LinkId`). Nodes in
    /// `core` keep a table row and column even if they are stubs: the destinations of
    /// explicit routes, which then are plain table entries (`set`).
    pub fn build(nodes: usize, edges: &[Edge], ecmp: bool, core: &[NodeId]) -> Routing {
        let mut out_deg = vec![0u32; nodes];
        let mut in_deg = vec![0u32; nodes];
        let mut out_link = vec![NO_ROUTE; nodes];
        let mut in_link = vec![NO_ROUTE; nodes];
        for (i, e) in edges.iter().enumerate() {
            out_deg[e.from.idx()] += 1;
            in_deg[e.to.idx()] += 1;
            out_link[e.from.idx()] = i as u32;
            in_link[e.to.idx()] = i as u32;
        }
        // A stub: one link out and one in, to and from the same neighbour, which is
        // not itself a stub (of two nodes joined only to each other, one is core).
        let mut node = vec![NodeRoute { core: STUB, uplink: NO_ROUTE, gw: STUB, downlink: NO_ROUTE, row: 0 }; nodes];
        let mut is_stub = vec![false; nodes];
        let mut forced = vec![false; nodes];
        core.iter().for_each(|v| forced[v.idx()] = true);
        for v in (0..nodes).filter(|&v| !forced[v]) {
            if out_deg[v] == 1 && in_deg[v] == 1 {
                let (up, down) = (&edges[out_link[v] as usize], &edges[in_link[v] as usize]);
                let nb = up.to.idx();
                if down.from.idx() == nb && nb != v && !is_stub[nb] {
                    is_stub[v] = true;
                    node[v].uplink = out_link[v];
                    node[v].downlink = in_link[v];
                }
            }
        }
        let mut core_nodes = Vec::new();
        for v in 0..nodes {
            if !is_stub[v] {
                node[v].core = core_nodes.len() as u32;
                node[v].gw = node[v].core;
                core_nodes.push(v);
            }
        }
        for v in 0..nodes {
            if is_stub[v] {
                node[v].gw = node[edges[node[v].uplink as usize].to.idx()].core;
            }
        }
        let ncore = core_nodes.len();
        for &v in &core_nodes {
            node[v].row = node[v].core * ncore as u32;
        }
        let mut r = Routing {
            node,
            table: vec![NO_ROUTE; ncore * ncore],
            groups: Vec::new(),
            group_links: Vec::new(),
        };
        // Links between core nodes only: no shortest path between two core nodes
        // passes through a stub (it would leave the way it came in).
        let mut incoming: Vec<Vec<LinkId>> = vec![Vec::new(); nodes];
        let mut outgoing: Vec<Vec<LinkId>> = vec![Vec::new(); nodes];
        for (i, e) in edges.iter().enumerate() {
            if !is_stub[e.from.idx()] && !is_stub[e.to.idx()] {
                incoming[e.to.idx()].push(LinkId(i as u32));
                outgoing[e.from.idx()].push(LinkId(i as u32));
            }
        }
        let mut best: Vec<Option<(u64, u32)>> = vec![None; nodes];
        let mut heap = BinaryHeap::new();
        for &dst in &core_nodes {
            best.iter_mut().for_each(|b| *b = None);
            let col = r.node[dst].core as usize;
            best[dst] = Some((0, 0));
            heap.push(Reverse((0u64, 0u32, dst)));
            while let Some(Reverse((d, h, v))) = heap.pop() {
                if best[v] != Some((d, h)) {
                    continue;
                }
                for &lid in &incoming[v] {
                    let e = &edges[lid.idx()];
                    let u = e.from.idx();
                    let cand = (d + e.delay_ns, h + 1);
                    if best[u].is_none_or(|b| cand < b) {
                        best[u] = Some(cand);
                        r.table[r.node[u].core as usize * ncore + col] = lid.0;
                        heap.push(Reverse((cand.0, cand.1, u)));
                    }
                }
            }
            if ecmp {
                for &u in &core_nodes {
                    let Some(bu) = best[u] else { continue };
                    if u == dst {
                        continue;
                    }
                    let start = r.group_links.len();
                    for &lid in &outgoing[u] {
                        let e = &edges[lid.idx()];
                        if best[e.to.idx()].is_some_and(|b| (b.0 + e.delay_ns, b.1 + 1) == bu) {
                            r.group_links.push(lid);
                        }
                    }
                    let n = r.group_links.len() - start;
                    if n > 1 {
                        r.table[r.node[u].core as usize * ncore + col] = ECMP | r.groups.len() as u32;
                        r.groups.push((start as u32, n as u32));
                    } else {
                        r.group_links.truncate(start);
                    }
                }
            }
        }
        r
    }

    /// Forces `at`'s next hop towards `dst` (an explicit route); `dst` must have
    /// been given to `build` as core. At a stub there is only the one link anyway.
    pub fn set(&mut self, at: NodeId, dst: NodeId, link: LinkId) {
        let (a, d) = (self.node[at.idx()], self.node[dst.idx()]);
        if a.core != STUB {
            debug_assert_eq!(d.gw, d.core, "explicit route to a stub not built as core");
            self.table[a.row as usize + d.gw as usize] = link.0;
        }
    }

    /// The next hop from `at` towards `dst` (`at != dst`).
    #[inline(always)]
    pub fn next(&self, at: NodeId, dst: NodeId) -> Hop {
        match self.next_raw(at, dst) {
            NO_ROUTE => Hop::Unreachable,
            e if e & ECMP != 0 => Hop::Ecmp(e & !ECMP),
            e => Hop::Link(LinkId(e)),
        }
    }

    /// `next` as the raw entry, for the per-packet path: a link id when the ECMP
    /// bit is clear (the common case, one test), else see `next`.
    #[inline(always)]
    pub fn next_raw(&self, at: NodeId, dst: NodeId) -> u32 {
        let a = self.node[at.idx()];
        if a.core == STUB {
            return a.uplink;
        }
        let d = self.node[dst.idx()];
        if d.gw == a.core {
            // `dst` is a stub on this router (a core `dst` has gw == core != at's).
            return d.downlink;
        }
        self.table[a.row as usize + d.gw as usize]
    }

    /// Whether a raw entry is a plain link.
    #[inline(always)]
    pub fn is_link(raw: u32) -> bool {
        raw & ECMP == 0
    }

    /// The link of ECMP group `g` that a flow with `hash` takes at node `at`. The
    /// node is mixed in so that successive switches choose independently (the same
    /// hash at every tier would send all flows of one uplink to one downlink:
    /// "polarisation").
    #[inline]
    pub fn pick(&self, g: u32, hash: u32, at: NodeId) -> LinkId {
        let (start, len) = self.groups[g as usize];
        let h = crate::rng::mix64(((hash as u64) << 32) | at.0 as u64);
        self.group_links[start as usize + ((h >> 32) * len as u64 >> 32) as usize]
    }

    /// Heap bytes of the tables (for the pre-flight estimate's tests).
    pub fn bytes(&self) -> usize {
        self.node.len() * std::mem::size_of::<NodeRoute>()
            + self.table.len() * 4
            + self.groups.len() * 8
            + self.group_links.len() * 4
    }
}
