//! SONiC's storm generator on the datapath: `pfc_gen.py` (sonic-mgmt) writes 32-byte PFC
//! frames (seven class timers) through an AF_PACKET socket, and on a veth nothing pads them to
//! 60 bytes. The frames here are packed byte for byte as pfc_gen packs them, by Python's
//! `struct` on a raw socket, independently of the project's wire code. pfcswitchd counts them
//! as PFC on the stormed priority and as short frames, and holds that priority's traffic
//! towards the stormed port while the storm lasts (`[pfc] short_frames = "pad"`, the default).

use pfcswitch_tests::topology::{Topology, serial};
use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

const FRAMES: u64 = 400;

/// pfc_gen.py's frame and send loop, paced at one frame per 5 ms: 65535 quanta last 335 ms at
/// 100 Mbit/s, so the pause never lapses between two frames.
const PFC_GEN: &str = r#"
import socket, struct, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind(("eth0", 0))
bitmap = 1 << 3
frame = (bytes.fromhex("0180c2000001") + bytes.fromhex("000102030405")
         + struct.pack("!HHH", 0x8808, 0x0101, bitmap)
         + b"".join(struct.pack("!H", 65535 if bitmap & (1 << c) else 0) for c in range(7)))
assert len(frame) == 32
for i in range(int(sys.argv[1])):
    s.send(frame)
    if i == 0:
        print("first", flush=True)
    time.sleep(0.005)
print("done", flush=True)
"#;

#[test]
fn pfc_gen_frames_are_counted_as_pfc_and_hold_the_stormed_priority() {
    let _serial = serial();
    let topology = Topology::up("star3", None);
    let sender = topology
        .command("h2", pfcswitch_tests::topology::binary("pfcswitch"))
        .args(["-j", "traffic", "send", "--iface", "eth0", "--speed", "100Mbps", "--rate", "20Mbps"])
        .args(["--dst", "02:00:00:00:00:01", "--pcp", "3", "--size", "1000", "--duration", "4s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pfcswitch traffic send");
    let tx_to_h1 = |topology: &Topology| {
        let snapshot = topology.snapshot("sw1");
        let port = &snapshot.ports[0];
        (port.priorities[3].tx_frames, port.priorities[3].peer_paused, port.short_mac_control)
    };
    pfcswitch_tests::wait_until("priority 3 flows to h1", Duration::from_secs(5), || tx_to_h1(&topology).0 > 20);

    let mut storm = topology
        .command("h1", "python3")
        .args(["-c", PFC_GEN, &FRAMES.to_string()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    let mut lines = BufReader::new(storm.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "first");
    std::thread::sleep(Duration::from_millis(300));
    let (held_at, paused, short) = tx_to_h1(&topology);
    assert!(paused, "priority 3 at p1 is paused by the storm ({short} short frames so far)");
    std::thread::sleep(Duration::from_millis(1000));
    let (still, paused, _) = tx_to_h1(&topology);
    assert!(paused, "and stays paused");
    assert_eq!(still, held_at, "no priority-3 frame leaves for h1 while the storm lasts");
    assert_eq!(lines.next().unwrap().unwrap(), "done");
    assert!(storm.wait().unwrap().success());

    let sent = sender.wait_with_output().unwrap();
    assert!(sent.status.success(), "traffic send: {}", String::from_utf8_lossy(&sent.stderr));
    pfcswitch_tests::wait_until("the held frames leave once the pause expires", Duration::from_secs(5), || {
        tx_to_h1(&topology).0 > still
    });
    let snapshot = topology.assert_ledgers_balance("sw1");
    let p1 = &snapshot.ports[0];
    assert_eq!(p1.short_mac_control, FRAMES, "every pfc_gen frame counted as short");
    assert_eq!(p1.priorities[3].pfc_rx, FRAMES, "and as PFC on priority 3");
    assert!(p1.priorities.iter().enumerate().all(|(p, q)| p == 3 || q.pfc_rx == 0), "on no other priority");
    assert!(p1.malformed.is_empty(), "none malformed: {:?}", p1.malformed);
    let lossless_drops: u64 = snapshot.ports.iter().map(|p| p.priorities[3].drops.values().sum::<u64>()).sum();
    assert_eq!(lossless_drops, 0, "priority 3 stays lossless");
    let pfcstat = String::from_utf8(topology.cli("sw1", &["pfcstat"]).stdout).unwrap();
    assert!(pfcstat.contains(&format!("p1: {FRAMES} PAUSE/PFC frames shorter than 60 bytes")), "{pfcstat}");
}
