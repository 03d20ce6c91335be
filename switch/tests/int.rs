//! INT at egress on virtual time: a RoCEv2 SEND carrying INT-MD gets the switch's record as
//! it leaves, with the values of that instant; frames that cannot be stamped are flagged or
//! passed, and counted by reason.

mod common;

use common::pcp;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::int::{IntConfig, IntQueue};
use pfcswitch_switch::{Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, Framing, IntEgress, IntHop, IntInstructions, IntRepr, ROCEV2_UDP_PORT, VlanRepr,
    apply_int, insert_int, int_of,
};

const HEADROOM: usize = 256;

fn mac(n: u8) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n])
}

/// A RoCEv2 SEND of `len` bytes on priority 3 from host 1 to host 2 with INT-MD for HPCC's
/// fields and room for `hops` records.
fn send_with_int(len: usize, hops: u8) -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: pcp(3), dei: false, vid: 1 });
    let spec = DataFrameSpec { framing: Framing::Rocev2, ..DataFrameSpec::between(mac(1), mac(2), vlan, len) };
    let mut frame = vec![0u8; len + 64];
    let built = pfcswitch_wire::build_data_frame(&mut frame, &spec);
    let source = IntRepr::source(ROCEV2_UDP_PORT, IntInstructions::HPCC, hops);
    let len = insert_int(&mut frame, built, &source, &[]).unwrap();
    frame.truncate(len);
    frame
}

fn ns(n: u64) -> Instant {
    Instant::from_nanos(n)
}

/// Three 100 Gbit/s ports, INT on priority 3; host 2 is behind port 1, host 3 unknown.
fn switch(int: IntConfig, mtu: u32) -> Switch {
    let mut config = SwitchConfig::with_ports("leaf", 3, BitRate::gbps(100));
    config.ports[1].mtu = mtu;
    config.int = int;
    let mut sw = Switch::new(&config).unwrap().0;
    sw.handle_rx(ns(0), 1, 1, &DataFrameSpec::between(mac(2), mac(1), None, 100).to_bytes());
    while sw.poll_tx(ns(0), 0).is_some() {}
    while sw.poll_tx(ns(0), 2).is_some() {}
    sw
}

fn int_on_3() -> IntConfig {
    IntConfig { priorities: vec![3], node_id: Some(42), ..IntConfig::default() }
}

/// What port 1 sends at `now`: each data frame's handle and INT action.
fn sent(sw: &mut Switch, now: Instant) -> Vec<(u64, Option<IntEgress>)> {
    std::iter::from_fn(|| sw.poll_tx(now, 1))
        .filter_map(|tx| match tx {
            Tx::Data { handle, int, .. } => Some((handle, int)),
            Tx::Control(_) => None,
        })
        .collect()
}

#[test]
fn a_record_carries_the_node_the_ports_the_instant_the_queue_behind_and_the_bytes_sent() {
    let mut sw = switch(int_on_3(), 1500);
    let frame = send_with_int(1000, 5);
    let len = frame.len() as u32;
    for handle in 10..13 {
        sw.handle_rx(ns(100), 0, handle, &frame);
    }
    let records: Vec<IntHop> = [ns(200), ns(300), ns(400)]
        .into_iter()
        .flat_map(|now| sent(&mut sw, now))
        .map(|(_, int)| match int {
            Some(IntEgress::Push(hop)) => hop,
            other => panic!("expected a record, got {other:?}"),
        })
        .collect();
    assert_eq!(records.len(), 3, "one frame per instant at 100 Gbit/s: the wire is busy 84 ns per frame");
    let hop_len = IntInstructions::HPCC.hop_len() as u32;
    for (i, hop) in records.iter().enumerate() {
        let i = i as u32;
        assert_eq!(hop.node_id, Some(42));
        assert_eq!(hop.ports, Some((0, 1)));
        assert_eq!(hop.egress_ns, Some(200 + 100 * u64::from(i)));
        // The port's queue after this frame left: the frames behind it.
        assert_eq!(hop.queue, Some((3, (2 - i) * len)));
        // The port's data bytes, this frame and its record included (the learning frame
        // went out of ports 0 and 2 only).
        assert_eq!(hop.tx_bytes, Some((i + 1) * (len + hop_len)));
        assert_eq!(hop.link_mbps, Some(100_000));
    }
    assert_eq!(sw.counters(1).int.stamped, 3);
    assert_eq!(sw.int_node_id(), Some(42));
}

#[test]
fn the_record_goes_into_the_frame_and_the_wire_time_counts_it() {
    let mut sw = switch(int_on_3(), 1500);
    let frame = send_with_int(1000, 5);
    sw.handle_rx(ns(100), 0, 7, &frame);
    let (_, int) = sent(&mut sw, ns(100)).pop().unwrap();
    let mut buffer = vec![0u8; HEADROOM + frame.len()];
    buffer[HEADROOM..].copy_from_slice(&frame);
    let (start, len) = apply_int(&mut buffer, HEADROOM, frame.len(), &int.unwrap()).unwrap();
    let (_, header) = int_of(&buffer[start..start + len]).unwrap();
    assert_eq!((header.hop_count(), header.remaining_hops(), header.hop(0).node_id), (1, 4, Some(42)));
    // The next frame may leave once the stamped one, its 24-byte record, and the preamble,
    // gap and FCS (24 bytes) are on the wire at 100 Gbit/s, less the shaper's 1 ns of
    // credit: later than without the record.
    let ready = |bytes: usize| 100 + ((bytes + 24) as f64 * 8.0 / 100.0).ceil() as u64 - 1;
    let (with_record, without) = (ready(frame.len() + 24), ready(frame.len()));
    assert!(with_record > without);
    sw.handle_rx(ns(100), 0, 8, &frame);
    assert!(sent(&mut sw, ns(with_record - 1)).is_empty());
    assert_eq!(sent(&mut sw, ns(with_record)).len(), 1);
}

#[test]
fn what_cannot_be_stamped_is_flagged_or_passed_and_counted_by_reason() {
    // No hop left: E.
    let mut sw = switch(int_on_3(), 1500);
    sw.handle_rx(ns(100), 0, 1, &send_with_int(1000, 0));
    assert_eq!(sent(&mut sw, ns(100))[0].1, Some(IntEgress::HopLimit));
    assert_eq!(sw.counters(1).int.hop_limit, 1);
    // A record past the egress MTU: M. The packet is 1000 − 18 + 16 = 998 bytes of IP.
    let mut sw = switch(int_on_3(), 1010);
    sw.handle_rx(ns(100), 0, 1, &send_with_int(1000, 5));
    assert_eq!(sent(&mut sw, ns(100))[0].1, Some(IntEgress::Mtu));
    assert_eq!(sw.counters(1).int.mtu, 1);
    // Flooded to an unknown host: not stamped, counted on the first egress that stamps.
    let mut sw = switch(int_on_3(), 1500);
    let mut unknown = send_with_int(1000, 5);
    unknown[5] = 3;
    sw.handle_rx(ns(100), 0, 1, &unknown);
    assert_eq!(sent(&mut sw, ns(100))[0].1, None);
    assert_eq!(sw.counters(1).int.flooded, 1);
    // INT that does not parse: passed as it is.
    let mut broken = send_with_int(1000, 5);
    let (shim, _) = int_of(&broken).unwrap();
    broken[shim + 4] = 0x10; // version 1
    sw.handle_rx(ns(200), 0, 2, &broken);
    assert_eq!(sent(&mut sw, ns(200))[0].1, None);
    assert_eq!(sw.counters(1).int.malformed, 1);
    // Another priority, or a port not listed: nothing, and nothing counted.
    let ports_0_only = IntConfig { ports: vec!["p0".into()], ..int_on_3() };
    let mut sw = switch(ports_0_only, 1500);
    sw.handle_rx(ns(100), 0, 1, &send_with_int(1000, 5));
    assert_eq!(sent(&mut sw, ns(100))[0].1, None);
    assert_eq!(sw.counters(1).int, Default::default());
    // Flooded to ports 1 and 2 of which only 2 stamps: counted on 2, where it is reported.
    let mut sw = switch(IntConfig { ports: vec!["p2".into()], ..int_on_3() }, 1500);
    sw.handle_rx(ns(100), 0, 1, &unknown);
    assert_eq!((sw.counters(1).int.flooded, sw.counters(2).int.flooded), (0, 1));
}

#[test]
fn the_occupancy_is_the_ports_unless_the_config_asks_for_the_frames_queue() {
    for queue in [IntQueue::Port, IntQueue::Priority] {
        let mut sw = switch(IntConfig { queue, ..int_on_3() }, 1500);
        let frame = send_with_int(1000, 5);
        let len = frame.len() as u32;
        let vlan = Some(VlanRepr { pcp: pcp(1), dei: false, vid: 1 });
        let other = DataFrameSpec::between(mac(1), mac(2), vlan, frame.len()).to_bytes();
        for (handle, bytes) in [(1, &frame), (2, &other), (3, &frame), (4, &other)] {
            sw.handle_rx(ns(100), 0, handle, bytes);
        }
        // Whatever the scheduler's order, the first record reports what is still queued.
        let (mut left, mut left_of_3) = (4, 2);
        let hop = (0..4u64)
            .find_map(|i| {
                let (handle, int) = sent(&mut sw, ns(100 + 100 * i)).remove(0);
                left -= 1;
                left_of_3 -= u32::from(handle % 2 == 1);
                match int {
                    Some(IntEgress::Push(hop)) => Some(hop),
                    _ => None,
                }
            })
            .unwrap();
        let expected = match queue {
            IntQueue::Port => left * len,
            IntQueue::Priority => left_of_3 * len,
        };
        assert_eq!(hop.queue, Some((3, expected)), "{queue:?}");
    }
}

#[test]
fn a_bad_int_section_is_refused_with_its_key() {
    let mut config = SwitchConfig::with_ports("leaf", 2, BitRate::gbps(100));
    config.int = IntConfig { priorities: vec![9], ..IntConfig::default() };
    assert_eq!(Switch::new(&config).unwrap_err().key, "int.priorities");
    config.int = IntConfig { priorities: vec![3], ports: vec!["uplink".into()], ..IntConfig::default() };
    let error = Switch::new(&config).unwrap_err();
    assert_eq!((error.key.as_str(), error.reason.as_str()), ("int.ports", "no port `uplink` in the configuration"));
}
