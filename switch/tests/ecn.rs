//! ECN marking at egress ([ecn], `pfcswitch_switch::ecn`), driven directly: ECT frames joining a queue
//! above the profile's threshold leave marked CE with a valid IPv4 checksum; Not-ECT
//! frames, unmarked priorities and flooded frames are left alone.

use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::{StaticEntry, SwitchConfig};
use pfcswitch_switch::{Switch, Tx};
use pfcswitch_wire::{DataFrameSpec, EthernetAddress, FrameView, Ipv4Packet, Pcp, VlanRepr, mark_ecn_ce};
use std::collections::HashMap;

fn mac(n: u8) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n])
}

/// Three 1 Gbit/s ports; mac(3) behind p2; priority 3 marks above 3000 B (DCTCP's step).
fn switch() -> Switch {
    let mut config = SwitchConfig::with_ports("ecn", 3, BitRate::gbps(1));
    config.fdb.static_entries.push(StaticEntry { mac: mac(3).to_string(), port: "p2".into() });
    config.ecn.priorities = vec![3];
    config.ecn.min = ByteSize(3000);
    config.ecn.max = ByteSize(3000);
    Switch::new(&config).unwrap().0
}

fn frame(dst: EthernetAddress, pcp: u8, ecn: u8) -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: Pcp::new(pcp).unwrap(), dei: false, vid: 1 });
    DataFrameSpec { ecn, ..DataFrameSpec::between(mac(1), dst, vlan, 1000) }.to_bytes()
}

/// Sends `frames` at once into p0 and returns each one's ECN field as it leaves, after the
/// caller's marking (as the datapath and the simulator do).
fn forward(sw: &mut Switch, frames: Vec<Vec<u8>>) -> Vec<u8> {
    let mut held: HashMap<u64, Vec<u8>> = HashMap::new();
    for (handle, bytes) in frames.into_iter().enumerate() {
        sw.handle_rx(Instant::ZERO, 0, handle as u64, &bytes);
        held.insert(handle as u64, bytes);
    }
    let mut left = Vec::new();
    for step in 0..1000u64 {
        let now = Instant::from_nanos(step * 10_000);
        for port in 0..sw.port_count() {
            while let Some(tx) = sw.poll_tx(now, port) {
                if let Tx::Data { handle, ce, .. } = tx {
                    let bytes = held.get_mut(&handle).unwrap();
                    if ce {
                        assert!(mark_ecn_ce(bytes), "the core marks only ECT frames");
                    }
                    let ip = Ipv4Packet::new_checked(FrameView::parse(bytes).unwrap().payload).unwrap();
                    assert!(ip.checksum_valid(), "the IPv4 checksum follows the mark");
                    left.push(ip.ecn());
                }
            }
        }
    }
    left
}

#[test]
fn ect_frames_above_the_threshold_leave_marked_and_counted() {
    let mut sw = switch();
    let left = forward(&mut sw, (0..8).map(|_| frame(mac(3), 3, 2)).collect());
    // Queue after each arrival: 1000..8000 B of frames (1000 B each plus accounting); the
    // first three stay at or under 3000 B.
    assert_eq!(left, vec![2, 2, 2, 3, 3, 3, 3, 3], "ECT(0) up to the threshold, CE above it");
    assert_eq!(sw.counters(2).priority[3].ecn_marked, 5);
}

#[test]
fn marking_at_dequeue_reads_the_queue_each_frame_leaves_behind() {
    let mut config = SwitchConfig::with_ports("ecn", 3, BitRate::gbps(1));
    config.fdb.static_entries.push(StaticEntry { mac: mac(3).to_string(), port: "p2".into() });
    config.ecn = toml::from_str("priorities = [3]\nmin = \"3000B\"\nmax = \"3000B\"\nmark_at = \"dequeue\"").unwrap();
    let mut sw = Switch::new(&config).unwrap().0;
    let left = forward(&mut sw, (0..8).map(|_| frame(mac(3), 3, 2)).collect());
    // The same eight frames as at enqueue, the marks the other way round: the first leaves
    // 7000 B behind it, the fifth 3000 B (at the threshold), the last none.
    assert_eq!(left, vec![3, 3, 3, 3, 2, 2, 2, 2], "CE while more than 3000 B stay behind");
    assert_eq!(sw.counters(2).priority[3].ecn_marked, 4);
}

#[test]
fn not_ect_frames_other_priorities_and_flooded_frames_are_never_marked() {
    let mut sw = switch();
    let mut frames: Vec<Vec<u8>> = (0..6).map(|_| frame(mac(3), 3, 0)).collect();
    frames.extend((0..6).map(|_| frame(mac(3), 0, 2)));
    frames.extend((0..6).map(|_| frame(mac(9), 3, 2)));
    let left = forward(&mut sw, frames);
    assert!(left.iter().all(|&ecn| ecn != 3), "nothing marked: {left:?}");
    assert_eq!((0..3).map(|port| sw.counters(port).priority[3].ecn_marked).sum::<u64>(), 0);
}
