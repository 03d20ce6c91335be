//! The PFC watchdog on virtual time (SONiC pfcwd semantics): detection after
//! `detection_time` of a queue that holds frames while its peer pauses it, the `drop`,
//! `forward` and `alert` actions, restoration after `restoration_time` without PFC, and the
//! report of a port that pauses its own peer for too long.
//!
//! Star at 1 Gbit/s: host 0 sends flow A to host 2 and flow B to host 3, 400 Mbit/s each on
//! lossless priority 3. Host 2 is a broken NIC: from 10 ms to 290 ms it sends a PFC XOFF for
//! class 3 every 10 ms. Without the watchdog the frames for host 2 fill port 0's ingress, the
//! switch pauses host 0, and flow B, which has nothing to do with host 2, stalls too.

mod common;

use common::{flow, pcp, star};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::Network;
use pfcswitch_switch::config::{PfcwdAction, PfcwdConfig, SwitchConfig};
use pfcswitch_switch::counters::DropReason;
use pfcswitch_switch::pfcwd::PfcwdCounters;
use pfcswitch_wire::{MacControlRepr, PfcRepr};
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);
const FRAME: usize = 1500;
const STORM_START: Duration = Duration::from_millis(10);
const STORM_END: Duration = Duration::from_millis(290);
const DETECTION: Duration = Duration::from_millis(20);
const RESTORATION: Duration = Duration::from_millis(20);
/// After detection until the storm ends, and from well after restoration.
const DURING: (Duration, Duration) = (Duration::from_millis(60), Duration::from_millis(290));
const AFTER: (Duration, Duration) = (Duration::from_millis(360), Duration::from_millis(500));

fn offered_frames(window: (Duration, Duration)) -> f64 {
    (window.1 - window.0).as_secs_f64() * 400e6 / ((FRAME + 24) * 8) as f64
}

fn config(watchdog: Option<PfcwdAction>) -> SwitchConfig {
    let mut config = SwitchConfig::with_ports("wd", 4, BitRate::gbps(1));
    config.pfcwd = PfcwdConfig {
        enabled: watchdog.is_some(),
        action: watchdog.unwrap_or_default(),
        detection_time: DETECTION,
        restoration_time: RESTORATION,
        pausing_peer_limit: 50 * MS,
    };
    config
}

fn network(watchdog: Option<PfcwdAction>) -> (Network, Instant) {
    let mut net = star(&config(watchdog), Duration::from_micros(1));
    let start = net.now();
    for (id, to) in [(0, 2), (1, 3)] {
        let mut spec = flow(id, to, 3, FRAME, u64::MAX, start);
        spec.rate = BitRate::mbps(400).into();
        net.hosts[0].add_flow(spec);
    }
    let xoff = MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), u16::MAX));
    let mut at = STORM_START;
    while at <= STORM_END {
        net.hosts[2].inject(start + at, xoff);
        at += 10 * MS;
    }
    (net, start)
}

#[derive(Debug)]
struct Outcome {
    /// Frames of flows A and B delivered during the storm and after it.
    a_during: u64,
    b_during: u64,
    a_after: u64,
    b_after: u64,
    counters: PfcwdCounters,
    pfcwd_drops: u64,
    other_drops: u64,
    /// Whether the switch was pausing host 0 at the end of the storm.
    host0_paused_by_switch: bool,
}

fn run(watchdog: Option<PfcwdAction>) -> Outcome {
    let (mut net, start) = network(watchdog);
    let delivered = |net: &Network| (net.hosts[2].received(0).frames, net.hosts[3].received(1).frames);
    net.run_until(start + DURING.0);
    let (a0, b0) = delivered(&net);
    net.run_until(start + DURING.1);
    let (a1, b1) = delivered(&net);
    let host0_paused_by_switch = net.switches[0].queue_state(net.now(), 0, pcp(3)).pausing_peer;
    net.run_until(start + AFTER.0);
    let (a2, b2) = delivered(&net);
    net.run_until(start + AFTER.1);
    let (a3, b3) = delivered(&net);
    let switch = &net.switches[0];
    let drops = |reason| (0..4).map(|p| switch.counters(p).priority[3].drops(reason)).sum::<u64>();
    let all: u64 = (0..4).map(|p| switch.counters(p).priority[3].total_drops()).sum();
    Outcome {
        a_during: a1 - a0,
        b_during: b1 - b0,
        a_after: a3 - a2,
        b_after: b3 - b2,
        counters: switch.pfcwd().counters(2, 3),
        pfcwd_drops: drops(DropReason::Pfcwd),
        other_drops: all - drops(DropReason::Pfcwd),
        host0_paused_by_switch,
    }
}

#[test]
fn without_the_watchdog_the_storm_spreads_to_the_innocent_flow() {
    let off = run(None);
    println!("off: {off:?}");
    assert!(off.host0_paused_by_switch, "the switch passes the pause on to host 0");
    assert!((off.b_during as f64) < 0.05 * offered_frames(DURING), "flow B stalls: {off:?}");
    assert_eq!((off.pfcwd_drops, off.other_drops), (0, 0), "lossless: nothing dropped");
    assert_eq!(off.counters, PfcwdCounters::default());
    assert!(off.b_after as f64 > 0.95 * offered_frames(AFTER), "traffic resumes after the storm: {off:?}");
}

#[test]
fn drop_isolates_the_stormed_queue_and_restores_it_after_the_storm() {
    let drop = run(Some(PfcwdAction::Drop));
    println!("drop: {drop:?}");
    assert_eq!((drop.counters.storms_detected, drop.counters.storms_restored), (1, 1), "{drop:?}");
    assert!(drop.b_during as f64 > 0.97 * offered_frames(DURING), "flow B keeps its rate: {drop:?}");
    assert!(!drop.host0_paused_by_switch, "the pause does not spread to host 0");
    assert_eq!(drop.a_during, 0, "frames for the stormed host are dropped");
    assert!(drop.pfcwd_drops > 0 && drop.pfcwd_drops == drop.counters.tx_dropped, "{drop:?}");
    assert_eq!(drop.other_drops, 0, "nothing else is dropped");
    assert!(drop.a_after as f64 > 0.95 * offered_frames(AFTER), "traffic to host 2 resumes: {drop:?}");
}

#[test]
fn forward_ignores_the_peers_pfc_and_alert_only_counts() {
    let forward = run(Some(PfcwdAction::Forward));
    println!("forward: {forward:?}");
    assert_eq!(forward.counters.storms_detected, 1);
    assert!(forward.a_during as f64 > 0.97 * offered_frames(DURING), "sent to the storming host anyway");
    assert!(forward.b_during as f64 > 0.97 * offered_frames(DURING));
    assert_eq!((forward.pfcwd_drops, forward.other_drops), (0, 0));

    let alert = run(Some(PfcwdAction::Alert));
    println!("alert: {alert:?}");
    assert_eq!((alert.counters.storms_detected, alert.counters.storms_restored), (1, 1));
    assert!((alert.b_during as f64) < 0.05 * offered_frames(DURING), "alert changes nothing: {alert:?}");
    assert_eq!((alert.pfcwd_drops, alert.other_drops), (0, 0));
    assert!(alert.b_after as f64 > 0.95 * offered_frames(AFTER));
}

/// Detection happens `detection_time` after the queue got stuck (the first PFC frame found
/// frames queued, or the first frame was queued behind it), not a poll period later.
#[test]
fn detection_and_restoration_happen_at_their_configured_times() {
    let (mut net, start) = network(Some(PfcwdAction::Drop));
    // The first XOFF reaches the switch 72 wire bytes + 1 µs after host 2 sent it; the queue
    // is stuck from then or from the next frame for host 2 (one frame time at 400 Mbit/s).
    let arrived = start + STORM_START + BitRate::gbps(1).bits_duration(72 * 8) + Duration::from_micros(1);
    let frame_gap = BitRate::mbps(400).bits_duration(((FRAME + 24) * 8) as u64);
    let stormed = |net: &Network| net.switches[0].queue_state(net.now(), 2, pcp(3)).stormed;
    net.run_until(arrived + (DETECTION - Duration::from_nanos(1)));
    assert!(!stormed(&net), "not before detection_time");
    net.run_until(arrived + DETECTION + frame_gap);
    assert!(stormed(&net), "stormed once detection_time has passed");
    // The last XOFF arrives at STORM_END (+ wire time): restored restoration_time later.
    let last = start + STORM_END + BitRate::gbps(1).bits_duration(72 * 8) + Duration::from_micros(1);
    net.run_until(last + (RESTORATION - Duration::from_nanos(1)));
    assert!(stormed(&net), "still stormed while PFC arrived within restoration_time");
    net.run_until(last + RESTORATION);
    assert!(!stormed(&net), "restored restoration_time after the last PFC");
}

/// The other direction: under `alert` the switch keeps pausing host 0 for the whole storm,
/// longer than `pausing_peer_limit` (50 ms), once.
#[test]
fn a_port_pausing_its_peer_too_long_is_reported() {
    let (mut net, start) = network(Some(PfcwdAction::Alert));
    net.run_until(start + STORM_END);
    let switch = &net.switches[0];
    assert!(switch.pausing_for(net.now(), 0, pcp(3)) > 200 * MS, "host 0 paused since early in the storm");
    assert_eq!(switch.pfcwd().counters(0, 3).long_pausing, 1, "reported once per episode");
    assert_eq!(switch.pfcwd().counters(1, 3).long_pausing, 0, "port 1 never paused its peer");
}

/// `[pfcwd]` is reloadable: turning the watchdog off restores its stormed queues at once, and
/// the peer's PFC is obeyed again.
#[test]
fn a_reload_that_turns_the_watchdog_off_restores_stormed_queues() {
    let (mut net, start) = network(Some(PfcwdAction::Drop));
    net.run_until(start + DURING.0);
    let now = net.now();
    let switch = &mut net.switches[0];
    assert!(switch.queue_state(now, 2, pcp(3)).stormed);
    switch.reconfigure(now, &config(Some(PfcwdAction::Drop)), &config(None)).unwrap();
    assert!(!switch.queue_state(now, 2, pcp(3)).stormed);
    assert_eq!(switch.pfcwd().counters(2, 3).storms_restored, 1);
    let before = net.hosts[3].received(1).frames;
    net.run_until(start + DURING.1);
    assert!(net.switches[0].queue_state(net.now(), 0, pcp(3)).pausing_peer, "the storm spreads again");
    assert!(((net.hosts[3].received(1).frames - before) as f64) < 0.2 * offered_frames(DURING));
}
