//! INT as a source inserts it, switches stamp it, a sink removes it and an ACK echoes it.

use super::*;
use crate::{DataFrameSpec, EthernetAddress, Framing, Pcp, ROCEV2_UDP_PORT, TrafficKind, VlanRepr};
use proptest::prelude::*;

const HEADROOM: usize = 256;
const IP_AT: usize = 18;
const UDP_AT: usize = IP_AT + 20;

fn data_frame() -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 1 });
    let traffic = crate::roce::tests::traffic(TrafficKind::Data);
    DataFrameSpec {
        src_port: 49152,
        ecn: 2,
        traffic,
        framing: Framing::Rocev2,
        ..DataFrameSpec::between(EthernetAddress([2, 0, 0, 0, 0, 1]), EthernetAddress([2, 0, 0, 0, 0, 2]), vlan, 1000)
    }
    .to_bytes()
}

/// `frame` behind `HEADROOM` bytes, with room after it for a source's header.
fn in_buffer(frame: &[u8]) -> Vec<u8> {
    let mut buffer = vec![0u8; HEADROOM + frame.len() + 1024];
    buffer[HEADROOM..HEADROOM + frame.len()].copy_from_slice(frame);
    buffer
}

fn hop(node: u32, ts: u64) -> IntHop {
    IntHop {
        node_id: Some(node),
        ports: None,
        queue: Some((3, 12_345)),
        egress_ns: Some(ts),
        tx_bytes: Some(u32::MAX - 5),
        link_mbps: Some(100_000),
    }
}

fn ip_total(frame: &[u8]) -> usize {
    usize::from(u16::from_be_bytes([frame[IP_AT + 2], frame[IP_AT + 3]]))
}

#[test]
fn hpccs_request_is_six_words_a_hop() {
    assert_eq!(IntInstructions::HPCC.hop_len(), 24);
    let all_wide = IntInstructions { standard: 0x0E00, domain: 0 };
    assert_eq!(all_wide.hop_len(), 24, "ingress and egress timestamps and L2 ids are 8 bytes each");
}

#[test]
fn a_record_reads_back_as_written_and_unmeasured_fields_are_all_ones() {
    let instructions = IntInstructions { standard: 0x8000 | 0x4000 | 0x2000 | 0x1000 | 0x0400, domain: 0xC000 };
    let mut bytes = vec![0u8; instructions.hop_len()];
    let written = IntHop { ports: Some((1, 2)), ..hop(9, 77) };
    written.emit(instructions, &mut bytes);
    // node id, ports, hop latency (all ones), queue, egress ts (8), tx bytes, link.
    assert_eq!(&bytes[..4], &9u32.to_be_bytes());
    assert_eq!(&bytes[4..8], &[0, 1, 0, 2]);
    assert_eq!(&bytes[8..12], &[0xFF; 4]);
    assert_eq!(&bytes[12..16], &[3, 0x00, 0x30, 0x39]);
    assert_eq!(&bytes[16..24], &77u64.to_be_bytes());
    assert_eq!(&bytes[28..32], &100_000u32.to_be_bytes());
    assert_eq!(IntHop::parse(instructions, &bytes), written);
    let big = IntHop { queue: Some((0, 1 << 30)), ..written };
    big.emit(instructions, &mut bytes);
    assert_eq!(IntHop::parse(instructions, &bytes).queue, Some((0, INT_MAX_QUEUE_BYTES)), "saturates");
}

#[test]
fn source_transit_and_sink_leave_the_roce_packet_as_it_was_sent() {
    let original = data_frame();
    let mut buffer = in_buffer(&original);
    let source = IntRepr::source(ROCEV2_UDP_PORT, IntInstructions::HPCC, 5);
    let len = insert_int(&mut buffer[HEADROOM..], original.len(), &source, &[]).unwrap();
    assert_eq!(len, original.len() + INT_HEADER_LEN);
    let frame = &buffer[HEADROOM..HEADROOM + len];
    assert_eq!(u16::from_be_bytes([frame[UDP_AT + 2], frame[UDP_AT + 3]]), INT_UDP_PORT);
    assert_eq!(ip_total(frame), ip_total(&original) + 16);
    let (shim, header) = int_of(frame).unwrap();
    assert_eq!(shim, UDP_AT + 8);
    assert_eq!(frame[shim + 1], 3, "v2.1's length: the MD header's 12 bytes, not the shim");
    assert_eq!(
        (header.kind(), header.original_port(), header.hop_count(), header.remaining_hops()),
        (IntKind::Md, 4791, 0, 5)
    );
    assert!(crate::Ipv4Packet::new_checked(&frame[IP_AT..]).unwrap().checksum_valid());

    let (mut start, mut len) = (HEADROOM, len);
    for (node, ts) in [(1, 100), (2, 250)] {
        (start, len) = apply_int(&mut buffer, start, len, &IntEgress::Push(hop(node, ts))).unwrap();
    }
    assert_eq!((start, len), (HEADROOM - 48, original.len() + 16 + 48));
    let frame = &buffer[start..start + len];
    let (_, header) = int_of(frame).unwrap();
    assert_eq!((header.hop_count(), header.remaining_hops()), (2, 3));
    assert_eq!(header.hop(0), hop(2, 250), "the newest first");
    assert_eq!(header.hop(1), hop(1, 100));
    assert_eq!(ip_total(frame), ip_total(&original) + 64);
    assert!(crate::Ipv4Packet::new_checked(&frame[IP_AT..]).unwrap().checksum_valid());

    let mut sunk = frame.to_vec();
    let len = remove_int(&mut sunk, frame.len()).unwrap();
    assert_eq!(&sunk[..len], &original[..], "the sink restores the source's packet, ICRC and all");
    let (_, _, traffic) = crate::FrameView::parse(&sunk[..len]).unwrap().traffic().unwrap();
    assert_eq!(traffic.sequence, 9);
}

#[test]
fn a_switch_flags_what_it_cannot_stamp() {
    let original = data_frame();
    let mut buffer = in_buffer(&original);
    let source = IntRepr::source(ROCEV2_UDP_PORT, IntInstructions::HPCC, 1);
    let len = insert_int(&mut buffer[HEADROOM..], original.len(), &source, &[]).unwrap();
    let (start, len) = apply_int(&mut buffer, HEADROOM, len, &IntEgress::Push(hop(1, 1))).unwrap();
    assert_eq!(
        apply_int(&mut buffer, start, len, &IntEgress::Push(hop(2, 2))).unwrap_err(),
        Error::new(Layer::Int, ErrorKind::BadValue),
        "no hop remains"
    );
    assert_eq!(apply_int(&mut buffer, start, len, &IntEgress::HopLimit).unwrap(), (start, len));
    apply_int(&mut buffer, start, len, &IntEgress::Mtu).unwrap();
    let (_, header) = int_of(&buffer[start..start + len]).unwrap();
    assert!(header.hop_limit_exceeded() && header.mtu_exceeded());
    assert_eq!(header.hop_count(), 1);
    let mut tight = buffer[start..start + len].to_vec();
    let without_headroom = apply_int(&mut tight, 0, len, &IntEgress::Push(hop(3, 3)));
    assert!(without_headroom.is_err());
}

#[test]
fn an_ack_echoes_the_records_under_a_type_2_shim() {
    let original = data_frame();
    let mut buffer = in_buffer(&original);
    let source = IntRepr::source(ROCEV2_UDP_PORT, IntInstructions::HPCC, 5);
    let len = insert_int(&mut buffer[HEADROOM..], original.len(), &source, &[]).unwrap();
    let (start, len) = apply_int(&mut buffer, HEADROOM, len, &IntEgress::Push(hop(4, 40))).unwrap();
    let (_, stamped) = int_of(&buffer[start..start + len]).unwrap();
    let metadata = stamped.metadata().to_vec();

    let mut ack = in_buffer(&original);
    let echo = IntRepr { kind: IntKind::Echo, ..source };
    let ack_len = insert_int(&mut ack[HEADROOM..], original.len(), &echo, &metadata).unwrap();
    let (_, header) = int_of(&ack[HEADROOM..HEADROOM + ack_len]).unwrap();
    assert_eq!((header.kind(), header.hop_count(), header.hop(0)), (IntKind::Echo, 1, hop(4, 40)));
    assert_eq!(
        apply_int(&mut ack, HEADROOM, ack_len, &IntEgress::HopLimit).unwrap_err().kind,
        ErrorKind::BadValue,
        "switches leave echoes alone"
    );
}

#[test]
fn inconsistent_headers_are_refused_by_reason() {
    let mut good = [0u8; 16];
    IntRepr::source(4791, IntInstructions::HPCC, 5).emit(&mut good);
    assert!(IntHeader::new_checked(&good[..]).is_ok());
    let refused = |change: fn(&mut [u8; 16])| {
        let mut bytes = good;
        change(&mut bytes);
        IntHeader::new_checked(&bytes[..]).unwrap_err().kind
    };
    assert_eq!(refused(|b| b[0] = 0x34), ErrorKind::BadValue, "type 3");
    assert_eq!(refused(|b| b[0] = 0x10), ErrorKind::BadValue, "NPT 0: DSCP-signalled, not ours");
    assert_eq!(refused(|b| b[4] = 0x10), ErrorKind::BadVersion);
    assert_eq!(refused(|b| b[6] = 5), ErrorKind::BadLength, "HopML not what the bitmaps ask");
    assert_eq!(refused(|b| b[1] = 9), ErrorKind::BadLength, "a stack of 24 bytes past the end");
    assert_eq!(refused(|b| b[1] = 4), ErrorKind::BadLength, "a stack of 4 bytes of 24-byte hops");
    assert_eq!(IntHeader::new_checked(&good[..15]).unwrap_err().kind, ErrorKind::Truncated);
}

proptest! {
    #[test]
    fn finding_and_stamping_int_never_panics(tail in proptest::collection::vec(any::<u8>(), 0..200)) {
        let mut frame = data_frame();
        frame.truncate(UDP_AT + 8);
        frame[UDP_AT + 2..UDP_AT + 4].copy_from_slice(&INT_UDP_PORT.to_be_bytes());
        frame.extend_from_slice(&tail);
        let total = (frame.len() - IP_AT) as u16;
        frame[IP_AT + 2..IP_AT + 4].copy_from_slice(&total.to_be_bytes());
        frame[UDP_AT + 4..UDP_AT + 6].copy_from_slice(&(total - 20).to_be_bytes());
        if let Ok((_, header)) = int_of(&frame) {
            for i in 0..header.hop_count() {
                header.hop(i);
            }
        }
        let mut buffer = in_buffer(&frame);
        let _ = apply_int(&mut buffer, HEADROOM, frame.len(), &IntEgress::Push(hop(1, 1)));
        let _ = remove_int(&mut frame.clone(), frame.len());
    }
}
