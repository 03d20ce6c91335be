//! What a transport is handed (connection and message specs) and what it reports (message
//! records with their FCTs, sender and receiver counters).

use crate::Arrivals;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};
use std::time::Duration;

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
    /// RoCEv2: CNPs received for this connection.
    pub cnps: u64,
    /// RTT samples taken: ACKs that covered new data whose newest segment was sent once.
    pub rtt_samples: u64,
    /// The samples' sum (their mean is `rtt_total / rtt_samples`).
    pub rtt_total: Duration,
    /// The latest sample.
    pub last_rtt: Option<Duration>,
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
    /// RoCEv2: CNPs sent for this connection (DCQCN's notification point).
    pub cnps_sent: u64,
    /// In-order payload bytes per bin of `TransportConfig::bin` since the epoch.
    pub goodput_bins: Vec<u64>,
}
