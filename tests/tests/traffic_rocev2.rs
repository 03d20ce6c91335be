//! `pfcswitch traffic send --rocev2 --dcqcn` and `traffic recv --rocev2` by hand, through
//! pfcswitchd: star3 (h1, h2, h3 on sw1 at 100 Mbit/s, PFC on priority 3) with ECN marking
//! every ECT frame that finds more than 5 KB queued on priority 3. Two RoCEv2 senders into
//! h3 make p3's queue: its frames arrive CE, h3's transport answers with CNPs, and the
//! senders' DCQCN reaction points cut their rates. Nothing is lost on the way.

use pfcswitch_tests::topology::{Topology, binary, serial, star3_config};
use serde_json::Value;
use std::process::{Child, Stdio};
use std::time::Duration;

fn finish(child: Child, what: &str) -> Value {
    let output = child.wait_with_output().expect("wait");
    assert!(output.status.success(), "{what} failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", String::from_utf8_lossy(&output.stdout)))
}

#[test]
fn two_rocev2_senders_into_one_port_get_cnps_cut_their_rate_and_lose_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let config = star3_config(dir.path(), |c| format!("{c}\n[ecn]\npriorities = [3]\nmin = \"5KB\"\nmax = \"5KB\"\n"));
    let topology = Topology::up("star3", Some(&config));
    let receiver = topology
        .command("h3", binary("pfcswitch"))
        .args(["-j", "traffic", "recv", "--rocev2", "--iface", "eth0", "--duration", "60s", "--idle", "2s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the receiver");
    std::thread::sleep(Duration::from_millis(300));
    let senders = [("h1", "1"), ("h2", "2")].map(|(host, flow)| {
        let child = topology
            .command(host, binary("pfcswitch"))
            .args(["-j", "traffic", "send", "--rocev2", "--iface", "eth0", "--speed", "100Mbps"])
            .args(["--dst", "02:00:00:00:00:03", "--dst-ip", "10.0.0.3", "--pcp", "3", "--flow", flow])
            .args(["--duration", "3s", "--linger", "500ms", "--dcqcn", "--dcqcn-params", "min_rate = \"10Mbps\""])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn a sender");
        (flow, child)
    });
    let sent: Vec<(u64, Value)> =
        senders.into_iter().map(|(flow, child)| (flow.parse().unwrap(), finish(child, "sender"))).collect();
    let received = finish(receiver, "receiver");
    let snapshot = topology.snapshot("sw1");
    let marked = snapshot.port("p3").unwrap().priorities[3].ecn_marked;
    println!("receiver: {received}");
    for (flow, s) in &sent {
        println!("sender {flow}: {s}");
    }
    println!("p3 marked {marked} frames CE on priority 3");

    let flows = received["flows"].as_array().expect("flows");
    assert_eq!(flows.len(), 2, "both connections reached h3: {received}");
    assert!(marked > 0, "two senders into one port queued more than 5 KB on p3");
    for (flow, s) in &sent {
        let r = flows.iter().find(|f| f["flow"].as_u64() == Some(*flow)).unwrap_or_else(|| panic!("flow {flow}"));
        let bytes = r["bytes"].as_u64().unwrap();
        assert!(bytes > 1_000_000, "flow {flow} carried data: {r}");
        assert_eq!(s["bytes_acked"].as_u64(), Some(bytes), "h3 acknowledged every byte of flow {flow}: {s} / {r}");
        // The network loses nothing (no drop on priority 3, below); an endpoint's socket may,
        // when the CPU starves it on a busy two-core machine, and says so.
        let (receiver_drops, sender_drops) = (received["receiver_drops"].as_u64(), s["receive_drops"].as_u64());
        if receiver_drops == Some(0) && sender_drops == Some(0) {
            assert_eq!((s["retransmitted"].as_u64(), s["naks"].as_u64()), (Some(0), Some(0)), "no loss: {s}");
            assert_eq!((r["out_of_order"].as_u64(), r["duplicates"].as_u64()), (Some(0), Some(0)), "in order: {r}");
        }
        let cnps = s["cnps"].as_u64().unwrap();
        assert!(cnps > 0, "flow {flow}'s CE-marked segments brought CNPs: {s}");
        let cnps_sent = r["cnps_sent"].as_u64().unwrap();
        if sender_drops == Some(0) {
            assert_eq!(cnps_sent, cnps, "every CNP h3 sent for flow {flow} reached its sender");
        } else {
            assert!(cnps <= cnps_sent, "no CNP from nowhere: {cnps} > {cnps_sent}");
        }
        let lowest = s["dcqcn"]["lowest_rate_bps"].as_u64().expect("a DCQCN reaction point");
        assert!(lowest < 100_000_000, "the CNPs cut flow {flow}'s rate below the line: {s}");
    }
    for port in &snapshot.ports {
        assert_eq!(port.priorities[3].drops.values().sum::<u64>(), 0, "no drop on priority 3 at {}", port.name);
    }
}
