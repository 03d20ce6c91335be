//! The endpoints' IPv4 + UDP + traffic header stack: parse never panics, checksum checks
//! never panic, and a parsed traffic header re-emits to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{Ipv4Packet, Ipv4Repr, TrafficHeader, TrafficRepr, UdpPacket, UdpRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(ip_packet) = Ipv4Packet::new_checked(data) else { return };
    let _ = ip_packet.checksum_valid();
    let Ok(ip) = Ipv4Repr::parse(&ip_packet) else { return };
    let Ok(udp_packet) = UdpPacket::new_checked(ip_packet.payload()) else { return };
    let _ = udp_packet.checksum_valid(ip.src, ip.dst);
    let Ok(_udp) = UdpRepr::parse(&udp_packet) else { return };
    let Ok(header) = TrafficHeader::new_checked(udp_packet.payload()) else { return };
    let Ok(traffic) = TrafficRepr::parse(&header) else { return };
    let mut out = [0u8; 32];
    traffic.emit(&mut TrafficHeader::new_unchecked(&mut out[..]));
    assert_eq!(&out[..], &udp_packet.payload()[..32]);
});
