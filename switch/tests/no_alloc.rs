//! Every per-port, per-priority structure is allocated by `Switch::preallocate`, which the
//! datapath calls when it builds the switch (the simulator lets them grow instead). Then, in
//! steady state, receiving, queueing, scheduling, PFC and sending a frame allocate nothing —
//! under OFC too: its flow tables, nested queues and outboxes; and with QCN's congestion
//! points, culprit records and CNM queues, at outputs and inputs, under every sampling; and
//! in buffer mode "pools" (dynamic thresholds).

#[path = "common/workload.rs"]
mod workload;

use pfcswitch_switch::config::PolicyKind;
use pfcswitch_switch::qcn::{Placement, Sampling};
use pfcswitch_wire::Pcp;
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use workload::{BURST, Workload};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// Only the measuring thread counts: the test harness's own threads allocate when they
    /// please (output capture, timers) and are not the switch's per-frame path.
    static MEASURING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if MEASURING.with(Cell::get) {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: forwards to the system allocator, only counting calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn the_per_frame_path_does_not_allocate() {
    let qcn = [
        (Placement::Output, Sampling::Arrival),
        (Placement::Input, Sampling::Arrival),
        (Placement::Input, Sampling::OccupancyDeterministic),
        (Placement::Input, Sampling::OccupancyRandom),
    ];
    let setups = [PolicyKind::Pfc, PolicyKind::Capfc, PolicyKind::Ofc].map(|policy| (policy, None, "")).into_iter();
    let setups = setups.chain(qcn.map(|q| (PolicyKind::Pfc, Some(q), ""))).chain([
        (PolicyKind::Pfc, None, "fecn"),
        (PolicyKind::Pfc, None, "ecn"),
        (PolicyKind::Pfc, None, "pools"),
        (PolicyKind::Pfc, None, "int"),
    ]);
    for (policy, qcn, scheme) in setups {
        let mut workload = match scheme {
            "fecn" => Workload::with_fecn(policy),
            "ecn" => Workload::with_ecn(policy),
            "pools" => Workload::with_pools(policy),
            "int" => Workload::with_int(policy),
            _ => Workload::with_qcn(policy, qcn),
        };
        for _ in 0..100 {
            workload.burst();
        }
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        let mut frames = 0;
        MEASURING.with(|m| m.set(true));
        for _ in 0..10_000 {
            frames += workload.burst();
        }
        MEASURING.with(|m| m.set(false));
        let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
        assert!(frames >= 10_000 * BURST, "{policy:?}: the workload forwarded {frames} frames");
        let pfc_frames: u64 = (0..8).map(|p| workload.switch.counters(p).priority[3].pfc_tx).sum();
        assert!(pfc_frames > 0, "{policy:?}: PFC frames were sent");
        if let Some(ofc) = workload.switch.ofc() {
            let rotations: u64 =
                (0..8).map(|p| workload.switch.nested_queue(p, Pcp::new(3).unwrap()).rotations()).sum();
            let counters = (0..8).map(|p| ofc.tables(p, Pcp::new(3).unwrap()).unwrap().counters);
            let (sent, received) = counters.fold((0, 0), |(s, r), c| (s + c.pause_tx + c.resume_tx, r + c.pause_rx));
            assert!(
                rotations > 0 && sent > 0 && received > 0,
                "OFC parked, rotated and paused: {rotations} {sent} {received}"
            );
        }
        if let Some(qcn) = workload.switch.qcn() {
            let cnms: u64 = (0..8).map(|p| qcn.counters(p, Pcp::new(3).unwrap()).cnms_sent).sum();
            assert!(cnms > 0, "{qcn:?}: QCN sent CNMs", qcn = qcn.config());
        }
        if scheme == "ecn" {
            let marked: u64 = (0..8).map(|p| workload.switch.counters(p).priority[3].ecn_marked).sum();
            assert!(marked > 0, "ECN marked frames");
        }
        if let Some(fecn) = workload.switch.fecn() {
            let marked: u64 = (0..8).map(|p| fecn.point(p, Pcp::new(3).unwrap()).probes_marked).sum();
            let intervals = fecn.point(0, Pcp::new(3).unwrap()).intervals;
            assert!(marked > 0 && intervals > 100, "FECN measured ({intervals} intervals) and marked ({marked})");
        }
        if scheme == "int" {
            let stamped: u64 = (0..8).map(|p| workload.switch.counters(p).int.stamped).sum();
            assert!(stamped > 10_000, "INT records pushed: {stamped}");
        }
        assert_eq!(allocations, 0, "{policy:?} {qcn:?} {scheme}: {allocations} allocations for {frames} frames");
    }
}
