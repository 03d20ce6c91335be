//! A transport's configuration: addresses, line rate, segment size, window, timers, goodput
//! bins, and which congestion control (QCN, FECN, DCTCP) its connections react with.

use crate::{DctcpParams, FecnReaction, RpParams};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{CN_TAG_HEADER_LEN, EthernetAddress, Ipv4Addr, TRAFFIC_HEADER_LEN};
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
