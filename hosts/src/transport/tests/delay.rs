//! RTT samples at the sender and the delay-based controls that use them (TIMELY's rate,
//! Swift's window), between two hosts joined by a cable with a one-way delay.

use super::super::{SwiftTransport, TimelyTransport};
use super::{A, B, connection, message, transport};
use crate::{DcqcnParams, SwiftParams, TimelyParams, Transport, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{FrameView, Framing, TrafficKind, TrafficRepr};
use std::time::Duration;

/// Runs A → B over a cable of one-way `delay` (frames arrive `delay` after they are sent;
/// the harness does not model serialisation on arrival) until both are idle, with both
/// configs changed by `configure` and the frames for which `drop` says so lost. Returns A,
/// B and the times A sent each data segment, by sequence number, in order.
fn run_delayed(
    configure: impl Fn(&mut TransportConfig),
    messages: Vec<crate::MessageSpec>,
    delay: Duration,
    mut drop: impl FnMut(TrafficRepr) -> bool,
) -> (Transport, Transport, Vec<(u32, Instant)>) {
    let (mut a, mut a_nic) = transport(A);
    let (mut b, mut b_nic) = transport(B);
    configure(&mut a.config);
    configure(&mut b.config);
    a.add_connection(connection(0), messages);
    // (arrival, to B, frame), in the order sent.
    let mut cable: Vec<(Instant, bool, Vec<u8>)> = Vec::new();
    let mut sent = Vec::new();
    let mut now = Instant::ZERO;
    let mut buffer = [0u8; 2048];
    for _ in 0..1_000_000 {
        while let Some(i) = cable.iter().position(|f| f.0 <= now) {
            let (_, to_b, frame) = cable.remove(i);
            let host = if to_b { &mut b } else { &mut a };
            assert!(host.handle_rx(now, &frame));
        }
        for (host, nic, to_b) in [(&mut a, &mut a_nic, true), (&mut b, &mut b_nic, false)] {
            while let Some(len) = host.poll_transmit(now, nic, &mut buffer) {
                let traffic = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
                if traffic.kind == TrafficKind::Data {
                    sent.push((traffic.sequence, now));
                }
                if !drop(traffic) {
                    cable.push((now + delay, to_b, buffer[..len].to_vec()));
                }
            }
        }
        a.handle_timeout(now);
        let arrival = cable.iter().map(|f| f.0).min();
        match a.poll_timeout(&a_nic).into_iter().chain(b.poll_timeout(&b_nic)).chain(arrival).min() {
            Some(next) => now = now.max(next),
            None => return (a, b, sent),
        }
    }
    panic!("no progress at {now}");
}

const DELAY: Duration = Duration::from_micros(10);

#[test]
fn an_ack_measures_the_rtt_of_the_newest_segment_it_acknowledges() {
    // ACKs every 4 segments: each is drawn by its newest segment's arrival, so every sample
    // is the two cable delays, where the oldest segment's would add three frame times
    // (1500 bytes at 1 Gbit/s: 12 µs each).
    let (a, _, _) = run_delayed(|_| {}, vec![message(0, 40 * 1422)], DELAY, |_| false);
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!(stats.rtt_samples, 10, "one per ACK: {stats:?}");
    assert_eq!(stats.last_rtt, Some(2 * DELAY));
    assert_eq!(stats.rtt_total, 10 * 2 * DELAY);
}

#[test]
fn an_ack_read_late_measures_to_its_arrival_when_the_arrival_is_known() {
    // One segment A → B and its ACK back, DELAY each way; A reads the ACK 300 µs after it
    // arrived (an endpoint's thread waking late). Told the arrival, as the datapath's
    // endpoints are by their XDP program, the sample is the path's; not told, it is the
    // path's and the wait.
    let late = Duration::from_micros(300);
    let sample = |told: bool| {
        let (mut a, mut a_nic) = transport(A);
        let (mut b, mut b_nic) = transport(B);
        a.add_connection(connection(0), vec![message(0, 1422)]);
        let mut buffer = [0u8; 2048];
        let len = a.poll_transmit(Instant::ZERO, &mut a_nic, &mut buffer).expect("the segment");
        let at_b = Instant::ZERO + DELAY;
        assert!(b.handle_rx(at_b, &buffer[..len]));
        let len = b.poll_transmit(at_b, &mut b_nic, &mut buffer).expect("its ACK");
        let (arrived, read) = (at_b + DELAY, at_b + DELAY + late);
        let ack = &buffer[..len];
        assert!(if told { a.handle_rx_arrived(read, arrived, ack) } else { a.handle_rx(read, ack) });
        let (_, stats) = a.sender_stats().next().unwrap();
        assert_eq!(a.messages().next().unwrap().finish, Some(read), "the message ends when A learns it");
        stats.last_rtt
    };
    assert_eq!(sample(true), Some(2 * DELAY));
    assert_eq!(sample(false), Some(2 * DELAY + late));
}

#[test]
fn a_sample_spans_the_newest_segment_s_send_to_its_ack_on_the_virtual_clock() {
    // A window of 2 at 1 Gbit/s over 50 µs each way: each ACK (every segment) comes 100 µs
    // after its segment left, whatever the queueing before it left.
    let one_by_one = |config: &mut TransportConfig| {
        config.ack_every = 1;
        config.window = 2;
    };
    let delay = Duration::from_micros(50);
    let (a, _, sent) = run_delayed(one_by_one, vec![message(0, 6 * 1422)], delay, |_| false);
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!(sent.len(), 6);
    assert_eq!((stats.rtt_samples, stats.last_rtt, stats.rtt_total), (6, Some(2 * delay), 6 * 2 * delay));
    // The last ACK came a sample after the last segment left: the message's finish.
    let finish = a.messages().next().unwrap().finish.unwrap();
    assert_eq!(finish, sent[5].1 + 2 * delay);
}

#[test]
fn the_segment_that_fills_a_window_below_ack_every_asks_for_its_ack() {
    // A window of 2 against an ACK every 4 segments: without the request the receiver would
    // wait for segments the sender cannot send, until the 67 ms retransmission timeout.
    let small_window = |config: &mut TransportConfig| config.window = 2;
    let (a, _, sent) = run_delayed(small_window, vec![message(0, 10 * 1422)], DELAY, |_| false);
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!((stats.timeouts, stats.retransmitted), (0, 0), "{stats:?}");
    assert_eq!((stats.rtt_samples, stats.last_rtt), (5, Some(2 * DELAY)), "an ACK per window");
    assert_eq!(a.messages().next().unwrap().finish, Some(sent[9].1 + 2 * DELAY));

    // Swift below one segment at the default `ack_every`: every segment fills its window.
    let swift = |config: &mut TransportConfig| {
        config.swift = Some(SwiftTransport { params: SwiftParams::default(), hops: 1 });
    };
    // From its initial 32 segments the window falls to its floor (200 µs RTTs against a
    // ~100 µs target); below 4 segments each one is acknowledged alone, none times out.
    let (a, _, _) = run_delayed(swift, vec![message(0, 100 * 1422)], Duration::from_micros(100), |_| false);
    let (_, law) = a.swift_windows().next().unwrap();
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!((law.cwnd(), stats.timeouts), (SwiftParams::default().min_cwnd, 0), "{law:?} {stats:?}");
    assert!(stats.rtt_samples > 50, "more ACKs than one per 4 segments: {stats:?}");
}

#[test]
fn karns_rule_no_sample_from_a_retransmitted_segment() {
    // Every segment acknowledged; the tail's first transmission lost: nine samples, then
    // the timeout's retransmission of segment 9, whose ACK gives none.
    let every = |config: &mut TransportConfig| config.ack_every = 1;
    let mut lost = false;
    let (a, _, _) = run_delayed(every, vec![message(0, 10 * 1422)], DELAY, |t| {
        let drop = t.kind == TrafficKind::Data && t.sequence == 9 && !lost;
        lost |= drop;
        drop
    });
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!((stats.timeouts, stats.retransmitted), (1, 1));
    assert_eq!((stats.rtt_samples, stats.last_rtt), (9, Some(2 * DELAY)));

    // A gap in the middle: the NAK gives no sample, nor do the ACKs of what go-back-N sent
    // again (10 to 12: those sent before the NAK came back); every segment sent once does.
    let mut lost = false;
    let (a, _, _) = run_delayed(every, vec![message(0, 20 * 1422)], DELAY, |t| {
        let drop = t.kind == TrafficKind::Data && t.sequence == 10 && !lost;
        lost |= drop;
        drop
    });
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!((stats.naks, stats.timeouts, stats.retransmitted), (1, 0, 3));
    assert_eq!(stats.rtt_samples, 20 - 3, "{stats:?}");
}

#[test]
fn timely_cuts_the_rate_limit_when_rtts_exceed_t_high() {
    // 600 µs RTTs against T_high = 500 µs: every sample cuts, and the limiter follows.
    let timely = |config: &mut TransportConfig| {
        config.ack_every = 1;
        config.timely = Some(TimelyTransport { params: TimelyParams::default() });
    };
    let (a, _, sent) = run_delayed(timely, vec![message(0, 200 * 1422)], Duration::from_micros(300), |_| false);
    let (_, law, trace) = a.timely_points().next().expect("TIMELY is on");
    assert!(law.updates() > 100 && law.rate().bps() < 500_000_000, "{law:?}");
    assert!(trace.mean_rates_mbps(sent.last().unwrap().1)[0] < 1000.0, "the limiter paces at TIMELY's rate");
    // TIMELY+w: the same run with a 600 µs window at line rate (75 KB) in flight at most.
    let timely_w = |config: &mut TransportConfig| {
        timely(config);
        config.rate_window = Some(Duration::from_micros(600));
    };
    let (a, _, sent) = run_delayed(timely_w, vec![message(0, 200 * 1422)], Duration::from_micros(300), |_| false);
    let (_, law, _) = a.timely_points().next().unwrap();
    let window = (75_000.0 * law.rate().bps() as f64 / 1e9 / 1422.0).ceil().max(1.0) as usize;
    let in_flight = sent.iter().filter(|s| s.1 + Duration::from_micros(600) > sent.last().unwrap().1).count();
    assert!(in_flight <= window + 1, "{in_flight} in the last RTT, window {window}");
}

#[test]
fn dcqcn_w_keeps_a_bdp_at_its_rate_in_flight() {
    // DCQCN+w at line rate (no CNP comes): a window of 1 Gbit/s × 100 µs = 12.5 KB, nine
    // segments, over a 600 µs RTT where the static window would let 128 go.
    let dcqcn_w = |config: &mut TransportConfig| {
        config.framing = Framing::Rocev2;
        config.dcqcn = Some(DcqcnParams::default());
        config.rate_window = Some(Duration::from_micros(100));
    };
    // 1418 bytes of payload a RoCEv2 segment in a 1500-byte frame.
    let (a, _, sent) = run_delayed(dcqcn_w, vec![message(0, 90 * 1418)], Duration::from_micros(300), |_| false);
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!((stats.segments, stats.timeouts), (90, 0), "{stats:?}");
    // Each round trip sends one window: ten rounds of nine, 600 µs apart.
    let rounds = sent.chunk_by(|x, y| y.1 - x.1 < Duration::from_micros(300)).map(<[_]>::len).collect::<Vec<_>>();
    assert_eq!(rounds, vec![9; 10]);
}

#[test]
fn swift_shrinks_its_window_above_the_target_and_paces_below_one_segment() {
    // 200 µs RTTs against a 25 µs + 1 hop + flow-scaling target: the window falls below
    // one segment, where segments leave one per RTT/cwnd.
    let swift = |config: &mut TransportConfig| {
        config.ack_every = 1;
        config.swift = Some(SwiftTransport { params: SwiftParams::default(), hops: 1 });
    };
    let (a, _, sent) = run_delayed(swift, vec![message(0, 100 * 1422)], Duration::from_micros(100), |_| false);
    let (_, law) = a.swift_windows().next().expect("Swift is on");
    assert!(law.cwnd() < 1.0 && law.decreases() > 3, "{law:?}");
    let gaps: Vec<Duration> = sent.windows(2).map(|w| w[1].1 - w[0].1).collect();
    let last = *gaps.last().unwrap();
    assert!(last > Duration::from_micros(200), "below one segment, more than an RTT apart: {last:?}");
    let (_, stats) = a.sender_stats().next().unwrap();
    assert_eq!(stats.rtt_samples, 100);
}

#[test]
fn an_ack_carries_its_receiver_s_delay_and_swift_compares_the_fabric_s_alone() {
    // One segment A → B, DELAY each way; B reads it 1 ms after it arrived (its thread woke
    // late) and acknowledges it then. The ACK says so; A's RTT sample is 1.02 ms either way,
    // but Swift's window (target about 30 µs here) compares the 20 µs of the fabric and
    // grows. Not told of the arrival, B's ACK says 0 and the window is cut.
    let late = Duration::from_millis(1);
    let after_one_ack = |told: bool| {
        let swift = |config: &mut TransportConfig| {
            config.ack_every = 1;
            config.swift = Some(SwiftTransport { params: SwiftParams::default(), hops: 1 });
        };
        let (mut a, mut a_nic) = transport(A);
        let (mut b, mut b_nic) = transport(B);
        swift(&mut a.config);
        swift(&mut b.config);
        a.add_connection(connection(0), vec![message(0, 1422)]);
        let mut buffer = [0u8; 2048];
        let len = a.poll_transmit(Instant::ZERO, &mut a_nic, &mut buffer).expect("the segment");
        let (at_b, read) = (Instant::ZERO + DELAY, Instant::ZERO + DELAY + late);
        let segment = &buffer[..len];
        assert!(if told { b.handle_rx_arrived(read, at_b, segment) } else { b.handle_rx(read, segment) });
        let len = b.poll_transmit(read, &mut b_nic, &mut buffer).expect("its ACK");
        let ack = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
        assert!(a.handle_rx(read + DELAY, &buffer[..len]));
        let (_, stats) = a.sender_stats().next().unwrap();
        assert_eq!(stats.last_rtt, Some(2 * DELAY + late));
        (Duration::from_nanos(ack.timestamp_ns), a.swift_windows().next().expect("Swift is on").1.cwnd())
    };
    let initial = SwiftParams::default().initial_cwnd;
    let (said, cwnd) = after_one_ack(true);
    assert_eq!(said, late, "the ACK's delay at B");
    assert!(cwnd > initial, "20 µs of fabric below the target: the window grows ({cwnd})");
    let (said, cwnd) = after_one_ack(false);
    assert_eq!(said, Duration::ZERO);
    assert!(cwnd < initial, "1.02 ms above the target: the window is cut ({cwnd})");
}
