//! OFC on the AF_XDP datapath: the OFC frames pfcswitchd sends, checked on the wire by tshark,
//! scapy and pfcswitch_wire; and next to plain-PFC switches, an incast stays lossless through both
//! arrangements (OFC upstream of PFC and PFC upstream of OFC).
//!
//! The ofc-fig1 chain sw1 — sw2 — sw3 at 100 Mbit/s with sw1 and sw3 on `ofc` and sw2 on
//! `pfc`. h1 and h2 (on sw1) and h6 and h7 (on sw3) send 1500-byte frames on priority 3 to
//! h10 (on sw3) at line rate: 4:1 into h10's port. sw3's port from sw2 sends OFC PAUSE frames
//! to sw2, which knows only PFC and pauses the whole priority; sw2 then pauses sw1 with plain
//! PFC, which sw1 takes as "every flow paused" and turns into OFC PAUSE frames to h1 and h2,
//! each 60 bytes on the wire (captured).

use pfcswitch_tests::Rng;
use pfcswitch_tests::capture::Capture;
use pfcswitch_tests::oracle::{
    DissectedOfc, read_pcap, scapy, tshark_expert_messages, tshark_fields, tshark_ofc, write_pcap,
};
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::{Incast, Topology, binary, repo, serial, star3_config};
use pfcswitch_wire::{
    FlowKey, FrameView, MacControlRepr, OfcHeader, OfcOp, Pcp, build_ofc_frame, ofc_frame_len, ofc_max_entries,
};
use std::process::{Child, Stdio};

/// star3's default switch (configs/default.toml) under `ofc`.
fn ofc_star3(dir: &std::path::Path) -> std::path::PathBuf {
    star3_config(dir, |file| file.replace("kind = \"pfc\"", "kind = \"ofc\""))
}

/// What pfcswitch_wire put in `frame`, as the Lua dissector should show it.
fn expected(frame: &[u8]) -> DissectedOfc {
    let ofc = FrameView::parse(frame).unwrap().ofc().unwrap().unwrap();
    DissectedOfc {
        op: if ofc.op == OfcOp::Pause { 1 } else { 2 },
        priority: ofc.priority.value(),
        coarse: ofc.coarse,
        more: ofc.more,
        flows: ofc.flows().map(|f| (f.src.to_string(), f.dst.to_string())).collect(),
    }
}

/// Checks `pcap` (OFC frames only) against the three decoders: tshark's own dissectors read
/// valid PFC frames with no expert message, the project's Lua dissector reads the same TLV
/// as pfcswitch_wire, and scapy agrees on the PFC part.
fn assert_decoders_agree(pcap: &std::path::Path, frames: &[Vec<u8>]) {
    assert!(tshark_expert_messages(pcap).iter().all(String::is_empty), "tshark: no expert message");
    let rows = tshark_fields(
        pcap,
        &[
            "macc.opcode",
            "macc.cbfc.enbv",
            "macc.cbfc.pause_time.c0",
            "macc.cbfc.pause_time.c1",
            "macc.cbfc.pause_time.c2",
            "macc.cbfc.pause_time.c3",
            "macc.cbfc.pause_time.c4",
            "macc.cbfc.pause_time.c5",
            "macc.cbfc.pause_time.c6",
            "macc.cbfc.pause_time.c7",
        ],
        &[],
    );
    let dissected = tshark_ofc(pcap);
    let scapy_rows = scapy(&["dissect", pcap.to_str().unwrap()]);
    assert_eq!((rows.len(), dissected.len(), scapy_rows.len()), (frames.len(), frames.len(), frames.len()));
    for (i, frame) in frames.iter().enumerate() {
        let Ok(MacControlRepr::Pfc(pfc)) = FrameView::parse(frame).unwrap().mac_control() else { panic!("not PFC") };
        let quanta: Vec<String> = pfc.quanta.iter().map(u16::to_string).collect();
        assert_eq!(rows[i][..2], ["0x0101".to_string(), format!("0x{:04x}", pfc.enable)], "tshark reads a PFC frame");
        assert_eq!(rows[i][2..], quanta[..], "tshark's class times");
        assert_eq!(
            (scapy_rows[i]["kind"].as_str(), scapy_rows[i]["enable"].as_u64()),
            (Some("pfc"), Some(u64::from(pfc.enable)))
        );
        assert_eq!(scapy_rows[i]["quanta"], serde_json::json!(pfc.quanta), "scapy agrees on the PFC part");
        assert_eq!(
            dissected[i],
            (Some(expected(frame)), String::new()),
            "the Lua dissector reads the TLV of frame {i}"
        );
    }
}

/// OFC frames pfcswitch_wire builds — no flow, one, many, as many as fit at MTU 1500, both ops,
/// COARSE and MORE — read the same by tshark, the Lua dissector and scapy.
#[test]
fn ofc_frames_built_by_core_wire_agree_with_tshark_the_lua_dissector_and_scapy() {
    let mut rng = Rng(0x0FC0_FFEE);
    let frames: Vec<Vec<u8>> = (0..200)
        .map(|n| {
            let count = [0, 1, 2, 7, 40, ofc_max_entries(1500)][n % 6];
            let pause = rng.next().is_multiple_of(2);
            let header = OfcHeader {
                op: if pause { OfcOp::Pause } else { OfcOp::Resume },
                priority: Pcp::from_low_bits(rng.next() as u8),
                coarse: pause && rng.next().is_multiple_of(3),
                more: rng.next().is_multiple_of(2),
            };
            let flows: Vec<FlowKey> = (0..count).map(|_| FlowKey { src: rng.mac(), dst: rng.mac() }).collect();
            let mut frame = vec![0u8; ofc_frame_len(count)];
            let quanta = (rng.next() % 65535) as u16 + 1;
            assert_eq!(build_ofc_frame(&mut frame, rng.mac(), header, quanta, flows), frame.len());
            frame
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("ofc.pcap");
    write_pcap(&pcap, &frames);
    assert_decoders_agree(&pcap, &frames);
    println!(
        "{} OFC frames of 60 to {} bytes: tshark, the Lua dissector and scapy agree",
        frames.len(),
        ofc_frame_len(ofc_max_entries(1500))
    );
}

/// A 2:1 incast (h1, h2 → h3) under OFC: sw1's ports to h1 and h2 pause the flow each host
/// sends to the congested port. The frames captured on h1's and h2's links are valid PFC
/// frames for tshark (no expert message) and scapy, carry OFC PAUSE and RESUME TLVs naming
/// the host's own flow — as the project's Lua dissector reads them too — and are as many as
/// the switch counted.
#[test]
fn the_ofc_frames_pfcswitchd_sends_are_valid_pfc_frames_naming_the_congested_flow() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let topology = Topology::up("star3", Some(&ofc_star3(dir.path())));
    let captures: Vec<Capture> = ["h1", "h2"]
        .iter()
        .map(|h| Capture::start(&topology, h, "eth0", "ether proto 0x8808", &dir.path().join(format!("{h}.pcap"))))
        .collect();
    Incast::start(&topology, 3000).assert_lossless(&topology);
    let pcaps: Vec<_> = captures.into_iter().map(Capture::stop).collect();
    let snapshot = topology.snapshot("sw1");
    let ofc = snapshot.ofc.as_ref().expect("policy ofc");
    for (host, (pcap, port)) in [1u8, 2].into_iter().zip(pcaps.iter().zip(["p1", "p2"])) {
        let own = FlowKey {
            src: format!("02:00:00:00:00:{host:02x}").parse().unwrap(),
            dst: "02:00:00:00:00:03".parse().unwrap(),
        };
        let frames = read_pcap(pcap);
        let lengths = tshark_fields(pcap, &["frame.len"], &[]);
        assert_eq!(lengths.len(), frames.len());
        assert!(lengths.iter().all(|l| l[0] == "60"), "{port}: every OFC frame is 60 bytes on the wire: {lengths:?}");
        let (mut pauses, mut resumes) = (0, 0);
        for frame in &frames {
            let view = FrameView::parse(frame).unwrap();
            let Ok(MacControlRepr::Pfc(pfc)) = view.mac_control() else { panic!("not PFC: {frame:02x?}") };
            let tlv = view.ofc().expect("a valid TLV").expect("an OFC TLV after the PFC fields");
            assert_eq!(pfc.enable, 1 << 3, "class 3 only");
            let flows: Vec<FlowKey> = tlv.flows().collect();
            match tlv.op {
                OfcOp::Pause => {
                    pauses += 1;
                    assert_eq!(pfc.quanta[3], 65535);
                    assert!(tlv.coarse || flows == [own], "{port}: a fine PAUSE names {own} only: {flows:?}");
                }
                OfcOp::Resume => {
                    resumes += 1;
                    assert_eq!(pfc.quanta[3], 0);
                    assert!(flows.iter().all(|f| *f == own), "{port}: the RESUME names what was paused");
                }
            }
        }
        let counters = &ofc.queues.iter().find(|q| q.port == port && q.priority == 3).unwrap().counters;
        assert!(pauses > 0 && resumes > 0, "{port}: PAUSE and RESUME on the wire");
        assert_eq!((pauses, resumes), (counters.pause_tx, counters.resume_tx), "{port}: as counted");

        assert_decoders_agree(pcap, &frames);
        println!(
            "{port}: {pauses} OFC PAUSE and {resumes} RESUME frames naming {own}: tshark, the Lua dissector and \
             scapy agree"
        );
    }
}

/// A flow of `host` to `dst` on star3 (priority 3, a 100 Mbit/s NIC) at `rate`; `per_flow` makes
/// its NIC OFC-aware (it stops only the flows a PAUSE names).
fn star3_sender(topology: &Topology, host: &str, dst: &str, rate: &str, frames: u64, per_flow: bool) -> Child {
    let mut command = topology.command(host, binary("pfcswitch"));
    command
        .args(["-j", "traffic", "send", "--iface", "eth0", "--speed", "100Mbps", "--rate", rate, "--dst", dst])
        .args(["--pcp", "3"])
        .args(["--frames", &frames.to_string(), "--flow", &host[1..], "--linger", "500ms"])
        .stdout(Stdio::piped());
    if per_flow {
        command.arg("--ofc-per-flow");
    }
    command.spawn().unwrap()
}

/// The frames each flow (by sender) brought to the receiver `child`.
fn received(child: Child) -> Vec<u64> {
    let output = child.wait_with_output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["receiver_drops"], 0, "the measuring receiver kept up");
    report["flows"].as_array().unwrap().iter().map(|f| f["frames"].as_u64().unwrap()).collect()
}

/// Two incasts at once on star3 under OFC, h1 in both: h1 and h3 send to h2, h1 and h2 send
/// to h3 (h1 at 50 Mbit/s to each, the others at line rate: 150 % into each host). Both of sw1's egresses to hosts are congested and h1's port carries a congested
/// flow into each, so its PAUSEs name two flows. At the default frame length every one of
/// them is a 60-byte PFC frame (64 with FCS, as IEEE 802.3 clause 31 fixes MAC Control
/// frames) naming one flow, MORE set on all but the last; h1's NIC, OFC-aware, reassembles
/// the set and stops only what is named. Nothing is lost.
#[test]
fn an_ofc_pause_naming_several_flows_is_split_into_standard_60_byte_frames() {
    const PER_FLOW: u64 = 4000;
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let topology = Topology::up("star3", Some(&ofc_star3(dir.path())));
    let capture = Capture::start(&topology, "h1", "eth0", "ether proto 0x8808", &dir.path().join("h1.pcap"));
    let receivers: Vec<Child> = ["h2", "h3"]
        .iter()
        .map(|host| {
            topology
                .command(host, binary("pfcswitch"))
                .args(["-j", "traffic", "recv", "--iface", "eth0", "--duration", "60s", "--idle", "2s"])
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (to_h2, to_h3) = ("02:00:00:00:00:02", "02:00:00:00:00:03");
    let senders = [
        // Two processes, two emulated NICs on one link: half the line rate each.
        star3_sender(&topology, "h1", to_h2, "50Mbps", PER_FLOW, true),
        star3_sender(&topology, "h1", to_h3, "50Mbps", PER_FLOW, true),
        star3_sender(&topology, "h3", to_h2, "100Mbps", PER_FLOW, false),
        star3_sender(&topology, "h2", to_h3, "100Mbps", PER_FLOW, false),
    ];
    for sender in senders {
        let output = sender.wait_with_output().unwrap();
        assert!(output.status.success());
    }
    let arrived: Vec<Vec<u64>> = receivers.into_iter().map(received).collect();
    let pcap = capture.stop();

    assert_eq!(arrived, [[PER_FLOW; 2], [PER_FLOW; 2]], "every frame of the four flows arrived");
    let h1 = "02:00:00:00:00:01".parse().unwrap();
    let own: Vec<FlowKey> = [to_h2, to_h3].iter().map(|dst| FlowKey { src: h1, dst: dst.parse().unwrap() }).collect();
    let frames = read_pcap(&pcap);
    let lengths = tshark_fields(&pcap, &["frame.len"], &[]);
    assert_eq!(lengths.len(), frames.len());
    assert!(lengths.iter().all(|l| l[0] == "60"), "every OFC frame is 60 bytes on the wire: {lengths:?}");

    // Reassembled as a receiver does: the flows of frames chained by MORE form one message.
    let (mut messages, mut flows, mut counts) = (Vec::new(), Vec::new(), (0, 0));
    let mut named = std::collections::BTreeMap::<String, u64>::new();
    for frame in &frames {
        let tlv = FrameView::parse(frame).unwrap().ofc().expect("a valid TLV").expect("an OFC TLV");
        assert!(tlv.flows().count() <= 1, "one flow per 60-byte frame");
        flows.extend(tlv.flows());
        match tlv.op {
            OfcOp::Pause => {
                counts.0 += 1;
                tlv.flows().for_each(|flow| *named.entry(flow.to_string()).or_default() += 1);
            }
            OfcOp::Resume => counts.1 += 1,
        }
        if !tlv.more {
            flows.sort_unstable();
            messages.push((tlv.op, tlv.coarse, std::mem::take(&mut flows)));
        }
    }
    assert!(flows.is_empty(), "the last frame closes its message");
    for (op, coarse, named) in &messages {
        assert!(*coarse || named.iter().all(|f| own.contains(f)), "{op:?} names h1's flows only: {named:?}");
    }
    let both = messages.iter().filter(|(op, coarse, named)| *op == OfcOp::Pause && !coarse && *named == own).count();
    assert!(both > 0, "a PAUSE named both of h1's congested flows, over two frames: {messages:?}");

    let snapshot = topology.snapshot("sw1");
    let ofc = snapshot.ofc.as_ref().expect("policy ofc");
    let queue = ofc.queues.iter().find(|q| q.port == "p1" && q.priority == 3).unwrap();
    let counters = &queue.counters;
    assert_eq!(counts, (counters.pause_tx, counters.resume_tx), "the frames on the wire are the ones sw1 counted");
    assert_eq!(queue.pauses_naming, named, "sw1's record of the flows its PAUSEs named is the wire's");
    assert_decoders_agree(&pcap, &frames);
    println!(
        "h1's link: {} OFC PAUSE and {} RESUME frames, all 60 bytes, in {} messages; {both} PAUSEs named both of \
         h1's flows over two frames",
        counts.0,
        counts.1,
        messages.len()
    );
}

/// `ofc-fig1` itself under `ofc`, three links captured by `scenario run --capture` (through
/// tap namespaces): F0's and F1's senders' links and sw1 — sw2. Every OFC frame on them is a
/// 60-byte PFC frame, as many as the switches at their ends counted, read alike by tshark, the
/// Lua dissector and scapy, and names only flows that enter through the port it pauses.
/// Whether F0 is never named is timing on the datapath (never in the runs of docs/ofc.md) and
/// is asserted on virtual time, in tests/tests/scenario.rs.
#[test]
fn ofc_fig1_captured_link_by_link_carries_only_60_byte_ofc_frames() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let stdout = pfcswitch_scenario(&["run", "ofc-fig1", "--policy", "ofc", "--capture", "h1,h2,sw1:p3"], &out);
    let run = results(&out);
    let counted = |switch: &str, port: &str| {
        let snapshot = &run["switches"].as_array().unwrap().iter().find(|s| s["name"] == switch).unwrap()["snapshot"];
        let queue = snapshot["ofc"]["queues"].as_array().unwrap().iter().find(|q| q["port"] == port).unwrap();
        queue["counters"]["pause_tx"].as_u64().unwrap() + queue["counters"]["resume_tx"].as_u64().unwrap()
    };
    let flow = |src: u8, dst: u8| FlowKey {
        src: format!("02:00:00:00:00:{src:02x}").parse().unwrap(),
        dst: format!("02:00:00:00:00:{dst:02x}").parse().unwrap(),
    };
    let (f0, f1) = (flow(1, 9), flow(2, 10));
    let links = [
        ("sw1.p1-h1", vec![("sw1", "p1")], vec![f0]),
        ("sw1.p2-h2", vec![("sw1", "p2")], vec![f1]),
        ("sw1.p3-sw2.p1", vec![("sw1", "p3"), ("sw2", "p1")], vec![f0, f1]),
    ];
    let mut sent = Vec::new();
    for (link, ends, carried) in links {
        let pcap = out.join("captures").join(format!("{link}.pcap"));
        assert!(stdout.contains(&format!("capture: {}", pcap.display())), "{stdout}");
        let all = read_pcap(&pcap);
        assert!(!all.is_empty(), "{link}: the tap saw the link's traffic");
        let control: Vec<Vec<u8>> =
            all.into_iter().filter(|f| FrameView::parse(f).is_ok_and(|v| v.is_mac_control())).collect();
        let at_ends: u64 = ends.iter().map(|(switch, port)| counted(switch, port)).sum();
        assert_eq!(control.len() as u64, at_ends, "{link}: the OFC frames its ends counted, all on the wire");
        for frame in &control {
            let tlv = FrameView::parse(frame).unwrap().ofc().expect("a valid TLV").expect("an OFC TLV");
            let named: Vec<FlowKey> = tlv.flows().collect();
            assert!(tlv.coarse || named.iter().all(|f| carried.contains(f)), "{link}: names {named:?}");
        }
        sent.push(format!("{link} {}", control.len()));
        if control.is_empty() {
            continue;
        }
        let only = dir.path().join(format!("{link}-ofc.pcap"));
        write_pcap(&only, &control);
        let lengths = tshark_fields(&only, &["frame.len"], &[]);
        assert!(lengths.iter().all(|l| l[0] == "60"), "{link}: every OFC frame is 60 bytes on the wire: {lengths:?}");
        assert_decoders_agree(&only, &control);
    }
    assert!(counted("sw1", "p2") > 0 && counted("sw2", "p1") > 0, "F1 was paused hop by hop: {sent:?}");
    println!("ofc-fig1: OFC frames per captured link {sent:?}, all 60 bytes, as the switches counted them");
}

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
    let captures: Vec<Capture> = ["h1", "h2"]
        .iter()
        .map(|h| Capture::start(&topology, h, "eth0", "ether proto 0x8808", &dir.path().join(format!("{h}.pcap"))))
        .collect();
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
    let pcaps: Vec<_> = captures.into_iter().map(Capture::stop).collect();
    let received: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(received["receiver_drops"], 0, "the measuring receiver kept up");
    let frames: Vec<u64> =
        received["flows"].as_array().unwrap().iter().map(|f| f["frames"].as_u64().unwrap()).collect();

    let snapshots = ["sw1", "sw2", "sw3"].map(|sw| topology.snapshot(sw));
    // Frames lost for want of room, not flooded copies filtered at the port they came from.
    let all_drops: Vec<(&String, &u64)> = (snapshots.iter().flat_map(|s| &s.ports))
        .flat_map(|p| p.priorities[3].drops.iter())
        .filter(|(_, n)| **n > 0)
        .collect();
    let not_loss = ["filtered", "link_local"];
    let drops: u64 =
        all_drops.iter().filter(|(reason, _)| !not_loss.contains(&reason.as_str())).map(|(_, n)| **n).sum();
    let ofc_counters = |switch: usize, port: &str| {
        let report = snapshots[switch].ofc.as_ref().expect("ofc");
        report.queues.iter().find(|q| q.port == port && q.priority == 3).unwrap().counters
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
    assert_eq!(drops, 0, "no switch dropped a lossless frame for want of room: {all_drops:?}");
    assert!(sw3_from_sw2.pause_tx > 0, "OFC (sw3) paused its PFC-only upstream (sw2)");
    assert!(snapshots[1].port("p5").unwrap().priorities[3].pfc_rx > 0, "sw2 obeyed them as PFC frames");
    assert!(snapshots[1].port("p1").unwrap().priorities[3].pfc_tx > 0, "sw2 paused sw1 with plain PFC");
    assert_eq!(sw1_to_sw2.pause_rx, 0, "which carries no flows");
    assert!(ofc_counters(0, "p1").pause_tx + ofc_counters(0, "p2").pause_tx > 0, "sw1 (OFC) paused its hosts");
    for (pcap, port) in pcaps.iter().zip(["p1", "p2"]) {
        let lengths = tshark_fields(pcap, &["frame.len"], &[]);
        let counters = ofc_counters(0, port);
        assert_eq!(lengths.len() as u64, counters.pause_tx + counters.resume_tx, "{port}: every OFC frame sw1 sent");
        assert!(lengths.iter().all(|l| l[0] == "60"), "{port}: every OFC frame is 60 bytes: {lengths:?}");
    }
}
