//! Generated fabrics on the virtual clock: a k = 4 fat-tree built by `sim::fabric` with its
//! switch configurations (static ECMP entries, a flooding tree) carries transport flows
//! between pods over several cores, and every flow arrives in order; the simulator counts
//! the work it did.

mod common;

use common::{connection, host_ip, host_mac};
use pfcswitch_hosts::{MessageSpec, Transport, TransportConfig};
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::SimHost;
use pfcswitch_sim::fabric::Fabric;
use pfcswitch_switch::config::SwitchConfig;
use std::time::Duration;

#[test]
fn flows_between_pods_of_a_fat_tree_arrive_over_several_cores() {
    let fabric = Fabric::fat_tree(4, BitRate::gbps(1), 1);
    let configs = fabric.switch_configs(&SwitchConfig::with_ports("base", 1, BitRate::gbps(1)), host_mac);
    let mut net = fabric
        .network(&configs, |i| SimHost::new(host_mac(i), host_ip(i), BitRate::gbps(1)), Duration::from_micros(1))
        .unwrap();
    net.enable_trace();
    let start = net.now();
    for (i, host) in net.hosts.iter_mut().enumerate() {
        host.transport = Some(Transport::new(TransportConfig::new(host_mac(i), host_ip(i), BitRate::gbps(1))));
    }
    // Sixteen flows from pod 0's four hosts to pod 3's, each 1 MB: all must cross a core.
    let mut id = 0;
    for sender in 0..4 {
        for receiver in 12..16 {
            let message = MessageSpec { id: 0, size: Some(1_000_000), start };
            net.hosts[sender].transport.as_mut().unwrap().add_connection(connection(id, receiver), vec![message]);
            id += 1;
        }
    }
    net.run_for(Duration::from_millis(300));
    for sender in 0..4 {
        let transport = net.hosts[sender].transport.as_ref().unwrap();
        assert!(transport.is_done(), "host {sender}'s messages all completed");
    }
    // Cores are switches 16–19; each forwarded frames of some of the flows.
    let core_frames: Vec<u64> =
        (16..20).map(|core| (0..4).map(|port| net.switches[core].counters(port).priority[3].tx_frames).sum()).collect();
    println!("data frames per core switch: {core_frames:?}");
    assert!(
        core_frames.iter().filter(|&&frames| frames > 100).count() >= 2,
        "ECMP over several cores: {core_frames:?}"
    );
    let drops: u64 = (net.switches.iter())
        .flat_map(|s| (0..4).map(move |port| s.counters(port).priority.iter().map(|p| p.total_drops()).sum::<u64>()))
        .sum();
    assert_eq!(drops, 0, "nothing dropped, nothing looped");
    // The simulator's work figures: every frame put on a wire arrived once (nothing is left in
    // flight 300 ms in), and a 1 MB flow over five switches crosses six links per segment.
    let stats = net.stats();
    assert_eq!(stats.frame_hops, net.trace().len() as u64, "one hop per transmission");
    let data_frames = 16 * 1_000_000 / 1500;
    assert!(stats.frame_hops > 6 * data_frames, "{stats:?}");
    assert!(stats.events >= stats.frame_hops, "{stats:?}");
}
