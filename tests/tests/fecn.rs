//! FECN on the AF_XDP datapath: a probe crosses two FECN switches and comes back to its
//! source with the smaller of their advertised rates (the marking rule of §IV), reflected by
//! the destination's endpoint; tshark with the project's Lua dissector reads the probes.
//!
//! The dumbbell (configs/dumbbell, 100 Mbit/s) with FECN on priority 3 in both switches, and
//! sw2's port to h6 configured at 50 Mbit/s. Idle, every port advertises its capacity: sw1's
//! trunk 100 Mbit/s, sw2's port to h6 50 Mbit/s. h1 sends probes to h6 with a rate field
//! of 10 Gbit/s; h6's endpoint reflects them; a capture on h1 sees them come back.

use pfcswitch_tests::capture::Capture;
use pfcswitch_tests::oracle::tshark_fecn;
use pfcswitch_tests::topology::{Topology, binary, repo, serial};
use std::io::{BufRead, BufReader};
use std::process::Stdio;

const H1: &str = "02:00:00:00:00:01";
const H6: &str = "02:00:00:00:00:06";
const PROBES: u64 = 5;

/// configs/dumbbell with `[fecn]` on priority 3, sw2's p2 (to h6) at 50 Mbit/s.
fn fecn_dumbbell(dir: &std::path::Path) {
    for switch in ["sw1", "sw2"] {
        let mut file = std::fs::read_to_string(repo().join(format!("configs/dumbbell/{switch}.toml"))).unwrap();
        if switch == "sw2" {
            let p2 = "name = \"p2\"\nspeed = \"100Mbps\"";
            assert!(file.contains(p2), "configs/dumbbell/sw2.toml changed: update this test");
            file = file.replace(p2, "name = \"p2\"\nspeed = \"50Mbps\"");
        }
        file.push_str("\n[fecn]\npriorities = [3]\n");
        std::fs::write(dir.join(format!("{switch}.toml")), file).unwrap();
    }
}

/// An endpoint with nothing to send, which reflects the probes addressed to its host; its
/// stdout stays open (it says `done` later) until the caller drops it.
fn reflector(
    topology: &Topology,
    dir: &std::path::Path,
) -> (std::process::Child, std::io::Lines<BufReader<std::process::ChildStdout>>) {
    let plan = serde_json::json!({
        "host": "h6", "mac": H6, "ip": "10.0.0.6", "speed": "100Mbps", "mtu": 1500,
        "transport": {}, "qcn": null, "epoch_ns": 0, "end_ns": 0, "connections": [],
    });
    let plan_file = dir.join("h6-plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let mut child = topology
        .command("h6", binary("pfcswitch"))
        .args(["traffic", "endpoint", "--iface", "eth0", "--plan"])
        .arg(&plan_file)
        .arg("--out")
        .arg(dir.join("h6-out.json"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "ready", "h6's endpoint is up");
    (child, lines)
}

#[test]
fn a_probe_comes_back_with_the_smaller_advertised_rate_of_two_fecn_switches() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    fecn_dumbbell(dir.path());
    let topology = Topology::up("dumbbell", Some(dir.path()));
    let (mut reflector, _stdout) = reflector(&topology, dir.path());
    // Received probes come untagged to the filter (the veth strips the tag into metadata); the
    // ones h1 sends carry theirs.
    let filter = "ether proto 0x88b5 or (vlan and ether proto 0x88b5)";
    let capture = Capture::start(&topology, "h1", "eth0", filter, &dir.path().join("h1.pcap"));
    let probes = dir.path().join("probes.pcap");
    let output = std::process::Command::new(binary("pfcswitch"))
        .args(["frame", "fecn", "--src", H1, "--dst", H6, "--rate", "10Gbps", "--flow-id", "7"])
        .args(["--count", &PROBES.to_string(), "-o"])
        .arg(&probes)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let sent = topology.run("h1", binary("pfcswitch"), &["frame", "send", "--iface", "eth0", probes.to_str().unwrap()]);
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
    std::thread::sleep(std::time::Duration::from_millis(500));
    let pcap = capture.stop();
    unsafe { libc::kill(reflector.id() as i32, libc::SIGTERM) };
    assert!(reflector.wait().unwrap().success(), "the reflector stops cleanly");

    let sw2_p2 = topology.snapshot("sw2").port("p2").expect("sw2 has p2").mac.clone();
    let read = tshark_fecn(&pcap);
    let reflected: Vec<_> = read.iter().filter(|r| r["subtype"] == "2").collect();
    let sent: Vec<_> = read.iter().filter(|r| r["subtype"] == "1").collect();
    println!("h1 captured {} probes sent and {} reflected: {reflected:?}", sent.len(), reflected.len());
    assert_eq!(sent.len() as u64, PROBES, "h1 sent its probes");
    assert_eq!(reflected.len(), sent.len(), "every probe came back");
    for r in &reflected {
        assert_eq!(r["rate_kbps"], "50000", "the smaller of 100 and 50 Mbit/s: {r:?}");
        assert_eq!(r["hops"], "2", "both switches examined it: {r:?}");
        assert_eq!(r["bottleneck"], sw2_p2, "sw2's port to h6 set it: {r:?}");
        assert_eq!(r["flow_id"], "7", "{r:?}");
        assert_eq!(r["expert"], "", "no expert message: {r:?}");
    }
    for (switch, port) in [("sw1", "p6"), ("sw2", "p2")] {
        let snapshot = topology.snapshot(switch);
        let point = snapshot.fecn.as_ref().unwrap().points.iter().find(|r| r.port == port && r.priority == 3).unwrap();
        assert!(point.intervals > 100, "{switch}:{port} measures every 1 ms: {point:?}");
        assert_eq!(point.probes_marked, PROBES, "{switch}:{port} lowered every probe: {point:?}");
    }
}
