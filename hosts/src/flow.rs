//! Traffic flows as hosts send and receive them: fixed-size frames on one priority, paced
//! at line rate or a set rate, sequence-numbered so a receiver counts loss and reordering.
//! The simulator's hosts and `pfcswitch traffic` both use these.

use pfcswitch_link::shaper::Shaper;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, FrameView, Framing, Ipv4Addr, L2Repr, Pcp, TRAFFIC_UDP_PORT, TrafficKind,
    TrafficRepr, VlanRepr, build_data_frame,
};
use std::time::Duration;

/// EtherType of minimum-size test frames (IEEE local experimental 2): flow id and sequence
/// right after the tag, for frames too small for IPv4 + UDP + traffic header (78 B).
pub const MINIMAL_FRAME_ETHERTYPE: u16 = 0x88B6;

/// A flow: fixed-size frames on one priority, at line rate or a set rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowSpec {
    pub id: u32,
    pub dst: EthernetAddress,
    pub dst_ip: Ipv4Addr,
    pub priority: Pcp,
    /// VLAN id of the 802.1Q tag that carries the priority.
    pub vid: u16,
    /// Frame length without FCS.
    pub frame_len: usize,
    /// Frames to send; `u64::MAX` for a flow that never ends.
    pub frames: u64,
    pub start: Instant,
    /// Offered rate (on the wire); `None` sends as fast as the NIC and pauses allow.
    pub rate: Option<BitRate>,
}

/// The sending side of a flow.
#[derive(Clone, Debug)]
pub struct FlowSender {
    pub spec: FlowSpec,
    sent: u64,
    pacer: Option<Shaper>,
}

impl FlowSender {
    pub fn new(spec: FlowSpec) -> FlowSender {
        FlowSender { spec, sent: 0, pacer: spec.rate.map(|rate| Shaper::new(rate, Duration::ZERO)) }
    }

    /// Lets the pacer send up to `burst` early after a late wake-up (a userspace sender's
    /// timer jitter), keeping the flow's long-run rate exact.
    pub fn set_burst(&mut self, burst: Duration) {
        if let Some(rate) = self.spec.rate {
            self.pacer = Some(Shaper::new(rate, burst));
        }
    }

    pub fn sent(&self) -> u64 {
        self.sent
    }

    pub fn is_done(&self) -> bool {
        self.sent >= self.spec.frames
    }

    /// When the flow may send its next frame (its start, or its pacer).
    pub fn ready_at(&self) -> Instant {
        self.spec.start.max(self.pacer.as_ref().map_or(Instant::ZERO, Shaper::ready_at))
    }

    /// Writes the next frame into `buffer`, books it, and returns its length: an IPv4/UDP
    /// traffic frame, or the minimal format when the flow's frames are too short for one.
    pub fn next_frame(&mut self, now: Instant, src: EthernetAddress, src_ip: Ipv4Addr, buffer: &mut [u8]) -> usize {
        let spec = &self.spec;
        let vlan = Some(VlanRepr { pcp: spec.priority, dei: false, vid: spec.vid });
        let data = DataFrameSpec {
            src_mac: src,
            dst_mac: spec.dst,
            vlan,
            cn_tag: None,
            src_ip,
            dst_ip: spec.dst_ip,
            dscp: 0,
            ecn: 0,
            src_port: TRAFFIC_UDP_PORT,
            dst_port: TRAFFIC_UDP_PORT,
            traffic: TrafficRepr {
                kind: TrafficKind::Data,
                flow_id: spec.id,
                sequence: self.sent as u32,
                message_id: 0,
                message_len: 0,
                offset: 0,
                timestamp_ns: now.as_nanos(),
                ack_req: false,
            },
            frame_len: spec.frame_len,
            framing: Framing::Traffic,
        };
        let len = if spec.frame_len >= data.min_len() {
            build_data_frame(buffer, &data)
        } else {
            let l2 = L2Repr { dst: spec.dst, src, vlan, cn_tag: None, ethertype: MINIMAL_FRAME_ETHERTYPE };
            let offset = l2.emit(buffer);
            buffer[offset..offset + 4].copy_from_slice(&spec.id.to_be_bytes());
            buffer[offset + 4..offset + 8].copy_from_slice(&(self.sent as u32).to_be_bytes());
            let len = spec.frame_len.max(pfcswitch_wire::MIN_FRAME_LEN);
            buffer[offset + 8..len].fill(0);
            len
        };
        self.sent += 1;
        if let Some(pacer) = &mut self.pacer {
            pacer.send(now, len);
        }
        len
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

    /// The highest sequence number seen plus one.
    pub fn next_sequence(&self) -> u32 {
        self.next_sequence
    }
}

/// The receiving side of every flow addressed to one host.
#[derive(Clone, Debug, Default)]
pub struct FlowReceiver {
    /// Flow id → what arrived (flow ids are small: a dense table).
    flows: crate::flow_map::FlowMap<FlowStats>,
}

impl FlowReceiver {
    /// Counts `view` if it is a flow frame; returns whether it was.
    pub fn handle(&mut self, now: Instant, view: &FrameView<'_>, len: usize) -> bool {
        let (flow_id, sequence) = match view.traffic() {
            Ok((_, _, traffic)) if traffic.kind == TrafficKind::Data => (traffic.flow_id, traffic.sequence),
            Err(_) if view.l2.ethertype == MINIMAL_FRAME_ETHERTYPE && view.payload.len() >= 8 => {
                let word = |at: usize| u32::from_be_bytes(view.payload[at..at + 4].try_into().expect("8 bytes"));
                (word(0), word(4))
            }
            _ => return false,
        };
        self.flows.get_or_insert_with(flow_id, FlowStats::default).record(now, sequence, len);
        true
    }

    pub fn stats(&self, id: u32) -> FlowStats {
        self.flows.get(id).copied().unwrap_or_default()
    }

    /// Every flow seen, by id.
    pub fn flows(&self) -> impl Iterator<Item = (u32, FlowStats)> + '_ {
        self.flows.iter().map(|(id, &stats)| (id, stats))
    }
}
