//! What the queue holds.

/// An event: its time and its place at that instant in one integer, so that the queue
/// compares one number and holds 32 bytes an event. The order at one instant: arrivals
/// first, in the order their frames were sent, then switches' timers, then hosts' (each by
/// node index), so runs are reproducible and an instant's order does not depend on when its
/// events were booked. Ordered by `key` first, which no two pending events share (a wake-up
/// repeated for the same node and instant is the same event), so `handle` never decides.
/// What the rank means is the network's (`rank.rs`); the queue needs only the time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Event {
    /// Time in ns (high bits), then the rank at that instant (low [`RANK_BITS`] bits).
    pub key: u128,
    /// An arrival's frame handle; unused by a wake-up, whose node is in its rank.
    pub handle: u64,
    /// Where an arrival's frame bytes are, for a prefetch only (never read through): an
    /// address known without reading the frame store, whose own lines are as cold as the
    /// frame by then. In the padding of the 32 bytes an event takes anyway.
    pub bytes_at: usize,
}

/// Bits of a key below its time.
pub(crate) const RANK_BITS: u32 = 72;

impl Event {
    pub(crate) fn time_ns(&self) -> u64 {
        time_of(self.key)
    }
}

/// The time of `key`, in ns.
pub(super) fn time_of(key: u128) -> u64 {
    (key >> RANK_BITS) as u64
}
