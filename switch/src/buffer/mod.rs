//! Frame descriptors, ingress accounting and egress queues, bounded when the switch is built
//! and allocated as they fill (or all at once: [`Buffers::preallocate`], [`Arena::preallocate`]).
//!
//! A frame is held by its datapath handle (a UMEM address) in a [`Descriptor`]; queues hold
//! descriptor indices. Ingress accounting counts the bytes received on (port, priority)
//! that have not yet left every egress port they were queued on: the shared-buffer view in
//! which an ingress queue is the sum of the egress queues it feeds (OFC's q_in = Σ q_out).
//! It charges a frame at least a minimum Ethernet frame (60 B), as a cell-based buffer does,
//! so that an ingress limit bounds the frames a (port, priority) holds, not only its bytes.
//!
//! Under policy `pfc` the egress queues of lossless priorities are *unbounded*: only the
//! ingress limits of the ports that feed them bound them (802.1Qbb as deployed), so an
//! admitted lossless frame always finds room, and they keep out of the shared pool (their
//! memory is the lossless ingress limits, as a merchant-silicon headroom pool is).
//!
//! Every egress queue is a [`NestedQueue`]; under policy `ofc` the lossless ones use its two
//! backup queues (OFC's nested hierarchy), otherwise it is a plain FIFO.
//!
//! In buffer mode "pools" ([`PoolBook`]) the ingress accounting of a (port, priority) is a
//! priority group with a profile: its admission and its PFC thresholds follow the pool, and
//! egress queues are limited by theirs. Otherwise ingress admission is `[pfc]`'s static MAX.

mod level;
mod pools;

pub use level::Level;
pub use pools::{PgUse, PoolBook, PoolUse};

use crate::config::BufferLimits;
use crate::policy::NestedQueue;
use pfcswitch_wire::{FlowKey, MIN_FRAME_LEN};

/// A frame the switch holds.
///
/// `repr(C)`, its fields ordered so that none straddles a 16-byte boundary: a descriptor is
/// copied in 16-byte moves, and a field read back from the copy before those stores retire
/// must lie inside one of them, or the load waits for them to drain (a failed store
/// forwarding).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct Descriptor {
    /// The datapath's handle (UMEM address); opaque to the core.
    pub handle: u64,
    /// Ports to forward to (decided at reception).
    pub egress: u64,
    /// OFC's flow: the frame's (source, destination) MAC pair; on a lossy priority, where
    /// OFC keeps no flows, the default key.
    pub flow: FlowKey,
    pub len: u32,
    /// A FECN probe on a FECN priority: the rate it arrived with (kbit/s).
    pub probe: Option<u32>,
    pub ingress: u16,
    pub priority: u8,
    /// Admitted on a lossless priority.
    pub lossless: bool,
    /// What its egress does to its INT.
    pub int: crate::int::IntPlan,
    /// Egress copies still queued or waiting in the pipeline.
    pub copies: u8,
    /// An ECT packet on a priority `[ecn]` marks.
    pub ecn_capable: bool,
    /// Its egress marked it CE.
    pub ce: bool,
}

impl Descriptor {
    /// An ECT frame `[ecn]` may mark: only one with a single egress, since the copies of a
    /// flooded frame share its bytes and one queue's state cannot speak for the others.
    pub fn ecn_markable(&self) -> bool {
        self.ecn_capable && self.egress.count_ones() == 1
    }
}

/// A pool of at most `capacity` descriptors with a free list. Slots are made on first use, so
/// a switch that carries little holds little (a simulated fabric has thousands of them);
/// [`Arena::preallocate`] makes them all at once for a datapath whose per-frame path must
/// not allocate. Indices come out in the same order either way: the last released first,
/// else the lowest never used.
#[derive(Debug)]
pub struct Arena {
    slots: Vec<Descriptor>,
    free: Vec<u32>,
    capacity: u32,
}

impl Arena {
    pub fn new(capacity: u32) -> Arena {
        Arena { slots: Vec::new(), free: Vec::new(), capacity }
    }

    /// Allocates every slot and the free list's room now.
    pub fn preallocate(&mut self) {
        let capacity = self.capacity as usize;
        self.slots.reserve_exact(capacity - self.slots.len());
        self.free.reserve_exact(capacity - self.free.len());
    }

    #[inline(always)]
    pub fn alloc(&mut self, descriptor: &Descriptor) -> Option<u32> {
        if let Some(index) = self.free.pop() {
            // Field by field: the caller has just built `descriptor` with narrow stores, which
            // a copy in 16-byte moves would wait on (a failed store forwarding).
            self.slots[index as usize] = Descriptor { ..*descriptor };
            return Some(index);
        }
        let index = u32::try_from(self.slots.len()).ok().filter(|&index| index < self.capacity)?;
        self.slots.push(*descriptor);
        Some(index)
    }

    #[inline]
    pub fn release(&mut self, index: u32) {
        self.free.push(index);
    }

    #[inline]
    pub fn get(&self, index: u32) -> &Descriptor {
        &self.slots[index as usize]
    }

    #[inline]
    pub fn get_mut(&mut self, index: u32) -> &mut Descriptor {
        &mut self.slots[index as usize]
    }

    /// Whether [`Arena::alloc`] would succeed.
    #[inline]
    pub fn has_room(&self) -> bool {
        !self.free.is_empty() || self.slots.len() < self.capacity as usize
    }

    #[inline]
    pub fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// `[pfc]`'s ingress thresholds, for the modes without pools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticPg {
    pub xoff: u64,
    pub xon: u64,
    pub max: u64,
}

/// What PFC decides on: a (port, priority)'s ingress bytes and the XOFF and XON points in
/// force for it now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IngressLevel {
    pub bytes: u64,
    pub xoff: u64,
    pub xon: u64,
}

/// Ingress accounting and egress queues of every port.
#[derive(Debug)]
pub struct Buffers {
    limits: BufferLimits,
    static_pg: StaticPg,
    /// Mode "pools": the pools and the PGs' split.
    book: Option<PoolBook>,
    /// Bit p set: egress queues of priority p are unbounded (see the module docs).
    unbounded: u8,
    /// Bit p set: egress queues of priority p are OFC's nested hierarchy.
    nested: u8,
    ingress: Vec<[Level; 8]>,
    egress: Vec<[Level; 8]>,
    queues: Vec<[NestedQueue; 8]>,
    /// Per port, bit p set: egress queue (port, p) holds a frame (OFC's held frames too).
    /// The per-event paths read this instead of eight queues.
    occupied: Vec<u8>,
    /// Bit i set: port i's `occupied` is not 0 (a large switch's busy ports at a glance).
    occupied_ports: u64,
    /// Shared mode: pool bytes held by each egress port, and by all.
    port_shared: Vec<u64>,
    pool_used: u64,
    pool_high_water: u64,
}

impl Buffers {
    pub fn new(
        ports: usize,
        limits: BufferLimits,
        static_pg: StaticPg,
        unbounded: u8,
        nested: u8,
        frames: u32,
    ) -> Buffers {
        let queue = |p: usize| NestedQueue::new(Self::queue_frames(&limits, unbounded, p, frames));
        let queues = (0..ports).map(|_| std::array::from_fn(queue)).collect();
        Buffers {
            book: Self::book(&limits),
            limits,
            static_pg,
            unbounded,
            nested,
            ingress: vec![[Level::default(); 8]; ports],
            egress: vec![[Level::default(); 8]; ports],
            queues,
            occupied: vec![0; ports],
            occupied_ports: 0,
            port_shared: vec![0; ports],
            pool_used: 0,
            pool_high_water: 0,
        }
    }

    /// Allocates every queue's room now (see [`NestedQueue::preallocate`]).
    pub fn preallocate(&mut self) {
        for queues in &mut self.queues {
            for (p, queue) in queues.iter_mut().enumerate() {
                queue.preallocate(self.nested & (1 << p) != 0);
            }
        }
    }

    fn book(limits: &BufferLimits) -> Option<PoolBook> {
        match limits {
            BufferLimits::Pools(layout) => Some(PoolBook::new(layout.clone())),
            _ => None,
        }
    }

    /// A queue never holds more frames than fit in its bytes, nor more than exist.
    fn queue_frames(limits: &BufferLimits, unbounded: u8, priority: usize, frames: u32) -> usize {
        if unbounded & (1 << priority) != 0 {
            return frames as usize;
        }
        let queue_bytes = match limits {
            BufferLimits::Dedicated { egress_max } => *egress_max,
            BufferLimits::Shared { reserve, queue_cap, .. } => reserve + queue_cap,
            BufferLimits::Pools(layout) => layout.queue_bytes_bound(priority),
        };
        (queue_bytes / MIN_FRAME_LEN as u64 + 1).min(u64::from(frames)) as usize
    }

    /// Applies new limits to queues that may hold frames (a configuration reload): queue
    /// bounds change (frames above a lower one stay), queues that stop being nested are
    /// flattened (each flow's frames stay in order), and the pool accounting is recomputed
    /// under the new mode.
    pub fn set_limits(&mut self, limits: BufferLimits, static_pg: StaticPg, unbounded: u8, nested: u8, frames: u32) {
        self.static_pg = static_pg;
        self.unbounded = unbounded;
        self.nested = nested;
        for queues in &mut self.queues {
            for (p, queue) in queues.iter_mut().enumerate() {
                if nested & (1 << p) == 0 {
                    queue.flatten();
                }
                queue.set_limit(Self::queue_frames(&limits, unbounded, p, frames));
            }
        }
        for (port, levels) in self.egress.iter().enumerate() {
            self.port_shared[port] = (0..8).map(|p| self.shared_part_under(&limits, p, levels[p].bytes)).sum();
        }
        self.pool_used = self.port_shared.iter().sum();
        self.book = Self::book(&limits);
        if let Some(book) = &mut self.book {
            book.rebuild(&self.ingress, &self.egress);
        }
        self.limits = limits;
    }

    pub fn ingress(&self, port: usize, priority: usize) -> Level {
        self.ingress[port][priority]
    }

    pub fn egress(&self, port: usize, priority: usize) -> Level {
        self.egress[port][priority]
    }

    /// What a frame of `len` bytes costs the ingress accounting.
    #[inline]
    pub fn ingress_charge(len: u32) -> u64 {
        u64::from(len).max(crate::config::MIN_FRAME_CHARGE)
    }

    /// Whether (port, priority) may take a frame of `len` at ingress: a lossless one within
    /// `[pfc]`'s MAX, or, in mode "pools", any within its PG's reserve, pool share or headroom.
    #[inline]
    pub fn ingress_admits(&self, port: usize, priority: usize, len: u32, lossless: bool) -> bool {
        let charge = Self::ingress_charge(len);
        match &self.book {
            Some(book) => book.pg_admits(port, priority, charge),
            None => !lossless || self.ingress[port][priority].bytes + charge <= self.static_pg.max,
        }
    }

    /// Charges a frame of `len` to (port, priority)'s ingress; the caller checked
    /// [`Buffers::ingress_admits`].
    #[inline]
    pub fn add_ingress(&mut self, port: usize, priority: usize, len: u32) -> IngressLevel {
        let charge = Self::ingress_charge(len);
        if let Some(book) = &mut self.book {
            book.charge_pg(port, priority, charge);
        }
        self.ingress[port][priority].add(charge);
        self.ingress_level(port, priority)
    }

    #[inline]
    pub fn sub_ingress(&mut self, port: usize, priority: usize, len: u32) -> IngressLevel {
        let charge = Self::ingress_charge(len);
        if let Some(book) = &mut self.book {
            book.release_pg(port, priority, charge);
        }
        self.ingress[port][priority].sub(charge);
        self.ingress_level(port, priority)
    }

    /// (port, priority)'s ingress bytes with the PFC thresholds in force now.
    #[inline]
    pub fn ingress_level(&self, port: usize, priority: usize) -> IngressLevel {
        let bytes = self.ingress[port][priority].bytes;
        let (xoff, xon) = match &self.book {
            Some(book) => book.pg_thresholds(port, priority).unwrap_or((u64::MAX, 0)),
            None => (self.static_pg.xoff, self.static_pg.xon),
        };
        IngressLevel { bytes, xoff, xon }
    }

    /// Shared mode: "if there is no space left in the shared memory pool, the packet is not
    /// admitted" at ingress (CaPFC §II-F). Always true in the other modes (pools admit at
    /// the PG).
    #[inline]
    pub fn pool_has_room(&self) -> bool {
        match self.limits {
            BufferLimits::Shared { pool, .. } => self.pool_used < pool,
            _ => true,
        }
    }

    /// Shared mode: bytes of a priority-`priority` queue at `bytes` that live in the pool.
    #[inline]
    fn shared_part(&self, priority: usize, bytes: u64) -> u64 {
        self.shared_part_under(&self.limits, priority, bytes)
    }

    #[inline]
    fn shared_part_under(&self, limits: &BufferLimits, priority: usize, bytes: u64) -> u64 {
        match limits {
            BufferLimits::Shared { reserve, .. } if !self.is_unbounded(priority) => bytes.saturating_sub(*reserve),
            _ => 0,
        }
    }

    #[inline]
    pub fn is_unbounded(&self, priority: usize) -> bool {
        self.unbounded & (1 << priority) != 0
    }

    /// Whether egress queue (port, priority) can take `len` more bytes: always when it is
    /// unbounded; its own capacity in dedicated mode; in shared mode its reserve, then the
    /// pool within the queue's, the port's and the pool's caps; in mode "pools" its profile.
    #[inline]
    pub fn fits(&self, port: usize, priority: usize, len: u32) -> bool {
        if !self.queues[port][priority].has_room() {
            return false;
        }
        if self.is_unbounded(priority) {
            return true;
        }
        let bytes = self.egress[port][priority].bytes;
        let after = bytes + u64::from(len);
        match self.limits {
            BufferLimits::Dedicated { egress_max } => after <= egress_max,
            BufferLimits::Pools(_) => {
                self.book.as_ref().is_none_or(|book| book.queue_fits(port, priority, bytes, u64::from(len)))
            }
            BufferLimits::Shared { pool, queue_cap, port_cap, .. } => {
                let extra = self.shared_part(priority, after) - self.shared_part(priority, bytes);
                extra == 0
                    || (self.shared_part(priority, after) <= queue_cap
                        && self.port_shared[port] + extra <= port_cap
                        && self.pool_used + extra <= pool)
            }
        }
    }

    /// Queues descriptor `index` (whose length is `len`) on (port, priority); the caller
    /// checked [`Buffers::fits`]. Returns the queue's bytes after.
    #[inline]
    pub fn enqueue(&mut self, port: usize, priority: usize, index: u32, len: u32) -> u64 {
        let before = self.egress[port][priority].bytes;
        self.queues[port][priority].push(index);
        self.occupied[port] |= 1 << priority;
        self.occupied_ports |= 1 << port;
        self.egress[port][priority].add(u64::from(len));
        let extra = self.shared_part(priority, before + u64::from(len)) - self.shared_part(priority, before);
        self.port_shared[port] += extra;
        self.pool_used += extra;
        self.pool_high_water = self.pool_high_water.max(self.pool_used);
        let after = self.egress[port][priority].bytes;
        if let Some(book) = &mut self.book {
            book.queue_changed(port, priority, before, after);
        }
        after
    }

    /// The frame (port, priority) sends next: for a nested queue, as of its last settle.
    #[inline]
    pub fn head(&self, port: usize, priority: usize) -> Option<u32> {
        self.queues[port][priority].head()
    }

    /// Removes the head of (port, priority), whose length is `len`; returns the queue's bytes
    /// after. A nested queue must be settled again before the next [`Buffers::head`].
    #[inline]
    pub fn dequeue(&mut self, port: usize, priority: usize, len: u32) -> u64 {
        self.queues[port][priority].pop();
        if self.queues[port][priority].is_empty() {
            self.occupied[port] &= !(1 << priority);
            if self.occupied[port] == 0 {
                self.occupied_ports &= !(1 << port);
            }
        }
        let before = self.egress[port][priority].bytes;
        self.egress[port][priority].sub(u64::from(len));
        let freed = self.shared_part(priority, before) - self.shared_part(priority, before - u64::from(len));
        self.port_shared[port] -= freed;
        self.pool_used -= freed;
        let after = self.egress[port][priority].bytes;
        if let Some(book) = &mut self.book {
            book.queue_changed(port, priority, before, after);
        }
        after
    }

    /// Bit p set: egress queue (port, p) has a frame it may send (held frames of paused
    /// OFC flows do not count).
    #[inline]
    pub fn backlog(&self, port: usize) -> u8 {
        let mut backlog = self.occupied[port];
        // A plain FIFO with frames has a head; only a nested one may hold nothing it can send.
        let mut nested = backlog & self.nested;
        while nested != 0 {
            let p = nested.trailing_zeros() as usize;
            nested &= nested - 1;
            if self.queues[port][p].head().is_none() {
                backlog &= !(1 << p);
            }
        }
        backlog
    }

    /// Bit i set: port i's egress queues hold a frame.
    #[inline]
    pub fn occupied_ports(&self) -> u64 {
        self.occupied_ports
    }

    /// Whether `port`'s egress queues hold no frame at all.
    #[inline]
    pub fn port_is_empty(&self, port: usize) -> bool {
        debug_assert_eq!(self.occupied[port] == 0, self.occupied_ports & (1 << port) == 0, "port {port}");
        self.occupied[port] == 0
    }

    /// OFC's nested hierarchy of egress (port, priority).
    pub fn nested(&self, port: usize, priority: usize) -> &NestedQueue {
        &self.queues[port][priority]
    }

    pub fn nested_mut(&mut self, port: usize, priority: usize) -> &mut NestedQueue {
        &mut self.queues[port][priority]
    }

    #[inline]
    pub fn queue_len(&self, port: usize, priority: usize) -> usize {
        self.queues[port][priority].len()
    }

    /// Resets high-water marks to the current levels.
    pub fn reset_high_water(&mut self) {
        for level in self.ingress.iter_mut().chain(self.egress.iter_mut()).flatten() {
            level.high_water = level.bytes;
        }
        self.pool_high_water = self.pool_used;
        if let Some(book) = &mut self.book {
            book.reset_high_water();
        }
    }

    /// Mode "pools": the pools and the PGs' split.
    pub fn pools(&self) -> Option<&PoolBook> {
        self.book.as_ref()
    }

    pub fn limits(&self) -> &BufferLimits {
        &self.limits
    }

    pub fn static_pg(&self) -> StaticPg {
        self.static_pg
    }

    /// The most bytes egress queue (port, priority) may hold now; `None` when unbounded.
    pub fn queue_limit(&self, port: usize, priority: usize) -> Option<u64> {
        if self.is_unbounded(priority) {
            return None;
        }
        match &self.limits {
            BufferLimits::Dedicated { egress_max } => Some(*egress_max),
            BufferLimits::Shared { reserve, queue_cap, .. } => Some(reserve + queue_cap),
            BufferLimits::Pools(layout) => {
                let profile = layout.queue[port][priority]?;
                self.book.as_ref().map(|book| profile.reserved + book.limit(&profile))
            }
        }
    }

    /// Shared mode: bytes of the pool in use.
    pub fn pool_used(&self) -> u64 {
        self.pool_used
    }

    /// Shared mode: the most bytes of the pool in use since the last reset.
    pub fn pool_high_water(&self) -> u64 {
        self.pool_high_water
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_field_of_a_descriptor_straddles_a_16_byte_boundary() {
        use std::mem::{offset_of, size_of_val};
        // Each field's name, offset and size, from one list that must name every field: the
        // destructuring fails to compile once a field is added and not listed here.
        macro_rules! fields {
            ($($name:ident),* $(,)?) => {{
                let descriptor = Descriptor::default();
                let Descriptor { $($name: _),* } = descriptor;
                [$((stringify!($name), offset_of!(Descriptor, $name), size_of_val(&descriptor.$name))),*]
            }};
        }
        let fields =
            fields!(handle, egress, flow, len, probe, ingress, priority, lossless, int, copies, ecn_capable, ce);
        for (name, offset, size) in fields {
            assert_eq!(offset / 16, (offset + size - 1) / 16, "{name}: bytes {offset}..{}", offset + size);
        }
    }

    const STATIC_PG: StaticPg = StaticPg { xoff: 50_000, xon: 40_000, max: 60_000 };

    #[test]
    fn dedicated_queues_hold_egress_max_bytes() {
        let mut buffers = Buffers::new(2, BufferLimits::Dedicated { egress_max: 3000 }, STATIC_PG, 0, 0, 64);
        assert!(buffers.fits(1, 3, 1500));
        buffers.enqueue(1, 3, 0, 1500);
        buffers.enqueue(1, 3, 1, 1500);
        assert!(!buffers.fits(1, 3, 1), "full at egress_max");
        assert!(buffers.fits(1, 2, 1500) && buffers.fits(0, 3, 1500), "other queues are independent");
        assert_eq!(buffers.dequeue(1, 3, 1500), 1500);
        assert_eq!(buffers.egress(1, 3), Level { bytes: 1500, high_water: 3000 });
    }

    #[test]
    fn shared_mode_applies_reserve_queue_port_and_pool_caps() {
        let limits = BufferLimits::Shared { reserve: 1000, pool: 5000, queue_cap: 3000, port_cap: 4000 };
        let mut buffers = Buffers::new(3, limits, STATIC_PG, 0, 0, 1024);
        for i in 0..4 {
            buffers.enqueue(0, 0, i, 1000); // reserve + 3000 shared
        }
        assert_eq!(buffers.pool_used(), 3000);
        assert!(!buffers.fits(0, 0, 1), "queue cap reached");
        buffers.enqueue(0, 1, 10, 1000); // within q1's reserve
        assert_eq!(buffers.pool_used(), 3000);
        assert!(buffers.fits(0, 1, 1000));
        assert!(!buffers.fits(0, 1, 1001), "port cap: 3000 + 1001 > 4000");
        buffers.enqueue(1, 0, 20, 3000); // 2000 shared: pool at 5000
        assert!(!buffers.pool_has_room());
        assert!(!buffers.fits(2, 0, 1001) && buffers.fits(2, 0, 1000), "pool exhausted beyond the reserve");
        buffers.dequeue(0, 0, 1000);
        assert_eq!(buffers.pool_used(), 4000);
        assert!(buffers.pool_has_room());
    }
}
