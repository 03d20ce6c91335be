//! A byte occupancy with its high-water mark: of a (port, priority), a pool, a headroom.

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Level {
    pub bytes: u64,
    pub high_water: u64,
}

impl Level {
    pub(super) fn add(&mut self, len: u64) {
        self.bytes += len;
        self.high_water = self.high_water.max(self.bytes);
    }

    pub(super) fn sub(&mut self, len: u64) {
        self.bytes -= len;
    }
}
