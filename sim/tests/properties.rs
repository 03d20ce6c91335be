//! Properties over random traffic on the virtual clock: with headroom at the bound, lossless
//! priorities never overflow ingress MAX and lose nothing; whatever happens, every byte of
//! accounting returns to zero once traffic stops.

mod common;

use common::{host_mac, pcp, star};
use pfcswitch_hosts::FlowSpec;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::{SwitchConfig, headroom_bound};
use pfcswitch_switch::counters::DropReason;
use pfcswitch_wire::Pcp;
use proptest::prelude::*;
use std::time::Duration;

#[derive(Clone, Debug)]
struct RandomFlow {
    src: usize,
    dst: usize,
    priority: u8,
    frame_len: usize,
    frames: u64,
    start_us: u64,
    /// Offered rate in percent of the sender's speed; 100 = line rate.
    rate_percent: u64,
}

#[derive(Clone, Debug)]
struct Scenario {
    speeds_mbps: Vec<u64>,
    cable_ns: u64,
    xoff: u64,
    hysteresis: u64,
    flows: Vec<RandomFlow>,
}

fn scenario() -> impl Strategy<Value = Scenario> {
    (3usize..=6, 0u64..2000, 8_000u64..60_000, 1_500u64..8_000).prop_flat_map(|(ports, cable_ns, xoff, hysteresis)| {
        let speeds = proptest::collection::vec(prop_oneof![Just(100u64), Just(1000), Just(10_000)], ports);
        let flow = (
            0..ports,
            0..ports,
            prop_oneof![Just(3u8), Just(4), Just(0)],
            60usize..=1500,
            1u64..400,
            0u64..2000,
            10u64..=100,
        )
            .prop_filter("a flow needs two hosts", |f| f.0 != f.1)
            .prop_map(|(src, dst, priority, frame_len, frames, start_us, rate_percent)| RandomFlow {
                src,
                dst,
                priority,
                frame_len,
                frames,
                start_us,
                rate_percent,
            });
        (speeds, proptest::collection::vec(flow, 1..12)).prop_map(move |(speeds_mbps, flows)| Scenario {
            speeds_mbps,
            cable_ns,
            xoff,
            hysteresis,
            flows,
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn lossless_never_overflows_and_accounting_returns_to_zero(s in scenario()) {
        let ports = s.speeds_mbps.len();
        let mut config = SwitchConfig::with_ports("prop", ports, BitRate::mbps(1000));
        for (port, &mbps) in config.ports.iter_mut().zip(&s.speeds_mbps) {
            port.speed = BitRate::mbps(mbps);
        }
        let cable = Duration::from_nanos(s.cable_ns);
        config.pfc.lossless = vec![3, 4];
        config.pfc.cable_delay = cable;
        config.pfc.response_time = Duration::ZERO;
        let bound = config.ports.iter().map(|p| headroom_bound(p.speed, p.mtu, cable, Duration::ZERO)).max().unwrap();
        config.pfc.xoff = ByteSize(s.xoff);
        config.pfc.xon = ByteSize(s.xoff - s.hysteresis);
        config.pfc.max = Some(ByteSize(s.xoff + bound));
        // Policy `pfc` with the default egress_max and buffer.frames: only the ingress limits
        // decide, so nothing lossless may be lost whatever the egress queues hold.
        prop_assert!(config.validate().unwrap().is_empty(), "headroom at the bound: no warning");

        let mut net = star(&config, cable);
        let start = net.now();
        for (id, f) in s.flows.iter().enumerate() {
            let speed = BitRate::mbps(s.speeds_mbps[f.src]);
            let rate = (f.rate_percent < 100).then(|| BitRate::from_bps(speed.bps() / 100 * f.rate_percent).unwrap());
            net.hosts[f.src].add_flow(FlowSpec {
                id: id as u32,
                dst: host_mac(f.dst),
                dst_ip: pfcswitch_wire::Ipv4Addr::new(10, 0, 0, f.dst as u8 + 1),
                priority: pcp(f.priority),
                vid: 1,
                frame_len: f.frame_len,
                frames: f.frames,
                start: start + Duration::from_micros(f.start_us),
                rate,
            });
        }
        net.run_for(Duration::from_secs(2));

        let now = net.now();
        let switch = &net.switches[0];
        for port in 0..ports {
            for priority in Pcp::ALL {
                let state = switch.queue_state(now, port, priority);
                prop_assert_eq!(state.ingress.bytes, 0, "ingress ({}, {}) drained", port, priority);
                prop_assert_eq!(state.egress.bytes, 0, "egress ({}, {}) drained", port, priority);
                prop_assert!(!state.pausing_peer, "XOFF released on ({}, {})", port, priority);
                let ledger = switch.ledger(port, priority);
                prop_assert!(ledger.balanced(), "({}, {}): {:?}", port, priority, ledger);
                if config.pfc.lossless.contains(&priority.value()) {
                    prop_assert!(state.ingress.high_water <= config.pfc_max());
                    prop_assert_eq!(switch.counters(port).priority[priority.index()].drops(DropReason::IngressMax), 0);
                }
            }
        }
        prop_assert_eq!(switch.frames_held(), 0);
        for (id, f) in s.flows.iter().enumerate() {
            let received = net.hosts[f.dst].received(id as u32);
            if f.priority != 0 {
                prop_assert_eq!(received.frames, f.frames, "lossless flow {} delivered whole", id);
                prop_assert_eq!(received.lost, 0);
            }
        }
    }
}
