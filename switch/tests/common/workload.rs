//! A steady per-frame workload on one switch, shared by the allocation test and the
//! criterion benchmark: 8 ports × 8 priorities, PFC on priorities 3 and 4, bursts of 64
//! frames into one egress port at a time, then everything drained. Each burst holds 32
//! frames of 1500 B from one ingress on priority 3 (crossing XOFF, so PFC XOFF and XON go
//! out every burst) and 32 frames of 64–1500 B from the other ports on every priority.
//! Under OFC the egress port's peer also pauses the elephant flow before each burst and
//! resumes it after: its frames are parked in the nested queues, then rotated out. With QCN
//! the elephant's bursts cross Qeq, so its CPs sample, pick culprits and send CNMs. The
//! elephant's first frame is a FECN probe (60 B): with FECN on priority 3 it is marked as it
//! leaves, and each 1 ms interval (50 bursts of 20 µs) the rate points measure. Time advances
//! 20 µs per burst and the switch's timers run when due. In buffer mode "pools" the same
//! bursts cross the lossless PGs' dynamic threshold instead. With INT on priority 3, every
//! priority-3 frame carries INT-MD with HPCC's request and gets a record as it leaves,
//! pushed into the headroom in front of it as the datapath does (9000-byte MTUs, so that
//! the 1500-byte elephants have room for it).

use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::config::{PolicyKind, SwitchConfig};
use pfcswitch_switch::qcn::{Placement, Sampling};
use pfcswitch_switch::{Switch, Tx};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, FecnProbeRepr, FecnSubtype, FlowKey, FrameView, Framing, INT_HEADER_LEN,
    IntInstructions, IntRepr, Ipv4Addr, L2Repr, OfcHeader, OfcOp, Pcp, TRAFFIC_UDP_PORT, TrafficKind, TrafficRepr,
    VlanRepr, apply_int, build_data_frame, build_fecn_probe_frame, build_ofc_frame, insert_int, mark_ecn_ce,
    mark_fecn_probe,
};
use std::time::Duration;

pub const PORTS: usize = 8;
/// Room in front of a frame for a pushed INT record (the datapath has 256 bytes).
const INT_HEADROOM: usize = 128;
/// Where a tagged IPv4/UDP frame's INT-MD header ends: what a push moves.
const INT_HEADERS_END: usize = 18 + 20 + 8 + INT_HEADER_LEN;
pub const BURST: usize = 64;

pub struct Workload {
    pub switch: Switch,
    /// (ingress port, frame bytes), cycled through; with INT, `INT_HEADROOM` bytes come
    /// first.
    frames: Vec<(usize, Vec<u8>)>,
    /// With INT: each frame's bytes as built, which a stamped frame's headers are restored
    /// from for its next turn.
    pristine: Vec<Vec<u8>>,
    headroom: usize,
    next: usize,
    now: Instant,
    control: [u8; 2048],
    /// Where a FECN probe is marked.
    scratch: [u8; 2048],
    /// OFC: per burst, the egress port and its peer's PAUSE and RESUME of the elephant flow.
    ofc_frames: Vec<(usize, Vec<u8>, Vec<u8>)>,
}

/// The PAUSE and RESUME the peer of `egress` sends for the flow `ingress` → `egress`.
fn ofc_pause_resume(ingress: usize, egress: usize) -> (Vec<u8>, Vec<u8>) {
    let flow = FlowKey { src: mac(ingress), dst: mac(egress) };
    let frame = |op| {
        let mut bytes = vec![0u8; 60];
        let header = OfcHeader { op, priority: Pcp::new(3).unwrap(), coarse: false, more: false };
        let len = build_ofc_frame(&mut bytes, mac(egress), header, u16::MAX, [flow]);
        bytes.truncate(len);
        bytes
    };
    (frame(OfcOp::Pause), frame(OfcOp::Resume))
}

/// Writes a FECN probe with `spec`'s addresses and tag into `bytes`; returns its length.
fn probe(bytes: &mut [u8], spec: &DataFrameSpec) -> usize {
    let l2 = L2Repr {
        dst: spec.dst_mac,
        src: spec.src_mac,
        vlan: spec.vlan,
        cn_tag: None,
        ethertype: pfcswitch_wire::ethertype::LOCAL_EXPERIMENTAL_1,
    };
    let probe = FecnProbeRepr {
        subtype: FecnSubtype::Probe,
        hops: 0,
        flow_id: 0,
        sequence: 0,
        rate_kbps: u32::MAX,
        bottleneck: EthernetAddress::default(),
        timestamp_ns: 0,
    };
    build_fecn_probe_frame(bytes, &l2, &probe)
}

fn mac(port: usize) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, port as u8 + 1])
}

impl Workload {
    /// With QCN congestion points on priority 3 at `qcn`'s placement and sampling, the MIB's
    /// sample base and a Qeq of 10 KB, which each burst's elephant crosses: CNMs every burst
    /// or two.
    pub fn with_qcn(policy: PolicyKind, qcn: Option<(Placement, Sampling)>) -> Workload {
        Workload::new(policy, |config| {
            if let Some((placement, sampling)) = qcn {
                config.qcn.priorities = vec![3];
                config.qcn.cp = placement;
                config.qcn.sampling = sampling;
                config.qcn.qeq = ByteSize(10_000);
            }
        })
    }

    /// With FECN rate points on priority 3 (T = 1 ms, the paper's constants).
    pub fn with_fecn(policy: PolicyKind) -> Workload {
        Workload::new(policy, |config| config.fecn.priorities = vec![3])
    }

    /// With ECN marking on priority 3 above 10 KB, which each burst's elephant crosses (its
    /// frames, as every frame here, are ECT(0)).
    pub fn with_ecn(policy: PolicyKind) -> Workload {
        Workload::new(policy, |config| {
            config.ecn.priorities = vec![3];
            (config.ecn.min, config.ecn.max) = (ByteSize(10_000), ByteSize(10_000));
        })
    }

    /// In buffer mode "pools": the lossless PGs share a 40 KB ingress pool at α = 1 (XOFF at
    /// 20 KB for one busy PG, as the other workloads' static XOFF) with 40 KB of headroom (as
    /// their MAX: the bursts ignore pauses), lossy queues a 1 MB pool.
    pub fn with_pools(policy: PolicyKind) -> Workload {
        Workload::new(policy, |config| {
            let defaults = pfcswitch_switch::config::PfcConfig::default();
            (config.pfc.xoff, config.pfc.xon) = (defaults.xoff, defaults.xon);
            config.buffer = toml::from_str(
                "mode = \"pools\"\n\
                 [pools.ingress_lossless_pool]\ntype = \"ingress\"\nsize = \"40KB\"\n\
                 [pools.egress_lossy_pool]\ntype = \"egress\"\nsize = \"1MB\"\n\
                 [profiles.pg_lossless]\npool = \"ingress_lossless_pool\"\ndynamic_th = 0\nxoff = \"40KB\"\n\
                 [profiles.q_lossy]\npool = \"egress_lossy_pool\"\nsize = 1518\ndynamic_th = 0\n\
                 [pg]\n\"*|3-4\" = \"pg_lossless\"\n[queue]\n\"*|0-2,5-7\" = \"q_lossy\"\n",
            )
            .expect("pool tables");
        })
    }

    /// With INT on priority 3: every priority-3 frame carries INT-MD asking for HPCC's record.
    pub fn with_int(policy: PolicyKind) -> Workload {
        let mut workload = Workload::new(policy, |config| {
            config.int.priorities = vec![3];
            for port in &mut config.ports {
                port.mtu = 9000;
            }
        });
        let source = IntRepr::source(TRAFFIC_UDP_PORT, IntInstructions::HPCC, 5);
        for (_, bytes) in &mut workload.frames {
            let len = bytes.len();
            let mut with_int = vec![0u8; INT_HEADROOM + len + INT_HEADER_LEN];
            with_int[INT_HEADROOM..INT_HEADROOM + len].copy_from_slice(bytes);
            let is_3 = FrameView::parse(bytes).is_ok_and(|view| view.pcp() == Pcp::new(3));
            let new_len = match is_3 {
                true => insert_int(&mut with_int[INT_HEADROOM..], len, &source, &[]).unwrap_or(len),
                false => len,
            };
            with_int.truncate(INT_HEADROOM + new_len);
            *bytes = with_int;
        }
        workload.pristine = workload.frames.iter().map(|(_, bytes)| bytes.clone()).collect();
        workload.headroom = INT_HEADROOM;
        workload
    }

    /// `edit` comes last: it may undo a default of the other workloads.
    fn new(policy: PolicyKind, edit: impl FnOnce(&mut SwitchConfig)) -> Workload {
        let mut config = SwitchConfig::with_ports("bench", PORTS, BitRate::gbps(100));
        config.policy.kind = policy;
        config.pfc.lossless = vec![3, 4];
        config.pfc.xoff = ByteSize(20_000);
        config.pfc.xon = ByteSize(10_000);
        config.buffer.egress_max = Some(ByteSize(1_000_000));
        edit(&mut config);
        let (mut switch, _) = Switch::new(&config).expect("valid");
        // As the datapath does: the per-frame path must then never allocate (tests/no_alloc.rs).
        switch.preallocate();
        // Each poll may catch up: time advances in steps, not per frame.
        switch.set_shaper_burst(Duration::from_secs(1));
        let mut frames = Vec::new();
        let mut ofc_frames = Vec::new();
        for egress in 0..PORTS {
            if policy == PolicyKind::Ofc {
                let (pause, resume) = ofc_pause_resume((egress + 1) % PORTS, egress);
                ofc_frames.push((egress, pause, resume));
            }
            for k in 0..BURST {
                let elephant = k < BURST / 2;
                let ingress = if elephant { (egress + 1) % PORTS } else { (egress + 1 + k % (PORTS - 1)) % PORTS };
                let priority = if elephant { Pcp::new(3).unwrap() } else { Pcp::from_low_bits(k as u8) };
                let spec = DataFrameSpec {
                    src_mac: mac(ingress),
                    dst_mac: mac(egress),
                    vlan: Some(VlanRepr { pcp: priority, dei: false, vid: 1 }),
                    cn_tag: None,
                    src_ip: Ipv4Addr::new(10, 0, 0, ingress as u8 + 1),
                    dst_ip: Ipv4Addr::new(10, 0, 0, egress as u8 + 1),
                    dscp: 0,
                    ecn: 2,
                    src_port: TRAFFIC_UDP_PORT,
                    dst_port: TRAFFIC_UDP_PORT,
                    traffic: TrafficRepr {
                        kind: TrafficKind::Data,
                        flow_id: k as u32,
                        sequence: 0,
                        message_id: 0,
                        message_len: 0,
                        offset: 0,
                        timestamp_ns: 0,
                        ack_req: false,
                    },
                    frame_len: if elephant { 1500 } else { 64 + (k * 97) % 1437 },
                    framing: Framing::Traffic,
                };
                let mut bytes = vec![0u8; spec.len()];
                if k == 0 {
                    let len = probe(&mut bytes, &spec);
                    bytes.truncate(len);
                } else {
                    build_data_frame(&mut bytes, &spec);
                }
                frames.push((ingress, bytes));
            }
        }
        let mut workload = Workload {
            switch,
            frames,
            pristine: Vec::new(),
            headroom: 0,
            next: 0,
            now: Instant::ZERO,
            control: [0; 2048],
            scratch: [0; 2048],
            ofc_frames,
        };
        // Teach the switch every address, so that the steady state forwards without flooding.
        for port in 0..PORTS {
            let (_, announce) = workload.frames.iter().find(|(ingress, _)| *ingress == port).expect("each port sends");
            let announce = announce.clone();
            workload.switch.handle_rx(workload.now, port, u64::MAX, &announce);
            workload.drain();
        }
        workload
    }

    /// Receives one burst of 64 frames and sends everything; returns frames sent.
    pub fn burst(&mut self) -> usize {
        let ofc = self.ofc_frames.get(self.next / BURST);
        if let Some((port, pause, _)) = ofc {
            self.switch.handle_rx(self.now, *port, u64::MAX, pause);
        }
        for _ in 0..BURST {
            let (port, bytes) = &self.frames[self.next];
            self.switch.handle_rx(self.now, *port, self.next as u64, &bytes[self.headroom..]);
            self.next = (self.next + 1) % self.frames.len();
        }
        if let Some((port, _, resume)) = ofc {
            self.switch.handle_rx(self.now, *port, u64::MAX, resume);
        }
        self.drain()
    }

    fn drain(&mut self) -> usize {
        self.now += Duration::from_micros(20);
        if self.switch.poll_timeout().is_some_and(|at| at <= self.now) {
            self.switch.handle_timeout(self.now);
        }
        let mut sent = 0;
        for port in 0..PORTS {
            while let Some(tx) = self.switch.poll_tx(self.now, port) {
                match tx {
                    Tx::Control(control) => {
                        self.switch.emit_control(port, &control, &mut self.control);
                    }
                    // The datapath rewrites probes and CE marks in its buffer; ours are reused,
                    // so a copy. (The frames that taught the switch its addresses have no index.)
                    Tx::Data { handle, len, int: Some(int), .. } => {
                        // In place, into the headroom; then the headers back for the next turn.
                        if let Some((_, bytes)) = self.frames.get_mut(handle as usize) {
                            let _ = apply_int(bytes, self.headroom, len as usize, &int);
                            let restore = self.headroom + INT_HEADERS_END;
                            bytes[..restore].copy_from_slice(&self.pristine[handle as usize][..restore]);
                        }
                    }
                    Tx::Data { handle, len, mark, ce, .. } => {
                        if let Some((_, bytes)) = self.frames.get(handle as usize).filter(|_| mark.is_some() || ce) {
                            let frame = &mut self.scratch[..len as usize];
                            frame.copy_from_slice(bytes);
                            if let Some(mark) = mark {
                                mark_fecn_probe(frame, mark.rate_kbps, mark.port);
                            }
                            if ce {
                                mark_ecn_ce(frame);
                            }
                        }
                    }
                }
                sent += 1;
            }
        }
        while self.switch.poll_free().is_some() {}
        sent
    }
}
