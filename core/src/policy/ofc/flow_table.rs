//! A fixed-capacity hash map keyed by [`FlowKey`]: the storage of OFC's three tables (§III).
//!
//! Open addressing with linear probing and backward-shift deletion (no tombstones), at most
//! half full, allocated once: inserting, finding and removing never allocate, so the tables
//! can sit on the per-frame path. A full table refuses the insert and the engine falls back
//! to a coarse pause (see the module docs of [`super`]).

use crate::wire::FlowKey;

#[derive(Clone, Debug)]
pub struct FlowTable<V: Copy> {
    slots: Vec<Option<(FlowKey, V)>>,
    len: usize,
    capacity: usize,
}

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
        FlowTable { slots: vec![None; slots], len: 0, capacity }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn home(&self, key: &FlowKey) -> usize {
        hash(key) as usize & (self.slots.len() - 1)
    }

    /// The slot holding `key`, or the empty slot where it would go.
    fn probe(&self, key: &FlowKey) -> (usize, bool) {
        let mask = self.slots.len() - 1;
        let mut at = self.home(key);
        loop {
            match &self.slots[at] {
                None => return (at, false),
                Some((k, _)) if k == key => return (at, true),
                Some(_) => at = (at + 1) & mask,
            }
        }
    }

    pub fn get(&self, key: &FlowKey) -> Option<V> {
        if self.len == 0 {
            return None;
        }
        let (at, found) = self.probe(key);
        found.then(|| self.slots[at].expect("found").1)
    }

    pub fn get_mut(&mut self, key: &FlowKey) -> Option<&mut V> {
        if self.len == 0 {
            return None;
        }
        let (at, found) = self.probe(key);
        if found { self.slots[at].as_mut().map(|(_, v)| v) } else { None }
    }

    pub fn contains(&self, key: &FlowKey) -> bool {
        self.get(key).is_some()
    }

    /// The value of `key`, inserted as `default` if absent.
    pub fn entry(&mut self, key: FlowKey, default: V) -> Result<&mut V, TableFull> {
        let (at, found) = self.probe(&key);
        if !found {
            if self.len == self.capacity {
                return Err(TableFull);
            }
            self.slots[at] = Some((key, default));
            self.len += 1;
        }
        Ok(&mut self.slots[at].as_mut().expect("occupied").1)
    }

    /// Inserts or overwrites; returns whether the key is new.
    pub fn insert(&mut self, key: FlowKey, value: V) -> Result<bool, TableFull> {
        let new = !self.contains(&key);
        *self.entry(key, value)? = value;
        Ok(new)
    }

    pub fn remove(&mut self, key: &FlowKey) -> Option<V> {
        if self.len == 0 {
            return None;
        }
        let (mut hole, found) = self.probe(key);
        if !found {
            return None;
        }
        let value = self.slots[hole].take().expect("found").1;
        self.len -= 1;
        // Backward shift: pull later entries of the run into the hole when their home allows.
        let mask = self.slots.len() - 1;
        let mut at = (hole + 1) & mask;
        while let Some((k, _)) = &self.slots[at] {
            let home = self.home(k);
            let distance_to_hole = (hole.wrapping_sub(home)) & mask;
            let distance_to_here = (at.wrapping_sub(home)) & mask;
            if distance_to_hole < distance_to_here {
                self.slots[hole] = self.slots[at].take();
                hole = at;
            }
            at = (at + 1) & mask;
        }
        Some(value)
    }

    pub fn clear(&mut self) {
        if self.len > 0 {
            self.slots.fill(None);
            self.len = 0;
        }
    }

    /// Entries in slot order (deterministic for a given history).
    pub fn iter(&self) -> impl Iterator<Item = (FlowKey, V)> + '_ {
        self.slots.iter().flatten().copied()
    }

    pub fn keys(&self) -> impl Iterator<Item = FlowKey> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// Keeps only the entries `keep` accepts.
    pub fn retain(&mut self, mut keep: impl FnMut(&FlowKey, &mut V) -> bool) {
        let mut at = 0;
        while at < self.slots.len() {
            let drop = match &mut self.slots[at] {
                Some((k, v)) => !keep(k, v),
                None => false,
            };
            if drop {
                let key = self.slots[at].expect("occupied").0;
                self.remove(&key);
                // A shifted entry may now sit at `at`: look at it again.
            } else {
                at += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::EthernetAddress;
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
