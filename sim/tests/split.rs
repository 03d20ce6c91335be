//! A network split over two threads runs as it does on one: on a k = 4 fat-tree with an
//! incast that makes the switches pause their peers, every transmission (time, end, length,
//! priority, pause content), every pause's arrival, every switch counter and every
//! connection's record are the same, through runs stopped and resumed around a link going
//! down and up, or stopped where frames were sent and given new flows. And what needs one
//! thread (a tap, a lossy cable, a network that ran) refuses the split.

mod common;

use common::{connection, host_ip, host_mac};
use pfcswitch_hosts::{MessageSpec, Transport, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::fabric::Fabric;
use pfcswitch_sim::{Endpoint, Network, SimHost};
use pfcswitch_switch::config::SwitchConfig;
use std::time::Duration;

const SPEED: BitRate = BitRate::gbps(1);

fn fat_tree() -> Network {
    let fabric = Fabric::fat_tree(4, SPEED, 1);
    let configs = fabric.switch_configs(&SwitchConfig::with_ports("base", 1, SPEED), host_mac);
    let mut net =
        fabric.network(&configs, |i| SimHost::new(host_mac(i), host_ip(i), SPEED), Duration::from_micros(1)).unwrap();
    for (i, host) in net.hosts.iter_mut().enumerate() {
        host.transport = Some(Transport::new(TransportConfig::new(host_mac(i), host_ip(i), SPEED)));
    }
    net
}

/// What a run leaves that a user reads: the trace, the pauses, the counters, the records.
type Outcome = (Vec<String>, Vec<String>, Vec<String>, pfcswitch_sim::SimStats);

/// The incast below, run as `drive` runs it.
fn run(split: bool, drive: &dyn Fn(&mut Network)) -> Outcome {
    let mut net = incast(split);
    drive(&mut net);
    outcome(net)
}

/// Twelve hosts of pods 0–2 answer host 15 at once (an incast: pauses back into the
/// fabric), and pod 3's hosts send to pod 0's.
fn incast(split: bool) -> Network {
    let mut net = fat_tree();
    net.enable_trace();
    net.log_pause_arrivals();
    if split {
        net.split().expect("a fat-tree splits");
    }
    let start = net.now();
    for sender in 0..12 {
        add(&mut net, sender as u32, sender, 15, 200_000, start);
    }
    for sender in 12..15 {
        add(&mut net, sender as u32, sender, sender - 12, 500_000, start);
    }
    net
}

fn add(net: &mut Network, id: u32, sender: usize, receiver: usize, size: u32, start: Instant) {
    let message = MessageSpec { id: 0, size: Some(size), start };
    net.hosts[sender].transport.as_mut().unwrap().add_connection(connection(id, receiver), vec![message]);
}

fn outcome(net: Network) -> Outcome {
    let trace = net.trace().iter().map(|r| format!("{r:?}")).collect();
    let pauses: Vec<String> = net.pause_arrivals().iter().map(|p| format!("{p:?}")).collect();
    let mut state: Vec<String> = (net.switches.iter())
        .flat_map(|s| (0..s.port_count()).map(move |port| format!("{:?}", s.counters(port))))
        .collect();
    for host in &net.hosts {
        let transport = host.transport.as_ref().unwrap();
        state.extend(transport.sender_stats().map(|record| format!("{record:?}")));
    }
    (trace, pauses, state, net.stats())
}

/// A core link down for a while, mid-run: the next run polls every node again.
fn with_a_link_fault(net: &mut Network) {
    net.run_for(Duration::from_millis(2));
    net.set_link(Endpoint::switch(16, 0), false);
    net.run_for(Duration::from_millis(1));
    net.set_link(Endpoint::switch(16, 0), true);
    net.run_for(Duration::from_millis(100));
}

/// Stopped at instants something was sent (where the parts have polled, some more often than
/// others), and given there a flow from a host of each half to host 4: flows added between
/// runs start at the stop, on one thread and on two alike.
fn flows_added_where_the_halves_polled(net: &mut Network, stops: &[Instant]) {
    for (i, &at) in stops.iter().enumerate() {
        net.run_until(at);
        for (k, sender) in [1, 9].into_iter().enumerate() {
            add(net, 100 + 2 * i as u32 + k as u32, sender, 4, 3_000, at);
        }
    }
    net.run_for(Duration::from_millis(100));
}

#[test]
fn a_split_network_runs_as_one_thread_does() {
    assert_runs_alike(run(false, &with_a_link_fault), run(true, &with_a_link_fault));
}

#[test]
fn flows_added_mid_run_on_a_split_network_run_as_on_one_thread() {
    let mut net = incast(false);
    net.run_for(Duration::from_millis(2));
    let mut sent: Vec<Instant> = net.trace().iter().map(|r| r.start).collect();
    sent.dedup();
    let stops: Vec<Instant> = sent.into_iter().step_by(25).collect();
    let drive = |net: &mut Network| flows_added_where_the_halves_polled(net, &stops);
    assert_runs_alike(run(false, &drive), run(true, &drive));
}

fn assert_runs_alike(one: Outcome, two: Outcome) {
    let ((one_trace, one_pauses, one_state, one), (two_trace, two_pauses, two_state, two)) = (one, two);
    assert!(one_pauses.len() > 10, "the incast pauses the fabric: {} pauses", one_pauses.len());
    assert_eq!(one_trace.len(), two_trace.len(), "as many transmissions");
    for (i, (a, b)) in one_trace.iter().zip(&two_trace).enumerate() {
        assert_eq!(a, b, "transmission {i}");
    }
    assert_eq!(one_pauses, two_pauses);
    assert_eq!(one_state, two_state);
    assert_eq!((one.events, one.frame_hops), (two.events, two.frame_hops));
}

#[test]
fn what_needs_one_thread_refuses_a_split() {
    let mut tapped = fat_tree();
    tapped.tap(vec![Endpoint::host(0)], Box::new(|_, _, _| {}));
    assert!(tapped.split().unwrap_err().contains("tap"));
    let mut lossy = fat_tree();
    lossy.set_loss(Endpoint::host(0), 0.01);
    assert!(lossy.split().unwrap_err().contains("lossy"));
    let mut ran = fat_tree();
    ran.run_for(Duration::from_micros(10));
    assert!(ran.split().unwrap_err().contains("run"));
}
