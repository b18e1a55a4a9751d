//! Data-centre fabrics: leaf-spine (two-tier Clos) and the k-ary fat tree of
//! Al-Fares, Loukissas and Vahdat (SIGCOMM 2008). Routes are ECMP over every
//! shortest path (`routing.rs`), chosen per flow by hash.
//!
//! Names the flows and tables use:
//! - hosts `h0..h{H-1}`, numbered leaf by leaf (pod by pod in a fat tree);
//! - leaf-spine: switches `leaf{j}`, `spine{s}`; links `h{i}_up` (host NIC to its
//!   leaf), `h{i}_down` (leaf to host: the edge port), `leaf{j}_spine{s}` and
//!   `spine{s}_leaf{j}`;
//! - fat tree: `edge{p}_{e}`, `agg{p}_{a}`, `core{c}`; links `h{i}_up`, `h{i}_down`,
//!   `edge{p}_{e}_agg{p}_{a}` and back, `agg{p}_{a}_core{c}` and back. Aggregation
//!   switch a of every pod connects to cores a*k/2 .. a*k/2 + k/2 - 1.

use crate::config::{LinkConfig, TopologyConfig};
use crate::error::ConfigError;
use crate::ids::NodeId;
use crate::qdisc::QdiscConfig;
use crate::topology::Network;

/// Adds a fabric's nodes and links to an empty network.
pub fn build(net: &mut Network, cfg: &TopologyConfig) -> Result<(), ConfigError> {
    match cfg {
        TopologyConfig::LeafSpine { leaves, spines, hosts_per_leaf, host_link, fabric_link, nic_queue } => {
            for (v, what) in [(leaves, "leaves"), (spines, "spines"), (hosts_per_leaf, "hosts_per_leaf")] {
                if *v == 0 {
                    return Err(ConfigError::new(format!("topology.{what}"), "must be at least 1"));
                }
            }
            let hosts = hosts(net, *leaves as usize * *hosts_per_leaf as usize)?;
            let leaf: Vec<NodeId> = (0..*leaves).map(|j| net.add_node(&format!("leaf{j}"), "topology")).collect::<Result<_, _>>()?;
            let spine: Vec<NodeId> = (0..*spines).map(|s| net.add_node(&format!("spine{s}"), "topology")).collect::<Result<_, _>>()?;
            for (i, &h) in hosts.iter().enumerate() {
                attach(net, h, leaf[i / *hosts_per_leaf as usize], i, host_link, nic_queue)?;
            }
            for (j, &l) in leaf.iter().enumerate() {
                for (s, &sp) in spine.iter().enumerate() {
                    duplex(net, l, sp, &format!("leaf{j}"), &format!("spine{s}"), fabric_link)?;
                }
            }
        }
        TopologyConfig::FatTree { k, host_link, fabric_link, nic_queue } => {
            if *k < 2 || k % 2 != 0 || *k > 128 {
                return Err(ConfigError::new("topology.k", format!("{k}: accepted: an even number 2 .. 128")));
            }
            let (k, half) = (*k as usize, *k as usize / 2);
            let hosts = hosts(net, k * half * half)?;
            let mut edge = Vec::with_capacity(k * half);
            let mut agg = Vec::with_capacity(k * half);
            for p in 0..k {
                for e in 0..half {
                    edge.push(net.add_node(&format!("edge{p}_{e}"), "topology")?);
                }
                for a in 0..half {
                    agg.push(net.add_node(&format!("agg{p}_{a}"), "topology")?);
                }
            }
            let core: Vec<NodeId> =
                (0..half * half).map(|c| net.add_node(&format!("core{c}"), "topology")).collect::<Result<_, _>>()?;
            for (i, &h) in hosts.iter().enumerate() {
                attach(net, h, edge[i / half], i, host_link, nic_queue)?;
            }
            for p in 0..k {
                for e in 0..half {
                    for a in 0..half {
                        let (en, an) = (format!("edge{p}_{e}"), format!("agg{p}_{a}"));
                        duplex(net, edge[p * half + e], agg[p * half + a], &en, &an, fabric_link)?;
                    }
                }
                for a in 0..half {
                    for c in a * half..(a + 1) * half {
                        let an = format!("agg{p}_{a}");
                        duplex(net, agg[p * half + a], core[c], &an, &format!("core{c}"), fabric_link)?;
                    }
                }
            }
        }
        _ => unreachable!("fabric::build is called for fabrics only"),
    }
    Ok(())
}

fn hosts(net: &mut Network, n: usize) -> Result<Vec<NodeId>, ConfigError> {
    if n > 1_000_000 {
        return Err(ConfigError::new("topology", format!("{n} hosts: accepted: at most 1,000,000")));
    }
    (0..n).map(|i| net.add_node(&format!("h{i}"), "topology")).collect()
}

/// Host `i`'s NIC (`h{i}_up`, through `nic_queue`) and its switch port (`h{i}_down`).
fn attach(
    net: &mut Network,
    host: NodeId,
    switch: NodeId,
    i: usize,
    port: &LinkConfig,
    nic_queue: &QdiscConfig,
) -> Result<(), ConfigError> {
    let nic = LinkConfig { queue: nic_queue.clone(), loss: None, monitor: false, ..port.clone() };
    net.add_link(format!("h{i}_up"), host, switch, nic, "topology.nic_queue".into())?;
    net.add_link(format!("h{i}_down"), switch, host, port.clone(), "topology.host_link".into())?;
    Ok(())
}

fn duplex(net: &mut Network, a: NodeId, b: NodeId, an: &str, bn: &str, l: &LinkConfig) -> Result<(), ConfigError> {
    net.add_link(format!("{an}_{bn}"), a, b, l.clone(), "topology.fabric_link".into())?;
    net.add_link(format!("{bn}_{an}"), b, a, l.clone(), "topology.fabric_link".into())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::LinkId;
    use crate::routing::Hop;

    fn link(rate_bps: u64, delay_ns: u64) -> LinkConfig {
        LinkConfig::plain(rate_bps, delay_ns)
    }

    fn leaf_spine(leaves: u32, spines: u32, hpl: u32) -> Network {
        Network::build(&TopologyConfig::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf: hpl,
            host_link: link(10_000_000_000, 1_000),
            fabric_link: link(40_000_000_000, 1_000),
            nic_queue: Default::default(),
        })
        .unwrap()
    }

    #[test]
    fn leaf_spine_ecmp_spreads_flows_over_every_spine() {
        let net = leaf_spine(4, 4, 8);
        let (a, b) = (net.node("h0").unwrap(), net.node("h31").unwrap());
        let mut per_spine = [0u32; 4];
        for hash in 0..4000u32 {
            let p = net.path_hashed(a, b, crate::rng::mix64(hash as u64) as u32).unwrap();
            let names: Vec<&str> = p.iter().map(|l| net.links[l.idx()].name.as_str()).collect();
            assert_eq!(names.len(), 4, "{names:?}");
            assert_eq!((names[0], names[3]), ("h0_up", "h31_down"));
            let s: usize = names[1].strip_prefix("leaf0_spine").unwrap().parse().unwrap();
            assert_eq!(names[2], format!("spine{s}_leaf3"));
            per_spine[s] += 1;
        }
        // 1000 expected per spine; a binomial sd of ~27.
        assert!(per_spine.iter().all(|&n| (850..1150).contains(&n)), "{per_spine:?}");
        // Hosts on one leaf never leave it.
        let p = net.path(net.node("h0").unwrap(), net.node("h7").unwrap()).unwrap();
        assert_eq!(p.len(), 2);
    }

    #[test]
    fn fat_tree_paths_have_the_expected_lengths_and_spread_over_cores() {
        let net = Network::build(&TopologyConfig::FatTree {
            k: 4,
            host_link: link(1_000_000_000, 1_000),
            fabric_link: link(1_000_000_000, 1_000),
            nic_queue: Default::default(),
        })
        .unwrap();
        assert_eq!(net.nodes.len(), 16 + 8 + 8 + 4);
        let h = |i: usize| net.node(&format!("h{i}")).unwrap();
        assert_eq!(net.path(h(0), h(1)).unwrap().len(), 2); // same edge switch
        assert_eq!(net.path(h(0), h(2)).unwrap().len(), 4); // same pod
        let mut cores = std::collections::HashSet::new();
        for hash in 0..200u32 {
            let p = net.path_hashed(h(0), h(15), crate::rng::mix64(hash as u64) as u32).unwrap();
            assert_eq!(p.len(), 6); // across pods: edge, agg, core, agg, edge
            cores.insert(net.links[p[2].idx()].to);
        }
        assert_eq!(cores.len(), 4, "every core switch carries some flows");
        let err = Network::build(&TopologyConfig::FatTree {
            k: 3,
            host_link: link(1, 1),
            fabric_link: link(1, 1),
            nic_queue: Default::default(),
        })
        .unwrap_err();
        assert_eq!(err.field, "topology.k");
    }

    #[test]
    fn routing_memory_is_linear_in_hosts() {
        let small = leaf_spine(4, 2, 100);
        let big = leaf_spine(4, 2, 1000);
        let ratio = big.routing.bytes() as f64 / small.routing.bytes() as f64;
        assert!(ratio < 11.0, "routing grew {ratio}x for 10x hosts");
        assert!(matches!(big.routing.next(NodeId(0), NodeId(3999)), Hop::Link(LinkId(0))));
    }
}
