//! A fixed-capacity hash map keyed by [`FlowKey`]: the storage of OFC's three tables (§III).
//!
//! Open addressing with linear probing and backward-shift deletion (no tombstones), at most
//! half full, allocated once: inserting, finding and removing never allocate, so the tables
//! can sit on the per-frame path. A full table refuses the insert and the engine falls back
//! to a coarse pause (see the module docs of [`super`]).

use pfcswitch_wire::FlowKey;

#[derive(Clone, Debug)]
pub struct FlowTable<V: Copy> {
    /// The entries, dense: iterating or clearing costs what the table holds, not its size.
    entries: Vec<(FlowKey, V)>,
    /// Open-addressing index into `entries`; `EMPTY` marks a free slot.
    slots: Vec<u32>,
    capacity: usize,
}

const EMPTY: u32 = u32::MAX;

/// The table could not take another flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFull;

fn hash(key: &FlowKey) -> u64 {
    let [a, b, c, d, e, f] = key.src.0;
    let [g, h, i, j, k, l] = key.dst.0;
    let high = u64::from_le_bytes([a, b, c, d, e, f, g, h]);
    let low = u64::from_le_bytes([i, j, k, l, 0, 0, 0, 0]);
    (high ^ low.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_mul(0xBF58_476D_1CE4_E5B9).rotate_left(29)
}

impl<V: Copy> FlowTable<V> {
    /// A table for up to `capacity` flows.
    pub fn new(capacity: usize) -> FlowTable<V> {
        let slots = (capacity * 2).next_power_of_two().max(2);
        FlowTable { entries: Vec::with_capacity(capacity), slots: vec![EMPTY; slots], capacity }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    fn home(&self, key: &FlowKey) -> usize {
        hash(key) as usize & self.mask()
    }

    /// The slot holding `key`, or the empty slot where it would go.
    fn probe(&self, key: &FlowKey) -> (usize, bool) {
        let mut at = self.home(key);
        loop {
            match self.slots[at] {
                EMPTY => return (at, false),
                index if self.entries[index as usize].0 == *key => return (at, true),
                _ => at = (at + 1) & self.mask(),
            }
        }
    }

    fn find(&self, key: &FlowKey) -> Option<usize> {
        if self.entries.is_empty() {
            return None;
        }
        let (at, found) = self.probe(key);
        found.then(|| self.slots[at] as usize)
    }

    pub fn get(&self, key: &FlowKey) -> Option<V> {
        self.find(key).map(|index| self.entries[index].1)
    }

    pub fn get_mut(&mut self, key: &FlowKey) -> Option<&mut V> {
        self.find(key).map(|index| &mut self.entries[index].1)
    }

    pub fn contains(&self, key: &FlowKey) -> bool {
        self.find(key).is_some()
    }

    /// The value of `key`, inserted as `default` if absent.
    pub fn entry(&mut self, key: FlowKey, default: V) -> Result<&mut V, TableFull> {
        let (at, found) = self.probe(&key);
        if found {
            return Ok(&mut self.entries[self.slots[at] as usize].1);
        }
        if self.entries.len() == self.capacity {
            return Err(TableFull);
        }
        self.slots[at] = self.entries.len() as u32;
        self.entries.push((key, default));
        Ok(&mut self.entries.last_mut().expect("just pushed").1)
    }

    /// Inserts or overwrites; returns whether the key is new.
    pub fn insert(&mut self, key: FlowKey, value: V) -> Result<bool, TableFull> {
        let len = self.entries.len();
        *self.entry(key, value)? = value;
        Ok(self.entries.len() > len)
    }

    pub fn remove(&mut self, key: &FlowKey) -> Option<V> {
        if self.entries.is_empty() {
            return None;
        }
        let (mut hole, found) = self.probe(key);
        if !found {
            return None;
        }
        let index = self.slots[hole] as usize;
        self.slots[hole] = EMPTY;
        // Backward shift: pull later entries of the run into the hole when their home allows.
        let mask = self.mask();
        let mut at = (hole + 1) & mask;
        while self.slots[at] != EMPTY {
            let home = self.home(&self.entries[self.slots[at] as usize].0);
            if (hole.wrapping_sub(home) & mask) < (at.wrapping_sub(home) & mask) {
                self.slots[hole] = self.slots[at];
                self.slots[at] = EMPTY;
                hole = at;
            }
            at = (at + 1) & mask;
        }
        // The last entry moves into the removed one's place: repoint its slot.
        let value = self.entries.swap_remove(index).1;
        if index < self.entries.len() {
            let moved = self.slot_of(index, self.entries.len());
            self.slots[moved] = index as u32;
        }
        Some(value)
    }

    /// The slot pointing at `entries[index]` as `pointer` (its index, or its old one).
    fn slot_of(&self, index: usize, pointer: usize) -> usize {
        let mut at = self.home(&self.entries[index].0);
        while self.slots[at] as usize != pointer {
            at = (at + 1) & self.mask();
        }
        at
    }

    pub fn clear(&mut self) {
        for index in 0..self.entries.len() {
            // Matching by pointer, not key: earlier iterations left holes in the runs.
            let at = self.slot_of(index, index);
            self.slots[at] = EMPTY;
        }
        self.entries.clear();
    }

    /// Entries in a deterministic order for a given history.
    pub fn iter(&self) -> impl Iterator<Item = (FlowKey, V)> + '_ {
        self.entries.iter().copied()
    }

    pub fn keys(&self) -> impl Iterator<Item = FlowKey> + '_ {
        self.entries.iter().map(|(k, _)| *k)
    }

    /// Keeps only the entries `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&FlowKey, &mut V) -> bool) {
        let mut index = 0;
        while index < self.entries.len() {
            let (key, value) = &mut self.entries[index];
            if keep(key, value) {
                index += 1;
            } else {
                let key = *key;
                // The last entry takes this place: look at it next.
                self.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_wire::EthernetAddress;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn flow(n: u16) -> FlowKey {
        let [a, b] = n.to_be_bytes();
        FlowKey { src: EthernetAddress([2, 0, 0, 0, a, b]), dst: EthernetAddress([2, 0, 0, 1, b, a]) }
    }

    #[test]
    fn refuses_beyond_capacity_and_takes_again_after_a_remove() {
        let mut table = FlowTable::new(3);
        for n in 0..3 {
            assert_eq!(table.insert(flow(n), n), Ok(true));
        }
        assert_eq!(table.insert(flow(9), 9), Err(TableFull));
        assert_eq!(table.insert(flow(1), 10), Ok(false), "an existing key is updated even when full");
        assert_eq!(table.remove(&flow(0)), Some(0));
        assert_eq!(table.insert(flow(9), 9), Ok(true));
        assert_eq!(table.get(&flow(1)), Some(10));
        assert_eq!(table.len(), 3);
    }

    proptest! {
        /// Any sequence of inserts, removes and retains agrees with a BTreeMap.
        #[test]
        fn behaves_like_a_map(ops in proptest::collection::vec((0u8..3, 0u16..40, any::<u16>()), 0..400)) {
            let mut table = FlowTable::new(24);
            let mut model = BTreeMap::new();
            for (op, n, value) in ops {
                match op {
                    0 => {
                        let result = table.insert(flow(n), value);
                        if model.len() == 24 && !model.contains_key(&n) {
                            prop_assert_eq!(result, Err(TableFull));
                        } else {
                            prop_assert_eq!(result, Ok(model.insert(n, value).is_none()));
                        }
                    }
                    1 => prop_assert_eq!(table.remove(&flow(n)), model.remove(&n)),
                    _ => {
                        table.retain(|_, v| *v % 3 != 0);
                        model.retain(|_, v| *v % 3 != 0);
                    }
                }
                prop_assert_eq!(table.len(), model.len());
                for (&n, &value) in &model {
                    prop_assert_eq!(table.get(&flow(n)), Some(value));
                }
                prop_assert_eq!(table.iter().count(), model.len());
            }
        }
    }
}
