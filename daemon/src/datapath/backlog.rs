//! A port's receive rings backing up: frames the kernel has put in front of the switch that
//! the loop has not taken yet. The switch does not count them, so its ingress accounting
//! cannot see a datapath that its own CPU overloads, and without a reaction the kernel drops
//! the excess at the socket whatever its priority. Two reactions, each with hysteresis:
//!
//! - **shed**: the classifier drops the port's lossy data frames before the kernel copies
//!   them, counted per priority, so the ring keeps room for lossless frames;
//! - **hold**: if the ring fills even so (lossless frames fill it, or lossy ones admitted
//!   before shedding began), PFC pauses the port's lossless priorities until it drains.
//!
//! Shedding starts well below holding, so the ring's depth stops growing once its lossy
//! frames are shed, and the hold acts only while lossless frames come through: a lossy
//! overload alone pauses nobody. The levels leave room, above `HOLD_ON`, for what arrives
//! before a peer obeys the pause (its veth or NIC ring and a turn of the loop) within the
//! frames a fill ring holds (`FILL_TARGET`).

use crate::xsk::{RING_SIZE, TX_BUDGET};
use pfcswitch_link::time::Instant;
use std::time::Duration;

/// The frames a turn of the loop takes from a ring (the loop's `BATCH`).
const BATCH: u32 = TX_BUDGET;

/// Frames waiting in a port's receive rings at which its lossy frames start being shed: two
/// turns' worth, so the loop always finds a full batch.
const SHED_ON: u32 = 2 * BATCH;
/// ... and at or below which shedding stops.
const SHED_OFF: u32 = BATCH;
/// Frames waiting at which the port's lossless priorities are paused: high enough above
/// `SHED_ON` that what arrives in the turn before shedding bites does not reach it (a lossy
/// overload alone pauses nobody), low enough that the RX ring has room above it for a whole
/// fill ring of frames: the headroom for what arrives before the peer obeys, and during the
/// stalls of a loop that shares its CPU.
const HOLD_ON: u32 = 8 * BATCH;
/// ... and at or below which they are released: the frames of four turns, so the ring does
/// not run dry before the released sender's frames arrive.
const HOLD_OFF: u32 = 4 * BATCH;

// Shedding begins and ends below holding, and holding leaves the RX ring room for a whole
// fill ring (`FILL_TARGET`, half the ring) of frames on top.
const _: () =
    assert!(SHED_OFF < SHED_ON && SHED_ON <= HOLD_OFF && HOLD_OFF < HOLD_ON && HOLD_ON + RING_SIZE / 2 <= RING_SIZE);

/// How long after the switch last took a lossless frame from a port the port's backlog may
/// still hold its lossless priorities: many pause refreshes, so a sender the hold keeps
/// paused stays paused while the ring drains, yet a backlog of lossy frames alone, with no
/// lossless sender behind it, pauses nobody.
const LOSSLESS_RECENT: Duration = Duration::from_millis(10);

/// What a port does about its receive backlog.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub shedding: bool,
    pub holding: bool,
    /// Lossless frames the switch had taken from the port at the last turn ...
    lossless_rx: u64,
    /// ... and when that count last moved.
    lossless_moved: Option<Instant>,
}

impl Backlog {
    /// The state at `now`, once `waiting` frames were found in the port's receive rings and
    /// the switch has taken `lossless_rx` lossless frames from the port in all.
    pub fn next(self, now: Instant, waiting: u32, lossless_rx: u64) -> Backlog {
        let lossless_moved = if lossless_rx == self.lossless_rx { self.lossless_moved } else { Some(now) };
        let lossless_recent = lossless_moved.is_some_and(|at| now - at <= LOSSLESS_RECENT);
        Backlog {
            shedding: hysteresis(self.shedding, waiting, SHED_ON, SHED_OFF),
            holding: lossless_recent && hysteresis(self.holding, waiting, HOLD_ON, HOLD_OFF),
            lossless_rx,
            lossless_moved,
        }
    }
}

fn hysteresis(on: bool, level: u32, high: u32, low: u32) -> bool {
    if on { level > low } else { level >= high }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Instant {
        Instant::from_nanos(n * 1_000)
    }

    #[test]
    fn a_growing_backlog_sheds_first_then_holds_and_each_ends_lower_than_it_began() {
        let mut state = Backlog::default();
        let mut seen = Vec::new();
        let levels = [0, SHED_ON - 1, SHED_ON, HOLD_ON - 1, HOLD_ON, HOLD_OFF + 1, HOLD_OFF, SHED_OFF + 1, SHED_OFF];
        for (turn, waiting) in (1..).zip(levels) {
            // A lossless frame among those taken every turn.
            state = state.next(us(100 * turn), waiting, turn);
            seen.push((state.shedding, state.holding));
        }
        let (off, shed, both) = ((false, false), (true, false), (true, true));
        assert_eq!(seen, [off, off, shed, shed, both, both, shed, shed, off]);
    }

    #[test]
    fn a_backlog_holds_only_while_lossless_frames_came_through_lately() {
        let lossy_only = Backlog::default().next(us(100), HOLD_ON, 0);
        assert!(lossy_only.shedding && !lossy_only.holding, "no lossless sender to pause");

        let held = lossy_only.next(us(200), HOLD_ON, 1);
        assert!(held.holding, "a lossless frame came through");
        let still = held.next(us(200) + LOSSLESS_RECENT, HOLD_ON, 1);
        assert!(still.holding, "held while the last lossless frame is recent");
        let quiet = still.next(us(300) + LOSSLESS_RECENT, HOLD_ON, 1);
        assert!(!quiet.holding && quiet.shedding, "released once lossless senders have gone quiet");
    }
}
