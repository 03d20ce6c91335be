//! FECN end to end on the virtual clock: sources probe, the switch's rate point at the
//! congested output lowers the probes, destinations reflect them, sources take the rate.
//!
//! A star at 1 Gbit/s: hosts 0 and 1 send long-lived flows on lossless priority 3 to host 2
//! for 100 ms, 2:1 into port 2, with probes every 1 ms and T = 1 ms. With PAUSE alone the
//! egress queue sits at the ingress limits; with FECN both flows settle at half the link
//! (the fair share) and the queue near Qeq, and PAUSE all but stops acting.

mod common;

use common::{pcp, star, transport_incast};
use pfcswitch_hosts::FecnReaction;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::Network;
use pfcswitch_switch::config::SwitchConfig;
use std::time::Duration;

const RUN: Duration = Duration::from_millis(100);
const MS: Duration = Duration::from_millis(1);

struct Outcome {
    net: Network,
    /// Egress queue of port 2 on priority 3, averaged over the last half.
    queue_avg: f64,
    pfc_frames: u64,
    /// Bytes host 2 received from each sender in the last half.
    received_late: [u64; 2],
}

fn two_to_one(fecn: bool) -> Outcome {
    let mut config = SwitchConfig::with_ports("f", 3, BitRate::gbps(1));
    if fecn {
        config.fecn.priorities = vec![3];
    }
    let mut net = star(&config, Duration::from_micros(1));
    let start = net.now();
    transport_incast(&mut net, &[0, 1], 2, RUN, |transport| {
        transport.fecn = fecn.then_some(FecnReaction { probe_interval: MS, line_rate: BitRate::gbps(1) });
    });
    let received = |net: &Network| {
        let mut bytes = [0; 2];
        for (id, stats) in net.hosts[2].transport.as_ref().unwrap().receiver_stats() {
            bytes[id as usize] = stats.bytes;
        }
        bytes
    };
    net.run_for(RUN / 2);
    let halfway = received(&net);
    let (mut sum, mut samples) = (0u64, 0u64);
    while net.now() < start + RUN {
        net.run_for(Duration::from_micros(100));
        sum += net.switches[0].queue_state(net.now(), 2, pcp(3)).egress.bytes;
        samples += 1;
    }
    let end = received(&net);
    let pfc_frames = (0..3).map(|p| net.switches[0].counters(p).priority[3].pfc_tx).sum();
    Outcome {
        queue_avg: sum as f64 / samples as f64,
        pfc_frames,
        received_late: [end[0] - halfway[0], end[1] - halfway[1]],
        net,
    }
}

#[test]
fn fecn_gives_each_flow_its_fair_share_with_the_queue_near_qeq() {
    let pause = two_to_one(false);
    let fecn = two_to_one(true);
    let drops = |o: &Outcome| (0..3).map(|p| o.net.switches[0].counters(p).priority[3].total_drops()).sum::<u64>();
    assert_eq!((drops(&pause), drops(&fecn)), (0, 0), "lossless");
    let sources: Vec<_> = (0..2)
        .map(|h| {
            let (_, source) = fecn.net.hosts[h].transport.as_ref().unwrap().fecn_sources().next().unwrap();
            (source.rate().bps(), source.stats())
        })
        .collect();
    let point = *fecn.net.switches[0].fecn().unwrap().point(2, pcp(3));
    println!(
        "egress queue {:.0} B (PAUSE alone {:.0} B), PFC frames {} (PAUSE alone {}), late bytes {:?}, \
         sources (rate, stats) {sources:?}, rate point {point:?}",
        fecn.queue_avg, pause.queue_avg, fecn.pfc_frames, pause.pfc_frames, fecn.received_late
    );
    for (rate, stats) in &sources {
        assert!(stats.probes_returned > 90, "probes came back every ms: {stats:?}");
        assert!((0.4e9..0.55e9).contains(&(*rate as f64)), "rate {rate} near half the link");
        assert_eq!(stats.bottleneck, Some(fecn.net.switches[0].port_mac(2)), "the congested port set it");
    }
    // Each flow's goodput over the second half is within 5 % of the fair share: half of what
    // the link carries in payload (1422 bytes of every 1524 on the wire).
    let fair = 1e9 * 1422.0 / 1524.0 / 2.0;
    for bytes in fecn.received_late {
        let goodput = bytes as f64 * 8.0 / (RUN / 2).as_secs_f64();
        assert!((goodput - fair).abs() < 0.05 * fair, "goodput {goodput:.0} against a fair {fair:.0} bit/s");
    }
    assert!(fecn.queue_avg < 2.0 * 24_000.0, "the queue near Qeq: {:.0} B", fecn.queue_avg);
    assert!(fecn.queue_avg < pause.queue_avg / 2.0, "below PAUSE's ingress limits");
    assert!(fecn.pfc_frames < pause.pfc_frames / 4, "PAUSE acts only at the start");
}
