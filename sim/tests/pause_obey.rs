//! A PFC frame received from a peer pauses exactly its enabled lossless classes on that
//! egress, for exactly quanta × 512 bit times at the port's speed; other classes go on.

mod common;

use common::{flow, pcp, star};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_sim::{Endpoint, Network, TxRecord};
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_wire::{MacControlRepr, Pcp, PfcRepr};
use std::time::Duration;

const QUANTA: u16 = 10_000;
const CABLE: Duration = Duration::from_nanos(500);

/// Host 0 sends class 3 to host 1 without end; with `class0_too`, host 2 sends class 0 to
/// host 1 as well (from its own port, so class 0 stays backlogged at the switch). Host 1
/// sends a PFC frame for class 3. Returns the network after the pause is long over, the
/// time the PFC frame arrived at the switch, and the pause duration.
fn run(speed: BitRate, class0_too: bool) -> (Network, Instant, Duration) {
    let mut config = SwitchConfig::with_ports("pause", 3, speed);
    config.pfc.lossless = vec![0, 3];
    config.buffer.egress_max = Some(ByteSize(200_000));
    // Strict priority for class 3, so that it takes the first frame boundary after the pause.
    config.scheduler.strict = vec![3];
    let mut net = star(&config, CABLE);
    net.enable_trace();
    let start = net.now();
    net.hosts[0].add_flow(flow(3, 1, 3, 1000, u64::MAX, start));
    if class0_too {
        net.hosts[2].add_flow(flow(0, 1, 0, 1000, u64::MAX, start));
    }
    let pause = speed.pause_duration(QUANTA);
    let inject_at = start + pause; // traffic is flowing by then
    net.hosts[1].inject(inject_at, MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), QUANTA)));
    net.run_until(inject_at + pause * 3);
    // Host 1 sends nothing else, so its PFC frame starts at inject_at: 8 + 60 + 4 bytes to
    // arrive completely, plus the cable.
    let arrived = inject_at + speed.bits_duration((8 + 60 + 4) * 8) + CABLE;
    (net, arrived, pause)
}

fn switch_to_receiver(net: &Network, priority: u8) -> Vec<TxRecord> {
    net.trace()
        .iter()
        .filter(|r| r.from == Endpoint::switch(0, 1) && r.priority == Pcp::new(priority))
        .copied()
        .collect()
}

#[test]
fn pauses_class_3_for_exactly_quanta_times_512_bit_times() {
    for speed in [BitRate::mbps(100), BitRate::gbps(1), BitRate::gbps(10)] {
        let (net, arrived, pause) = run(speed, false);
        let class3 = switch_to_receiver(&net, 3);
        let before = class3.iter().rev().find(|r| r.start < arrived).expect("class 3 flowed before the pause");
        let after = class3.iter().find(|r| r.start >= arrived).expect("class 3 resumed");
        assert_eq!(after.start, arrived + pause, "at {speed}: resumes exactly {pause:?} after the PFC frame arrived");
        assert!(
            before.start + speed.bits_duration(1024 * 8) >= arrived,
            "at {speed}: class 3 was busy up to the pause"
        );
        let counters = net.switches[0].counters(1);
        assert_eq!(counters.priority[3].pfc_rx, 1);
        assert_eq!(net.switches[0].queue_state(net.now(), 1, pcp(3)).paused_time, pause);
        println!("{speed}: {QUANTA} quanta → paused {pause:?}, class 3 resumed at +{:?}", after.start - arrived);
    }
}

#[test]
fn other_classes_keep_the_link_busy_during_the_pause() {
    for speed in [BitRate::mbps(100), BitRate::gbps(1), BitRate::gbps(10)] {
        let (net, arrived, pause) = run(speed, true);
        let frame_time = speed.bits_duration((1000 + 24) * 8);
        let class3 = switch_to_receiver(&net, 3);
        assert!(
            !class3.iter().any(|r| r.start >= arrived && r.start < arrived + pause),
            "at {speed}: no class-3 frame starts while paused"
        );
        let resumed = class3.iter().find(|r| r.start >= arrived).expect("class 3 resumed").start;
        assert!(
            resumed < arrived + pause + frame_time,
            "at {speed}: resumes at +{:?} (pause {pause:?}, frame {frame_time:?})",
            resumed - arrived
        );
        // During the pause, class 0 alone fills the link: back-to-back frames.
        let class0: Vec<Instant> = switch_to_receiver(&net, 0)
            .iter()
            .map(|r| r.start)
            .filter(|&t| t >= arrived && t < arrived + pause)
            .collect();
        let expected = (pause.as_nanos() / frame_time.as_nanos()) as usize;
        assert!(
            class0.len() + 1 >= expected,
            "at {speed}: {} class-0 frames in the pause, expected {expected}",
            class0.len()
        );
        assert!(class0.windows(2).all(|w| w[1] - w[0] <= frame_time + Duration::from_nanos(1)));
    }
}

#[test]
fn pfc_for_a_lossy_class_and_an_empty_vector_change_nothing() {
    let speed = BitRate::gbps(1);
    let mut config = SwitchConfig::with_ports("pause", 2, speed);
    config.buffer.egress_max = Some(ByteSize(200_000));
    let mut net = star(&config, CABLE);
    net.enable_trace();
    let start = net.now();
    net.hosts[0].add_flow(flow(0, 1, 5, 1000, u64::MAX, start));
    let at = start + Duration::from_micros(100);
    net.hosts[1].inject(at, MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(5), 65535)));
    net.hosts[1].inject(at + Duration::from_micros(1), MacControlRepr::Pfc(PfcRepr { enable: 0, quanta: [65535; 8] }));
    net.run_until(at + Duration::from_millis(1));
    let starts: Vec<Instant> = switch_to_receiver(&net, 5).iter().map(|r| r.start).filter(|&t| t > at).collect();
    let frame_time = speed.bits_duration((1000 + 24) * 8);
    assert!(
        starts.windows(2).all(|w| w[1] - w[0] <= frame_time + Duration::from_nanos(1)),
        "priority 5 is lossy: not paused"
    );
    assert_eq!(net.switches[0].counters(1).priority[5].pfc_rx, 1, "counted, not obeyed");
}
