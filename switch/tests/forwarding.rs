//! Forwarding decisions of the switch, driven directly: learning, flooding, filtering,
//! link-local and malformed frames, classification, and the handle protocol.

use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize, PacketRate};
use pfcswitch_switch::config::{StaticEntry, StaticPorts, SwitchConfig, Trust};
use pfcswitch_switch::counters::DropReason;
use pfcswitch_switch::{RxVerdict, Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, Error, ErrorKind, EthernetAddress, Layer, MacControlRepr, PAUSE_MULTICAST, Pcp, PfcRepr, VlanRepr,
    build_mac_control_frame,
};

fn mac(n: u8) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n])
}

fn frame(src: EthernetAddress, dst: EthernetAddress, pcp: Option<u8>, dscp: u8) -> Vec<u8> {
    let vlan = pcp.map(|p| VlanRepr { pcp: Pcp::new(p).unwrap(), dei: false, vid: 1 });
    DataFrameSpec { dscp, ..DataFrameSpec::between(src, dst, vlan, 100) }.to_bytes()
}

fn switch(ports: usize) -> Switch {
    Switch::new(&SwitchConfig::with_ports("fwd", ports, BitRate::gbps(1))).unwrap().0
}

/// Everything the switch sends at `now`: (port, handle, last) for data frames.
fn drain(switch: &mut Switch, now: Instant) -> Vec<(usize, u64, bool)> {
    let mut sent = Vec::new();
    for port in 0..switch.port_count() {
        while let Some(tx) = switch.poll_tx(now, port) {
            if let Tx::Data { handle, last, .. } = tx {
                sent.push((port, handle, last));
            }
        }
    }
    sent
}

const T0: Instant = Instant::ZERO;

#[test]
fn unknown_unicast_floods_then_learned_addresses_go_to_one_port() {
    let mut sw = switch(4);
    assert_eq!(sw.handle_rx(T0, 0, 100, &frame(mac(1), mac(2), Some(0), 0)), RxVerdict::Accepted);
    let flooded = drain(&mut sw, T0);
    assert_eq!(flooded.iter().map(|s| s.0).collect::<Vec<_>>(), vec![1, 2, 3], "flooded to every other port");
    assert_eq!(flooded.iter().filter(|s| s.2).count(), 1, "only the last copy frees the buffer");
    assert!(flooded.iter().all(|s| s.1 == 100), "the same handle: no copy of the payload");

    sw.handle_rx(T0, 2, 101, &frame(mac(2), mac(1), Some(0), 0));
    assert_eq!(drain(&mut sw, Instant::from_nanos(1_000_000)), vec![(0, 101, true)], "mac(1) was learned on port 0");
    assert_eq!(sw.fdb_entries(Instant::from_nanos(1_000_000)).len(), 2);
}

/// A leaf: hosts on p0 and p1, uplinks p2 and p3 to two spines. Remote host mac(9) is
/// behind both uplinks (an ECMP group); the uplinks learn nothing and only p2 floods.
fn leaf() -> Switch {
    let mut config = SwitchConfig::with_ports("leaf", 4, BitRate::gbps(1));
    config
        .fdb
        .static_entries
        .push(StaticEntry { mac: mac(9).to_string(), port: StaticPorts::Group(vec!["p2".into(), "p3".into()]) });
    config.ports[2].learning = false;
    config.ports[3].learning = false;
    config.ports[3].flooding = false;
    Switch::new(&config).unwrap().0
}

#[test]
fn ecmp_keeps_each_flow_on_one_uplink_and_spreads_flows_over_both() {
    let mut sw = leaf();
    let mut uplink_of_flow = Vec::new();
    for round in 0..3u64 {
        for flow in 0..32u16 {
            let bytes = DataFrameSpec { src_port: 40_000 + flow, ..DataFrameSpec::between(mac(1), mac(9), None, 100) };
            let handle = round * 100 + u64::from(flow);
            // 10 µs apart: each uplink's shaper has sent the previous frame.
            let now = Instant::from_nanos(10_000 * (round * 32 + u64::from(flow)));
            sw.handle_rx(now, 0, handle, &bytes.to_bytes());
            let sent = drain(&mut sw, now);
            assert_eq!(sent.len(), 1, "one copy, on one uplink: {sent:?}");
            if round == 0 {
                uplink_of_flow.push(sent[0].0);
            } else {
                assert_eq!(sent[0].0, uplink_of_flow[usize::from(flow)], "flow {flow} never changes path");
            }
        }
    }
    let on_p2 = uplink_of_flow.iter().filter(|&&port| port == 2).count();
    assert!(uplink_of_flow.iter().all(|&port| port == 2 || port == 3));
    assert!((8..=24).contains(&on_p2), "32 flows spread over both uplinks: {on_p2} on p2");
}

/// The leaf with `fdb.default_route` over both uplinks and no entry for remote hosts.
#[test]
fn the_default_route_takes_unknown_unicast_over_its_group_while_broadcasts_still_flood() {
    let mut config = SwitchConfig::with_ports("leaf", 4, BitRate::gbps(1));
    config.fdb.default_route = Some(StaticPorts::Group(vec!["p2".into(), "p3".into()]));
    let mut sw = Switch::new(&config).unwrap().0;
    let mut uplinks = std::collections::BTreeSet::new();
    for flow in 0..16u16 {
        let bytes = DataFrameSpec { src_port: 40_000 + flow, ..DataFrameSpec::between(mac(1), mac(9), None, 100) };
        let now = Instant::from_nanos(10_000 * u64::from(flow));
        sw.handle_rx(now, 0, u64::from(flow), &bytes.to_bytes());
        let sent = drain(&mut sw, now);
        assert_eq!(sent.len(), 1, "one copy, not a flood: {sent:?}");
        uplinks.insert(sent[0].0);
    }
    assert_eq!(uplinks.into_iter().collect::<Vec<_>>(), [2, 3], "flows spread over the group");
    let later = Instant::from_nanos(1_000_000);
    sw.handle_rx(later, 0, 99, &frame(mac(1), EthernetAddress::BROADCAST, None, 0));
    assert_eq!(drain(&mut sw, later).iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3], "a broadcast floods");
    let report = pfcswitch_switch::report::Snapshot::of(&sw, &config, later, 0.0);
    let default = report.fdb.iter().find(|entry| entry.mac == "default").expect("listed");
    assert_eq!(default.port, "p2,p3");

    config.fdb.default_route = Some(StaticPorts::One("p9".into()));
    let Err(error) = Switch::new(&config) else { panic!("a default route to no port is refused") };
    assert_eq!((error.key.as_str(), error.reason.as_str()), ("fdb.default_route", "no port named `p9`"));
}

#[test]
fn uplinks_without_learning_and_flooding_learn_nothing_and_get_no_floods() {
    let mut sw = leaf();
    sw.handle_rx(T0, 2, 1, &frame(mac(7), mac(1), None, 0));
    assert_eq!(drain(&mut sw, T0).iter().map(|s| s.0).collect::<Vec<_>>(), vec![0, 1], "flooded to the hosts only");
    assert!(sw.fdb_entries(T0).iter().all(|entry| entry.mac != mac(7)), "an address seen on an uplink is not learned");
    let later = Instant::from_nanos(10_000);
    sw.handle_rx(later, 0, 2, &frame(mac(1), mac(8), None, 0));
    assert_eq!(drain(&mut sw, later).iter().map(|s| s.0).collect::<Vec<_>>(), vec![1, 2], "p3 floods nothing");
    let later = Instant::from_nanos(20_000);
    sw.handle_rx(later, 1, 3, &frame(mac(2), mac(1), None, 0));
    assert_eq!(drain(&mut sw, later), vec![(0, 3, true)], "hosts' ports still learn");
}

#[test]
fn frames_back_to_their_own_port_and_link_local_frames_are_dropped() {
    let mut sw = switch(3);
    sw.handle_rx(T0, 0, 1, &frame(mac(1), mac(9), Some(0), 0));
    drain(&mut sw, T0);
    let verdict = sw.handle_rx(T0, 0, 2, &frame(mac(2), mac(1), Some(0), 0));
    assert_eq!(verdict, RxVerdict::Consumed);
    assert_eq!(sw.counters(0).priority[0].drops(DropReason::Filtered), 1);
    let lldp = frame(mac(3), EthernetAddress([0x01, 0x80, 0xC2, 0, 0, 0x0E]), None, 0);
    assert_eq!(sw.handle_rx(T0, 1, 3, &lldp), RxVerdict::Consumed);
    assert_eq!(sw.counters(1).priority[0].drops(DropReason::LinkLocal), 1);
    assert!(drain(&mut sw, Instant::from_nanos(1_000_000)).is_empty(), "nothing forwarded");
}

#[test]
fn malformed_frames_are_counted_by_reason_and_forwarding_goes_on() {
    let mut sw = switch(2);
    let mut pfc = vec![0u8; 60];
    build_mac_control_frame(
        &mut pfc,
        mac(1),
        PAUSE_MULTICAST,
        &MacControlRepr::Pfc(PfcRepr::default().with_class(Pcp::new(3).unwrap(), 5)),
    );
    let mut truncated_pfc = pfc.clone();
    truncated_pfc.truncate(24);
    let mut unknown_opcode = pfc.clone();
    unknown_opcode[15] = 0x02;
    let mut reserved = pfc.clone();
    reserved[16] = 0x80;
    let mut truncated_tag = frame(mac(1), mac(2), Some(3), 0);
    truncated_tag.truncate(16);
    for bad in [&pfc[..10], &unknown_opcode, &reserved, &truncated_tag] {
        assert_eq!(sw.handle_rx(T0, 0, 7, bad), RxVerdict::Consumed);
    }
    let counters = sw.counters(0);
    for (layer, kind) in [
        (Layer::Ethernet, ErrorKind::Truncated),
        (Layer::MacControl, ErrorKind::UnknownOpcode),
        (Layer::MacControl, ErrorKind::ReservedBits),
        (Layer::Vlan, ErrorKind::Truncated),
    ] {
        assert_eq!(counters.malformed(Error::new(layer, kind)), 1, "{layer:?} {kind:?}");
    }
    assert_eq!(counters.total_malformed(), 4);
    // Shorter than 60 bytes, a PFC frame is read as a NIC would have padded it (tests/short_mac_control.rs).
    assert_eq!(sw.handle_rx(T0, 0, 7, &truncated_pfc), RxVerdict::Consumed);
    let counters = sw.counters(0);
    assert_eq!((counters.short_mac_control, counters.priority[3].pfc_rx, counters.total_malformed()), (1, 1, 4));
    assert!(drain(&mut sw, T0).is_empty(), "never forwarded");
    sw.handle_rx(T0, 0, 8, &frame(mac(1), mac(2), Some(3), 0));
    assert_eq!(drain(&mut sw, T0), vec![(1, 8, true)], "forwarding goes on");
}

#[test]
fn classification_by_pcp_default_priority_and_dscp() {
    let mut config = SwitchConfig::with_ports("cls", 3, BitRate::gbps(1));
    config.ports[0].default_priority = 2;
    config.ports[1].trust = Trust::Dscp;
    let (mut sw, _) = Switch::new(&config).unwrap();
    sw.handle_rx(T0, 0, 1, &frame(mac(1), mac(9), Some(5), 46));
    sw.handle_rx(T0, 0, 2, &frame(mac(1), mac(9), None, 46));
    sw.handle_rx(T0, 1, 3, &frame(mac(2), mac(9), None, 46));
    sw.handle_rx(T0, 1, 4, &frame(mac(2), mac(9), Some(1), 46));
    let rx = |port: usize, p: usize| sw.counters(port).priority[p].rx_frames;
    assert_eq!((rx(0, 5), rx(0, 2)), (1, 1), "PCP, then the port default");
    assert_eq!((rx(1, 5), rx(1, 1)), (1, 1), "DSCP 46 → class selector 5; the tag wins");
}

/// A two-port switch whose lossy egress queues hold 250 bytes (two of the frames below),
/// with `rate` on its pipeline, and port 1's host learned.
fn two_ports_with_small_lossy_queues(rate: Option<PacketRate>) -> Switch {
    let mut config = SwitchConfig::with_ports("full", 2, BitRate::gbps(1));
    config.pfc.lossless = vec![];
    config.buffer.egress_max = Some(ByteSize(250));
    config.pipeline.rate = rate;
    let (mut sw, _) = Switch::new(&config).unwrap();
    sw.handle_rx(T0, 1, 0, &frame(mac(2), mac(1), Some(0), 0));
    drain(&mut sw, T0);
    sw
}

#[test]
fn a_full_lossy_egress_refuses_frames_on_arrival_and_counts_every_one() {
    let mut sw = two_ports_with_small_lossy_queues(None);
    let p0 = Pcp::new(0).unwrap();
    assert_eq!(sw.handle_rx(T0, 0, 10, &frame(mac(1), mac(2), Some(0), 0)), RxVerdict::Accepted);
    assert_eq!(sw.handle_rx(T0, 0, 11, &frame(mac(1), mac(2), Some(0), 0)), RxVerdict::Accepted);
    for handle in 12..1012 {
        let verdict = sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(2), Some(0), 0));
        assert_eq!(verdict, RxVerdict::Consumed, "frame {handle} does not fit: its buffer is the caller's at once");
    }
    assert_eq!(sw.poll_free(), None, "no frame was held to be handed back");
    assert_eq!(sw.frames_held(), 2);
    let (ingress, egress) = (sw.counters(0).priority[0], sw.counters(1).priority[0]);
    assert_eq!((ingress.rx_frames, ingress.forwarded, ingress.rx_dropped), (1002, 1002, 0));
    assert_eq!(egress.drops(DropReason::EgressFull), 1000, "every refused frame counted at p1's egress");
    assert_eq!(egress.assigned, 1002);
    let sent: usize = (1..=3).map(|ms| drain(&mut sw, T0 + std::time::Duration::from_millis(ms)).len()).sum();
    assert_eq!(sent, 2, "the two frames the queue kept go out");
    assert!(sw.ledger(0, p0).balanced() && sw.ledger(1, p0).balanced(), "{:?}", sw.ledger(1, p0));
    assert_eq!(sw.handle_rx(T0, 0, 2000, &frame(mac(1), mac(2), Some(0), 0)), RxVerdict::Accepted, "room again");
}

#[test]
fn a_full_egress_behind_a_paced_pipeline_hands_the_buffer_back() {
    // A paced pipeline decides later, when the frame's turn comes: the long way.
    let mut sw = two_ports_with_small_lossy_queues(PacketRate::from_pps(1_000_000));
    for handle in 10..13 {
        assert_eq!(sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(2), Some(0), 0)), RxVerdict::Accepted);
    }
    for slot in 1..=3 {
        sw.handle_timeout(T0 + std::time::Duration::from_micros(10 * slot));
    }
    assert_eq!(sw.poll_free(), Some(12), "the third 100-byte frame did not fit in 250 bytes");
    assert_eq!(sw.poll_free(), None);
    assert_eq!(sw.counters(1).priority[0].drops(DropReason::EgressFull), 1);
    assert_eq!(sw.frames_held(), 2);
}

/// Three ports in shared buffer mode (reserve 200 B, queue cap 300 B, port cap and pool
/// 1000 B) with `lossless` priorities, mac(2) learned on port 1 and mac(3) on port 2.
fn shared_buffer_switch(lossless: Vec<u8>) -> Switch {
    use pfcswitch_switch::config::BufferMode;
    let mut config = SwitchConfig::with_ports("shared", 3, BitRate::gbps(1));
    config.pfc.lossless = lossless;
    config.buffer.mode = BufferMode::Shared;
    config.buffer.reserve = Some(ByteSize(200));
    config.buffer.queue_cap = Some(ByteSize(300));
    config.buffer.port_cap = Some(ByteSize(1000));
    config.buffer.pool = Some(ByteSize(1000));
    let (mut sw, _) = Switch::new(&config).unwrap();
    sw.handle_rx(T0, 1, 0, &frame(mac(2), mac(1), Some(0), 0));
    sw.handle_rx(T0, 2, 0, &frame(mac(3), mac(1), Some(0), 0));
    drain(&mut sw, T0);
    sw
}

#[test]
fn shared_buffer_mode_lends_the_pool_within_queue_caps() {
    let mut sw = shared_buffer_switch(vec![]);
    // Queue (port 1, priority 0) holds 200 reserved + 300 shared bytes: five 100-byte frames.
    for handle in 1..=6 {
        sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(2), Some(0), 0));
    }
    assert_eq!(sw.queue_state(T0, 1, Pcp::new(0).unwrap()).egress.bytes, 500);
    assert_eq!(sw.counters(1).priority[0].drops(DropReason::EgressFull), 1, "the sixth exceeds reserve + queue cap");
    // Another queue still borrows from the pool.
    sw.handle_rx(T0, 0, 7, &frame(mac(1), mac(3), Some(1), 0));
    assert_eq!(sw.queue_state(T0, 2, Pcp::new(1).unwrap()).egress.bytes, 100);
}

#[test]
fn shared_buffer_mode_keeps_unbounded_lossless_queues_out_of_the_pool() {
    let mut sw = shared_buffer_switch(vec![3]);
    // 1000 B of lossless backlog on port 1, far above its reserve: its memory is the
    // lossless ingress limits (802.1Qbb as deployed), not the shared pool.
    for handle in 1..=10 {
        assert_eq!(sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(2), Some(3), 0)), RxVerdict::Accepted);
    }
    assert_eq!(sw.queue_state(T0, 1, Pcp::new(3).unwrap()).egress.bytes, 1000);
    // So a lossy queue still borrows its whole cap from the pool: 200 reserved + 300 shared.
    for handle in 11..=16 {
        sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(3), Some(0), 0));
    }
    assert_eq!(sw.queue_state(T0, 2, Pcp::new(0).unwrap()).egress.bytes, 500);
    assert_eq!(sw.counters(2).priority[0].drops(DropReason::EgressFull), 1, "only the sixth exceeds the cap");
}

#[test]
fn reconfigure_applies_thresholds_at_once_and_keeps_every_frame() {
    let mut config = SwitchConfig::with_ports("reload", 2, BitRate::gbps(1));
    config.buffer.egress_max = Some(ByteSize(100_000));
    let (mut sw, _) = Switch::new(&config).unwrap();
    sw.handle_rx(T0, 1, 0, &frame(mac(2), mac(1), Some(3), 0));
    drain(&mut sw, T0);
    // 30 frames of 100 B wait on port 1's paused class 3: 3000 B at ingress 0, below XOFF.
    sw.handle_rx(T0, 1, 1, &{
        let mut pfc = vec![0u8; 60];
        build_mac_control_frame(
            &mut pfc,
            mac(2),
            PAUSE_MULTICAST,
            &MacControlRepr::Pfc(PfcRepr::default().with_class(Pcp::new(3).unwrap(), 65535)),
        );
        pfc
    });
    for handle in 10..40 {
        sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(2), Some(3), 0));
    }
    let p3 = Pcp::new(3).unwrap();
    assert!(!sw.queue_state(T0, 0, p3).pausing_peer);

    let mut lower = config.clone();
    lower.pfc.xoff = ByteSize(2_000);
    lower.pfc.xon = ByteSize(1_000);
    lower.pfc.max = Some(ByteSize(10_000));
    sw.reconfigure(T0, &config, &lower).unwrap();
    assert!(sw.queue_state(T0, 0, p3).pausing_peer, "3000 B now exceeds the new XOFF");
    let later = Instant::from_nanos(1_000_000);
    assert!(matches!(sw.poll_tx(later, 0), Some(Tx::Control(_))), "the XOFF goes out first");
    assert_eq!(sw.frames_held(), 30, "no frame lost");

    let mut lossy = lower.clone();
    lossy.pfc.lossless = vec![];
    sw.reconfigure(T0, &lower, &lossy).unwrap();
    assert!(!sw.queue_state(T0, 0, p3).pausing_peer, "no longer lossless: released");

    let mut other_ports = lossy.clone();
    other_ports.ports[1].speed = BitRate::gbps(10);
    let error = sw.reconfigure(T0, &lossy, &other_ports).unwrap_err();
    assert_eq!(error.key, "port");
}

// A burst of one flow, as the datapath hands frames in (one instant), is parsed, classified
// and routed once: what changes between two of its frames must still reach the second.

/// `sw` with mac(2) learned on port 1 at T0; then at `now` a burst from port 0 to mac(2),
/// frames 10 and 12, with frame 11 from mac(2) on `port` between them.
fn burst_around_a_frame_from_mac2(sw: &mut Switch, now: Instant, port: usize) {
    sw.handle_rx(T0, 1, 1, &frame(mac(2), mac(1), Some(0), 0));
    drain(sw, T0);
    sw.handle_rx(now, 0, 10, &frame(mac(1), mac(2), Some(0), 0));
    sw.handle_rx(now, port, 11, &frame(mac(2), mac(1), Some(0), 0));
    sw.handle_rx(now, 0, 12, &frame(mac(1), mac(2), Some(0), 0));
}

#[test]
fn a_destination_that_moves_within_a_burst_takes_the_burst_s_next_frames_with_it() {
    let mut sw = switch(3);
    let t1 = Instant::from_nanos(1_000_000);
    burst_around_a_frame_from_mac2(&mut sw, t1, 2);
    let sent = drain(&mut sw, t1);
    assert!(sent.contains(&(1, 10, true)), "before the move, to port 1: {sent:?}");
    assert!(sent.contains(&(2, 12, true)), "after it, to port 2, where mac(2) now is: {sent:?}");
}

#[test]
fn a_destination_that_ages_out_and_comes_back_within_a_burst_is_flooded_then_routed() {
    let mut config = SwitchConfig::with_ports("aging", 3, BitRate::gbps(1));
    config.fdb.aging = std::time::Duration::from_secs(1);
    let (mut sw, _) = Switch::new(&config).unwrap();
    let later = Instant::from_nanos(2_000_000_000);
    burst_around_a_frame_from_mac2(&mut sw, later, 1);
    // Port 1's wire is busy with frame 10 at first.
    let sent = [drain(&mut sw, later), drain(&mut sw, later + std::time::Duration::from_millis(1))].concat();
    let ports_of = |handle| sent.iter().filter(|s| s.1 == handle).map(|s| s.0).collect::<Vec<_>>();
    assert_eq!(ports_of(10), [1, 2], "aged out: flooded");
    assert_eq!(ports_of(12), [1], "learned again by frame 11: to its port only");
}

#[test]
fn a_reload_within_a_burst_classifies_the_burst_s_next_frames_anew() {
    let old = SwitchConfig::with_ports("reload", 2, BitRate::gbps(1));
    let (mut sw, _) = Switch::new(&old).unwrap();
    let mut new = old.clone();
    new.ports[0].default_priority = 4;
    sw.handle_rx(T0, 0, 1, &frame(mac(1), mac(2), None, 0));
    sw.reconfigure(T0, &old, &new).unwrap();
    sw.handle_rx(T0, 0, 2, &frame(mac(1), mac(2), None, 0));
    let rx = |p: usize| sw.counters(0).priority[p].rx_frames;
    assert_eq!((rx(0), rx(4)), (1, 1), "the port's default priority before and after");
}

#[test]
fn frames_of_one_burst_that_differ_only_in_dscp_are_each_classified_by_theirs() {
    let mut config = SwitchConfig::with_ports("dscp", 2, BitRate::gbps(1));
    config.ports[0].trust = Trust::Dscp;
    let (mut sw, _) = Switch::new(&config).unwrap();
    for (handle, dscp) in [(1, 46), (2, 0), (3, 46), (4, 8)] {
        sw.handle_rx(T0, 0, handle, &frame(mac(1), mac(2), None, dscp));
    }
    let rx = |p: usize| sw.counters(0).priority[p].rx_frames;
    assert_eq!((rx(5), rx(0), rx(1)), (2, 1, 1), "DSCP 46, 0 and 8: class selectors 5, 0 and 1");
}
