//! Fairness of the delay-based controls on the virtual clock: TIMELY (a rate from the RTT
//! gradient, paced by the NIC) and Swift (a window from the RTT against a target), both on
//! RTT samples their senders take themselves, beside HPCC (INT) on the same bottleneck.
//!
//! A star at 100 Gbit/s with 1 µs cables, PFC lossless on priority 3 and the generous
//! buffer of `hpcc_network.rs`: hosts 0 to 3 start long-lived flows to host 4 300 µs apart,
//! so each later flow joins a bottleneck the earlier ones hold. Over the last `WINDOW` of
//! the run each flow's goodput is measured at the receiver, and Jain's index
//! J = (Σx)² / (n·Σx²) must reach 0.99 for each control.
//!
//! Base RTT: four 1 µs cables and a full frame's and an ACK's serialisation each way,
//! about 4.25 µs (HPCC's `base_rtt`). Every segment is acknowledged (`ack_every` 1), as in
//! HPCC's simulator, so each ACK is a completion event and an RTT sample.
//!
//! Settings scaled to this RTT and line rate, as TIMELY's and Swift's defaults are for tens
//! of µs of RTT at 10–25 Gbit/s: TIMELY's T_low of 50 µs is a 570 KB queue at 100 Gbit/s,
//! beyond the ~400 KB (4 ingresses × 100 KB XOFF) at which PFC pauses every sender here, so
//! TIMELY would be steered by PFC rather than by its gradient; Swift's 25 µs base target
//! is a ~250 KB standing queue.
//!
//! - TIMELY: see [`timely`].
//! - Swift: see [`swift`].
//! - HPCC: `HpccParams::default()` but W_AI = 400 Mbit/s. With the default 40 Mbit/s the
//!   flows do not converge: the last to join keeps gaining (J 0.74 at 6 ms, 0.52 at 12 ms,
//!   0.44 at 24 ms, in the ignored test below); with 200 Mbit/s J is 0.985 at 24 ms, with
//!   400 Mbit/s 0.997–0.9999 from 6 to 24 ms. This is HPCC's own law, not our transport:
//!   each flow measures U from the records of its own packets, and the queue a record
//!   carries (what arrived while the packet waited) holds the other flows' packets but, paced
//!   more than a wait apart, never the flow's own. At near-zero queue the largest flow sees
//!   the least (~250 B against ~750 B here), so its U is lower (0.9506 against 0.954) and its
//!   rate settles where Rc·(1 − η/U) = R_AI: ~60 Gbit/s against ~8. A W_AI large enough that
//!   R_AI/Rc outweighs that bias of a few 0.001 in U restores fairness (see the ignored test).

mod common;

use common::{connection, host_ip, host_mac, pcp, star};
use pfcswitch_hosts::{
    HpccParams, HpccTransport, MessageSpec, SwiftParams, SwiftTransport, TimelyModel, TimelyParams, TimelyTransport,
    Transport, TransportConfig,
};
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_sim::Network;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::int::IntConfig;
use pfcswitch_wire::Framing;
use std::time::Duration;

const SENDERS: usize = 4;
const RECEIVER: usize = SENDERS;
const CABLE: Duration = Duration::from_micros(1);
/// Between one flow's start and the next's.
const STAGGER: Duration = Duration::from_micros(300);
const RUN: Duration = Duration::from_millis(6);
/// The measured tail of the run.
const WINDOW: Duration = Duration::from_millis(2);
const BASE_RTT: Duration = Duration::from_nanos(4_250);

#[derive(Clone, Copy, PartialEq, Debug)]
enum Control {
    Timely,
    Swift,
    /// HPCC with this W_AI (as a rate); the rest of `HpccParams::default()`.
    Hpcc(BitRate),
}

/// HPCC's additive increase here: see the module's doc.
const HPCC_RATE_AI: BitRate = BitRate::mbps(400);

struct Outcome {
    /// Each flow's goodput over the window, bit/s.
    goodput: Vec<f64>,
    jain: f64,
    /// The bottleneck's egress queue over the window, sampled every µs: p50, p99.
    queue_p50: u64,
    queue_p99: u64,
    pfc_frames: u64,
    drops: u64,
}

/// TIMELY at 100 Gbit/s over a 4.25 µs base RTT. The paper's thresholds (T_low 50 µs,
/// T_high 500 µs at minRTT 20 µs, §5) are ~2.5 and ~25 times its minimum RTT; here T_low is
/// 10 µs (a 70 KB queue) and T_high 30 µs (a 320 KB queue, below the 4 × 100 KB at which
/// PFC would pause all four senders), and minRTT, the gradient's normaliser, the base RTT.
/// The increments scale with the line rate (the paper's δ = 10 Mbit/s at 10 Gbit/s): δ =
/// 100 Mbit/s, N·δ = 500 Mbit/s. The `hpcc` model updates once per RTT (HPCC's simulator's
/// rule), which at one sample per segment keeps a window of RTT differences comparable
/// with the paper's per-64 KB completions.
fn timely() -> TimelyParams {
    TimelyParams {
        additive_increase: BitRate::mbps(100),
        hyper_increase: BitRate::mbps(500),
        t_low: Duration::from_micros(10),
        t_high: Duration::from_micros(30),
        min_rtt: BASE_RTT,
        min_rate: BitRate::mbps(100),
        model: TimelyModel::Hpcc,
        ..TimelyParams::default()
    }
}

/// Swift at 100 Gbit/s: the defaults' 25 µs base target would hold a 250 KB standing queue
/// on a 4.25 µs path; the target here is 8 µs + 1 µs per hop (one switch) + flow scaling of
/// at most 10 µs, the queue it aims at ~60 KB for a few flows.
fn swift() -> SwiftParams {
    SwiftParams {
        base_target: Duration::from_micros(8),
        fs_range: Duration::from_micros(10),
        max_cwnd: 128.0,
        ..SwiftParams::default()
    }
}

fn bottleneck(control: Control, run: Duration) -> Outcome {
    let mut config = SwitchConfig::with_ports("tor", SENDERS + 1, BitRate::gbps(100));
    config.pfc.lossless = vec![3];
    // As in `hpcc_network.rs`: 4 MB of egress queue, 100 KB per ingress before XOFF.
    config.buffer.egress_max = Some(ByteSize(4_000_000));
    (config.pfc.xoff, config.pfc.xon) = (ByteSize(100_000), ByteSize(90_000));
    config.pfc.cable_delay = CABLE;
    if let Control::Hpcc(_) = control {
        config.int = IntConfig { priorities: vec![3], ..IntConfig::default() };
    }
    let mut net = star(&config, CABLE);
    let start = net.now();
    for (i, host) in net.hosts.iter_mut().enumerate() {
        let mut transport = TransportConfig::new(host_mac(i), host_ip(i), host.nic.speed());
        transport.long_lived_until = start + run;
        transport.framing = Framing::Rocev2;
        transport.ack_every = 1;
        match control {
            Control::Timely => transport.timely = Some(TimelyTransport { params: timely() }),
            Control::Swift => transport.swift = Some(SwiftTransport { params: swift(), hops: 1 }),
            Control::Hpcc(rate_ai) => {
                let params = HpccParams { rate_ai, ..HpccParams::default() };
                transport.hpcc = Some(HpccTransport { params, base_rtt: BASE_RTT, max_hops: 5 });
            }
        }
        host.transport = Some(Transport::new(transport));
    }
    for sender in 0..SENDERS {
        let messages = vec![MessageSpec { id: 0, size: None, start: start + STAGGER * sender as u32 }];
        let transport = net.hosts[sender].transport.as_mut().expect("set above");
        transport.add_connection(connection(sender as u32, RECEIVER), messages);
    }
    let received = |net: &Network| -> Vec<u64> {
        let transport = net.hosts[RECEIVER].transport.as_ref().unwrap();
        let mut bytes = vec![0; SENDERS];
        for (id, stats) in transport.receiver_stats() {
            bytes[id as usize] = stats.bytes;
        }
        bytes
    };
    net.run_for(run - WINDOW);
    let (from, before) = (net.now(), received(&net));
    let mut queue = Vec::new();
    while net.now() < start + run {
        net.run_for(Duration::from_micros(1));
        queue.push(net.switches[0].queue_state(net.now(), RECEIVER, pcp(3)).egress.bytes);
    }
    queue.sort_unstable();
    let seconds = (net.now() - from).as_secs_f64();
    let goodput: Vec<f64> =
        received(&net).iter().zip(&before).map(|(after, before)| (after - before) as f64 * 8.0 / seconds).collect();
    let sum: f64 = goodput.iter().sum();
    let squares: f64 = goodput.iter().map(|x| x * x).sum();
    let switch = &net.switches[0];
    Outcome {
        jain: sum * sum / (goodput.len() as f64 * squares),
        goodput,
        queue_p50: queue[queue.len() / 2],
        queue_p99: queue[queue.len() * 99 / 100],
        pfc_frames: (0..=SENDERS).map(|p| switch.counters(p).priority[3].pfc_tx).sum(),
        drops: (0..=SENDERS).map(|p| switch.counters(p).priority[3].total_drops()).sum(),
    }
}

#[test]
fn timely_swift_and_hpcc_share_one_bottleneck_fairly() {
    let controls = [Control::Timely, Control::Swift, Control::Hpcc(HPCC_RATE_AI)];
    let outcomes: Vec<(Control, Outcome)> = controls.into_iter().map(|c| (c, bottleneck(c, RUN))).collect();
    println!(
        "{:<8} {:>7} {:>9} {:>10} {:>10} {:>5}  per flow (Gbit/s)",
        "CC", "Jain", "goodput", "queue p50", "p99", "PFC"
    );
    for (control, o) in &outcomes {
        let flows: Vec<String> = o.goodput.iter().map(|g| format!("{:.1}", g / 1e9)).collect();
        println!(
            "{:<8} {:>7.4} {:>7.1} G {:>8} B {:>8} B {:>5}  {}",
            match control {
                Control::Hpcc(_) => "HPCC".to_string(),
                _ => format!("{control:?}"),
            },
            o.jain,
            o.goodput.iter().sum::<f64>() / 1e9,
            o.queue_p50,
            o.queue_p99,
            o.pfc_frames,
            flows.join(" ")
        );
    }
    for (control, o) in &outcomes {
        assert_eq!(o.drops, 0, "{control:?}: lossless");
        assert!(o.jain >= 0.99, "{control:?}: Jain's index {:.4} over {:?}", o.jain, o.goodput);
    }
}

/// HPCC with its default W_AI (40 Mbit/s) does not converge here: the flow that joined last
/// keeps gaining (J 0.74 at 6 ms, 0.52 at 12 ms, 0.44 at 24 ms; started in reverse order,
/// host 0, then last, gains instead). This is the algorithm, not a fault of ours (issue 47):
///
/// - Per flow, every 0.5 ms, its ACKs agree in all but one thing: commits per RTT (~113 per
///   0.5 ms, a few fewer for the smallest flow), τ never capped, every flow rate-bound, not
///   window-bound, RTT 4.33 µs for all. The txRate/B term is the same for all (0.940–0.942);
///   the queue its records carry is not: ~250 B for the flow at 60 Gbit/s, 700–800 B for
///   those at 8–15. A record's queue is what arrived while the packet waited, which holds the
///   other flows' packets but not the flow's own (paced further apart than the wait), so U
///   falls as the flow's share grows: 0.9506 against 0.954. Each commit sets Rc ← Rc·η/U +
///   R_AI, which settles at Rc = R_AI/(1 − η/U): 40 Mbit/s / (1 − 0.95/0.9506) ≈ 63 Gbit/s,
///   40 Mbit/s / (1 − 0.95/0.954) ≈ 9.5 Gbit/s, the rates the run shows. Without the queue
///   term (u = txRate/B) the same run is fair (J 0.988 at 12 ms).
/// - The authors' code does the same: `bench/ns3/hpcc_fairness_model.py` follows
///   `rdma-hw.cc`, `rdma-queue-pair.cc` and `switch-node.cc`'s `PushHop` on this setting with
///   no pfcswitch code. With W_AI 40 Mbit/s the last flow settles near twice the others' rate
///   (J 0.75 at 12 and 24 ms, 1 400 B payloads, U 0.9511 against 0.9539); without the queue
///   term J 0.987; with W_AI 400 Mbit/s J 0.997–1.0000. Our stronger bias (J 0.44) is the
///   Ethernet overhead: the INT byte counter counts frames, the wire also carries 24 B of
///   preamble, gap and FCS each, so a saturated link reads txRate/B ≈ 0.98 and U reaches η
///   only with more queue, hence longer waits and a bigger bias. ns-3 serialises only the
///   bytes it counts; with those 24 B left uncounted the model gives J 0.45 at 12 and 24 ms,
///   as here.
///
/// With variable_window off it is fair (J 0.997) only because the queue then stands at
/// ~65–90 KB, where every packet waits behind its own flow's too. Run with `--ignored`.
#[test]
#[ignore = "HPCC's own law with the default W_AI settles unfairly here: its U is biased by the flow's share (issue 47)"]
fn hpcc_with_its_default_additive_increase_shares_one_bottleneck_fairly() {
    let o = bottleneck(Control::Hpcc(pfcswitch_hosts::HpccParams::default().rate_ai), 2 * RUN);
    println!("HPCC, W_AI 40 Mbit/s: J {:.4} over {:?}", o.jain, o.goodput);
    assert_eq!(o.drops, 0);
    assert!(o.jain >= 0.99, "Jain's index {:.4} over {:?}", o.jain, o.goodput);
}

/// TIMELY and Swift stay fair over a run twice as long.
#[test]
#[ignore = "a longer run of the same (a few seconds)"]
fn timely_and_swift_stay_fair_over_a_longer_run() {
    for control in [Control::Timely, Control::Swift] {
        let o = bottleneck(control, 3 * RUN);
        println!("{control:?}: J {:.4} over {:?}, queue p50 {} p99 {}", o.jain, o.goodput, o.queue_p50, o.queue_p99);
        assert!(o.jain >= 0.99 && o.drops == 0, "{control:?}: {:.4}", o.jain);
    }
}
