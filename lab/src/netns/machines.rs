//! This machine's part of a fabric spread over machines (`[machines]`): its links to the
//! others are VXLAN devices (RFC 7348). Each is created in the namespace `pfcswitch` runs in,
//! where the machines' own network is, and moved into the switch's namespace as the port: a
//! VXLAN device keeps its UDP socket in the namespace it was made in (`link-netns`), so the
//! switch sends and receives plain Ethernet frames on the port, PFC frames included, and the
//! kernel encapsulates them on the machines' network.

use super::{ip, links};
use anyhow::{Context, Result};
use pfcswitch_topology::{End, Link, Topology, Tunnel};
use std::net::{IpAddr, UdpSocket};

/// VXLAN's outer headers: Ethernet 14 + IPv4 20 (IPv6 40) + UDP 8 + VXLAN 8.
fn overhead(address: IpAddr) -> u32 {
    if address.is_ipv4() { 50 } else { 70 }
}

/// That `here`, if given, is one of the description's machines and its address is this
/// machine's (a tunnel from an address it does not have sends nothing).
pub(super) fn check_here(topology: &Topology, here: Option<&str>) -> Result<()> {
    let Some(name) = here else { return Ok(()) };
    let names: Vec<_> = topology.machines.iter().map(|m| m.name.as_str()).collect();
    let machine = topology.machine(name).with_context(|| match names.is_empty() {
        true => format!("--machine {name}: {} has no [machines]", topology.file.display()),
        false => format!("--machine {name}: {} has machines {}", topology.file.display(), names.join(", ")),
    })?;
    UdpSocket::bind((machine.address, 0)).with_context(|| {
        format!("--machine {name}: its address {} (line {}) is not on this machine", machine.address, machine.line)
    })?;
    Ok(())
}

/// The end of `link` on machine `here`.
pub(super) fn local_end<'a>(link: &'a Link, topology: &Topology, here: Option<&str>) -> &'a End {
    if topology.runs_on(link.a.node(), here) { &link.a } else { &link.b }
}

/// Creates this machine's end of `link` as a VXLAN device in the switch's namespace.
pub(super) fn add_tunnel(
    link: &Link,
    prefix: &str,
    here: Option<&str>,
    tunnel: &Tunnel,
    topology: &Topology,
) -> Result<()> {
    let end = local_end(link, topology, here);
    let namespace = format!("{prefix}{}", end.node());
    let (vni, port, local, remote) =
        (tunnel.vni.to_string(), tunnel.port.to_string(), tunnel.local.to_string(), tunnel.remote.to_string());
    // `nolearning`: the tunnel has one remote, every frame goes there.
    ip::run(&[
        "link",
        "add",
        end.interface(),
        "netns",
        &namespace,
        "type",
        "vxlan",
        "id",
        &vni,
        "local",
        &local,
        "remote",
        &remote,
        "dstport",
        &port,
        "nolearning",
    ])?;
    warn_small_underlay(link, tunnel);
    links::set_up(topology, link, end, prefix)
}

/// A frame of the link's MTU must cross the machines' network whole: VXLAN sets no DF, so a
/// bigger one is fragmented (slow) or, where a router refuses fragments, lost.
fn warn_small_underlay(link: &Link, tunnel: &Tunnel) {
    let Ok(route) = ip::output(&["route", "get", &tunnel.remote.to_string()]) else { return };
    let Some(device) = ip::word_after(&route, "dev") else { return };
    let Ok(shown) = ip::output(&["-o", "link", "show", "dev", device]) else { return };
    let Some(Ok(mtu)) = ip::word_after(&shown, "mtu").map(str::parse::<u32>) else { return };
    let needed = link.mtu + overhead(tunnel.remote);
    if mtu < needed {
        eprintln!(
            "warning: link {} (MTU {}) is tunnelled over {device} (MTU {mtu}) to {}: frames of {} bytes and more are \
             fragmented; give {device} an MTU of at least {needed}",
            link.name(),
            link.mtu,
            tunnel.remote,
            mtu - overhead(tunnel.remote) + 1,
        );
    }
}
