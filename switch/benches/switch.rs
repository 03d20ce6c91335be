//! Per-frame cost of the switch core: receive → classify → learn/forward → ingress
//! accounting and policy → egress queue → schedule → shape → transmit, 8 ports × 8
//! priorities, with and without PFC, and with QCN's congestion points beside PFC.
//! Run: `cargo bench -p pfcswitch-switch --bench switch`.

#[path = "../tests/common/workload.rs"]
mod workload;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pfcswitch_switch::config::PolicyKind;
use pfcswitch_switch::qcn::{Placement, Sampling};
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

criterion_group!(benches, per_frame);
criterion_main!(benches);
