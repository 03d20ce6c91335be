//! The egress queues a traffic class crosses, and what they did: the "ports through which
//! uncongested / congested flows traverse" whose average queue OFC's Fig. 2(b) and Fig. 5
//! plot, and how long a peer paused them.
//!
//! A flow's hops are read from the topology's links and each switch's forwarding table at the
//! end of the run (the learnt entries the datapath really used), so multi-path topologies
//! report the path taken, not one the runner guesses.

use super::record::QueueSample;
use super::topology::nth_host;
use pfcswitch_switch::report::Snapshot;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap, HashSet};

/// One egress queue: (switch, port, priority).
pub type Queue = (String, String, u8);

/// The egress queues some flows crossed, and how many of them took a path no one knows (a
/// switch on the way still flooded their destination).
#[derive(Clone, Debug, Default)]
pub struct Crossed {
    pub queues: BTreeSet<Queue>,
    pub unknown: usize,
}

impl Crossed {
    pub fn add(&mut self, hops: Option<Vec<(String, String)>>, priority: u8) {
        match hops {
            Some(hops) => self.queues.extend(hops.into_iter().map(|(switch, port)| (switch, port, priority))),
            None => self.unknown += 1,
        }
    }

    pub fn union<'a>(all: impl Iterator<Item = &'a Crossed>) -> Crossed {
        all.fold(Crossed::default(), |mut sum, c| {
            sum.queues.extend(c.queues.iter().cloned());
            sum.unknown += c.unknown;
            sum
        })
    }
}

/// A topology's wiring and its switches' forwarding tables.
pub struct Paths {
    /// `(switch, port)` → what its cable reaches: a host, or another switch.
    peers: HashMap<(String, String), Peer>,
    /// Host → the switch port it hangs off.
    attached: HashMap<String, (String, String)>,
    /// Switch → destination MAC → egress port.
    fdb: HashMap<String, HashMap<String, String>>,
    /// Host → its MAC, as the tables name it.
    macs: HashMap<String, String>,
}

enum Peer {
    Host,
    Switch(String),
}

fn switch_port(end: &str) -> Option<(String, String)> {
    end.split_once(':').map(|(s, p)| (s.to_string(), p.to_string()))
}

impl Paths {
    /// `links` as `pfcswitch topology describe` gives them (`sw1:p1-h1`, `sw1:p6-sw2:p1`), the
    /// forwarding tables from the switches' snapshots.
    pub fn new(hosts: &[String], links: &[String], snapshots: &[(String, Snapshot)]) -> Paths {
        let fdb = snapshots
            .iter()
            .map(|(switch, s)| (switch.clone(), s.fdb.iter().map(|e| (e.mac.clone(), e.port.clone())).collect()))
            .collect();
        Paths::wired(hosts, links, fdb)
    }

    fn wired(hosts: &[String], links: &[String], fdb: HashMap<String, HashMap<String, String>>) -> Paths {
        let mut peers = HashMap::new();
        let mut attached = HashMap::new();
        for link in links {
            let Some((a, b)) = link.split_once('-') else { continue };
            let Some(a) = switch_port(a) else { continue };
            match switch_port(b) {
                Some(b) => {
                    peers.insert(b.clone(), Peer::Switch(a.0.clone()));
                    peers.insert(a, Peer::Switch(b.0));
                }
                None => {
                    attached.insert(b.to_string(), a.clone());
                    peers.insert(a, Peer::Host);
                }
            }
        }
        let macs = (hosts.iter().enumerate())
            .filter_map(|(index, host)| Some((host.clone(), nth_host(index).ok()?.0.to_string())))
            .collect();
        Paths { peers, attached, fdb, macs }
    }

    /// The (switch, egress port) hops from host `from` to host `to`; `None` when a switch on
    /// the way had not learnt `to` (it floods) or the tables loop.
    pub fn hops(&self, from: &str, to: &str) -> Option<Vec<(String, String)>> {
        let mac = self.macs.get(to)?.clone();
        let (mut switch, _) = self.attached.get(from)?.clone();
        let mut hops = Vec::new();
        while hops.len() <= self.fdb.len() {
            let port = self.fdb.get(&switch)?.get(&mac)?.clone();
            hops.push((switch.clone(), port.clone()));
            match self.peers.get(&(switch, port))? {
                Peer::Host => return Some(hops),
                Peer::Switch(next) => switch = next.clone(),
            }
        }
        None
    }
}

/// What the egress queues of a set of flows did over the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PathSummary {
    /// `switch:port` of every egress queue crossed, once each.
    pub ports: Vec<String>,
    /// Flows whose path is unknown (a switch still flooded their destination).
    pub unknown_paths: usize,
    /// The time-averaged egress queue over those queues (OFC's Fig. 5), bytes.
    pub average_queue_bytes: f64,
    /// How long their peers paused those queues (PFC, or OFC's coarse pause), summed, ms.
    pub paused_ms: f64,
}

impl PathSummary {
    pub fn of(crossed: &Crossed, samples: &[QueueSample], snapshots: &[(String, Snapshot)]) -> PathSummary {
        let queues: HashSet<(&str, &str, u8)> =
            crossed.queues.iter().map(|(s, p, priority)| (s.as_str(), p.as_str(), *priority)).collect();
        let on_path = |switch: &str, port: &str, priority: u8| queues.contains(&(switch, port, priority));
        let sampled: Vec<f64> =
            samples.iter().filter(|s| on_path(&s.switch, &s.port, s.priority)).map(|s| s.egress_bytes as f64).collect();
        let paused_seconds: f64 = (snapshots.iter())
            .flat_map(|(switch, s)| s.ports.iter().map(move |p| (switch, p)))
            .flat_map(|(switch, port)| port.priorities.iter().map(move |p| (switch, port, p)))
            .filter(|(switch, port, p)| on_path(switch, &port.name, p.priority))
            .map(|(_, _, p)| p.paused_seconds)
            .sum();
        PathSummary {
            ports: crossed
                .queues
                .iter()
                .map(|(s, p, _)| format!("{s}:{p}"))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect(),
            unknown_paths: crossed.unknown,
            average_queue_bytes: if sampled.is_empty() {
                0.0
            } else {
                sampled.iter().sum::<f64>() / sampled.len() as f64
            },
            paused_ms: paused_seconds * 1e3,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTS: [&str; 3] = ["h1", "h2", "h3"];

    fn mac(host: &str) -> String {
        nth_host(HOSTS.iter().position(|h| *h == host).unwrap()).unwrap().0.to_string()
    }

    fn table(entries: &[(&str, &str)]) -> HashMap<String, String> {
        entries.iter().map(|(host, port)| (mac(host), port.to_string())).collect()
    }

    fn dumbbell(sw2_to_h3: &str) -> Paths {
        let links: Vec<String> =
            ["sw1:p1-h1", "sw1:p2-h2", "sw1:p3-sw2:p1", "sw2:p2-h3"].iter().map(|l| l.to_string()).collect();
        let fdb = HashMap::from([
            ("sw1".to_string(), table(&[("h1", "p1"), ("h2", "p2"), ("h3", "p3")])),
            ("sw2".to_string(), table(&[("h1", "p1"), ("h2", "p1"), ("h3", sw2_to_h3)])),
        ]);
        Paths::wired(&HOSTS.map(String::from), &links, fdb)
    }

    #[test]
    fn follows_the_learnt_tables_across_trunks() {
        let paths = dumbbell("p2");
        let hop = |s: &str, p: &str| (s.to_string(), p.to_string());
        assert_eq!(paths.hops("h1", "h3"), Some(vec![hop("sw1", "p3"), hop("sw2", "p2")]));
        assert_eq!(paths.hops("h3", "h2"), Some(vec![hop("sw2", "p1"), hop("sw1", "p2")]));
        assert_eq!(paths.hops("h1", "h2"), Some(vec![hop("sw1", "p2")]));
    }

    #[test]
    fn unlearnt_destinations_and_loops_have_no_path() {
        assert_eq!(dumbbell("p2").hops("h1", "h9"), None, "no such host");
        assert_eq!(dumbbell("p1").hops("h1", "h3"), None, "sw2 sends h3 back to sw1, which sends it to sw2");
    }
}
