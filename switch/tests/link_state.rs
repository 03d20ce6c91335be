//! A port's link going down and up, driven by hand: what it held and what arrives for it is
//! counted as `link_down`, upstreams are released, learned addresses and ECMP members
//! follow the link, and across random flaps every frame the switch accepted is delivered or
//! counted, never silently gone.

mod common;

use common::pcp;
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::{StaticEntry, StaticPorts, SwitchConfig};
use pfcswitch_switch::counters::DropReason;
use pfcswitch_switch::{ControlFrame, RxVerdict, Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, MacControlRepr, PAUSE_MULTICAST, Pcp, PfcRepr, VlanRepr, build_mac_control_frame,
};
use std::collections::HashSet;

fn mac(n: u8) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n])
}

/// A data frame of `len` bytes on priority `prio`; `flow` picks the UDP source port.
fn frame(src: EthernetAddress, dst: EthernetAddress, prio: u8, len: usize, flow: u16) -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: pcp(prio), dei: false, vid: 1 });
    DataFrameSpec { src_port: 40_000 + flow, ..DataFrameSpec::between(src, dst, vlan, len) }.to_bytes()
}

fn pfc(class: u8, quanta: u16) -> Vec<u8> {
    let mut bytes = vec![0; 60];
    let repr = MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(class), quanta));
    build_mac_control_frame(&mut bytes, mac(99), PAUSE_MULTICAST, &repr);
    bytes
}

fn us(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000)
}

fn drops(switch: &Switch, port: usize, prio: usize, reason: DropReason) -> u64 {
    switch.counters(port).priority[prio].drops(reason)
}

fn freed(switch: &mut Switch) -> Vec<u64> {
    std::iter::from_fn(|| switch.poll_free()).collect()
}

/// A three-port switch (host i on port i has `mac(i + 1)`) where the host on `to` is learned
/// and its peer pauses priority 3, then 55 KB of priority-3 frames (handles 10 to 64) from the
/// host on `from` wait at `to`: over XOFF (50 KB), under MAX (60 KB), so `from` is paused.
fn queued_behind_a_pause(from: usize, to: usize) -> Switch {
    let mut sw = Switch::new(&SwitchConfig::with_ports("sw", 3, BitRate::gbps(1))).unwrap().0;
    let (src, dst) = (mac(from as u8 + 1), mac(to as u8 + 1));
    sw.handle_rx(us(0), to, 1, &frame(dst, src, 0, 100, 0));
    for port in (0..3).filter(|&port| port != to) {
        while sw.poll_tx(us(0), port).is_some() {}
    }
    sw.handle_rx(us(1), to, 2, &pfc(3, 0xFFFF));
    for handle in 10..65 {
        assert_eq!(sw.handle_rx(us(2), from, handle, &frame(src, dst, 3, 1000, 0)), RxVerdict::Accepted);
    }
    assert!(sw.queue_state(us(2), from, pcp(3)).pausing_peer, "over XOFF: the sender on p{from} is paused");
    sw
}

#[test]
fn a_port_going_down_drops_what_it_holds_counted_and_releases_the_upstream() {
    let mut sw = queued_behind_a_pause(0, 1);
    assert!(sw.poll_tx(us(3), 1).is_none(), "the peer pauses priority 3");

    sw.set_link(us(4), 1, false);
    assert!(!sw.link_is_up(1));
    assert_eq!(drops(&sw, 1, 3, DropReason::LinkDown), 55, "every queued frame counted");
    assert_eq!(freed(&mut sw), (10..65).collect::<Vec<_>>(), "and its buffer handed back");
    let upstream = sw.queue_state(us(4), 0, pcp(3));
    assert_eq!(upstream.ingress.bytes, 0, "p0's ingress bytes are released");
    assert!(!upstream.pausing_peer, "so p0's sender is resumed");
    assert!(!sw.queue_state(us(4), 1, pcp(3)).peer_paused, "the dead peer's pause is forgotten");
    assert!(sw.fdb_entries(us(4)).iter().all(|entry| entry.mac != mac(2)), "addresses learned on p1 are flushed");

    // Unknown again, mac(2) is flooded to the live ports only; nothing leaves p1.
    sw.handle_rx(us(5), 0, 40, &frame(mac(1), mac(2), 0, 100, 0));
    assert!(sw.poll_tx(us(5), 1).is_none());
    assert!(matches!(sw.poll_tx(us(5), 2), Some(Tx::Data { handle: 40, .. })));
}

#[test]
fn a_port_up_again_tells_its_new_peer_of_the_pause_it_still_asserts() {
    // p1's frames wait at p2, whose peer pauses: p1 asserts XOFF towards its peer.
    let mut sw = queued_behind_a_pause(1, 2);
    assert!(matches!(sw.poll_tx(us(3), 1), Some(Tx::Control(ControlFrame::Pause(_)))));

    sw.set_link(us(4), 1, false);
    assert!(sw.poll_tx(us(4), 1).is_none(), "nothing is sent on a port that is down");
    // p2's peer keeps pausing (a pause lasts 33.5 ms at 1 Gbit/s), so only p1 could want a
    // wake-up: its XOFF refreshes fall due, and it is down.
    sw.handle_rx(us(30_000), 2, 3, &pfc(3, 0xFFFF));
    let now = us(50_000);
    sw.handle_timeout(now);
    assert!(sw.poll_timeout().is_none_or(|at| at > now), "a down port asks for no wake-up now");
    assert!(sw.queue_state(now, 1, pcp(3)).pausing_peer, "its frames still wait at p2");

    sw.set_link(now, 1, true);
    let Some(Tx::Control(ControlFrame::Pause(pause))) = sw.poll_tx(now, 1) else {
        panic!("the new peer is told of the pause at once");
    };
    let MacControlRepr::Pfc(repr) = pause.repr else { panic!("a PFC frame") };
    assert!(repr.enable & pcp(3).mask() != 0 && repr.quanta[3] > 0, "XOFF on priority 3: {repr:?}");
}

/// A leaf: hosts on p0 and p1, uplinks p2 and p3 to two spines; mac(9) is behind both.
fn leaf() -> Switch {
    let mut config = SwitchConfig::with_ports("leaf", 4, BitRate::gbps(1));
    let group = StaticPorts::Group(vec!["p2".into(), "p3".into()]);
    config.fdb.static_entries.push(StaticEntry { mac: mac(9).to_string(), port: group });
    Switch::new(&config).unwrap().0
}

/// The uplink each of 32 flows from p0 to mac(9) takes at `now` (none: dropped).
fn uplinks(sw: &mut Switch, now: Instant, handle: u64) -> Vec<Option<usize>> {
    (0..32u16)
        .map(|flow| {
            let at = now + std::time::Duration::from_micros(10 * u64::from(flow));
            sw.handle_rx(at, 0, handle + u64::from(flow), &frame(mac(1), mac(9), 0, 100, flow));
            (2..4).find(|&port| sw.poll_tx(at, port).is_some())
        })
        .collect()
}

#[test]
fn ecmp_flows_of_a_dead_member_rehash_to_the_live_one_and_come_back() {
    let mut sw = leaf();
    let before = uplinks(&mut sw, us(0), 100);
    assert!(before.contains(&Some(2)) && before.contains(&Some(3)), "flows spread: {before:?}");

    sw.set_link(us(1_000), 2, false);
    assert!(uplinks(&mut sw, us(1_000), 200).iter().all(|&port| port == Some(3)), "every flow on p3");

    sw.set_link(us(2_000), 3, false);
    assert!(uplinks(&mut sw, us(2_000), 300).iter().all(Option::is_none), "no live member");
    let counted = drops(&sw, 2, 0, DropReason::LinkDown) + drops(&sw, 3, 0, DropReason::LinkDown);
    assert_eq!(counted, 32, "each counted as link_down at its member");

    sw.set_link(us(3_000), 2, true);
    sw.set_link(us(3_000), 3, true);
    assert_eq!(uplinks(&mut sw, us(3_000), 400), before, "back on their own uplinks");
}

/// Four hosts with static addresses, lossless and lossy traffic between them at random,
/// links flapping at random: every accepted frame leaves once or is counted, per priority
/// frames in = frames out + frames dropped (nothing is held once drained), and every
/// (port, priority)'s ledger balances all along, across a counter reset too.
#[test]
fn across_random_flaps_every_frame_is_delivered_or_counted() {
    let mut config = SwitchConfig::with_ports("sw", 4, BitRate::gbps(1));
    for host in 0..4u8 {
        let entry = StaticEntry { mac: mac(host).to_string(), port: StaticPorts::One(format!("p{host}")) };
        config.fdb.static_entries.push(entry);
    }
    let mut sw = Switch::new(&config).unwrap().0;
    let mut rng = Rng::new(7);
    let (mut accepted, mut returned) = (HashSet::new(), HashSet::new());
    let mut flaps = 0;
    let mut now = us(0);
    let collect = |tx: Option<Tx>, returned: &mut HashSet<u64>| {
        if let Some(Tx::Data { handle, last: true, .. }) = tx {
            assert!(returned.insert(handle), "{handle} returned twice");
        }
    };
    for handle in 0..20_000u64 {
        now += std::time::Duration::from_nanos(rng.below(3_000) as u64);
        if rng.below(200) == 0 {
            let port = rng.below(4);
            sw.set_link(now, port, !sw.link_is_up(port));
            flaps += 1;
        }
        let (src, dst) = (rng.below(4) as u8, rng.below(4) as u8);
        if src != dst && sw.link_is_up(usize::from(src)) {
            let prio = if rng.below(2) == 0 { 3 } else { 0 };
            let bytes = frame(mac(src), mac(dst), prio, 64 + rng.below(1400), 0);
            if sw.handle_rx(now, usize::from(src), handle, &bytes) == RxVerdict::Accepted {
                accepted.insert(handle);
            }
        }
        for port in 0..4 {
            collect(sw.poll_tx(now, port), &mut returned);
        }
        returned.extend(freed(&mut sw));
        if handle % 97 == 0 {
            assert_ledgers_balance(&sw, 4);
        }
        if handle == 10_000 {
            sw.reset_counters(now);
        }
    }
    for port in 0..4 {
        sw.set_link(now, port, true);
    }
    for _ in 0..100_000 {
        now += std::time::Duration::from_micros(10);
        sw.handle_timeout(now);
        for port in 0..4 {
            while let Some(tx) = sw.poll_tx(now, port) {
                collect(Some(tx), &mut returned);
            }
        }
        returned.extend(freed(&mut sw));
        if returned.len() == accepted.len() {
            break;
        }
    }
    assert!(flaps > 50, "{flaps} flaps");
    assert_ledgers_balance(&sw, 4);
    assert_eq!(returned, accepted, "every accepted buffer comes back exactly once");
    for prio in [0, 3] {
        let sum = |f: &dyn Fn(usize) -> u64| (0..4).map(f).sum::<u64>();
        // Counters were reset half-way: what was held then is carried in.
        let carried = |port: usize| {
            let ledger = sw.ledger(port, Pcp::from_low_bits(prio as u8));
            ledger.ingress.carried + ledger.egress.carried
        };
        let rx = sum(&|port| sw.counters(port).priority[prio].rx_frames + carried(port));
        let tx = sum(&|port| sw.counters(port).priority[prio].tx_frames);
        let dropped = sum(&|port| DropReason::ALL.iter().map(|&r| drops(&sw, port, prio, r)).sum());
        let link_down = sum(&|port| drops(&sw, port, prio, DropReason::LinkDown));
        assert!(link_down > 0, "priority {prio}: flaps dropped frames");
        assert_eq!(rx, tx + dropped, "priority {prio}: {rx} in, {tx} out, {dropped} dropped ({link_down} link_down)");
    }
}

/// Every (port, priority) of `sw` accounts for each frame it took in, on both sides, and
/// a port's drops by reason are the two sides' drops.
fn assert_ledgers_balance(sw: &Switch, ports: usize) {
    for port in 0..ports {
        for prio in 0..8u8 {
            let ledger = sw.ledger(port, Pcp::from_low_bits(prio));
            assert!(ledger.balanced(), "port {port} priority {prio}: {ledger:?}");
            let by_reason: u64 = DropReason::ALL.iter().map(|&r| drops(sw, port, usize::from(prio), r)).sum();
            assert_eq!(by_reason, ledger.ingress.dropped + ledger.egress.dropped, "port {port} priority {prio}");
        }
    }
}
