//! FECN rate points in the switch, frame by frame: a probe crossing two switches leaves
//! each with the smaller of its rate and that switch's advertised rate (§IV, marking), the
//! bytes rewritten as the datapath and the simulator rewrite them; reflected probes and other
//! priorities pass untouched; the advertised rate follows rᵢ₊₁ = rᵢ/ρᵢ under load.

mod common;

use common::{host_mac, pcp};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::switch::{RxVerdict, Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, FecnProbeRepr, FecnSubtype, FrameView, L2Repr, VlanRepr, build_data_frame, build_fecn_probe_frame,
    ethertype, mark_fecn_probe,
};
use std::time::Duration;

const T0: Instant = Instant::from_nanos(1_000_000_000);
const MS: Duration = Duration::from_millis(1);

/// A two-port switch at `speed` with FECN on priority 3 (lossless), its rates measured once
/// on an idle link (so each advertises its capacity).
fn switch(name: &str, speed: BitRate) -> Switch {
    let mut config = SwitchConfig::with_ports(name, 2, speed);
    config.fecn.priorities = vec![3];
    // PFC far above the queues the tests build.
    (config.pfc.xoff, config.pfc.xon, config.pfc.max) = (ByteSize(300_000), ByteSize(250_000), Some(ByteSize(400_000)));
    let (mut switch, _) = Switch::new(&config).unwrap();
    switch.handle_timeout(T0);
    switch.handle_timeout(T0 + MS);
    switch
}

fn probe_frame(subtype: FecnSubtype, priority: u8) -> Vec<u8> {
    let l2 = L2Repr {
        dst: host_mac(1),
        src: host_mac(0),
        vlan: Some(VlanRepr { pcp: pcp(priority), dei: false, vid: 1 }),
        cn_tag: None,
        ethertype: ethertype::LOCAL_EXPERIMENTAL_1,
    };
    let probe = FecnProbeRepr {
        subtype,
        hops: 0,
        flow_id: 7,
        sequence: 1,
        rate_kbps: 10_000_000,
        bottleneck: Default::default(),
        timestamp_ns: 5,
    };
    let mut frame = vec![0u8; 64];
    let len = build_fecn_probe_frame(&mut frame, &l2, &probe);
    frame.truncate(len);
    frame
}

/// Passes `frame` from port 0 to port 1 of `switch` at `now` (or as soon as the wire is
/// free), marking it as a datapath does.
fn cross(switch: &mut Switch, now: Instant, mut frame: Vec<u8>) -> Vec<u8> {
    assert_eq!(switch.handle_rx(now, 0, 1, &frame), RxVerdict::Accepted);
    let mut at = now;
    let mark = loop {
        match switch.poll_tx(at, 1) {
            Some(Tx::Data { mark, .. }) => break mark,
            Some(Tx::Control(_)) => {}
            None if at < now + MS => at += Duration::from_micros(1),
            None => panic!("the probe leaves on port 1"),
        }
    };
    if let Some(mark) = mark {
        mark_fecn_probe(&mut frame, mark.rate_kbps, mark.port);
    }
    frame
}

fn parse(frame: &[u8]) -> FecnProbeRepr {
    FrameView::parse(frame).unwrap().fecn_probe().unwrap()
}

#[test]
fn a_probe_leaves_two_switches_with_the_smaller_advertised_rate() {
    let (mut fast, mut slow) = (switch("fast", BitRate::gbps(1)), switch("slow", BitRate::mbps(100)));
    let now = T0 + MS;
    let after_fast = parse(&cross(&mut fast, now, probe_frame(FecnSubtype::Probe, 3)));
    assert_eq!((after_fast.rate_kbps, after_fast.hops, after_fast.bottleneck), (1_000_000, 1, fast.port_mac(1)));
    let frame = cross(&mut fast, now, probe_frame(FecnSubtype::Probe, 3));
    let after_both = parse(&cross(&mut slow, now, frame));
    assert_eq!((after_both.rate_kbps, after_both.hops, after_both.bottleneck), (100_000, 2, slow.port_mac(1)));
    // The other way round the slow switch names itself first and the fast one keeps it.
    let frame = cross(&mut slow, now, probe_frame(FecnSubtype::Probe, 3));
    let reversed = parse(&cross(&mut fast, now, frame));
    assert_eq!((reversed.rate_kbps, reversed.hops, reversed.bottleneck), (100_000, 2, slow.port_mac(1)));
    let point = fast.fecn().unwrap().point(1, pcp(3));
    assert_eq!((point.probes_seen, point.probes_marked), (3, 2));
}

#[test]
fn reflected_probes_and_other_priorities_pass_unmarked() {
    let mut slow = switch("slow", BitRate::mbps(100));
    for (subtype, priority) in [(FecnSubtype::Reflected, 3), (FecnSubtype::Probe, 1)] {
        let sent = probe_frame(subtype, priority);
        assert_eq!(cross(&mut slow, T0 + MS, sent.clone()), sent, "{subtype:?} on priority {priority}");
    }
}

#[test]
fn the_advertised_rate_follows_r_over_rho_as_the_egress_queue_builds() {
    // 100 Mbit/s, 1 ms intervals, 25 frames of 1000 bytes per interval (200 Mbit/s) into
    // port 1, which is never drained: A = 200 Mbit/s and the queue grows 25 KB each time.
    let mut sw = switch("sw", BitRate::mbps(100));
    let vlan = Some(VlanRepr { pcp: pcp(3), dei: false, vid: 1 });
    let mut spec = DataFrameSpec::between(host_mac(0), host_mac(1), vlan, 0);
    spec.frame_len = 1000;
    let mut frame = vec![0u8; 1000];
    let len = build_data_frame(&mut frame, &spec);
    let mut rate = sw.fecn().unwrap().point(1, pcp(3)).advertised_bps;
    assert_eq!(rate, 100e6, "idle: the capacity");
    for interval in 1..=4u32 {
        let start = T0 + MS * interval;
        for handle in 0..25 {
            assert_eq!(sw.handle_rx(start, 0, u64::from(interval * 100 + handle), &frame[..len]), RxVerdict::Accepted);
        }
        sw.handle_timeout(start + MS);
        let point = sw.fecn().unwrap().point(1, pcp(3));
        let last = point.last.unwrap();
        assert!((last.arrival_bps - 200e6).abs() < 1.0, "{last:?}");
        assert_eq!(last.queue_bytes, u64::from(interval) * 25 * len as u64);
        // Above Qeq (24 KB) γ·C counts.
        let capacity = if last.queue_bytes > 24_000 { 0.99 * 100e6 } else { 100e6 };
        assert!((last.load - 200e6 / (last.f * capacity)).abs() < 1e-9);
        assert!((point.advertised_bps - rate / last.load).abs() < 1.0, "r = {} after {rate}", point.advertised_bps);
        assert!(point.advertised_bps < rate, "an overloaded port lowers its rate");
        rate = point.advertised_bps;
    }
}
