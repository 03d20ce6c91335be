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
//! With `dctcp`, a connection's window is DCTCP's ([`Dctcp`](crate::Dctcp)): data goes out ECT(0), the
//! receiver acknowledges each such segment at once with the count of CE marks it carried,
//! and the sender's congestion window follows them.
//!
//! The FCT of a message runs from its arrival at the sender (the workload's start time, so
//! queueing behind earlier messages of the connection counts) to the acknowledgement of its
//! last byte, all on the sender's clock. Sequence numbers are 32-bit and do not wrap in an
//! experiment (6 TB per connection at 1422-byte segments); in RoCEv2 framing they travel as
//! 24-bit PSNs that do wrap, and each side maps a PSN back (`psn`).
//!
//! In RoCEv2 framing (`TransportConfig::framing`) segments are RC SENDs, ACKs and NAKs are
//! RC Acknowledges with an AETH, and receivers send CNPs for CE-marked segments (DCQCN's
//! notification point, in `receiver`), which go out before anything else.
//!
//! The transport (this file) owns the connections and chooses what goes out next; a
//! connection's sending side is in `sender`, its receiving side in `receiver`, QCN's and
//! FECN's per-host state, and the rate-based and Swift's window laws, in `reactions`; the
//! RTT samples (TIMELY's and Swift's, taken at the sender) in `rtt`.

mod agenda;
mod config;
mod glance;
mod psn;
mod reactions;
mod receiver;
mod records;
mod roster;
mod rtt;
mod sender;
#[cfg(test)]
mod tests;

pub use config::{HpccTransport, QcnReaction, SwiftTransport, TimelyTransport, TransportConfig};
pub use records::{ConnectionSpec, MessageRecord, MessageSpec, ReceiverStats, SenderStats};

use crate::{Arrivals, Dcqcn, FecnSource, HopRecord, HostNic, Pacer, RateTrace, ReactionPoint, Swift, Timely};
use agenda::Agenda;
use glance::Glance;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_link::units::BitRate as Rate;
use pfcswitch_wire::{
    ErrorKind, EthernetAddress, FecnProbeRepr, FecnSubtype, FrameView, Framing, IntHeader, IntKind, Ipv4Addr, Layer,
    Pcp, TrafficKind, TrafficRepr, VlanRepr, int_in, remove_int,
};
use reactions::{MAX_REFLECTIONS, Reaction, ReactionLimiter, Reflection, probe_frame};
use receiver::Inbound;
use roster::Roster;
use sender::Connection;
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

/// A host's transport: sending connections and receiving state per peer connection. It sends
/// through the host's [`HostNic`] (line rate, PFC obedience), which the caller owns and
/// hands in, so that other senders on the host share the same wire.
#[derive(Clone, Debug)]
pub struct Transport {
    config: TransportConfig,
    connections: Vec<Connection>,
    /// What the scans read of each connection, by the same index: refreshed after every
    /// change to one ([`Transport::refresh`]).
    glances: Vec<Glance>,
    /// Which connections the scans visit.
    roster: Roster,
    /// Connections whose timer is due, reused by `handle_timeout`.
    due: Vec<usize>,
    /// The live connections' earliest sends and timers.
    agenda: Agenda,
    /// No connection has a long-lived flow and FECN is off: no glance has a stop or a
    /// probe, so the agenda's answers are the scans' ([`agenda`]).
    plain: bool,
    /// Connection id → index into `connections`.
    by_id: HashMap<u32, usize>,
    next_connection: usize,
    /// Receiver state by connection id (ids number the whole experiment: a map, not a vector).
    inbound: crate::flow_map::FlowMap<Inbound>,
    /// Connection ids with an ACK or NAK to send, in order.
    control: VecDeque<u32>,
    /// Connection ids with a CNP to send, in order.
    cnps: VecDeque<u32>,
    /// FECN probes to send back to their sources, in order (at most `MAX_REFLECTIONS`).
    reflections: VecDeque<Reflection>,
    /// Probes not reflected because that queue was full.
    reflections_dropped: u64,
    /// Datagrams to our port that did not parse, by (layer, reason).
    malformed: BTreeMap<(&'static str, &'static str), u64>,
    /// A received frame with its INT removed (the sink), reused.
    stripped: Vec<u8>,
    /// The INT of the frame being handled: a segment's metadata to echo, or the records an
    /// acknowledgement echoes, in path order.
    int: ReceivedInt,
}

/// What the frame being handled carried of INT.
#[derive(Clone, Debug, Default)]
struct ReceivedInt {
    kind: Option<IntKind>,
    metadata: Vec<u8>,
    records: Vec<HopRecord>,
}

impl ReceivedInt {
    fn take(&mut self, header: &IntHeader<&[u8]>) {
        self.kind = Some(header.kind());
        self.metadata.clear();
        self.records.clear();
        match header.kind() {
            IntKind::Md => self.metadata.extend_from_slice(header.metadata()),
            IntKind::Echo => {
                let records = (0..header.hop_count()).rev().map(|i| {
                    let hop = header.hop(i);
                    Some(HopRecord {
                        timestamp_ns: hop.egress_ns?,
                        tx_bytes: hop.tx_bytes?,
                        queue_bytes: hop.queue?.1,
                        link: Rate::mbps(u64::from(hop.link_mbps?)),
                    })
                });
                // A record without HPCC's fields makes the whole echo useless to it.
                if let Some(records) = records.collect::<Option<Vec<_>>>() {
                    self.records = records;
                }
            }
        }
    }
}

impl Transport {
    pub fn new(config: TransportConfig) -> Transport {
        assert!(config.frame_len > config.segment_overhead(), "segments carry payload");
        Transport {
            plain: config.fecn.is_none(),
            config,
            connections: Vec::new(),
            glances: Vec::new(),
            roster: Roster::default(),
            due: Vec::new(),
            agenda: Agenda::default(),
            by_id: HashMap::new(),
            next_connection: 0,
            inbound: Default::default(),
            control: VecDeque::new(),
            cnps: VecDeque::new(),
            reflections: VecDeque::with_capacity(MAX_REFLECTIONS),
            reflections_dropped: 0,
            malformed: BTreeMap::new(),
            stripped: Vec::new(),
            int: ReceivedInt::default(),
        }
    }

    pub fn config(&self) -> &TransportConfig {
        &self.config
    }

    /// Room for `additional` more connections: a host of a flow-size workload holds every
    /// flow it sends, and a vector grown by doubling wastes up to half of them.
    pub fn reserve_connections(&mut self, additional: usize) {
        self.connections.reserve_exact(additional);
        self.glances.reserve_exact(additional);
    }

    /// Adds a connection with its messages (sent in start order).
    pub fn add_connection(&mut self, spec: ConnectionSpec, messages: Vec<MessageSpec>) {
        let messages_are_sized = messages.iter().all(|m| m.size.is_some());
        let pacer = spec.rate.map(|rate| self.pacer(rate, spec.arrivals, self.frame_time(rate)));
        let connection = Connection::new(spec, messages, pacer, &self.config);
        self.roster.add(self.connections.len(), &connection);
        self.by_id.entry(spec.id).or_insert(self.connections.len());
        self.plain &= messages_are_sized;
        let glance = glance_with(&self.config, &connection);
        self.glances.push(glance);
        self.connections.push(connection);
        let index = self.connections.len() - 1;
        if self.roster.is_live()[index] {
            self.agenda.note(index, &glance);
        }
        self.tidy();
    }

    /// Takes the changes to connection `index` into its glance: every change to a connection
    /// ends with this.
    fn refresh(&mut self, index: usize) {
        let glance = glance_with(&self.config, &self.connections[index]);
        self.glances[index] = glance;
        if self.roster.is_live()[index] {
            self.agenda.note(index, &glance);
        }
    }

    /// Drops the agenda's stale tops: every public call that changes the transport ends
    /// with this, so that `poll_timeout` (which cannot) reads true tops.
    fn tidy(&mut self) {
        self.agenda.tidy(self.roster.live(), self.roster.is_live(), &self.glances);
    }

    /// Whether the agenda may answer for the connections with this NIC.
    fn agenda_answers(&self, nic: &HostNic) -> bool {
        self.plain && !nic.pauses_flows()
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
            if let Some(reaction) = &mut connection.reaction {
                reaction.limiter.set_burst(burst);
            }
            if let Some(source) = &mut connection.fecn {
                source.set_burst(burst);
            }
            self.refresh(i);
        }
        self.tidy();
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
        self.connections.iter().all(Connection::is_done)
    }

    pub fn messages(&self) -> impl Iterator<Item = MessageRecord> + '_ {
        self.connections.iter().flat_map(Connection::records)
    }

    pub fn sender_stats(&self) -> impl Iterator<Item = (ConnectionSpec, SenderStats)> + '_ {
        self.connections.iter().map(|c| (c.spec, c.stats))
    }

    /// Receiver state per connection id that sent here.
    pub fn receiver_stats(&self) -> impl Iterator<Item = (u32, &ReceiverStats)> + '_ {
        self.inbound.iter().map(|(id, inbound)| (id, &inbound.stats))
    }

    /// Each connection's FECN source, if FECN is on.
    pub fn fecn_sources(&self) -> impl Iterator<Item = (u32, &FecnSource)> + '_ {
        self.connections.iter().filter_map(|c| c.fecn.as_deref().map(|f| (c.spec.id, f)))
    }

    /// Datagrams to this host's port that did not parse, as `layer: reason` and how many.
    pub fn malformed(&self) -> impl Iterator<Item = (String, u64)> + '_ {
        self.malformed.iter().map(|((layer, kind), &n)| (format!("{layer}: {kind}"), n))
    }

    /// Probes this host could not reflect (its reflection queue was full).
    pub fn reflections_dropped(&self) -> u64 {
        self.reflections_dropped
    }

    /// Each connection's QCN reaction point and its rate over time, if QCN is on.
    pub fn reaction_points(&self) -> impl Iterator<Item = (u32, &ReactionPoint, &RateTrace)> + '_ {
        self.connections.iter().filter_map(|c| match c.reaction.as_deref()? {
            ReactionLimiter { rp: Reaction::Qcn(rp), limiter, .. } => Some((c.spec.id, rp, limiter.trace())),
            _ => None,
        })
    }

    /// Each connection's DCQCN reaction point and its rate over time, if DCQCN is on.
    pub fn dcqcn_points(&self) -> impl Iterator<Item = (u32, &Dcqcn, &RateTrace)> + '_ {
        self.connections.iter().filter_map(|c| match c.reaction.as_deref()? {
            ReactionLimiter { rp: Reaction::Dcqcn(rp), limiter, .. } => Some((c.spec.id, rp, limiter.trace())),
            _ => None,
        })
    }

    /// Each connection's TIMELY law and its rate over time, if TIMELY is on.
    pub fn timely_points(&self) -> impl Iterator<Item = (u32, &Timely, &RateTrace)> + '_ {
        self.connections.iter().filter_map(|c| match c.reaction.as_deref()? {
            ReactionLimiter { rp: Reaction::Timely(law), limiter, .. } => Some((c.spec.id, law, limiter.trace())),
            _ => None,
        })
    }

    /// Each connection's Swift window, if Swift is on.
    pub fn swift_windows(&self) -> impl Iterator<Item = (u32, &Swift)> + '_ {
        self.connections.iter().filter_map(|c| c.swift.as_ref().map(|s| (c.spec.id, &s.law)))
    }

    /// Consumes a received data, ACK, NAK or CNP frame (the NIC takes PAUSE/PFC first).
    /// Returns whether it was ours: a malformed datagram to our port is, and is counted by
    /// reason ([`Transport::malformed`]); foreign frames are for the caller to count.
    pub fn handle_rx(&mut self, now: Instant, frame: &[u8]) -> bool {
        self.handle_rx_arrived(now, now, frame)
    }

    /// [`Transport::handle_rx`] for a frame the interface received at `arrived`, before `now`
    /// (a receive timestamp, as a NIC takes it): an ACK's RTT sample ends at `arrived`, so it
    /// leaves out the time the frame waited for this host to look (TIMELY §3 and Swift §3
    /// measure with NIC timestamps for that reason). Everything else happens at `now`.
    pub fn handle_rx_arrived(&mut self, now: Instant, arrived: Instant, frame: &[u8]) -> bool {
        let ours = self.receive(now, arrived.min(now), frame);
        self.tidy();
        ours
    }

    fn receive(&mut self, now: Instant, arrived: Instant, frame: &[u8]) -> bool {
        let Ok(view) = FrameView::parse(frame) else { return false };
        if view.l2.dst != self.config.mac {
            return false;
        }
        self.int.kind = None;
        match int_in(&view) {
            Ok(header) => {
                // The INT sink: the records kept, the frame read as its source sent it.
                self.int.take(&header);
                let mut stripped = std::mem::take(&mut self.stripped);
                stripped.clear();
                stripped.extend_from_slice(frame);
                let ours = match remove_int(&mut stripped, frame.len()) {
                    Ok(len) => {
                        FrameView::parse(&stripped[..len]).is_ok_and(|view| self.handle_view(now, arrived, &view, len))
                    }
                    Err(_) => false,
                };
                self.stripped = stripped;
                ours
            }
            // Another UDP port is `WrongEtherType` at layer INT: not INT.
            Err(error) if error.layer == Layer::Int && error.kind != ErrorKind::WrongEtherType => {
                *self.malformed.entry((error.layer.name(), error.kind.name())).or_default() += 1;
                true
            }
            Err(_) => self.handle_view(now, arrived, &view, frame.len()),
        }
    }

    /// [`Transport::handle_rx_arrived`] for a frame to us without INT (or with it removed) of
    /// `frame_len` bytes.
    fn handle_view(&mut self, now: Instant, arrived: Instant, view: &FrameView<'_>, frame_len: usize) -> bool {
        if let Ok(cnm) = view.cnm() {
            return self.receive_cnm(now, view.l2.cn_tag.map(|t| t.flow_id), cnm.quantized_feedback);
        }
        if let Ok(probe) = view.fecn_probe() {
            return self.receive_probe(now, view, probe);
        }
        let (ip, mut traffic) = match view.traffic() {
            Ok((ip, _, traffic)) => (ip, traffic),
            Err(error) if matches!(error.layer, Layer::Traffic | Layer::Roce) => {
                // A datagram to our port that is not a well-formed segment, ACK, NAK or CNP
                // (a bad ICRC, an unknown opcode, a truncated BTH...): ours, counted by reason.
                *self.malformed.entry((error.layer.name(), error.kind.name())).or_default() += 1;
                return true;
            }
            Err(_) => return false,
        };
        if self.config.framing == Framing::Rocev2 {
            traffic.sequence = psn::unwrap(traffic.sequence, self.expected_sequence(&traffic));
        }
        match traffic.kind {
            TrafficKind::Data => self.receive_segment(now, arrived, view, frame_len, (ip.src, ip.ecn), &traffic),
            TrafficKind::Ack | TrafficKind::Nak => self.receive_acknowledgement(now, arrived, &traffic),
            TrafficKind::Cnp => return self.receive_cnp(now, traffic.flow_id),
        }
        true
    }

    /// The sequence number a segment (its receiver's next expected) or an acknowledgement
    /// (its sender's first unacknowledged) of `traffic`'s connection is nearest to.
    fn expected_sequence(&self, traffic: &TrafficRepr) -> u32 {
        match traffic.kind {
            TrafficKind::Data => self.inbound.get(traffic.flow_id).map_or(0, Inbound::expected),
            TrafficKind::Ack | TrafficKind::Nak | TrafficKind::Cnp => {
                self.by_id.get(&traffic.flow_id).map_or(0, |&i| self.connections[i].acknowledged())
            }
        }
    }

    fn receive_segment(
        &mut self,
        now: Instant,
        arrived: Instant,
        view: &FrameView<'_>,
        frame_len: usize,
        (src_ip, ecn): (Ipv4Addr, u8),
        traffic: &TrafficRepr,
    ) {
        let inbound =
            self.inbound.get_or_insert_with(traffic.flow_id, || Inbound::new(view.l2.src, src_ip, view.l2.vlan));
        if self.int.kind == Some(IntKind::Md) {
            inbound.keep_int(&self.int.metadata);
        }
        if inbound.receive(now, arrived, frame_len, ecn, traffic, &self.config) {
            self.control.push_back(traffic.flow_id);
        }
        if inbound.wants_cnp(now, ecn, &self.config) {
            self.cnps.push_back(traffic.flow_id);
        }
    }

    /// A CNP for one of our connections: counted, and its DCQCN reaction point cuts the rate.
    fn receive_cnp(&mut self, now: Instant, id: u32) -> bool {
        self.change_connection(id, |connection| {
            connection.stats.cnps += 1;
            if let Some(reaction) = &mut connection.reaction {
                reaction.notified(now, None);
            }
        })
        .is_some()
    }

    /// Applies `change` to the sending connection `id` (the first added with it), if there is
    /// one, and refreshes its glance.
    fn change_connection<R>(&mut self, id: u32, change: impl FnOnce(&mut Connection) -> R) -> Option<R> {
        let &index = self.by_id.get(&id)?;
        let result = change(&mut self.connections[index]);
        self.refresh(index);
        Some(result)
    }

    fn receive_acknowledgement(&mut self, now: Instant, arrived: Instant, traffic: &TrafficRepr) {
        let payload = self.config.payload_len();
        let rto = self.config.rto;
        let hops = match self.int.kind {
            Some(IntKind::Echo) => &self.int.records[..],
            _ => &[],
        };
        let Some(&index) = self.by_id.get(&traffic.flow_id) else { return };
        self.connections[index].on_acknowledgement(now, arrived, traffic, hops, payload, rto);
        self.refresh(index);
        self.roster.may_retire(index);
    }

    /// A CNM for the connection its CN-TAG names feeds that connection's reaction point.
    /// Without QCN, or for a flow this host does not send, it is not ours.
    fn receive_cnm(&mut self, now: Instant, flow: Option<u16>, quantized: u8) -> bool {
        let Some(flow) = flow else { return false };
        self.change_connection(u32::from(flow), |connection| {
            connection.reaction.as_mut().is_some_and(|reaction| reaction.notified(now, Some(quantized)))
        })
        .unwrap_or(false)
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
                self.change_connection(flow, |c| c.fecn.as_mut().map(|source| source.on_reflected(now, &probe)))
                    .flatten()
                    .is_some()
            }
        }
    }

    /// Writes the next frame to send at `now` into `buffer` (at least `frame_len` bytes) and
    /// returns its length: a CNP first, then an ACK or NAK, then data from the connections in
    /// turn.
    pub fn poll_transmit(&mut self, now: Instant, nic: &mut HostNic, buffer: &mut [u8]) -> Option<usize> {
        self.update_roster(now);
        let next = (self.next_cnp(now, nic, buffer))
            .or_else(|| self.next_control(now, nic, buffer))
            .or_else(|| self.next_reflection(now, nic, buffer))
            .or_else(|| self.next_probe(now, nic, buffer))
            .or_else(|| self.next_segment(now, nic, buffer));
        self.tidy();
        let Some(len) = next else {
            if nic.wire_free(now) {
                // Nothing to send: the NIC's idle time is no credit for a burst later.
                nic.rest(now);
            }
            return None;
        };
        nic.sent(now, len);
        Some(len)
    }

    /// The first CNP whose priority may go.
    fn next_cnp(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        let position = self.cnps.iter().position(|&id| {
            let inbound = self.inbound.get(id).expect("queued by its receiver");
            nic.can_send_to(now, inbound.cnp_priority(&self.config), inbound.sender())
        })?;
        let id = self.cnps.remove(position).expect("found");
        let inbound = self.inbound.get_mut(id).expect("queued by its receiver");
        Some(inbound.cnp(id, &self.config, buffer))
    }

    fn next_control(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        // The first ACK or NAK whose priority is not paused: a paused priority's ACKs must not
        // hold up another's (a NIC keeps them per priority).
        let position = self
            .control
            .iter()
            .position(|&id| nic.can_send_to(now, self.control_priority(id), self.control_dst(id)))?;
        let id = self.control.remove(position).expect("found");
        let inbound = self.inbound.get_mut(id).expect("queued by its receiver");
        Some(inbound.acknowledgement(id, now, &self.config, buffer))
    }

    /// Where connection `id`'s ACKs and NAKs go: its sender.
    fn control_dst(&self, id: u32) -> EthernetAddress {
        self.inbound.get(id).expect("queued by its receiver").sender()
    }

    /// The priority of connection `id`'s ACKs and NAKs: its data's.
    fn control_priority(&self, id: u32) -> Pcp {
        self.inbound.get(id).expect("queued by its receiver").priority()
    }

    /// The first reflection whose priority may go, back to its source.
    fn next_reflection(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        let position = self.reflections.iter().position(|r| nic.can_send_to(now, r.priority(), r.dst))?;
        let reflection = self.reflections.remove(position).expect("found");
        Some(probe_frame(buffer, self.config.mac, reflection.dst, reflection.vlan, &reflection.probe))
    }

    /// The probe of the first connection due one, on the connection's priority and VLAN.
    fn next_probe(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        // Without FECN no connection probes: no need to visit them all at every poll.
        self.config.fecn?;
        let glances = &self.glances;
        let &index = self.roster.live().iter().find(|&&i| {
            let g = &glances[i];
            g.probe.is_some_and(|at| at <= now) && nic.can_send_to(now, g.priority, g.dst)
        })?;
        let connection = &mut self.connections[index];
        let spec = connection.spec;
        let probe = connection.fecn.as_mut().expect("probing").probe(now, spec.id as u16);
        self.refresh(index);
        let vlan = Some(VlanRepr { pcp: spec.priority, dei: false, vid: spec.vid });
        Some(probe_frame(buffer, self.config.mac, spec.dst, vlan, &probe))
    }

    fn next_segment(&mut self, now: Instant, nic: &HostNic, buffer: &mut [u8]) -> Option<usize> {
        // None may send now unless one's send time has come: no need to look for it.
        if self.agenda_answers(nic)
            && !Pcp::ALL.into_iter().any(|p| self.agenda.earliest_send(p).is_some_and(|at| at <= now))
        {
            return None;
        }
        let n = self.connections.len();
        // In turn from `next_connection`, as if every connection were visited.
        let live = self.roster.live();
        let (earlier, from_next) = live.split_at(live.partition_point(|&i| i < self.next_connection));
        let glances = &self.glances;
        let &chosen = from_next.iter().chain(earlier).find(|&&i| {
            let g = &glances[i];
            g.send_at(now) == Some(now) && nic.can_send_to(now, g.priority, g.dst)
        })?;
        self.next_connection = (chosen + 1) % n;
        let len = self.connections[chosen].send_segment(now, &self.config, buffer);
        self.refresh(chosen);
        Some(len)
    }

    /// When this transport next needs `poll_transmit` or `handle_timeout`, if ever. A
    /// connection with a full window waits for an ACK, not a time.
    pub fn poll_timeout(&self, nic: &HostNic) -> Option<Instant> {
        debug_assert!(self.glances_are_fresh(), "a connection changed without a refresh");
        let control =
            self.control.iter().map(|&id| nic.ready_at_to(self.control_priority(id), self.control_dst(id))).min();
        let cnps = self.cnps.iter().map(|&id| {
            let inbound = self.inbound.get(id).expect("queued by its receiver");
            nic.ready_at_to(inbound.cnp_priority(&self.config), inbound.sender())
        });
        let reflections = self.reflections.iter().map(|r| nic.ready_at_to(r.priority(), r.dst)).min();
        let of_connection = |g: &Glance| {
            let ready = nic.ready_at_to(g.priority, g.dst);
            let probe = g.probe.map(|at| at.max(ready));
            [g.send_at(ready), g.timer, probe].into_iter().flatten().min()
        };
        let visit = || self.roster.live().iter().filter_map(|&i| of_connection(&self.glances[i])).min();
        let live = if self.agenda_answers(nic) {
            debug_assert!(self.agenda.is_tidy(self.roster.is_live(), &self.glances), "an untidy agenda");
            let sends = Pcp::ALL.into_iter().filter_map(|p| Some(self.agenda.earliest_send(p)?.max(nic.ready_at(p))));
            let earliest = sends.chain(self.agenda.earliest_timer()).min();
            debug_assert_eq!(earliest, visit(), "the agenda and a visit of every live connection differ");
            earliest
        } else {
            visit()
        };
        let mut next = control.into_iter().chain(cnps).chain(reflections).chain(live).min();
        // A waiting connection does nothing before its start: those starting later than what
        // is already due cannot come first.
        for (start, i) in self.roster.waiting() {
            if next.is_some_and(|n| start >= n) {
                break;
            }
            next = next.into_iter().chain(of_connection(&self.glances[i])).min();
        }
        next
    }

    /// Whether every live connection's glance says what the connection would say now
    /// (checked in debug builds).
    fn glances_are_fresh(&self) -> bool {
        self.roster.live().iter().all(|&i| glance_with(&self.config, &self.connections[i]) == self.glances[i])
    }

    /// Fires retransmission timers: a connection with unacknowledged segments goes back.
    /// A connection with no timer due has nothing to fire (its reaction point's and its
    /// retransmission timer are all its timers), so only those the agenda's timer heap names
    /// are visited, in index order as a visit of every live one would.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.update_roster(now);
        let mut due = std::mem::take(&mut self.due);
        self.agenda.take_due_timers(now, self.roster.is_live(), &self.glances, &mut due);
        for &i in &due {
            if self.connections[i].handle_timeout(now) {
                self.roster.may_retire(i);
            }
            self.refresh(i);
        }
        due.clear();
        self.due = due;
        self.tidy();
    }

    /// Starts the connections due at `now` and retires the finished ones.
    fn update_roster(&mut self, now: Instant) {
        let started = self.roster.update(now, &mut self.connections, &self.config);
        if !started.is_empty() {
            // A reaction point made at the start changes what the glance read before it.
            for &i in started {
                self.glances[i] = glance_with(&self.config, &self.connections[i]);
            }
            self.agenda.rebuild(self.roster.live(), &self.glances);
        }
        self.tidy();
    }
}

/// What the scans read of `connection` under `config` ([`Glance`]).
fn glance_with(config: &TransportConfig, connection: &Connection) -> Glance {
    connection.glance(config.payload_len(), config.window, config.long_lived_until)
}
