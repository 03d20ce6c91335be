//! What a user asks a switch: per port and priority, frames and bytes in and out, PFC frames
//! per class, pause transitions, drops by reason, high-water marks; per port, malformed
//! frames by reason. Plain integers: the core runs on one thread; the daemon snapshots them.

/// Why the switch dropped a frame (or one copy of a flooded frame).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// A lossless frame would have exceeded ingress MAX (PFC headroom overrun).
    IngressMax,
    /// The egress queue had no room and the pipeline drops (PFC_wdrop, lossy tail drop).
    EgressFull,
    /// No descriptor free, or the shared pool is exhausted at ingress.
    NoBuffer,
    /// A link-local destination (01-80-C2-00-00-0x) other than MAC control: never forwarded.
    LinkLocal,
    /// The destination was learned on the ingress port itself.
    Filtered,
    /// The PFC watchdog's `drop` action: the frame's egress queue, or its ingress port and
    /// priority, is stormed.
    Pfcwd,
    /// The egress port's link is down: what it held when it went down, and what arrived for
    /// it since (counted at that port, lossless priorities included).
    LinkDown,
}

impl DropReason {
    pub const ALL: [DropReason; 7] = [
        DropReason::IngressMax,
        DropReason::EgressFull,
        DropReason::NoBuffer,
        DropReason::LinkLocal,
        DropReason::Filtered,
        DropReason::Pfcwd,
        DropReason::LinkDown,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            DropReason::IngressMax => "ingress_max",
            DropReason::EgressFull => "egress_full",
            DropReason::NoBuffer => "no_buffer",
            DropReason::LinkLocal => "link_local",
            DropReason::Filtered => "filtered",
            DropReason::Pfcwd => "pfcwd",
            DropReason::LinkDown => "link_down",
        }
    }
}

/// Counters of one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PriorityCounters {
    pub rx_frames: u64,
    pub rx_bytes: u64,
    pub tx_frames: u64,
    pub tx_bytes: u64,
    /// PFC frames received on this port with this class enabled (pause or resume).
    pub pfc_rx: u64,
    /// PFC frames sent on this port with this class enabled.
    pub pfc_tx: u64,
    /// Times this ingress went from asserting XOFF to XON.
    pub xoff_to_xon: u64,
    /// Frames this egress marked CE (`[ecn]`).
    pub ecn_marked: u64,
    /// Indexed by `DropReason as usize`.
    pub drops: [u64; DropReason::ALL.len()],
    /// The frame ledger ([`crate::ledger`]): frames received here and dropped before
    /// admission, whatever the reason.
    pub rx_dropped: u64,
    /// Frames received here that the pipeline passed to their egress ports.
    pub forwarded: u64,
    /// Copies the pipeline sent to this egress (queued, or dropped on the way in).
    pub assigned: u64,
    /// Copies dropped at this egress, on the way in or from the queue.
    pub egress_dropped: u64,
    /// Frames waiting in the pipeline and in the egress queue when counters were reset.
    pub ingress_carried: u64,
    pub egress_carried: u64,
}

impl PriorityCounters {
    pub fn drops(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }

    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

/// Counters of one port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortCounters {
    pub priority: [PriorityCounters; 8],
    /// 802.3x PAUSE frames received.
    pub pause_rx: u64,
    /// MAC Control frames received shorter than 60 bytes (padded or dropped, `[pfc] short_frames`).
    pub short_mac_control: u64,
    /// Frames that failed to parse, indexed by [`pfcswitch_wire::Error::index`].
    pub malformed: [u64; pfcswitch_wire::Error::COUNT],
    /// INT-MD frames this port sent, stamped or not and why (`[int]`).
    pub int: IntCounters,
}

/// What an egress port did with the INT-MD frames it sent (`crate::int`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IntCounters {
    /// A hop record pushed.
    pub stamped: u64,
    /// No hop remained: E set, nothing pushed.
    pub hop_limit: u64,
    /// The record would have taken the packet past the port's MTU: M set, nothing pushed.
    pub mtu: u64,
    /// Flooded to several ports: not stamped.
    pub flooded: u64,
    /// INT that did not parse: forwarded as it was.
    pub malformed: u64,
}

impl IntCounters {
    /// Each outcome with its count, named as the fields are (the metrics' `outcome` label).
    pub fn outcomes(&self) -> [(&'static str, u64); 5] {
        [
            ("stamped", self.stamped),
            ("hop_limit", self.hop_limit),
            ("mtu", self.mtu),
            ("flooded", self.flooded),
            ("malformed", self.malformed),
        ]
    }
}

impl Default for PortCounters {
    fn default() -> Self {
        PortCounters {
            priority: [PriorityCounters::default(); 8],
            pause_rx: 0,
            short_mac_control: 0,
            malformed: [0; pfcswitch_wire::Error::COUNT],
            int: IntCounters::default(),
        }
    }
}

impl PortCounters {
    pub fn malformed(&self, error: pfcswitch_wire::Error) -> u64 {
        self.malformed[error.index()]
    }

    pub fn total_malformed(&self) -> u64 {
        self.malformed.iter().sum()
    }
}
