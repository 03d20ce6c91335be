//! A topology as a run sees it: its switches, hosts and links, the addresses topology.sh
//! gives the hosts, and a planned connection addressed to its receiver. Bringing one up in
//! namespaces is `namespaces.rs`'s; a generated fabric describes itself in `fabric.rs`.

use crate::workload::PlannedConnection;
use anyhow::{Context, Result};
use pfcswitch_hosts::ConnectionSpec;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};

/// A topology's nodes and links, from `topology.sh describe`.
pub(super) struct TopologyDescription {
    pub switches: Vec<String>,
    pub hosts: Vec<String>,
    /// `sw1:p1-h1` (a host link) or `sw1:p6-sw3:p1` (a trunk).
    pub links: Vec<String>,
}

/// Host `hN`'s addresses, as topology.sh assigns them.
pub(super) fn host_addresses(host: &str) -> Result<(EthernetAddress, Ipv4Addr)> {
    let n: u8 = host.strip_prefix('h').and_then(|n| n.parse().ok()).with_context(|| format!("host name `{host}`"))?;
    Ok((EthernetAddress([0x02, 0, 0, 0, 0, n]), Ipv4Addr::new(10, 0, 0, n)))
}

/// The sender's view of a planned connection: its receiver's addresses, on VLAN 1.
pub(super) fn connection_spec(c: &PlannedConnection, hosts: &[String]) -> Result<ConnectionSpec> {
    let (dst, dst_ip) = host_addresses(&hosts[c.receiver])?;
    let priority = Pcp::new(c.priority).with_context(|| format!("priority {} is not a PCP", c.priority))?;
    Ok(ConnectionSpec { id: c.id, dst, dst_ip, priority, vid: 1, rate: c.rate, arrivals: c.arrivals, until: c.until })
}
