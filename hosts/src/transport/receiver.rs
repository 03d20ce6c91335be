//! The receiving side of a connection: it accepts only the next expected segment, counts
//! goodput, and decides the ACK (cumulative, coalesced; at once for DCTCP's ECN-capable
//! segments) or the one NAK per gap that the transport then sends on the data's priority.
//! In RoCEv2 framing it is also DCQCN's notification point (Zhu et al. 2015, §3.2): a
//! CE-marked segment makes it send a CNP to the sender's QP, unless it sent one for this
//! connection less than `cnp_interval` ago.

use super::config::TransportConfig;
use super::records::ReceiverStats;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, Framing, IntInstructions, IntKind, IntRepr, Ipv4Addr, Pcp, TrafficKind,
    TrafficRepr, VlanRepr, build_data_frame, insert_int,
};

/// What this host knows of a connection that sends to it.
#[derive(Clone, Debug)]
pub(super) struct Inbound {
    src: EthernetAddress,
    src_ip: Ipv4Addr,
    vlan: Option<VlanRepr>,
    expected: u32,
    /// The sequence number a NAK was last sent for: one NAK per gap.
    nak_sent_for: Option<u32>,
    since_ack: u32,
    /// When the newest in-order segment arrived: its ACK tells the sender how long after
    /// that it left (Swift's remote queuing delay).
    newest_arrival: Option<Instant>,
    /// In-order segments that arrived CE since the last acknowledgement (DCTCP's echo).
    marked_since_ack: u32,
    pending: Option<TrafficKind>,
    /// When the last CNP was queued.
    cnp_at: Option<Instant>,
    /// The INT-MD header and hop stack of the last segment that carried INT, which the next
    /// acknowledgement echoes (HPCC's receiver).
    echo: Vec<u8>,
    pub(super) stats: ReceiverStats,
}

impl Inbound {
    /// A connection's receiver, from its first segment: `src`, `src_ip` and `vlan` are the
    /// segment's, where its ACKs and NAKs go.
    pub(super) fn new(src: EthernetAddress, src_ip: Ipv4Addr, vlan: Option<VlanRepr>) -> Inbound {
        Inbound {
            src,
            src_ip,
            vlan,
            expected: 0,
            nak_sent_for: None,
            since_ack: 0,
            newest_arrival: None,
            marked_since_ack: 0,
            pending: None,
            cnp_at: None,
            echo: Vec::new(),
            stats: ReceiverStats::default(),
        }
    }

    /// Takes a data segment of `frame_len` bytes that arrived at `arrived` (at or before
    /// `now`) with IP ECN field `ecn`. Returns whether an ACK or NAK became pending while none
    /// was: the transport then queues the connection to send it.
    pub(super) fn receive(
        &mut self,
        now: Instant,
        arrived: Instant,
        frame_len: usize,
        ecn: u8,
        traffic: &TrafficRepr,
        config: &TransportConfig,
    ) -> bool {
        self.stats.segments += 1;
        self.stats.frame_bytes += frame_len as u64;
        self.stats.first_rx.get_or_insert(now);
        self.stats.last_rx = Some(now);
        let response = if traffic.sequence == self.expected {
            let unbounded = traffic.message_len == u32::MAX;
            let remaining = traffic.message_len.wrapping_sub(traffic.offset) as usize;
            let payload = if unbounded { config.payload_len() } else { remaining.min(config.payload_len()) };
            self.expected += 1;
            self.newest_arrival = Some(arrived);
            self.nak_sent_for = None;
            self.since_ack += 1;
            self.marked_since_ack += u32::from(ecn == 3);
            self.stats.bytes += payload as u64;
            let bin = ((now - config.epoch).as_nanos() / config.bin.as_nanos().max(1)) as usize;
            if bin >= self.stats.goodput_bins.len() {
                self.stats.goodput_bins.resize(bin + 1, 0);
            }
            self.stats.goodput_bins[bin] += payload as u64;
            let last_of_message = !unbounded && traffic.offset as usize + payload == traffic.message_len as usize;
            self.stats.messages += u64::from(last_of_message);
            // A DCTCP sender's (ECN-capable) segments are acknowledged at once: its window may
            // fall below `ack_every`, and with no delayed-ACK timer it would then stall.
            let ecn_capable = ecn != 0;
            (last_of_message || ecn_capable || traffic.ack_req || self.since_ack >= config.ack_every)
                .then_some(TrafficKind::Ack)
        } else if traffic.sequence > self.expected {
            self.stats.out_of_order += 1;
            (self.nak_sent_for != Some(self.expected)).then(|| {
                self.nak_sent_for = Some(self.expected);
                TrafficKind::Nak
            })
        } else {
            // The sender went back further than needed (its ACK was lost): tell it where we are.
            self.stats.duplicates += 1;
            Some(TrafficKind::Ack)
        };
        let Some(kind) = response else { return false };
        self.since_ack = 0;
        // A NAK outranks an ACK waiting in the same slot: both carry `expected`.
        let was_idle = self.pending.is_none();
        if self.pending != Some(TrafficKind::Nak) {
            self.pending = Some(kind);
        }
        was_idle
    }

    /// Whether a segment that arrived at `now` with ECN field `ecn` calls for a CNP: it is
    /// CE, the framing is RoCEv2, and no CNP went out for this connection in the interval.
    pub(super) fn wants_cnp(&mut self, now: Instant, ecn: u8, config: &TransportConfig) -> bool {
        let due = self.cnp_at.is_none_or(|at| now >= at + config.cnp_interval);
        let wanted = ecn == 3 && config.framing == Framing::Rocev2 && due;
        if wanted {
            self.cnp_at = Some(now);
        }
        wanted
    }

    /// Keeps a segment's INT metadata (its MD header and hop stack) for the next
    /// acknowledgement to echo.
    pub(super) fn keep_int(&mut self, metadata: &[u8]) {
        self.echo.clear();
        self.echo.extend_from_slice(metadata);
    }

    /// The next in-order sequence number it waits for.
    pub(super) fn expected(&self) -> u32 {
        self.expected
    }

    /// Where the connection's ACKs and NAKs go: its sender.
    pub(super) fn sender(&self) -> EthernetAddress {
        self.src
    }

    /// The priority of the connection's ACKs and NAKs: its data's.
    pub(super) fn priority(&self) -> Pcp {
        self.vlan.map_or(Pcp::default(), |v| v.pcp)
    }

    /// Writes the pending ACK or NAK of connection `id` into `buffer` and returns its length.
    pub(super) fn acknowledgement(
        &mut self,
        id: u32,
        now: Instant,
        config: &TransportConfig,
        buffer: &mut [u8],
    ) -> usize {
        let kind = self.pending.take().expect("queued with a pending kind");
        let marked = std::mem::take(&mut self.marked_since_ack);
        let mut spec = self.reply(id, self.vlan, config);
        spec.traffic = TrafficRepr {
            kind,
            flow_id: id,
            sequence: self.expected,
            // RC's MSN: the messages completed so far.
            message_id: self.stats.messages as u32,
            message_len: 0,
            // DCTCP's echo: how many of the segments this acknowledges arrived CE.
            offset: marked,
            // Swift's remote queuing delay (§3.1): from the newest segment's arrival to now.
            timestamp_ns: self.newest_arrival.map_or(0, |at| now.saturating_duration_since(at).as_nanos() as u64),
            ack_req: false,
        };
        let len = build_data_frame(buffer, &spec);
        if self.echo.is_empty() {
            return len;
        }
        let echo = IntRepr { kind: IntKind::Echo, ..IntRepr::source(0, IntInstructions::default(), 0) };
        insert_int(buffer, len, &echo, &self.echo).expect("an acknowledgement has room for its echo")
    }

    /// The priority of the connection's CNPs.
    pub(super) fn cnp_priority(&self, config: &TransportConfig) -> Pcp {
        config.cnp_priority.unwrap_or_else(|| self.priority())
    }

    /// Writes a CNP for connection `id` into `buffer` and returns its length.
    pub(super) fn cnp(&mut self, id: u32, config: &TransportConfig, buffer: &mut [u8]) -> usize {
        self.stats.cnps_sent += 1;
        let vlan = self.vlan.map(|vlan| VlanRepr { pcp: self.cnp_priority(config), ..vlan });
        let mut spec = self.reply(id, vlan, config);
        spec.traffic.kind = TrafficKind::Cnp;
        spec.traffic.flow_id = id;
        build_data_frame(buffer, &spec)
    }

    /// A frame of connection `id` back to its sender, in the transport's framing.
    fn reply(&self, id: u32, vlan: Option<VlanRepr>, config: &TransportConfig) -> DataFrameSpec {
        let mut spec = DataFrameSpec::between(config.mac, self.src, vlan, 0);
        spec.src_ip = config.ip;
        spec.dst_ip = self.src_ip;
        spec.src_port = config.udp_src_port(id);
        spec.framing = config.framing;
        spec
    }
}
