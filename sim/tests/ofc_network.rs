//! OFC across switches on virtual time: the OFC paper's Fig. 1 (§II-C) and interoperation
//! with plain-PFC switches.
//!
//! Fig. 1 at 1 Gbit/s: sw1 — sw2 — sw3 in a row. F0 (h0 → h2, 400 Mbit/s) and F1 (h1 → h3,
//! 600 Mbit/s) share sw1 → sw2 → sw3 and leave sw3 on different ports; three burst senders on
//! sw3 (h4–h6) hit h3 together with F1, three times. Under PFC the congestion at sw3's port
//! to h3 pauses sw2, then sw1: F0, which has nothing to do with it, is paused too. Under OFC
//! only F1 is.

mod common;

use common::{flow, host_mac, pcp};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::{Endpoint, Network, SimHost};
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use pfcswitch_switch::switch::Switch;
use pfcswitch_wire::{FlowKey, Ipv4Addr};
use std::time::Duration;

const SPEED: BitRate = BitRate::gbps(1);
const CABLE: Duration = Duration::from_micros(1);
const FRAME: usize = 1500;

fn switch(name: &str, ports: usize, kind: PolicyKind) -> Switch {
    let mut config = SwitchConfig::with_ports(name, ports, SPEED);
    config.policy.kind = kind;
    Switch::new(&config).expect("valid config").0
}

fn add_hosts(net: &mut Network, count: usize) {
    for i in 0..count {
        let mut host = SimHost::new(host_mac(i), Ipv4Addr::new(10, 0, 0, i as u8 + 1), SPEED);
        host.announce();
        net.add_host(host);
    }
}

struct Fig1 {
    net: Network,
    start: Instant,
}

/// Switches 0–2 = sw1–sw3. sw1: h0, h1, sw2. sw2: sw1, sw3. sw3: sw2, h2, h3, h4, h5, h6.
fn fig1(kind: PolicyKind) -> Fig1 {
    let mut net = Network::new();
    net.add_switch(switch("sw1", 3, kind));
    net.add_switch(switch("sw2", 2, kind));
    net.add_switch(switch("sw3", 6, kind));
    add_hosts(&mut net, 7);
    let links = [
        (Endpoint::switch(0, 0), Endpoint::host(0)),
        (Endpoint::switch(0, 1), Endpoint::host(1)),
        (Endpoint::switch(0, 2), Endpoint::switch(1, 0)),
        (Endpoint::switch(1, 1), Endpoint::switch(2, 0)),
    ];
    for (a, b) in links {
        net.connect(a, b, SPEED, CABLE);
    }
    for h in 2..7 {
        net.connect(Endpoint::switch(2, h - 1), Endpoint::host(h), SPEED, CABLE);
    }
    net.run_for(Duration::from_micros(200));
    let start = net.now();
    let mut f0 = flow(0, 2, 3, FRAME, u64::MAX, start);
    f0.rate = Some(BitRate::mbps(400));
    net.hosts[0].add_flow(f0);
    let mut f1 = flow(1, 3, 3, FRAME, u64::MAX, start);
    f1.rate = Some(BitRate::mbps(600));
    net.hosts[1].add_flow(f1);
    // Bursts of 100 KB (67 frames) from h4–h6 into h3 at 2, 5 and 8 ms.
    for (n, at) in [2u64, 5, 8].into_iter().enumerate() {
        for h in 4..7 {
            let id = 10 + (n * 3 + h) as u32;
            net.hosts[h].add_flow(flow(id, 3, 3, FRAME, 67, start + Duration::from_millis(at)));
        }
    }
    Fig1 { net, start }
}

/// Whether anything holds F0 back on its path at this moment: a pause of the whole priority
/// on one of its egresses or at its sender's NIC, or F0 in a congested-flow table.
fn f0_paused(net: &Network) -> bool {
    let now = net.now();
    let f0 = FlowKey { src: host_mac(0), dst: host_mac(2) };
    let path = [(0, 2), (1, 1), (2, 1)];
    let coarse = path.iter().any(|&(s, p)| net.switches[s].queue_state(now, p, pcp(3)).peer_paused);
    let fine = path.iter().any(|&(s, p)| net.switches[s].ofc().is_some_and(|ofc| ofc.is_paused(p, pcp(3), &f0)));
    let host = net.hosts[0].nic.is_paused(now, pcp(3));
    coarse || fine || host
}

struct Outcome {
    f0_paused_samples: usize,
    f0_share: f64,
    f1_paused_at_sw1: bool,
    lost: u64,
}

fn run_fig1(kind: PolicyKind) -> Outcome {
    let Fig1 { mut net, start } = fig1(kind);
    let run = Duration::from_millis(12);
    let mut f0_paused_samples = 0;
    let mut f1_paused_at_sw1 = false;
    let f1 = FlowKey { src: host_mac(1), dst: host_mac(3) };
    while net.now() < start + run {
        net.run_for(Duration::from_micros(10));
        f0_paused_samples += usize::from(f0_paused(&net));
        f1_paused_at_sw1 |= net.switches[0].ofc().is_some_and(|ofc| ofc.is_paused(2, pcp(3), &f1));
    }
    let offered = run.as_secs_f64() * 400e6 / ((FRAME + 24) * 8) as f64;
    let lost = (0..40).map(|id| (2..7).map(|h| net.hosts[h].received(id).lost).sum::<u64>()).sum();
    Outcome { f0_paused_samples, f0_share: net.hosts[2].received(0).frames as f64 / offered, f1_paused_at_sw1, lost }
}

#[test]
fn under_pfc_the_uncongested_flow_is_paused_under_ofc_it_is_not() {
    let pfc = run_fig1(PolicyKind::Pfc);
    let ofc = run_fig1(PolicyKind::Ofc);
    println!(
        "F0 paused in {} of 1200 samples under pfc ({:.1} % of its rate), {} under ofc ({:.1} %)",
        pfc.f0_paused_samples,
        pfc.f0_share * 100.0,
        ofc.f0_paused_samples,
        ofc.f0_share * 100.0
    );
    assert!(pfc.f0_paused_samples > 20, "PFC spreads the congestion to F0's path");
    assert_eq!(ofc.f0_paused_samples, 0, "OFC never holds F0 back");
    assert!(ofc.f0_share >= 0.9, "F0 keeps its rate under ofc: {:.3}", ofc.f0_share);
    assert!(ofc.f0_share > pfc.f0_share);
    assert!(ofc.f1_paused_at_sw1, "the congested flow's pause reached sw1 (local congestion at sw2)");
    assert_eq!((pfc.lost, ofc.lost), (0, 0), "lossless either way");
}

/// Two switches, `a` with senders h0–h2 and `b` with h3 (a sender too) and the receiver h4:
/// an incast of finite flows into h4 through the link a → b.
fn interop(a: PolicyKind, b: PolicyKind) -> (u64, u64, u64) {
    let mut net = Network::new();
    net.add_switch(switch("a", 4, a));
    net.add_switch(switch("b", 3, b));
    add_hosts(&mut net, 5);
    for h in 0..3 {
        net.connect(Endpoint::switch(0, h), Endpoint::host(h), SPEED, CABLE);
    }
    net.connect(Endpoint::switch(0, 3), Endpoint::switch(1, 0), SPEED, CABLE);
    net.connect(Endpoint::switch(1, 1), Endpoint::host(3), SPEED, CABLE);
    net.connect(Endpoint::switch(1, 2), Endpoint::host(4), SPEED, CABLE);
    net.run_for(Duration::from_micros(200));
    let start = net.now();
    const FRAMES: u64 = 2000;
    for h in 0..4 {
        net.hosts[h].add_flow(flow(h as u32, 4, 3, FRAME, FRAMES, start));
    }
    net.run_for(Duration::from_millis(150));
    let delivered: u64 = (0..4).map(|id| net.hosts[4].received(id).frames).sum();
    let lost: u64 = (0..4).map(|id| net.hosts[4].received(id).lost).sum();
    let drops: u64 = (0..2)
        .flat_map(|s| (0..net.switches[s].port_count()).map(move |p| (s, p)))
        .map(|(s, p)| net.switches[s].counters(p).priority[3].drops.iter().sum::<u64>())
        .sum();
    assert_eq!(delivered + lost, 4 * FRAMES, "every frame accounted for");
    (delivered, lost, drops)
}

#[test]
fn an_ofc_switch_and_a_pfc_switch_carry_a_lossless_incast_in_both_arrangements() {
    for (a, b) in
        [(PolicyKind::Ofc, PolicyKind::Pfc), (PolicyKind::Pfc, PolicyKind::Ofc), (PolicyKind::Ofc, PolicyKind::Ofc)]
    {
        let (delivered, lost, drops) = interop(a, b);
        println!("{} → {}: {delivered} delivered, {lost} lost, {drops} dropped", a.name(), b.name());
        assert_eq!((delivered, lost, drops), (8000, 0, 0), "{} next to {}", a.name(), b.name());
    }
}

/// Fig. 1 with F0 and F1 both from h0: an OFC PAUSE from sw1 names F1, and a NIC that obeys
/// it as the PFC pause of the priority (a RoCE NIC, the default) stops F0 with it; an
/// OFC-aware NIC stops only F1.
fn one_sender(per_flow: bool) -> (f64, f64) {
    let Fig1 { mut net, start } = fig1(PolicyKind::Ofc);
    if per_flow {
        net.hosts[0].nic.obey_ofc_per_flow(host_mac(0));
    }
    let mut f1 = flow(1, 3, 3, FRAME, u64::MAX, start);
    f1.rate = Some(BitRate::mbps(600));
    net.hosts[0].add_flow(f1);
    net.hosts[1] = SimHost::new(host_mac(1), Ipv4Addr::new(10, 0, 0, 2), SPEED);
    let run = Duration::from_millis(12);
    net.run_for(run);
    let offered = |mbps: f64| run.as_secs_f64() * mbps * 1e6 / ((FRAME + 24) * 8) as f64;
    (
        net.hosts[2].received(0).frames as f64 / offered(400.0),
        net.hosts[0].nic.paused_time(net.now(), pcp(3)).as_secs_f64(),
    )
}

#[test]
fn an_ofc_aware_nic_keeps_sending_the_flows_the_pause_does_not_name() {
    let (priority_share, priority_paused) = one_sender(false);
    let (flow_share, flow_paused) = one_sender(true);
    println!(
        "F0 from the same host as F1: {:.1} % of its rate with a per-priority NIC (paused {:.2} ms), {:.1} % per flow",
        priority_share * 100.0,
        priority_paused * 1e3,
        flow_share * 100.0
    );
    assert!(priority_paused > 0.0, "the RoCE-like NIC pauses the whole priority");
    assert!(flow_share >= 0.9, "the OFC-aware NIC keeps F0 going: {flow_share:.3}");
    assert!(flow_share > priority_share + 0.05);
    assert_eq!(flow_paused, 0.0, "and never pauses the priority");
}
