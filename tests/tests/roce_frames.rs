//! RoCEv2 frames built by pfcswitch_wire (`Framing::Rocev2`), read by two decoders that share
//! no code with it: Wireshark's InfiniBand dissector (tshark, which claims UDP port 4791 by
//! default) and scapy's `contrib/roce.py` (`tests/oracles/roce_check.py`), which recomputes
//! every ICRC. No root or namespaces needed.

use pfcswitch_tests::oracle::{roce_check, tshark_expert_messages, tshark_fields, write_pcap};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, FrameView, Framing, Pcp, QPN_BASE, TrafficKind, TrafficRepr, VlanRepr, mark_ecn_ce,
};

const FLOW: u32 = 7;

/// The frames an endpoint sends, with what each must decode to: (opcode, PSN, AETH syndrome).
fn frames() -> Vec<(Vec<u8>, u8, u32, Option<u8>)> {
    let vlan = Some(VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 1 });
    let spec = |kind, sequence, message_len, offset, frame_len| DataFrameSpec {
        src_port: 49_152 + FLOW as u16,
        ecn: 2,
        framing: Framing::Rocev2,
        traffic: TrafficRepr {
            kind,
            flow_id: FLOW,
            sequence,
            message_id: 4,
            message_len,
            offset,
            timestamp_ns: 99,
            ack_req: false,
        },
        ..DataFrameSpec::between(
            EthernetAddress([2, 0, 0, 0, 0, 1]),
            EthernetAddress([2, 0, 0, 0, 0, 2]),
            vlan,
            frame_len,
        )
    };
    // 1500-byte frames carry 1418 bytes; a 3000-byte message is FIRST, MIDDLE, LAST (164 bytes).
    let data = TrafficKind::Data;
    let mut frames = vec![
        (spec(data, 10, 3000, 0, 1500).to_bytes(), 0x00, 10, None),
        (spec(data, 11, 3000, 1418, 1500).to_bytes(), 0x01, 11, None),
        (spec(data, 12, 3000, 2836, 82 + 164).to_bytes(), 0x02, 12, None),
        (spec(data, 0x100_0013, 5, 0, 82 + 5).to_bytes(), 0x04, 0x13, None),
        (spec(TrafficKind::Ack, 13, 0, 0, 0).to_bytes(), 0x11, 12, Some(0x1F)),
        (spec(TrafficKind::Nak, 11, 0, 0, 0).to_bytes(), 0x11, 11, Some(0x60)),
        (spec(TrafficKind::Cnp, 0, 0, 0, 0).to_bytes(), 0x81, 0, None),
    ];
    // A switch's CE mark and a router's TTL decrement, IP checksum fixed: the ICRC holds.
    let mut marked = frames[1].0.clone();
    assert!(mark_ecn_ce(&mut marked));
    marked[18 + 8] -= 1;
    marked[18 + 10..18 + 12].copy_from_slice(&[0, 0]);
    let sum = marked[18..38].chunks(2).map(|w| u32::from(u16::from_be_bytes([w[0], w[1]]))).sum::<u32>();
    let sum = (sum & 0xFFFF) + (sum >> 16);
    marked[18 + 10..18 + 12].copy_from_slice(&(!((sum & 0xFFFF) + (sum >> 16)) as u16).to_be_bytes());
    frames.push((marked, 0x01, 11, None));
    frames
}

#[test]
fn pfcswitch_wire_parses_its_own_frames() {
    for (frame, _, psn, _) in frames() {
        let (_, _, traffic) = FrameView::parse(&frame).unwrap().traffic().unwrap();
        assert_eq!(traffic.flow_id, FLOW);
        if traffic.kind == TrafficKind::Data {
            assert_eq!(traffic.sequence, psn);
        }
    }
}

#[test]
fn tshark_decodes_every_frame_as_infiniband_without_complaint() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("roce.pcap");
    let frames = frames();
    write_pcap(&pcap, &frames.iter().map(|f| f.0.clone()).collect::<Vec<_>>());
    let fields = [
        "frame.protocols",
        "infiniband.bth.opcode",
        "infiniband.bth.destqp",
        "infiniband.bth.psn",
        "infiniband.aeth.syndrome",
        "infiniband.aeth.msn",
        "infiniband.invariant.crc",
        "_ws.malformed",
    ];
    let rows = tshark_fields(&pcap, &fields, &[]);
    assert_eq!(rows.len(), frames.len());
    for ((frame, opcode, psn, syndrome), row) in frames.iter().zip(&rows) {
        // A SEND's payload is left as data: no heuristic dissector (SMB Direct, NFS/RDMA,
        // iSER...) claims our segment info.
        assert!(row[0].ends_with(":ip:udp:infiniband") || row[0].ends_with(":ip:udp:infiniband:data"), "{row:?}");
        assert_eq!(row[1], opcode.to_string(), "{row:?}");
        assert_eq!(row[2], format!("0x{:06x}", FLOW + QPN_BASE), "{row:?}");
        assert_eq!(row[3], psn.to_string(), "{row:?}");
        assert_eq!(row[4], syndrome.map(|s| s.to_string()).unwrap_or_default(), "{row:?}");
        if syndrome.is_some() {
            assert_eq!(row[5], "4", "MSN = message id");
        }
        // Wireshark 4.0 shows the ICRC (as a big-endian number) but does not check it, and
        // takes a CNP's 0x81 for an unknown opcode whose bytes it leaves as data.
        let stored = u32::from_be_bytes(frame[frame.len() - 4..].try_into().unwrap());
        let expected = if *opcode == 0x81 { String::new() } else { format!("0x{stored:08x}") };
        assert_eq!(row[6], expected, "{row:?}");
        assert_eq!(row.get(7).map(String::as_str).unwrap_or(""), "", "malformed: {row:?}");
    }
    for (index, message) in tshark_expert_messages(&pcap).iter().enumerate() {
        assert!(message.is_empty(), "frame {}: expert message {message}", index + 1);
    }
}

#[test]
fn scapy_reads_the_same_fields_and_recomputes_every_icrc() {
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("roce.pcap");
    let frames = frames();
    write_pcap(&pcap, &frames.iter().map(|f| f.0.clone()).collect::<Vec<_>>());
    let checked = roce_check(&pcap);
    assert_eq!(checked.len(), frames.len());
    for ((_, opcode, psn, syndrome), read) in frames.iter().zip(&checked) {
        assert_eq!(read["roce"], true, "{read}");
        assert_eq!((read["opcode"].as_u64(), read["psn"].as_u64()), (Some(u64::from(*opcode)), Some(u64::from(*psn))));
        assert_eq!(read["dest_qp"].as_u64(), Some(u64::from(FLOW + QPN_BASE)), "{read}");
        assert_eq!(read["syndrome"].as_u64(), syndrome.map(u64::from), "{read}");
        assert_eq!(read["icrc_ok"], true, "{read}");
    }
    assert_eq!(checked.last().unwrap()["ecn"], 3, "the CE-marked copy");
    assert_eq!(checked[6]["becn"], 1, "a CNP has BECN set");

    // The oracle can fail: one flipped payload byte.
    let mut corrupt = frames[0].0.clone();
    corrupt[100] ^= 0x01;
    let bad = dir.path().join("corrupt.pcap");
    write_pcap(&bad, &[corrupt.clone()]);
    assert_eq!(roce_check(&bad)[0]["icrc_ok"], false);
    assert!(FrameView::parse(&corrupt).unwrap().traffic().is_err());
}
