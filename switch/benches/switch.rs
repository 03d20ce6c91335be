//! Per-frame cost of the switch core: receive → classify → learn/forward → ingress
//! accounting and policy → egress queue → schedule → shape → transmit, 8 ports × 8
//! priorities, with and without PFC, and with QCN's congestion points beside PFC; and a lossy
//! frame refused by its full egress queue.
//! Run: `cargo bench -p pfcswitch-switch --bench switch`.

#[path = "../tests/common/workload.rs"]
mod workload;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::Switch;
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use pfcswitch_switch::qcn::{Placement, Sampling};
use pfcswitch_wire::{DataFrameSpec, EthernetAddress};
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
    group.finish();
}

/// A lossy frame its full egress queue drops: what the transmit side's backlog costs the
/// receive side per frame, while the egress is the bottleneck.
fn doomed_lossy_frame(c: &mut Criterion) {
    let mut config = SwitchConfig::with_ports("doomed", 2, BitRate::gbps(100));
    config.pfc.lossless = vec![];
    config.buffer.egress_max = Some(ByteSize(3_000));
    let (mut switch, _) = Switch::new(&config).expect("valid");
    let (to_1, to_0) = (frame_between(0, 1), frame_between(1, 0));
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

/// A 64-byte untagged frame from port `from`'s host to port `to`'s.
fn frame_between(from: u8, to: u8) -> Vec<u8> {
    let mac = |port: u8| EthernetAddress([2, 0, 0, 0, 0, port + 1]);
    DataFrameSpec::between(mac(from), mac(to), None, 64).to_bytes()
}

criterion_group!(benches, per_frame, doomed_lossy_frame);
criterion_main!(benches);
