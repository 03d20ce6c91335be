//! The transport in RoCEv2 framing: RC SENDs and ACKs with valid ICRCs, a PSN sequence
//! error NAK on a gap.

use super::{message, run_with};
use crate::TransportConfig;
use pfcswitch_wire::{AethSyndrome, FrameView, Framing, NakCode, Opcode, ROCEV2_UDP_PORT};

/// RoCEv2 with a path MTU of 1024: 62 bytes of headers and ICRC around the RoCE payload.
fn rocev2(config: &mut TransportConfig) {
    config.framing = Framing::Rocev2;
    config.frame_len = 62 + 1024;
}

/// What the frame says as RoCEv2: its opcode, PSN and AETH syndrome; panics unless it is
/// RoCEv2 with a valid ICRC.
fn opcode_psn_syndrome(frame: &[u8]) -> (Opcode, u32, Option<AethSyndrome>) {
    let roce = FrameView::parse(frame).unwrap().roce().expect("RoCEv2");
    roce.icrc.expect("a valid ICRC");
    assert_eq!(roce.udp.dst_port, ROCEV2_UDP_PORT);
    (roce.repr.bth.opcode, roce.repr.bth.psn, roce.repr.aeth.map(|a| a.syndrome))
}

#[test]
fn messages_go_as_rc_sends_and_are_acknowledged_by_rc_acks() {
    let mut sends = Vec::new();
    let mut acks = 0;
    let (a, b) = run_with(rocev2, vec![message(0, 10_000), message(1, 1), message(2, 5_000)], |_, frame| {
        match opcode_psn_syndrome(frame) {
            (Opcode::RcAcknowledge, _, Some(AethSyndrome::Ack { .. })) => acks += 1,
            (opcode, psn, None) => sends.push((opcode, psn)),
            other => panic!("unexpected {other:?}"),
        }
        false
    });
    // 1004 bytes of message per packet (the payload's first 20 are the segment info).
    let payload = a.config().payload_len();
    assert_eq!(payload, 1004);
    let (first, second, third) = (10_000usize.div_ceil(payload), 1, 5_000usize.div_ceil(payload));
    let mut expected = vec![Opcode::RcSendFirst];
    expected.extend(std::iter::repeat_n(Opcode::RcSendMiddle, first - 2));
    expected.extend([Opcode::RcSendLast, Opcode::RcSendOnly, Opcode::RcSendFirst]);
    expected.extend(std::iter::repeat_n(Opcode::RcSendMiddle, third - 2));
    expected.push(Opcode::RcSendLast);
    assert_eq!(sends.iter().map(|s| s.0).collect::<Vec<_>>(), expected);
    assert!(sends.iter().enumerate().all(|(i, &(_, psn))| psn == i as u32), "PSNs count up from 0");
    assert!(acks > 0);
    let (_, receiver) = b.receiver_stats().next().unwrap();
    assert_eq!((receiver.bytes, receiver.messages, receiver.segments), (15_001, 3, (first + second + third) as u64));
    assert!(a.is_done());
}

#[test]
fn a_gap_draws_a_psn_sequence_error_nak_and_the_sender_goes_back() {
    let mut dropped = false;
    let mut naks = Vec::new();
    let (a, b) = run_with(rocev2, vec![message(0, 50 * 1004)], |_, frame| match opcode_psn_syndrome(frame) {
        (Opcode::RcSendMiddle, 10, _) if !dropped => {
            dropped = true;
            true
        }
        (Opcode::RcAcknowledge, psn, Some(AethSyndrome::Nak(code))) => {
            naks.push((psn, code));
            false
        }
        _ => false,
    });
    assert_eq!(naks, [(10, NakCode::PsnSequenceError)], "one NAK, naming the missing PSN");
    let (_, sender) = a.sender_stats().next().unwrap();
    assert_eq!((sender.naks, sender.timeouts), (1, 0));
    let (_, receiver) = b.receiver_stats().next().unwrap();
    assert_eq!((receiver.bytes, receiver.messages), (50 * 1004, 1));
}
