//! Messages over go-back-N connections through a core switch on the virtual clock: lossless
//! under PFC, complete (with recovery) without it, and a long flow at line rate.

mod common;

use common::{host_mac, pcp, star};
use pfcswitch_hosts::{Arrivals, ConnectionSpec, MessageSpec, Transport, TransportConfig};
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_sim::Network;
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use pfcswitch_wire::Ipv4Addr;
use std::time::Duration;

fn ip(host: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 0, host as u8 + 1)
}

fn with_transports(net: &mut Network) {
    for (i, host) in net.hosts.iter_mut().enumerate() {
        host.transport = Some(Transport::new(TransportConfig::new(host_mac(i), ip(i), host.nic.speed())));
    }
}

fn connect(net: &mut Network, id: u32, from: usize, to: usize, messages: Vec<MessageSpec>) {
    let spec = ConnectionSpec {
        id,
        dst: host_mac(to),
        dst_ip: ip(to),
        priority: pcp(3),
        vid: 1,
        rate: None,
        arrivals: Arrivals::Constant,
        until: None,
    };
    net.hosts[from].transport.as_mut().unwrap().add_connection(spec, messages);
}

/// Four senders each send 20 messages of 64 KB at once to host 4 at 1 Gbit/s.
fn incast(policy: PolicyKind, egress_max: ByteSize) -> Network {
    let mut config = SwitchConfig::with_ports("t", 5, BitRate::gbps(1));
    config.policy.kind = policy;
    config.buffer.egress_max = Some(egress_max);
    let mut net = star(&config, Duration::from_micros(1));
    with_transports(&mut net);
    let start = net.now();
    for sender in 0..4 {
        let messages = (0..20).map(|id| MessageSpec { id, size: Some(64_000), start }).collect();
        connect(&mut net, sender as u32, sender, 4, messages);
    }
    net.run_for(Duration::from_secs(3));
    net
}

fn totals(net: &Network) -> (u64, u64, u64, usize) {
    let (mut retransmitted, mut timeouts, mut drops, mut unfinished) = (0, 0, 0, 0);
    for host in &net.hosts {
        let transport = host.transport.as_ref().unwrap();
        for (_, stats) in transport.sender_stats() {
            retransmitted += stats.retransmitted;
            timeouts += stats.timeouts;
        }
        unfinished += transport.messages().filter(|m| m.finish.is_none()).count();
    }
    for port in 0..net.switches[0].port_count() {
        drops += net.switches[0].counters(port).priority[3].total_drops();
    }
    (retransmitted, timeouts, drops, unfinished)
}

#[test]
fn incast_under_pfc_completes_every_message_without_a_retransmission() {
    let net = incast(PolicyKind::Pfc, ByteSize(400_000));
    assert_eq!(totals(&net), (0, 0, 0, 0));
    let receiver = net.hosts[4].transport.as_ref().unwrap();
    let delivered: u64 = receiver.receiver_stats().map(|(_, s)| s.bytes).sum();
    assert_eq!(delivered, 4 * 20 * 64_000);
    assert!(receiver.receiver_stats().all(|(_, s)| s.out_of_order == 0 && s.messages == 20));
}

#[test]
fn incast_without_pfc_drops_and_go_back_n_still_completes_every_message() {
    let lossless = incast(PolicyKind::Pfc, ByteSize(400_000));
    let lossy = incast(PolicyKind::None, ByteSize(30_000));
    let (retransmitted, _, drops, unfinished) = totals(&lossy);
    assert!(drops > 0 && retransmitted > 0, "drops {drops}, retransmitted {retransmitted}");
    assert_eq!(unfinished, 0);
    let receiver = lossy.hosts[4].transport.as_ref().unwrap();
    assert_eq!(receiver.receiver_stats().map(|(_, s)| s.bytes).sum::<u64>(), 4 * 20 * 64_000);
    // Recovery costs time: the last message finishes later than on the lossless run.
    let last = |net: &Network| {
        net.hosts.iter().flat_map(|h| h.transport.as_ref().unwrap().messages()).filter_map(|m| m.fct()).max().unwrap()
    };
    assert!(last(&lossy) > last(&lossless), "{:?} vs {:?}", last(&lossy), last(&lossless));
}

#[test]
fn a_long_flow_fills_the_link() {
    for speed in [BitRate::mbps(100), BitRate::gbps(1)] {
        let config = SwitchConfig::with_ports("t", 2, speed);
        let mut net = star(&config, Duration::from_micros(1));
        with_transports(&mut net);
        let start = net.now();
        connect(&mut net, 0, 0, 1, vec![MessageSpec { id: 0, size: None, start }]);
        net.run_until(start + Duration::from_secs(1));
        let (_, stats) = net.hosts[1].transport.as_ref().unwrap().receiver_stats().next().unwrap();
        let span = stats.last_rx.unwrap() - stats.first_rx.unwrap();
        let wire_bits = (stats.frame_bytes + 24 * stats.segments) * 8;
        let utilisation = wire_bits as f64 / (speed.bps() as f64 * span.as_secs_f64());
        assert!(utilisation > 0.99, "{speed}: {utilisation}");
    }
}
