//! The pending events: a timing wheel of one slot per nanosecond for what comes within
//! [`WHEEL_NS`] of the last time taken out (a frame's arrival, a transmitter free again:
//! nearly every event), and a radix heap ([`radix`]) for what is booked farther ahead
//! (retransmission and other timers). Booking into the wheel is a slot index and a
//! write, and taking the least out a scan of a bitmap of occupied slots: no event moves
//! between buckets, as in the radix heap that held every event before. With the prefetch it
//! makes possible (the next event is known), 8 % faster on HPCC's fat-tree and 5 % on
//! `websearch-fat-tree` (docs/performance.md, "Simulator"). The order is the same: by key;
//! events with equal keys are the same event.

mod event;
mod radix;

pub(crate) use event::{Event, RANK_BITS};
use radix::RadixQueue;

/// How far ahead of the last time taken out the wheel holds events, in ns: a frame's
/// arrival at 10 Gbit/s with a microsecond of cable comes 2.2 µs after it starts.
const WHEEL_NS: u64 = 4096;
const WORDS: usize = WHEEL_NS as usize / 64;

#[derive(Debug)]
pub(crate) struct EventQueue {
    /// The last time taken out: every event held is at it or later.
    last: u64,
    /// By time modulo `WHEEL_NS`, one event at that time, valid where `occupied` says so.
    /// Every event in the wheel is before `last + WHEEL_NS`, so a slot holds a single time.
    /// Inline, not a `Vec` per slot: reading each slot's own allocation missed the cache.
    slots: Vec<Event>,
    /// Bit i of word w set: slot 64·w + i holds an event.
    occupied: [u64; WORDS],
    /// By slot: the further events at its time, unordered (touched only where `crowded`
    /// says a slot has some).
    crowds: Vec<Vec<Event>>,
    /// Bit i of word w set: slot 64·w + i has a crowd.
    crowded: [u64; WORDS],
    /// Events in the wheel, crowds included.
    in_wheel: usize,
    /// The events booked `WHEEL_NS` or more after the last time taken out when booked.
    far: RadixQueue,
}

impl Default for EventQueue {
    fn default() -> EventQueue {
        let empty = Event { key: 0, handle: 0, bytes_at: 0 };
        EventQueue {
            last: 0,
            slots: vec![empty; WHEEL_NS as usize],
            occupied: [0; WORDS],
            crowds: vec![Vec::new(); WHEEL_NS as usize],
            crowded: [0; WORDS],
            in_wheel: 0,
            far: RadixQueue::default(),
        }
    }
}

/// Where a slot's least event is: in the slot itself or at a place in the crowd.
#[derive(Clone, Copy)]
enum Place {
    Slot,
    Crowd(usize),
}

impl EventQueue {
    /// Adds `entry`, whose time must not be before the last time taken out.
    pub(crate) fn push(&mut self, entry: Event) {
        let time = entry.time_ns();
        assert!(time >= self.last, "an event booked before the last one handled");
        if time - self.last >= WHEEL_NS {
            self.far.push(entry);
            return;
        }
        let slot = (time % WHEEL_NS) as usize;
        let (word, bit) = (slot / 64, 1 << (slot % 64));
        if self.occupied[word] & bit == 0 {
            self.slots[slot] = entry;
            self.occupied[word] |= bit;
        } else {
            self.crowds[slot].push(entry);
            self.crowded[word] |= bit;
        }
        self.in_wheel += 1;
    }

    /// Takes out the entry with the least key, if that key is at most `limit`, and shows
    /// `next` the wheel's next event after it, if any: the caller's chance to fetch what
    /// handling that one will read while it handles this one. Nothing changes if no key is
    /// at most `limit`: events down to the last time taken out may still be booked.
    pub(crate) fn pop_at_most(&mut self, limit: u128, mut next: impl FnMut(&Event)) -> Option<Event> {
        let wheel = self.first_slot().map(|slot| (slot, self.least_in(slot)));
        let bound = wheel.map_or(limit, |(_, (_, key))| key.min(limit));
        // The wheel's least is before `last + WHEEL_NS`; a far event may have come nearer.
        if let Some(event) = self.far.pop_at_most(bound) {
            self.last = event.time_ns();
            return Some(event);
        }
        let (slot, (place, key)) = wheel?;
        if key > limit {
            return None;
        }
        let event = self.take(slot, place);
        self.last = event.time_ns();
        if let Some(slot) = self.first_slot() {
            match self.least_in(slot).0 {
                Place::Slot => next(&self.slots[slot]),
                Place::Crowd(i) => next(&self.crowds[slot][i]),
            }
        }
        Some(event)
    }

    /// The time of the earliest event held, in ns.
    pub(crate) fn next_time(&mut self) -> Option<u64> {
        let wheel = self.first_slot().map(|slot| self.least_in(slot).1);
        let least = match (wheel, self.far.least()) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        Some(event::time_of(least))
    }

    /// Removes the event at `place` of `slot`: the slot takes one of its crowd, if any, or
    /// is free.
    fn take(&mut self, slot: usize, place: Place) -> Event {
        self.in_wheel -= 1;
        let (word, bit) = (slot / 64, 1 << (slot % 64));
        let event = match place {
            Place::Crowd(i) => self.crowds[slot].swap_remove(i),
            Place::Slot if self.crowded[word] & bit != 0 => {
                let event = self.slots[slot];
                self.slots[slot] = self.crowds[slot].pop().expect("crowded");
                event
            }
            Place::Slot => {
                self.occupied[word] &= !bit;
                return self.slots[slot];
            }
        };
        if self.crowds[slot].is_empty() {
            self.crowded[word] &= !bit;
        }
        event
    }

    /// The occupied slot with the earliest time: the first from `last`'s slot on, round the
    /// wheel.
    fn first_slot(&self) -> Option<usize> {
        if self.in_wheel == 0 {
            return None;
        }
        let from = (self.last % WHEEL_NS) as usize;
        let (word, bit) = (from / 64, from % 64);
        let head = self.occupied[word] & (u64::MAX << bit);
        if head != 0 {
            return Some(word * 64 + head.trailing_zeros() as usize);
        }
        // Round the wheel; back at the starting word only bits before `from` are set.
        (1..=WORDS).find_map(|step| {
            let w = (word + step) % WORDS;
            let bits = self.occupied[w];
            (bits != 0).then(|| w * 64 + bits.trailing_zeros() as usize)
        })
    }

    /// Where the least event of `slot` (which holds one) is, and its key.
    fn least_in(&self, slot: usize) -> (Place, u128) {
        let mut least = (Place::Slot, self.slots[slot].key);
        if self.crowded[slot / 64] & 1 << (slot % 64) != 0 {
            for (i, event) in self.crowds[slot].iter().enumerate() {
                if event.key < least.1 {
                    least = (Place::Crowd(i), event.key);
                }
            }
        }
        least
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_link::rng::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    /// What the checker drives: both queues.
    pub(super) trait Queue: Default {
        fn push(&mut self, event: Event);
        /// Takes out as `pop_at_most` does, with the event `next` showed, if any.
        fn pop(&mut self, limit: u128) -> (Option<Event>, Option<Event>);
    }

    impl Queue for EventQueue {
        fn push(&mut self, event: Event) {
            EventQueue::push(self, event);
        }

        fn pop(&mut self, limit: u128) -> (Option<Event>, Option<Event>) {
            let mut shown = None;
            let taken = self.pop_at_most(limit, |e| shown = Some(*e));
            (taken, shown)
        }
    }

    /// Against `BinaryHeap` on a simulator's pattern: `rounds` of events booked at or after
    /// the last time taken out, `ahead(rng)` ns later (at that time with any rank), taken out
    /// in bursts up to a limit that is sometimes below every key held. An event the queue
    /// shows as next must not come before the one taken out next, unless one was booked in
    /// between.
    pub(super) fn check_against_binary_heap<Q: Queue>(rounds: usize, ahead: impl Fn(&mut Rng) -> u128) {
        let mut rng = Rng::new(7);
        let (mut queue, mut heap) = (Q::default(), BinaryHeap::new());
        let mut now: u128 = 0;
        let mut handle = 0u64;
        let mut shown: Option<Event> = None;
        for _ in 0..rounds {
            for _ in 0..rng.below(4) {
                let at = (now >> RANK_BITS) + ahead(&mut rng);
                let key = at << RANK_BITS | rng.below(1 << 20) as u128;
                handle += 1;
                queue.push(Event { key, handle, bytes_at: 0 });
                heap.push(Reverse((key, handle)));
                shown = None;
            }
            let limit = now + ((rng.below(5_000) as u128) << RANK_BITS);
            loop {
                let due = heap.peek().is_some_and(|Reverse((key, _))| *key <= limit);
                let expected = due.then(|| heap.pop().unwrap().0);
                let (taken, next) = queue.pop(limit);
                let taken = taken.map(|e| (e.key, e.handle));
                assert_eq!(taken, expected);
                if let (Some(shown), Some(taken)) = (shown, taken) {
                    assert!(shown.key >= taken.0, "the queue showed an event before the one taken out");
                }
                match taken {
                    Some((key, _)) => {
                        now = now.max(key);
                        shown = next;
                    }
                    None => break,
                }
            }
        }
        let expected = heap.pop().map(|Reverse((key, handle))| Event { key, handle, bytes_at: 0 });
        assert_eq!(queue.pop(u128::MAX).0, expected);
    }

    /// Mostly within the wheel, sometimes far beyond it (a timer).
    #[test]
    fn takes_keys_out_in_the_order_a_binary_heap_does() {
        check_against_binary_heap::<EventQueue>(40_000, |rng| {
            let ahead = if rng.below(8) == 0 { rng.below(100_000) } else { rng.below(WHEEL_NS as usize + 500) };
            ahead as u128
        });
    }
}
