//! ECMP on the datapath: two leaves on two spines (leaf-spine-2s, configs/leaf-spine-2s).
//! Each leaf reaches the other leaf's hosts over both spines by static ECMP entries; the
//! uplinks learn nothing and only p3 floods.

use pfcswitch_tests::topology::{Topology, serial};
use pfcswitch_tests::wait_until_settled;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;

/// Frames the switch has sent on `port`, every priority.
fn tx_frames(topology: &Topology, switch: &str, port: &str) -> u64 {
    topology.snapshot(switch).port(port).unwrap().priorities.iter().map(|p| p.tx_frames).sum()
}

/// Frames all four switches have received.
fn frames_received(topology: &Topology) -> u64 {
    ["sw1", "sw2", "sw3", "sw4"]
        .iter()
        .flat_map(|switch| topology.snapshot(switch).ports)
        .flat_map(|port| port.priorities)
        .map(|p| p.rx_frames)
        .sum()
}

#[test]
fn tcp_flows_spread_over_both_spines_and_flooded_frames_do_not_loop() {
    let _serial = serial();
    let topology = Topology::up("leaf-spine-2s", None);
    // ARP and neighbour discovery cross the fabric on the flooding tree through sw3.
    topology.run("h1", "ping", &["-c", "3", "-i", "0.2", "-W", "2", "10.0.0.3"]);
    topology.run("h2", "ping", &["-6", "-c", "3", "-i", "0.2", "-W", "2", "fd00::4"]);
    let before = [tx_frames(&topology, "sw3", "p2"), tx_frames(&topology, "sw4", "p2")];

    let server = topology.command("h3", "iperf3").args(["-s", "-1"]).stdout(Stdio::null()).spawn().expect("iperf3");
    std::thread::sleep(Duration::from_millis(500));
    // 16 connections from random ports: all on one spine with probability 2^-15.
    let output = topology.run("h1", "iperf3", &["-c", "10.0.0.3", "-P", "16", "-t", "4", "-J"]);
    server.wait_with_output().expect("iperf3 server");
    let result: Value = serde_json::from_slice(&output.stdout).expect("iperf3 JSON");
    let received = result["end"]["sum_received"]["bits_per_second"].as_f64().expect("iperf3 JSON");
    let carried = [tx_frames(&topology, "sw3", "p2") - before[0], tx_frames(&topology, "sw4", "p2") - before[1]];
    println!(
        "iperf3 TCP h1 → h3, 16 connections for 4 s: {:.1} Mbit/s; frames towards sw2: {} via sw3, {} via sw4",
        received / 1e6,
        carried[0],
        carried[1]
    );
    // Half of the 100 Mbit/s line: three switches and four hosts share two cores.
    assert!(received > 50e6, "TCP across the fabric: {:.1} Mbit/s", received / 1e6);
    for (spine, frames) in ["sw3", "sw4"].iter().zip(carried) {
        assert!(frames > 500, "{spine} carried some of the connections: {frames} frames");
    }

    // A loop would keep flooded frames circling after the senders stop.
    // A broadcast: hosts ignore broadcast echoes, so ping's status says nothing.
    let _ = topology.command("h1", "ping").args(["-b", "-c", "2", "-i", "0.2", "-W", "1", "10.0.0.255"]).output();
    wait_until_settled("no frame circles the fabric", Duration::from_secs(10), Duration::from_millis(500), || {
        frames_received(&topology)
    });
}
