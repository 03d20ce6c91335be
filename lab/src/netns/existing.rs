//! Switch ports on interfaces the user made (`[interfaces]`: a NIC, a container's veth):
//! moved into the switch's namespace under the port's name for the run, and back under their
//! own name before the namespace goes (deleting a namespace destroys the veths inside it, and
//! returns a NIC only to the machine's first namespace).

use super::ip;
use anyhow::{Result, bail};
use pfcswitch_topology::{Interface, Topology};

/// Features that would hand the switch frames unlike the wire's: a VLAN tag lifted into
/// metadata reaches the XDP classifier untagged (priority 0), and GRO/LRO merge frames into
/// super-frames the switch would forward as one. Fixed features stay as they are.
const OFFLOADS_OFF: [&str; 4] = ["rxvlan", "txvlan", "gro", "lro"];

fn namespace_and_port<'a>(prefix: &str, interface: &'a Interface) -> (String, &'a str) {
    (format!("{prefix}{}", interface.end.node()), interface.end.interface())
}

/// Moves `interface` into its switch's namespace as the port, offloads off, up.
pub(super) fn bind(topology: &Topology, prefix: &str, interface: &Interface) -> Result<()> {
    let (namespace, port) = namespace_and_port(prefix, interface);
    let iface = interface.iface.as_str();
    // Asked over netlink: /sys shows the namespace it was mounted in, which need not be ours.
    if ip::run(&["link", "show", "dev", iface]).is_err() {
        bail!(
            "{}:{}: interface `{iface}` (for {}) does not exist in this network namespace",
            topology.file.display(),
            interface.line,
            interface.end
        );
    }
    ip::run(&["link", "set", "dev", iface, "netns", &namespace])?;
    ip::run(&["-n", &namespace, "link", "set", "dev", iface, "name", port])?;
    for feature in OFFLOADS_OFF {
        // One at a time: a driver that cannot change one still turns the others off.
        if ip::exec(&namespace, &["ethtool", "-K", port, feature, "off"]).is_err() {
            eprintln!("warning: {iface} ({}): cannot turn {feature} off; see docs/topology.md", interface.end);
        }
    }
    ip::run(&["-n", &namespace, "link", "set", "dev", port, "up"])
}

/// Moves `interface` back under its own name into the namespace of this process, if it is
/// still in its switch's namespace.
pub(super) fn release(prefix: &str, interface: &Interface) -> Result<()> {
    let (namespace, port) = namespace_and_port(prefix, interface);
    if ip::run(&["-n", &namespace, "link", "show", "dev", port]).is_err() {
        return Ok(());
    }
    ip::run(&["-n", &namespace, "link", "set", "dev", port, "down"])?;
    ip::run(&["-n", &namespace, "link", "set", "dev", port, "name", &interface.iface])?;
    ip::run(&["-n", &namespace, "link", "set", "dev", &interface.iface, "netns", &std::process::id().to_string()])
}
