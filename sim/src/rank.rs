//! What an event's key means: its time, then its rank among the events of that instant.
//!
//! The order at one instant: arrivals first, then switches' timers, then hosts' (each by
//! node index). Arrivals at one instant come in the order their frames were sent: by the
//! instant they were sent, then the polling round of that instant in which their sender
//! sent them, then the sender (switches, then hosts, by index), then the sender's calls in
//! that poll. That is the order a sequence number counted at every transmission gives on
//! one thread (nodes are polled round by round, each round by node), but every part of it
//! is known to the sender alone: a fabric split over threads ranks its events as one
//! thread does, so its results are the same.
//!
//! An arrival's rank, 72 bits below its time (56 bits of ns: 2.28 years):
//!
//! ```text
//! 71      70 ........ 39  38 ... 27  26 ........ 10  9 ... 0
//! 0 (not  2^32-1 - the    round      node: host     call in
//! a wake) frame's flight  (from 1)   bit, index     the poll
//! ```
//!
//! The flight (serialisation plus propagation) inverted, so that of two frames arriving
//! together the one sent first, which flew longer, ranks first.

use crate::endpoint::Node;
use crate::queue::{Event, RANK_BITS};
use pfcswitch_link::time::Instant;

/// Rank bit of a timer (above every arrival's rank); with [`HOST_RANK`] a host's, else a
/// switch's, the node's index in the low bits.
const WAKE_RANK: u128 = 1 << (RANK_BITS - 1);
const HOST_RANK: u128 = 1 << (RANK_BITS - 2);

const CALL_BITS: u32 = 10;
const NODE_BITS: u32 = 17;
const ROUND_BITS: u32 = 12;
const FLIGHT_BITS: u32 = 32;
const _: () = assert!(1 + FLIGHT_BITS + ROUND_BITS + NODE_BITS + CALL_BITS == RANK_BITS);

/// What happens at an instant: the last bit of a frame (by its handle) reaches the far end
/// of its wire, or a node's own timer (a transmitter free again, a pause ending, a
/// retransmission timeout) comes due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    Arrival(u64),
    Wake(Node),
}

/// Who is sending: the node being polled, in which round of the instant, and how many
/// frames it has sent in this poll.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Sender {
    round: u64,
    node: u64,
    calls: u64,
}

impl Sender {
    /// `node` polled in `round` (counted from 1) of the current instant.
    pub(crate) fn new(round: u64, node: Node) -> Sender {
        let (host, index) = match node {
            Node::Switch(s) => (0, s),
            Node::Host(h) => (1, h),
        };
        assert!(index < 1 << (NODE_BITS - 1), "more than {} switches or hosts", 1u64 << (NODE_BITS - 1));
        assert!(round < 1 << ROUND_BITS, "more than {} polling rounds at one instant", 1u64 << ROUND_BITS);
        Sender { round, node: host << (NODE_BITS - 1) | index as u64, calls: 0 }
    }

    /// The place in the sending order of the next frame sent, at `sent`: what one thread's
    /// sequence number was (records kept per part merge by it).
    pub(crate) fn order(&self, sent: Instant) -> u128 {
        u128::from(sent.as_nanos()) << 64 | self.low_bits()
    }

    /// Round, node and call: the rank below the flight.
    fn low_bits(&self) -> u128 {
        u128::from(self.round) << (NODE_BITS + CALL_BITS) | u128::from(self.node) << CALL_BITS | u128::from(self.calls)
    }

    /// The rank of the next frame sent, which left at `sent` and arrives at `at`.
    fn next_rank(&mut self, sent: Instant, at: Instant) -> u128 {
        let flight = at.as_nanos() - sent.as_nanos();
        assert!(flight < 1 << FLIGHT_BITS, "a frame's flight of {flight} ns: at most 4.29 s");
        assert!(self.calls < 1 << CALL_BITS, "more than {} frames sent in one poll of a node", 1u64 << CALL_BITS);
        let rank =
            (u128::from(u32::MAX) - u128::from(flight)) << (ROUND_BITS + NODE_BITS + CALL_BITS) | self.low_bits();
        self.calls += 1;
        rank
    }
}

impl Event {
    /// The arrival at `at` of the frame held at `handle` (whose bytes are `bytes`), sent at
    /// `sent` by `sender`.
    pub(crate) fn arrival(at: Instant, sent: Instant, sender: &mut Sender, handle: u64, bytes: &[u8]) -> Event {
        Event { key: Self::key(at, sender.next_rank(sent, at)), handle, bytes_at: bytes.as_ptr() as usize }
    }

    pub(crate) fn wake(at: Instant, node: Node) -> Event {
        let rank = match node {
            Node::Switch(s) => WAKE_RANK | s as u128,
            Node::Host(h) => WAKE_RANK | HOST_RANK | h as u128,
        };
        Event { key: Self::key(at, rank), handle: 0, bytes_at: 0 }
    }

    /// The key of `rank` at `at`; the largest rank at `at` with `rank` all ones.
    pub(crate) fn key(at: Instant, rank: u128) -> u128 {
        let ns = at.as_nanos();
        assert!(ns < 1 << (128 - RANK_BITS), "simulated time past 2^56 ns (2.28 years)");
        u128::from(ns) << RANK_BITS | rank & ((1 << RANK_BITS) - 1)
    }

    pub(crate) fn at(&self) -> Instant {
        Instant::from_nanos(self.time_ns())
    }

    pub(crate) fn kind(&self) -> EventKind {
        let rank = self.key & ((1 << RANK_BITS) - 1);
        let index = (rank & (HOST_RANK - 1)) as usize;
        match (rank & WAKE_RANK != 0, rank & HOST_RANK != 0) {
            (false, _) => EventKind::Arrival(self.handle),
            (true, false) => EventKind::Wake(Node::Switch(index)),
            (true, true) => EventKind::Wake(Node::Host(index)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rank(sent: u64, round: u64, node: Node) -> u128 {
        Event::arrival(Instant::from_nanos(5_000), Instant::from_nanos(sent), &mut Sender::new(round, node), 0, &[]).key
    }

    /// Sent earlier, in an earlier round, by an earlier node, in an earlier call: first,
    /// in that order of precedence, and every arrival before every timer.
    #[test]
    fn arrivals_rank_as_their_frames_were_sent() {
        assert!(rank(1_000, 9, Node::Host(9)) < rank(1_001, 1, Node::Switch(0)));
        assert!(rank(1_000, 1, Node::Host(9)) < rank(1_000, 2, Node::Switch(0)));
        assert!(rank(1_000, 1, Node::Switch(60_000)) < rank(1_000, 1, Node::Host(0)));
        assert!(rank(1_000, 1, Node::Switch(3)) < rank(1_000, 1, Node::Switch(4)));
        let mut sender = Sender::new(1, Node::Host(2));
        let at = Instant::from_nanos(5_000);
        let first = Event::arrival(at, Instant::from_nanos(1), &mut sender, 0, &[]).key;
        assert!(first < Event::arrival(at, Instant::from_nanos(1), &mut sender, 0, &[]).key);
        let last = rank(0, (1 << ROUND_BITS) - 1, Node::Host((1 << (NODE_BITS - 1)) - 1));
        assert!(last < Event::wake(at, Node::Switch(0)).key);
        assert!(Event::wake(at, Node::Switch(70_000)).key < Event::wake(at, Node::Host(0)).key);
        assert!(Event::wake(at, Node::Host(70_000)).key < Event::key(at, u128::MAX));
        assert_eq!(Event::wake(at, Node::Host(7)).kind(), EventKind::Wake(Node::Host(7)));
        assert_eq!(Event::wake(at, Node::Switch(7)).kind(), EventKind::Wake(Node::Switch(7)));
        assert_eq!(Event::wake(at, Node::Switch(7)).at(), at);
    }
}
