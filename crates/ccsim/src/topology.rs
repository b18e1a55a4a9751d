//! Topology builders: dumbbell, parking lot, explicit graph and the data-centre
//! fabrics (`fabric.rs`), all resolved into one `Network` of named nodes,
//! unidirectional links and static routes (`routing.rs`, linear in nodes and links).

use crate::config::{AccessConfig, LinkConfig, TopologyConfig};
use crate::error::ConfigError;
use crate::ids::{LinkId, NodeId};
use crate::routing::{Edge, Hop, Routing};
use std::collections::HashMap;

/// Longest one-way delay of a link: one day.
pub const MAX_LINK_DELAY_NS: u64 = 86_400 * 1_000_000_000;

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub cfg: LinkConfig,
    /// Config path of this link, for error messages.
    pub field: String,
}

#[derive(Clone, Debug, Default)]
pub struct Network {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
    pub routing: Routing,
    index: HashMap<String, NodeId>,
}

impl Network {
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.index.get(name).copied()
    }

    pub(crate) fn add_node(&mut self, name: &str, field: &str) -> Result<NodeId, ConfigError> {
        if self.index.contains_key(name) {
            return Err(ConfigError::new(field, format!("node {name:?} is defined twice")));
        }
        let id = NodeId(self.nodes.len() as u32);
        self.nodes.push(name.to_string());
        self.index.insert(name.to_string(), id);
        Ok(id)
    }

    pub(crate) fn add_link(
        &mut self,
        name: String,
        from: NodeId,
        to: NodeId,
        cfg: LinkConfig,
        field: String,
    ) -> Result<LinkId, ConfigError> {
        if cfg.rate_bps == 0 {
            return Err(ConfigError::new(format!("{field}.rate"), "link rate must be positive (e.g. \"10Mbit\")"));
        }
        // route costs and arrival times add delays along a path in u64 ns (found by
        // tests/fuzz_config.rs: a delay near 2^64 overflowed the route computation)
        if cfg.delay_ns > MAX_LINK_DELAY_NS {
            return Err(ConfigError::new(
                format!("{field}.delay"),
                format!("link delay must be at most 1 day (86400 s), got {} s", cfg.delay_ns as f64 * 1e-9),
            ));
        }
        let id = LinkId(self.links.len() as u32);
        self.links.push(LinkSpec { name, from, to, cfg, field });
        Ok(id)
    }

    /// Both directions of a host's access link.
    fn add_access(
        &mut self,
        host: NodeId,
        router: NodeId,
        prefix: &str,
        delay_ns: u64,
        access: &AccessConfig,
    ) -> Result<(), ConfigError> {
        let link = LinkConfig {
            queue: access.queue.clone(),
            jitter: access.jitter.clone(),
            ..LinkConfig::plain(access.rate_bps, delay_ns)
        };
        self.add_link(format!("{prefix}_up"), host, router, link.clone(), "topology.access".into())?;
        self.add_link(format!("{prefix}_down"), router, host, link, "topology.access".into())?;
        Ok(())
    }

    /// Builds the network a topology description stands for.
    pub fn build(cfg: &TopologyConfig) -> Result<Network, ConfigError> {
        let mut net = Network::default();
        let mut ecmp = false;
        match cfg {
            TopologyConfig::Dumbbell { pairs, bottleneck, access } => {
                if *pairs == 0 {
                    return Err(ConfigError::new("topology.pairs", "a dumbbell needs at least 1 sender/receiver pair"));
                }
                if !access.pair_delays_ns.is_empty() && access.pair_delays_ns.len() != *pairs as usize {
                    return Err(ConfigError::new(
                        "topology.access.pair_delays",
                        format!(
                            "{} delays given for {} pairs; give one per pair or none",
                            access.pair_delays_ns.len(),
                            pairs
                        ),
                    ));
                }
                let rs = net.add_node("rtr_srv", "topology")?;
                let rc = net.add_node("rtr_cli", "topology")?;
                net.add_link(
                    "bottleneck_down".into(),
                    rs,
                    rc,
                    bottleneck.down.clone(),
                    "topology.bottleneck.down".into(),
                )?;
                net.add_link("bottleneck_up".into(), rc, rs, bottleneck.up.clone(), "topology.bottleneck.up".into())?;
                for i in 0..*pairs as usize {
                    let s = net.add_node(&format!("srv{i}"), "topology")?;
                    let c = net.add_node(&format!("cli{i}"), "topology")?;
                    let d = access.pair_delays_ns.get(i).copied().unwrap_or(access.delay_ns);
                    net.add_access(s, rs, &format!("srv{i}"), d, access)?;
                    net.add_access(c, rc, &format!("cli{i}"), access.delay_ns, access)?;
                }
            }
            TopologyConfig::ParkingLot { hops, hop_links, reverse_links, access } => {
                let k = *hops as usize;
                if k == 0 {
                    return Err(ConfigError::new("topology.hops", "a parking lot needs at least 1 bottleneck hop"));
                }
                for (v, what) in [(hop_links, "hop_links"), (reverse_links, "reverse_links")] {
                    if v.len() != 1 && v.len() != k {
                        return Err(ConfigError::new(
                            format!("topology.{what}"),
                            format!("{} links given for {k} hops; give one (used for every hop) or {k}", v.len()),
                        ));
                    }
                }
                let routers: Vec<NodeId> =
                    (0..=k).map(|i| net.add_node(&format!("r{i}"), "topology")).collect::<Result<_, _>>()?;
                for i in 0..k {
                    let f = hop_links.get(i).unwrap_or(&hop_links[0]).clone();
                    let r = reverse_links.get(i).unwrap_or(&reverse_links[0]).clone();
                    net.add_link(
                        format!("hop{i}_fwd"),
                        routers[i],
                        routers[i + 1],
                        f,
                        format!("topology.hop_links[{i}]"),
                    )?;
                    net.add_link(
                        format!("hop{i}_rev"),
                        routers[i + 1],
                        routers[i],
                        r,
                        format!("topology.reverse_links[{i}]"),
                    )?;
                }
                let ls = net.add_node("long_src", "topology")?;
                let ld = net.add_node("long_dst", "topology")?;
                net.add_access(ls, routers[0], "long_src", access.delay_ns, access)?;
                net.add_access(ld, routers[k], "long_dst", access.delay_ns, access)?;
                for i in 0..k {
                    let xs = net.add_node(&format!("x{i}_src"), "topology")?;
                    let xd = net.add_node(&format!("x{i}_dst"), "topology")?;
                    net.add_access(xs, routers[i], &format!("x{i}_src"), access.delay_ns, access)?;
                    net.add_access(xd, routers[i + 1], &format!("x{i}_dst"), access.delay_ns, access)?;
                }
            }
            TopologyConfig::Graph { nodes, links, .. } => {
                for (i, n) in nodes.iter().enumerate() {
                    net.add_node(n, &format!("topology.nodes[{i}]"))?;
                }
                for (i, l) in links.iter().enumerate() {
                    let field = format!("topology.links[{i}]");
                    let end = |name: &str, which: &str| {
                        net.node(name).ok_or_else(|| {
                            ConfigError::new(
                                format!("{field}.{which}"),
                                format!("unknown node {name:?}; nodes are {:?}", nodes),
                            )
                        })
                    };
                    let (from, to) = (end(&l.from, "from")?, end(&l.to, "to")?);
                    let name = l.name.clone().unwrap_or_else(|| format!("{}->{}", l.from, l.to));
                    net.add_link(name, from, to, l.link.clone(), field)?;
                }
            }
            TopologyConfig::LeafSpine { .. } | TopologyConfig::FatTree { .. } => {
                crate::fabric::build(&mut net, cfg)?;
                ecmp = true;
            }
        }
        let edges: Vec<Edge> =
            net.links.iter().map(|l| Edge { from: l.from, to: l.to, delay_ns: l.cfg.delay_ns }).collect();
        // Destinations of explicit routes keep a table column (checked below).
        let forced: Vec<NodeId> = match cfg {
            TopologyConfig::Graph { routes, .. } => routes.iter().filter_map(|r| net.node(&r.dst)).collect(),
            _ => Vec::new(),
        };
        net.routing = Routing::build(net.nodes.len(), &edges, ecmp, &forced);
        if let TopologyConfig::Graph { routes, nodes, .. } = cfg {
            for (i, r) in routes.iter().enumerate() {
                let field = format!("topology.routes[{i}]");
                let lookup = |name: &str, which: &str| {
                    net.node(name).ok_or_else(|| {
                        ConfigError::new(
                            format!("{field}.{which}"),
                            format!("unknown node {name:?}; nodes are {nodes:?}"),
                        )
                    })
                };
                let (at, dst, next) = (lookup(&r.at, "at")?, lookup(&r.dst, "dst")?, lookup(&r.next, "next")?);
                let link = net.links.iter().position(|l| l.from == at && l.to == next).ok_or_else(|| {
                    ConfigError::new(format!("{field}.next"), format!("no link from {:?} to {:?}", r.at, r.next))
                })?;
                net.routing.set(at, dst, LinkId(link as u32));
            }
        }
        Ok(net)
    }

    /// The next hop from `at` towards `dst`.
    #[inline(always)]
    pub fn next_hop(&self, at: NodeId, dst: NodeId) -> Hop {
        self.routing.next(at, dst)
    }

    /// The links a packet of a flow with ECMP hash `hash` takes from `src` to
    /// `dst`, or None if unreachable.
    pub fn path_hashed(&self, src: NodeId, dst: NodeId, hash: u32) -> Option<Vec<LinkId>> {
        let mut at = src;
        let mut path = Vec::new();
        while at != dst {
            let l = match self.next_hop(at, dst) {
                Hop::Link(l) => l,
                Hop::Ecmp(g) => self.routing.pick(g, hash, at),
                Hop::Unreachable => return None,
            };
            path.push(l);
            at = self.links[l.idx()].to;
            if path.len() > self.links.len() {
                return None;
            }
        }
        Some(path)
    }

    /// The links a packet from `src` to `dst` traverses (hash 0 where ECMP splits).
    pub fn path(&self, src: NodeId, dst: NodeId) -> Option<Vec<LinkId>> {
        self.path_hashed(src, dst, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{BottleneckConfig, GraphLink, RouteConfig};

    pub(crate) fn link(rate_bps: u64, delay_ns: u64) -> LinkConfig {
        LinkConfig::plain(rate_bps, delay_ns)
    }

    #[test]
    fn dumbbell_routes_through_the_bottleneck_both_ways() {
        let net = Network::build(&TopologyConfig::Dumbbell {
            pairs: 2,
            bottleneck: BottleneckConfig { down: link(1_500_000, 50), up: link(256_000, 50) },
            access: AccessConfig { pair_delays_ns: vec![1, 2], ..Default::default() },
        })
        .unwrap();
        let (s1, c1) = (net.node("srv1").unwrap(), net.node("cli1").unwrap());
        let names = |p: Vec<LinkId>| p.iter().map(|l| net.links[l.idx()].name.clone()).collect::<Vec<_>>();
        assert_eq!(names(net.path(s1, c1).unwrap()), ["srv1_up", "bottleneck_down", "cli1_down"]);
        assert_eq!(names(net.path(c1, s1).unwrap()), ["cli1_up", "bottleneck_up", "srv1_down"]);
        assert_eq!(net.links[net.path(s1, c1).unwrap()[0].idx()].cfg.delay_ns, 2);
    }

    #[test]
    fn parking_lot_long_flow_crosses_every_hop() {
        let net = Network::build(&TopologyConfig::ParkingLot {
            hops: 3,
            hop_links: vec![link(10, 1)],
            reverse_links: vec![link(10, 1)],
            access: Default::default(),
        })
        .unwrap();
        let p = net.path(net.node("long_src").unwrap(), net.node("long_dst").unwrap()).unwrap();
        assert_eq!(p.len(), 5);
        let x = net.path(net.node("x1_src").unwrap(), net.node("x1_dst").unwrap()).unwrap();
        assert_eq!(net.links[x[1].idx()].name, "hop1_fwd");
    }

    #[test]
    fn graph_prefers_lower_delay_and_rejects_unknown_nodes() {
        let gl =
            |from: &str, to: &str, d| GraphLink { name: None, from: from.into(), to: to.into(), link: link(1000, d) };
        let net = Network::build(&TopologyConfig::Graph {
            nodes: vec!["a".into(), "b".into(), "c".into()],
            links: vec![gl("a", "c", 100), gl("a", "b", 10), gl("b", "c", 10)],
            routes: vec![],
        })
        .unwrap();
        assert_eq!(net.path(NodeId(0), NodeId(2)).unwrap().len(), 2);
        let err = Network::build(&TopologyConfig::Graph {
            nodes: vec!["a".into()],
            links: vec![gl("a", "z", 1)],
            routes: vec![],
        })
        .unwrap_err();
        assert_eq!(err.field, "topology.links[0].to");
        assert!(err.msg.contains("\"z\""));
    }

    #[test]
    fn explicit_route_to_a_host_overrides_the_shortest_path() {
        // Host "h" hangs off "c" (a stub); at "a" the route to it is forced via "b".
        let gl =
            |from: &str, to: &str, d| GraphLink { name: None, from: from.into(), to: to.into(), link: link(1000, d) };
        let nodes = ["a", "b", "c", "h"].map(String::from).to_vec();
        let links = vec![gl("a", "c", 1), gl("c", "a", 1), gl("a", "b", 5), gl("b", "c", 5), gl("c", "h", 1), gl("h", "c", 1)];
        let route = |dst: &str| RouteConfig { at: "a".into(), dst: dst.into(), next: "b".into() };
        let net = Network::build(&TopologyConfig::Graph { nodes, links, routes: vec![route("h")] }).unwrap();
        let n = |s: &str| net.node(s).unwrap();
        assert_eq!(net.path(n("a"), n("h")).unwrap().len(), 3);
        assert_eq!(net.path(n("a"), n("c")).unwrap().len(), 1, "other destinations keep the shortest path");
    }
}
