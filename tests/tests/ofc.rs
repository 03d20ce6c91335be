//! OFC on the AF_XDP datapath: next to plain-PFC switches, an incast stays lossless through
//! both arrangements (OFC upstream of PFC and PFC upstream of OFC).
//!
//! The ofc-fig1 chain sw1 — sw2 — sw3 at 100 Mbit/s with sw1 and sw3 on `ofc` and sw2 on
//! `pfc`. h1 and h2 (on sw1) and h6 and h7 (on sw3) send 1500-byte frames on priority 3 to
//! h10 (on sw3) at line rate: 4:1 into h10's port. sw3's port from sw2 sends OFC PAUSE frames
//! to sw2, which knows only PFC and pauses the whole priority; sw2 then pauses sw1 with plain
//! PFC, which sw1 takes as "every flow paused" and turns into OFC PAUSE frames to h1 and h2.

use pfcswitch_tests::topology::{Topology, binary, repo, serial};
use std::process::{Child, Stdio};

const FRAMES: u64 = 2000;
const SENDERS: [(&str, &str); 4] = [("h1", "1"), ("h2", "2"), ("h6", "6"), ("h7", "7")];

/// configs/ofc-fig1 with sw1 and sw3 on `ofc` and sw2 on `pfc`.
fn mixed_configs(dir: &std::path::Path) {
    for (switch, kind) in [("sw1", "ofc"), ("sw2", "pfc"), ("sw3", "ofc")] {
        let file = std::fs::read_to_string(repo().join(format!("configs/ofc-fig1/{switch}.toml"))).unwrap();
        let file = file.replace("kind = \"pfc\"", &format!("kind = \"{kind}\""));
        assert!(file.contains(&format!("kind = \"{kind}\"")), "{switch}'s config names its policy");
        std::fs::write(dir.join(format!("{switch}.toml")), file).unwrap();
    }
}

fn send(topology: &Topology, host: &str, flow: &str) -> Child {
    topology
        .command(host, binary("pfcswitch"))
        .args(["traffic", "send", "--iface", "eth0", "--speed", "100Mbps", "--dst", "02:00:00:00:00:0a"])
        .args(["--pcp", "3", "--frames", &FRAMES.to_string(), "--flow", flow, "--linger", "500ms"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn an_incast_through_ofc_and_pfc_switches_loses_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    mixed_configs(dir.path());
    let topology = Topology::up("ofc-fig1", Some(dir.path()));
    let receiver = topology
        .command("h10", binary("pfcswitch"))
        .args(["-j", "traffic", "recv", "--iface", "eth0", "--duration", "90s", "--idle", "3s"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let senders: Vec<Child> = SENDERS.iter().map(|(host, flow)| send(&topology, host, flow)).collect();
    for mut sender in senders {
        assert!(sender.wait().unwrap().success());
    }
    let output = receiver.wait_with_output().unwrap();
    let received: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(received["receiver_drops"], 0, "the measuring receiver kept up");
    let frames: Vec<u64> =
        received["flows"].as_array().unwrap().iter().map(|f| f["frames"].as_u64().unwrap()).collect();

    let snapshots = ["sw1", "sw2", "sw3"].map(|sw| topology.snapshot(sw));
    let drops: u64 =
        (snapshots.iter().flat_map(|s| &s.ports)).map(|p| p.priorities[3].drops.values().sum::<u64>()).sum();
    let ofc_counters = |switch: usize, port: &str| {
        let report = snapshots[switch].ofc.as_ref().expect("ofc");
        report.queues.iter().find(|q| q.port == port && q.priority == 3).unwrap().counters.clone()
    };
    let (sw3_from_sw2, sw1_to_sw2) = (ofc_counters(2, "p1"), ofc_counters(0, "p3"));
    println!(
        "received {frames:?} of {FRAMES} per flow; {drops} dropped; sw3→sw2 OFC PAUSE {} RESUME {}; \
         sw2→sw1 PFC frames {}; sw1→h1 OFC PAUSE {}",
        sw3_from_sw2.pause_tx,
        sw3_from_sw2.resume_tx,
        snapshots[0].port("p3").unwrap().priorities[3].pfc_rx,
        ofc_counters(0, "p1").pause_tx,
    );
    assert_eq!(frames, [FRAMES; 4], "every frame of every flow arrived");
    assert_eq!(drops, 0, "no switch dropped a lossless frame");
    assert!(sw3_from_sw2.pause_tx > 0, "OFC (sw3) paused its PFC-only upstream (sw2)");
    assert!(snapshots[1].port("p5").unwrap().priorities[3].pfc_rx > 0, "sw2 obeyed them as PFC frames");
    assert!(snapshots[1].port("p1").unwrap().priorities[3].pfc_tx > 0, "sw2 paused sw1 with plain PFC");
    assert_eq!(sw1_to_sw2.pause_rx, 0, "which carries no flows");
    assert!(ofc_counters(0, "p1").pause_tx + ofc_counters(0, "p2").pause_tx > 0, "sw1 (OFC) paused its hosts");
}
