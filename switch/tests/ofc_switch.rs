//! OFC on one switch, frame by frame: the PAUSE/RESUME frames it sends (Algorithm 1) and how
//! it obeys them (Algorithms 2 and 3), with the bytes on the wire parsed back.
//!
//! Three ports at 1 Gbit/s, host i behind port i, lossless priority 3, 1000-byte frames;
//! X_OFF 50 KB, X_ON 40 KB, α = 0.9: X^c_OFF = 45 KB.

mod common;

use common::{host_mac, pcp};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use pfcswitch_switch::switch::{RxVerdict, Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, FlowKey, FrameView, MacControlRepr, OfcHeader, OfcOp, PAUSE_MULTICAST, PfcRepr,
    VlanRepr, build_announcement_frame, build_mac_control_frame, build_ofc_frame,
};
use std::collections::HashMap;
use std::time::Duration;

const FRAME: usize = 1000;

/// A data frame as (sender, receiver, sequence).
type Sent = (usize, usize, u32);

struct Rig {
    switch: Switch,
    config: SwitchConfig,
    now: Instant,
    next_handle: u64,
    /// handle → (sender, receiver, sequence)
    frames: HashMap<u64, Sent>,
    sequence: HashMap<(usize, usize), u32>,
}

fn flow(src: usize, dst: usize) -> FlowKey {
    FlowKey { src: host_mac(src), dst: host_mac(dst) }
}

impl Rig {
    fn new() -> Rig {
        let mut config = SwitchConfig::with_ports("ofc", 3, BitRate::gbps(1));
        config.policy.kind = PolicyKind::Ofc;
        let (switch, _) = Switch::new(&config).expect("valid");
        let mut rig = Rig {
            switch,
            config,
            now: Instant::from_nanos(1_000),
            next_handle: 0,
            frames: HashMap::new(),
            sequence: HashMap::new(),
        };
        for port in 0..3 {
            let mut frame = [0u8; 60];
            build_announcement_frame(&mut frame, host_mac(port));
            rig.switch.handle_rx(rig.now, port, u64::MAX, &frame);
        }
        for port in 0..3 {
            rig.drain(port);
        }
        rig
    }

    /// Host `src` sends a data frame to host `dst` (into port `src`).
    fn send(&mut self, src: usize, dst: usize) {
        self.send_as(src, host_mac(src), dst);
    }

    /// A frame from `mac`, behind port `src`, to host `dst`.
    fn send_as(&mut self, src: usize, mac: EthernetAddress, dst: usize) {
        let seq = self.sequence.entry((src, dst)).or_default();
        let vlan = VlanRepr { pcp: pcp(3), dei: false, vid: 1 };
        let mut spec = DataFrameSpec::between(mac, host_mac(dst), Some(vlan), FRAME);
        spec.traffic.sequence = *seq;
        let handle = self.next_handle;
        self.next_handle += 1;
        self.frames.insert(handle, (src, dst, *seq));
        *seq += 1;
        assert_eq!(self.switch.handle_rx(self.now, src, handle, &spec.to_bytes()), RxVerdict::Accepted);
    }

    /// The peer of `port` sends a control frame built by `build`.
    fn control(&mut self, port: usize, build: impl FnOnce(&mut [u8]) -> usize) {
        let mut frame = [0u8; 1600];
        let len = build(&mut frame);
        assert_eq!(self.switch.handle_rx(self.now, port, u64::MAX, &frame[..len]), RxVerdict::Consumed);
    }

    fn ofc(&mut self, port: usize, op: OfcOp, coarse: bool, quanta: u16, flows: &[FlowKey]) {
        let header = OfcHeader { op, priority: pcp(3), coarse, more: false };
        self.control(port, |frame| build_ofc_frame(frame, host_mac(port), header, quanta, flows.iter().copied()));
    }

    fn pfc(&mut self, port: usize, quanta: u16) {
        let repr = MacControlRepr::Pfc(PfcRepr::default().with_class(pcp(3), quanta));
        self.control(port, |frame| build_mac_control_frame(frame, host_mac(port), PAUSE_MULTICAST, &repr));
    }

    /// Everything `port` sends, as far as time allows in 10 ms: data as (src, dst, seq), and
    /// control frames as their bytes.
    fn drain(&mut self, port: usize) -> (Vec<Sent>, Vec<Vec<u8>>) {
        let (mut data, mut control) = (Vec::new(), Vec::new());
        let end = self.now + Duration::from_millis(10);
        while self.now < end {
            self.switch.handle_timeout(self.now);
            match self.switch.poll_tx(self.now, port) {
                // Announcements (flooded) are not ours to count.
                Some(Tx::Data { handle, .. }) => data.extend(self.frames.get(&handle)),
                Some(Tx::Control(frame)) => {
                    let mut bytes = vec![0u8; frame.wire_len()];
                    let len = self.switch.emit_control(port, &frame, &mut bytes);
                    assert_eq!(len, frame.wire_len());
                    control.push(bytes);
                }
                // The timeout may be another port's, already due: step past it.
                None => match self.switch.poll_timeout() {
                    Some(at) if at > self.now => self.now = at.min(end),
                    Some(_) => self.now += Duration::from_micros(1),
                    None => break,
                },
            }
        }
        while self.switch.poll_free().is_some() {}
        (data, control)
    }
}

fn seqs(data: &[Sent], src: usize, dst: usize) -> Vec<u32> {
    data.iter().filter(|&&(s, d, _)| (s, d) == (src, dst)).map(|&(_, _, seq)| seq).collect()
}

#[test]
fn a_pause_holds_only_its_flows_and_a_resume_sends_them_first_in_order() {
    let mut rig = Rig::new();
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(0, 1)]);
    for _ in 0..2 {
        rig.send(0, 1);
        rig.send(2, 1);
    }
    let (data, _) = rig.drain(1);
    assert_eq!(data, [(2, 1, 0), (2, 1, 1)], "flow 0→1 waits, 2→1 goes");
    rig.send(0, 1);
    assert!(rig.drain(1).0.is_empty());
    assert_eq!(rig.switch.nested_queue(1, pcp(3)).paused_len(), 3);
    rig.ofc(1, OfcOp::Resume, false, 0, &[flow(0, 1)]);
    rig.send(0, 1); // newer than the parked ones
    rig.send(2, 1);
    let (data, _) = rig.drain(1);
    assert_eq!(seqs(&data, 0, 1), [0, 1, 2, 3], "in order, none lost or duplicated");
    assert_eq!(data[..3], [(0, 1, 0), (0, 1, 1), (0, 1, 2)], "the resumed frames go first");
    let queue = rig.switch.nested_queue(1, pcp(3));
    assert_eq!((queue.len(), queue.rotations()), (0, 1));
    let counters = rig.switch.ofc().unwrap().tables(1, pcp(3)).unwrap().counters;
    assert_eq!((counters.pause_rx, counters.resume_rx), (1, 1));
}

#[test]
fn a_plain_pfc_frame_pauses_every_flow_and_its_resume_all_of_them() {
    let mut rig = Rig::new();
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(0, 1)]);
    rig.pfc(1, u16::MAX);
    rig.send(0, 1);
    rig.send(2, 1);
    assert!(rig.drain(1).0.is_empty(), "the whole priority is paused");
    rig.pfc(1, 0);
    let (data, _) = rig.drain(1);
    assert_eq!(data.len(), 2, "a plain resume resumes every flow, the OFC-paused one too: {data:?}");
}

#[test]
fn a_coarse_pause_holds_everything_until_the_resume() {
    let mut rig = Rig::new();
    rig.ofc(1, OfcOp::Pause, true, u16::MAX, &[flow(0, 1)]);
    rig.send(0, 1);
    rig.send(2, 1);
    assert!(rig.drain(1).0.is_empty());
    rig.ofc(1, OfcOp::Resume, false, 0, &[flow(0, 1)]);
    assert_eq!(rig.drain(1).0.len(), 2);
}

#[test]
fn paused_flows_resume_when_the_pause_time_runs_out_without_a_refresh() {
    let mut rig = Rig::new();
    // 1000 quanta at 1 Gbit/s: 512 µs.
    rig.ofc(1, OfcOp::Pause, false, 1000, &[flow(0, 1)]);
    let paused_at = rig.now;
    rig.send(0, 1);
    rig.send(0, 1);
    let (data, _) = rig.drain(1);
    assert_eq!(data, [(0, 1, 0), (0, 1, 1)]);
    assert!(rig.now >= paused_at + Duration::from_micros(512), "not before the pause time: {:?}", rig.now);
}

#[test]
fn a_plain_pfc_switch_would_obey_the_pfc_part_of_an_ofc_frame() {
    let mut config = SwitchConfig::with_ports("pfc", 3, BitRate::gbps(1));
    config.policy.kind = PolicyKind::Pfc;
    let mut rig = Rig::new();
    rig.switch = Switch::new(&config).unwrap().0;
    for port in 0..3 {
        let mut frame = [0u8; 60];
        build_announcement_frame(&mut frame, host_mac(port));
        rig.switch.handle_rx(rig.now, port, u64::MAX, &frame);
        rig.drain(port);
    }
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(0, 1)]);
    rig.send(0, 1);
    rig.send(2, 1);
    assert!(rig.drain(1).0.is_empty(), "the coarse fallback: every flow of the priority");
    rig.ofc(1, OfcOp::Resume, false, 0, &[flow(0, 1)]);
    assert_eq!(rig.drain(1).0.len(), 2);
}

/// Parses an OFC frame the switch sent: (op, coarse, flows), checking the PFC part.
fn parse(bytes: &[u8]) -> (OfcOp, bool, Vec<FlowKey>) {
    let view = FrameView::parse(bytes).expect("valid Ethernet");
    let MacControlRepr::Pfc(pfc) = view.mac_control().expect("valid PFC") else { panic!("not PFC") };
    let ofc = view.ofc().expect("valid TLV").expect("an OFC TLV");
    assert_eq!(pfc.enable, pcp(3).mask());
    assert_eq!(pfc.quanta[3] > 0, ofc.op == OfcOp::Pause, "PAUSE has a time, RESUME 0");
    let mut flows: Vec<FlowKey> = ofc.flows().collect();
    flows.sort();
    (ofc.op, ofc.coarse, flows)
}

#[test]
fn the_switch_pauses_the_congested_flow_then_every_flow_then_resumes_what_it_paused() {
    let mut rig = Rig::new();
    // Port 1's queue builds (nothing is sent there); frames to port 2 leave at once.
    let mut sent_to_1 = 0;
    let mut control = Vec::new();
    while sent_to_1 < 46 {
        rig.send(0, 2);
        rig.drain(2);
        rig.send(0, 1);
        sent_to_1 += 1;
        control.extend(rig.drain(0).1);
    }
    // 45 KB of port 0's frames wait at port 1: X^c_OFF on both sides, original congestion.
    assert_eq!(control.len(), 1, "one PAUSE");
    assert_eq!(parse(&control[0]), (OfcOp::Pause, false, vec![flow(0, 1)]), "not 0→2, which is not congested");
    let tables = rig.switch.ofc().unwrap().tables(0, pcp(3)).unwrap();
    assert_eq!((tables.counters.original, tables.pause_frame.len()), (1, 1));
    // X_OFF: every flow.
    for _ in 0..5 {
        rig.send(0, 1);
    }
    let control = rig.drain(0).1;
    assert_eq!(control.len(), 1);
    assert_eq!(parse(&control[0]), (OfcOp::Pause, true, vec![flow(0, 1)]));
    // Port 1 drains: at X_ON the RESUME names the flow.
    let (data, _) = rig.drain(1);
    assert_eq!(data.len(), 51);
    let control = rig.drain(0).1;
    assert_eq!(control.len(), 1);
    assert_eq!(parse(&control[0]), (OfcOp::Resume, false, vec![flow(0, 1)]));
}

#[test]
fn a_local_congestion_pause_goes_only_to_the_port_that_carries_the_congested_flow() {
    let mut rig = Rig::new();
    // Port 1's peer pauses 2→1 only: port 1's PAUSE information (local congestion).
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(2, 1)]);
    // 46 KB of 0→1 wait at port 1 (the test sends nothing there): X^c_OFF on both sides.
    for _ in 0..46 {
        rig.send(0, 1);
    }
    assert!(rig.drain(0).1.is_empty(), "port 0 carries none of the congested flows: no PAUSE");
    let tables = rig.switch.ofc().unwrap().tables(0, pcp(3)).unwrap();
    assert!(tables.pause_frame.is_empty() && !tables.coarse);
    assert_eq!(tables.counters.local, 0);
    // 2→1 is parked at port 1; once port 2's share reaches X^c_OFF, port 2 pauses it.
    for _ in 0..46 {
        rig.send(2, 1);
    }
    let control = rig.drain(2).1;
    assert_eq!(control.len(), 1, "one PAUSE");
    assert_eq!(parse(&control[0]), (OfcOp::Pause, false, vec![flow(2, 1)]));
    assert_eq!(rig.switch.ofc().unwrap().tables(2, pcp(3)).unwrap().counters.local, 1);
    assert!(rig.drain(0).1.is_empty(), "still nothing towards port 0");
}

/// Nine sources behind port 0 queue 46 KB at port 1: original congestion names all nine.
/// Returns the flows, sorted, and the control frames port 0 sent.
fn pause_nine_flows(rig: &mut Rig) -> (Vec<FlowKey>, Vec<Vec<u8>>) {
    let sources: Vec<EthernetAddress> = (0..9).map(|n| EthernetAddress([2, 0, 0, 0, 9, n])).collect();
    let mut flows: Vec<FlowKey> = sources.iter().map(|&src| FlowKey { src, dst: host_mac(1) }).collect();
    flows.sort();
    let mut control = Vec::new();
    for k in 0..46 {
        rig.send_as(0, sources[k % 9], 1);
        control.extend(rig.drain(0).1);
    }
    (flows, control)
}

#[test]
fn a_pause_of_many_flows_goes_out_in_60_byte_frames_and_the_peer_pauses_the_whole_set() {
    let mut rig = Rig::new();
    let (expected, control) = pause_nine_flows(&mut rig);
    assert_eq!(control.len(), 9, "one flow a frame");
    let mut named = Vec::new();
    for (n, bytes) in control.iter().enumerate() {
        assert_eq!(bytes.len(), 60, "a standard MAC Control frame (64 bytes with the FCS)");
        let view = FrameView::parse(bytes).unwrap();
        let ofc = view.ofc().unwrap().unwrap();
        assert_eq!(ofc.more, n + 1 < control.len(), "MORE on all but the last");
        let (op, coarse, flows) = parse(bytes);
        assert_eq!((op, coarse, flows.len()), (OfcOp::Pause, false, 1));
        named.extend(flows);
    }
    named.sort();
    assert_eq!(named, expected);
    // A second OFC switch receives them on its port 1: each frame adds its flow.
    let mut peer = Rig::new();
    for bytes in &control {
        assert_eq!(peer.switch.handle_rx(peer.now, 1, u64::MAX, bytes), RxVerdict::Consumed);
    }
    let tables = peer.switch.ofc().unwrap().tables(1, pcp(3)).unwrap();
    let congested: Vec<FlowKey> = tables.congested.iter().map(|&(flow, _)| flow).collect();
    assert_eq!(congested, expected, "the whole set, not the last frame's flow");
    assert_eq!(tables.counters.pause_rx, 9);
    // Its other flows still go: only the named ones are paused.
    peer.send(2, 1);
    assert_eq!(peer.drain(1).0, [(2, 1, 0)]);
}

#[test]
fn switching_policy_to_and_from_ofc_loses_nothing_and_keeps_each_flows_order() {
    let mut rig = Rig::new();
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(0, 1)]);
    for _ in 0..3 {
        rig.send(0, 1);
        rig.send(2, 1);
    }
    rig.ofc(1, OfcOp::Resume, false, 0, &[flow(0, 1)]);
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(0, 1), flow(2, 1)]);
    rig.send(0, 1);
    rig.send(2, 1);
    // Frames parked in both backups, one of them draining.
    let mut pfc = rig.config.clone();
    pfc.policy.kind = PolicyKind::Pfc;
    rig.switch.reconfigure(rig.now, &rig.config, &pfc).expect("to pfc");
    let (data, _) = rig.drain(1);
    assert_eq!(seqs(&data, 0, 1), [0, 1, 2, 3]);
    assert_eq!(seqs(&data, 2, 1), [0, 1, 2, 3]);
    // And back: the new engine learns the queued flows; a PAUSE parks them again.
    rig.pfc(1, u16::MAX);
    for _ in 0..2 {
        rig.send(0, 1);
        rig.send(2, 1);
    }
    rig.switch.reconfigure(rig.now, &pfc, &rig.config).expect("to ofc");
    let tables = rig.switch.ofc().unwrap().tables(1, pcp(3)).unwrap();
    assert_eq!(tables.flow_in_port.iter().map(|f| f.1).sum::<u32>(), 4, "queued frames counted");
    // A plain resume resumes every flow: the OFC pause comes after it.
    rig.pfc(1, 0);
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(2, 1)]);
    let (data, _) = rig.drain(1);
    assert_eq!(seqs(&data, 0, 1), [4, 5]);
    assert!(seqs(&data, 2, 1).is_empty());
    rig.ofc(1, OfcOp::Resume, false, 0, &[flow(2, 1)]);
    assert_eq!(seqs(&rig.drain(1).0, 2, 1), [4, 5]);
}

#[test]
fn a_reload_keeps_the_tables_and_refuses_a_new_capacity() {
    let mut rig = Rig::new();
    rig.ofc(1, OfcOp::Pause, false, u16::MAX, &[flow(0, 1)]);
    rig.send(0, 1);
    let mut new = rig.config.clone();
    new.policy.alpha = 0.85;
    rig.switch.reconfigure(rig.now, &rig.config, &new).expect("reload");
    assert!(rig.switch.ofc().unwrap().is_paused(1, pcp(3), &flow(0, 1)), "the peer's pause stands");
    assert_eq!(rig.switch.ofc().unwrap().thresholds().xoff_c, 42_500);
    new.policy.flow_table_capacity = 64;
    let error = rig.switch.reconfigure(rig.now, &rig.config, &new).unwrap_err();
    assert_eq!(error.key, "policy.flow_table_capacity");
}

#[test]
fn a_reload_applies_a_longer_ofc_frame_at_once() {
    let mut rig = Rig::new();
    let mut long = rig.config.clone();
    long.policy.ofc_frame_len = 1514;
    rig.switch.reconfigure(rig.now, &rig.config, &long).expect("reload");
    let (expected, control) = pause_nine_flows(&mut rig);
    assert_eq!(control.len(), 1, "the non-standard option: the nine flows in one frame");
    assert_eq!(control[0].len(), 34 + 12 + 9 * 12);
    assert_eq!(parse(&control[0]), (OfcOp::Pause, false, expected));
}
