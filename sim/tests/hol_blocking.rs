//! The CaPFC paper's two baselines (§II-A, §IV-C): when an egress queue is full, PFC_wstop
//! stalls the pipeline — head-of-line blocking for everyone — and PFC_wdrop drops instead.

mod common;

use common::{congest_x_beside_victim, line_rate_frames, star};
use pfcswitch_link::units::{BitRate, PacketRate};
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use pfcswitch_switch::counters::DropReason;
use std::time::Duration;

const FRAME: usize = 1500;
const RUN: Duration = Duration::from_millis(50);

struct Outcome {
    victim_share: f64,
    victim_sender_paused: bool,
    egress_full_drops: u64,
    congested_delivered: u64,
}

/// Hosts 0 and 1 send line-rate lossless traffic to host 2 (congested egress X); host 3
/// sends a line-rate victim flow to host 4, whose egress is idle.
fn run(kind: PolicyKind) -> Outcome {
    let speed = BitRate::gbps(1);
    let mut config = SwitchConfig::with_ports("hol", 5, speed);
    config.policy.kind = kind;
    config.pipeline.rate = PacketRate::from_pps(1_000_000);
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    congest_x_beside_victim(&mut net, FRAME, start);
    net.run_for(RUN);
    let offered = line_rate_frames(RUN, speed, FRAME);
    let switch = &net.switches[0];
    Outcome {
        victim_share: net.hosts[4].received(3).frames as f64 / offered,
        victim_sender_paused: switch.counters(3).priority[3].pfc_tx > 0,
        egress_full_drops: switch.counters(2).priority[3].drops(DropReason::EgressFull),
        congested_delivered: net.hosts[2].received(0).frames + net.hosts[2].received(1).frames,
    }
}

/// The stalled pipeline advances one frame per frame X sends; round robin over inputs 0, 1
/// and 3 then lets a victim frame through every second time (inputs 0 and 1 each block in
/// turn): the victim, whose egress is idle, is cut to half its rate, and PFC spreads the
/// congestion to its innocent sender.
#[test]
fn wstop_blocks_a_victim_towards_an_idle_port() {
    let outcome = run(PolicyKind::PfcWstop);
    assert_eq!(outcome.egress_full_drops, 0, "stop never drops");
    assert!(
        (0.45..0.55).contains(&outcome.victim_share),
        "the victim advances only as the full queue drains: {:.1}%",
        outcome.victim_share * 100.0
    );
    assert!(outcome.victim_sender_paused, "the victim's sender is paused by PFC");
    println!("PFC_wstop: victim gets {:.1}% of its offered rate, 0 drops", outcome.victim_share * 100.0);
}

#[test]
fn wdrop_drops_at_the_full_queue_and_spares_the_victim() {
    let outcome = run(PolicyKind::PfcWdrop);
    assert!(outcome.egress_full_drops > 0, "drop mode drops at the full egress");
    assert!(outcome.victim_share > 0.99, "the victim is unaffected: {:.1}%", outcome.victim_share * 100.0);
    assert!(!outcome.victim_sender_paused);
    assert!(outcome.congested_delivered > 0);
    println!(
        "PFC_wdrop: victim gets {:.1}% of its offered rate, {} drops at the congested egress",
        outcome.victim_share * 100.0,
        outcome.egress_full_drops
    );
}
