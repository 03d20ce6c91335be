//! QCN congestion points on one switch, frame by frame: which flows get CNMs under each
//! placement and sampling, and what the CNMs say, parsed back from the bytes the switch wrote.
//!
//! Four ports at 1 Gbit/s, priority 3 monitored, 1000-byte frames, Qeq 26 KB, w = 2 and a
//! 15 KB sample base (a tenth of the MIB's, so that a test needs few frames). Port 2 leads
//! to the congested host and is never drained; port 3 leads to an idle host and is drained.

mod common;

use common::{host_mac, pcp};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::qcn::cp::CNM_QUEUE_UNIT;
use pfcswitch_switch::qcn::{Placement, Sampling, cpid};
use pfcswitch_switch::switch::{ControlFrame, RxVerdict, Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, FrameView, MacControlRepr, PAUSE_MULTICAST, PfcRepr, VlanRepr,
    build_announcement_frame, build_mac_control_frame, ethertype,
};
use std::time::Duration;

const FRAME: usize = 1000;
const CONGESTED: usize = 2;
const IDLE: usize = 3;

/// Hosts behind port 0: f1 (to the congested host) and f6 (to the idle one) come from
/// different machines there, so their sources tell them apart.
fn f1_source() -> EthernetAddress {
    EthernetAddress([0x02, 0, 0, 0, 0xF1, 1])
}
fn f6_source() -> EthernetAddress {
    EthernetAddress([0x02, 0, 0, 0, 0xF6, 6])
}

struct Rig {
    switch: Switch,
    now: Instant,
    next_handle: u64,
}

/// A CNM as the test reads it back.
#[derive(Debug)]
struct Cnm {
    out: usize,
    dst: EthernetAddress,
    src: EthernetAddress,
    vlan: VlanRepr,
    quantized: u8,
    cpid: u64,
    q_offset: i16,
    q_delta: i16,
    encapsulated_dst: EthernetAddress,
    msdu_len: u16,
    msdu: Vec<u8>,
}

impl Rig {
    /// Lossless priority 3 with PFC far above the CP's set point (QCN acts, PAUSE waits);
    /// QCN off.
    fn config() -> SwitchConfig {
        let mut config = SwitchConfig::with_ports("qcn", 4, BitRate::gbps(1));
        config.pfc.xoff = ByteSize(300_000);
        config.pfc.xon = ByteSize(250_000);
        config.pfc.max = Some(ByteSize(400_000));
        config
    }

    fn with_qcn(mut config: SwitchConfig, placement: Placement, sampling: Sampling) -> SwitchConfig {
        config.qcn.priorities = vec![3];
        config.qcn.cp = placement;
        config.qcn.sampling = sampling;
        config.qcn.sample_base = ByteSize(15_000);
        config
    }

    fn new(placement: Placement, sampling: Sampling) -> Rig {
        Rig::built(&Rig::with_qcn(Rig::config(), placement, sampling))
    }

    /// The switch of `config`, having learnt every host.
    fn built(config: &SwitchConfig) -> Rig {
        let (switch, _) = Switch::new(config).expect("valid");
        let mut rig = Rig { switch, now: Instant::from_nanos(1_000), next_handle: 0 };
        for (port, mac) in [(0, f1_source()), (0, f6_source()), (1, host_mac(1)), (2, host_mac(2)), (3, host_mac(3))] {
            let mut frame = [0u8; 60];
            build_announcement_frame(&mut frame, mac);
            rig.switch.handle_rx(rig.now, port, u64::MAX, &frame);
        }
        for port in 0..4 {
            rig.drain(port);
        }
        rig
    }

    fn send(&mut self, port: usize, src: EthernetAddress, dst: usize) {
        let vlan = VlanRepr { pcp: pcp(3), dei: false, vid: 7 };
        let spec = DataFrameSpec::between(src, host_mac(dst), Some(vlan), FRAME);
        let handle = self.next_handle;
        self.next_handle += 1;
        assert_eq!(self.switch.handle_rx(self.now, port, handle, &spec.to_bytes()), RxVerdict::Accepted);
    }

    /// Lets `port` send for 200 µs; returns the CNMs among what it sent.
    fn drain(&mut self, port: usize) -> Vec<Cnm> {
        let mut cnms = Vec::new();
        let end = self.now + Duration::from_micros(200);
        while self.now < end {
            let Some(tx) = self.switch.poll_tx(self.now, port) else {
                self.now += Duration::from_micros(1);
                continue;
            };
            if let Tx::Control(control) = tx {
                let mut bytes = vec![0u8; control.wire_len()];
                let len = self.switch.emit_control(port, &control, &mut bytes);
                assert_eq!(len, control.wire_len());
                if let ControlFrame::Cnm(_) = control {
                    cnms.push(parse(port, &bytes));
                }
            }
        }
        while self.switch.poll_free().is_some() {}
        cnms
    }

    fn port_mac(&self, port: usize) -> EthernetAddress {
        self.switch.port_mac(port)
    }
}

fn parse(out: usize, bytes: &[u8]) -> Cnm {
    let view = FrameView::parse(bytes).expect("a CNM parses");
    assert_eq!(view.l2.ethertype, ethertype::CNM);
    let cnm = view.cnm().expect("valid CNM PDU");
    Cnm {
        out,
        dst: view.l2.dst,
        src: view.l2.src,
        vlan: view.l2.vlan.expect("CNMs are tagged"),
        quantized: cnm.quantized_feedback,
        cpid: cnm.cpid,
        q_offset: cnm.q_offset,
        q_delta: cnm.q_delta,
        encapsulated_dst: cnm.encapsulated_dst,
        msdu_len: cnm.msdu_len,
        msdu: cnm.msdu.to_vec(),
    }
}

/// f1 (port 0) and f2 (port 1) into the congested host, `rounds` frames each; with `f6`, f6
/// from port 0 at `f6_per_f1` frames per f1 frame into the idle host, whose port drains.
fn fan_in(rig: &mut Rig, rounds: usize, f6_per_f1: usize) -> Vec<Cnm> {
    let mut cnms = Vec::new();
    for _ in 0..rounds {
        rig.send(0, f1_source(), CONGESTED);
        rig.send(1, host_mac(1), CONGESTED);
        for _ in 0..f6_per_f1 {
            rig.send(0, f6_source(), IDLE);
        }
        cnms.extend(rig.drain(IDLE));
        cnms.extend(rig.drain(0));
        cnms.extend(rig.drain(1));
    }
    cnms
}

#[test]
fn an_output_cp_notifies_the_sources_filling_its_queue_with_standard_cnms() {
    let mut rig = Rig::new(Placement::Output, Sampling::Arrival);
    let cnms = fan_in(&mut rig, 100, 0);
    assert!(cnms.len() >= 8, "{} CNMs", cnms.len());
    let congested_mac = rig.port_mac(CONGESTED);
    for cnm in &cnms {
        // Back to the culprit's source, out of the port it came in on.
        assert!((cnm.dst, cnm.out) == (f1_source(), 0) || (cnm.dst, cnm.out) == (host_mac(1), 1), "{cnm:?}");
        assert_eq!(cnm.src, congested_mac, "SA = the CP's port MAC");
        assert_eq!(cnm.cpid, cpid(congested_mac, pcp(3), Placement::Output));
        assert_eq!((cnm.vlan.pcp, cnm.vlan.vid), (pcp(6), 7), "CNM priority, the culprit's VLAN");
        assert_eq!(cnm.encapsulated_dst, host_mac(CONGESTED));
        // The culprit's MSDU: its IPv4 header first, 64 bytes of it, and its whole length.
        assert_eq!(cnm.msdu.len(), 64);
        assert_eq!(cnm.msdu[0] >> 4, 4, "an IPv4 packet");
        assert_eq!(usize::from(cnm.msdu_len), FRAME - 18);
        // QntzFb from the CNM's own fields (units of 64 B): Fb = −(Qoff + 2·Qδ).
        let fb = -(i32::from(cnm.q_offset) + 2 * i32::from(cnm.q_delta));
        let full_scale = (26_000 / CNM_QUEUE_UNIT as i32) * 5;
        assert!(fb < 0);
        assert_eq!(i32::from(cnm.quantized), (-fb * 63 / full_scale).min(63), "{cnm:?}");
    }
    // Both sources of the fan-in hear about it.
    assert!(cnms.iter().any(|c| c.dst == f1_source()) && cnms.iter().any(|c| c.dst == host_mac(1)));
    let counters = rig.switch.qcn().unwrap().counters(CONGESTED, pcp(3));
    assert_eq!(counters.cnms_sent as usize, cnms.len());
}

#[test]
fn no_cnm_while_the_queue_stays_short() {
    let mut rig = Rig::new(Placement::Output, Sampling::Arrival);
    // 100 frames through the drained port: its queue never reaches Qeq.
    for _ in 0..100 {
        rig.send(0, f6_source(), IDLE);
        let idle = rig.drain(IDLE);
        assert!(idle.is_empty(), "{idle:?}");
        let back = rig.drain(0);
        assert!(back.is_empty(), "{back:?}");
    }
    let cp = rig.switch.qcn().unwrap().congestion_point(IDLE, pcp(3));
    assert!(cp.samples() >= 5, "{} samples", cp.samples());
    assert_eq!(cp.cnms(), 0);
}

/// Fig. 3 on one input: f6 arrives twice as often as f1 but never backs up.
fn victim_cnms(sampling: Sampling) -> (usize, usize) {
    let mut rig = Rig::new(Placement::Input, sampling);
    let cnms = fan_in(&mut rig, 120, 2);
    let input_0 = cpid(rig.port_mac(0), pcp(3), Placement::Input);
    let cnms: Vec<&Cnm> = cnms.iter().filter(|c| c.cpid == input_0).collect();
    for cnm in &cnms {
        assert_eq!(cnm.out, 0, "an input CP answers out of its own port: {cnm:?}");
    }
    let to = |mac| cnms.iter().filter(|c| c.dst == mac).count();
    (to(f1_source()), to(f6_source()))
}

#[test]
fn arrival_sampling_at_an_input_notifies_the_victim_that_passes_through() {
    let (f1, f6) = victim_cnms(Sampling::Arrival);
    assert!(f1 > 0 && f6 > f1, "f1 {f1}, f6 {f6}: arrival sampling follows arrival rates");
}

#[test]
fn deterministic_occupancy_never_notifies_the_victim() {
    let (f1, f6) = victim_cnms(Sampling::OccupancyDeterministic);
    assert!(f1 >= 8, "f1 {f1}");
    assert_eq!(f6, 0);
}

#[test]
fn random_occupancy_rarely_notifies_the_victim() {
    let (f1, f6) = victim_cnms(Sampling::OccupancyRandom);
    assert!(f1 >= 8, "f1 {f1}");
    assert!(f6 * 10 <= f1, "f1 {f1}, f6 {f6}");
}

#[test]
fn cnms_leave_before_data_even_when_the_peer_pauses_every_priority() {
    let mut rig = Rig::new(Placement::Input, Sampling::Arrival);
    // The peer of port 0 pauses all eight priorities.
    let repr = MacControlRepr::Pfc((0..8).fold(PfcRepr::default(), |r, p| r.with_class(pcp(p), u16::MAX)));
    let mut frame = [0u8; 60];
    let len = build_mac_control_frame(&mut frame, host_mac(0), PAUSE_MULTICAST, &repr);
    assert_eq!(rig.switch.handle_rx(rig.now, 0, u64::MAX, &frame[..len]), RxVerdict::Consumed);
    let mut cnms = 0;
    for _ in 0..100 {
        rig.send(0, f1_source(), CONGESTED);
        cnms += rig.drain(0).len();
    }
    assert!(cnms > 0, "CNMs went out of a port paused on every priority");
}

#[test]
fn the_same_seed_samples_the_same_frames() {
    let run = || {
        let mut rig = Rig::new(Placement::Output, Sampling::OccupancyRandom);
        fan_in(&mut rig, 60, 0).iter().map(|c| (c.dst, c.q_offset, c.q_delta)).collect::<Vec<_>>()
    };
    let first = run();
    assert!(!first.is_empty());
    assert_eq!(first, run());
}

#[test]
fn a_reload_turns_qcn_on_and_off_while_frames_are_held() {
    let config = Rig::config();
    let mut rig = Rig::built(&config);
    // 40 KB queue up at the congested port with QCN off: nothing remembers their sources.
    for _ in 0..20 {
        rig.send(0, f1_source(), CONGESTED);
        rig.send(1, host_mac(1), CONGESTED);
    }
    assert!(rig.switch.qcn().is_none());
    let on = Rig::with_qcn(config.clone(), Placement::Input, Sampling::OccupancyDeterministic);
    rig.switch.reconfigure(rig.now, &config, &on).expect("QCN can be turned on by a reload");
    let cnms = fan_in(&mut rig, 60, 0);
    assert!(!cnms.is_empty());
    assert!(cnms.iter().all(|c| c.dst == f1_source() || c.dst == host_mac(1)), "no CNM to an unknown source");
    rig.switch.reconfigure(rig.now, &on, &config).expect("and off");
    assert!(rig.switch.qcn().is_none());
    assert!(fan_in(&mut rig, 20, 0).is_empty());
}
