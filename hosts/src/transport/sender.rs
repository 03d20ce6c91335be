//! The sending side of a connection: its messages and their sequence numbers, the go-back-N
//! window (DCTCP's, HPCC's, TIMELY+w's or Swift's when on), pacing and the rate limits, data
//! segment frames, the RTT samples of its ACKs (`rtt`), and what ACKs, NAKs and the
//! retransmission timer do to it. Which connection sends next is
//! the transport's choice (`mod.rs`).

use super::config::TransportConfig;
use super::glance::Glance;
use super::reactions::{ReactionLimiter, SwiftWindow};
use super::records::{ConnectionSpec, MessageRecord, MessageSpec, SenderStats};
use super::rtt::SendTimes;
use crate::{Dctcp, DctcpModel, FecnSource, HopRecord, Pacer};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{
    CnTagRepr, DataFrameSpec, IntInstructions, IntRepr, TRAFFIC_UDP_PORT, TrafficKind, TrafficRepr, VlanRepr,
    build_data_frame, insert_int,
};
use std::time::Duration;

/// A message of a connection, as its sender tracks it.
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

/// One sending connection's state.
#[derive(Clone, Debug)]
pub(super) struct Connection {
    pub(super) spec: ConnectionSpec,
    pub(super) pacer: Option<Pacer>,
    /// In start order.
    messages: Vec<Message>,
    /// Messages before this index are acknowledged.
    first_unacked: usize,
    /// Messages before this index have a first sequence number.
    assigned: usize,
    /// One past the last segment of the messages before `assigned` (0 before the first):
    /// kept here, as the glance (`glance`) needs it after every change and reading it from
    /// `messages` cost a cache miss each time (HPCC's fat-tree, docs/performance.md).
    assigned_end: u32,
    /// The start of message `assigned`, if there is one (the same reason).
    next_start: Option<Instant>,
    base: u32,
    next: u32,
    /// Highest sequence number ever sent, plus one: below it, a send is a retransmission.
    sent_through: u32,
    pub(super) rto_deadline: Option<Instant>,
    pub(super) stats: SenderStats,
    /// The congestion control's reaction point and the rate limiter it sets. Boxed, and
    /// held only while it can act: one that lives with its messages (HPCC's, TIMELY's, HPCC's
    /// model of DCQCN) is made when the first message starts ([`Connection::start`]), and
    /// HPCC's, which no report reads, goes when the connection retires. With 100 ms of flows
    /// HPCC's fat-tree holds 1.66 million connections, of which a few thousand are live.
    pub(super) reaction: Option<Box<ReactionLimiter>>,
    /// FECN: the probes and the rate limiter they set. Boxed, as is Swift's window: what a
    /// connection without them holds is a pointer, not their 240 and 224 bytes (HPCC's
    /// fabric holds 1.66 million connections for 100 ms of flows).
    pub(super) fecn: Option<Box<FecnSource>>,
    /// DCTCP: the congestion window.
    dctcp: Option<Dctcp>,
    /// Swift: the congestion window and its pacing.
    pub(super) swift: Option<Box<SwiftWindow>>,
    /// When each in-flight segment left: the RTT samples.
    send_times: SendTimes,
}

impl Connection {
    /// A connection that sends `messages` in start order, paced by `pacer` if it has a rate.
    pub(super) fn new(
        spec: ConnectionSpec,
        mut messages: Vec<MessageSpec>,
        pacer: Option<Pacer>,
        config: &TransportConfig,
    ) -> Connection {
        messages.sort_by_key(|m| (m.start, m.id));
        // A reaction made at the start starts as one made now: it reads no clock.
        let reaction = ReactionLimiter::new(config).filter(|r| messages.is_empty() || !r.rp.lives_with_its_messages());
        Connection {
            spec,
            pacer,
            next_start: messages.first().map(|m| m.start),
            messages: messages.into_iter().map(|spec| Message { spec, first_seq: None, finish: None }).collect(),
            first_unacked: 0,
            assigned: 0,
            assigned_end: 0,
            base: 0,
            next: 0,
            sent_through: 0,
            rto_deadline: None,
            stats: SenderStats::default(),
            reaction: reaction.map(Box::new),
            fecn: config.fecn.map(|f| Box::new(FecnSource::new(f, config.epoch, config.bin))),
            dctcp: config.dctcp.filter(|p| p.model == DctcpModel::Window).map(|p| Dctcp::new(p, config.window)),
            swift: config.swift.map(|params| Box::new(SwiftWindow::new(params))),
            send_times: SendTimes::default(),
        }
    }

    /// Whether every sized message is acknowledged (long-lived flows never are).
    pub(super) fn is_done(&self) -> bool {
        self.messages.iter().all(|m| m.spec.size.is_none() || m.finish.is_some())
    }

    /// Every message acknowledged (so no long-lived one), no retransmission timer and no
    /// reaction point that outlives the messages: nothing left to send, time or react to.
    pub(super) fn is_retired(&self) -> bool {
        self.first_unacked == self.messages.len()
            && self.rto_deadline.is_none()
            && self.reaction.as_ref().is_none_or(|r| r.rp.lives_with_its_messages())
    }

    /// Its first message started: the reaction point that waited for it is made.
    pub(super) fn start(&mut self, config: &TransportConfig) {
        if self.reaction.is_none() {
            self.reaction = ReactionLimiter::new(config).map(Box::new);
        }
    }

    /// It retired ([`Connection::is_retired`]): what only its sending needed goes. A late
    /// acknowledgement still finds nothing to sample or resend.
    pub(super) fn retire(&mut self) {
        self.send_times = SendTimes::default();
        if self.reaction.as_ref().is_some_and(|r| !r.is_reported()) {
            self.reaction = None;
        }
    }

    /// The first sequence number not yet acknowledged.
    pub(super) fn acknowledged(&self) -> u32 {
        self.base
    }

    /// When its first message starts, if it has one.
    pub(super) fn first_start(&self) -> Option<Instant> {
        self.messages.first().map(|m| m.spec.start)
    }

    pub(super) fn records(&self) -> impl Iterator<Item = MessageRecord> + '_ {
        self.messages.iter().map(|m| MessageRecord { connection: self.spec.id, spec: m.spec, finish: m.finish })
    }

    /// When the QCN and FECN rate limiters let the next frame go (now, while released).
    fn limited_until(&self) -> Instant {
        let reaction = match &self.reaction {
            Some(reaction) if reaction.limits() => reaction.limiter.ready_at(),
            _ => Instant::ZERO,
        };
        reaction.max(self.fecn.as_deref().map_or(Instant::ZERO, FecnSource::ready_at))
    }

    /// When its FECN source sends the next probe: while a started message is unfinished,
    /// and a long-lived one only until it stops.
    fn probe_at(&self, until: Instant) -> Option<Instant> {
        let source = self.fecn.as_ref()?;
        let message = self.messages.get(self.first_unacked)?;
        let at = source.next_probe_at().max(message.spec.start);
        (message.spec.size.is_some() || (at < self.until(until) && self.sends_long_lived())).then_some(at)
    }

    /// When its long-lived flow stops, given the transport's `long_lived_until`.
    fn until(&self, long_lived_until: Instant) -> Instant {
        self.spec.until.map_or(long_lived_until, |until| until.min(long_lived_until))
    }

    /// The message that segment `seq` belongs to, and the segment's offset in it.
    fn locate(&self, seq: u32, payload: usize) -> (usize, u32) {
        let index = self.messages[..self.assigned].partition_point(|m| m.first_seq.is_some_and(|f| f <= seq)) - 1;
        let first = self.messages[index].first_seq.expect("assigned");
        // Offsets of an unbounded message wrap; only sized messages (< 4 GiB) use them.
        (index, ((seq - first) as usize * payload) as u32)
    }

    /// What the transport's scans read of it ([`Glance`]), given the transport's `payload`,
    /// `window` and `long_lived_until`: never a segment while `window` segments are
    /// unacknowledged, and never a long-lived flow's at or after its `until`.
    pub(super) fn glance(&self, payload: usize, window: u32, long_lived_until: Instant) -> Glance {
        let send_from = (self.next - self.base < self.window(payload, window)).then(|| {
            let swift = self.swift.as_deref().map_or(Instant::ZERO, SwiftWindow::ready_at);
            let pacer = self.pacer.as_ref().map_or(Instant::ZERO, Pacer::ready_at).max(self.limited_until()).max(swift);
            if self.next < self.assigned_end { Some(pacer) } else { self.next_start.map(|start| start.max(pacer)) }
        });
        let rate_timer = self.reaction.as_ref().and_then(|r| r.rp.poll_timeout());
        Glance {
            priority: self.spec.priority,
            dst: self.spec.dst,
            send_from: send_from.flatten(),
            stop_at: self.sends_long_lived().then(|| self.until(long_lived_until)),
            probe: self.probe_at(long_lived_until),
            timer: [self.rto_deadline, rate_timer].into_iter().flatten().min(),
        }
    }

    /// The segments that may be unacknowledged: the configured `window`, or less where the
    /// congestion control keeps one.
    fn window(&self, payload: usize, window: u32) -> u32 {
        let window = self.dctcp.as_ref().map_or(window, |dctcp| dctcp.window().min(window));
        // HPCC's window (or DCQCN+w's, TIMELY+w's) in bytes of payload, as its simulator
        // counts it, at least a segment.
        let bytes = self.reaction.as_deref().and_then(ReactionLimiter::window_bytes);
        let window = bytes.map_or(window, |bytes| (bytes.div_ceil(payload as u64).max(1) as u32).min(window));
        self.swift.as_ref().map_or(window, |swift| swift.window().min(window))
    }

    /// Whether the segment at `next` belongs (or would belong) to a long-lived flow.
    fn sends_long_lived(&self) -> bool {
        let index = if self.next < self.assigned_end { self.assigned - 1 } else { self.assigned };
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
        self.send_times.acknowledged(ack);
        self.next = self.next.max(ack);
        while let Some(message) = self.messages.get_mut(self.first_unacked)
            && message.end_seq(payload).is_some_and(|end| end <= ack)
        {
            message.finish = Some(now);
            self.first_unacked += 1;
        }
        self.rto_deadline = (self.base < self.next).then_some(now + rto);
    }
    /// An ACK or NAK for this connection: a NAK below `next` sends it back to the sequence
    /// number it names.
    /// `hops`: the INT records it echoes, for HPCC (and Swift's hop count). It arrived at
    /// `arrived` and is handled at `now`: the RTT sample ends at its arrival.
    pub(super) fn on_acknowledgement(
        &mut self,
        now: Instant,
        arrived: Instant,
        traffic: &TrafficRepr,
        hops: &[HopRecord],
        payload: usize,
        rto: Duration,
    ) {
        let acked = traffic.sequence.min(self.sent_through);
        let rtt = self.rtt_sample(arrived, traffic.kind, acked);
        if let Some(rtt) = rtt {
            self.stats.rtt_samples += 1;
            self.stats.rtt_total += rtt;
            self.stats.last_rtt = Some(rtt);
        }
        if let Some(reaction) = &mut self.reaction {
            // The ACK's `offset` counts the CE segments it covers (DCTCP's echo).
            reaction.acknowledged(now, (acked, self.next.max(acked)), hops, rtt, traffic.offset > 0);
        }
        if let (Some(swift), Some(rtt)) = (&mut self.swift, rtt) {
            // An ACK in the traffic framing carries its receiver's delay; RoCEv2's reads 0. One
            // longer than the whole round trip cannot be (a receiver that wrote its clock
            // there, as builds before this one did): the delay is then the RTT's.
            let remote = Duration::from_nanos(traffic.timestamp_ns);
            let remote = if remote <= rtt { remote } else { Duration::ZERO };
            swift.acknowledged(now, rtt, remote, hops.len(), acked - self.base);
        }
        self.acknowledge(now, traffic.sequence, traffic.offset, payload, rto);
        if traffic.kind == TrafficKind::Nak && traffic.sequence < self.next {
            self.stats.naks += 1;
            self.next = traffic.sequence.max(self.base);
            if let Some(dctcp) = &mut self.dctcp {
                dctcp.on_nak();
            }
            if let Some(swift) = &mut self.swift {
                swift.law.on_fast_recovery(now);
            }
        }
    }

    /// The RTT sample of an acknowledgement of kind `kind` up to `acked` (at most
    /// `sent_through`) that arrived at `now`: an ACK that covers new data measures the newest
    /// segment it acknowledges, from its send to the ACK's arrival, unless that segment was
    /// sent more than once (Karn's rule). A NAK gives none: the out-of-order segment that drew it is not the
    /// newest it acknowledges.
    fn rtt_sample(&self, now: Instant, kind: TrafficKind, acked: u32) -> Option<Duration> {
        (kind == TrafficKind::Ack && acked > self.base).then(|| self.send_times.sample(now, acked - 1)).flatten()
    }

    /// Writes the segment at `next` into `buffer`, as the transport chose this connection to
    /// send now, and returns its length.
    pub(super) fn send_segment(&mut self, now: Instant, config: &TransportConfig, buffer: &mut [u8]) -> usize {
        let payload = config.payload_len();
        if self.next == self.assigned_end {
            let seq = self.next;
            let message = &mut self.messages[self.assigned];
            message.first_seq = Some(seq);
            self.assigned_end = message.end_seq(payload).expect("just assigned");
            self.assigned += 1;
            self.next_start = self.messages.get(self.assigned).map(|m| m.spec.start);
        }
        let seq = self.next;
        let (index, offset) = self.locate(seq, payload);
        let message = &self.messages[index].spec;
        // A long-lived flow's message is unbounded (length u32::MAX): full segments forever.
        let message_len = message.size.unwrap_or(u32::MAX);
        let segment_payload = message.size.map_or(payload, |size| (size - offset).min(payload as u32) as usize);
        let cn_tag = config.qcn.is_some().then_some(CnTagRepr { flow_id: self.spec.id as u16 });
        let spec = DataFrameSpec {
            src_mac: config.mac,
            dst_mac: self.spec.dst,
            vlan: Some(VlanRepr { pcp: self.spec.priority, dei: false, vid: self.spec.vid }),
            cn_tag,
            src_ip: config.ip,
            dst_ip: self.spec.dst_ip,
            dscp: 0,
            // ECT(0) for a sender that reacts to CE marks.
            ecn: if config.dctcp.is_some() || config.dcqcn.is_some() { 2 } else { 0 },
            src_port: config.udp_src_port(self.spec.id),
            dst_port: TRAFFIC_UDP_PORT,
            traffic: TrafficRepr {
                kind: TrafficKind::Data,
                flow_id: self.spec.id,
                sequence: seq,
                message_id: message.id,
                message_len,
                offset,
                timestamp_ns: now.as_nanos(),
                // The segment that fills the window: with fewer than `ack_every` segments in
                // it, the receiver would otherwise wait for segments that cannot come.
                ack_req: seq + 1 - self.base >= self.window(payload, config.window),
            },
            frame_len: config.header_len() + segment_payload,
            framing: config.framing,
        };
        let mut len = build_data_frame(buffer, &spec);
        if let Some(hpcc) = config.hpcc {
            // HPCC's INT source (room for `max_hops` records is in `segment_overhead`); the
            // frame's own UDP destination port goes into the shim.
            let source = IntRepr::source(spec.dst_port, IntInstructions::HPCC, hpcc.max_hops);
            len = insert_int(buffer, len, &source, &[]).expect("an IPv4/UDP segment with room for INT");
        }
        self.stats.segments += 1;
        self.stats.retransmitted += u64::from(seq < self.sent_through);
        self.send_times.sent(seq, now, seq < self.sent_through);
        self.next += 1;
        self.sent_through = self.sent_through.max(self.next);
        self.rto_deadline.get_or_insert(now + config.rto);
        if let Some(pacer) = &mut self.pacer {
            pacer.send(now, len);
        }
        if let Some(reaction) = &mut self.reaction {
            reaction.sent(now, len);
        }
        if let Some(source) = &mut self.fecn {
            source.sent(now, len);
        }
        if let Some(swift) = &mut self.swift {
            swift.sent(now);
        }
        len
    }

    /// Fires the QCN reaction point's timer and the retransmission timer: with segments
    /// unacknowledged, the connection goes back to the first of them.
    /// Fires the reaction point's timers and the retransmission timer; returns whether the
    /// latter fired (which may leave the connection with nothing left to do).
    pub(super) fn handle_timeout(&mut self, now: Instant) -> bool {
        if let Some(reaction) = &mut self.reaction {
            reaction.handle_timeout(now);
        }
        let fired = self.rto_deadline.is_some_and(|at| at <= now);
        if fired {
            self.rto_deadline = None;
            if self.base < self.next {
                self.stats.timeouts += 1;
                self.next = self.base;
                if let Some(dctcp) = &mut self.dctcp {
                    dctcp.on_timeout();
                }
                if let Some(swift) = &mut self.swift {
                    swift.law.on_retransmit_timeout(now);
                }
            }
        }
        fired
    }
}
