//! QCN end to end on the virtual clock: a congestion point at the switch's output and a
//! reaction point per sending connection, talking with real CNMs and CN-TAGs.
//!
//! A star at 1 Gbit/s: hosts 0 and 1 send long-lived flows on lossless priority 3 to host 2
//! for 200 ms, 2:1 into port 2. PFC alone keeps it lossless by pausing the senders, with the
//! egress queue at its ingress limits. QCN (802.1Qau defaults: Qeq 26 KB, w 2, 150 KB sample
//! base) throttles the senders' rate limiters instead, so the queue stays lower and PFC rarely
//! acts. At the output one CP serializes the flows' CNMs and splits the link unfairly; a CP
//! per input notifies each flow on its own and splits it evenly (the paper's §III, Fig. 2).

mod common;

use common::{pcp, star, transport_incast};
use pfcswitch_hosts::{QcnReaction, RpParams};
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::Network;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::qcn::Placement;
use std::time::Duration;

const RUN: Duration = Duration::from_millis(200);

struct Outcome {
    net: Network,
    /// Egress queue of port 2 on priority 3, sampled every 100 µs.
    queue_avg: f64,
    pfc_frames: u64,
    /// Bytes host 2 received from each sender.
    received: [u64; 2],
}

fn two_to_one(qcn: Option<Placement>) -> Outcome {
    let mut config = SwitchConfig::with_ports("q", 3, BitRate::gbps(1));
    if let Some(placement) = qcn {
        config.qcn.priorities = vec![3];
        config.qcn.cp = placement;
    }
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    transport_incast(&mut net, &[0, 1], 2, RUN, |transport| {
        transport.qcn = qcn.map(|_| QcnReaction { params: RpParams::default(), line_rate: BitRate::gbps(1) });
    });
    let (mut sum, mut samples) = (0u64, 0u64);
    while net.now() < start + RUN {
        net.run_for(Duration::from_micros(100));
        sum += net.switches[0].queue_state(net.now(), 2, pcp(3)).egress.bytes;
        samples += 1;
    }
    net.run_for(Duration::from_millis(20));
    let pfc_frames = (0..3).map(|p| net.switches[0].counters(p).priority[3].pfc_tx).sum();
    let receiver = net.hosts[2].transport.as_ref().unwrap();
    let mut received = [0; 2];
    for (id, stats) in receiver.receiver_stats() {
        received[id as usize] = stats.bytes;
    }
    Outcome { net, queue_avg: sum as f64 / samples as f64, pfc_frames, received }
}

/// Jain's fairness index of the two senders' bytes: 1 is fair, 0.5 one takes all.
fn jain(received: [u64; 2]) -> f64 {
    let (a, b) = (received[0] as f64, received[1] as f64);
    (a + b).powi(2) / (2.0 * (a * a + b * b))
}

#[test]
fn qcn_throttles_an_incast_below_pfcs_queue_and_is_fairer_at_inputs() {
    let pfc = two_to_one(None);
    let drops = |o: &Outcome| (0..3).map(|p| o.net.switches[0].counters(p).priority[3].total_drops()).sum::<u64>();
    assert_eq!(drops(&pfc), 0);
    let mut fairness = Vec::new();
    for placement in [Placement::Output, Placement::Input] {
        let qcn = two_to_one(Some(placement));
        assert_eq!(drops(&qcn), 0, "{placement:?}: lossless");
        let cnms_sent: u64 = (0..3).map(|p| qcn.net.switches[0].qcn().unwrap().counters(p, pcp(3)).cnms_sent).sum();
        let rps: Vec<(u64, u64)> = (0..2)
            .map(|h| {
                let (_, rp, _) = qcn.net.hosts[h].transport.as_ref().unwrap().reaction_points().next().unwrap();
                (rp.cnms(), rp.rate().bps())
            })
            .collect();
        println!(
            "{placement:?}: egress queue {:.0} B (pfc alone {:.0} B), PFC frames {} (pfc alone {}), received {:?} \
             (Jain {:.3}; pfc alone {:?}), {cnms_sent} CNMs, reaction points (CNMs, rate) {rps:?}",
            qcn.queue_avg,
            pfc.queue_avg,
            qcn.pfc_frames,
            pfc.pfc_frames,
            qcn.received,
            jain(qcn.received),
            pfc.received
        );
        assert!(rps.iter().all(|&(cnms, _)| cnms > 0), "{placement:?}: both senders heard from a CP");
        assert_eq!(rps.iter().map(|r| r.0).sum::<u64>(), cnms_sent, "every CNM reached its reaction point");
        assert!(qcn.queue_avg < 0.7 * pfc.queue_avg, "{placement:?}: a lower queue than PFC's ingress limits hold");
        assert!(qcn.pfc_frames < pfc.pfc_frames / 2, "{placement:?}: PFC acts less");
        let total: u64 = qcn.received.iter().sum();
        let line = 1e9 / 8.0 * RUN.as_secs_f64();
        assert!(total as f64 > 0.85 * line, "{placement:?}: the bottleneck stays busy: {total} B of {line:.0}");
        fairness.push(jain(qcn.received));
    }
    // The paper's §III: a CP per input samples each flow on its own; the output's CP
    // serializes them and notifies some more often than others.
    assert!(fairness[1] > fairness[0], "inputs fairer than the output: {fairness:?}");
}
