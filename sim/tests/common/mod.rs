//! Topologies on the virtual clock shared by the core's scenario tests.
#![allow(dead_code)] // each test binary uses its own subset

use pfcswitch_hosts::{Arrivals, ConnectionSpec, FlowSpec, MessageSpec, Transport, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::{Endpoint, Network, SimHost};
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::switch::Switch;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};
use std::time::Duration;

pub fn host_mac(index: usize) -> EthernetAddress {
    EthernetAddress([0x02, 0, 0, 0, 0x01, index as u8 + 1])
}

pub fn pcp(n: u8) -> Pcp {
    Pcp::new(n).unwrap()
}

/// One switch built from `config`; host i on port i at the port's speed, all cables `delay`.
/// Hosts announce themselves at t = 0 so the switch learns every address.
pub fn star(config: &SwitchConfig, delay: Duration) -> Network {
    let mut net = Network::new();
    let (switch, _warnings) = Switch::new(config).expect("valid config");
    net.add_switch(switch);
    for (i, port) in config.ports.iter().enumerate() {
        let mut host = SimHost::new(host_mac(i), Ipv4Addr::new(10, 0, 0, i as u8 + 1), port.speed);
        host.announce();
        net.add_host(host);
        net.connect(Endpoint::host(i), Endpoint::switch(0, i), port.speed, delay);
    }
    net.run_for(Duration::from_micros(100));
    net
}

/// Host `index`'s IPv4 address in [`star`].
pub fn host_ip(index: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, index as u8 + 1)
}

/// A transport in every host of `net` (a [`star`]), set up by `edit`, and a long-lived flow
/// on priority 3 from each host in `senders` to host `receiver`, connection id = sender,
/// for `run` from now.
pub fn transport_incast(
    net: &mut Network,
    senders: &[usize],
    receiver: usize,
    run: Duration,
    edit: impl Fn(&mut TransportConfig),
) {
    let start = net.now();
    for (i, host) in net.hosts.iter_mut().enumerate() {
        let mut transport = TransportConfig::new(host_mac(i), host_ip(i), host.nic.speed());
        transport.long_lived_until = start + run;
        edit(&mut transport);
        host.transport = Some(Transport::new(transport));
    }
    for &sender in senders {
        let messages = vec![MessageSpec { id: 0, size: None, start }];
        net.hosts[sender]
            .transport
            .as_mut()
            .expect("set above")
            .add_connection(connection(sender as u32, receiver), messages);
    }
}

/// Connection `id` to host `receiver` on priority 3, unpaced.
pub fn connection(id: u32, receiver: usize) -> ConnectionSpec {
    ConnectionSpec {
        id,
        dst: host_mac(receiver),
        dst_ip: host_ip(receiver),
        priority: pcp(3),
        vid: 1,
        rate: None,
        arrivals: Arrivals::Constant,
        until: None,
    }
}

/// A flow from its sender's point of view.
pub fn flow(id: u32, to_host: usize, priority: u8, frame_len: usize, frames: u64, start: Instant) -> FlowSpec {
    FlowSpec {
        id,
        dst: host_mac(to_host),
        dst_ip: Ipv4Addr::new(10, 0, 0, to_host as u8 + 1),
        priority: pcp(priority),
        vid: 1,
        frame_len,
        frames,
        start,
        rate: None,
    }
}

/// The §II-A setup on a star: hosts 0 and 1 send line-rate priority-3 traffic into host 2
/// (the congested egress X, flows 0 and 1), host 3 a line-rate victim into idle host 4
/// (flow 3), all with `frame_len`-byte frames from `start`.
pub fn congest_x_beside_victim(net: &mut Network, frame_len: usize, start: Instant) {
    net.hosts[0].add_flow(flow(0, 2, 3, frame_len, u64::MAX, start));
    net.hosts[1].add_flow(flow(1, 2, 3, frame_len, u64::MAX, start));
    net.hosts[3].add_flow(flow(3, 4, 3, frame_len, u64::MAX, start));
}

/// How many `len`-byte frames a link of `rate` carries in `duration`.
pub fn line_rate_frames(duration: Duration, rate: BitRate, len: usize) -> f64 {
    duration.as_secs_f64() * rate.bps() as f64 / wire_bits(1, len) as f64
}

/// Wire bits of `frames` frames of `len` bytes (padding, FCS, preamble, gap).
pub fn wire_bits(frames: u64, len: usize) -> u64 {
    frames * (len.max(60) as u64 + 24) * 8
}

pub fn seconds(duration: Duration) -> f64 {
    duration.as_secs_f64()
}

pub fn gbps(n: u64) -> BitRate {
    BitRate::gbps(n)
}
