//! QCN on the AF_XDP datapath: the CNMs pfcswitchd sends, captured with tcpdump and checked
//! byte by byte against DESIGN.md's table by a checker that shares no code with the switch
//! (`tests/oracles/cnm_check.py`), and read by the project's Lua dissector with tshark.
//!
//! star3 (configs/default.toml, 100 Mbit/s, PFC on priority 3) with a congestion point at
//! every output on priority 3, Qeq 10 KB and a 15 KB sample base: the 2:1 incast into h3
//! keeps p3's queue above Qeq, so p3's CP sends CNMs to h1 and h2 while PFC keeps it lossless.
//! (Frames flooded before sw1 learns h3 queue at p1 and p2 too, whose CPs may then answer.)

use pfcswitch_tests::capture::Capture;
use pfcswitch_tests::oracle::{cnm_check, tshark_cnm};
use pfcswitch_tests::topology::{Incast, Topology, serial, star3_config};

const QEQ: u64 = 10_000;

fn qcn_star3(dir: &std::path::Path) -> std::path::PathBuf {
    let qcn = format!("\n[qcn]\npriorities = [3]\ncp = \"output\"\nqeq = \"{QEQ}B\"\nsample_base = \"15KB\"\n");
    star3_config(dir, |file| file + &qcn)
}

#[test]
fn the_cnms_pfcswitchd_sends_follow_the_standards_layout_byte_by_byte() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let topology = Topology::up("star3", Some(&qcn_star3(dir.path())));
    let hosts = ["02:00:00:00:00:01", "02:00:00:00:00:02"];
    let captures: Vec<Capture> = ["h1", "h2"]
        .iter()
        .zip(hosts)
        .map(|(h, mac)| {
            Capture::start(&topology, h, "eth0", &format!("ether dst {mac}"), &dir.path().join(format!("{h}.pcap")))
        })
        .collect();
    Incast::start(&topology, 3000).assert_lossless(&topology);
    let pcaps: Vec<_> = captures.into_iter().map(Capture::stop).collect();

    let snapshot = topology.snapshot("sw1");
    let qcn = snapshot.qcn.as_ref().expect("[qcn] is on");
    let cp_of = |mac: &serde_json::Value| {
        let port = snapshot.ports.iter().find(|p| p.mac == mac.as_str().unwrap()).expect("a CPID names a switch port");
        qcn.points.iter().find(|c| c.port == port.name && c.priority == 3).unwrap()
    };
    let p3 = qcn.points.iter().find(|c| c.port == "p3" && c.priority == 3).unwrap();
    let (mut on_wire, mut from_p3) = (0, 0);
    for (pcap, host) in pcaps.iter().zip(hosts) {
        let cnms = cnm_check(pcap, QEQ, 2);
        for cnm in &cnms {
            assert_eq!(cnm["errors"], serde_json::json!([]), "{host}: {cnm}");
            assert_eq!(cnm["dst"], host, "DA = the culprit's source: {cnm}");
            assert_eq!(cnm["src"], cnm["cpid_mac"], "SA = the CP's port MAC: {cnm}");
            assert_eq!((cnm["cpid_priority"].as_u64(), cnm["cpid_input"].as_u64()), (Some(3), Some(0)), "{cnm}");
            assert_eq!(cnm["cpid"], cp_of(&cnm["cpid_mac"]).cpid.as_str(), "{cnm}");
            assert_eq!(cnm["pcp"], 6, "sent on the CNM priority: {cnm}");
            assert_eq!(cnm["encapsulated_priority"], 3, "{cnm}");
            assert_eq!(cnm["encapsulated_dst"], "02:00:00:00:00:03", "{cnm}");
            assert_eq!(cnm["msdu_len"], 1500 - 18, "the culprit's whole MSDU, a full frame's IPv4 packet: {cnm}");
            let msdu = cnm["msdu"].as_str().unwrap();
            assert!(msdu.starts_with("45") && msdu.len() == 128, "the culprit's first 64 bytes: {cnm}");
            from_p3 += u64::from(cnm["cpid"] == p3.cpid.as_str());
        }
        assert!(!cnms.is_empty(), "{host} received CNMs");
        // The project's Lua dissector reads the same fields.
        let dissected = tshark_cnm(pcap);
        assert_eq!(dissected.len(), cnms.len());
        for (read, cnm) in dissected.iter().zip(&cnms) {
            let text = |v: &serde_json::Value| v.as_str().map_or(v.to_string(), str::to_string);
            for (field, key) in [
                ("qntz_fb", "qntz_fb"),
                ("cpid", "cpid"),
                ("q_offset", "q_offset"),
                ("q_delta", "q_delta"),
                ("encap_priority", "encapsulated_priority"),
                ("encap_dst", "encapsulated_dst"),
                ("msdu_len", "msdu_len"),
            ] {
                assert_eq!(read[field], text(&cnm[key]), "{host}: the Lua dissector's {field}: {read:?} against {cnm}");
            }
            assert_eq!(read["expert"], "", "{host}: no expert message: {read:?}");
        }
        on_wire += cnms.len() as u64;
    }
    let sent: u64 = qcn.points.iter().map(|c| c.counters.cnms_sent).sum();
    println!(
        "{on_wire} CNMs on h1's and h2's wires, all byte-exact: {from_p3} from p3's CP ({} samples), {} from CPs \
         that saw copies flooded before sw1 learnt h3",
        p3.samples,
        on_wire - from_p3
    );
    assert_eq!(on_wire, sent, "every CNM counted reached its culprit's host");
    assert!(from_p3 * 10 >= on_wire * 9, "the congested port's CP sent most of them");
    let shown = topology.cli("sw1", &["-j", "qcn", "show", "p3"]);
    let shown: serde_json::Value = serde_json::from_slice(&shown.stdout).unwrap();
    let points = shown["points"].as_array().unwrap();
    assert_eq!(points.len(), 1, "one CP on p3: {shown}");
    assert_eq!(points[0]["counters"]["cnms_sent"], p3.counters.cnms_sent, "`pfcswitch qcn show` reports it");
}
