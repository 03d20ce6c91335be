//! The description's types: nodes, links and their ends, host addresses.

use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr};
use std::fmt;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// At most this many hosts: their addresses are 02:00:00:00:HH:LL ([`HostAddresses::nth`]).
pub const MAX_HOSTS: usize = 65_534;

/// At most this many hosts on namespaces, where they share the subnet 10.0.0.0/24; larger
/// descriptions (HPCC's 320-host fat-tree) are for the simulator.
pub const NAMESPACE_HOSTS: usize = 254;

/// A topology: its nodes and links, as read from a file and checked.
#[derive(Clone, Debug, PartialEq)]
pub struct Topology {
    /// The file's stem (`star3` for `topologies/star3.toml`).
    pub name: String,
    /// The file it was read from.
    pub file: PathBuf,
    /// One line on what the topology is for.
    pub description: String,
    pub switches: Vec<String>,
    /// In the order that numbers them: the n-th host (from 1) has [`HostAddresses::nth`].
    pub hosts: Vec<String>,
    pub links: Vec<Link>,
    /// Switch ports bound to interfaces that exist already (a NIC, a container's veth).
    pub interfaces: Vec<Interface>,
    /// The machines the fabric spreads over (empty: all on one).
    pub machines: Vec<Machine>,
    pub vxlan: VxlanSettings,
    /// Each switch's pfcswitchd config: one file for every switch, or a directory of
    /// `SWITCH.toml`; absolute (the file names it relative to itself).
    pub configs: Option<PathBuf>,
}

/// One end of a link: a switch's port or a host (whose interface is `eth0`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum End {
    Port { switch: String, port: String },
    Host(String),
}

/// A link. Its first end is a switch port; a host is only ever a second end.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    pub a: End,
    pub b: End,
    pub speed: BitRate,
    /// One way, each direction.
    pub delay: Duration,
    /// The fraction of frames lost, each direction.
    pub loss: f64,
    pub mtu: u32,
    /// Where the file defines it, for errors found later (with the switches' configs).
    pub line: usize,
}

/// A switch port on an interface the user made: `up` moves it into the switch's namespace
/// under the port's name, `down` moves it back under its own. Whatever is at its other end
/// (a machine on the cable, a container) is not the description's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    /// A switch port.
    pub end: End,
    /// The interface's name where `up` runs.
    pub iface: String,
    pub line: usize,
}

/// The IANA port of VXLAN (RFC 7348 §5).
pub const VXLAN_PORT: u16 = 4789;
/// The first VNI when `[vxlan]` sets none: low VNIs are the ones a network's own overlays
/// take first.
pub const FIRST_VNI: u32 = 4096;
/// VNIs are 24 bits.
pub const MAX_VNI: u32 = (1 << 24) - 1;

/// A machine that runs part of the fabric.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Machine {
    pub name: String,
    /// Where the other machines' tunnels reach it, and where its own leave from.
    pub address: IpAddr,
    pub switches: Vec<String>,
    pub line: usize,
}

/// `[vxlan]`: the UDP port and the first VNI of the tunnels between machines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VxlanSettings {
    pub port: u16,
    pub first_vni: u32,
}

impl Default for VxlanSettings {
    fn default() -> VxlanSettings {
        VxlanSettings { port: VXLAN_PORT, first_vni: FIRST_VNI }
    }
}

/// How one machine builds a link with its other end on another machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tunnel {
    pub vni: u32,
    pub port: u16,
    pub local: IpAddr,
    pub remote: IpAddr,
}

/// A host's addresses, from its position in the description.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostAddresses {
    pub mac: EthernetAddress,
    pub ipv4: Ipv4Addr,
    /// `fd00::N`.
    pub ipv6: std::net::Ipv6Addr,
}

impl HostAddresses {
    /// The n-th host's (from 1): 02:00:00:00:HH:LL, 10.0.HH.LL, fd00::N (HH and LL the high
    /// and low bytes of n): 02:00:00:00:00:NN and 10.0.0.N/24 for the 254 a namespace subnet
    /// holds; the simulator's larger fabrics number on.
    pub fn nth(n: u16) -> HostAddresses {
        let [high, low] = n.to_be_bytes();
        HostAddresses {
            mac: EthernetAddress([0x02, 0, 0, 0, high, low]),
            ipv4: Ipv4Addr::new(10, 0, high, low),
            ipv6: std::net::Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, n),
        }
    }
}

impl End {
    /// The node the end belongs to.
    pub fn node(&self) -> &str {
        match self {
            End::Port { switch, .. } => switch,
            End::Host(host) => host,
        }
    }

    /// The interface of the end in its node's namespace.
    pub fn interface(&self) -> &str {
        match self {
            End::Port { port, .. } => port,
            End::Host(_) => "eth0",
        }
    }
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Port { switch, port } => write!(f, "{switch}:{port}"),
            End::Host(host) => f.write_str(host),
        }
    }
}

impl Link {
    /// `sw1:p1-h1`, `sw1:p6-sw3:p1`: the link's name in results and file names.
    pub fn name(&self) -> String {
        format!("{}-{}", self.a, self.b)
    }

    /// Whether `end` (`sw1:p3`, or a host for its link) is one of this link's ends.
    pub fn has_end(&self, end: &str) -> bool {
        self.a.to_string() == end || self.b.to_string() == end
    }

    pub fn is_trunk(&self) -> bool {
        matches!(self.b, End::Port { .. })
    }
}

impl Topology {
    /// The addresses of `host`, from its position among the hosts.
    pub fn host_addresses(&self, host: &str) -> Option<HostAddresses> {
        let index = self.hosts.iter().position(|h| h == host)?;
        Some(HostAddresses::nth(u16::try_from(index + 1).ok()?))
    }

    /// The link with `end` (`sw1:p3`, or a host) at one end.
    pub fn link_at(&self, end: &str) -> Option<&Link> {
        self.links.iter().find(|link| link.has_end(end))
    }

    /// `switch`'s ports with their links, in the order the description lists the links.
    pub fn ports_of<'a>(&'a self, switch: &'a str) -> impl Iterator<Item = (&'a str, &'a Link)> + 'a {
        self.links.iter().filter_map(move |link| {
            [&link.a, &link.b].into_iter().find_map(|end| match end {
                End::Port { switch: s, port } if s == switch => Some((port.as_str(), link)),
                _ => None,
            })
        })
    }

    /// Every link at `speed`, as a scenario's `speed` or `topology up --speed` asks.
    pub fn set_speed(&mut self, speed: BitRate) {
        self.links.iter_mut().for_each(|link| link.speed = speed);
    }

    /// Every link with `mtu`.
    pub fn set_mtu(&mut self, mtu: u32) {
        self.links.iter_mut().for_each(|link| link.mtu = mtu);
    }

    /// The config file of `switch`, if the description names configs.
    pub fn config_of(&self, switch: &str) -> Option<PathBuf> {
        let configs = self.configs.as_ref()?;
        Some(if configs.is_dir() { configs.join(format!("{switch}.toml")) } else { configs.clone() })
    }
}

/// The built-in topologies in `dir`: the stems of its `.toml` files, sorted.
pub fn builtins(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    names.sort();
    names
}
