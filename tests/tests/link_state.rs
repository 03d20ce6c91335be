//! Ports follow their links. On star3, h1 streams to h2 on lossless priority 3 and h2's
//! interface goes down mid-flow: every frame h1 sent is received by h2 or counted — by the
//! switch as `link_down` at p2, or by the kernel as dropped on p2's veth for the frames
//! already on their way when the carrier went — `ports`, the metrics and the log show p2
//! down, and when the link comes back pings reach h2 with no reload. An interface deleted
//! under the switch leaves the other ports forwarding, and once created again it carries
//! traffic within a second, with no reload and no UMEM frame lost, however often it happens;
//! `ports` shows where its classifier runs and its sockets' mode (copy: veth refuses
//! zero-copy, so the fallback is what runs here).

use pfcswitch_tests::topology::{Topology, binary, serial, star3_config};
use pfcswitch_tests::wait_until;
use std::process::Stdio;
use std::time::Duration;

/// 2.9 s at 50 Mbit/s of 1500-byte frames.
const FRAMES: u64 = 12_000;

fn link(topology: &Topology, port: &str) -> String {
    topology.snapshot("sw1").port(port).expect("star3 has the port").link.clone()
}

/// The kernel's count of frames dropped on sw1's veth `port` (sent while its peer was down).
fn veth_tx_dropped(topology: &Topology, port: &str) -> u64 {
    let output = topology.run("sw1", "cat", &[&format!("/sys/class/net/{port}/statistics/tx_dropped")]);
    String::from_utf8_lossy(&output.stdout).trim().parse().expect("a counter")
}

#[test]
fn a_host_link_going_down_loses_no_frame_uncounted_and_coming_back_carries_traffic() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    // h2's address is static, so frames for it keep heading for p2 while it is down and are
    // counted there (a learned address is flushed with the link, and its frames flood).
    let config =
        star3_config(dir.path(), |file| file + "\n[fdb]\nstatic = [{ mac = \"02:00:00:00:00:02\", port = \"p2\" }]\n");
    let topology = Topology::up("star3", Some(&config));
    assert_eq!(link(&topology, "p2"), "up");
    let dropped_before = veth_tx_dropped(&topology, "p2");

    let receiver = topology
        .command("h2", binary("pfcswitch"))
        .args(["-j", "traffic", "recv", "--iface", "eth0", "--duration", "30s", "--idle", "2s"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let mut sender = topology
        .command("h1", binary("pfcswitch"))
        .args(["traffic", "send", "--iface", "eth0", "--speed", "50Mbps", "--dst", "02:00:00:00:00:02"])
        .args(["--pcp", "3", "--frames", &FRAMES.to_string(), "--flow", "1", "--linger", "500ms"])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let sent_to_p2 = || topology.snapshot("sw1").port("p2").unwrap().priorities[3].tx_frames;
    wait_until("a quarter of the flow reaches h2", Duration::from_secs(20), || sent_to_p2() >= FRAMES / 4);

    topology.run("h2", "ip", &["link", "set", "eth0", "down"]);
    wait_until("sw1 sees p2 down", Duration::from_secs(1), || link(&topology, "p2") == "down");
    let ports = String::from_utf8_lossy(&topology.cli("sw1", &["ports"]).stdout).into_owned();
    let p2_row = ports.lines().find(|line| line.starts_with("p2 ")).expect("a row for p2");
    assert!(p2_row.split_whitespace().any(|cell| cell == "down"), "`ports` shows p2 down: {ports}");
    let metrics = topology.metrics("sw1");
    assert!(metrics.contains("pfcswitch_port_oper_up{port=\"p2\"} 0"), "{metrics}");
    assert!(metrics.contains("pfcswitch_port_oper_transitions_total{port=\"p2\"} 1"), "{metrics}");

    assert!(sender.wait().unwrap().success());
    let output = receiver.wait_with_output().unwrap();
    assert!(output.status.success(), "the receiver outlives its link going down");
    let received: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(received["receiver_drops"], 0, "the measuring receiver kept up");
    let received = received["flows"][0]["frames"].as_u64().expect("h2 received the flow");

    let snapshot = topology.assert_ledgers_balance("sw1");
    let (p1, p2) = (&snapshot.port("p1").unwrap().priorities[3], &snapshot.port("p2").unwrap().priorities[3]);
    let link_down = p2.drops["link_down"];
    let other_drops: u64 = p2.drops.values().sum::<u64>() - link_down;
    let veth_dropped = veth_tx_dropped(&topology, "p2") - dropped_before;
    println!(
        "{FRAMES} frames sent: {received} received by h2, {link_down} counted link_down at p2, \
         {veth_dropped} dropped by the kernel on p2's veth after the carrier went"
    );
    assert_eq!(p1.rx_frames, FRAMES, "sw1 received every frame h1 sent");
    assert_eq!(other_drops, 0, "no other drop: {:?}", p2.drops);
    assert!(link_down > FRAMES / 4, "the frames sent after the link went down are counted: {link_down}");
    assert_eq!(p2.tx_frames, received + veth_dropped, "what p2 sent reached h2 or the kernel counted it");
    assert_eq!(received + link_down + veth_dropped, FRAMES, "every frame received or counted");

    topology.run("h2", "ip", &["link", "set", "eth0", "up"]);
    wait_until("sw1 sees p2 up", Duration::from_secs(1), || link(&topology, "p2") == "up");
    topology.run("h1", "ping", &["-c", "3", "-i", "0.2", "-W", "1", "10.0.0.2"]);
    let log = topology.log("sw1");
    for change in ["port p2 (p2): link up -> down", "port p2 (p2): link down -> up"] {
        assert!(log.contains(change), "the log says `{change}`: {log}");
    }
}

/// Whether one ping from h1 to `address` is answered within 200 ms.
fn ping_once(topology: &Topology, address: &str) -> bool {
    topology.command("h1", "ping").args(["-c", "1", "-W", "0.2", address]).output().unwrap().status.success()
}

#[test]
fn an_interface_deleted_and_created_again_is_bound_again_within_a_second() {
    let _serial = serial();
    let topology = Topology::up("star3", None);
    assert!(ping_once(&topology, "10.0.0.2") || ping_once(&topology, "10.0.0.2"), "h2 reachable at first");
    let free_before = topology.snapshot("sw1").datapath.expect("a datapath").umem_frames_free;

    let pings = topology
        .command("h1", "ping")
        .args(["-c", "20", "-i", "0.1", "-W", "1", "10.0.0.3"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    topology.run("sw1", "ip", &["link", "del", "p2"]);
    wait_until("sw1 sees p2 absent", Duration::from_secs(1), || link(&topology, "p2") == "absent");
    let ports = String::from_utf8_lossy(&topology.cli("sw1", &["ports"]).stdout).into_owned();
    let p2_row = ports.lines().find(|line| line.starts_with("p2 ")).expect("a row for p2");
    assert!(p2_row.split_whitespace().any(|cell| cell == "absent"), "`ports` shows p2 absent: {ports}");
    assert_eq!(p2_row.split_whitespace().last(), Some("-/-"), "an absent port has no XDP mode: {ports}");
    let p1_row = ports.lines().find(|line| line.starts_with("p1 ")).expect("a row for p1");
    // veth has no AF_XDP zero-copy: the sockets fell back to copy mode.
    assert_eq!(p1_row.split_whitespace().last(), Some("native/copy"), "`ports` shows p1's XDP modes: {ports}");
    let pings = pings.wait_with_output().unwrap();
    let summary = String::from_utf8_lossy(&pings.stdout).into_owned();
    assert!(summary.contains(" 0% packet loss"), "h1 -> h3 lost nothing while p2 went away: {summary}");
    topology.assert_ledgers_balance("sw1");

    // The first port too: in copy mode the UMEM belongs to an anchor socket on lo, so no
    // port's interface takes it away.
    for round in 0..5 {
        for (port, host) in [("p2", "10.0.0.2"), ("p1", "10.0.0.3")] {
            topology.relink(&format!("sw1:{port}"));
            let recreated = std::time::Instant::now();
            wait_until(
                &format!("round {round}: h1 reaches {host} through the new {port}"),
                Duration::from_secs(1),
                || ping_once(&topology, host),
            );
            println!("round {round}: {port} recreated, first ping answered after {:?}", recreated.elapsed());
        }
    }
    for port in ["p1", "p2"] {
        assert_eq!(link(&topology, port), "up");
        let shown = topology.run("sw1", "ip", &["-d", "link", "show", "dev", port]);
        assert!(String::from_utf8_lossy(&shown.stdout).contains("prog/xdp"), "the classifier is on the new {port}");
        let xdp = topology.snapshot("sw1").port(port).unwrap().xdp.clone().expect("a datapath port");
        assert_eq!((xdp.attach.as_str(), xdp.socket.as_str()), ("native", "copy"), "the new {port}'s modes");
    }
    let free_after = topology.assert_ledgers_balance("sw1").datapath.expect("a datapath").umem_frames_free;
    assert!(
        free_after + 64 >= free_before,
        "the frames the deleted interfaces held came back: {free_before} free before, {free_after} after 11 deletions"
    );
    let log = topology.log("sw1");
    for line in [
        "port p2 (p2): link down -> absent",
        "port p2: interface p2 is gone",
        "interface p2 is back: bound again",
        "interface p1 is back: bound again",
        "port p1 (p1): link absent -> ",
    ] {
        assert!(log.contains(line), "the log says `{line}`: {log}");
    }
}
