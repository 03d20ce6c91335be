//! Topology generators for the papers' fabrics: fat-tree (k, oversubscription), leaf-spine
//! (spines × leaves), dumbbell, each with links that can fail. A [`Fabric`] is switches with
//! numbered ports, hosts on switch ports and links with speeds; [`Fabric::switch_configs`]
//! turns it into switch configurations that forward as a data-centre L2 fabric does:
//!
//! - every host has a static FDB entry in every switch: the ports on a shortest path to it,
//!   an ECMP group where there are several (equal-cost multipath, as BGP/ECMP fabrics
//!   forward; with failed links the shortest paths may go down and up again, as in OFC's
//!   deadlock scenario, Fig. 9); where more than half the hosts share one route (a leaf's or
//!   an aggregation switch's uplinks), that route is the switch's default route
//!   (`fdb.default_route`) and only the other hosts have entries, so a leaf's table holds
//!   its pod, not the fabric (a k = 32 fat-tree has 8,192 hosts);
//! - only host ports learn;
//! - broadcasts follow one spanning tree (breadth-first from switch 0), so each reaches
//!   every host once and none loops.

use super::{Endpoint, Network, SimHost};
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::{PortConfig, StaticEntry, StaticPorts, SwitchConfig};
use pfcswitch_switch::config_error::ConfigError;
use pfcswitch_switch::switch::Switch;
use pfcswitch_wire::EthernetAddress;
use std::collections::VecDeque;
use std::time::Duration;

/// A switch port: (switch, port index).
pub type Port = (usize, usize);

/// What the other end of a switch port is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    Host(usize),
    Switch(Port),
    /// Not connected (or a failed link).
    None,
}

/// Switches, hosts and links.
#[derive(Clone, Debug, PartialEq)]
pub struct Fabric {
    /// Per switch, per port: the peer and the link's speed.
    pub ports: Vec<Vec<(Peer, BitRate)>>,
    /// Per host: the switch port it hangs off.
    pub hosts: Vec<Port>,
}

impl Fabric {
    fn with_switches(ports: &[usize]) -> Fabric {
        let unused = (Peer::None, BitRate::gbps(1));
        Fabric { ports: ports.iter().map(|&n| vec![unused; n]).collect(), hosts: Vec::new() }
    }

    fn attach_host(&mut self, at: Port, speed: BitRate) {
        self.ports[at.0][at.1] = (Peer::Host(self.hosts.len()), speed);
        self.hosts.push(at);
    }

    fn join(&mut self, a: Port, b: Port, speed: BitRate) {
        self.ports[a.0][a.1] = (Peer::Switch(b), speed);
        self.ports[b.0][b.1] = (Peer::Switch(a), speed);
    }

    /// A k-ary fat-tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2 aggregation
    /// switches, (k/2)² cores, k/2 hosts per edge switch; k³/4 hosts, 5k²/4 switches of k
    /// ports. Switches are numbered edges (pod by pod), then aggregations, then cores; an
    /// edge's ports are its hosts then its aggregations, an aggregation's its edges then its
    /// cores, a core's one per pod. `oversubscription` o slows both tiers of up-links by √o
    /// (CaPFC §IV: k = 8, 128 servers, 80 switches, total oversubscription 4 at 1 Gbit/s).
    ///
    /// # Panics
    /// If k is odd or below 2, or o is 0.
    pub fn fat_tree(k: usize, speed: BitRate, oversubscription: u32) -> Fabric {
        assert!(k >= 2 && k.is_multiple_of(2), "a fat-tree needs an even k");
        assert!(oversubscription > 0, "oversubscription is at least 1");
        let half = k / 2;
        let uplink = BitRate::from_bps((speed.bps() as f64 / f64::from(oversubscription).sqrt()) as u64)
            .expect("a positive speed");
        let (edges, aggregations, cores) = (k * half, k * half, half * half);
        let mut fabric = Fabric::with_switches(&vec![k; edges + aggregations + cores]);
        for pod in 0..k {
            for i in 0..half {
                let edge = pod * half + i;
                let aggregation = edges + pod * half + i;
                for port in 0..half {
                    fabric.attach_host((edge, port), speed);
                    fabric.join((edge, half + port), (edges + pod * half + port, i), uplink);
                    fabric.join((aggregation, half + port), (edges + aggregations + i * half + port, pod), uplink);
                }
            }
        }
        fabric
    }

    /// `leaves` leaf switches of `hosts_per_leaf` hosts, each with one up-link to each of
    /// `spines` spines. Leaves come first; a leaf's ports are its hosts then one per spine,
    /// a spine's one per leaf.
    pub fn leaf_spine(spines: usize, leaves: usize, hosts_per_leaf: usize, speed: BitRate) -> Fabric {
        let sizes: Vec<usize> =
            std::iter::repeat_n(hosts_per_leaf + spines, leaves).chain(std::iter::repeat_n(leaves, spines)).collect();
        let mut fabric = Fabric::with_switches(&sizes);
        for leaf in 0..leaves {
            for port in 0..hosts_per_leaf {
                fabric.attach_host((leaf, port), speed);
            }
            for spine in 0..spines {
                fabric.join((leaf, hosts_per_leaf + spine), (leaves + spine, leaf), speed);
            }
        }
        fabric
    }

    /// Two switches of `per_side` hosts each, joined by their last ports.
    pub fn dumbbell(per_side: usize, speed: BitRate) -> Fabric {
        let mut fabric = Fabric::with_switches(&[per_side + 1, per_side + 1]);
        for switch in 0..2 {
            for port in 0..per_side {
                fabric.attach_host((switch, port), speed);
            }
        }
        fabric.join((0, per_side), (1, per_side), speed);
        fabric
    }

    /// Fails the link between switches `a` and `b` (the first, if they share several).
    /// Returns whether there was one.
    pub fn fail_link(&mut self, a: usize, b: usize) -> bool {
        let Some(port) = self.ports[a].iter().position(|&(peer, _)| matches!(peer, Peer::Switch((s, _)) if s == b))
        else {
            return false;
        };
        let Peer::Switch(far) = self.ports[a][port].0 else { unreachable!("matched a switch") };
        self.ports[a][port].0 = Peer::None;
        self.ports[far.0][far.1].0 = Peer::None;
        true
    }

    pub fn switch_count(&self) -> usize {
        self.ports.len()
    }

    /// Switch-to-switch links, each once: (a, b, speed) with a < b.
    pub fn links(&self) -> impl Iterator<Item = (Port, Port, BitRate)> + '_ {
        self.ports.iter().enumerate().flat_map(|(s, ports)| {
            ports.iter().enumerate().filter_map(move |(p, &(peer, speed))| match peer {
                Peer::Switch(far) if (s, p) < far => Some(((s, p), far, speed)),
                _ => None,
            })
        })
    }

    /// Hops from every switch to switch `to` over working links (`usize::MAX`: cut off).
    fn distances_to(&self, to: usize) -> Vec<usize> {
        let mut distance = vec![usize::MAX; self.switch_count()];
        distance[to] = 0;
        let mut queue = VecDeque::from([to]);
        while let Some(s) = queue.pop_front() {
            for &(peer, _) in &self.ports[s] {
                if let Peer::Switch((next, _)) = peer
                    && distance[next] == usize::MAX
                {
                    distance[next] = distance[s] + 1;
                    queue.push_back(next);
                }
            }
        }
        distance
    }

    /// Per switch, per host: the ports towards the host on a shortest path (bit i: port i);
    /// 0 where the host is cut off.
    pub fn routes(&self) -> Vec<Vec<u64>> {
        let mut routes = vec![vec![0u64; self.hosts.len()]; self.switch_count()];
        let mut by_switch: Vec<Option<Vec<usize>>> = vec![None; self.switch_count()];
        for (host, &(edge, port)) in self.hosts.iter().enumerate() {
            let distance = by_switch[edge].get_or_insert_with(|| self.distances_to(edge));
            routes[edge][host] = 1 << port;
            for (s, ports) in self.ports.iter().enumerate() {
                if s == edge || distance[s] == usize::MAX {
                    continue;
                }
                routes[s][host] = ports.iter().enumerate().fold(0, |mask, (p, &(peer, _))| match peer {
                    Peer::Switch((next, _)) if distance[next] + 1 == distance[s] => mask | 1 << p,
                    _ => mask,
                });
            }
        }
        routes
    }

    /// Per switch: the ports broadcasts leave by, a spanning tree breadth-first from switch 0
    /// over working links plus every host port.
    pub fn flooding(&self) -> Vec<u64> {
        let mut flooding: Vec<u64> = (self.ports.iter())
            .map(|ports| {
                ports
                    .iter()
                    .enumerate()
                    .fold(0, |m, (p, (peer, _))| m | (u64::from(matches!(peer, Peer::Host(_))) << p))
            })
            .collect();
        let mut reached = vec![false; self.switch_count()];
        let mut queue = VecDeque::new();
        for root in 0..self.switch_count() {
            if reached[root] {
                continue;
            }
            reached[root] = true;
            queue.push_back(root);
            while let Some(s) = queue.pop_front() {
                for (p, &(peer, _)) in self.ports[s].iter().enumerate() {
                    if let Peer::Switch((next, far_port)) = peer
                        && !reached[next]
                    {
                        reached[next] = true;
                        flooding[s] |= 1 << p;
                        flooding[next] |= 1 << far_port;
                        queue.push_back(next);
                    }
                }
            }
        }
        flooding
    }

    /// One configuration per switch, named `sw1`, `sw2`, …, ports `p1`, `p2`, … at their
    /// links' speeds, from `base` for everything else: the route most hosts take as the
    /// default route when more than half take it, a static entry for every other reachable
    /// host (`host_mac`), learning on host ports only, flooding along [`Fabric::flooding`].
    pub fn switch_configs(
        &self,
        base: &SwitchConfig,
        host_mac: impl Fn(usize) -> EthernetAddress,
    ) -> Vec<SwitchConfig> {
        let (routes, flooding) = (self.routes(), self.flooding());
        let template = base
            .ports
            .first()
            .cloned()
            .unwrap_or_else(|| SwitchConfig::with_ports("", 1, BitRate::gbps(1)).ports.remove(0));
        self.ports
            .iter()
            .enumerate()
            .map(|(s, ports)| {
                let mut config = base.clone();
                config.switch.name = format!("sw{}", s + 1);
                config.ports = (ports.iter().enumerate())
                    .map(|(p, &(peer, speed))| PortConfig {
                        name: format!("p{}", p + 1),
                        iface: None,
                        speed,
                        learning: matches!(peer, Peer::Host(_)),
                        flooding: flooding[s] & (1 << p) != 0,
                        ..template.clone()
                    })
                    .collect();
                let group = |mask: u64| {
                    StaticPorts::Group(
                        (0..ports.len()).filter(|p| mask & (1 << p) != 0).map(|p| format!("p{}", p + 1)).collect(),
                    )
                };
                let default_route = majority_route(&routes[s]);
                config.fdb.static_entries = (routes[s].iter().enumerate())
                    .filter(|&(_, &mask)| mask != 0 && Some(mask) != default_route)
                    .map(|(host, &mask)| StaticEntry { mac: host_mac(host).to_string(), port: group(mask) })
                    .collect();
                config.fdb.default_route = default_route.map(group);
                config
            })
            .collect()
    }
}

/// The route most hosts take from a switch, if more than half do: its default route (a
/// leaf's or an aggregation switch's uplinks), so that its table holds only the others.
/// Every host still goes where its own entry would send it.
fn majority_route(routes: &[u64]) -> Option<u64> {
    let mut counts: std::collections::HashMap<u64, usize> = std::collections::HashMap::new();
    for &mask in routes.iter().filter(|&&mask| mask != 0) {
        *counts.entry(mask).or_default() += 1;
    }
    counts.into_iter().find(|&(_, count)| 2 * count > routes.len()).map(|(mask, _)| mask)
}

impl Fabric {
    /// Every cable, host links first: its two ends and speed.
    pub fn cables(&self) -> impl Iterator<Item = (Endpoint, Endpoint, BitRate)> + '_ {
        let hosts = (self.hosts.iter().enumerate()).map(|(index, &(switch, port))| {
            (Endpoint::host(index), Endpoint::switch(switch, port), self.ports[switch][port].1)
        });
        let trunks = self
            .links()
            .map(|((a, a_port), (b, b_port), speed)| (Endpoint::switch(a, a_port), Endpoint::switch(b, b_port), speed));
        hosts.chain(trunks)
    }

    /// A simulated network of this fabric: a core switch per configuration (from
    /// [`Fabric::switch_configs`]), host i from `host(i)`, every link at its speed with
    /// propagation delay `delay`.
    ///
    /// # Errors
    /// A configuration the core refuses.
    pub fn network(
        &self,
        configs: &[SwitchConfig],
        host: impl Fn(usize) -> SimHost,
        delay: Duration,
    ) -> Result<Network, ConfigError> {
        let mut net = Network::new();
        for config in configs {
            net.add_switch(Switch::new(config)?.0);
        }
        for index in 0..self.hosts.len() {
            net.add_host(host(index));
        }
        for (a, b, speed) in self.cables() {
            net.connect(a, b, speed, delay);
        }
        Ok(net)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G1: BitRate = BitRate::gbps(1);

    /// Follows `host`'s route from switch `from`, taking the port `pick` chooses of each
    /// group; returns the switches visited, or panics on a loop.
    fn walk(fabric: &Fabric, routes: &[Vec<u64>], from: usize, host: usize, pick: usize) -> Vec<usize> {
        let mut path = vec![from];
        let mut at = from;
        loop {
            let mask = routes[at][host];
            assert_ne!(mask, 0, "switch {at} has a route to host {host}");
            let ports: Vec<usize> = (0..64).filter(|p| mask & (1 << p) != 0).collect();
            match fabric.ports[at][ports[pick % ports.len()]].0 {
                Peer::Host(h) => {
                    assert_eq!(h, host, "delivered to the right host");
                    return path;
                }
                Peer::Switch((next, _)) => {
                    assert!(!path.contains(&next), "no loop: {path:?} then {next}");
                    path.push(next);
                    at = next;
                }
                Peer::None => panic!("a route over a failed link"),
            }
        }
    }

    #[test]
    fn a_k8_fat_tree_has_the_papers_size_and_every_path_takes_at_most_five_switches() {
        let fabric = Fabric::fat_tree(8, G1, 4);
        assert_eq!((fabric.switch_count(), fabric.hosts.len(), fabric.links().count()), (80, 128, 256));
        assert!(fabric.links().all(|(_, _, speed)| speed == BitRate::mbps(500)), "√4 = 2 per tier");
        let routes = fabric.routes();
        let edge_of = |host: usize| fabric.hosts[host].0;
        for (from, to) in [(0, 1), (0, 5), (0, 127), (77, 3)] {
            for pick in 0..4 {
                let path = walk(&fabric, &routes, edge_of(from), to, pick);
                let expected = if edge_of(from) == edge_of(to) {
                    1
                } else if from / 16 == to / 16 {
                    3
                } else {
                    5
                };
                assert_eq!(path.len(), expected, "host {from} → {to}: {path:?}");
            }
        }
        assert_eq!(routes[0][127].count_ones(), 4, "an edge spreads over its four aggregations");
    }

    #[test]
    fn broadcasts_reach_every_switch_over_a_tree() {
        for fabric in [Fabric::fat_tree(4, G1, 1), Fabric::leaf_spine(2, 4, 3, G1), Fabric::dumbbell(3, G1)] {
            let flooding = fabric.flooding();
            let tree_ports: u32 = (0..fabric.switch_count())
                .map(|s| {
                    (0..fabric.ports[s].len())
                        .filter(|&p| flooding[s] & (1 << p) != 0 && matches!(fabric.ports[s][p].0, Peer::Switch(_)))
                        .count() as u32
                })
                .sum();
            assert_eq!(tree_ports, 2 * (fabric.switch_count() as u32 - 1), "a spanning tree: n − 1 links");
        }
    }

    #[test]
    fn failed_links_reroute_over_what_is_left_even_down_and_up_again() {
        // OFC's Fig. 9 fabric: two spines, four leaves; leaf 0 loses spine 4, leaf 3 spine 5.
        let mut fabric = Fabric::leaf_spine(2, 4, 1, G1);
        assert!(fabric.fail_link(0, 4) && fabric.fail_link(3, 5));
        assert!(!fabric.fail_link(0, 4), "already failed");
        let routes = fabric.routes();
        let path = walk(&fabric, &routes, 0, 3, 0);
        assert_eq!(path, vec![0, 5, 1, 4, 3], "leaf 0 → spine 5 → a leaf → spine 4 → leaf 3");
        for host in 0..4 {
            for from in 0..6 {
                walk(&fabric, &routes, from, host, 1);
            }
        }
    }

    #[test]
    fn a_fat_tree_edge_routes_its_own_hosts_and_the_rest_by_default_as_before() {
        let fabric = Fabric::fat_tree(4, G1, 1);
        let mac = |h: usize| EthernetAddress([2, 0, 0, 0, 0, h as u8 + 1]);
        let configs = fabric.switch_configs(&SwitchConfig::with_ports("base", 1, G1), mac);
        let routes = fabric.routes();
        let edge = &configs[0];
        assert_eq!(edge.static_fdb_entries().unwrap().len(), 2, "its two hosts only");
        assert_eq!(edge.fdb_default_route().unwrap(), 0b1100, "both uplinks");
        let cores = configs.iter().filter(|c| c.fdb.default_route.is_none()).count();
        assert_eq!(cores, 4, "a core switch has no majority route: one port per pod");
        for (s, config) in configs.iter().enumerate() {
            let entries: std::collections::HashMap<_, _> = config.static_fdb_entries().unwrap().into_iter().collect();
            for (host, &mask) in routes[s].iter().enumerate() {
                let route = entries.get(&mac(host)).copied().unwrap_or(config.fdb_default_route().unwrap());
                assert_eq!(route, mask, "sw{} to h{}", s + 1, host + 1);
            }
        }
    }

    #[test]
    fn configurations_carry_the_routes_ecmp_groups_and_tree() {
        let fabric = Fabric::leaf_spine(2, 2, 2, G1);
        let mac = |h: usize| EthernetAddress([2, 0, 0, 0, 0, h as u8 + 1]);
        let configs = fabric.switch_configs(&SwitchConfig::with_ports("base", 1, G1), mac);
        // The tree grows from sw1, which reaches both spines itself; sw2 then needs one.
        let leaf = &configs[1];
        assert_eq!(leaf.switch.name, "sw2");
        assert_eq!(leaf.ports.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["p1", "p2", "p3", "p4"]);
        assert_eq!(
            leaf.ports.iter().map(|p| (p.learning, p.flooding)).collect::<Vec<_>>(),
            [(true, true), (true, true), (false, true), (false, false)]
        );
        let entries = leaf.static_fdb_entries().unwrap();
        assert!(entries.contains(&(mac(2), 0b0001)) && entries.contains(&(mac(0), 0b1100)), "{entries:?}");
        for config in &configs {
            config.validate().unwrap();
        }
    }
}
