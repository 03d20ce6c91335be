//! Frames built by pfcswitch_wire, checked by decoders that share no code with it: Wireshark's
//! dissectors (tshark) and scapy; and frames built by scapy, parsed by pfcswitch_wire.

use pfcswitch_tests::Rng;
use pfcswitch_tests::oracle::{read_pcap, scapy, tshark_expert_messages, tshark_fields, write_pcap};
use pfcswitch_tests::topology::binary;
use pfcswitch_wire::{
    CnTagRepr, CnmRepr, DataFrameSpec, EthernetAddress, FrameView, Framing, Ipv4Addr, L2Repr, MacControlRepr,
    PAUSE_MULTICAST, Pcp, PfcRepr, TRAFFIC_UDP_PORT, TrafficKind, TrafficRepr, VlanRepr, build_cnm_frame,
    build_data_frame, build_mac_control_frame,
};
use serde_json::{Value, json};

const FRAMES: usize = 300;

fn mac_control_frames(rng: &mut Rng) -> Vec<(EthernetAddress, MacControlRepr, Vec<u8>)> {
    (0..FRAMES)
        .map(|_| {
            let src = rng.mac();
            let repr = if rng.below(4) == 0 {
                MacControlRepr::Pause { quanta: rng.next() as u16 }
            } else {
                MacControlRepr::Pfc(PfcRepr {
                    enable: rng.next() as u8,
                    quanta: std::array::from_fn(|_| rng.next() as u16),
                })
            };
            let mut frame = vec![0u8; 60];
            let len = build_mac_control_frame(&mut frame, src, PAUSE_MULTICAST, &repr);
            assert_eq!(len, 60);
            (src, repr, frame)
        })
        .collect()
}

fn data_spec(rng: &mut Rng) -> DataFrameSpec {
    DataFrameSpec {
        src_mac: rng.mac(),
        dst_mac: rng.mac(),
        vlan: Some(VlanRepr {
            pcp: Pcp::from_low_bits(rng.next() as u8),
            dei: rng.below(2) == 1,
            vid: rng.below(4095) as u16,
        }),
        cn_tag: None,
        src_ip: Ipv4Addr::new(10, 0, 0, rng.below(250) as u8 + 1),
        dst_ip: Ipv4Addr::new(10, 0, 1, rng.below(250) as u8 + 1),
        dscp: rng.below(64) as u8,
        ecn: rng.below(4) as u8,
        src_port: TRAFFIC_UDP_PORT,
        dst_port: TRAFFIC_UDP_PORT,
        traffic: TrafficRepr {
            kind: TrafficKind::Data,
            flow_id: rng.next() as u32,
            sequence: rng.next() as u32,
            message_id: rng.next() as u32,
            message_len: 1 << 20,
            offset: 0,
            timestamp_ns: rng.next(),
            ack_req: false,
        },
        frame_len: 60 + rng.below(1440) as usize,
        framing: Framing::Traffic,
    }
}

fn build(spec: &DataFrameSpec) -> Vec<u8> {
    let mut frame = vec![0u8; spec.len()];
    build_data_frame(&mut frame, spec);
    frame
}

fn temp_pcap(dir: &tempfile::TempDir, name: &str, frames: &[Vec<u8>]) -> std::path::PathBuf {
    let path = dir.path().join(name);
    write_pcap(&path, frames);
    path
}

fn assert_no_expert_messages(pcap: &std::path::Path) {
    for (index, messages) in tshark_expert_messages(pcap).iter().enumerate() {
        assert!(messages.is_empty(), "tshark flags frame {}: {messages}", index + 1);
    }
}

#[test]
fn tshark_decodes_pfc_and_pause_frames_as_built() {
    let dir = tempfile::tempdir().unwrap();
    let built = mac_control_frames(&mut Rng(0x5EED_0001));
    let frames: Vec<Vec<u8>> = built.iter().map(|(_, _, frame)| frame.clone()).collect();
    let pcap = temp_pcap(&dir, "mac_control.pcap", &frames);
    let mut fields = vec!["eth.src", "eth.dst", "macc.opcode", "macc.pause_time", "macc.cbfc.enbv"];
    let class_fields: Vec<String> = (0..8).map(|c| format!("macc.cbfc.pause_time.c{c}")).collect();
    fields.extend(class_fields.iter().map(String::as_str));
    let rows = tshark_fields(&pcap, &fields, &[]);
    assert_eq!(rows.len(), FRAMES);
    let (mut pauses, mut pfcs) = (0, 0);
    for ((src, repr, _), row) in built.iter().zip(&rows) {
        assert_eq!(row[0], src.to_string());
        assert_eq!(row[1], "01:80:c2:00:00:01");
        match repr {
            MacControlRepr::Pause { quanta } => {
                pauses += 1;
                assert_eq!((row[2].as_str(), row[3].as_str()), ("0x0001", quanta.to_string().as_str()));
            }
            MacControlRepr::Pfc(pfc) => {
                pfcs += 1;
                assert_eq!(row[2], "0x0101");
                assert_eq!(row[4], format!("0x{:04x}", pfc.enable));
                let times: Vec<String> = pfc.quanta.iter().map(u16::to_string).collect();
                assert_eq!(&row[5..13], &times[..]);
            }
        }
    }
    assert!(pauses > 0 && pfcs > 0, "both kinds exercised");
    assert_no_expert_messages(&pcap);
    println!("tshark agreed on {pfcs} PFC and {pauses} PAUSE frames");
}

#[test]
fn tshark_decodes_tagged_data_frames_as_built() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_0002);
    let specs: Vec<DataFrameSpec> = (0..FRAMES).map(|_| data_spec(&mut rng)).collect();
    let frames: Vec<Vec<u8>> = specs.iter().map(build).collect();
    let pcap = temp_pcap(&dir, "data.pcap", &frames);
    let fields = [
        "vlan.priority",
        "vlan.dei",
        "vlan.id",
        "ip.dsfield.dscp",
        "ip.dsfield.ecn",
        "ip.src",
        "ip.dst",
        "udp.dstport",
        "ip.checksum.status",
        "udp.checksum.status",
        "frame.len",
    ];
    let rows = tshark_fields(&pcap, &fields, &["ip.check_checksum:TRUE", "udp.check_checksum:TRUE"]);
    for (spec, row) in specs.iter().zip(&rows) {
        let vlan = spec.vlan.unwrap();
        let expected = [
            vlan.pcp.to_string(),
            u8::from(vlan.dei).to_string(),
            vlan.vid.to_string(),
            spec.dscp.to_string(),
            spec.ecn.to_string(),
            spec.src_ip.to_string(),
            spec.dst_ip.to_string(),
            TRAFFIC_UDP_PORT.to_string(),
            "1".into(), // Wireshark's checksum status: 1 = good
            "1".into(),
            spec.len().to_string(),
        ];
        assert_eq!(row, &expected);
    }
    assert_no_expert_messages(&pcap);
    println!("tshark agreed on {} tagged IPv4/UDP frames (PCP, DEI, VID, DSCP, checksums)", specs.len());
}

/// The CNM checked byte by byte against DESIGN.md's table, written out by hand here so the
/// test shares nothing with pfcswitch_wire's offsets.
#[test]
fn cnm_matches_the_design_table_byte_by_byte() {
    let msdu: Vec<u8> = (1..=64).collect();
    let cnm = CnmRepr {
        quantized_feedback: 0x2A,
        cpid: 0x0200_0000_000A_0003,
        q_offset: -1234,
        q_delta: 567,
        encapsulated_priority: Pcp::new(3).unwrap(),
        encapsulated_dst: EthernetAddress([0x02, 0, 0, 0, 0, 0x02]),
        msdu_len: 1500,
        msdu: &msdu,
    };
    let l2 = L2Repr {
        dst: EthernetAddress([0x02, 0, 0, 0, 0, 0x01]),
        src: EthernetAddress([0x02, 0, 0, 0, 0, 0x0A]),
        vlan: Some(VlanRepr { pcp: Pcp::new(6).unwrap(), dei: false, vid: 100 }),
        cn_tag: None,
        ethertype: 0,
    };
    let mut frame = vec![0u8; 128];
    let len = build_cnm_frame(&mut frame, &l2, &cnm);
    frame.truncate(len);

    let mut expected = vec![
        0x02, 0, 0, 0, 0, 0x01, // DA = SA of the sampled frame
        0x02, 0, 0, 0, 0, 0x0A, // SA = CP MAC
        0x81, 0x00, 0xC0, 0x64, // 802.1Q, PCP 6, VID 100
        0x22, 0xE7, // CNM EtherType
        0x00, 0x2A, // version 0, reserved 0, QntzFb 42
        0x02, 0x00, 0x00, 0x00, 0x00, 0x0A, 0x00, 0x03, // CPID
        0xFB, 0x2E, // cnmQOffset = -1234
        0x02, 0x37, // cnmQDelta = 567
        0x60, 0x00, // encapsulated priority 3 in the top three bits
        0x02, 0, 0, 0, 0, 0x02, // encapsulated DA
        0x05, 0xDC, // encapsulated MSDU length 1500
    ];
    expected.extend(1..=64u8); // the first 64 bytes of the MSDU
    assert_eq!(frame, expected);

    // With a CN-TAG and a short MSDU, the frame is padded to 60 bytes.
    let tagged = L2Repr { cn_tag: Some(CnTagRepr { flow_id: 0xBEEF }), ..l2 };
    let short = CnmRepr { msdu_len: 4, msdu: &msdu[..4], ..cnm };
    let mut frame = vec![0u8; 128];
    let len = build_cnm_frame(&mut frame, &tagged, &short);
    assert_eq!(len, 60);
    assert_eq!(&frame[16..22], &[0x22, 0xE9, 0xBE, 0xEF, 0x22, 0xE7]);
    assert_eq!(&frame[44..50], &[0x00, 0x04, 1, 2, 3, 4]);
    assert!(frame[50..60].iter().all(|&b| b == 0));

    // tshark has no CNM dissector, but must agree on the tag and EtherType and see no error.
    let dir = tempfile::tempdir().unwrap();
    let pcap = temp_pcap(&dir, "cnm.pcap", &[expected, frame[..len].to_vec()]);
    let rows = tshark_fields(&pcap, &["vlan.priority", "vlan.id", "vlan.etype"], &[]);
    assert_eq!(rows[0], ["6", "100", "0x22e7"]);
    assert_eq!(rows[1], ["6", "100", "0x22e9"]);
    assert_no_expert_messages(&pcap);
}

/// `pfcswitch frame pause` and `frame pfc` as the README shows them, without `--src`: the
/// frames carry the documented default source 02:00:00:00:00:01, and tshark reads them as asked.
#[test]
fn frame_pause_and_pfc_need_no_source_address() {
    let dir = tempfile::tempdir().unwrap();
    let craft = |args: &[&str], file: &str| {
        let path = dir.path().join(file);
        let output =
            std::process::Command::new(binary("pfcswitch")).arg("frame").args(args).arg("-o").arg(&path).output();
        let output = output.expect("pfcswitch runs");
        assert!(output.status.success(), "pfcswitch frame {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        path
    };
    let pause = craft(&["pause", "--quanta", "1000"], "pause.pcap");
    let pfc = craft(&["pfc", "--class", "3=65535", "--class", "4=0"], "pfc.pcap");
    let fields = ["eth.src", "eth.dst", "macc.opcode", "macc.pause_time", "macc.cbfc.enbv", "macc.cbfc.pause_time.c3"];
    let rows = |pcap: &std::path::Path| {
        assert_no_expert_messages(pcap);
        tshark_fields(pcap, &fields, &[])
    };
    let default = "02:00:00:00:00:01";
    assert_eq!(rows(&pause), [[default, "01:80:c2:00:00:01", "0x0001", "1000", "", ""]]);
    assert_eq!(rows(&pfc), [[default, "01:80:c2:00:00:01", "0x0101", "", "0x0018", "65535"]]);
}

/// The negative control: the expert-message check does flag a broken frame, and pfcswitch_wire
/// rejects it too.
#[test]
fn tshark_and_core_both_reject_a_truncated_pfc_frame() {
    let mut frame = vec![0u8; 60];
    let pfc = PfcRepr::default().with_class(Pcp::new(3).unwrap(), 100);
    build_mac_control_frame(
        &mut frame,
        EthernetAddress([2, 0, 0, 0, 0, 1]),
        PAUSE_MULTICAST,
        &MacControlRepr::Pfc(pfc),
    );
    frame.truncate(24);
    let dir = tempfile::tempdir().unwrap();
    let pcap = temp_pcap(&dir, "truncated.pcap", std::slice::from_ref(&frame));
    assert!(tshark_expert_messages(&pcap)[0].contains("Malformed"), "tshark should flag it");
    let error = FrameView::parse(&frame).unwrap().mac_control().unwrap_err();
    assert_eq!(error.to_string(), "truncated mac control header");
}

fn scapy_view_of(frame: &[u8], built: &Value) -> Value {
    let mut expected = json!({ "src": built["src"], "dst": built["dst"] });
    let view = FrameView::parse(frame).unwrap();
    match view.mac_control() {
        Ok(MacControlRepr::Pfc(pfc)) => {
            expected["kind"] = json!("pfc");
            expected["enable"] = json!(pfc.enable);
            expected["quanta"] = json!(pfc.quanta);
        }
        Ok(MacControlRepr::Pause { quanta }) => {
            expected["kind"] = json!("pause");
            expected["quanta"] = json!(quanta);
        }
        Err(_) => {
            let (ip, udp, _) = view.traffic().unwrap();
            let vlan = view.l2.vlan.unwrap();
            expected["kind"] = json!("other");
            expected["vlan"] = json!({ "pcp": vlan.pcp.value(), "dei": u8::from(vlan.dei), "vid": vlan.vid });
            expected["ipv4"] = json!({ "src": ip.src.to_string(), "dst": ip.dst.to_string(), "dscp": ip.dscp });
            expected["udp"] = json!({ "src_port": udp.src_port, "dst_port": udp.dst_port });
        }
    }
    expected
}

#[test]
fn scapy_dissects_core_frames_as_built() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5EED_0003);
    let mut frames: Vec<Vec<u8>> =
        mac_control_frames(&mut rng).into_iter().map(|(_, _, f)| f).take(FRAMES / 2).collect();
    frames.extend((0..FRAMES / 2).map(|_| build(&data_spec(&mut rng))));
    let pcap = temp_pcap(&dir, "core.pcap", &frames);
    let dissected = scapy(&["dissect", pcap.to_str().unwrap()]);
    assert_eq!(dissected.len(), frames.len());
    for (frame, scapy_fields) in frames.iter().zip(&dissected) {
        assert_eq!(scapy_fields, &scapy_view_of(frame, scapy_fields), "frame {frame:02x?}");
    }
    println!("scapy agreed on {} frames built by pfcswitch_wire", frames.len());
}

#[test]
fn core_parses_scapy_frames_as_scapy_built_them() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("scapy.pcap");
    let built = scapy(&["craft", pcap.to_str().unwrap(), "42", &FRAMES.to_string()]);
    let frames = read_pcap(&pcap);
    assert_eq!(frames.len(), built.len());
    for (frame, fields) in frames.iter().zip(&built) {
        let view = FrameView::parse(frame).unwrap_or_else(|e| panic!("core rejects scapy's {fields}: {e}"));
        assert_eq!(view.l2.src.to_string(), fields["src"]);
        match fields["kind"].as_str().unwrap() {
            "pfc" => {
                let MacControlRepr::Pfc(pfc) = view.mac_control().unwrap() else { panic!("not PFC: {fields}") };
                assert_eq!(json!(pfc.enable), fields["enable"]);
                assert_eq!(json!(pfc.quanta), fields["quanta"]);
            }
            "pause" => assert_eq!(
                view.mac_control().unwrap(),
                MacControlRepr::Pause { quanta: fields["quanta"].as_u64().unwrap() as u16 }
            ),
            _ => {
                let vlan = view.l2.vlan.expect("tagged");
                assert_eq!(
                    json!({ "pcp": vlan.pcp.value(), "dei": u8::from(vlan.dei), "vid": vlan.vid }),
                    fields["vlan"]
                );
                assert_eq!(json!(view.dscp().unwrap()), fields["dscp"]);
            }
        }
    }
    println!("pfcswitch_wire agreed on {} frames built by scapy", frames.len());
}
