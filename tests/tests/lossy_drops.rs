//! A full lossy egress queue counts every frame it drops. On star3 (configs/default.toml:
//! 100 Mbit/s ports, priority 0 lossy), h1 and h2 each send at line rate on priority 0 to h3:
//! p3 can take half, and the rest is tail-dropped at its full egress queue — in the switch
//! core's early refusal of frames that cannot fit. Every frame the receiver missed is one
//! `egress_full` drop at p3, and nothing else is dropped anywhere.

use pfcswitch_tests::topology::{Incast, Topology, serial};

/// 4000 frames of 1500 B per sender: 0.48 s at 100 Mbit/s, far beyond p3's 400 KB queue.
const FRAMES: u64 = 4000;

#[test]
fn a_full_lossy_egress_queue_counts_every_frame_it_drops() {
    let _serial = serial();
    let topology = Topology::up("star3", None);
    // What setting up the hosts sent (ARP, say) is not part of the count.
    topology.cli("sw1", &["counters", "--reset"]);
    let lost: u64 = Incast::on_priority(&topology, FRAMES, "100Mbps", 0).lost().iter().sum();
    let snapshot = topology.assert_ledgers_balance("sw1");
    let (p1, p2, p3) = (
        &snapshot.port("p1").unwrap().priorities[0],
        &snapshot.port("p2").unwrap().priorities[0],
        &snapshot.port("p3").unwrap().priorities[0],
    );
    let egress_full = p3.drops["egress_full"];
    println!("{} frames sent, {lost} lost, {egress_full} egress_full at p3, {} sent by p3", 2 * FRAMES, p3.tx_frames);
    let received = p1.rx_frames + p2.rx_frames;
    // Beside the flows' data, the hosts' own few frames, which the receiver does not count.
    assert!(received >= 2 * FRAMES, "sw1 received every frame: {received}");
    assert!(lost > FRAMES / 2, "p3 could not take the 2:1 incast: {lost} lost");
    assert_eq!(egress_full, lost, "every frame h3 missed is counted at p3's egress");
    assert_eq!(p3.tx_frames + egress_full, received, "every frame sw1 received was sent to h3 or counted");
    for port in &snapshot.ports {
        for priority in &port.priorities {
            let others = priority.drops.iter().filter(|(reason, _)| *reason != "egress_full");
            assert!(
                others.clone().all(|(_, &n)| n == 0),
                "{} priority {}: {:?}",
                port.name,
                priority.priority,
                priority.drops
            );
        }
    }
}
