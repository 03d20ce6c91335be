//! `report::explain` on one switch driven by hand: a priority group that never reached XOFF,
//! one that paused its peer without loss, and one whose headroom the sender overran.

mod common;

use common::pcp;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::explain::{PgExplanation, explain};
use pfcswitch_switch::report::Snapshot;
use pfcswitch_switch::{Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, MacControlRepr, PAUSE_MULTICAST, PfcRepr, VlanRepr, build_mac_control_frame,
};

fn mac(n: u8) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n])
}

fn frame(prio: u8) -> Vec<u8> {
    DataFrameSpec::between(mac(1), mac(2), Some(VlanRepr { pcp: pcp(prio), dei: false, vid: 1 }), 1000).to_bytes()
}

fn us(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000)
}

/// Two 1 Gbit/s ports (PFC on priority 3, XOFF 50 KB, MAX 60 KB); the host behind port 1 is
/// learned, and its peer pauses priority 3 when `paused`.
fn switch(paused: bool) -> (Switch, SwitchConfig) {
    let config = SwitchConfig::with_ports("sw", 2, BitRate::gbps(1));
    let mut sw = Switch::new(&config).unwrap().0;
    sw.handle_rx(us(0), 1, 1, &DataFrameSpec::between(mac(2), mac(1), None, 100).to_bytes());
    while sw.poll_tx(us(0), 0).is_some() {}
    if paused {
        let mut pfc = vec![0; 60];
        let xoff = MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), u16::MAX));
        build_mac_control_frame(&mut pfc, mac(2), PAUSE_MULTICAST, &xoff);
        sw.handle_rx(us(1), 1, 2, &pfc);
    }
    (sw, config)
}

fn explained(sw: &Switch, config: &SwitchConfig, now: Instant, port: &str) -> PgExplanation {
    let all = explain(&Snapshot::of(sw, config, now, 1.0));
    all.into_iter().find(|e| e.port == port && e.priority == 3).expect("p0 and p1 priority 3 explained")
}

#[test]
fn a_group_that_never_filled_says_how_far_below_xoff_it_stayed() {
    let (mut sw, config) = switch(false);
    for handle in 10..15 {
        sw.handle_rx(us(2), 0, handle, &frame(3));
    }
    while let Some(Tx::Data { .. }) = sw.poll_tx(us(100), 1) {}
    let e = explained(&sw, &config, us(100), "p0");
    assert_eq!((e.xoff_bytes, e.pfc_tx), (50_000, 0));
    assert_eq!(e.xoff_rule, "static: [pfc] xoff = 50KB");
    assert_eq!(e.peak_bytes, 5000, "five 1000-byte frames arrived before any left");
    assert_eq!(e.verdict, "never reached XOFF: peak 5KB of 50KB");
}

#[test]
fn a_group_that_paused_its_peer_says_so_with_its_headroom() {
    let (mut sw, config) = switch(true);
    for handle in 10..65 {
        sw.handle_rx(us(2), 0, handle, &frame(3));
    }
    while sw.poll_tx(us(3), 0).is_some() {} // the XOFF frame leaves
    let e = explained(&sw, &config, us(3), "p0");
    assert!(e.pfc_tx >= 1 && e.drops.is_empty(), "{e:?}");
    assert!(e.verdict.starts_with(&format!("reached XOFF: {} PFC frames paused the peer", e.pfc_tx)), "{}", e.verdict);
    assert!(e.verdict.contains("no drop"), "{}", e.verdict);
    let egress = explained(&sw, &config, us(3), "p1");
    assert!(egress.verdict.contains("the peer paused this egress with 1 PFC frames"), "{}", egress.verdict);
}

#[test]
fn a_group_whose_headroom_was_overrun_names_the_rule_and_what_the_link_needs() {
    let (mut sw, config) = switch(true);
    // A sender that ignores the pause: past MAX (60 KB), frames are dropped at ingress.
    for handle in 10..80 {
        sw.handle_rx(us(2), 0, handle, &frame(3));
    }
    let e = explained(&sw, &config, us(3), "p0");
    let dropped = e.drops["ingress_max"];
    assert!(dropped > 0, "{e:?}");
    let rule = format!("dropped {dropped} at ingress_max: headroom 10KB, the link needs ");
    assert!(e.verdict.starts_with(&rule) && e.verdict.ends_with(" at 1Gbps with a 1us response"), "{}", e.verdict);
}
