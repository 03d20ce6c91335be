//! HPCC end to end on the virtual clock: every switch pushes an INT record onto each data
//! frame (`[int]`), receivers echo the records, and senders set rate and window from the
//! most loaded hop (hosts' `Hpcc`). Beside it, DCQCN on the same incast with ECN.
//!
//! A star at 100 Gbit/s with 1 µs cables: hosts 0 to 15 send long-lived flows on lossless
//! priority 3 to host 16, 16:1 into port 16. HPCC aims the bottleneck at η = 95 % of the
//! link: after the first round trip the queue drains and stays near empty, where DCQCN's
//! queue swings around its marking thresholds and PFC steps in.

mod common;

use common::{pcp, star, transport_incast};
use pfcswitch_hosts::{DcqcnModel, DcqcnParams, Fraction, HpccParams, HpccTransport};
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_sim::Network;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::int::IntConfig;
use pfcswitch_wire::Framing;
use std::time::Duration;

const RUN: Duration = Duration::from_millis(2);
const SENDERS: usize = 16;
const BOTTLENECK: usize = SENDERS;
const CABLE: Duration = Duration::from_micros(1);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Control {
    Hpcc,
    Dcqcn,
}

struct Outcome {
    /// The bottleneck port's egress queue over the last half, sampled every µs: p50, p99.
    queue_p50: u64,
    queue_p99: u64,
    pfc_frames: u64,
    stamped: u64,
    /// Host 16's goodput over the last half, bit/s.
    goodput: f64,
    drops: u64,
}

fn incast(control: Control) -> Outcome {
    let mut config = SwitchConfig::with_ports("tor", SENDERS + 1, BitRate::gbps(100));
    config.pfc.lossless = vec![3];
    // A shared-memory ASIC's room at 100 Gbit/s, as HPCC's simulator gives its switches
    // (32 MB): 4 MB of egress queue and 100 KB per ingress before XOFF, so that the first
    // round trip's windows (16 BDPs, 850 KB) fit and PFC answers only what the control
    // leaves queued.
    config.buffer.egress_max = Some(ByteSize(4_000_000));
    (config.pfc.xoff, config.pfc.xon) = (ByteSize(100_000), ByteSize(90_000));
    config.pfc.cable_delay = CABLE;
    match control {
        Control::Hpcc => config.int = IntConfig { priorities: vec![3], ..IntConfig::default() },
        Control::Dcqcn => {
            // HPCC's simulator's DCQCN marking at 100 Gbit/s (KMIN 100 KB, KMAX 400 KB, PMAX 0.2).
            config.ecn.priorities = vec![3];
            (config.ecn.min, config.ecn.max, config.ecn.probability) = (ByteSize(100_000), ByteSize(400_000), 0.2);
        }
    }
    let mut net = star(&config, CABLE);
    let start = net.now();
    let senders: Vec<usize> = (0..SENDERS).collect();
    transport_incast(&mut net, &senders, BOTTLENECK, RUN, |transport| {
        transport.framing = Framing::Rocev2;
        transport.ack_every = 1;
        match control {
            // Base RTT: four 1 µs cables, and a full frame's and an ACK's serialisation
            // each way (0.25 µs).
            Control::Hpcc => {
                let base_rtt = Duration::from_nanos(4_250);
                transport.hpcc = Some(HpccTransport { params: HpccParams::default(), base_rtt, max_hops: 5 });
            }
            // HPCC's simulator's DCQCN at 100 Gbit/s (`run.py --cc dcqcn`): its Mellanox
            // model, a CNP for every marked packet, a cut at most every 4 µs.
            Control::Dcqcn => {
                transport.cnp_interval = Duration::ZERO;
                transport.dcqcn = Some(DcqcnParams {
                    model: DcqcnModel::Hpcc,
                    g: Fraction::new(1, 256),
                    alpha_update_period: Duration::from_micros(1),
                    rate_decrease_period: Duration::from_micros(4),
                    rate_increase_period: Duration::from_micros(300),
                    additive_increase: BitRate::mbps(20),
                    hyper_increase: BitRate::mbps(200),
                    ..DcqcnParams::default()
                });
            }
        }
    });
    let received = |net: &Network| -> u64 {
        net.hosts[BOTTLENECK].transport.as_ref().unwrap().receiver_stats().map(|(_, s)| s.bytes).sum()
    };
    net.run_for(RUN / 2);
    let halfway = (net.now(), received(&net));
    let mut queue = Vec::new();
    while net.now() < start + RUN {
        net.run_for(Duration::from_micros(1));
        queue.push(net.switches[0].queue_state(net.now(), BOTTLENECK, pcp(3)).egress.bytes);
    }
    queue.sort_unstable();
    let seconds = (net.now() - halfway.0).as_secs_f64();
    let switch = &net.switches[0];
    Outcome {
        queue_p50: queue[queue.len() / 2],
        queue_p99: queue[queue.len() * 99 / 100],
        pfc_frames: (0..=SENDERS).map(|p| switch.counters(p).priority[3].pfc_tx).sum(),
        stamped: switch.counters(BOTTLENECK).int.stamped,
        goodput: (received(&net) - halfway.1) as f64 * 8.0 / seconds,
        drops: (0..=SENDERS).map(|p| switch.counters(p).priority[3].total_drops()).sum(),
    }
}

#[test]
fn hpcc_holds_a_16_to_1_incast_near_an_empty_queue_without_pfc_where_dcqcn_queues() {
    let hpcc = incast(Control::Hpcc);
    let dcqcn = incast(Control::Dcqcn);
    for (name, o) in [("HPCC", &hpcc), ("DCQCN", &dcqcn)] {
        println!(
            "{name}: bottleneck queue p50 {} B p99 {} B, PFC frames {}, INT records at the bottleneck {}, \
             goodput {:.1} Gbit/s",
            o.queue_p50,
            o.queue_p99,
            o.pfc_frames,
            o.stamped,
            o.goodput / 1e9
        );
    }
    assert_eq!((hpcc.drops, dcqcn.drops), (0, 0), "lossless");
    assert!(hpcc.stamped > 0, "the switch stamps HPCC's frames");
    assert_eq!(hpcc.pfc_frames, 0, "HPCC needs no PFC");
    assert!(
        hpcc.queue_p99 * 5 <= dcqcn.queue_p99,
        "HPCC's p99 queue ({} B) at least 5× below DCQCN's ({} B)",
        hpcc.queue_p99,
        dcqcn.queue_p99
    );
    // Goodput against the payload share of a frame: 1500-byte frames with 136 bytes kept
    // for INT carry 1302 bytes of payload, at η = 95 % of the line.
    assert!(hpcc.goodput > 75e9, "HPCC keeps the bottleneck busy: {:.1} Gbit/s", hpcc.goodput / 1e9);
}
