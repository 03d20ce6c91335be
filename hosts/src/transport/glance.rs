//! What the transport's scans read of a connection, kept in a dense array beside the
//! connections and refreshed after every change to one. A host holds a connection per flow
//! it sends, and every poll of the host visits each live one (which may send now, when is the
//! next thing due): on HPCC's fat-tree at 50 % FB_Hadoop load a host has hundreds live, each
//! visit read several cache lines of a connection's state and its messages, and those visits
//! were most of the run (docs/performance.md, "Simulator"). A glance is one line.

use pfcswitch_link::time::Instant;
use pfcswitch_wire::{EthernetAddress, Pcp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Glance {
    pub(super) priority: Pcp,
    pub(super) dst: EthernetAddress,
    /// When its next segment may start as far as the connection is concerned (pacing, rate
    /// limits, Swift's pacing, its next message's start); `None` while its window is full or
    /// it has nothing left to send.
    pub(super) send_from: Option<Instant>,
    /// A long-lived flow's: its segments may not start at or after this.
    pub(super) stop_at: Option<Instant>,
    /// When its FECN source sends the next probe.
    pub(super) probe: Option<Instant>,
    /// Its earliest timer: the retransmission timer or its reaction point's.
    pub(super) timer: Option<Instant>,
}

impl Glance {
    /// When the connection may send its next segment, at `not_before` (the NIC's) or later.
    pub(super) fn send_at(&self, not_before: Instant) -> Option<Instant> {
        let at = self.send_from?.max(not_before);
        self.stop_at.is_none_or(|stop| at < stop).then_some(at)
    }
}
