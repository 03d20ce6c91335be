//! The transport in RoCEv2 framing: RC SENDs and ACKs with valid ICRCs, a PSN sequence
//! error NAK on a gap, CNPs for CE marks and DCQCN's reaction to them.

use super::{message, run_with};
use crate::{DcqcnModel, DcqcnParams, HpccParams, HpccTransport, MessageSpec, Transport, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{AethSyndrome, FrameView, Framing, NakCode, Opcode, ROCEV2_UDP_PORT, mark_ecn_ce};
use std::time::Duration;

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

#[test]
fn ce_marks_draw_one_cnp_per_interval_and_dcqcn_slows_the_sender() {
    let with_dcqcn = |config: &mut TransportConfig| {
        rocev2(config);
        config.dcqcn = Some(DcqcnParams::default());
    };
    let marks_until = Instant::from_nanos(1_000_000);
    let mut cnps = Vec::new();
    let (a, b) = run_with(with_dcqcn, vec![message(0, 1_000_000)], |now, frame| {
        match opcode_psn_syndrome(frame).0 {
            Opcode::Cnp => cnps.push(now),
            opcode if opcode.is_send() && now < marks_until => assert!(mark_ecn_ce(frame), "data goes out ECT(0)"),
            _ => {}
        }
        false
    });
    // The first mark draws a CNP at once, then the first marked frame 50 µs after the last
    // CNP draws the next: as the cuts slow the sender (a frame every 8.7 µs at 1 Gbit/s,
    // every 35 µs at 250 Mbit/s), the CNPs come a little later than every 50 µs.
    assert_eq!(cnps[0], Instant::ZERO, "the first marked segment draws a CNP at once");
    assert!(cnps.windows(2).all(|w| w[1] - w[0] >= Duration::from_micros(50)), "{cnps:?}");
    assert!((10..=20).contains(&cnps.len()), "{} CNPs in the first ms", cnps.len());
    let (_, receiver) = b.receiver_stats().next().unwrap();
    let (_, sender) = a.sender_stats().next().unwrap();
    let (_, dcqcn, trace) = a.dcqcn_points().next().expect("DCQCN is on");
    assert_eq!(
        (receiver.cnps_sent, sender.cnps, dcqcn.cnps()),
        (cnps.len() as u64, cnps.len() as u64, cnps.len() as u64)
    );
    assert_eq!(trace.cnms().iter().sum::<u32>() as usize, cnps.len(), "the trace counts them per bin");
    // The cuts cost time: the same message without marks is faster.
    let (unmarked, _) = run_with(with_dcqcn, vec![message(0, 1_000_000)], |_, _| false);
    let fct = |t: &Transport| t.messages().next().unwrap().fct().unwrap();
    assert!(fct(&a) > fct(&unmarked) + Duration::from_micros(500), "{:?} vs {:?}", fct(&a), fct(&unmarked));
    assert_eq!(unmarked.sender_stats().next().unwrap().1.cnps, 0);
}

/// HPCC's ns-3 cancels its NIC model's timers when the queue pair completes: the transport
/// retires the connection with its message, α not yet decayed to 0, and has no timer left.
#[test]
fn hpccs_nic_model_stops_with_its_queue_pair() {
    let with_hpcc = |config: &mut TransportConfig| {
        rocev2(config);
        config.cnp_interval = Duration::ZERO;
        let params = DcqcnParams {
            model: DcqcnModel::Hpcc,
            alpha_update_period: Duration::from_micros(1),
            ..DcqcnParams::default()
        };
        config.dcqcn = Some(params);
    };
    let (a, _) = run_with(with_hpcc, vec![message(0, 200_000)], |_, frame| {
        // Every segment marked, so that CNPs come until the end.
        if opcode_psn_syndrome(frame).0.is_send() {
            mark_ecn_ce(frame);
        }
        false
    });
    let (_, dcqcn, _) = a.dcqcn_points().next().expect("DCQCN is on");
    assert!(dcqcn.cnps() > 10, "a CNP per marked segment: {}", dcqcn.cnps());
    assert!(dcqcn.rate().bps() < 1_000_000_000, "the marks cut the rate");
    assert!(a.messages().next().unwrap().fct().is_some());
    // Left running, the α timer would decay α by 255/256 a µs until it is exactly 0.
    assert!(dcqcn.alpha() > 0.0, "α {} when the timers stopped, with the message", dcqcn.alpha());
}

/// HPCC's law is held only while its queue pair sends: made when the message starts and
/// dropped with the acknowledged connection (HPCC's fabric holds 1.66 million connections
/// for 100 ms of flows, a few thousand of them live), and the message still completes.
#[test]
fn hpccs_law_is_held_only_while_its_queue_pair_sends() {
    let with_hpcc = |config: &mut TransportConfig| {
        rocev2(config);
        let base_rtt = Duration::from_micros(10);
        config.hpcc = Some(HpccTransport { params: HpccParams::default(), base_rtt, max_hops: 5 });
    };
    let (mut a, _) = super::transport(super::A);
    with_hpcc(&mut a.config);
    let start = Instant::from_nanos(10_000);
    a.add_connection(super::connection(0), vec![MessageSpec { start, ..message(0, 20_000) }]);
    assert!(a.connections[0].reaction.is_none(), "nothing to react to before the start");
    a.handle_timeout(start);
    assert!(a.connections[0].reaction.is_some(), "made at the start");
    let (a, _) = run_with(with_hpcc, vec![message(0, 200_000)], |_, _| false);
    assert!(a.messages().next().unwrap().fct().is_some());
    assert!(a.connections[0].reaction.is_none(), "gone with the acknowledged message");
}

#[test]
fn malformed_datagrams_to_the_roce_port_are_counted_by_reason() {
    let (mut a, _) = super::transport(super::A);
    let (mut b, mut b_nic) = super::transport(super::B);
    rocev2(&mut a.config);
    rocev2(&mut b.config);
    a.add_connection(super::connection(0), vec![message(0, 3000)]);
    let mut frame = [0u8; 2048];
    let len = a.poll_transmit(Instant::ZERO, &mut crate::HostNic::new(a.config().line_rate, 0xFF), &mut frame).unwrap();
    let good = frame[..len].to_vec();
    // A flipped payload byte (bad ICRC), an unknown opcode (0x0A, RC RDMA READ request...)
    // and a datagram cut inside its BTH.
    let mut bad_icrc = good.clone();
    bad_icrc[100] ^= 1;
    let mut unknown = good.clone();
    unknown[18 + 20 + 8] = 0x0C;
    // Cut inside the BTH, with IP and UDP lengths (and the IP checksum) that say so.
    let mut truncated = good[..18 + 20 + 8 + 6].to_vec();
    let ip = pfcswitch_wire::Ipv4Repr { payload_len: 8 + 6, ..FrameView::parse(&good).unwrap().traffic().unwrap().0 };
    ip.emit(&mut pfcswitch_wire::Ipv4Packet::new_unchecked(&mut truncated[18..]));
    truncated[18 + 24..18 + 26].copy_from_slice(&14u16.to_be_bytes());
    for bad in [&bad_icrc, &unknown, &truncated] {
        assert!(b.handle_rx(Instant::ZERO, bad), "ours, and counted: {:?}", FrameView::parse(bad).map(|v| v.traffic()));
    }
    let counted: Vec<(String, u64)> = b.malformed().collect();
    let reasons = ["roce: bad_checksum", "roce: truncated", "roce: unknown_opcode"];
    assert_eq!(counted, reasons.map(|r| (r.to_string(), 1)));
    assert!(b.receiver_stats().next().is_none(), "none of them reached a receiver");
    assert!(b.poll_transmit(Instant::ZERO, &mut b_nic, &mut frame).is_none(), "and none drew an ACK or NAK");
}
