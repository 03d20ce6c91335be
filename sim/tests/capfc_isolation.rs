//! The CaPFC paper's §II-A problem on virtual time: two inputs congest egress X on lossless
//! priority 3; victim A enters on a third input towards an idle egress on the same priority;
//! victim B leaves one of the congesting senders towards an idle egress on lossless
//! priority 1. CaPFC pauses only the contributors on priority 3 (§II-D, §II-E): X never
//! reaches MAX, nothing drops, both victims keep their rate and their lanes never see a PFC
//! frame. PFC_wstop stalls everyone; PFC_wdrop drops at X.
//!
//! The exact "never" is decided here, where arrivals are paced: on the AF_XDP datapath a late
//! wake-up can hand the switch a victim's backlog at once and cross its ingress XOFF, a pause
//! PFC itself asks for (tests/tests/capfc.rs checks it is that and rare).

mod common;

use common::{congest_x_beside_victim, flow, line_rate_frames, star};
use pfcswitch_hosts::FlowSpec;
use pfcswitch_link::units::{BitRate, PacketRate};
use pfcswitch_switch::config::{CapfcAlgorithm, PolicyKind, SwitchConfig};
use pfcswitch_wire::Pcp;
use std::time::Duration;

const FRAME: usize = 1500;
const RUN: Duration = Duration::from_millis(50);
const SPEED: BitRate = BitRate::gbps(1);
/// Victim B is paced: its sender also carries a congesting flow.
const VICTIM_B_RATE: BitRate = BitRate::mbps(300);

#[derive(Debug)]
struct Outcome {
    victim_a: f64,
    victim_b: f64,
    x_high_water: u64,
    drops: u64,
    x_delivered_share: f64,
    /// PFC frames sent on (port, priority): the congesting inputs 0 and 1 on priority 3, then
    /// victim A's input 3 on priority 3 and victim B's lane, input 0 on priority 1.
    pfc_tx: [u64; 4],
}

fn frames_at(rate: BitRate) -> f64 {
    line_rate_frames(RUN, rate, FRAME)
}

fn run(kind: PolicyKind, algorithm: CapfcAlgorithm) -> Outcome {
    let mut config = SwitchConfig::with_ports("isolation", 6, SPEED);
    config.policy.kind = kind;
    config.policy.algorithm = algorithm;
    config.pfc.lossless = vec![1, 3];
    config.pipeline.rate = PacketRate::from_pps(1_000_000);
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    congest_x_beside_victim(&mut net, FRAME, start);
    net.hosts[0].add_flow(FlowSpec { rate: Some(VICTIM_B_RATE), ..flow(5, 5, 1, FRAME, u64::MAX, start) });
    net.run_for(RUN);
    let switch = &net.switches[0];
    let x = switch.queue_state(net.now(), 2, Pcp::new(3).unwrap());
    Outcome {
        victim_a: net.hosts[4].received(3).frames as f64 / frames_at(SPEED),
        victim_b: net.hosts[5].received(5).frames as f64 / frames_at(VICTIM_B_RATE),
        x_high_water: x.egress.high_water,
        drops: (0..6).map(|p| switch.counters(p).priority.iter().map(|c| c.total_drops()).sum::<u64>()).sum(),
        x_delivered_share: (net.hosts[2].received(0).frames + net.hosts[2].received(1).frames) as f64
            / frames_at(SPEED),
        pfc_tx: [(0, 3), (1, 3), (3, 3), (0, 1)]
            .map(|(port, priority)| switch.counters(port).priority[priority].pfc_tx),
    }
}

fn report(name: &str, outcome: &Outcome) {
    println!(
        "{name}: victim A {:.1}%, victim B {:.1}% of offered; X high water {} B (MAX 60000), {} drops; X link {:.1}% busy",
        outcome.victim_a * 100.0,
        outcome.victim_b * 100.0,
        outcome.x_high_water,
        outcome.drops,
        outcome.x_delivered_share * 100.0
    );
}

#[test]
fn capfc_isolates_the_victims_without_a_drop() {
    for (name, algorithm) in [("CaPFC_max", CapfcAlgorithm::Max), ("CaPFC_cal", CapfcAlgorithm::Calibrate)] {
        let outcome = run(PolicyKind::Capfc, algorithm);
        report(name, &outcome);
        assert!(outcome.x_high_water < 60_000, "{name}: X reached MAX: {outcome:?}");
        assert_eq!(outcome.drops, 0, "{name}: {outcome:?}");
        assert!(outcome.victim_a >= 0.8 && outcome.victim_b >= 0.8, "{name}: {outcome:?}");
        assert!(outcome.x_delivered_share > 0.9, "{name}: the congested egress stays busy: {outcome:?}");
        let [c1, c2, victim_a, victim_b] = outcome.pfc_tx;
        assert!(c1 > 0 && c2 > 0, "{name}: CaPFC paused the congesting inputs: {outcome:?}");
        assert_eq!((victim_a, victim_b), (0, 0), "{name}: the victims' lanes were never paused: {outcome:?}");
    }
}

#[test]
fn pfc_baselines_block_or_drop() {
    let wstop = run(PolicyKind::PfcWstop, CapfcAlgorithm::Max);
    report("PFC_wstop", &wstop);
    assert_eq!(wstop.drops, 0);
    assert!(wstop.victim_a < 0.8, "wstop stalls the victim on the same priority: {wstop:?}");
    assert!(wstop.pfc_tx[2] > 0, "wstop's stalled pipeline backs up victim A's input until PFC pauses it: {wstop:?}");
    let wdrop = run(PolicyKind::PfcWdrop, CapfcAlgorithm::Max);
    report("PFC_wdrop", &wdrop);
    assert!(wdrop.drops > 0, "wdrop drops at X: {wdrop:?}");
}
