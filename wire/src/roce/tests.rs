//! RoCEv2 packets as the endpoints build them (`Framing::Rocev2`) and as parsers must
//! reject them.

use super::*;
use crate::{
    DataFrameSpec, EthernetAddress, FrameView, Framing, Pcp, QPN_BASE, TrafficKind, TrafficRepr, VlanRepr,
    build_data_frame, mark_ecn_ce,
};
use proptest::prelude::*;

const ETH_VLAN: usize = 18;
const IP_AT: usize = ETH_VLAN;
const UDP_AT: usize = IP_AT + 20;
const BTH_AT: usize = UDP_AT + 8;

/// A segment's header as the other wire tests build theirs.
pub(crate) fn traffic(kind: TrafficKind) -> TrafficRepr {
    TrafficRepr {
        kind,
        flow_id: 7,
        sequence: 9,
        message_id: 3,
        message_len: 10_000,
        offset: 0,
        timestamp_ns: 123,
        ack_req: false,
    }
}

fn spec(traffic: TrafficRepr, frame_len: usize) -> DataFrameSpec {
    let vlan = Some(VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 1 });
    DataFrameSpec {
        src_port: 49152,
        dst_port: 39000,
        ecn: 2,
        traffic,
        framing: Framing::Rocev2,
        ..DataFrameSpec::between(
            EthernetAddress([2, 0, 0, 0, 0, 1]),
            EthernetAddress([2, 0, 0, 0, 0, 2]),
            vlan,
            frame_len,
        )
    }
}

fn roce(frame: &[u8]) -> crate::Result<RoceRepr> {
    RoceRepr::parse(&frame[IP_AT..])
}

#[test]
fn a_data_frame_is_headers_segment_info_and_icrc() {
    let frame = spec(traffic(TrafficKind::Data), 1500).to_bytes();
    assert_eq!(frame.len(), 1502, "1500 - 82 = 1418 bytes, with the segment info 1438: padded to 1440");
    assert_eq!(&frame[IP_AT + 6..IP_AT + 8], &[0x40, 0x00], "DF");
    assert_eq!(&frame[UDP_AT..UDP_AT + 4], &[0xC0, 0x00, 0x12, 0xB7], "source port as given, 4791");
    assert_eq!(&frame[UDP_AT + 6..UDP_AT + 8], &[0, 0], "no UDP checksum");
    let repr = roce(&frame).unwrap();
    assert_eq!(repr.bth.opcode, Opcode::RcSendFirst);
    assert_eq!((repr.bth.dest_qp, repr.bth.psn, repr.bth.pad_count), (7 + QPN_BASE, 9, 2));
    assert_eq!(repr.payload_len, 20 + 1418);
    let packet = RocePacket::new_checked(&frame[BTH_AT..]).unwrap();
    assert_eq!(&packet.payload()[..12], &[0, 0, 0, 3, 0, 0, 0x27, 0x10, 0, 0, 0, 0], "message id, length, offset");
    assert_eq!(&packet.payload()[12..20], &123u64.to_be_bytes(), "timestamp");
    assert_eq!(FrameView::parse(&frame).unwrap().traffic().unwrap().2, traffic(TrafficKind::Data));
}

#[test]
fn the_opcode_follows_the_segment_place_in_its_message() {
    // 200-byte frames carry 200 - 82 = 118 bytes.
    let opcode = |offset, message_len| {
        let spec = spec(TrafficRepr { offset, message_len, ..traffic(TrafficKind::Data) }, 200);
        (roce(&spec.to_bytes()).unwrap().bth.opcode, spec.roce_repr().bth.ack_req)
    };
    assert_eq!(opcode(0, 118), (Opcode::RcSendOnly, true));
    assert_eq!(opcode(0, 50), (Opcode::RcSendOnly, true));
    assert_eq!(opcode(0, 119), (Opcode::RcSendFirst, false));
    assert_eq!(opcode(118, 1000), (Opcode::RcSendMiddle, false));
    assert_eq!(opcode(882, 1000), (Opcode::RcSendLast, true));
    assert_eq!(opcode(0, u32::MAX), (Opcode::RcSendFirst, false), "an unbounded flow");
    assert_eq!(opcode(u32::MAX - 10, u32::MAX), (Opcode::RcSendMiddle, false), "is never last");
}

#[test]
fn psns_are_the_low_24_bits_of_the_sequence() {
    let data = spec(TrafficRepr { sequence: 0x100_0005, ..traffic(TrafficKind::Data) }, 200).to_bytes();
    assert_eq!(roce(&data).unwrap().bth.psn, 5);
    assert_eq!(FrameView::parse(&data).unwrap().traffic().unwrap().2.sequence, 5);
    // An ACK names the last PSN received: sequence 0x1000000 acknowledges PSN 0xFFFFFF.
    let ack = spec(TrafficRepr { sequence: 0x100_0000, ..traffic(TrafficKind::Ack) }, 0).to_bytes();
    assert_eq!(roce(&ack).unwrap().bth.psn, 0xFF_FFFF);
    assert_eq!(FrameView::parse(&ack).unwrap().traffic().unwrap().2.sequence, 0);
}

#[test]
fn acks_naks_and_cnps() {
    let ack = spec(TrafficRepr { message_id: 0x0102_0304, ..traffic(TrafficKind::Ack) }, 1500);
    let frame = ack.to_bytes();
    assert_eq!(frame.len(), 18 + 20 + 8 + 12 + 4 + 4, "an ACK has no payload whatever frame_len says");
    let repr = roce(&frame).unwrap();
    assert_eq!((repr.bth.opcode, repr.bth.psn), (Opcode::RcAcknowledge, 8));
    assert_eq!(repr.aeth, Some(AethRepr { syndrome: AethSyndrome::Ack { credits: 0x1F }, msn: 0x02_0304 }));
    let (_, _, parsed) = FrameView::parse(&frame).unwrap().traffic().unwrap();
    let expected = TrafficRepr { message_id: 0x02_0304, message_len: 0, offset: 0, timestamp_ns: 0, ..ack.traffic };
    assert_eq!(parsed, expected);

    let nak = spec(traffic(TrafficKind::Nak), 0).to_bytes();
    let repr = roce(&nak).unwrap();
    assert_eq!((repr.bth.psn, repr.aeth.unwrap().syndrome), (9, AethSyndrome::Nak(NakCode::PsnSequenceError)));
    let (_, _, parsed) = FrameView::parse(&nak).unwrap().traffic().unwrap();
    assert_eq!((parsed.kind, parsed.sequence, parsed.message_id), (TrafficKind::Nak, 9, 3));

    let cnp = spec(traffic(TrafficKind::Cnp), 0).to_bytes();
    assert_eq!(cnp.len(), 18 + 20 + 8 + 12 + 16 + 4);
    assert_eq!(cnp[IP_AT + 1] & 0x03, 0, "a CNP is Not-ECT");
    let repr = roce(&cnp).unwrap();
    assert_eq!((repr.bth.opcode, repr.bth.dest_qp, repr.bth.psn, repr.payload_len), (Opcode::Cnp, 7 + QPN_BASE, 0, 16));
    assert_eq!(&cnp[BTH_AT + 4..BTH_AT + 5], &[0x40], "BECN");
    let (_, _, parsed) = FrameView::parse(&cnp).unwrap().traffic().unwrap();
    assert_eq!((parsed.kind, parsed.flow_id, parsed.sequence), (TrafficKind::Cnp, 7, 0));
}

#[test]
fn ethernet_padding_after_the_icrc_is_not_payload() {
    // The shortest RoCEv2 frame we send, an untagged ACK, is 62 bytes: no padding of our own.
    let ack = DataFrameSpec { vlan: None, ..spec(traffic(TrafficKind::Ack), 0) };
    let mut frame = ack.to_bytes();
    assert_eq!(frame.len(), 62);
    assert_eq!(u16::from_be_bytes([frame[16], frame[17]]), 48, "IP total length: 20 + 8 + 12 + 4 + 4");
    // Trailing bytes after the IP packet (padding, an FCS a capture kept) are left out.
    frame.extend_from_slice(&[0xAA; 6]);
    assert_eq!(FrameView::parse(&frame).unwrap().traffic().unwrap().2.kind, TrafficKind::Ack);
}

#[test]
fn a_ce_mark_and_a_ttl_decrement_keep_the_icrc() {
    let mut frame = spec(traffic(TrafficKind::Data), 300).to_bytes();
    assert!(mark_ecn_ce(&mut frame));
    frame[IP_AT + 8] -= 1;
    frame[IP_AT + 10..IP_AT + 12].fill(0);
    let checksum = crate::field::internet_checksum(&[&frame[IP_AT..IP_AT + 20]]);
    frame[IP_AT + 10..IP_AT + 12].copy_from_slice(&checksum.to_be_bytes());
    let view = FrameView::parse(&frame).unwrap();
    assert_eq!(view.ecn(), Some(3));
    assert!(crate::Ipv4Packet::new_checked(view.payload).unwrap().checksum_valid());
    assert_eq!(view.traffic().unwrap().2, traffic(TrafficKind::Data));
}

#[test]
fn each_rejection_has_its_reason() {
    let error = |kind| Err(Error::new(Layer::Roce, kind));
    let frame = spec(traffic(TrafficKind::Data), 300).to_bytes();
    let mut flipped = frame.clone();
    flipped[BTH_AT + BTH_LEN + 30] ^= 0x01;
    assert_eq!(roce(&flipped), error(ErrorKind::BadChecksum));
    assert_eq!(
        FrameView::parse(&flipped).unwrap().traffic().unwrap_err(),
        Error::new(Layer::Roce, ErrorKind::BadChecksum)
    );

    // A UDP datagram to 4791 with 11 bytes after the UDP header.
    let truncated = |frame: &[u8], keep: usize| {
        let mut frame = frame[..BTH_AT + keep].to_vec();
        let udp_len = (8 + keep) as u16;
        frame[UDP_AT + 4..UDP_AT + 6].copy_from_slice(&udp_len.to_be_bytes());
        frame[IP_AT + 2..IP_AT + 4].copy_from_slice(&(udp_len + 20).to_be_bytes());
        frame
    };
    assert_eq!(roce(&truncated(&frame, 11)), error(ErrorKind::Truncated), "BTH");
    assert_eq!(roce(&truncated(&frame, 15)), error(ErrorKind::Truncated), "BTH and ICRC");
    let ack = spec(traffic(TrafficKind::Ack), 0).to_bytes();
    assert_eq!(roce(&truncated(&ack, 12 + 3 + 4)), error(ErrorKind::Truncated), "AETH");

    let mut unknown = frame.clone();
    unknown[BTH_AT] = 0x0A; // RC RDMA WRITE ONLY
    fill_icrc(&mut unknown[IP_AT..]);
    assert_eq!(roce(&unknown), error(ErrorKind::UnknownOpcode));

    let mut pad = truncated(&frame, 12 + 2 + 4);
    pad[BTH_AT + 1] |= 0x30; // pad count 3 > 2 bytes of payload
    fill_icrc(&mut pad[IP_AT..]);
    assert_eq!(roce(&pad), error(ErrorKind::BadLength));

    let mut low_qp = frame.clone();
    low_qp[BTH_AT + 5..BTH_AT + 8].copy_from_slice(&[0, 0, 1]);
    fill_icrc(&mut low_qp[IP_AT..]);
    roce(&low_qp).unwrap();
    assert_eq!(
        FrameView::parse(&low_qp).unwrap().traffic().unwrap_err(),
        Error::new(Layer::Roce, ErrorKind::BadValue),
        "QP 1 is no flow"
    );
}

proptest! {
    #[test]
    fn endpoint_frames_round_trip(
        kind in 0usize..4, flow_id in 0u32..(1 << 24) - QPN_BASE, sequence in 0u32..1 << 24, message_id in 0u32..1 << 24,
        message_len: u32, offset: u32, timestamp_ns: u64, frame_len in 0usize..1600, tagged: bool, ecn in 0u8..3,
        ack_req: bool,
    ) {
        let kind = [TrafficKind::Data, TrafficKind::Ack, TrafficKind::Nak, TrafficKind::Cnp][kind];
        let sent = TrafficRepr { kind, flow_id, sequence, message_id, message_len, offset, timestamp_ns, ack_req };
        let spec = DataFrameSpec { ecn, vlan: if tagged { spec(sent, 0).vlan } else { None }, ..spec(sent, frame_len) };
        let mut frame = vec![0xEEu8; 1700];
        let len = build_data_frame(&mut frame, &spec);
        prop_assert_eq!(len, spec.len());
        prop_assert!(len >= 60);
        let view = FrameView::parse(&frame[..len]).unwrap();
        let (ip, udp, parsed) = view.traffic().unwrap();
        prop_assert_eq!((udp.src_port, udp.dst_port), (49152, ROCEV2_UDP_PORT));
        prop_assert!(crate::Ipv4Packet::new_checked(view.payload).unwrap().checksum_valid());
        let zero = TrafficRepr { message_len: 0, offset: 0, timestamp_ns: 0, ack_req: false, ..sent };
        let repr = RoceRepr::parse(&view.payload[..20 + ip.payload_len]).unwrap();
        let ends = matches!(repr.bth.opcode, Opcode::RcSendLast | Opcode::RcSendOnly);
        let expected = match kind {
            // RC requests an ACK for a message's last segment whatever the sender asked.
            TrafficKind::Data => TrafficRepr { ack_req: ack_req || ends, ..sent },
            TrafficKind::Ack | TrafficKind::Nak => zero,
            TrafficKind::Cnp => TrafficRepr { sequence: 0, message_id: 0, ..zero },
        };
        prop_assert_eq!(parsed, expected);
        prop_assert_eq!(ip.ecn, if kind == TrafficKind::Cnp { 0 } else { ecn });
        prop_assert_eq!((repr.payload_len + usize::from(repr.bth.pad_count)) % 4, 0);
    }

    #[test]
    fn parsing_any_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
        let _ = RoceRepr::parse(&bytes);
        if let Ok(packet) = RocePacket::new_checked(&bytes[..]) {
            let _ = (RoceRepr::parse_headers(&packet), packet.payload(), packet.icrc());
        }
    }
}
