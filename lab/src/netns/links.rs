//! A link as veth pairs: one pair between its ends, or two through a tap namespace.

use super::ip;
use anyhow::Result;
use pfcswitch_topology::{End, Link, Topology};

/// Builds `link` between namespaces that exist, through its tap namespace if `tapped`.
pub(super) fn add(topology: &Topology, link: &Link, prefix: &str, tapped: bool) -> Result<()> {
    let (a_ns, b_ns) = (format!("{prefix}{}", link.a.node()), format!("{prefix}{}", link.b.node()));
    let (a_if, b_if) = (link.a.interface(), link.b.interface());
    if tapped {
        let tap = tap_of(link, prefix);
        ip::namespace_add(&tap)?;
        // The tap only passes frames on: no address, no neighbour discovery of its own.
        ip::exec(&tap, &["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", "net.ipv6.conf.all.disable_ipv6=1"])?;
        ip::run(&["link", "add", a_if, "netns", &a_ns, "type", "veth", "peer", "name", "end-a", "netns", &tap])?;
        ip::run(&["link", "add", b_if, "netns", &b_ns, "type", "veth", "peer", "name", "end-b", "netns", &tap])?;
        for (from, to) in [("end-a", "end-b"), ("end-b", "end-a")] {
            // Frames cross as they came: VLAN tags stay in the frame (a tag the kernel lifted
            // into metadata would reach the switch's XDP program untagged, priority 0).
            no_offloads(&tap, from, &["rxvlan", "txvlan", "tx", "tso", "gso", "gro"])?;
            ip::run(&["-n", &tap, "link", "set", "dev", from, "mtu", &link.mtu.to_string(), "up"])?;
            ip::exec(&tap, &["tc", "qdisc", "add", "dev", from, "ingress"])?;
            ip::exec(
                &tap,
                &[
                    "tc", "filter", "add", "dev", from, "parent", "ffff:", "protocol", "all", "u32", "match", "u32",
                    "0", "0", "action", "mirred", "egress", "redirect", "dev", to,
                ],
            )?;
        }
    } else {
        ip::run(&["link", "add", a_if, "netns", &a_ns, "type", "veth", "peer", "name", b_if, "netns", &b_ns])?;
    }
    for end in [&link.a, &link.b] {
        set_up(topology, link, end, prefix)?;
    }
    Ok(())
}

/// Sets `end` of `link` up in its namespace at the link's MTU: a port without IPv6 (the
/// switch sends nothing of its own there), a host with its addresses and offloads off.
pub(super) fn set_up(topology: &Topology, link: &Link, end: &End, prefix: &str) -> Result<()> {
    let namespace = format!("{prefix}{}", end.node());
    let mtu = link.mtu.to_string();
    match end {
        End::Port { port, .. } => {
            ip::exec(&namespace, &["sysctl", "-qw", &format!("net.ipv6.conf.{port}.disable_ipv6=1")])?;
            ip::run(&["-n", &namespace, "link", "set", port, "mtu", &mtu, "up"])
        }
        End::Host(host) => {
            let addresses = topology.host_addresses(host).expect("a checked description's host");
            ip::run(&["-n", &namespace, "link", "set", "eth0", "address", &addresses.mac.to_string()])?;
            ip::run(&["-n", &namespace, "addr", "add", &format!("{}/24", addresses.ipv4), "dev", "eth0"])?;
            ip::run(&[
                "-n",
                &namespace,
                "-6",
                "addr",
                "add",
                &format!("{}/64", addresses.ipv6),
                "dev",
                "eth0",
                "nodad",
            ])?;
            no_offloads(&namespace, "eth0", &["txvlan", "tx", "tso", "gso"])?;
            ip::run(&["-n", &namespace, "link", "set", "eth0", "mtu", &mtu, "up"])
        }
    }
}

fn no_offloads(namespace: &str, interface: &str, features: &[&str]) -> Result<()> {
    let mut args = vec!["ethtool", "-K", interface];
    args.extend(features.iter().flat_map(|feature| [*feature, "off"]));
    ip::exec(namespace, &args)
}

/// The tap namespace of `link`, named after its first end: `PREFIXtap-sw1-p3`. Its interface
/// `end-a` leads to that end, `end-b` to the other, and tc mirred passes every frame across
/// unchanged: tcpdump on end-a there sees both directions, which taps at the ends cannot (a
/// switch port's and an AF_XDP endpoint's frames never pass the kernel's taps).
pub fn tap_of(link: &Link, prefix: &str) -> String {
    format!("{prefix}tap-{}-{}", link.a.node(), link.a.interface())
}
