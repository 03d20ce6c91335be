//! What a description must satisfy before anything is built: known and unique names that
//! make valid namespace and interface names, each port and host used once, every host on
//! one link to a switch, speeds, delays, loss and MTUs in range, and one connected fabric.
//! Loops that flooded frames go round need the switches' configs: `flooding.rs`, called by
//! the lab once it has them.

use super::description::{End, MAX_HOSTS, Topology};
use super::error::TopologyError;
use super::file::NodeLines;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Linux's interface names: at most 15 bytes.
const MAX_INTERFACE_NAME: usize = 15;
/// Node names become namespace names after a prefix; shorter keeps `ip netns` listings legible.
pub(crate) const MAX_NODE_NAME: usize = 32;
/// IPv6's minimum (hosts get IPv6 addresses) up to the jumbo frames the datapath carries.
const MTU_RANGE: std::ops::RangeInclusive<u32> = 1280..=9000;
/// A second of propagation is a misplaced unit, not a cable.
const MAX_DELAY: Duration = Duration::from_secs(1);

pub(crate) fn check(topology: &Topology, node_lines: &NodeLines) -> Result<(), TopologyError> {
    let refuse = |line: Option<usize>, reason: String| Err(TopologyError::new(&topology.file, line, reason));
    let node_line = |name: &str| node_lines.get(name).copied();
    if topology.switches.is_empty() {
        return refuse(None, "no switches".into());
    }
    if topology.hosts.len() > MAX_HOSTS {
        return refuse(None, format!("{} hosts; at most {MAX_HOSTS} (02:00:00:00:HH:LL)", topology.hosts.len()));
    }
    let mut kinds = HashMap::new();
    for (name, kind) in
        topology.switches.iter().map(|s| (s, "switch")).chain(topology.hosts.iter().map(|h| (h, "host")))
    {
        if let Err(reason) = check_name(name, MAX_NODE_NAME) {
            return refuse(node_line(name), format!("{kind} name `{name}`: {reason}"));
        }
        if let Some(other) = kinds.insert(name.as_str(), kind) {
            return refuse(node_line(name), format!("`{name}` is named twice (a {other} and a {kind})"));
        }
    }
    let mut used: HashMap<String, usize> = HashMap::new();
    for link in &topology.links {
        let line = Some(link.line);
        if matches!(link.a, End::Host(_)) {
            return refuse(line, format!("link {} joins two hosts: hosts hang off switch ports", link.name()));
        }
        for end in [&link.a, &link.b] {
            match (end, kinds.get(end.node())) {
                (_, None) => return refuse(line, format!("unknown node `{}`", end.node())),
                (End::Host(name), Some(&"switch")) => {
                    return refuse(line, format!("`{name}` is a switch: name its port, as `{name}:p1`"));
                }
                (End::Port { switch, .. }, Some(&"host")) => {
                    return refuse(
                        line,
                        format!("`{switch}` is a host: a host has one interface, named by the host alone"),
                    );
                }
                (End::Port { port, .. }, _) => {
                    if let Err(reason) = check_name(port, MAX_INTERFACE_NAME) {
                        return refuse(line, format!("port `{port}`: {reason}"));
                    }
                }
                (End::Host(_), _) => {}
            }
            if let Some(first) = used.insert(end.to_string(), link.line) {
                let what = if matches!(end, End::Host(_)) { "host" } else { "port" };
                return refuse(line, format!("{what} {end} is already on the link of line {first}"));
            }
        }
        if link.a.node() == link.b.node() {
            return refuse(line, format!("link {} joins {} to itself", link.name(), link.a.node()));
        }
        if !(0.0..1.0).contains(&link.loss) {
            return refuse(line, format!("loss = {} is not a fraction in [0, 1)", link.loss));
        }
        if !MTU_RANGE.contains(&link.mtu) {
            return refuse(line, format!("mtu = {} is outside {}..={}", link.mtu, MTU_RANGE.start(), MTU_RANGE.end()));
        }
        if link.delay > MAX_DELAY {
            return refuse(line, format!("delay {:?} is above {MAX_DELAY:?}", link.delay));
        }
    }
    let mut ifaces = HashSet::new();
    for interface in &topology.interfaces {
        let (line, end) = (Some(interface.line), &interface.end);
        let End::Port { switch, port } = end else {
            return refuse(line, format!("interfaces: `{end}` is not a switch port (`SWITCH:PORT`)"));
        };
        if kinds.get(switch.as_str()) != Some(&"switch") {
            return refuse(line, format!("interfaces: unknown switch `{switch}`"));
        }
        if let Err(reason) = check_name(port, MAX_INTERFACE_NAME) {
            return refuse(line, format!("port `{port}`: {reason}"));
        }
        if let Some(first) = used.insert(end.to_string(), interface.line) {
            return refuse(line, format!("port {end} is already on line {first}"));
        }
        if interface.iface.is_empty() || interface.iface.len() > MAX_INTERFACE_NAME || interface.iface.contains('/') {
            return refuse(line, format!("interface `{}`: not a Linux interface name", interface.iface));
        }
        if !ifaces.insert(&interface.iface) {
            return refuse(line, format!("interface `{}` is bound twice", interface.iface));
        }
    }
    let linked: HashSet<&str> = topology.links.iter().flat_map(|l| [l.a.node(), l.b.node()]).collect();
    for (name, kind) in
        topology.switches.iter().map(|s| (s, "switch")).chain(topology.hosts.iter().map(|h| (h, "host")))
    {
        if !linked.contains(name.as_str()) {
            return refuse(node_line(name), format!("{kind} `{name}` has no link"));
        }
    }
    if let Some(stranded) = unreachable_node(topology) {
        return refuse(
            node_line(stranded),
            format!("`{stranded}` cannot reach `{}`: the links make more than one fabric", topology.switches[0]),
        );
    }
    Ok(())
}

/// Names become namespace and interface names: letters, digits, `_` and `.` (not `-`, which
/// joins the ends in a link's name, nor `:`, which separates a switch from its port, nor `/`
/// or spaces, which `ip` refuses).
pub(crate) fn check_name(name: &str, max: usize) -> Result<(), String> {
    if name.is_empty() || name.len() > max {
        return Err(format!("must be 1 to {max} characters"));
    }
    if let Some(c) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.'))) {
        return Err(format!(
            "`{c}` is not allowed (letters, digits, `_` and `.`; `-` joins the ends in a link's name)"
        ));
    }
    Ok(())
}

/// A node the first switch does not reach over the links, if any.
fn unreachable_node(topology: &Topology) -> Option<&str> {
    let mut neighbours: HashMap<&str, Vec<&str>> = HashMap::new();
    for link in &topology.links {
        neighbours.entry(link.a.node()).or_default().push(link.b.node());
        neighbours.entry(link.b.node()).or_default().push(link.a.node());
    }
    let mut reached = HashSet::from([topology.switches[0].as_str()]);
    let mut frontier = vec![topology.switches[0].as_str()];
    while let Some(node) = frontier.pop() {
        for &next in neighbours.get(node).into_iter().flatten() {
            if reached.insert(next) {
                frontier.push(next);
            }
        }
    }
    topology.switches.iter().chain(&topology.hosts).map(String::as_str).find(|node| !reached.contains(node))
}
