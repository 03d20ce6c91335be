//! The events booked farther ahead than the wheel reaches (timers), as a radix heap: a priority queue for keys that never go below the
//! last one taken out, which a discrete-event simulator's times never do (nothing is booked
//! in the past). An event goes into the bucket of the highest bit in which its time differs
//! from the last time taken out: pushing is a bucket index and a `Vec::push`; taking the
//! least out empties the lowest non-empty bucket into lower ones, each event moving down at
//! most 64 times in its life. Events at the last time itself, which may still be booked
//! (a node's timer due now, ranked below the event just handled), wait in a small binary
//! heap by their whole key. Against one `BinaryHeap` of everything, whose `pop` sifted
//! through a dozen levels of frames in flight with a branch mispredicted at each, the
//! simulator's largest cost (docs/performance.md, "Simulator"). The order is the same: by
//! key; events with equal keys are the same event.

use super::event::{Event, time_of};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Debug)]
pub(crate) struct RadixQueue {
    /// The last time taken out: every event held is at it or later.
    last: u64,
    /// The events at `last`, by key.
    now: BinaryHeap<Reverse<Event>>,
    /// Bucket i holds events whose time's highest bit differing from `last` is bit i
    /// (bucket 64 is unused: equal times are in `now`).
    later: Vec<Vec<Event>>,
    /// Bit i set: bucket i holds events.
    occupied: u64,
    /// The least key in `later`, when known: a run that stops the clock every 100 ns to look
    /// asks for the next event each time, and must not scan a bucket of thousands for it.
    least_later: Option<u128>,
}

impl Default for RadixQueue {
    fn default() -> RadixQueue {
        RadixQueue { last: 0, now: BinaryHeap::new(), later: vec![Vec::new(); 64], occupied: 0, least_later: None }
    }
}

impl RadixQueue {
    /// Adds `entry`, whose time must not be before the last time taken out.
    pub(crate) fn push(&mut self, entry: Event) {
        let time = entry.time_ns();
        assert!(time >= self.last, "an event booked before the last one handled");
        if time == self.last {
            self.now.push(Reverse(entry));
        } else {
            let bucket = 63 - (time ^ self.last).leading_zeros() as usize;
            self.later[bucket].push(entry);
            self.occupied |= 1 << bucket;
            self.least_later = self.least_later.map(|least| least.min(entry.key));
        }
    }

    /// The least key held, if any.
    pub(crate) fn least(&mut self) -> Option<u128> {
        if let Some(std::cmp::Reverse(least)) = self.now.peek() {
            return Some(least.key);
        }
        (self.occupied != 0).then(|| self.least_later(self.occupied.trailing_zeros() as usize))
    }

    /// The least key of bucket `lowest`, the lowest occupied one, kept until it changes.
    fn least_later(&mut self, lowest: usize) -> u128 {
        let least =
            self.least_later.unwrap_or_else(|| self.later[lowest].iter().map(|e| e.key).min().expect("non-empty"));
        self.least_later = Some(least);
        least
    }

    /// Takes out the entry with the least key, if that key is at most `limit`. Nothing
    /// changes otherwise: events down to the last time taken out may still be booked.
    pub(crate) fn pop_at_most(&mut self, limit: u128) -> Option<Event> {
        if self.now.is_empty() {
            if self.occupied == 0 {
                return None;
            }
            let lowest = self.occupied.trailing_zeros() as usize;
            let least = self.least_later(lowest);
            if least > limit {
                return None;
            }
            self.least_later = None;
            // The bucket's times share their bits above bit `lowest` with the least one and
            // differ from it below: each goes to a lower bucket, or to `now`.
            self.last = time_of(least);
            let mut moving = std::mem::take(&mut self.later[lowest]);
            self.occupied &= !(1 << lowest);
            for entry in moving.drain(..) {
                self.push(entry);
            }
            // Keep the bucket's allocation.
            self.later[lowest] = moving;
        }
        let Reverse(least) = self.now.peek()?;
        if least.key > limit {
            return None;
        }
        self.now.pop().map(|Reverse(entry)| entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{Queue, check_against_binary_heap};

    impl Queue for RadixQueue {
        fn push(&mut self, event: Event) {
            RadixQueue::push(self, event);
        }

        fn pop(&mut self, limit: u128) -> (Option<Event>, Option<Event>) {
            (self.pop_at_most(limit), None)
        }
    }

    /// Times from now to 10 µs ahead: every event in the radix heap.
    #[test]
    fn takes_keys_out_in_the_order_a_binary_heap_does() {
        check_against_binary_heap::<RadixQueue>(20_000, |rng| rng.below(10_000) as u128);
    }
}
