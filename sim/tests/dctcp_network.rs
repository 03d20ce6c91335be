//! DCTCP end to end on the virtual clock: the switch marks CE above K (`[ecn]`, DCTCP's
//! step at the CaPFC paper's 20 KB), receivers echo the marks, senders cut their windows.
//!
//! A star at 1 Gbit/s: hosts 0 to 3 send long-lived flows on lossless priority 3 to host 4
//! for 200 ms, 4:1 into port 4, with 10 µs cables. Without DCTCP the senders' windows fill
//! the egress queue until PFC holds them at the ingress limits; with DCTCP the queue stays
//! near K, PFC has nothing to do, and the link stays full. HPCC's simulator's DCTCP (a rate
//! from line rate, cut by α/2: `model = "hpcc"`) does the same with its rates.

mod common;

use common::{pcp, star, transport_incast};
use pfcswitch_hosts::{DctcpModel, DctcpParams};
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_sim::Network;
use pfcswitch_switch::config::SwitchConfig;
use std::time::Duration;

const RUN: Duration = Duration::from_millis(200);
const K: u64 = 20_000;

struct Outcome {
    /// Port 4's priority-3 egress queue over the last half, sampled every 100 µs.
    queue_avg: f64,
    queue_max: u64,
    pfc_frames: u64,
    marks: u64,
    /// Host 4's goodput over the last half, bit/s.
    goodput: f64,
    drops: u64,
}

fn four_to_one(dctcp: Option<DctcpParams>) -> Outcome {
    let mut config = SwitchConfig::with_ports("d", 5, BitRate::gbps(1));
    config.pfc.lossless = vec![3];
    config.ecn.priorities = vec![3];
    (config.ecn.min, config.ecn.max) = (ByteSize(K), ByteSize(K));
    let mut net = star(&config, Duration::from_micros(10));
    let start = net.now();
    transport_incast(&mut net, &[0, 1, 2, 3], 4, RUN, |transport| {
        transport.dctcp = dctcp;
    });
    let received = |net: &Network| -> u64 {
        net.hosts[4].transport.as_ref().unwrap().receiver_stats().map(|(_, s)| s.bytes).sum()
    };
    net.run_for(RUN / 2);
    let halfway = (net.now(), received(&net));
    let (mut sum, mut samples, mut queue_max) = (0u64, 0u64, 0u64);
    while net.now() < start + RUN {
        net.run_for(Duration::from_micros(100));
        let queue = net.switches[0].queue_state(net.now(), 4, pcp(3)).egress.bytes;
        (sum, samples, queue_max) = (sum + queue, samples + 1, queue_max.max(queue));
    }
    let seconds = (net.now() - halfway.0).as_secs_f64();
    let switch = &net.switches[0];
    Outcome {
        queue_avg: sum as f64 / samples as f64,
        queue_max,
        pfc_frames: (0..5).map(|p| switch.counters(p).priority[3].pfc_tx).sum(),
        marks: switch.counters(4).priority[3].ecn_marked,
        goodput: (received(&net) - halfway.1) as f64 * 8.0 / seconds,
        drops: (0..5).map(|p| switch.counters(p).priority[3].total_drops()).sum(),
    }
}

impl Outcome {
    /// What an ECN control does beside `windows` (the same incast without one): no loss, the
    /// queue near K, ECN rather than PFC doing the work, and goodput above `goodput` bit/s.
    fn holds_the_queue_near_k(&self, name: &str, windows: &Outcome, goodput: f64) {
        println!(
            "{name}: queue avg/max {:.0}/{} B (K = {K} B); PFC frames {} (windows alone: {}, queue avg {:.0} B); \
             marks {}; goodput {:.0} Mbit/s",
            self.queue_avg,
            self.queue_max,
            self.pfc_frames,
            windows.pfc_frames,
            windows.queue_avg,
            self.marks,
            self.goodput / 1e6
        );
        assert_eq!((windows.drops, self.drops), (0, 0), "lossless");
        assert!(
            windows.queue_avg > 3.0 * K as f64,
            "without ECN the windows fill the queue: {:.0} B",
            windows.queue_avg
        );
        assert!(
            (0.5 * K as f64..2.0 * K as f64).contains(&self.queue_avg),
            "{name} holds the queue near K: {:.0} B",
            self.queue_avg
        );
        assert!(self.marks > 0 && self.pfc_frames < windows.pfc_frames / 10, "{name}: ECN, not PFC, does the work");
        assert!(self.goodput > goodput, "{name}: the link stays busy: {:.0} Mbit/s", self.goodput / 1e6);
    }
}

#[test]
fn dctcp_keeps_the_queue_near_k_with_the_link_full_and_no_pfc() {
    four_to_one(Some(DctcpParams::default())).holds_the_queue_near_k("DCTCP", &four_to_one(None), 0.9e9);
}

#[test]
fn hpccs_rate_based_dctcp_also_holds_the_queue_near_k_without_pfc() {
    // DCTCP_RATE_AI in proportion to the link as run.py's 615 Mbit/s is to 100 Gbit/s.
    let params = DctcpParams { model: DctcpModel::Hpcc, additive_increase: BitRate::mbps(6), ..DctcpParams::default() };
    // Four rates cut together and climb back 6 Mbit/s a batch each: about a tenth of the link
    // goes unused, where DCTCP's windows keep it full.
    four_to_one(Some(params)).holds_the_queue_near_k("rate-based DCTCP", &four_to_one(None), 0.8e9);
}
