//! ECN marking on the datapath: star3 with `[ecn]` on priority 0 (kernel TCP is untagged)
//! at DCTCP's step K = 20 KB, and the hosts' kernels negotiating ECN (net.ipv4.tcp_ecn=1).
//! A 2:1 TCP incast into h3 fills p3's queue beyond K: the frames that reach h3 carry CE,
//! tshark finds their IPv4 checksums valid, and the switch counts what it marked.

use pfcswitch_tests::capture::Capture;
use pfcswitch_tests::oracle::tshark_fields;
use pfcswitch_tests::topology::{Topology, repo, serial};
use std::process::Stdio;
use std::time::Duration;

#[test]
fn tcp_frames_through_a_queue_above_k_arrive_marked_ce_with_valid_checksums() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sw1.toml");
    let default = std::fs::read_to_string(repo().join("configs/default.toml")).unwrap();
    std::fs::write(&config, format!("{default}\n[ecn]\npriorities = [0]\nmin = \"20KB\"\nmax = \"20KB\"\n")).unwrap();
    let topology = Topology::up("star3", Some(&config));
    for host in ["h1", "h2", "h3"] {
        topology.run(host, "sysctl", &["-qw", "net.ipv4.tcp_ecn=1"]);
    }
    let capture = Capture::start(&topology, "h3", "eth0", "ip and ip[1] & 3 = 3", &dir.path().join("h3.pcap"));
    let servers: Vec<_> = ["5201", "5202"]
        .iter()
        .map(|port| {
            topology.command("h3", "iperf3").args(["-s", "-1", "-p", port]).stdout(Stdio::null()).spawn().unwrap()
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let clients: Vec<_> = [("h1", "5201"), ("h2", "5202")]
        .iter()
        .map(|(host, port)| {
            topology
                .command(host, "iperf3")
                .args(["-c", "10.0.0.3", "-p", port, "-t", "3"])
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in clients.into_iter().chain(servers) {
        assert!(child.wait_with_output().unwrap().status.success(), "iperf3 failed");
    }
    let pcap = capture.stop();
    let marked = topology.snapshot("sw1").port("p3").unwrap().priorities[0].ecn_marked;
    let rows = tshark_fields(&pcap, &["ip.dsfield.ecn", "ip.checksum.status"], &["ip.check_checksum:TRUE"]);
    println!("p3 marked {marked} frames CE; h3 captured {} CE frames", rows.len());
    assert!(marked > 100, "the incast kept p3's queue above K: {marked} marks");
    assert!(rows.len() > 100, "CE frames reached h3: {}", rows.len());
    assert!(rows.len() as u64 <= marked, "every CE frame h3 saw was marked by the switch");
    for row in &rows {
        assert_eq!(row, &["3", "1"], "CE with a good IPv4 checksum (Wireshark's status 1)");
    }
}
