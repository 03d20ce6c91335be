//! Simulated hosts: senders that obey PFC through [`HostNic`], receivers that check sequence
//! numbers per flow.

use crate::host::HostNic;
use crate::sched::Shaper;
use crate::time::Instant;
use crate::units::BitRate;
use crate::wire::{
    DataFrameSpec, EthernetAddress, FrameView, Ipv4Addr, L2Repr, MacControlRepr, PAUSE_MULTICAST, Pcp,
    TRAFFIC_UDP_PORT, TrafficKind, TrafficRepr, VlanRepr, build_data_frame, build_mac_control_frame, ethertype,
};
use std::cmp::Reverse;
use std::time::Duration;

/// EtherType of the simulator's minimum-size frames (IEEE local experimental 2): flow id and
/// sequence right after the tag, for frames too small for IPv4 + UDP + traffic header.
const MINIMAL_FRAME_ETHERTYPE: u16 = 0x88B6;

/// A flow a host sends: fixed-size frames on one priority, at line rate or a set rate.
/// Frames shorter than an IPv4/UDP traffic frame (78 B) use a minimal format instead.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub id: u32,
    pub dst: EthernetAddress,
    pub priority: Pcp,
    /// Frame length without FCS.
    pub frame_len: usize,
    /// Frames to send; `u64::MAX` for a flow that never ends.
    pub frames: u64,
    pub start: Instant,
    /// Offered rate; `None` sends as fast as the NIC and pauses allow.
    pub rate: Option<BitRate>,
}

#[derive(Clone, Debug)]
struct Flow {
    spec: FlowSpec,
    sent: u64,
    pacer: Option<Shaper>,
}

impl Flow {
    fn ready_at(&self) -> Instant {
        self.spec.start.max(self.pacer.as_ref().map_or(Instant::ZERO, Shaper::ready_at))
    }
}

/// What a receiver saw of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowStats {
    pub frames: u64,
    pub bytes: u64,
    /// Sequence numbers skipped (frames lost on the way).
    pub lost: u64,
    /// Frames that arrived with a sequence number below the expected one.
    pub reordered: u64,
    pub first_rx: Option<Instant>,
    pub last_rx: Option<Instant>,
    next_sequence: u32,
}

impl FlowStats {
    fn record(&mut self, now: Instant, sequence: u32, len: usize) {
        self.frames += 1;
        self.bytes += len as u64;
        self.first_rx.get_or_insert(now);
        self.last_rx = Some(now);
        if sequence >= self.next_sequence {
            self.lost += u64::from(sequence - self.next_sequence);
            self.next_sequence = sequence + 1;
        } else {
            self.reordered += 1;
        }
    }
}

/// A host with one NIC.
#[derive(Clone, Debug)]
pub struct SimHost {
    pub mac: EthernetAddress,
    pub ip: Ipv4Addr,
    pub nic: HostNic,
    flows: Vec<Flow>,
    next_flow: usize,
    /// Flow id → what arrived (flow ids are small: a dense table).
    received: Vec<FlowStats>,
    /// Frames received that were neither PFC nor for this host (flooded).
    pub foreign_frames: u64,
    announce: bool,
    /// MAC control frames to send at given times, ahead of data and regardless of pauses.
    injections: Vec<(Instant, MacControlRepr)>,
}

impl SimHost {
    pub fn new(mac: EthernetAddress, ip: Ipv4Addr, speed: BitRate) -> SimHost {
        SimHost {
            mac,
            ip,
            nic: HostNic::new(speed, 0xFF),
            flows: Vec::new(),
            next_flow: 0,
            received: Vec::new(),
            foreign_frames: 0,
            announce: false,
            injections: Vec::new(),
        }
    }

    pub fn add_flow(&mut self, spec: FlowSpec) {
        let pacer = spec.rate.map(|rate| Shaper::new(rate, Duration::ZERO));
        self.flows.push(Flow { spec, sent: 0, pacer });
    }

    /// Sends a PAUSE or PFC frame at `at` (or as soon after as the wire is free).
    pub fn inject(&mut self, at: Instant, repr: MacControlRepr) {
        self.injections.push((at, repr));
        self.injections.sort_by_key(|&(at, _)| Reverse(at));
    }

    /// Sends one broadcast frame first, so that switches learn this host's address.
    pub fn announce(&mut self) {
        self.announce = true;
    }

    /// Frames sent so far by flow `id`.
    pub fn sent(&self, id: u32) -> u64 {
        self.flows.iter().filter(|f| f.spec.id == id).map(|f| f.sent).sum()
    }

    pub fn received(&self, id: u32) -> FlowStats {
        self.received.get(id as usize).copied().unwrap_or_default()
    }

    /// Writes the next frame to send at `now` into `buffer` and returns its length.
    pub fn poll_tx(&mut self, now: Instant, buffer: &mut [u8]) -> Option<usize> {
        if !self.nic.wire_free(now) {
            return None;
        }
        if let Some(&(_, repr)) = self.injections.last().filter(|(at, _)| *at <= now) {
            self.injections.pop();
            return Some(self.book_wire(now, build_mac_control_frame(buffer, self.mac, PAUSE_MULTICAST, &repr)));
        }
        if self.announce && self.nic.can_send(now, Pcp::default()) {
            self.announce = false;
            let l2 = L2Repr {
                dst: EthernetAddress::BROADCAST,
                src: self.mac,
                vlan: None,
                cn_tag: None,
                ethertype: ethertype::LOCAL_EXPERIMENTAL_1,
            };
            let offset = l2.emit(buffer);
            buffer[offset..60].fill(0);
            return Some(self.book_wire(now, 60));
        }
        let n = self.flows.len();
        let chosen = (0..n).map(|i| (self.next_flow + i) % n).find(|&i| {
            let flow = &self.flows[i];
            flow.sent < flow.spec.frames && flow.ready_at() <= now && self.nic.can_send(now, flow.spec.priority)
        })?;
        self.next_flow = (chosen + 1) % n;
        let flow = &mut self.flows[chosen];
        let len = build_flow_frame(buffer, self.mac, self.ip, &flow.spec, flow.sent as u32, now);
        flow.sent += 1;
        if let Some(pacer) = &mut flow.pacer {
            pacer.send(now, len);
        }
        Some(self.book_wire(now, len))
    }

    fn book_wire(&mut self, now: Instant, len: usize) -> usize {
        self.nic.sent(now, len);
        len
    }

    /// When this host next has something to send, if ever.
    pub fn poll_timeout(&self) -> Option<Instant> {
        let injection = self.injections.last().map(|&(at, _)| at.max(self.nic.wire_free_at()));
        let announce = self.announce.then(|| self.nic.ready_at(Pcp::default()));
        let flows = self
            .flows
            .iter()
            .filter(|f| f.sent < f.spec.frames)
            .map(|f| f.ready_at().max(self.nic.ready_at(f.spec.priority)));
        injection.into_iter().chain(announce).chain(flows).min()
    }

    pub fn handle_rx(&mut self, now: Instant, frame: &[u8]) {
        if self.nic.handle_rx(now, frame) {
            return;
        }
        let Ok(view) = FrameView::parse(frame) else { return };
        if view.l2.dst != self.mac {
            self.foreign_frames += 1;
            return;
        }
        let (flow_id, sequence) = match view.traffic() {
            Ok((_, _, traffic)) => (traffic.flow_id, traffic.sequence),
            Err(_) if view.l2.ethertype == MINIMAL_FRAME_ETHERTYPE && view.payload.len() >= 8 => {
                let word = |at: usize| u32::from_be_bytes(view.payload[at..at + 4].try_into().expect("8 bytes"));
                (word(0), word(4))
            }
            Err(_) => return,
        };
        let id = flow_id as usize;
        if id >= self.received.len() {
            self.received.resize(id + 1, FlowStats::default());
        }
        self.received[id].record(now, sequence, frame.len());
    }
}

/// Writes frame `sequence` of `flow` and returns its length: an IPv4/UDP traffic frame, or
/// the minimal format when the flow's frames are too short for one.
fn build_flow_frame(
    buffer: &mut [u8],
    mac: EthernetAddress,
    ip: Ipv4Addr,
    flow: &FlowSpec,
    sequence: u32,
    now: Instant,
) -> usize {
    let vlan = Some(VlanRepr { pcp: flow.priority, dei: false, vid: 1 });
    let spec = DataFrameSpec {
        src_mac: mac,
        dst_mac: flow.dst,
        vlan,
        src_ip: ip,
        dst_ip: Ipv4Addr::new(10, 0, 0, flow.dst.0[5]),
        dscp: 0,
        src_port: TRAFFIC_UDP_PORT,
        dst_port: TRAFFIC_UDP_PORT,
        traffic: TrafficRepr {
            kind: TrafficKind::Data,
            flow_id: flow.id,
            sequence,
            message_id: 0,
            message_len: 0,
            offset: 0,
            timestamp_ns: now.as_nanos(),
        },
        frame_len: flow.frame_len,
    };
    if flow.frame_len >= spec.min_len() {
        return build_data_frame(buffer, &spec);
    }
    let l2 = L2Repr { dst: flow.dst, src: mac, vlan, cn_tag: None, ethertype: MINIMAL_FRAME_ETHERTYPE };
    let offset = l2.emit(buffer);
    buffer[offset..offset + 4].copy_from_slice(&flow.id.to_be_bytes());
    buffer[offset + 4..offset + 8].copy_from_slice(&sequence.to_be_bytes());
    let len = flow.frame_len.max(crate::wire::MIN_FRAME_LEN);
    buffer[offset + 8..len].fill(0);
    len
}
