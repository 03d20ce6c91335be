//! HPCC's `topology.txt`: a header `nodes switches links`, a line of the switches' node ids,
//! then one link a line, `src dst rate delay error_rate` (ns-3 strings, see [`crate::units`]).
//! Nodes are numbered from 0; those not listed as switches are hosts (`mix/fat.txt`: hosts
//! 0–319, switches 320–375).
//!
//! ns-3 reads it token by token and trusts it: a wrong count, an id out of range or a link
//! listed twice ends in a crash or a silently different network. Here each of those is
//! refused with its line. What follows the header's number of links is never read by ns-3,
//! and HPCC's own `mix/topology.txt` keeps spare links and notes there: it is ignored here
//! too, and counted ([`Topology::trailing_lines`]). Two restrictions are pfcswitch's own and
//! say so: a host has exactly one link, to a switch (pfcswitch's hosts have one NIC; HPCC's
//! `RdmaHw` can drive several, no published experiment uses it).

use crate::error::{FileError, parse_token, token_lines};
use crate::fct::base_rtt_ns;
use crate::units::{format_rate, format_time, parse_rate, parse_time};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::Path;

/// One link, both directions at one rate.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub a: u32,
    pub b: u32,
    pub rate_bps: u64,
    /// One-way propagation delay.
    pub delay_ns: u64,
    /// Share of packets lost on the link, in [0, 1].
    pub error_rate: f64,
}

/// A `topology.txt`.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    pub nodes: u32,
    /// In the file's order.
    pub switches: Vec<u32>,
    /// In the file's order, which is ns-3's interface order: a node's k-th link is its
    /// interface k + 1 (interface 0 is the loopback), as `pfc.txt` and `qlen.txt` name them.
    pub links: Vec<Link>,
    /// Non-blank lines after the header's number of links, which ns-3 never reads.
    pub trailing_lines: usize,
}

impl Topology {
    /// Reads `text`, the contents of `file` (named in errors).
    pub fn parse(text: &str, file: &Path) -> Result<Topology, FileError> {
        let at = |line: usize, reason: String| FileError::at(file, line, reason);
        let mut lines = token_lines(text);
        let (header_line, header) = lines.next().ok_or_else(|| at(0, "empty file".into()))?;
        let [nodes, switch_count, link_count] = header[..] else {
            return Err(at(
                header_line,
                format!("the header is `nodes switches links`, found {} values", header.len()),
            ));
        };
        let nodes: u32 = parse_token(file, header_line, nodes, "node count")?;
        let switch_count: usize = parse_token(file, header_line, switch_count, "switch count")?;
        let link_count: usize = parse_token(file, header_line, link_count, "link count")?;
        if switch_count > nodes as usize {
            return Err(at(header_line, format!("{switch_count} switches among {nodes} nodes")));
        }
        let node = |line: usize, token: &str, what: &str| -> Result<u32, FileError> {
            let id: u32 = parse_token(file, line, token, what)?;
            if id >= nodes {
                return Err(at(
                    line,
                    format!("{what} {id} is not a node: the header has {nodes} (0 to {})", nodes - 1),
                ));
            }
            Ok(id)
        };
        let mut switches = Vec::with_capacity(switch_count);
        if switch_count > 0 {
            let (line, ids) = lines.next().ok_or_else(|| at(header_line + 1, "the switch ids are missing".into()))?;
            if ids.len() != switch_count {
                return Err(at(
                    line,
                    format!("the header says {switch_count} switches, this line lists {}", ids.len()),
                ));
            }
            for token in ids {
                let id = node(line, token, "switch")?;
                if switches.contains(&id) {
                    return Err(at(line, format!("switch {id} is listed twice")));
                }
                switches.push(id);
            }
        }
        let switch_set: BTreeSet<u32> = switches.iter().copied().collect();
        let mut links = Vec::with_capacity(link_count);
        let mut pairs = BTreeSet::new();
        let mut host_link = vec![None; nodes as usize];
        while links.len() < link_count {
            let Some((line, tokens)) = lines.next() else { break };
            let [a, b, rate, delay, error_rate] = tokens[..] else {
                return Err(at(
                    line,
                    format!("a link is `src dst rate delay error_rate`, found {} values", tokens.len()),
                ));
            };
            let (a, b) = (node(line, a, "node")?, node(line, b, "node")?);
            if a == b {
                return Err(at(line, format!("node {a} is linked to itself")));
            }
            if !pairs.insert((a.min(b), a.max(b))) {
                return Err(at(
                    line,
                    format!("a second link between {a} and {b} (ns-3 keeps one interface per neighbour)"),
                ));
            }
            for (end, other) in [(a, b), (b, a)] {
                if switch_set.contains(&end) {
                    continue;
                }
                if !switch_set.contains(&other) {
                    return Err(at(
                        line,
                        format!("hosts {a} and {b} are linked directly; a host's link goes to a switch"),
                    ));
                }
                if let Some(first) = host_link[end as usize].replace(line) {
                    return Err(at(
                        line,
                        format!(
                            "host {end} has a second link (the first is on line {first}): pfcswitch's hosts have one NIC"
                        ),
                    ));
                }
            }
            let error_rate: f64 = parse_token(file, line, error_rate, "error rate")?;
            if !(0.0..=1.0).contains(&error_rate) {
                return Err(at(line, format!("error rate {error_rate} is not in [0, 1]")));
            }
            links.push(Link {
                a,
                b,
                rate_bps: parse_rate(rate).map_err(|reason| at(line, reason))?,
                delay_ns: parse_time(delay).map_err(|reason| at(line, reason))?,
                error_rate,
            });
        }
        if links.len() < link_count {
            return Err(at(0, format!("the header says {link_count} links, the file has {}", links.len())));
        }
        if let Some(host) = (0..nodes).find(|&n| !switch_set.contains(&n) && host_link[n as usize].is_none()) {
            return Err(at(0, format!("host {host} has no link")));
        }
        Ok(Topology { nodes, switches, links, trailing_lines: lines.count() })
    }

    /// Reads `file`.
    pub fn read(file: &Path) -> Result<Topology, FileError> {
        let text = std::fs::read_to_string(file).map_err(|e| FileError::at(file, 0, e.to_string()))?;
        Topology::parse(&text, file)
    }

    /// The file ns-3 reads.
    pub fn emit(&self) -> String {
        let mut text = format!("{} {} {}\n", self.nodes, self.switches.len(), self.links.len());
        let ids: Vec<String> = self.switches.iter().map(u32::to_string).collect();
        writeln!(text, "{}", ids.join(" ")).expect("a String takes it");
        for l in &self.links {
            let (rate, delay) = (format_rate(l.rate_bps), format_time(l.delay_ns));
            writeln!(text, "{} {} {rate} {delay} {}", l.a, l.b, l.error_rate).expect("a String takes it");
        }
        text
    }

    /// HPCC's `mix/fat.txt`, the fabric of its Fig. 11, built from its description with the
    /// file's numbering and link order: 320 hosts (0–319) at 100 Gbit/s, 16 to a ToR; 20 ToRs
    /// (320–339), 20 aggregation (340–359) and 16 core switches (360–375) at 400 Gbit/s; 5
    /// pods of 4 ToRs and 4 aggregations, fully meshed; aggregation j reaching cores
    /// 4·(j mod 4) to 4·(j mod 4) + 3; every link 1 µs.
    pub fn hpcc_fat_tree() -> Topology {
        const HOSTS: u32 = 320;
        const TORS: u32 = 20;
        let (tor, agg, core) = (HOSTS, HOSTS + TORS, HOSTS + 2 * TORS);
        let link = |a, b, gbps: u64| Link { a, b, rate_bps: gbps * 1_000_000_000, delay_ns: 1000, error_rate: 0.0 };
        let hosts = (0..HOSTS).map(|h| link(h, tor + h / 16, 100));
        let tor_agg = (0..TORS).flat_map(|t| (0..4).map(move |k| link(tor + t, agg + 4 * (t / 4) + k, 400)));
        let agg_core = (0..TORS).flat_map(|a| (0..4).map(move |k| link(agg + a, core + 4 * (a % 4) + k, 400)));
        Topology {
            nodes: HOSTS + 2 * TORS + 16,
            switches: (HOSTS..HOSTS + 2 * TORS + 16).collect(),
            links: hosts.chain(tor_agg).chain(agg_core).collect(),
            trailing_lines: 0,
        }
    }

    pub fn is_switch(&self, node: u32) -> bool {
        self.switches.contains(&node)
    }

    /// The hosts' node ids, ascending.
    pub fn hosts(&self) -> Vec<u32> {
        (0..self.nodes).filter(|&n| !self.is_switch(n)).collect()
    }

    /// HPCC's `maxRtt` and `maxBdp` (`third.cc`, "get BDP and delay"), in ns and bytes: over
    /// every pair of hosts, the RTT is [`base_rtt_ns`] on a shortest path (its
    /// `CalculateRoute`, which only goes through switches) and the BDP that RTT times the
    /// path's slowest rate. What its senders' windows are with `HAS_WIN 1` and `GLOBAL_T 1`.
    pub fn max_rtt_bdp(&self, payload: u64) -> (u64, u64) {
        let (mut max_rtt, mut max_bdp) = (0, 0);
        for host in self.hosts() {
            // Breadth first from the host, as CalculateRoute: (delay, transmission, rate).
            let mut reached = std::collections::BTreeMap::from([(host, (0u64, 0u64, u64::MAX))]);
            let mut queue = std::collections::VecDeque::from([host]);
            while let Some(node) = queue.pop_front() {
                let (delay, transmission, rate) = reached[&node];
                for (link, peer) in self.interfaces(node) {
                    let link = &self.links[link];
                    if reached.contains_key(&peer) {
                        continue;
                    }
                    let hop = (delay + link.delay_ns, transmission + base_rtt_ns(&[(0, link.rate_bps)], payload));
                    reached.insert(peer, (hop.0, hop.1, rate.min(link.rate_bps)));
                    if self.is_switch(peer) {
                        queue.push_back(peer);
                    }
                }
            }
            for (&peer, &(delay, transmission, rate)) in &reached {
                if peer != host && !self.is_switch(peer) {
                    let rtt = 2 * delay + transmission;
                    max_rtt = max_rtt.max(rtt);
                    max_bdp = max_bdp.max(rtt * rate / 8_000_000_000);
                }
            }
        }
        (max_rtt, max_bdp)
    }

    /// `node`'s links as ns-3 numbers its interfaces (from 1): (index into `links`, peer).
    pub fn interfaces(&self, node: u32) -> Vec<(usize, u32)> {
        (self.links.iter().enumerate())
            .filter_map(|(i, l)| match (l.a == node, l.b == node) {
                (true, _) => Some((i, l.b)),
                (_, true) => Some((i, l.a)),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_rtt_and_bdp_are_third_ccs() {
        // HPCC's fat-tree: host, ToR, aggregation, core, aggregation, ToR, host: six 1 µs
        // links, two at 100 Gbit/s (80 ns a 1000-byte packet) and four at 400 (20 ns):
        // 2 × 6 µs + 240 ns, and that at 100 Gbit/s.
        assert_eq!(Topology::hpcc_fat_tree().max_rtt_bdp(1000), (12_240, 153_000));
        let pair = Topology::parse("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n", Path::new("t")).unwrap();
        assert_eq!(pair.max_rtt_bdp(1000), (4_160, 52_000));
    }

    const SMALL: &str =
        "5 2 4\n3 4\n0 3 100Gbps 0.001ms 0\n1 3 100Gbps 0.001ms 0\n2 4 25Gb/s 1000ns 0.01\n3 4 400Gbps 1us 0\n";

    fn parse(text: &str) -> Result<Topology, FileError> {
        Topology::parse(text, Path::new("topology.txt"))
    }

    fn refused(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn reads_nodes_switches_and_links_with_ns3_units() {
        let t = parse(SMALL).unwrap();
        assert_eq!((t.nodes, t.switches.clone()), (5, vec![3, 4]));
        assert_eq!(t.hosts(), vec![0, 1, 2]);
        assert_eq!(t.links[2], Link { a: 2, b: 4, rate_bps: 25_000_000_000, delay_ns: 1000, error_rate: 0.01 });
        assert_eq!(t.interfaces(3), vec![(0, 0), (1, 1), (3, 4)]);
    }

    /// HPCC's `mix/topology.txt` keeps spare links and a description after its links.
    #[test]
    fn lines_after_the_headers_links_are_ignored_as_ns3_ignores_them() {
        let t = parse(&format!("{SMALL}0 4 25Gbps 1us 0\nFirst line: total node #, switch node #, link #\n")).unwrap();
        assert_eq!((t.links.len(), t.trailing_lines), (4, 2));
    }

    #[test]
    fn hpccs_fat_tree_has_its_counts_and_every_switch_its_ports() {
        let t = Topology::hpcc_fat_tree();
        assert_eq!((t.nodes, t.switches.len(), t.links.len(), t.hosts().len()), (376, 56, 480, 320));
        assert_eq!(parse(&t.emit()).unwrap(), t, "a valid topology.txt");
        // A ToR: 16 hosts and 4 aggregations; an aggregation: 4 ToRs and 4 cores; a core: one
        // aggregation per pod.
        assert_eq!(t.interfaces(320).len(), 20);
        assert_eq!(t.interfaces(340).len(), 8);
        assert_eq!(t.interfaces(360).iter().map(|&(_, peer)| peer).collect::<Vec<_>>(), vec![340, 344, 348, 352, 356]);
    }

    #[test]
    fn what_it_writes_reads_back_the_same() {
        let t = parse(SMALL).unwrap();
        assert_eq!(parse(&t.emit()).unwrap(), t);
    }

    #[test]
    fn bad_files_are_refused_with_the_line_and_the_reason() {
        assert_eq!(refused(""), "topology.txt:0: empty file");
        assert_eq!(refused("5 2\n"), "topology.txt:1: the header is `nodes switches links`, found 2 values");
        assert_eq!(refused("5 2 4\n3\n"), "topology.txt:2: the header says 2 switches, this line lists 1");
        assert_eq!(refused("5 2 4\n3 3\n"), "topology.txt:2: switch 3 is listed twice");
        assert_eq!(refused("5 2 4\n3 9\n"), "topology.txt:2: switch 9 is not a node: the header has 5 (0 to 4)");
        let link = |l: &str| format!("5 2 2\n3 4\n{l}\n3 4 1Gbps 1us 0\n");
        assert_eq!(
            refused(&link("0 3 1Gbps 1us")),
            "topology.txt:3: a link is `src dst rate delay error_rate`, found 4 values"
        );
        assert_eq!(refused(&link("0 0 1Gbps 1us 0")), "topology.txt:3: node 0 is linked to itself");
        assert_eq!(
            refused(&link("0 1 1Gbps 1us 0")),
            "topology.txt:3: hosts 0 and 1 are linked directly; a host's link goes to a switch"
        );
        assert_eq!(
            refused(&link("0 3 1Tbps 1us 0")),
            "topology.txt:3: `1Tbps`: unknown rate unit `Tbps` (ns-3 knows bps, Kbps, Mbps, Gbps, b/s, B/s, Kib/s, …)"
        );
        assert_eq!(refused(&link("0 3 1Gbps 1.5ps 0")), "topology.txt:3: `1.5ps` is not a whole number of nanoseconds");
        assert_eq!(refused(&link("0 3 1Gbps 1us 2")), "topology.txt:3: error rate 2 is not in [0, 1]");
        assert_eq!(refused(&link("0 3 1Gbps 1us x")), "topology.txt:3: error rate `x` is not a valid number");
        assert_eq!(
            refused("5 2 2\n3 4\n0 3 1Gbps 1us 0\n3 0 1Gbps 1us 0\n"),
            "topology.txt:4: a second link between 3 and 0 (ns-3 keeps one interface per neighbour)"
        );
        assert_eq!(
            refused("5 2 2\n3 4\n0 3 1Gbps 1us 0\n0 4 1Gbps 1us 0\n"),
            "topology.txt:4: host 0 has a second link (the first is on line 3): pfcswitch's hosts have one NIC"
        );
        assert_eq!(refused("5 2 3\n3 4\n0 3 1Gbps 1us 0\n"), "topology.txt:0: the header says 3 links, the file has 1");
        assert_eq!(refused("5 2 1\n3 4\n0 3 1Gbps 1us 0\n"), "topology.txt:0: host 1 has no link");
    }
}
