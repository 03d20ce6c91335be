//! The traffic endpoints' header (UDP port 39000, docs/frames.md) as pfcswitch_wire builds
//! it, read field by field by the project's Lua dissector, the AckReq bit included; a header
//! with a foreign magic draws the dissector's expert message. No root or namespaces needed.

use pfcswitch_tests::oracle::{tshark_fields_with_dissector, write_pcap};
use pfcswitch_wire::{DataFrameSpec, EthernetAddress, Framing, Pcp, TrafficKind, TrafficRepr, VlanRepr};

fn frame(traffic: TrafficRepr, frame_len: usize) -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 1 });
    let (a, b) = (EthernetAddress([2, 0, 0, 0, 0, 1]), EthernetAddress([2, 0, 0, 0, 0, 2]));
    DataFrameSpec { framing: Framing::Traffic, traffic, ..DataFrameSpec::between(a, b, vlan, frame_len) }.to_bytes()
}

#[test]
fn the_lua_dissector_reads_every_field_of_the_endpoints_header() {
    let segment = |kind, sequence, ack_req| TrafficRepr {
        kind,
        flow_id: 0x0102_0304,
        sequence,
        message_id: 9,
        message_len: 64_000,
        offset: 1422 * sequence,
        timestamp_ns: 0x0123_4567_89AB_CDEF,
        ack_req,
    };
    let sent = [
        segment(TrafficKind::Data, 3, false),
        segment(TrafficKind::Data, 4, true),
        segment(TrafficKind::Ack, 5, false),
        segment(TrafficKind::Nak, 2, false),
        segment(TrafficKind::Cnp, 0, false),
    ];
    let mut frames: Vec<Vec<u8>> = sent.iter().map(|&t| frame(t, 1500)).collect();
    let mut foreign = frame(sent[0], 200);
    foreign[18 + 20 + 8] = 0x99; // the magic's first byte, after 802.1Q, IPv4 and UDP
    frames.push(foreign);
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("traffic.pcap");
    write_pcap(&pcap, &frames);
    let names = ["kind", "ack_req", "flow_id", "sequence", "message_id", "message_len", "offset", "timestamp_ns"];
    let mut fields: Vec<String> = names.iter().map(|n| format!("pfcswitch.traffic.{n}")).collect();
    fields.push("_ws.expert.message".into());
    let rows = tshark_fields_with_dissector(&pcap, &fields.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(rows.len(), frames.len());
    for (row, t) in rows.iter().zip(&sent) {
        let kind = match t.kind {
            TrafficKind::Data => 0,
            TrafficKind::Ack => 1,
            TrafficKind::Nak => 2,
            TrafficKind::Cnp => 3,
        };
        let expected = [
            kind.to_string(),
            u8::from(t.ack_req).to_string(),
            t.flow_id.to_string(),
            t.sequence.to_string(),
            t.message_id.to_string(),
            t.message_len.to_string(),
            t.offset.to_string(),
            t.timestamp_ns.to_string(),
            String::new(),
        ];
        assert_eq!(row[..], expected[..], "{t:?}");
    }
    let expert = rows.last().unwrap().last().unwrap();
    assert!(expert.contains("magic is not 0x5046"), "a foreign header is flagged: {expert}");
}
