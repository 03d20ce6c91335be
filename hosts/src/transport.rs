//! Messages over go-back-N connections: the transport of a RoCE NIC's reliable connection,
//! reduced to what flow-control experiments measure.
//!
//! A connection carries messages one after another as numbered segments (one frame each).
//! The receiver accepts only the next expected segment: on a gap it sends one NAK for the
//! missing sequence number and the sender goes back to it, as an InfiniBand RC requester
//! does on a PSN sequence error NAK (InfiniBand Architecture Specification vol. 1, reliable
//! connection service); a retransmission timer
//! (local ACK timeout) covers a lost tail or a lost NAK. ACKs are cumulative and coalesced.
//! On a lossless fabric none of this triggers; on a lossy one (PFC off, PFC_wdrop) every
//! message still completes and its FCT includes the recovery, as in the CaPFC paper §IV.
//!
//! With `dctcp`, a connection's window is DCTCP's (`host::dctcp`): data goes out ECT(0), the
//! receiver acknowledges each such segment at once with the count of CE marks it carried,
//! and the sender's congestion window follows them.
//!
//! The FCT of a message runs from its arrival at the sender (the workload's start time, so
//! queueing behind earlier messages of the connection counts) to the acknowledgement of its
//! last byte, all on the sender's clock. Sequence numbers are 32-bit and do not wrap in an
//! experiment (6 TB per connection at 1422-byte segments).

use super::{
    Arrivals, Dctcp, DctcpParams, FecnReaction, FecnSource, HostNic, Pacer, RateLimiter, RateTrace, ReactionPoint,
    RpParams, RpPhase,
};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    CN_TAG_HEADER_LEN, CnTagRepr, DataFrameSpec, EthernetAddress, FecnProbeRepr, FecnSubtype, FrameView, Ipv4Addr,
    L2Repr, Pcp, TRAFFIC_HEADER_LEN, TRAFFIC_UDP_PORT, TrafficKind, TrafficRepr, VlanRepr, build_data_frame,
    build_fecn_probe_frame, ethertype,
};
use std::collections::VecDeque;
use std::time::Duration;

/// Headers in front of a segment's payload: Ethernet, 802.1Q, IPv4, UDP, traffic header.
pub const SEGMENT_OVERHEAD: usize = 14 + 4 + 20 + 8 + TRAFFIC_HEADER_LEN;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TransportConfig {
    pub mac: EthernetAddress,
    pub ip: Ipv4Addr,
    /// The NIC's speed: the slot of Bernoulli arrivals.
    pub line_rate: BitRate,
    /// Frame length of a full segment, without FCS.
    pub frame_len: usize,
    /// Segments a connection may have unacknowledged.
    pub window: u32,
    /// Retransmission timeout (local ACK timeout).
    pub rto: Duration,
    /// The receiver acknowledges every this many in-order segments, and every message's last.
    pub ack_every: u32,
    /// Width of the receiver's goodput bins, counted from `epoch`.
    pub bin: Duration,
    pub epoch: Instant,
    /// Long-lived flows send no segment from this time on (the end of the workload).
    pub long_lived_until: Instant,
    /// QCN reaction points: every connection's frames carry a CN-TAG with its id, and the
    /// CNMs for it drive its rate limiter.
    pub qcn: Option<QcnReaction>,
    /// FECN sources: every active connection probes its path, and the rate reflected probes
    /// bring back limits it. Probes addressed to this host are reflected either way.
    pub fecn: Option<FecnReaction>,
    /// DCTCP: data goes out ECT(0), acknowledgements echo the CE marks, and a congestion
    /// window within `window` follows them.
    pub dctcp: Option<DctcpParams>,
}

/// The reaction points of a host's connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
pub struct QcnReaction {
    pub params: RpParams,
    /// The rate a released limiter lets a flow send at: the NIC's.
    pub line_rate: BitRate,
}

impl TransportConfig {
    /// Defaults: MTU-sized 1500-byte frames, 128 segments in flight, the 67 ms retransmission
    /// timeout of a ConnectX NIC's default local ACK timeout (4.096 µs × 2^14), an ACK every
    /// 4 segments, 10 ms goodput bins.
    pub fn new(mac: EthernetAddress, ip: Ipv4Addr, line_rate: BitRate) -> TransportConfig {
        TransportConfig {
            mac,
            ip,
            line_rate,
            frame_len: 1500,
            window: 128,
            rto: Duration::from_micros(67_109),
            ack_every: 4,
            bin: Duration::from_millis(10),
            epoch: Instant::ZERO,
            long_lived_until: Instant::from_nanos(u64::MAX),
            qcn: None,
            fecn: None,
            dctcp: None,
        }
    }

    /// A full segment's payload: with QCN, the CN-TAG takes 4 bytes of it, so that the frame
    /// still fits the MTU.
    pub fn payload_len(&self) -> usize {
        let cn_tag = if self.qcn.is_some() { CN_TAG_HEADER_LEN } else { 0 };
        self.frame_len - SEGMENT_OVERHEAD - cn_tag
    }
}

/// One sending connection: where its messages go and on which priority.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConnectionSpec {
    /// Unique in the experiment: receivers key their state by it.
    pub id: u32,
    pub dst: EthernetAddress,
    pub dst_ip: Ipv4Addr,
    pub priority: Pcp,
    pub vid: u16,
    /// Offered rate on the wire; `None` sends as fast as the NIC, window and pauses allow.
    pub rate: Option<BitRate>,
    /// How a paced connection's frames are spaced (its mean is `rate`).
    pub arrivals: Arrivals,
    /// A long-lived flow of this connection stops here if that is before the transport's
    /// `long_lived_until` (a class with a `stop`).
    pub until: Option<Instant>,
}

/// A message to send: `size` bytes, or `None` for a long-lived flow that sends until the
/// experiment ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageSpec {
    pub id: u32,
    pub size: Option<u32>,
    pub start: Instant,
}

/// What happened to a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MessageRecord {
    pub connection: u32,
    pub spec: MessageSpec,
    /// When its last byte was acknowledged.
    pub finish: Option<Instant>,
}

impl MessageRecord {
    pub fn fct(&self) -> Option<Duration> {
        self.finish.map(|finish| finish - self.spec.start)
    }
}

/// A connection's sender-side counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub segments: u64,
    pub retransmitted: u64,
    pub naks: u64,
    pub timeouts: u64,
    pub bytes_acked: u64,
}

/// A connection's receiver-side counters and goodput over time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    pub segments: u64,
    /// In-order payload bytes.
    pub bytes: u64,
    /// Bytes of every segment frame received (without FCS), in order or not.
    pub frame_bytes: u64,
    pub first_rx: Option<Instant>,
    pub last_rx: Option<Instant>,
    pub out_of_order: u64,
    pub duplicates: u64,
    pub messages: u64,
    /// In-order payload bytes per bin of `TransportConfig::bin` since the epoch.
    pub goodput_bins: Vec<u64>,
}

#[derive(Clone, Debug)]
struct Message {
    spec: MessageSpec,
    /// The connection's sequence number of its first segment, once it is being sent.
    first_seq: Option<u32>,
    finish: Option<Instant>,
}

impl Message {
    fn segments(&self, payload: usize) -> u32 {
        self.spec.size.map_or(u32::MAX, |size| (size as usize).div_ceil(payload).max(1) as u32)
    }

    fn end_seq(&self, payload: usize) -> Option<u32> {
        self.first_seq.map(|first| first.saturating_add(self.segments(payload)))
    }
}

#[derive(Clone, Debug)]
struct Connection {
    spec: ConnectionSpec,
    pacer: Option<Pacer>,
    /// In start order.
    messages: Vec<Message>,
    /// Messages before this index are acknowledged.
    first_unacked: usize,
    /// Messages before this index have a first sequence number.
    assigned: usize,
    base: u32,
    next: u32,
    /// Highest sequence number ever sent, plus one: below it, a send is a retransmission.
    sent_through: u32,
    rto_deadline: Option<Instant>,
    stats: SenderStats,
    /// QCN: the reaction point and the rate limiter it sets.
    qcn: Option<QcnLimiter>,
    /// FECN: the probes and the rate limiter they set.
    fecn: Option<FecnSource>,
    /// DCTCP: the congestion window.
    dctcp: Option<Dctcp>,
}

/// A connection's QCN reaction point and the rate limiter it sets.
#[derive(Clone, Debug)]
struct QcnLimiter {
    rp: ReactionPoint,
    limiter: RateLimiter,
}

impl QcnLimiter {
    fn new(qcn: QcnReaction, config: &TransportConfig) -> QcnLimiter {
        QcnLimiter {
            rp: ReactionPoint::new(qcn.params, qcn.line_rate),
            limiter: RateLimiter::new(qcn.line_rate, config.epoch, config.bin),
        }
    }

    /// Sets the limit to the reaction point's rate.
    fn follow_rate(&mut self, now: Instant) {
        self.limiter.set_rate(now, self.rp.rate());
    }
}

impl Connection {
    /// When the QCN and FECN rate limiters let the next frame go (now, while released).
    fn limited_until(&self) -> Instant {
        let qcn = match &self.qcn {
            Some(qcn) if qcn.rp.phase() != RpPhase::Idle => qcn.limiter.ready_at(),
            _ => Instant::ZERO,
        };
        qcn.max(self.fecn.as_ref().map_or(Instant::ZERO, FecnSource::ready_at))
    }

    /// When its FECN source sends the next probe: while a started message is unfinished,
    /// and a long-lived one only until it stops.
    fn probe_at(&self, payload: usize, until: Instant) -> Option<Instant> {
        let source = self.fecn.as_ref()?;
        let message = self.messages.get(self.first_unacked)?;
        let at = source.next_probe_at().max(message.spec.start);
        (message.spec.size.is_some() || (at < self.until(until) && self.sends_long_lived(payload))).then_some(at)
    }

    /// When its long-lived flow stops, given the transport's `long_lived_until`.
    fn until(&self, long_lived_until: Instant) -> Instant {
        self.spec.until.map_or(long_lived_until, |until| until.min(long_lived_until))
    }

    fn end_of_assigned(&self, payload: usize) -> u32 {
        self.assigned.checked_sub(1).and_then(|last| self.messages[last].end_seq(payload)).unwrap_or(0)
    }

    /// The message that segment `seq` belongs to, and the segment's offset in it.
    fn locate(&self, seq: u32, payload: usize) -> (usize, u32) {
        let index = self.messages[..self.assigned].partition_point(|m| m.first_seq.is_some_and(|f| f <= seq)) - 1;
        let first = self.messages[index].first_seq.expect("assigned");
        // Offsets of an unbounded message wrap; only sized messages (< 4 GiB) use them.
        (index, ((seq - first) as usize * payload) as u32)
    }

    /// When the connection may send its next segment, at `not_before` or later: never while
    /// `window` segments are unacknowledged, and never a long-lived flow's segment at or after
    /// `until` (the end of the workload).
    fn send_at(&self, payload: usize, window: u32, until: Instant, not_before: Instant) -> Option<Instant> {
        let window = self.dctcp.as_ref().map_or(window, |dctcp| dctcp.window().min(window));
        if self.next - self.base >= window {
            return None;
        }
        let pacer = self.pacer.as_ref().map_or(Instant::ZERO, Pacer::ready_at).max(self.limited_until());
        let at = if self.next < self.end_of_assigned(payload) {
            pacer
        } else {
            self.messages.get(self.assigned)?.spec.start.max(pacer)
        };
        let at = at.max(not_before);
        (at < until || !self.sends_long_lived(payload)).then_some(at)
    }

    /// Whether the segment at `next` belongs (or would belong) to a long-lived flow.
    fn sends_long_lived(&self, payload: usize) -> bool {
        let index = if self.next < self.end_of_assigned(payload) { self.assigned - 1 } else { self.assigned };
        self.messages.get(index).is_some_and(|m| m.spec.size.is_none())
    }

    /// An ACK or NAK up to `ack`; `marked`: of the segments it newly covers, those that
    /// arrived CE (DCTCP's echo).
    fn acknowledge(&mut self, now: Instant, ack: u32, marked: u32, payload: usize, rto: Duration) {
        if ack <= self.base {
            return;
        }
        let ack = ack.min(self.sent_through);
        if let Some(dctcp) = &mut self.dctcp {
            dctcp.on_ack(ack - self.base, marked, ack, self.next.max(ack));
        }
        self.stats.bytes_acked += u64::from(ack - self.base) * payload as u64;
        self.base = ack;
        self.next = self.next.max(ack);
        while let Some(message) = self.messages.get_mut(self.first_unacked)
            && message.end_seq(payload).is_some_and(|end| end <= ack)
        {
            message.finish = Some(now);
            self.first_unacked += 1;
        }
        self.rto_deadline = (self.base < self.next).then_some(now + rto);
    }
}

#[derive(Clone, Debug)]
struct Inbound {
    src: EthernetAddress,
    src_ip: Ipv4Addr,
    vlan: Option<VlanRepr>,
    expected: u32,
    /// The sequence number a NAK was last sent for: one NAK per gap.
    nak_sent_for: Option<u32>,
    since_ack: u32,
    /// In-order segments that arrived CE since the last acknowledgement (DCTCP's echo).
    marked_since_ack: u32,
    pending: Option<TrafficKind>,
    stats: ReceiverStats,
}

/// A host's transport: sending connections and receiving state per peer connection. It sends
/// through the host's [`HostNic`] (line rate, PFC obedience), which the caller owns and
/// hands in, so that other senders on the host share the same wire.
#[derive(Clone, Debug)]
pub struct Transport {
    config: TransportConfig,
    connections: Vec<Connection>,
    next_connection: usize,
    /// Receiver state by connection id (dense: the runner numbers connections from 0).
    inbound: Vec<Option<Inbound>>,
    /// Connection ids with an ACK or NAK to send, in order.
    control: VecDeque<u32>,
    /// FECN probes to send back to their sources, in order (at most [`MAX_REFLECTIONS`]).
    reflections: VecDeque<Reflection>,
    /// Probes not reflected because that queue was full.
    reflections_dropped: u64,
}

/// A probe this host reflects: back to its source, on its VLAN and priority.
#[derive(Clone, Copy, Debug)]
struct Reflection {
    dst: EthernetAddress,
    vlan: Option<VlanRepr>,
    probe: FecnProbeRepr,
}

impl Reflection {
    fn priority(&self) -> Pcp {
        self.vlan.map_or(Pcp::default(), |v| v.pcp)
    }
}

/// Reflections a host queues at most: probes come once per flow and interval, so more
/// waiting means the host cannot send, and older ones carry stale rates anyway.
const MAX_REFLECTIONS: usize = 64;

impl Transport {
    pub fn new(config: TransportConfig) -> Transport {
        assert!(config.frame_len > SEGMENT_OVERHEAD + CN_TAG_HEADER_LEN, "segments carry payload");
        Transport {
            config,
            connections: Vec::new(),
            next_connection: 0,
            inbound: Vec::new(),
            control: VecDeque::new(),
            reflections: VecDeque::with_capacity(MAX_REFLECTIONS),
            reflections_dropped: 0,
        }
    }

    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// Adds a connection with its messages (sent in start order).
    pub fn add_connection(&mut self, spec: ConnectionSpec, mut messages: Vec<MessageSpec>) {
        messages.sort_by_key(|m| (m.start, m.id));
        self.connections.push(Connection {
            spec,
            pacer: spec.rate.map(|rate| self.pacer(rate, spec.arrivals, self.frame_time(rate))),
            messages: messages.into_iter().map(|spec| Message { spec, first_seq: None, finish: None }).collect(),
            first_unacked: 0,
            assigned: 0,
            base: 0,
            next: 0,
            sent_through: 0,
            rto_deadline: None,
            stats: SenderStats::default(),
            qcn: self.config.qcn.map(|q| QcnLimiter::new(q, &self.config)),
            fecn: self.config.fecn.map(|f| FecnSource::new(f, self.config.epoch, self.config.bin)),
            dctcp: self.config.dctcp.map(|params| Dctcp::new(params, self.config.window)),
        });
    }

    /// Lets pacers and the QCN and FECN rate limiters send up to `burst` early after a late
    /// wake-up (userspace timer jitter), so that a late timer does not cost a flow its rate.
    pub fn set_pacer_burst(&mut self, burst: Duration) {
        for i in 0..self.connections.len() {
            let spec = self.connections[i].spec;
            if let Some(rate) = spec.rate {
                self.connections[i].pacer = Some(self.pacer(rate, spec.arrivals, burst.max(self.frame_time(rate))));
            }
            let connection = &mut self.connections[i];
            if let Some(qcn) = &mut connection.qcn {
                qcn.limiter.set_burst(burst);
            }
            if let Some(source) = &mut connection.fecn {
                source.set_burst(burst);
            }
        }
    }

    fn pacer(&self, rate: BitRate, arrivals: Arrivals, credit: Duration) -> Pacer {
        Pacer::new(rate, arrivals, self.config.line_rate, credit)
    }

    /// A full segment's time at `rate`: the least credit a pacer keeps, as a NIC's token
    /// bucket holds at least one frame, so that waiting behind another connection's frame on
    /// the same wire does not cost a paced flow its rate.
    fn frame_time(&self, rate: BitRate) -> Duration {
        rate.bits_duration(self.config.frame_len as u64 * 8)
    }

    /// Whether every sized message is acknowledged (long-lived flows never are).
    pub fn is_done(&self) -> bool {
        self.connections.iter().flat_map(|c| &c.messages).all(|m| m.spec.size.is_none() || m.finish.is_some())
    }

    pub fn messages(&self) -> impl Iterator<Item = MessageRecord> + '_ {
        self.connections.iter().flat_map(|c| {
            c.messages.iter().map(|m| MessageRecord { connection: c.spec.id, spec: m.spec, finish: m.finish })
        })
    }

    pub fn sender_stats(&self) -> impl Iterator<Item = (ConnectionSpec, SenderStats)> + '_ {
        self.connections.iter().map(|c| (c.spec, c.stats))
    }

    /// Receiver state per connection id that sent here.
    pub fn receiver_stats(&self) -> impl Iterator<Item = (u32, &ReceiverStats)> + '_ {
        self.inbound.iter().enumerate().filter_map(|(id, inbound)| inbound.as_ref().map(|i| (id as u32, &i.stats)))
    }

    /// Consumes a received data, ACK or NAK frame (the NIC takes PAUSE/PFC first). Returns
    /// whether it was ours: foreign and malformed frames are for the caller to count.
    pub fn handle_rx(&mut self, now: Instant, frame: &[u8]) -> bool {
        let Ok(view) = FrameView::parse(frame) else { return false };
        if view.l2.dst != self.config.mac {
            return false;
        }
        if let Ok(cnm) = view.cnm() {
            return self.receive_cnm(now, view.l2.cn_tag.map(|t| t.flow_id), cnm.quantized_feedback);
        }
        if let Ok(probe) = view.fecn_probe() {
            return self.receive_probe(now, &view, probe);
        }
        let Ok((ip, _, traffic)) = view.traffic() else { return false };
        match traffic.kind {
            TrafficKind::Data => self.receive_segment(now, &view, frame.len(), (ip.src, ip.ecn), &traffic),
            TrafficKind::Ack | TrafficKind::Nak => self.receive_acknowledgement(now, &traffic),
        }
        true
    }

    fn receive_segment(
        &mut self,
        now: Instant,
        view: &FrameView<'_>,
        frame_len: usize,
        (src_ip, ecn): (Ipv4Addr, u8),
        traffic: &TrafficRepr,
    ) {
        let id = traffic.flow_id as usize;
        if id >= self.inbound.len() {
            self.inbound.resize(id + 1, None);
        }
        let inbound = self.inbound[id].get_or_insert_with(|| Inbound {
            src: view.l2.src,
            src_ip,
            vlan: view.l2.vlan,
            expected: 0,
            nak_sent_for: None,
            since_ack: 0,
            marked_since_ack: 0,
            pending: None,
            stats: ReceiverStats::default(),
        });
        inbound.stats.segments += 1;
        inbound.stats.frame_bytes += frame_len as u64;
        inbound.stats.first_rx.get_or_insert(now);
        inbound.stats.last_rx = Some(now);
        let response = if traffic.sequence == inbound.expected {
            let unbounded = traffic.message_len == u32::MAX;
            let remaining = traffic.message_len.wrapping_sub(traffic.offset) as usize;
            let payload = if unbounded { self.config.payload_len() } else { remaining.min(self.config.payload_len()) };
            inbound.expected += 1;
            inbound.nak_sent_for = None;
            inbound.since_ack += 1;
            inbound.marked_since_ack += u32::from(ecn == 3);
            inbound.stats.bytes += payload as u64;
            let bin = ((now - self.config.epoch).as_nanos() / self.config.bin.as_nanos().max(1)) as usize;
            if bin >= inbound.stats.goodput_bins.len() {
                inbound.stats.goodput_bins.resize(bin + 1, 0);
            }
            inbound.stats.goodput_bins[bin] += payload as u64;
            let last_of_message = !unbounded && traffic.offset as usize + payload == traffic.message_len as usize;
            inbound.stats.messages += u64::from(last_of_message);
            // A DCTCP sender's (ECN-capable) segments are acknowledged at once: its window may
            // fall below `ack_every`, and with no delayed-ACK timer it would then stall.
            let ecn_capable = ecn != 0;
            (last_of_message || ecn_capable || inbound.since_ack >= self.config.ack_every).then_some(TrafficKind::Ack)
        } else if traffic.sequence > inbound.expected {
            inbound.stats.out_of_order += 1;
            (inbound.nak_sent_for != Some(inbound.expected)).then(|| {
                inbound.nak_sent_for = Some(inbound.expected);
                TrafficKind::Nak
            })
        } else {
            // The sender went back further than needed (its ACK was lost): tell it where we are.
            inbound.stats.duplicates += 1;
            Some(TrafficKind::Ack)
        };
        if let Some(kind) = response {
            inbound.since_ack = 0;
            // A NAK outranks an ACK waiting in the same slot: both carry `expected`.
            let was_idle = inbound.pending.is_none();
            if inbound.pending != Some(TrafficKind::Nak) {
                inbound.pending = Some(kind);
            }
            if was_idle {
                self.control.push_back(traffic.flow_id);
            }
        }
    }

    /// A CNM for the connection its CN-TAG names feeds that connection's reaction point.
    /// Without QCN, or for a flow this host does not send, it is not ours.
    fn receive_cnm(&mut self, now: Instant, flow: Option<u16>, quantized: u8) -> bool {
        let Some(connection) = self.connections.iter_mut().find(|c| Some(c.spec.id) == flow.map(u32::from)) else {
            return false;
        };
        let Some(qcn) = &mut connection.qcn else { return false };
        qcn.rp.on_cnm(now, quantized);
        qcn.limiter.trace_mut().cnm_received(now);
        qcn.follow_rate(now);
        true
    }

    /// A probe for this host: reflect it to its source; a reflected probe of one of our
    /// flows: its rate becomes the flow's.
    fn receive_probe(&mut self, now: Instant, view: &FrameView<'_>, probe: FecnProbeRepr) -> bool {
        match probe.subtype {
            FecnSubtype::Probe => {
                if self.reflections.len() == MAX_REFLECTIONS {
                    self.reflections_dropped += 1;
                } else {
                    let probe = FecnProbeRepr { subtype: FecnSubtype::Reflected, ..probe };
                    self.reflections.push_back(Reflection { dst: view.l2.src, vlan: view.l2.vlan, probe });
                }
                true
            }
            FecnSubtype::Reflected => {
                let flow = u32::from(probe.flow_id);
                let Some(source) =
                    self.connections.iter_mut().find(|c| c.spec.id == flow).and_then(|c| c.fecn.as_mut())
                else {
                    return false;
                };
                source.on_reflected(now, &probe);
                true
            }
        }
    }

    /// Each connection's FECN source, if FECN is on.
    pub fn fecn_sources(&self) -> impl Iterator<Item = (u32, &FecnSource)> + '_ {
        self.connections.iter().filter_map(|c| c.fecn.as_ref().map(|f| (c.spec.id, f)))
    }

    /// Probes this host could not reflect (its reflection queue was full).
    pub fn reflections_dropped(&self) -> u64 {
        self.reflections_dropped
    }

    /// The first reflection whose priority may go, back to its source.
    fn next_reflection(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        let position = self.reflections.iter().position(|r| nic.can_send_to(now, r.priority(), r.dst))?;
        let reflection = self.reflections.remove(position).expect("found");
        Some(self.probe_frame(buffer, reflection.dst, reflection.vlan, &reflection.probe))
    }

    /// The probe of the first connection due one, on the connection's priority and VLAN.
    fn next_probe(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        let (payload, until) = (self.config.payload_len(), self.config.long_lived_until);
        let connection = self.connections.iter_mut().find(|c| {
            c.probe_at(payload, until).is_some_and(|at| at <= now) && nic.can_send_to(now, c.spec.priority, c.spec.dst)
        })?;
        let spec = connection.spec;
        let probe = connection.fecn.as_mut().expect("probing").probe(now, spec.id as u16);
        let vlan = Some(VlanRepr { pcp: spec.priority, dei: false, vid: spec.vid });
        Some(self.probe_frame(buffer, spec.dst, vlan, &probe))
    }

    fn probe_frame(
        &self,
        buffer: &mut [u8],
        dst: EthernetAddress,
        vlan: Option<VlanRepr>,
        probe: &FecnProbeRepr,
    ) -> usize {
        let l2 = L2Repr { dst, src: self.config.mac, vlan, cn_tag: None, ethertype: ethertype::LOCAL_EXPERIMENTAL_1 };
        build_fecn_probe_frame(buffer, &l2, probe)
    }

    /// Each connection's QCN reaction point and its rate over time, if QCN is on.
    pub fn reaction_points(&self) -> impl Iterator<Item = (u32, &ReactionPoint, &RateTrace)> + '_ {
        self.connections.iter().filter_map(|c| c.qcn.as_ref().map(|q| (c.spec.id, &q.rp, q.limiter.trace())))
    }

    fn receive_acknowledgement(&mut self, now: Instant, traffic: &TrafficRepr) {
        let payload = self.config.payload_len();
        let rto = self.config.rto;
        let Some(connection) = self.connections.iter_mut().find(|c| c.spec.id == traffic.flow_id) else { return };
        connection.acknowledge(now, traffic.sequence, traffic.offset, payload, rto);
        if traffic.kind == TrafficKind::Nak && traffic.sequence < connection.next {
            connection.stats.naks += 1;
            connection.next = traffic.sequence.max(connection.base);
            if let Some(dctcp) = &mut connection.dctcp {
                dctcp.on_nak();
            }
        }
    }

    /// Writes the next frame to send at `now` into `buffer` (at least `frame_len` bytes) and
    /// returns its length: an ACK or NAK first, then data from the connections in turn.
    pub fn poll_transmit(&mut self, now: Instant, nic: &mut HostNic, buffer: &mut [u8]) -> Option<usize> {
        let len = (self.next_control(now, nic, buffer))
            .or_else(|| self.next_reflection(now, nic, buffer))
            .or_else(|| self.next_probe(now, nic, buffer))
            .or_else(|| self.next_segment(now, nic, buffer))?;
        nic.sent(now, len);
        Some(len)
    }

    fn next_control(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        // The first ACK or NAK whose priority is not paused: a paused priority's ACKs must not
        // hold up another's (a NIC keeps them per priority).
        let position = self
            .control
            .iter()
            .position(|&id| nic.can_send_to(now, self.control_priority(id), self.control_dst(id)))?;
        let id = self.control.remove(position).expect("found");
        let inbound = self.inbound[id as usize].as_mut().expect("queued by its receiver");
        let kind = inbound.pending.take().expect("queued with a pending kind");
        let marked = std::mem::take(&mut inbound.marked_since_ack);
        let mut spec = DataFrameSpec::between(self.config.mac, inbound.src, inbound.vlan, 0);
        spec.src_ip = self.config.ip;
        spec.dst_ip = inbound.src_ip;
        spec.traffic = TrafficRepr {
            kind,
            flow_id: id,
            sequence: inbound.expected,
            message_id: 0,
            message_len: 0,
            // DCTCP's echo: how many of the segments this acknowledges arrived CE.
            offset: marked,
            timestamp_ns: now.as_nanos(),
        };
        Some(build_data_frame(buffer, &spec))
    }

    /// Where connection `id`'s ACKs and NAKs go: its sender.
    fn control_dst(&self, id: u32) -> EthernetAddress {
        self.inbound[id as usize].as_ref().expect("queued by its receiver").src
    }

    /// The priority of connection `id`'s ACKs and NAKs: its data's.
    fn control_priority(&self, id: u32) -> Pcp {
        let inbound = self.inbound[id as usize].as_ref().expect("queued by its receiver");
        inbound.vlan.map_or(Pcp::default(), |v| v.pcp)
    }

    fn next_segment(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        let (payload, window, until) = (self.config.payload_len(), self.config.window, self.config.long_lived_until);
        let n = self.connections.len();
        let chosen = (0..n).map(|i| (self.next_connection + i) % n).find(|&i| {
            let c = &self.connections[i];
            c.send_at(payload, window, c.until(until), now) == Some(now)
                && nic.can_send_to(now, c.spec.priority, c.spec.dst)
        })?;
        self.next_connection = (chosen + 1) % n;
        let connection = &mut self.connections[chosen];
        if connection.next == connection.end_of_assigned(payload) {
            let seq = connection.next;
            connection.messages[connection.assigned].first_seq = Some(seq);
            connection.assigned += 1;
        }
        let seq = connection.next;
        let (index, offset) = connection.locate(seq, payload);
        let message = &connection.messages[index].spec;
        // A long-lived flow's message is unbounded (length u32::MAX): full segments forever.
        let message_len = message.size.unwrap_or(u32::MAX);
        let segment_payload = message.size.map_or(payload, |size| (size - offset).min(payload as u32) as usize);
        let cn_tag = connection.qcn.is_some().then_some(CnTagRepr { flow_id: connection.spec.id as u16 });
        let spec = DataFrameSpec {
            src_mac: self.config.mac,
            dst_mac: connection.spec.dst,
            vlan: Some(VlanRepr { pcp: connection.spec.priority, dei: false, vid: connection.spec.vid }),
            cn_tag,
            src_ip: self.config.ip,
            dst_ip: connection.spec.dst_ip,
            dscp: 0,
            ecn: if connection.dctcp.is_some() { 2 } else { 0 },
            src_port: TRAFFIC_UDP_PORT,
            dst_port: TRAFFIC_UDP_PORT,
            traffic: TrafficRepr {
                kind: TrafficKind::Data,
                flow_id: connection.spec.id,
                sequence: seq,
                message_id: message.id,
                message_len,
                offset,
                timestamp_ns: now.as_nanos(),
            },
            frame_len: SEGMENT_OVERHEAD + segment_payload + if cn_tag.is_some() { CN_TAG_HEADER_LEN } else { 0 },
        };
        let len = build_data_frame(buffer, &spec);
        connection.stats.segments += 1;
        connection.stats.retransmitted += u64::from(seq < connection.sent_through);
        connection.next += 1;
        connection.sent_through = connection.sent_through.max(connection.next);
        connection.rto_deadline.get_or_insert(now + self.config.rto);
        if let Some(pacer) = &mut connection.pacer {
            pacer.send(now, len);
        }
        if let Some(qcn) = &mut connection.qcn {
            if qcn.rp.phase() != RpPhase::Idle {
                qcn.limiter.send(now, len);
            }
            qcn.rp.on_sent(len as u64);
            qcn.follow_rate(now);
        }
        if let Some(source) = &mut connection.fecn {
            source.sent(now, len);
        }
        Some(len)
    }

    /// When this transport next needs `poll_transmit` or `handle_timeout`, if ever. A
    /// connection with a full window waits for an ACK, not a time.
    pub fn poll_timeout(&self, nic: &HostNic) -> Option<Instant> {
        let (payload, window, until) = (self.config.payload_len(), self.config.window, self.config.long_lived_until);
        let control =
            self.control.iter().map(|&id| nic.ready_at_to(self.control_priority(id), self.control_dst(id))).min();
        let segments = (self.connections.iter())
            .filter_map(|c| c.send_at(payload, window, c.until(until), nic.ready_at_to(c.spec.priority, c.spec.dst)));
        let timers = self.connections.iter().filter_map(|c| c.rto_deadline);
        let rate_timers = self.connections.iter().filter_map(|c| c.qcn.as_ref()?.rp.poll_timeout());
        let reflections = self.reflections.iter().map(|r| nic.ready_at_to(r.priority(), r.dst)).min();
        let probes = (self.connections.iter())
            .filter_map(|c| Some(c.probe_at(payload, until)?.max(nic.ready_at_to(c.spec.priority, c.spec.dst))));
        (control.into_iter().chain(reflections).chain(segments).chain(timers).chain(rate_timers).chain(probes)).min()
    }

    /// Fires retransmission timers: a connection with unacknowledged segments goes back.
    pub fn handle_timeout(&mut self, now: Instant) {
        for connection in &mut self.connections {
            if let Some(qcn) = &mut connection.qcn {
                qcn.rp.handle_timeout(now);
                qcn.follow_rate(now);
            }
            if connection.rto_deadline.is_some_and(|at| at <= now) {
                connection.rto_deadline = None;
                if connection.base < connection.next {
                    connection.stats.timeouts += 1;
                    connection.next = connection.base;
                    if let Some(dctcp) = &mut connection.dctcp {
                        dctcp.on_timeout();
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (mut a, mut a_nic) = transport(A);
        let (mut b, mut b_nic) = transport(B);
        a.add_connection(connection(0), messages);
        let mut now = Instant::ZERO;
        let mut buffer = [0u8; 2048];
        for _ in 0..1_000_000 {
            while let Some(len) = a.poll_transmit(now, &mut a_nic, &mut buffer) {
                let traffic = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
                if !drop(traffic) {
                    assert!(b.handle_rx(now, &buffer[..len]));
                }
            }
            while let Some(len) = b.poll_transmit(now, &mut b_nic, &mut buffer) {
                let traffic = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
                if !drop(traffic) {
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
        a.add_connection(connection(0), vec![MessageSpec { id: 0, size: None, start: Instant::ZERO }]);
        let mut buffer = [0u8; 2048];
        let len = a.poll_transmit(Instant::ZERO, &mut a_nic, &mut buffer).unwrap();
        assert_eq!(len, 1500);
        let header = FrameView::parse(&buffer[..len]).unwrap().traffic().unwrap().2;
        assert_eq!((header.message_len, header.offset), (u32::MAX, 0));
        // At the end of the workload it stops, while its sized messages would go on.
        a.config.long_lived_until = Instant::from_nanos(1_000_000);
        let end = Instant::from_nanos(1_000_000);
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
        assert_eq!(a.config.payload_len(), 1500 - SEGMENT_OVERHEAD - CN_TAG_HEADER_LEN);
    }

    #[test]
    fn a_connection_with_its_own_end_stops_its_long_lived_flow_there() {
        let (mut a, mut a_nic) = transport(A);
        let stop = Instant::from_nanos(500_000);
        let spec = ConnectionSpec { until: Some(stop), ..connection(0) };
        a.add_connection(spec, vec![MessageSpec { id: 0, size: None, start: Instant::ZERO }]);
        a.config.long_lived_until = Instant::from_nanos(1_000_000);
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
        assert_eq!(
            (view.l2.dst, view.l2.src, view.l2.vlan),
            (A, B, vlan),
            "back to its source on its VLAN and priority"
        );
        let reflected = view.fecn_probe().unwrap();
        assert_eq!(reflected, FecnProbeRepr { subtype: FecnSubtype::Reflected, ..probe }, "every field as it arrived");
    }
}
