//! PFC deadlock: the cyclic buffer dependency (CBD) scenario of OFC's evaluation (§IV-A-2,
//! "Deadlock scenario", Fig. 9) and a detector.
//!
//! The fabric is a leaf-spine of two spines and four leaves, one host per leaf, with two
//! failed links (leaf 1–spine 1 and leaf 4–spine 2), so that traffic between leaves 1 and
//! 4 bounces down to a leaf and up again, as in Hu et al.'s example of how CBDs form
//! ("Deadlocks in datacenter networks: why do they form, and how to avoid them", HotNets
//! 2016, which OFC cites for it). Four flows close the cycle spine 1 → leaf 3 → spine 2 →
//! leaf 2 → spine 1, every link of which carries two of them at line rate:
//!
//! - f1: h1 → h4 over leaf 1, spine 2, leaf 2, spine 1, leaf 4;
//! - f2: h4 → h1 over leaf 4, spine 1, leaf 3, spine 2, leaf 1;
//! - f3: h2 → h3 over leaf 2, spine 1, leaf 3;
//! - f4: h3 → h2 over leaf 3, spine 2, leaf 2.
//!
//! Where the shortest paths form an ECMP group, the switches' static entries pin the one
//! above (an operator's static route), so the cycle does not depend on the hash.
//!
//! Flow i sends m_i frames at line rate, all four starting within a microsecond; OFC draws
//! (m1, m2, m3, m4) with m1 + m2 + m3 + m4 = M at random, 1000 times per M. We read m_i as frames: the paper
//! does not give a flow's unit.
//!
//! A deadlock is a cycle of switches each of which holds frames of the lossless priority
//! for the next and sent none of them for a whole detection interval, while no data frame
//! moved anywhere: every queue of the cycle waits on the next one's room, which never comes.

use super::fabric::Fabric;
use super::{Network, Node, SimHost};
use pfcswitch_hosts::FlowSpec;
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_switch::config::{L2_HEADER_MAX, StaticEntry, StaticPorts, SwitchConfig};
use pfcswitch_switch::config_error::ConfigError;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};
use std::time::Duration;

/// How long no data frame may move before the network counts as stuck: longer than the
/// longest pause a PFC frame can ask for at 1 Gbit/s and above (65535 quanta, 33.6 ms at
/// 1 Gbit/s; 0.84 ms at 40 Gbit/s), so only refreshed pauses hold a queue that long.
pub const DETECTION_INTERVAL: Duration = Duration::from_millis(40);

/// The flows of the CBD: (sender leaf, receiver leaf), leaves numbered from 0.
const FLOWS: [(usize, usize); 4] = [(0, 3), (3, 0), (1, 2), (2, 1)];

/// (switch, destination host, the port index it must use) for the pinned routes; leaves are
/// switches 0–3 (ports: host, spine 1, spine 2), spines 4–5 (one port per leaf).
const PINNED: [(usize, usize, usize); 4] = [(5, 3, 1), (4, 0, 2), (1, 2, 1), (2, 1, 2)];

/// The outcome of one run of the scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CbdRun {
    /// Switches (from 0) of a deadlocked cycle, in the order the frames wait on each other.
    pub cycle: Option<Vec<usize>>,
    /// Data frames the receivers got, of the M sent.
    pub delivered: u64,
    /// When the last frame arrived or the deadlock was found.
    pub ended: Instant,
}

/// The scenario's network with every switch configured from `base` (its first port is the
/// template of every port; its speed, every link's).
#[derive(Debug)]
pub struct CbdScenario {
    fabric: Fabric,
    configs: Vec<SwitchConfig>,
    priority: Pcp,
    /// The hosts obey OFC frames per flow (OFC-aware NICs) rather than as a PFC pause.
    ofc_hosts: bool,
    frame_len: usize,
    cable: Duration,
}

fn host_mac(host: usize) -> EthernetAddress {
    EthernetAddress([0x02, 0, 0, 0, 0, host as u8 + 1])
}

fn host_ip(host: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, host as u8 + 1)
}

impl CbdScenario {
    /// # Errors
    /// If `base` has no lossless priority.
    pub fn new(base: &SwitchConfig, ofc_hosts: bool, cable: Duration) -> Result<CbdScenario, ConfigError> {
        let speed = base.ports.first().map_or(pfcswitch_link::units::BitRate::gbps(1), |p| p.speed);
        let mut fabric = Fabric::leaf_spine(2, 4, 1, speed);
        assert!(fabric.fail_link(0, 4) && fabric.fail_link(3, 5), "the leaf-spine has these links");
        let mut configs = fabric.switch_configs(base, host_mac);
        for (switch, host, port) in PINNED {
            // A pinned route replaces the host's entry, or the default route for that host.
            let mac = host_mac(host).to_string();
            let entries = &mut configs[switch].fdb.static_entries;
            entries.retain(|e| e.mac != mac);
            entries.push(StaticEntry { mac, port: StaticPorts::Group(vec![format!("p{}", port + 1)]) });
        }
        let priority = base.pfc.lossless.first().and_then(|&p| Pcp::new(p)).ok_or_else(|| ConfigError {
            key: "pfc.lossless".into(),
            reason: "the deadlock scenario needs a lossless priority".into(),
        })?;
        let frame_len = (base.ports.first().map_or(1500, |p| u64::from(p.mtu)) + L2_HEADER_MAX) as usize;
        Ok(CbdScenario { fabric, configs, priority, ofc_hosts, frame_len, cable })
    }

    /// Runs the four flows of `draw` until every frame arrived or the network deadlocked
    /// (or, at worst, `limit`).
    ///
    /// # Errors
    /// A switch configuration the core refuses.
    pub fn run(&self, draw: &Draw, limit: Duration) -> Result<CbdRun, ConfigError> {
        let Draw { split, offsets } = *draw;
        let host = |h: usize| {
            let mut host = SimHost::new(host_mac(h), host_ip(h), self.fabric.ports[h][0].1);
            if self.ofc_hosts {
                host.nic.obey_ofc_per_flow(host_mac(h));
            }
            host
        };
        let mut net = self.fabric.network(&self.configs, host, self.cable)?;
        let start = Instant::ZERO + Duration::from_micros(10);
        for (id, ((&(from, to), &frames), &offset)) in FLOWS.iter().zip(&split).zip(&offsets).enumerate() {
            net.hosts[from].add_flow(FlowSpec {
                id: id as u32,
                dst: host_mac(to),
                dst_ip: host_ip(to),
                priority: self.priority,
                vid: 1,
                frame_len: self.frame_len,
                frames,
                start: start + offset,
                rate: None,
            });
        }
        let total: u64 = split.iter().sum();
        let delivered = |net: &Network| -> u64 {
            FLOWS.iter().enumerate().map(|(id, &(_, to))| net.hosts[to].received(id as u32).frames).sum()
        };
        let mut moved = data_frames_sent(&net, self.priority);
        let end = start + limit;
        while net.now() < end {
            net.run_for(DETECTION_INTERVAL);
            if delivered(&net) == total {
                break;
            }
            let now_moved = data_frames_sent(&net, self.priority);
            if now_moved == moved {
                let cycle = blocked_cycle(&net, self.priority);
                return Ok(CbdRun { cycle, delivered: delivered(&net), ended: net.now() });
            }
            moved = now_moved;
        }
        Ok(CbdRun { cycle: None, delivered: delivered(&net), ended: net.now() })
    }
}

/// Data frames of `priority` that all switches have sent so far.
fn data_frames_sent(net: &Network, priority: Pcp) -> u64 {
    (net.switches.iter())
        .flat_map(|s| (0..s.port_count()).map(move |port| s.counters(port).priority[priority.index()].tx_frames))
        .sum()
}

/// A cycle of switches each holding frames of `priority` for the next; on a network where
/// nothing moves, a deadlock.
fn blocked_cycle(net: &Network, priority: Pcp) -> Option<Vec<usize>> {
    let now = net.now();
    // waits[a] = the switches a holds frames for.
    let waits: Vec<Vec<usize>> = (net.switches.iter().enumerate())
        .map(|(s, switch)| {
            (0..switch.port_count())
                .filter(|&port| switch.queue_state(now, port, priority).egress.bytes > 0)
                .filter_map(|port| match net.cables.wire(super::Endpoint::switch(s, port))?.to.node {
                    Node::Switch(next) => Some(next),
                    Node::Host(_) => None,
                })
                .collect()
        })
        .collect();
    find_cycle(&waits)
}

/// A cycle of the directed graph `edges` (adjacency lists), by depth-first search.
fn find_cycle(edges: &[Vec<usize>]) -> Option<Vec<usize>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        OnPath,
        Done,
    }
    fn visit(node: usize, edges: &[Vec<usize>], marks: &mut [Mark], path: &mut Vec<usize>) -> Option<Vec<usize>> {
        marks[node] = Mark::OnPath;
        path.push(node);
        for &next in &edges[node] {
            match marks[next] {
                Mark::OnPath => {
                    let from = path.iter().position(|&n| n == next).expect("on the path");
                    return Some(path[from..].to_vec());
                }
                Mark::New => {
                    if let Some(cycle) = visit(next, edges, marks, path) {
                        return Some(cycle);
                    }
                }
                Mark::Done => {}
            }
        }
        marks[node] = Mark::Done;
        path.pop();
        None
    }
    let mut marks = vec![Mark::New; edges.len()];
    (0..edges.len()).find_map(|start| {
        if marks[start] != Mark::New {
            return None;
        }
        visit(start, edges, &mut marks, &mut Vec::new())
    })
}

/// The flows start within this of each other, in random order. Started on the same
/// nanosecond, four hosts' frames would meet at the switches on the same nanoseconds too,
/// and how the simulator orders simultaneous events would decide who fills which queue.
pub const START_SPREAD: Duration = Duration::from_micros(1);

/// One run's random part: frames per flow, and each flow's start after the first instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draw {
    pub split: [u64; 4],
    pub offsets: [Duration; 4],
}

impl Draw {
    /// (m1, m2, m3, m4) ≥ 0 with sum `total`, the gaps between three cut points drawn
    /// uniformly from 0..=total (OFC does not say how it draws; any split can come up), and
    /// start offsets uniform in [0, [`START_SPREAD`]).
    pub fn random(total: u64, rng: &mut Rng) -> Draw {
        let mut bars = [0u64; 3].map(|_| rng.next_u64() % (total + 1));
        bars.sort_unstable();
        let split = [bars[0], bars[1] - bars[0], bars[2] - bars[1], total - bars[2]];
        let spread = START_SPREAD.as_nanos() as u64;
        let offsets = [0; 4].map(|_| Duration::from_nanos(rng.next_u64() % spread));
        Draw { split, offsets }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fabric::Peer;

    #[test]
    fn pinned_routes_close_the_cycle_spine1_leaf3_spine2_leaf2() {
        let base = SwitchConfig::with_ports("base", 1, pfcswitch_link::units::BitRate::gbps(1));
        let scenario = CbdScenario::new(&base, false, Duration::ZERO).unwrap();
        // (switch, destination host) → the switch its frames go to next.
        let next = |switch: usize, host: usize| {
            let entries = scenario.configs[switch].static_fdb_entries().unwrap();
            let mask = entries.iter().find(|(mac, _)| *mac == host_mac(host)).unwrap().1;
            assert_eq!(mask.count_ones(), 1, "one port, pinned");
            match scenario.fabric.ports[switch][mask.trailing_zeros() as usize].0 {
                Peer::Switch((s, _)) => s,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(next(5, 3), 1, "spine 2 sends f1 down to leaf 2");
        assert_eq!(next(1, 3), 4, "leaf 2 sends f1 up to spine 1");
        assert_eq!(next(4, 0), 2, "spine 1 sends f2 down to leaf 3");
        assert_eq!(next(2, 0), 5, "leaf 3 sends f2 up to spine 2");
        assert_eq!(next(1, 2), 4, "leaf 2 sends f3 up to spine 1");
        assert_eq!(next(2, 1), 5, "leaf 3 sends f4 up to spine 2");
    }

    #[test]
    fn a_cycle_is_found_and_a_tree_has_none() {
        assert_eq!(find_cycle(&[vec![1], vec![2], vec![3], vec![1]]), Some(vec![1, 2, 3]));
        assert_eq!(find_cycle(&[vec![1, 2], vec![2], vec![]]), None);
    }

    #[test]
    fn random_draws_add_up_cover_the_range_and_spread_the_starts() {
        let mut rng = Rng::new(7);
        let draws: Vec<Draw> = (0..1000).map(|_| Draw::random(240, &mut rng)).collect();
        assert!(draws.iter().all(|d| d.offsets.iter().all(|&o| o < START_SPREAD)));
        let splits: Vec<[u64; 4]> = draws.iter().map(|d| d.split).collect();
        assert!(splits.iter().all(|s| s.iter().sum::<u64>() == 240));
        for i in 0..4 {
            assert!(splits.iter().any(|s| s[i] < 5) && splits.iter().any(|s| s[i] > 180), "flow {i}");
        }
    }
}
