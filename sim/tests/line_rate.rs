//! The egress shaper carries exactly the port speed; strict priority and WDRR divide it as
//! configured.

mod common;

use common::{flow, star, wire_bits};
use pfcswitch_hosts::FlowSpec;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::SwitchConfig;
use std::collections::BTreeMap;
use std::time::Duration;

/// One backlogged flow through the switch; frames received in exactly one simulated second.
fn saturated(speed: BitRate, frame: usize) -> f64 {
    let config = SwitchConfig::with_ports("rate", 2, speed);
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    net.hosts[0].add_flow(flow(0, 1, 0, frame, u64::MAX, start));
    net.run_for(Duration::from_millis(10));
    let before = net.hosts[1].received(0).frames;
    net.run_for(Duration::from_secs(1));
    let frames = net.hosts[1].received(0).frames - before;
    let carried = wire_bits(frames, frame) as f64;
    carried / speed.bps() as f64
}

#[test]
fn a_saturated_port_carries_its_speed_within_half_a_percent() {
    let cases = [(100, 60), (100, 1500), (1000, 60), (1000, 1500), (10_000, 1500)];
    for (speed, frame) in cases.map(|(mbps, frame)| (BitRate::mbps(mbps), frame)) {
        let ratio = saturated(speed, frame);
        assert!((ratio - 1.0).abs() <= 0.005, "{speed} with {frame} B frames: {:.4} of the speed", ratio);
        println!("{speed}, {frame} B frames (+4 B FCS): {ratio:.5} × speed");
    }
}

#[test]
fn strict_priority_then_wdrr_by_weight() {
    let speed = BitRate::gbps(1);
    let mut config = SwitchConfig::with_ports("shares", 4, speed);
    config.pfc.lossless = vec![];
    config.buffer.egress_max = Some(ByteSize(100_000));
    config.scheduler.strict = vec![5];
    config.scheduler.weights = BTreeMap::from([("1".to_string(), 1), ("2".to_string(), 3)]);
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    net.hosts[0].add_flow(flow(1, 3, 1, 500, u64::MAX, start));
    net.hosts[1].add_flow(flow(2, 3, 2, 1500, u64::MAX, start));
    net.hosts[2].add_flow(FlowSpec { rate: Some(BitRate::mbps(300)), ..flow(5, 3, 5, 1000, u64::MAX, start) });
    net.run_for(Duration::from_millis(10));
    let before: Vec<_> = [1, 2, 5].iter().map(|&id| net.hosts[3].received(id)).collect();
    let window = Duration::from_millis(200);
    net.run_for(window);
    let bytes: Vec<u64> =
        [1, 2, 5].iter().zip(&before).map(|(&id, b)| net.hosts[3].received(id).bytes - b.bytes).collect();
    let frames: Vec<u64> =
        [1, 2, 5].iter().zip(&before).map(|(&id, b)| net.hosts[3].received(id).frames - b.frames).collect();

    let strict_rate = wire_bits(frames[2], 1000) as f64 / window.as_secs_f64() / 1e6;
    // The flow's pacer counts wire bytes, like the shaper: 300 Mbit/s on the wire.
    assert!((strict_rate / 300.0 - 1.0).abs() < 0.02, "strict class gets its offered rate: {strict_rate:.1} Mbit/s");
    let weight1_share = bytes[0] as f64 / (bytes[0] + bytes[1]) as f64;
    assert!((weight1_share - 0.25).abs() < 0.02, "WDRR 1:3 share of weight 1: {weight1_share:.4}");
    let total = wire_bits(frames[0], 500) + wire_bits(frames[1], 1500) + wire_bits(frames[2], 1000);
    let busy = total as f64 / (window.as_secs_f64() * speed.bps() as f64);
    assert!(busy > 0.995, "the link stays busy: {busy:.4}");
    println!(
        "strict 5: {strict_rate:.1} Mbit/s on the wire; WDRR weight 1 vs 3 byte share {weight1_share:.4} (0.25); link {busy:.4}"
    );
}

/// CaPFC's merchant-silicon model (§II-A): the packet processor, not the links, limits a
/// switch whose pipeline is slower than its ports; round robin shares it between inputs,
/// and PFC (lossless priority 3) holds the surplus at the senders.
#[test]
fn a_slow_pipeline_caps_forwarding_and_shares_it_round_robin() {
    use pfcswitch_link::units::PacketRate;
    let mut config = SwitchConfig::with_ports("pipeline", 4, BitRate::gbps(1));
    config.pipeline.rate = PacketRate::from_pps(500_000);
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    net.hosts[0].add_flow(flow(0, 2, 3, 60, u64::MAX, start));
    net.hosts[1].add_flow(flow(1, 3, 3, 60, u64::MAX, start));
    net.run_for(Duration::from_millis(5));
    let before = [net.hosts[2].received(0).frames, net.hosts[3].received(1).frames];
    net.run_for(Duration::from_millis(100));
    let rates = [net.hosts[2].received(0).frames - before[0], net.hosts[3].received(1).frames - before[1]]
        .map(|f| f as f64 / 0.1);
    for rate in rates {
        assert!((rate / 250_000.0 - 1.0).abs() < 0.01, "each input gets half of 0.5 Mpps: {rate:.0} frames/s");
    }
    let drops: u64 = (0..4).map(|p| net.switches[0].counters(p).priority[3].total_drops()).sum();
    assert_eq!(drops, 0);
    println!("pipeline 0.5 Mpps, two line-rate inputs of 64 B frames: {:.0} and {:.0} frames/s", rates[0], rates[1]);
}
