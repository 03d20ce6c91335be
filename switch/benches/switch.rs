//! Per-frame cost of the switch core: receive → classify → learn/forward → ingress
//! accounting and policy → egress queue → schedule → shape → transmit, 8 ports × 8
//! priorities, with and without PFC, and with QCN's congestion points beside PFC; a lossy
//! frame refused by its full egress queue; and the datapath benchmark's pattern, one flow
//! between two ports.
//! Run: `cargo bench -p pfcswitch-switch --bench switch`.

#[path = "../tests/common/workload.rs"]
mod workload;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::Switch;
use pfcswitch_switch::config::{PolicyKind, StaticEntry, StaticPorts, SwitchConfig};
use pfcswitch_switch::qcn::{Placement, Sampling};
use pfcswitch_wire::{DataFrameSpec, EthernetAddress, Pcp, VlanRepr};
use std::time::Duration;
use workload::{BURST, Workload};

fn per_frame(c: &mut Criterion) {
    let mut group = c.benchmark_group("switch_core");
    group.throughput(Throughput::Elements(BURST as u64));
    for (name, policy) in [
        ("pfc", PolicyKind::Pfc),
        ("pfc-wdrop", PolicyKind::PfcWdrop),
        ("capfc", PolicyKind::Capfc),
        ("ofc", PolicyKind::Ofc),
        ("none", PolicyKind::None),
    ] {
        let mut workload = Workload::with_qcn(policy, None);
        group.bench_function(format!("rx_to_tx_burst64_{name}"), |b| b.iter(|| workload.burst()));
    }
    for (name, qcn) in [
        ("output-arrival", (Placement::Output, Sampling::Arrival)),
        ("input-arrival", (Placement::Input, Sampling::Arrival)),
        ("input-occupancy-deterministic", (Placement::Input, Sampling::OccupancyDeterministic)),
        ("input-occupancy-random", (Placement::Input, Sampling::OccupancyRandom)),
    ] {
        let mut workload = Workload::with_qcn(PolicyKind::Pfc, Some(qcn));
        group.bench_function(format!("rx_to_tx_burst64_pfc_qcn_{name}"), |b| b.iter(|| workload.burst()));
    }
    let mut workload = Workload::with_fecn(PolicyKind::Pfc);
    group.bench_function("rx_to_tx_burst64_pfc_fecn", |b| b.iter(|| workload.burst()));
    let mut workload = Workload::with_ecn(PolicyKind::Pfc);
    group.bench_function("rx_to_tx_burst64_pfc_ecn", |b| b.iter(|| workload.burst()));
    let mut workload = Workload::with_pools(PolicyKind::Pfc);
    group.bench_function("rx_to_tx_burst64_pfc_pools", |b| b.iter(|| workload.burst()));
    let mut workload = Workload::with_int(PolicyKind::Pfc);
    group.bench_function("rx_to_tx_burst64_pfc_int", |b| b.iter(|| workload.burst()));
    group.finish();
}

/// A lossy frame its full egress queue drops: what the transmit side's backlog costs the
/// receive side per frame, while the egress is the bottleneck.
fn doomed_lossy_frame(c: &mut Criterion) {
    let mut config = SwitchConfig::with_ports("doomed", 2, BitRate::gbps(100));
    config.pfc.lossless = vec![];
    config.buffer.egress_max = Some(ByteSize(3_000));
    let (mut switch, _) = Switch::new(&config).expect("valid");
    let (to_1, to_0) = (frame_between(0, 1, None), frame_between(1, 0, None));
    switch.handle_rx(Instant::ZERO, 1, 0, &to_0);
    while switch.poll_tx(Instant::ZERO, 0).is_some() {}
    // Port 1 is never polled: its queue stays full (3000 B hold 46 of these frames).
    for handle in 0..100 {
        switch.handle_rx(Instant::ZERO, 0, handle, &to_1);
    }
    while switch.poll_free().is_some() {}
    let mut group = c.benchmark_group("switch_core");
    group.throughput(Throughput::Elements(BURST as u64));
    group.bench_function("rx_lossy_to_full_egress_burst64", |b| {
        b.iter(|| {
            for handle in 0..BURST as u64 {
                switch.handle_rx(Instant::ZERO, 0, handle, &to_1);
            }
            while switch.poll_free().is_some() {}
        })
    });
    group.finish();
}

/// What `scripts/bench-datapath.sh` asks of the core: two 400 Gbit/s ports, PFC on priority
/// 3, a static FDB entry for the sink, one flow of untagged (lossy) or PCP-3 (lossless) 64 B
/// frames; each burst is received, then sent, as one turn of the datapath's loop does.
fn one_flow_two_ports(c: &mut Criterion) {
    let mut group = c.benchmark_group("switch_core");
    group.throughput(Throughput::Elements(BURST as u64));
    for (name, pcp) in [("lossy", None), ("lossless", Pcp::new(3))] {
        let mut config = SwitchConfig::with_ports("one-flow", 2, BitRate::gbps(400));
        config.fdb.static_entries =
            vec![StaticEntry { mac: "02:00:00:00:00:02".into(), port: StaticPorts::One(config.ports[1].name.clone()) }];
        let (mut switch, _) = Switch::new(&config).expect("valid");
        switch.set_shaper_burst(config.switch.shaper_burst);
        let frame = frame_between(0, 1, pcp.map(|pcp| VlanRepr { pcp, dei: false, vid: 0 }));
        assert_eq!(datapath_turn(&mut switch, Instant::ZERO, &frame), BURST, "every frame of a burst goes out");
        let mut now = Instant::ZERO;
        group.bench_function(format!("one_flow_two_ports_burst64_{name}"), |b| {
            b.iter(|| {
                now += Duration::from_micros(2);
                datapath_turn(&mut switch, now, &frame)
            })
        });
    }
    group.finish();
}

/// A burst of `frame` received on port 0 at `now`, then sent on port 1 (whose wire takes it
/// in about 110 ns) 1 µs later. Returns how many frames went out.
fn datapath_turn(switch: &mut Switch, now: Instant, frame: &[u8]) -> usize {
    for handle in 0..BURST as u64 {
        switch.handle_rx(now, 0, handle, frame);
    }
    let sent = std::iter::from_fn(|| switch.poll_tx(now + Duration::from_micros(1), 1)).count();
    while switch.poll_free().is_some() {}
    sent
}

/// A 64-byte frame from port `from`'s host to port `to`'s, tagged with `vlan` if given.
fn frame_between(from: u8, to: u8, vlan: Option<VlanRepr>) -> Vec<u8> {
    let mac = |port: u8| EthernetAddress([2, 0, 0, 0, 0, port + 1]);
    DataFrameSpec::between(mac(from), mac(to), vlan, 64).to_bytes()
}

criterion_group!(benches, per_frame, doomed_lossy_frame, one_flow_two_ports);
criterion_main!(benches);
