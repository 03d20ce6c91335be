//! The transport end to end between two hosts back to back: go-back-N recovery from lost
//! segments and acknowledgements, per-priority ACKs under PFC, long-lived flows, QCN's
//! CN-TAG, FECN probe reflection; the same in RoCEv2 framing in `rocev2`; RTT samples and
//! the delay-based controls (TIMELY, Swift) over a cable with a delay in `delay`.

mod delay;
mod rocev2;

use super::reactions::MAX_REFLECTIONS;
use super::{ConnectionSpec, MessageSpec, QcnReaction, Transport, TransportConfig};
use crate::{Arrivals, HostNic, RpParams};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    CN_TAG_HEADER_LEN, CnTagRepr, EthernetAddress, FecnProbeRepr, FecnSubtype, FrameView, Framing, Ipv4Addr, L2Repr,
    Pcp, TrafficKind, TrafficRepr, VlanRepr, build_fecn_probe_frame, ethertype,
};
use std::time::Duration;

const A: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 1]);
const B: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 2]);

fn transport(mac: EthernetAddress) -> (Transport, HostNic) {
    let ip = Ipv4Addr::new(10, 0, 0, mac.0[5]);
    (Transport::new(TransportConfig::new(mac, ip, BitRate::gbps(1))), HostNic::new(BitRate::gbps(1), 0xFF))
}

fn connection(id: u32) -> ConnectionSpec {
    ConnectionSpec {
        id,
        dst: B,
        dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        priority: Pcp::new(3).unwrap(),
        vid: 1,
        rate: None,
        arrivals: Arrivals::Constant,
        until: None,
    }
}

/// Runs A → B back to back (no delay) until both are idle, dropping the frames (data
/// A → B, ACKs and NAKs B → A) for which `drop` says so. Returns A and B.
fn run(messages: Vec<MessageSpec>, mut drop: impl FnMut(TrafficRepr) -> bool) -> (Transport, Transport) {
    run_with(|_| {}, messages, |_, frame| drop(FrameView::parse(frame).unwrap().traffic().unwrap().2))
}

/// [`run`] with both hosts' configs changed by `configure`, and `tamper` handed every frame
/// with the time it is sent, to change it or to say it is lost (returning `true`).
fn run_with(
    configure: impl Fn(&mut TransportConfig),
    messages: Vec<MessageSpec>,
    mut tamper: impl FnMut(Instant, &mut [u8]) -> bool,
) -> (Transport, Transport) {
    let (mut a, mut a_nic) = transport(A);
    let (mut b, mut b_nic) = transport(B);
    configure(&mut a.config);
    configure(&mut b.config);
    a.add_connection(connection(0), messages);
    let mut now = Instant::ZERO;
    let mut buffer = [0u8; 2048];
    for _ in 0..1_000_000 {
        while let Some(len) = a.poll_transmit(now, &mut a_nic, &mut buffer) {
            if !tamper(now, &mut buffer[..len]) {
                assert!(b.handle_rx(now, &buffer[..len]));
            }
        }
        while let Some(len) = b.poll_transmit(now, &mut b_nic, &mut buffer) {
            if !tamper(now, &mut buffer[..len]) {
                assert!(a.handle_rx(now, &buffer[..len]));
            }
        }
        a.handle_timeout(now);
        match a.poll_timeout(&a_nic).into_iter().chain(b.poll_timeout(&b_nic)).min() {
            Some(next) => now = now.max(next),
            None => return (a, b),
        }
    }
    panic!("no progress at {now}");
}

/// A `drop` for [`run`]: the first transmission of data segment `sequence`, nothing else.
fn data_segment_once(sequence: u32) -> impl FnMut(TrafficRepr) -> bool {
    let mut dropped = false;
    move |t| {
        let drop = t.kind == TrafficKind::Data && t.sequence == sequence && !dropped;
        dropped |= drop;
        drop
    }
}

fn message(id: u32, size: u32) -> MessageSpec {
    MessageSpec { id, size: Some(size), start: Instant::ZERO }
}

#[test]
fn messages_complete_in_order_without_retransmission_when_nothing_is_lost() {
    let (a, b) = run(vec![message(0, 100_000), message(1, 1), message(2, 5_000)], |_| false);
    let records: Vec<_> = a.messages().collect();
    assert!(records.iter().all(|r| r.finish.is_some()), "{records:?}");
    assert!(records.windows(2).all(|w| w[0].finish <= w[1].finish));
    let (_, sender) = a.sender_stats().next().unwrap();
    let segments = 100_000u64.div_ceil(1422) + 1 + 5_000u64.div_ceil(1422);
    assert_eq!((sender.segments, sender.retransmitted, sender.naks, sender.timeouts), (segments, 0, 0, 0));
    let (_, receiver) = b.receiver_stats().next().unwrap();
    assert_eq!((receiver.bytes, receiver.messages, receiver.out_of_order), (105_001, 3, 0));
    assert!(a.is_done());
}

#[test]
fn a_gap_draws_one_nak_and_the_sender_goes_back_to_it() {
    let (a, b) = run(vec![message(0, 50 * 1422)], data_segment_once(10));
    let (_, sender) = a.sender_stats().next().unwrap();
    let (_, receiver) = b.receiver_stats().next().unwrap();
    assert_eq!((sender.naks, sender.timeouts), (1, 0));
    // Everything from 10 up to what was in flight when the NAK came is sent again.
    assert_eq!(sender.retransmitted, receiver.out_of_order + 1);
    assert_eq!((receiver.bytes, receiver.messages), (50 * 1422, 1));
    assert!(a.is_done());
}

#[test]
fn a_lost_tail_is_recovered_by_the_retransmission_timer() {
    let (a, b) = run(vec![message(0, 3 * 1422)], data_segment_once(2));
    let (_, sender) = a.sender_stats().next().unwrap();
    assert_eq!((sender.naks, sender.timeouts), (0, 1));
    // Segments 0 and 1 arrived but were not yet acknowledged (ACKs are coalesced): the
    // sender goes back to 0 and the duplicate draws the ACK that skips it to 2.
    assert_eq!(sender.retransmitted, 2);
    let record = a.messages().next().unwrap();
    assert!(record.fct().unwrap() >= a.config().rto, "the FCT includes the timeout: {record:?}");
    assert_eq!(b.receiver_stats().next().unwrap().1.messages, 1);
}

#[test]
fn lost_acknowledgements_are_covered_by_later_ones_or_the_timer() {
    // Every other ACK and NAK is lost, the last one included: cumulative ACKs cover the
    // gaps, and the timer recovers the lost final ACK.
    let mut acknowledgements = 0u32;
    let (a, b) = run(vec![message(0, 200 * 1422), message(1, 700)], |t| {
        let ack = t.kind != TrafficKind::Data;
        acknowledgements += u32::from(ack);
        ack && acknowledgements % 2 == 1
    });
    assert!(a.is_done());
    let (_, sender) = a.sender_stats().next().unwrap();
    assert!(sender.timeouts >= 1, "a lost final ACK costs a timeout: {sender:?}");
    let (_, receiver) = b.receiver_stats().next().unwrap();
    assert_eq!((receiver.bytes, receiver.messages, receiver.out_of_order), (200 * 1422 + 700, 2, 0));
}

#[test]
fn a_pattern_of_data_losses_is_delivered_in_order() {
    // Every seventh segment is lost once: go-back-N still delivers in order.
    let mut seen = std::collections::HashSet::new();
    let (a, b) = run(vec![message(0, 200 * 1422), message(1, 700)], |t| {
        t.kind == TrafficKind::Data && t.sequence % 7 == 3 && seen.insert(t.sequence)
    });
    assert!(a.is_done());
    let (_, sender) = a.sender_stats().next().unwrap();
    assert!(sender.naks > 0 && sender.retransmitted > 0, "{sender:?}");
    let (_, receiver) = b.receiver_stats().next().unwrap();
    assert_eq!((receiver.bytes, receiver.messages), (200 * 1422 + 700, 2));
}

#[test]
fn a_paused_priority_does_not_hold_up_another_priority_s_acknowledgements() {
    let (mut a, mut a_nic) = transport(A);
    let (mut b, mut b_nic) = transport(B);
    let low = ConnectionSpec { id: 1, priority: Pcp::new(1).unwrap(), ..connection(1) };
    a.add_connection(connection(0), vec![message(0, 1)]);
    a.add_connection(low, vec![message(0, 1)]);
    let mut buffer = [0u8; 2048];
    let mut now = Instant::ZERO;
    for _ in 0..2 {
        now = now.max(a.poll_timeout(&a_nic).unwrap());
        let len = a.poll_transmit(now, &mut a_nic, &mut buffer).unwrap();
        assert!(b.handle_rx(now, &buffer[..len]));
    }
    // B's priority 3 is paused by its peer: connection 0's ACK waits, connection 1's goes.
    let mut quanta = [0; 8];
    quanta[3] = 65535;
    let pfc = pfcswitch_wire::MacControlRepr::Pfc(pfcswitch_wire::PfcRepr { enable: 1 << 3, quanta });
    let len = pfcswitch_wire::build_mac_control_frame(&mut buffer, A, pfcswitch_wire::PAUSE_MULTICAST, &pfc);
    assert!(b_nic.handle_rx(now, &buffer[..len]));
    let len = b.poll_transmit(now, &mut b_nic, &mut buffer).expect("the unpaused ACK goes out");
    let ack = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
    assert_eq!((ack.kind, ack.flow_id, ack.sequence), (TrafficKind::Ack, 1, 1));
    assert!(b.poll_transmit(now, &mut b_nic, &mut buffer).is_none(), "connection 0's ACK waits for XON");
}

#[test]
fn a_long_lived_flow_sends_full_segments_until_the_end_of_the_workload() {
    let (mut a, mut a_nic) = transport(A);
    // At the end of the workload it stops, while its sized messages would go on.
    let end = Instant::from_nanos(1_000_000);
    a.config.long_lived_until = end;
    a.add_connection(connection(0), vec![MessageSpec { id: 0, size: None, start: Instant::ZERO }]);
    let mut buffer = [0u8; 2048];
    let len = a.poll_transmit(Instant::ZERO, &mut a_nic, &mut buffer).unwrap();
    assert_eq!(len, 1500);
    let header = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
    assert_eq!((header.message_len, header.offset), (u32::MAX, 0));
    let mut sent = 1;
    while let Some(at) = a.poll_timeout(&a_nic).filter(|&at| at < end + Duration::from_millis(1)) {
        sent += usize::from(a.poll_transmit(at, &mut a_nic, &mut buffer).is_some());
    }
    assert_eq!(sent, 1_000_000 / 12_192 + 1, "1500-byte frames at 1 Gbit/s for 1 ms");
    assert!(a.is_done(), "no sized message is waiting");
}

#[test]
fn with_qcn_a_full_segment_carries_a_cn_tag_and_still_fits_the_mtu() {
    let (mut a, mut a_nic) = transport(A);
    a.config.qcn = Some(QcnReaction { params: RpParams::default(), line_rate: BitRate::gbps(1) });
    a.add_connection(connection(7), vec![MessageSpec { id: 0, size: None, start: Instant::ZERO }]);
    let mut buffer = [0u8; 2048];
    let len = a.poll_transmit(Instant::ZERO, &mut a_nic, &mut buffer).unwrap();
    assert_eq!(len, a.config.frame_len, "the CN-TAG takes payload, not MTU");
    let view = FrameView::parse(&buffer[..len]).unwrap();
    assert_eq!(view.l2.cn_tag, Some(CnTagRepr { flow_id: 7 }));
    assert_eq!(a.config.payload_len(), 1500 - Framing::Traffic.overhead() - CN_TAG_HEADER_LEN);
}

#[test]
fn a_connection_with_its_own_end_stops_its_long_lived_flow_there() {
    let (mut a, mut a_nic) = transport(A);
    let stop = Instant::from_nanos(500_000);
    let spec = ConnectionSpec { until: Some(stop), ..connection(0) };
    a.config.long_lived_until = Instant::from_nanos(1_000_000);
    a.add_connection(spec, vec![MessageSpec { id: 0, size: None, start: Instant::ZERO }]);
    let mut buffer = [0u8; 2048];
    let mut last = Instant::ZERO;
    while let Some(at) = a.poll_timeout(&a_nic).filter(|&at| at < Instant::from_nanos(2_000_000)) {
        if a.poll_transmit(at, &mut a_nic, &mut buffer).is_some() {
            last = at;
        }
    }
    assert!(last < stop && last.as_nanos() + 12_192 >= stop.as_nanos(), "the last frame left at {last}");
}

#[test]
fn a_probe_for_this_host_goes_back_to_its_source_as_it_arrived_and_a_full_queue_is_counted() {
    let (mut b, mut b_nic) = transport(B);
    let probe = FecnProbeRepr {
        subtype: FecnSubtype::Probe,
        hops: 2,
        flow_id: 7,
        sequence: 41,
        rate_kbps: 50_000,
        bottleneck: EthernetAddress([2, 0, 0, 0, 0, 9]),
        timestamp_ns: 123_456,
    };
    let vlan = Some(VlanRepr { pcp: Pcp::new(5).unwrap(), dei: false, vid: 10 });
    let l2 = L2Repr { dst: B, src: A, vlan, cn_tag: None, ethertype: ethertype::LOCAL_EXPERIMENTAL_1 };
    let mut frame = [0u8; 128];
    let len = build_fecn_probe_frame(&mut frame, &l2, &probe);
    for _ in 0..=MAX_REFLECTIONS {
        assert!(b.handle_rx(Instant::ZERO, &frame[..len]));
    }
    assert_eq!(b.reflections_dropped(), 1, "the queue holds {MAX_REFLECTIONS}");
    let mut out = [0u8; 1600];
    let sent = b.poll_transmit(Instant::ZERO, &mut b_nic, &mut out).expect("a reflection");
    let view = FrameView::parse(&out[..sent]).unwrap();
    assert_eq!((view.l2.dst, view.l2.src, view.l2.vlan), (A, B, vlan), "back to its source on its VLAN and priority");
    let reflected = view.fecn_probe().unwrap();
    assert_eq!(reflected, FecnProbeRepr { subtype: FecnSubtype::Reflected, ..probe }, "every field as it arrived");
}
