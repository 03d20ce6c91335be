//! A transport's configuration: addresses, line rate, framing, segment size, window, timers,
//! goodput bins, and which congestion control (QCN, FECN, DCTCP, DCQCN, HPCC, TIMELY, Swift)
//! its connections react with.

use crate::{DcqcnParams, DctcpParams, FecnReaction, HpccParams, RpParams, SwiftParams, TimelyParams};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    CN_TAG_HEADER_LEN, DataFrameSpec, EthernetAddress, Framing, INT_HEADER_LEN, IntInstructions, Ipv4Addr, Pcp,
    TRAFFIC_UDP_PORT, TrafficKind, VlanRepr,
};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransportConfig {
    pub mac: EthernetAddress,
    pub ip: Ipv4Addr,
    /// How segments, ACKs and NAKs look on the wire: the project's traffic header, or RoCEv2
    /// (RC SENDs and ACKs; receivers then also send CNPs, DCQCN's notification point).
    pub framing: Framing,
    /// RoCEv2's notification point: at most one CNP per connection in this interval, for the
    /// CE-marked segments that arrive (DCQCN §3.2: N = 50 µs).
    pub cnp_interval: Duration,
    /// The priority CNPs go on; `None`: the data's (NICs often send them on a high one).
    pub cnp_priority: Option<Pcp>,
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
    /// window within `window` follows them (`model = "window"`), or the rate of HPCC's
    /// simulator's DCTCP (`model = "hpcc"`, with `rate_window` its window).
    pub dctcp: Option<DctcpParams>,
    /// DCQCN reaction points (RoCEv2 framing): data goes out ECT(0), and the CNPs receivers
    /// send for CE marks drive each connection's rate limiter. QCN, if set, takes precedence.
    pub dcqcn: Option<DcqcnParams>,
    /// HPCC: data carries INT-MD asking every switch for HPCC's record, receivers echo the
    /// records in their acknowledgements, and HPCC's law sets each connection's rate and
    /// window from them.
    pub hpcc: Option<HpccTransport>,
    /// TIMELY: the RTT sample of each ACK that covers new data (one completion event)
    /// drives TIMELY's law, whose rate the connection's rate limiter paces at (a TIMELY NIC
    /// paces every queue pair). QCN, DCQCN and HPCC, if set, take precedence.
    pub timely: Option<TimelyTransport>,
    /// DCQCN+w, TIMELY+w and HPCC's simulator's DCTCP (its `HAS_WIN 1`, `VAR_WIN 1`): with a
    /// base RTT T, a DCQCN, TIMELY or rate-based DCTCP connection keeps at most line rate × T
    /// × rate / line rate bytes of payload in flight (at least one segment); `None`: the rate
    /// alone.
    pub rate_window: Option<Duration>,
    /// Swift: the RTT sample of each ACK that covers new data drives Swift's congestion
    /// window (within `window`); below one segment the connection sends one segment per
    /// RTT/cwnd. NAKs are its fast recovery, retransmission timeouts its timeouts.
    pub swift: Option<SwiftTransport>,
}

/// TIMELY's senders: the law's settings (TIMELY+w's window is `rate_window`).
///
/// The rate is computed once per completion event, and a completion event here is an ACK
/// that acknowledges new data, its RTT sample the newest acknowledged segment's: so
/// `ack_every` segments are the paper's "segment" (16–64 KB there, §4.1; e.g. `ack_every`
/// 16 at 1422-byte segments is 22 KB). With `ack_every` 1 every segment is one, as HPCC's
/// simulator samples every ACK; its once-per-RTT rule is the law's `hpcc` model.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct TimelyTransport {
    pub params: TimelyParams,
}

/// Swift's senders: the law's settings and the hops its target delay scales with.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct SwiftTransport {
    pub params: SwiftParams,
    /// The hop count of the target delay when the ACK echoes no INT; with HPCC's INT on, the
    /// echo's hop count (the switches it crossed) is used instead.
    pub hops: u32,
}

/// HPCC's senders: the law's settings, the base RTT T its window is sized for, and the
/// records a data frame has room for.
#[derive(Clone, Copy, Debug, PartialEq, serde::Deserialize, serde::Serialize)]
pub struct HpccTransport {
    pub params: HpccParams,
    pub base_rtt: Duration,
    /// HPCC's simulator's 5.
    pub max_hops: u8,
}

impl HpccTransport {
    /// What a data frame keeps free for INT: the header and `max_hops` records, so that a
    /// fully stamped frame still fits the MTU.
    pub fn int_reserve(&self) -> usize {
        INT_HEADER_LEN + usize::from(self.max_hops) * IntInstructions::HPCC.hop_len()
    }
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
            framing: Framing::Traffic,
            cnp_interval: Duration::from_micros(50),
            cnp_priority: None,
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
            dcqcn: None,
            hpcc: None,
            timely: None,
            rate_window: None,
            swift: None,
        }
    }

    /// A full segment's payload: with QCN, the CN-TAG takes 4 bytes of it, so that the frame
    /// still fits the MTU.
    pub fn payload_len(&self) -> usize {
        self.frame_len - self.segment_overhead()
    }

    /// Bytes of a full segment's frame that are not message payload, the room kept for INT
    /// records included.
    pub fn segment_overhead(&self) -> usize {
        self.header_len() + self.hpcc.map_or(0, |h| h.int_reserve())
    }

    /// Bytes of a segment's frame, as the transport builds it, that are not payload: the
    /// headers (and CN-TAG), before any INT.
    pub fn header_len(&self) -> usize {
        let cn_tag = if self.qcn.is_some() { CN_TAG_HEADER_LEN } else { 0 };
        self.framing.overhead() + cn_tag
    }

    /// The length of an ACK frame (tagged, without FCS).
    pub fn ack_len(&self) -> usize {
        let mut spec =
            DataFrameSpec::between(self.mac, self.mac, Some(VlanRepr { pcp: Pcp::default(), dei: false, vid: 1 }), 0);
        spec.framing = self.framing;
        spec.traffic.kind = TrafficKind::Ack;
        spec.len()
    }

    /// The UDP source port of connection `id`'s frames. A RoCEv2 NIC gives each QP its own,
    /// the only entropy ECMP sees in RoCEv2, from 0xC000–0xFFFF as Linux's
    /// `rdma_flow_label_to_udp_sport` does; the traffic header uses its fixed port.
    pub fn udp_src_port(&self, id: u32) -> u16 {
        match self.framing {
            Framing::Traffic => TRAFFIC_UDP_PORT,
            Framing::Rocev2 => 0xC000 | (id & 0x3FFF) as u16,
        }
    }
}
