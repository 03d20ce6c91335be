//! The simulator's pending events: frames on wires and each node's next timer.
//!
//! Every event has a key, its time and its place at that instant in one integer (see
//! [`wake_key`] and [`arrival_key`]), and events happen in key order. Arrivals wait in a
//! binary heap. A node has at most one pending timer, which it moves every time its next
//! deadline changes (every frame a busy port sends, every ACK a sender receives): timers
//! live in an indexed heap that moves a node's entry in place, so the queue holds nothing
//! stale and stays as small as what is really pending.

use crate::Node;
use pfcswitch_link::time::Instant;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// A rank at or above this is a timer's (below, an arrival's sequence number); with
/// [`HOST_RANK`] a host's, else a switch's; the node's index in the low bits. So at one
/// instant arrivals come first, in the order their frames were sent, then switches' timers,
/// then hosts' (each by node index): runs are reproducible, and an instant's order does not
/// depend on when its events were booked.
const WAKE_RANK: u64 = 1 << 63;
const HOST_RANK: u64 = 1 << 62;

fn key(at: Instant, rank: u64) -> u128 {
    u128::from(at.as_nanos()) << 64 | u128::from(rank)
}

/// The key of the `sequence`-th frame put on a wire, arriving at `at`.
pub(crate) fn arrival_key(at: Instant, sequence: u64) -> u128 {
    debug_assert!(sequence < HOST_RANK);
    key(at, sequence)
}

/// The key of `node`'s timer at `at`.
pub(crate) fn wake_key(at: Instant, node: Node) -> u128 {
    let rank = match node {
        Node::Switch(s) => WAKE_RANK | s as u64,
        Node::Host(h) => WAKE_RANK | HOST_RANK | h as u64,
    };
    key(at, rank)
}

/// The time of an event's key.
pub(crate) fn key_time(key: u128) -> Instant {
    Instant::from_nanos((key >> 64) as u64)
}

/// What happens at an instant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// The last bit of the frame held at this handle reaches the far end of its wire.
    Arrival(u64),
    /// A node's own timer comes due (a transmitter free again, a pause ending, a
    /// retransmission timeout).
    Wake(Node),
}

/// A frame on a wire: 32 bytes, ordered by key alone.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Arrival {
    key: u128,
    handle: u64,
}

/// Pending events, popped in key order.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    arrivals: BinaryHeap<Reverse<Arrival>>,
    timers: TimerHeap,
}

impl Schedule {
    pub(crate) fn book_arrival(&mut self, key: u128, handle: u64) {
        self.arrivals.push(Reverse(Arrival { key, handle }));
    }

    /// Sets `node`'s one pending timer (none if `at` is `None`), replacing any it had.
    pub(crate) fn set_timer(&mut self, node: Node, at: Option<Instant>) {
        self.timers.set(node, at.map(|at| wake_key(at, node)));
    }

    /// The key of the next event, if any.
    pub(crate) fn peek(&self) -> Option<u128> {
        let arrival = self.arrivals.peek().map(|Reverse(a)| a.key);
        match (arrival, self.timers.peek()) {
            (Some(a), Some((t, _))) => Some(a.min(t)),
            (a, t) => a.or(t.map(|(key, _)| key)),
        }
    }

    /// Takes the next event: its key and what it is.
    pub(crate) fn pop(&mut self) -> Option<(u128, EventKind)> {
        let next = self.peek()?;
        if self.timers.peek().is_some_and(|(key, _)| key == next) {
            let (key, node) = self.timers.pop().expect("peeked");
            return Some((key, EventKind::Wake(node)));
        }
        let Reverse(arrival) = self.arrivals.pop().expect("peeked");
        Some((arrival.key, EventKind::Arrival(arrival.handle)))
    }
}

/// A binary min-heap of nodes by timer key, with each node's position, so that a node's
/// timer moves in place.
#[derive(Debug, Default)]
struct TimerHeap {
    heap: Vec<(u128, Node)>,
    /// Position in `heap` of each switch's and each host's entry.
    switch_at: Vec<Option<usize>>,
    host_at: Vec<Option<usize>>,
}

impl TimerHeap {
    fn position(&mut self, node: Node) -> &mut Option<usize> {
        let (positions, index) = match node {
            Node::Switch(s) => (&mut self.switch_at, s),
            Node::Host(h) => (&mut self.host_at, h),
        };
        if positions.len() <= index {
            positions.resize(index + 1, None);
        }
        &mut positions[index]
    }

    fn peek(&self) -> Option<(u128, Node)> {
        self.heap.first().copied()
    }

    fn set(&mut self, node: Node, key: Option<u128>) {
        match (*self.position(node), key) {
            (None, None) => {}
            (None, Some(key)) => {
                self.heap.push((key, node));
                let last = self.heap.len() - 1;
                *self.position(node) = Some(last);
                self.sift_up(last);
            }
            (Some(i), Some(key)) => {
                let old = std::mem::replace(&mut self.heap[i].0, key);
                if key < old { self.sift_up(i) } else { self.sift_down(i) }
            }
            (Some(i), None) => {
                self.remove(i);
            }
        }
    }

    fn pop(&mut self) -> Option<(u128, Node)> {
        let first = self.peek()?;
        self.remove(0);
        Some(first)
    }

    fn remove(&mut self, i: usize) {
        let (_, node) = self.heap.swap_remove(i);
        *self.position(node) = None;
        if i < self.heap.len() {
            let moved = self.heap[i].1;
            *self.position(moved) = Some(i);
            self.sift_down(i);
            self.sift_up(i);
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent].0 <= self.heap[i].0 {
                break;
            }
            self.swap(i, parent);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        loop {
            let (left, right) = (2 * i + 1, 2 * i + 2);
            let mut smallest = i;
            if left < self.heap.len() && self.heap[left].0 < self.heap[smallest].0 {
                smallest = left;
            }
            if right < self.heap.len() && self.heap[right].0 < self.heap[smallest].0 {
                smallest = right;
            }
            if smallest == i {
                return;
            }
            self.swap(i, smallest);
            i = smallest;
        }
    }

    fn swap(&mut self, a: usize, b: usize) {
        self.heap.swap(a, b);
        let (node_a, node_b) = (self.heap[a].1, self.heap[b].1);
        *self.position(node_a) = Some(a);
        *self.position(node_b) = Some(b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn at(ns: u64) -> Instant {
        Instant::from_nanos(ns)
    }

    #[test]
    fn at_one_instant_arrivals_come_first_then_switches_then_hosts() {
        let mut schedule = Schedule::default();
        schedule.set_timer(Node::Host(0), Some(at(5)));
        schedule.set_timer(Node::Switch(3), Some(at(5)));
        schedule.book_arrival(arrival_key(at(5), 9), 1);
        schedule.book_arrival(arrival_key(at(5), 7), 2);
        schedule.set_timer(Node::Switch(1), Some(at(4)));
        let order: Vec<_> = std::iter::from_fn(|| schedule.pop().map(|(_, kind)| kind)).collect();
        use EventKind::*;
        assert_eq!(order, [Wake(Node::Switch(1)), Arrival(2), Arrival(1), Wake(Node::Switch(3)), Wake(Node::Host(0))]);
    }

    proptest! {
        /// The timer heap pops exactly what a plain list of each node's latest timer holds,
        /// in key order, however often timers move or are cancelled.
        #[test]
        fn timers_that_move_leave_nothing_stale(
            moves in prop::collection::vec((0usize..12, prop::option::of(0u64..50)), 1..200),
        ) {
            let mut schedule = Schedule::default();
            let mut expected = std::collections::BTreeMap::new();
            for (n, when) in moves {
                let node = if n % 2 == 0 { Node::Switch(n / 2) } else { Node::Host(n / 2) };
                schedule.set_timer(node, when.map(at));
                match when {
                    Some(t) => expected.insert(node, wake_key(at(t), node)),
                    None => expected.remove(&node),
                };
            }
            let mut want: Vec<_> = expected.into_iter().map(|(node, key)| (key, EventKind::Wake(node))).collect();
            want.sort_by_key(|&(key, _)| key);
            let got: Vec<_> = std::iter::from_fn(|| schedule.pop()).collect();
            prop_assert_eq!(got, want);
        }
    }
}
