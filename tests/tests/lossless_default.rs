//! The default policy keeps lossless priorities lossless. A user's switch
//! (configs/pfc-only.toml: three 20 Mbit/s ports and only the documented `[pfc]` keys), and a 2:1 incast of
//! PFC-obeying senders at line rate on priority 3. Under `pfc` (the default) nothing is lost;
//! under the CaPFC paper's `pfc-wdrop` the same switch drops at the full egress queue, and
//! `--check` and the reload say so beforehand, with the numbers.

use pfcswitch_tests::topology::{Incast, Topology, binary, repo, serial};
use std::path::Path;
use std::process::Command;

/// 3000 frames of 1500 B per sender: 3.6 s of the receiver's 20 Mbit/s port.
const FRAMES: u64 = 3000;

fn check(config: &Path) -> String {
    let output = Command::new(binary("pfcswitchd")).arg("--check").arg("--config").arg(config).output().unwrap();
    assert!(output.status.success(), "--check: {output:?}");
    String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr)
}

fn priority3_drops(topology: &Topology, port: &str, reason: &str) -> u64 {
    topology.snapshot("sw1").port(port).unwrap().priorities[3].drops[reason]
}

#[test]
fn a_pfc_only_config_is_lossless_under_pfc_and_drops_at_egress_under_pfc_wdrop() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sw1.toml");
    let file = std::fs::read_to_string(repo().join("configs/pfc-only.toml")).unwrap();
    std::fs::write(&config, &file).unwrap();
    let checked = check(&config);
    assert!(checked.contains("valid (3 ports, policy pfc)") && !checked.contains("warn"), "{checked}");

    let topology = Topology::up("star3", Some(&config));
    Incast::at_speed(&topology, FRAMES, "20Mbps").assert_lossless(&topology);
    let snapshot = topology.snapshot("sw1");
    for port in &snapshot.ports {
        let drops: u64 = port.priorities[3].drops.values().sum();
        assert_eq!(drops, 0, "no drop on priority 3 at {}: {:?}", port.name, port.priorities[3].drops);
    }
    let p3 = snapshot.port("p3").unwrap();
    let (pfc_sent, egress_high_water) =
        (snapshot.port("p1").unwrap().priorities[3].pfc_tx, p3.priorities[3].egress_high_water);
    assert!(pfc_sent > 0, "the incast paused h1");
    assert!(egress_high_water > 60_000, "p3's queue held more than the old 60 KB egress limit: {egress_high_water} B");
    println!(
        "pfc: 0 of {} frames lost, p3's queue peaked at {egress_high_water} B, {pfc_sent} PFC frames to h1",
        2 * FRAMES
    );

    std::fs::write(&config, format!("{file}\n[policy]\nkind = \"pfc-wdrop\"\n")).unwrap();
    let checked = check(&config);
    assert!(
        checked.contains("buffer.egress_max")
            && checked.contains("2 ports × pfc.max 98304 B = 196608 B")
            && checked.contains("holds 60000 B"),
        "--check warns with the keys and the numbers: {checked}"
    );
    let reload = String::from_utf8_lossy(&topology.cli("sw1", &["reload"]).stdout).into_owned();
    assert!(reload.contains("warning: buffer.egress_max"), "the reload warns too: {reload}");
    topology.cli("sw1", &["counters", "--reset"]);
    let lost: u64 = Incast::at_speed(&topology, FRAMES, "20Mbps").lost().iter().sum();
    let egress_full = priority3_drops(&topology, "p3", "egress_full");
    assert!(egress_full > 0, "pfc-wdrop drops at p3's full egress queue");
    assert_eq!(lost, egress_full, "every egress drop is a frame the receiver missed");
    println!("pfc-wdrop: {lost} of {} frames lost, all egress_full at p3", 2 * FRAMES);
}
