//! What a run records and reports beside the nodes' own state: transmissions, pause
//! arrivals, a tap's view, and the work done.

use crate::endpoint::Endpoint;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{MacControlRepr, Pcp};
use serde::Serialize;

/// A frame that started on a wire, as the trace records it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxRecord {
    pub start: Instant,
    pub from: Endpoint,
    pub len: usize,
    /// The 802.1Q priority of a data frame, `None` for untagged ones.
    pub priority: Option<Pcp>,
    /// The content of a PAUSE/PFC frame.
    pub control: Option<MacControlRepr>,
}

/// A PAUSE or PFC frame as it arrived: when its last bit did, at which end, what it said.
/// What HPCC's simulator logs in its `pfc.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PauseArrival {
    pub at: Instant,
    pub to: Endpoint,
    pub control: MacControlRepr,
}

/// Sees every frame that goes on a wire from a tapped end: when its first bit does (virtual
/// time), from which end, and its bytes (without FCS). How `scenario simulate --capture`
/// writes its pcaps.
pub type TapFn = Box<dyn FnMut(Instant, Endpoint, &[u8]) + Send>;

/// The tapped link ends and what sees their frames.
pub(crate) struct Tap {
    pub(crate) ends: Vec<Endpoint>,
    pub(crate) see: TapFn,
}

impl std::fmt::Debug for Tap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tap").field("ends", &self.ends).finish_non_exhaustive()
    }
}

/// Events between two calls of [`crate::Network::run_until_or`]'s check: about 0.1 s of wall time.
pub const CHECK_EVERY: u64 = 1 << 16;

/// How much work a run took: what the simulator's speed is measured in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct SimStats {
    /// Frames that crossed a link (a frame crossing five links counts five).
    pub frame_hops: u64,
    /// Arrivals and timer wake-ups handled.
    pub events: u64,
    /// Frame buffers the network ever held at once (in flight, queued or being built).
    pub peak_frames: usize,
    /// Frames lost because their link was down when they were sent or while they were on it
    /// (the switches count what they drop themselves, as `link_down`).
    pub lost_on_down_links: u64,
    /// Frames that reached a killed switch.
    pub lost_at_killed_switches: u64,
    /// Frames the cables lost at their `loss` rate.
    pub lost_on_cables: u64,
}

impl SimStats {
    /// Two parts' work together; `peak_frames` adds up each part's peak, an upper bound of
    /// the whole's.
    pub(crate) fn add(self, other: SimStats) -> SimStats {
        SimStats {
            frame_hops: self.frame_hops + other.frame_hops,
            events: self.events + other.events,
            peak_frames: self.peak_frames + other.peak_frames,
            lost_on_down_links: self.lost_on_down_links + other.lost_on_down_links,
            lost_at_killed_switches: self.lost_at_killed_switches + other.lost_at_killed_switches,
            lost_on_cables: self.lost_on_cables + other.lost_on_cables,
        }
    }
}
