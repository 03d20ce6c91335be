//! State kept per flow id at a host. Flow ids are numbered across the whole experiment, so a
//! host that receives from a handful of flows must not hold a slot for every id below theirs:
//! on an 8,192-host fabric that was gigabytes of empty slots.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Flow ids are small integers already: one multiply spreads them.
#[derive(Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }

    fn write_u32(&mut self, id: u32) {
        self.0 = u64::from(id);
    }
}

/// A map from flow id to `T`, iterated in id order.
#[derive(Clone, Debug)]
pub struct FlowMap<T> {
    map: HashMap<u32, T, BuildHasherDefault<IdHasher>>,
}

impl<T> Default for FlowMap<T> {
    fn default() -> Self {
        FlowMap { map: HashMap::default() }
    }
}

impl<T> FlowMap<T> {
    #[inline]
    pub fn get(&self, id: u32) -> Option<&T> {
        self.map.get(&id)
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> Option<&mut T> {
        self.map.get_mut(&id)
    }

    #[inline]
    pub fn get_or_insert_with(&mut self, id: u32, make: impl FnOnce() -> T) -> &mut T {
        self.map.entry(id).or_insert_with(make)
    }

    /// Every flow's state, by ascending id (for reports, not per frame).
    pub fn iter(&self) -> impl Iterator<Item = (u32, &T)> + '_ {
        let mut entries: Vec<(u32, &T)> = self.map.iter().map(|(&id, value)| (id, value)).collect();
        entries.sort_unstable_by_key(|&(id, _)| id);
        entries.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_high_id_costs_one_entry_and_ids_come_out_in_order() {
        let mut flows = FlowMap::default();
        for id in [4_000_000, 7, 300] {
            *flows.get_or_insert_with(id, || 0u32) += id;
        }
        *flows.get_or_insert_with(7, || 0) += 1;
        assert!(flows.map.capacity() < 16, "three entries, not four million slots");
        assert_eq!(
            flows.iter().map(|(id, &v)| (id, v)).collect::<Vec<_>>(),
            [(7, 8), (300, 300), (4_000_000, 4_000_000)]
        );
        assert_eq!(flows.get(300), Some(&300));
        assert_eq!(flows.get(8), None);
    }
}
