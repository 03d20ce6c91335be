//! The addresses a topology gives its hosts, and a planned connection addressed to its
//! receiver. A run carries the topology's description itself (`pfcswitch_topology::Topology`);
//! bringing one up in namespaces is `namespaces.rs`'s; a generated fabric describes itself in
//! `fabric.rs`.

use crate::workload::PlannedConnection;
use anyhow::{Context, Result};
use pfcswitch_hosts::ConnectionSpec;
use pfcswitch_topology::HostAddresses;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};

/// The addresses of the host at `index` of the topology's hosts (the n-th from 1 has
/// 02:00:00:00:00:NN and 10.0.0.N up to 254, as `pfcswitch_topology` numbers them, whatever
/// its name; the simulator's larger fabrics number on to 65,534).
pub(super) fn nth_host(index: usize) -> Result<(EthernetAddress, Ipv4Addr)> {
    let n = u16::try_from(index + 1)
        .ok()
        .filter(|&n| n < u16::MAX)
        .with_context(|| format!("host {} of at most 65534", index + 1))?;
    let addresses = HostAddresses::nth(n);
    Ok((addresses.mac, addresses.ipv4))
}

/// The addresses of `host`, one of `hosts`.
pub(super) fn host_addresses(hosts: &[String], host: &str) -> Result<(EthernetAddress, Ipv4Addr)> {
    nth_host(hosts.iter().position(|h| h == host).with_context(|| format!("no host `{host}` in the topology"))?)
}

/// The sender's view of a planned connection: its receiver's addresses, on VLAN 1.
pub(super) fn connection_spec(c: &PlannedConnection) -> Result<ConnectionSpec> {
    let (dst, dst_ip) = nth_host(c.receiver)?;
    let priority = Pcp::new(c.priority).with_context(|| format!("priority {} is not a PCP", c.priority))?;
    Ok(ConnectionSpec { id: c.id, dst, dst_ip, priority, vid: 1, rate: c.rate, arrivals: c.arrivals, until: c.until })
}
