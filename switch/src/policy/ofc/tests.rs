//! Algorithms 1 and 2 line by line, on the engine alone (Algorithm 3 is tested in `nested`).

use super::*;
use crate::policy::XoffTransmitter;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::EthernetAddress;

const P3: Pcp = Pcp::from_low_bits(3);
const KB: u64 = 1000;
/// X_OFF 30 KB, X_ON 20 KB, α = 0.9: X^c_OFF = 27 KB.
const THRESHOLDS: OfcThresholds = OfcThresholds { xoff: 30 * KB, xon: 20 * KB, xoff_c: 27 * KB };
const QUANTA: u16 = 1000;

fn flow(src: u8, dst: u8) -> FlowKey {
    FlowKey { src: EthernetAddress([2, 0, 0, 0, 0, src]), dst: EthernetAddress([2, 0, 0, 0, 0, dst]) }
}

struct Harness {
    ofc: Ofc,
    xoff: XoffTransmitter,
    now: Instant,
}

impl Harness {
    /// OFC frames of at most `frame_len` bytes on every port.
    fn new(frame_len: usize, capacity: usize) -> Harness {
        Harness {
            ofc: Ofc::new(&[frame_len; 4], P3.mask(), THRESHOLDS, capacity),
            xoff: XoffTransmitter::new(&[BitRate::gbps(1); 4], QUANTA),
            now: Instant::from_nanos(1_000),
        }
    }

    /// A frame of `flow` from `ingress` joins (or leaves) egress `egress`.
    fn egress(&mut self, ingress: usize, egress: usize, flow: FlowKey, enqueued: bool) {
        let event = EgressEvent { ingress, egress, priority: P3, len: 1000, flow, queue_bytes: 0, enqueued };
        let mut actions = PolicyActions::new(self.now, &mut self.xoff);
        self.ofc.on_egress(&event, &mut actions);
    }

    fn arrive(&mut self, ingress: usize, flow: FlowKey, q_in: u64, egress: usize, q_out: u64) {
        let arrival = Arrival { ingress, priority: P3, flow, q_in, egress, q_out, egress_coarse_paused: false };
        let mut actions = PolicyActions::new(self.now, &mut self.xoff);
        self.ofc.on_arrival(&arrival, &mut actions);
    }

    fn ingress(&mut self, port: usize, bytes: u64) {
        let mut actions = PolicyActions::new(self.now, &mut self.xoff);
        self.ofc.on_ingress(port, P3, IngressLevel { bytes, xoff: 0, xon: 0 }, &mut actions);
    }

    /// Every OFC frame `port` sends now: (header, quanta, flows).
    fn frames(&mut self, port: usize) -> Vec<(OfcHeader, u16, Vec<FlowKey>)> {
        if let Some((pfc, changed)) = self.xoff.poll_changes(self.now, port) {
            assert_eq!(
                self.ofc.queue_frames(port, pfc, changed),
                PfcRepr::default(),
                "OFC manages every lossless class"
            );
        }
        let mut frames = Vec::new();
        while let Some(frame) = self.ofc.poll_frame(port) {
            let mut flows = self.ofc.frame_flows(port, &frame).to_vec();
            flows.sort();
            frames.push((frame.header, frame.quanta, flows));
        }
        frames
    }

    /// Moves time to the next refresh of an asserted class and returns what `port` sends.
    fn refresh(&mut self, port: usize) -> Vec<(OfcHeader, u16, Vec<FlowKey>)> {
        self.now = self.xoff.next_timeout().expect("refresh scheduled");
        self.xoff.handle_timeout(self.now);
        self.frames(port)
    }

    fn tables(&self, port: usize) -> OfcTables {
        self.ofc.tables(port, P3).expect("lossless")
    }
}

fn pause(coarse: bool) -> OfcHeader {
    OfcHeader { op: OfcOp::Pause, priority: P3, coarse, more: false }
}

const RESUME: OfcHeader = OfcHeader { op: OfcOp::Resume, priority: P3, coarse: false, more: false };

/// Port 0 queued flow A at egress 1 and flow C at egress 2; port 2 queued flow B at egress 1.
fn queued() -> (Harness, FlowKey, FlowKey, FlowKey) {
    let mut h = Harness::new(1500, 8);
    let (a, b, c) = (flow(0, 1), flow(2, 1), flow(0, 2));
    for _ in 0..3 {
        h.egress(0, 1, a, true);
        h.egress(2, 1, b, true);
        h.egress(0, 2, c, true);
    }
    (h, a, b, c)
}

#[test]
fn original_congestion_pauses_the_flows_this_port_queued_at_the_congested_egress() {
    // Algorithm 1 lines 3–6: X^c_OFF ≤ q_in < X_OFF, q_out ≥ X^c_OFF, no PAUSE information.
    let (mut h, a, _, _) = queued();
    let d = flow(0, 3);
    h.arrive(0, d, 28 * KB, 1, 27 * KB);
    assert_eq!(h.frames(0), [(pause(false), QUANTA, vec![a, d])], "A and the arriving flow; not B (port 2's), not C");
    assert_eq!(h.tables(0).pause_frame, [a, d], "line 14: pause_frame_tab records them");
    assert_eq!(h.tables(0).counters.original, 1);
    h.arrive(0, a, 29 * KB, 1, 28 * KB);
    assert!(h.frames(0).is_empty(), "nothing new to pause: no frame");
}

#[test]
fn no_pause_while_the_egress_queue_is_below_the_congested_threshold() {
    // Line 4: q_out < X^c_OFF between X^c_OFF and X_OFF: no flow is congested yet.
    let (mut h, a, _, _) = queued();
    h.arrive(0, a, 29 * KB, 1, 26 * KB);
    h.arrive(0, a, 26 * KB, 1, 40 * KB);
    assert!(h.frames(0).is_empty());
    assert_eq!(h.tables(0).counters, OfcCounters::default());
}

#[test]
fn local_congestion_pauses_the_congested_flows_that_enter_through_this_port() {
    // Lines 7–8: egress 1 holds PAUSE information from its peer naming A (port 0's), B
    // (port 2's) and X, Y (nobody's yet). Each port is paused for its own share only.
    let (mut h, a, b, _) = queued();
    let (x, y) = (flow(9, 1), flow(8, 1));
    assert!(h.ofc.pause_received(1, P3, [a, b, x, y], h.now + std::time::Duration::from_millis(1)));
    h.arrive(0, a, 28 * KB, 1, 27 * KB);
    assert_eq!(h.frames(0), [(pause(false), QUANTA, vec![a])], "not B, X or Y: port 0 carries none of them");
    assert_eq!((h.tables(0).counters.local, h.tables(0).counters.original), (1, 0));
    h.arrive(0, x, 28 * KB, 1, 27 * KB);
    assert_eq!(h.frames(0), [(pause(false), QUANTA, vec![a, x])], "X now enters through port 0");
    h.arrive(2, b, 28 * KB, 1, 27 * KB);
    assert_eq!(h.frames(2), [(pause(false), QUANTA, vec![b])]);
    assert_eq!(h.tables(2).pause_frame, [b]);
}

#[test]
fn a_port_that_carries_none_of_the_congested_flows_is_not_paused() {
    // Egress 1's peer named only B, which port 2 sends: port 0's A is not congested.
    let (mut h, a, b, _) = queued();
    assert!(h.ofc.pause_received(1, P3, [b], h.now + std::time::Duration::from_millis(1)));
    h.arrive(0, a, 29 * KB, 1, 28 * KB);
    assert!(h.frames(0).is_empty(), "no PAUSE naming B (or nothing) towards port 0");
    let tables = h.tables(0);
    assert!(tables.pause_frame.is_empty() && !tables.coarse);
    assert_eq!(tables.counters, OfcCounters::default());
    assert_eq!(h.xoff.asserted(0), 0);
    // At X_OFF the port still pauses every flow, as PFC would.
    h.ingress(0, 30 * KB);
    assert_eq!(h.frames(0), [(pause(true), QUANTA, vec![])]);
}

#[test]
fn under_a_coarse_pause_local_congestion_pauses_the_flows_this_port_queued_there() {
    // Egress 1's peer named B (port 2's), then paused the whole priority (COARSE): A, which
    // port 0 queued there, is stopped too, so port 0 pauses it.
    let (mut h, a, b, _) = queued();
    assert!(h.ofc.pause_received(1, P3, [b], h.now + std::time::Duration::from_millis(1)));
    let arrival = Arrival {
        ingress: 0,
        priority: P3,
        flow: a,
        q_in: 28 * KB,
        egress: 1,
        q_out: 27 * KB,
        egress_coarse_paused: true,
    };
    h.ofc.on_arrival(&arrival, &mut PolicyActions::new(h.now, &mut h.xoff));
    assert_eq!(h.frames(0), [(pause(false), QUANTA, vec![a])], "not B: port 0 does not send it");
    assert_eq!((h.tables(0).counters.local, h.tables(0).counters.original), (1, 0));
}

#[test]
fn local_congestion_names_every_congested_flow_when_the_egress_lost_track_of_its_flows() {
    // Capacity 2: egress 1 could not record C, so C may be port 0's for all it knows.
    let mut h = Harness::new(1500, 2);
    let (a, b, c) = (flow(0, 1), flow(2, 1), flow(3, 1));
    h.egress(0, 1, a, true);
    h.egress(2, 1, b, true);
    h.egress(2, 1, c, true);
    assert_eq!(h.tables(1).untracked_frames, 1);
    assert!(h.ofc.pause_received(1, P3, [c], h.now + std::time::Duration::from_millis(1)));
    h.arrive(0, a, 28 * KB, 1, 27 * KB);
    assert_eq!(h.frames(0), [(pause(false), QUANTA, vec![c])], "the whole list, as line 8 has it");
    assert_eq!(h.tables(0).counters.table_full[OfcTable::FlowInPort as usize], 1);
}

#[test]
fn every_flow_is_paused_at_xoff_and_resumed_at_xon() {
    // Lines 10–11 (COARSE), then 16–19: the RESUME names pause_frame_tab's flows.
    let (mut h, a, _, _) = queued();
    h.arrive(0, a, 28 * KB, 1, 27 * KB);
    h.frames(0);
    h.ingress(0, 30 * KB);
    assert_eq!(h.frames(0), [(pause(true), QUANTA, vec![a])], "COARSE, with the flows recorded");
    assert_eq!(h.tables(0).counters.coarse, 1);
    h.ingress(0, 25 * KB);
    assert!(h.frames(0).is_empty(), "between X_ON and X_OFF nothing changes");
    h.ingress(0, 20 * KB);
    assert_eq!(h.frames(0), [(RESUME, 0, vec![a])]);
    let tables = h.tables(0);
    assert!(tables.pause_frame.is_empty() && !tables.coarse, "line 18: removed");
    assert_eq!(h.xoff.asserted(0), 0);
}

#[test]
fn refreshes_repeat_the_whole_list() {
    let (mut h, a, _, _) = queued();
    h.arrive(0, a, 28 * KB, 1, 27 * KB);
    h.frames(0);
    assert_eq!(h.refresh(0), [(pause(false), QUANTA, vec![a])]);
}

#[test]
fn every_pause_frame_counts_the_flows_it_names_until_the_counters_are_reset() {
    let (mut h, a, _, c) = queued();
    h.arrive(0, a, 28 * KB, 1, 27 * KB);
    h.frames(0);
    h.refresh(0);
    h.ingress(0, 20 * KB);
    assert_eq!(h.frames(0), [(RESUME, 0, vec![a])]);
    assert_eq!(h.tables(0).pause_frame, [], "the table forgets A on its RESUME");
    h.arrive(0, c, 28 * KB, 2, 27 * KB);
    h.frames(0);
    assert_eq!(h.tables(0).pauses_naming, [(a, 2), (c, 1)], "the record keeps it: a PAUSE and its refresh");
    h.ofc.reset_counters();
    assert_eq!(h.tables(0).pauses_naming, []);
}

#[test]
fn a_class_that_did_not_change_is_not_paused_again_when_another_one_is() {
    // Lossless 3 and 4: one PFC frame restates class 3 when class 4 pauses; OFC frames carry
    // one class each, so class 3's list is not repeated until its refresh.
    let p4 = Pcp::from_low_bits(4);
    let mut h = Harness::new(1500, 8);
    h.ofc = Ofc::new(&[1500; 4], P3.mask() | p4.mask(), THRESHOLDS, 8);
    let (a, b) = (flow(0, 1), flow(0, 2));
    h.egress(0, 1, a, true);
    h.arrive(0, a, 28 * KB, 1, 27 * KB);
    assert_eq!(h.frames(0), [(pause(false), QUANTA, vec![a])]);
    let event = EgressEvent { ingress: 0, egress: 2, priority: p4, len: 1000, flow: b, queue_bytes: 0, enqueued: true };
    h.ofc.on_egress(&event, &mut PolicyActions::new(h.now, &mut h.xoff));
    let arrival = Arrival {
        ingress: 0,
        priority: p4,
        flow: b,
        q_in: 28 * KB,
        egress: 2,
        q_out: 27 * KB,
        egress_coarse_paused: false,
    };
    h.ofc.on_arrival(&arrival, &mut PolicyActions::new(h.now, &mut h.xoff));
    let class4 = OfcHeader { priority: p4, ..pause(false) };
    assert_eq!(h.frames(0), [(class4, QUANTA, vec![b])], "no second PAUSE naming A");
    assert_eq!(h.refresh(0), [(pause(false), QUANTA, vec![a]), (class4, QUANTA, vec![b])], "the refresh: both");
}

#[test]
fn a_long_list_is_split_over_frames_marked_more() {
    // Frames of 214 bytes (non-standard): (214 − 46) / 12 = 14 flows a frame.
    let mut h = Harness::new(214, 64);
    let flows: Vec<FlowKey> = (0..30).map(|n| flow(n, 100)).collect();
    for &f in &flows {
        h.egress(0, 1, f, true);
    }
    h.arrive(0, flows[0], 28 * KB, 1, 27 * KB);
    let frames = h.frames(0);
    let sizes: Vec<(usize, bool)> = frames.iter().map(|(header, _, f)| (f.len(), header.more)).collect();
    assert_eq!(sizes, [(14, true), (14, true), (2, false)]);
    let mut sent: Vec<FlowKey> = frames.into_iter().flat_map(|(_, _, f)| f).collect();
    sent.sort();
    assert_eq!(sent, flows);
}

#[test]
fn standard_60_byte_frames_carry_one_flow_each_pause_and_resume() {
    let mut h = Harness::new(pfcswitch_wire::MIN_FRAME_LEN, 8);
    let flows: Vec<FlowKey> = (0..3).map(|n| flow(n, 100)).collect();
    for &f in &flows {
        h.egress(0, 1, f, true);
    }
    h.arrive(0, flows[0], 28 * KB, 1, 27 * KB);
    let more = |more| OfcHeader { more, ..pause(false) };
    let expected: Vec<_> = flows.iter().enumerate().map(|(n, &f)| (more(n < 2), QUANTA, vec![f])).collect();
    assert_eq!(h.frames(0), expected);
    h.ingress(0, 20 * KB);
    let resumes = h.frames(0);
    assert_eq!(
        resumes.iter().map(|(header, _, f)| (header.more, f.len())).collect::<Vec<_>>(),
        [(true, 1), (true, 1), (false, 1)]
    );
    assert!(resumes.iter().all(|(header, quanta, _)| header.op == OfcOp::Resume && *quanta == 0));
}

#[test]
fn a_full_pause_frame_table_falls_back_to_a_coarse_pause() {
    // Room for two flows: port 0 queued two at egress 1, and a third arrives for it.
    let mut h = Harness::new(1500, 2);
    h.egress(0, 1, flow(1, 9), true);
    h.egress(0, 1, flow(2, 9), true);
    h.arrive(0, flow(3, 9), 28 * KB, 1, 27 * KB);
    let frames = h.frames(0);
    assert_eq!(frames.len(), 1);
    assert!(frames[0].0.coarse, "the list could not be complete");
    assert_eq!(h.tables(0).counters.table_full[OfcTable::PauseFrame as usize], 1);
    // With room for every flow, the same arrival stays fine-grained.
    let mut roomy = Harness::new(1500, 3);
    roomy.egress(0, 1, flow(1, 9), true);
    roomy.egress(0, 1, flow(2, 9), true);
    roomy.arrive(0, flow(3, 9), 28 * KB, 1, 27 * KB);
    assert!(!roomy.frames(0)[0].0.coarse);
}

#[test]
fn frames_a_full_flow_table_could_not_record_make_the_pause_coarse() {
    let mut h = Harness::new(1500, 2);
    for n in 0..3 {
        h.egress(0, 1, flow(n, 9), true);
    }
    assert_eq!(h.tables(1).untracked_frames, 1);
    h.arrive(0, flow(0, 9), 28 * KB, 1, 27 * KB);
    assert!(h.frames(0)[0].0.coarse);
    assert_eq!(h.tables(0).counters.table_full[OfcTable::FlowInPort as usize], 1);
    // Algorithm 3 line 9: leaving frames are counted down, the untracked one too.
    for n in 0..3 {
        h.egress(0, 1, flow(n, 9), false);
    }
    let tables = h.tables(1);
    assert_eq!((tables.flow_in_port.len(), tables.untracked_frames), (0, 0));
}

#[test]
fn flow_in_port_tab_counts_frames_per_flow() {
    // Algorithm 2 line 12 and Algorithm 3 lines 9–11.
    let (mut h, a, b, _) = queued();
    assert_eq!(h.tables(1).flow_in_port, [(a, 3, 0), (b, 3, 2)]);
    h.egress(0, 1, a, false);
    h.egress(0, 1, a, false);
    assert_eq!(h.tables(1).flow_in_port, [(a, 1, 0), (b, 3, 2)]);
    h.egress(0, 1, a, false);
    assert_eq!(h.tables(1).flow_in_port, [(b, 3, 2)], "line 11: removed at zero");
}

#[test]
fn a_pause_stores_flows_and_a_resume_removes_them() {
    // Algorithm 2 lines 3–9.
    let mut h = Harness::new(1500, 8);
    let (a, b) = (flow(1, 2), flow(3, 4));
    let until = h.now + std::time::Duration::from_millis(1);
    assert!(h.ofc.pause_received(1, P3, [a, b], until));
    assert!(h.ofc.is_paused(1, P3, &a) && h.ofc.is_paused(1, P3, &b));
    assert!(!h.ofc.is_paused(2, P3, &a), "per egress port");
    h.ofc.resume_received(1, P3, Some(&mut [a].into_iter()), false);
    assert!(!h.ofc.is_paused(1, P3, &a) && h.ofc.is_paused(1, P3, &b));
    // While a drain is under way the resume waits for it.
    h.ofc.resume_received(1, P3, None, true);
    assert!(h.ofc.is_paused(1, P3, &b));
    assert_eq!(h.tables(1).congested, [(b, true)]);
    h.ofc.commit_resumes(1, P3);
    assert!(!h.ofc.is_paused(1, P3, &b));
    assert_eq!((h.tables(1).counters.pause_rx, h.tables(1).counters.resume_rx), (1, 0));
}

#[test]
fn congested_flows_expire_like_a_pfc_pause() {
    let mut h = Harness::new(1500, 8);
    let until = h.now + std::time::Duration::from_micros(50);
    h.ofc.pause_received(1, P3, [flow(1, 2)], until);
    assert_eq!(h.ofc.next_timeout(), Some(until));
    assert_eq!(h.ofc.expired(Instant::from_nanos(until.as_nanos() - 1)), None);
    assert_eq!(h.ofc.expired(until), Some((1, P3)));
}

#[test]
fn a_full_congested_table_asks_for_a_coarse_pause() {
    let mut h = Harness::new(1500, 1);
    let until = h.now + std::time::Duration::from_millis(1);
    assert!(!h.ofc.pause_received(1, P3, [flow(1, 2), flow(3, 4)], until));
    assert_eq!(h.tables(1).counters.table_full[OfcTable::CongestedFlow as usize], 1);
}

#[test]
fn lossy_priorities_are_not_ofc_managed() {
    let mut h = Harness::new(1500, 8);
    let lossy = Pcp::from_low_bits(0);
    assert!(h.ofc.tables(0, lossy).is_none());
    let pfc = PfcRepr::default().with_class(lossy, 5);
    assert_eq!(h.ofc.queue_frames(0, pfc, lossy.mask()), pfc, "returned to be sent as plain PFC");
    assert!(h.ofc.pause_received(0, lossy, [flow(1, 2)], h.now));
    assert!(!h.ofc.is_paused(0, lossy, &flow(1, 2)));
}
