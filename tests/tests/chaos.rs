//! Chaos on leaf-spine-2s (two leaves, two spines, static ECMP over both): lossless flows
//! run while the four leaf-spine links flap at random, seeded — set down and up, or deleted
//! and created again, from either end — and one spine's daemon is killed and restarted
//! half-way. Afterwards every daemon is up, every switch's ledger balanced after every
//! fault, the flows within one leaf (which cross no flapped link) were not paused by their
//! leaf and lost nothing, the flows across the fabric carry traffic again, the neighbours of the killed
//! spine hold no pause towards it, and no daemon's memory grew.
//!
//! `PFCSWITCH_CHAOS_SEED` replays another schedule (the seed is printed).

use pfcswitch_link::rng::Rng;
use pfcswitch_link::shaper::wire_bytes;
use pfcswitch_tests::topology::{Topology, repo, serial};
use pfcswitch_tests::wait_until;
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const SWITCHES: [&str; 4] = ["sw1", "sw2", "sw3", "sw4"];
/// The leaf-spine links, leaf end first.
const FABRIC: [[(&str, &str); 2]; 4] = [
    [("sw1", "p3"), ("sw3", "p1")],
    [("sw1", "p4"), ("sw4", "p1")],
    [("sw2", "p3"), ("sw3", "p2")],
    [("sw2", "p4"), ("sw4", "p2")],
];
const FLAPS: usize = 56;
/// Each flow's offered rate and length: little enough that two cores carry four of them
/// through four switches with room to spare, so a lost rate is the faults' doing. Every flap
/// must fall while the flows run: on a loaded two-core VM a flap took 0.54 s (48 flaps in the
/// 26 s that 30 s of flows left, a red fresh-clone run), so 56 of them get 36 s.
const RATE_BPS: u64 = 10_000_000;
const SEND_FOR: Duration = Duration::from_secs(40);
const FRAME: usize = 1500;

/// A lossless flow: sender, receiver, and whether it crosses the fabric.
struct Flow {
    id: u32,
    from: &'static str,
    to: &'static str,
    crosses: bool,
}

/// The leaf port of each within-leaf sender (leaf-spine-2s: h1 on sw1:p1, h3 on sw2:p1).
fn leaf_port(host: &str) -> (&'static str, &'static str) {
    match host {
        "h1" => ("sw1", "p1"),
        "h3" => ("sw2", "p1"),
        other => unreachable!("{other} sends across the fabric"),
    }
}

const FLOWS: [Flow; 4] = [
    Flow { id: 1, from: "h1", to: "h2", crosses: false },
    Flow { id: 2, from: "h3", to: "h4", crosses: false },
    Flow { id: 3, from: "h2", to: "h3", crosses: true },
    Flow { id: 4, from: "h4", to: "h1", crosses: true },
];

fn mac(host: &str) -> String {
    format!("02:00:00:00:00:{:02x}", host[1..].parse::<u8>().unwrap())
}

fn spawn_json(topology: &Topology, host: &str, args: &[&str]) -> Child {
    topology
        .command(host, pfcswitch_tests::topology::binary("pfcswitch"))
        .arg("-j")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap()
}

fn json_of(child: Child) -> Value {
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// Every fabric link is up as both its ends' daemons see it.
fn fabric_up(topology: &Topology) -> bool {
    SWITCHES.iter().all(|&switch| {
        let snapshot = topology.snapshot(switch);
        let ends = FABRIC.iter().flatten().filter(|(at, _)| *at == switch);
        ends.into_iter().all(|(_, port)| snapshot.port(port).is_some_and(|p| p.link == "up"))
    })
}

fn resident(topology: &Topology, switch: &str) -> u64 {
    topology.snapshot(switch).datapath.expect("a datapath").resident_bytes
}

fn lossless_tx(topology: &Topology, switch: &str, port: &str) -> u64 {
    topology.snapshot(switch).port(port).unwrap().priorities[3].tx_frames
}

#[test]
fn lossless_flows_survive_random_link_flaps_and_a_spine_restart() {
    let _serial = serial();
    let seed = std::env::var("PFCSWITCH_CHAOS_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(26);
    println!("chaos seed {seed} (PFCSWITCH_CHAOS_SEED replays it)");
    let mut rng = Rng::new(seed);
    let topology = Topology::up("leaf-spine-2s", None);
    // The leaves learn their own hosts (the fabric's addresses are static).
    topology.run("h1", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.2"]);
    topology.run("h3", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.4"]);

    let receivers: Vec<(&str, Child)> = ["h1", "h2", "h3", "h4"]
        .into_iter()
        .map(|host| {
            (
                host,
                spawn_json(
                    &topology,
                    host,
                    &["traffic", "recv", "--iface", "eth0", "--duration", "60s", "--idle", "3s"],
                ),
            )
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let duration = format!("{}s", SEND_FOR.as_secs());
    let rate = format!("{}Mbps", RATE_BPS / 1_000_000);
    let senders: Vec<Child> = FLOWS
        .iter()
        .map(|flow| {
            let (dst, id) = (mac(flow.to), flow.id.to_string());
            let args = ["traffic", "send", "--iface", "eth0", "--speed", "100Mbps", "--rate", &rate, "--pcp", "3"];
            let args =
                [&args[..], &["--dst", &dst, "--flow", &id, "--duration", &duration, "--linger", "500ms"]].concat();
            spawn_json(&topology, flow.from, &args)
        })
        .collect();
    let started = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let mut rss_before: Vec<u64> = SWITCHES.iter().map(|switch| resident(&topology, switch)).collect();

    // The spine's daemon that is killed half-way; its replacement is ours to stop (declared
    // after the topology: dropped before it).
    let mut restarted = None;
    let mut flaps = 0;
    let mut kinds = [0usize; 2];
    while flaps < FLAPS {
        assert!(started.elapsed() < SEND_FOR - Duration::from_secs(4), "{flaps} flaps before the flows end");
        let link = FABRIC[rng.below(FABRIC.len())];
        let (switch, port) = link[rng.below(2)];
        let outage = Duration::from_millis(20 + rng.below(150) as u64);
        if rng.below(2) == 0 {
            topology.run(switch, "ip", &["link", "set", "dev", port, "down"]);
            std::thread::sleep(outage);
            topology.run(switch, "ip", &["link", "set", "dev", port, "up"]);
            kinds[0] += 1;
        } else {
            topology.run(switch, "ip", &["link", "del", "dev", port]);
            std::thread::sleep(outage);
            let (leaf, leaf_port) = link[0];
            topology.relink(&format!("{leaf}:{leaf_port}"));
            kinds[1] += 1;
        }
        flaps += 1;
        wait_until(&format!("flap {flaps} ({switch}:{port}): the fabric is up again"), Duration::from_secs(3), || {
            fabric_up(&topology)
        });
        for switch in SWITCHES {
            topology.assert_ledgers_balance(switch);
        }
        if flaps == FLAPS / 2 {
            // SIGKILL: no goodbye, the kernel detaches its XDP program.
            // SAFETY: kill(2) on the daemon `topology up` started for this test.
            unsafe { libc::kill(topology.pid("sw4") as i32, libc::SIGKILL) };
            std::thread::sleep(Duration::from_millis(300));
            let config = repo().join("configs/leaf-spine-2s/sw4.toml");
            restarted = Some(topology.start_daemon("sw4", &config, &[]));
            topology.wait_ready("sw4");
            wait_until("sw4's neighbours hold no pause towards it", Duration::from_secs(2), || {
                ["sw1", "sw2"].iter().all(|leaf| {
                    let snapshot = topology.snapshot(leaf);
                    let p4 = &snapshot.port("p4").unwrap().priorities[3];
                    !p4.peer_paused && !p4.pausing_peer
                })
            });
            rss_before[3] = resident(&topology, "sw4");
        }
        std::thread::sleep(Duration::from_millis(20 + rng.below(130) as u64));
    }
    let chaos = started.elapsed();

    // The flows across the fabric carry traffic again.
    let across = || lossless_tx(&topology, "sw2", "p1") + lossless_tx(&topology, "sw1", "p1");
    let before = across();
    std::thread::sleep(Duration::from_millis(500));
    let after = across();
    assert!(after > before + 200, "the flows across the fabric resumed: {before} -> {after} frames to h3 and h1");

    let sent: Vec<Value> = senders.into_iter().map(json_of).collect();
    let received: Vec<(&str, Value)> = receivers.into_iter().map(|(host, child)| (host, json_of(child))).collect();
    let expected = (RATE_BPS as f64 * SEND_FOR.as_secs_f64() / (wire_bytes(FRAME) * 8) as f64) as u64;
    let mut link_down = 0;
    for switch in SWITCHES {
        let snapshot = topology.assert_ledgers_balance(switch);
        link_down += snapshot.ports.iter().map(|p| p.priorities[3].drops["link_down"]).sum::<u64>();
        // SAFETY: kill(pid, 0) only checks that the process exists.
        let alive = switch == "sw4" || unsafe { libc::kill(topology.pid(switch) as i32, 0) } == 0;
        assert!(alive, "{switch}'s daemon is up");
    }
    println!(
        "{flaps} flaps in {:.1} s ({} down/up, {} delete/recreate), sw4 killed and restarted after {}; \
         {link_down} lossless frames counted link_down",
        chaos.as_secs_f64(),
        kinds[0],
        kinds[1],
        FLAPS / 2
    );
    for (flow, sent) in FLOWS.iter().zip(&sent) {
        let receiver = &received.iter().find(|(host, _)| *host == flow.to).unwrap().1;
        assert_eq!(receiver["receiver_drops"], 0, "the receiver in {} kept up", flow.to);
        let arrived =
            receiver["flows"].as_array().unwrap().iter().find(|f| f["flow"] == flow.id).expect("the flow arrived");
        let (frames, got) = (sent["frames"].as_u64().unwrap(), arrived["frames"].as_u64().unwrap());
        let kept = frames as f64 / expected as f64;
        println!(
            "flow {} {}->{}{}: sent {frames} frames ({:.1} % of the offered rate), {got} received",
            flow.id,
            flow.from,
            flow.to,
            if flow.crosses { " across the fabric" } else { " within a leaf" },
            kept * 100.0
        );
        if !flow.crosses {
            assert_eq!(got, frames, "flow {}: nothing lost within the leaf", flow.id);
            // What the switch decides: its leaf did not hold the sender back for the faults
            // elsewhere. The rate the sender kept also measures the machine: on a slow VM the
            // paced sender falls behind by itself (74 % kept with 2 ms of pause in one run),
            // so it is printed, not asserted.
            let (leaf, port) = leaf_port(flow.from);
            let paused = topology.snapshot(leaf).port(port).unwrap().priorities[3].pausing_seconds;
            assert!(
                paused < 0.05 * SEND_FOR.as_secs_f64(),
                "flow {}: {leaf}:{port} paused {} for {paused:.3} s of {} s",
                flow.id,
                flow.from,
                SEND_FOR.as_secs()
            );
        }
    }
    for (index, switch) in SWITCHES.iter().enumerate() {
        let now = resident(&topology, switch);
        println!("{switch}: resident {} KiB before, {} KiB after", rss_before[index] / 1024, now / 1024);
        assert!(now <= rss_before[index] + (2 << 20), "{switch}'s memory grew: {} -> {now}", rss_before[index]);
    }
    drop(restarted);
}
