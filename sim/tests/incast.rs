//! Incast at line rate into one egress on a lossless priority: PFC must make it lossless
//! when the headroom covers the bound, and cannot when it does not.

mod common;

use common::{flow, pcp, star, wire_bits};
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::{PolicyKind, SwitchConfig, headroom_bound};
use pfcswitch_switch::counters::DropReason;
use std::time::Duration;

const FRAME: usize = 1500;
const FRAMES_PER_SENDER: u64 = 2_000;
const CABLE: Duration = Duration::from_micros(1);

struct Outcome {
    drops: u64,
    ingress_max_drops: u64,
    lost: u64,
    delivered: u64,
    pfc_ports: Vec<usize>,
    crossed_xoff: Vec<usize>,
    egress_busy: f64,
    max_ingress: u64,
}

/// Under `pfc` every byte held at ingress may sit in the one egress queue, so only the
/// headroom decides about loss. A headroom below the bound is refused under `pfc`: that case
/// runs `pfc-wdrop` with egress queues that hold what ingress admits (the egress-full case is
/// the wstop/wdrop test's).
fn incast(senders: usize, headroom: u64, policy: PolicyKind) -> Outcome {
    let speed = BitRate::gbps(1);
    let mut config = SwitchConfig::with_ports("incast", senders + 1, speed);
    config.policy.kind = policy;
    config.pfc.max = Some(ByteSize(config.pfc.xoff.bytes() + headroom));
    if policy == PolicyKind::PfcWdrop {
        config.buffer.egress_max = Some(ByteSize(config.pfc_max() * senders as u64));
    }
    let mut net = star(&config, CABLE);
    let receiver = senders;
    let start = net.now();
    for sender in 0..senders {
        net.hosts[sender].add_flow(flow(sender as u32, receiver, 3, FRAME, FRAMES_PER_SENDER, start));
    }
    net.run_for(Duration::from_secs(1));

    let switch = &net.switches[0];
    let xoff = config.pfc.xoff.bytes();
    let mut outcome = Outcome {
        drops: (0..=senders).map(|p| switch.counters(p).priority[3].total_drops()).sum(),
        ingress_max_drops: (0..=senders).map(|p| switch.counters(p).priority[3].drops(DropReason::IngressMax)).sum(),
        lost: 0,
        delivered: 0,
        pfc_ports: (0..=senders).filter(|&p| switch.counters(p).priority[3].pfc_tx > 0).collect(),
        crossed_xoff: (0..=senders)
            .filter(|&p| switch.queue_state(net.now(), p, pcp(3)).ingress.high_water >= xoff)
            .collect(),
        egress_busy: 0.0,
        max_ingress: (0..=senders).map(|p| switch.queue_state(net.now(), p, pcp(3)).ingress.high_water).max().unwrap(),
    };
    let (mut first, mut last) = (None, None);
    for sender in 0..senders {
        let stats = net.hosts[receiver].received(sender as u32);
        outcome.lost += stats.lost + (FRAMES_PER_SENDER - stats.frames - stats.lost);
        outcome.delivered += stats.frames;
        first = first.min(stats.first_rx).or(stats.first_rx);
        last = last.max(stats.last_rx);
    }
    // The egress link's busy fraction from the first to the last delivered frame.
    let span = last.unwrap() - first.unwrap();
    let busy = speed.bits_duration(wire_bits(outcome.delivered - 1, FRAME));
    outcome.egress_busy = busy.as_secs_f64() / span.as_secs_f64();
    assert_eq!(switch.frames_held(), 0, "everything drained");
    outcome
}

fn bound() -> u64 {
    let config = SwitchConfig::with_ports("incast", 2, BitRate::gbps(1));
    headroom_bound(BitRate::gbps(1), 1500, CABLE, config.pfc.response_time)
}

#[test]
fn incast_with_headroom_at_the_bound_is_lossless_and_keeps_the_egress_busy() {
    for senders in [2, 4, 8] {
        let outcome = incast(senders, bound(), PolicyKind::Pfc);
        assert_eq!(outcome.drops, 0, "{senders}:1 switch drops");
        assert_eq!(outcome.lost, 0, "{senders}:1 receiver sequence gaps");
        assert_eq!(outcome.delivered, senders as u64 * FRAMES_PER_SENDER);
        assert_eq!(
            outcome.pfc_ports, outcome.crossed_xoff,
            "{senders}:1: PFC exactly from the ports that crossed XOFF"
        );
        assert_eq!(outcome.pfc_ports, (0..senders).collect::<Vec<_>>(), "every sender port, never the receiver's");
        assert!(outcome.egress_busy >= 0.99, "{senders}:1 egress busy {:.4}", outcome.egress_busy);
        println!(
            "{senders}:1 lossless: {} frames, egress busy {:.2}%, max ingress {} B (headroom {} B)",
            outcome.delivered,
            outcome.egress_busy * 100.0,
            outcome.max_ingress,
            bound()
        );
    }
}

/// A tenth of the bound: less than one frame, so the frame a sender has on the wire when
/// the PFC frame reaches it overruns ingress MAX.
#[test]
fn incast_with_headroom_below_the_bound_drops_lossless_frames() {
    let headroom = bound() / 10;
    for senders in [2, 4, 8] {
        let outcome = incast(senders, headroom, PolicyKind::PfcWdrop);
        assert!(outcome.drops > 0, "{senders}:1 with {headroom} B of headroom should drop");
        assert_eq!(outcome.ingress_max_drops, outcome.drops, "all drops are ingress overruns");
        assert_eq!(outcome.lost, outcome.drops, "every switch drop is a gap at the receiver");
        println!(
            "{senders}:1 with headroom {headroom} B < {} B: {} frames dropped at ingress MAX",
            bound(),
            outcome.drops
        );
    }
}
