//! One fabric over several machines (`[machines]`): each switch runs on one machine, a host
//! on its switch's, and a link between switches on two machines is a VXLAN tunnel over the
//! machines' own network (RFC 7348). Every machine reads the same description and builds its
//! part (`pfcswitch topology up --machine NAME`), so both ends of a tunnel agree on its VNI
//! without talking to each other: the VNI is `[vxlan] vni` plus the link's position in the
//! file.

use super::description::{End, Link, Machine, Topology, Tunnel};
use super::error::TopologyError;
use super::validate::{MAX_NODE_NAME, check_name};
use std::collections::HashMap;
use std::net::IpAddr;

impl Topology {
    /// The machine `node` (a switch, or a host by its switch) runs on, if the description
    /// spreads over machines.
    pub fn machine_of(&self, node: &str) -> Option<&Machine> {
        let switch = match self.hosts.iter().any(|h| h == node) {
            true => self.link_at(node)?.a.node(),
            false => node,
        };
        self.machines.iter().find(|machine| machine.switches.iter().any(|s| s == switch))
    }

    /// The named machine.
    pub fn machine(&self, name: &str) -> Option<&Machine> {
        self.machines.iter().find(|machine| machine.name == name)
    }

    /// Whether `node` is built on `machine`: every node is when the build is not split
    /// (`None`).
    pub fn runs_on(&self, node: &str, machine: Option<&str>) -> bool {
        machine.is_none_or(|name| self.machine_of(node).is_some_and(|m| m.name == name))
    }

    /// The tunnel `machine` builds for `link`: `None` when both ends are on the same machine
    /// (or the build is not split), or when neither is on `machine`.
    pub fn tunnel(&self, link: &Link, machine: Option<&str>) -> Option<Tunnel> {
        let (a, b) = (self.machine_of(link.a.node())?, self.machine_of(link.b.node())?);
        let name = machine?;
        let (local, remote) = match (a.name == name, b.name == name) {
            (true, false) => (a, b),
            (false, true) => (b, a),
            _ => return None,
        };
        let position = self.links.iter().position(|l| l == link)?;
        Some(Tunnel {
            vni: self.vxlan.first_vni + position as u32,
            port: self.vxlan.port,
            local: local.address,
            remote: remote.address,
        })
    }
}

/// `[machines]` places every switch on exactly one machine, at an address of its own, and
/// the two ends of a tunnel share an address family.
pub(crate) fn check(topology: &Topology) -> Result<(), TopologyError> {
    let refuse = |line: Option<usize>, reason: String| Err(TopologyError::new(&topology.file, line, reason));
    if topology.machines.is_empty() {
        return Ok(());
    }
    let mut placed: HashMap<&str, &Machine> = HashMap::new();
    let mut addresses: HashMap<IpAddr, &str> = HashMap::new();
    for machine in &topology.machines {
        let line = Some(machine.line);
        if let Err(reason) = check_name(&machine.name, MAX_NODE_NAME) {
            return refuse(line, format!("machine name `{}`: {reason}", machine.name));
        }
        if machine.address.is_unspecified() || machine.address.is_multicast() {
            return refuse(line, format!("machine {}: {} cannot be a tunnel's end", machine.name, machine.address));
        }
        if let Some(other) = addresses.insert(machine.address, &machine.name) {
            return refuse(
                line,
                format!("machines {other} and {} both have address {}", machine.name, machine.address),
            );
        }
        if machine.switches.is_empty() {
            return refuse(line, format!("machine {} runs no switch", machine.name));
        }
        for switch in &machine.switches {
            if !topology.switches.contains(switch) {
                return refuse(line, format!("machine {}: unknown switch `{switch}`", machine.name));
            }
            if let Some(other) = placed.insert(switch, machine) {
                return refuse(
                    line,
                    format!("switch {switch} is on machine {} (line {}) already", other.name, other.line),
                );
            }
        }
    }
    if let Some(switch) = topology.switches.iter().find(|s| !placed.contains_key(s.as_str())) {
        let line = topology.machines.iter().map(|m| m.line).min();
        return refuse(line, format!("switch {switch} is on no machine: [machines] must place every switch"));
    }
    for link in &topology.links {
        let a = placed[link.a.node()];
        let b = match &link.b {
            End::Port { switch, .. } => placed[switch.as_str()],
            End::Host(_) => a,
        };
        if a.address.is_ipv4() != b.address.is_ipv4() {
            return refuse(
                Some(link.line),
                format!("link {} joins machine {} over IPv4 and {} over IPv6", link.name(), a.name, b.name),
            );
        }
    }
    Ok(())
}
