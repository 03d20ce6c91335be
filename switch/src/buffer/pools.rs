//! Buffer mode "pools": what each priority group and queue holds of its reserve, its pool
//! and its headroom, and the thresholds in force now (Choudhury and Hahne, "Dynamic Queue
//! Length Thresholds for Shared-Memory Packet Switches", IEEE/ACM ToN 1998: a queue may
//! grow while it holds less than α × the free buffer; SONiC's `dynamic_th` is log2 α).
//!
//! Bytes are placed as a Broadcom MMU places cells: a PG's or queue's reserve first, then
//! the pool up to the threshold, then (lossless PGs) the headroom; they are freed in the
//! opposite order, headroom first. A threshold is checked when the PG or queue itself gains
//! bytes, as the ASIC checks it per cell: a PG whose threshold shrank because others filled
//! the pool keeps what it holds, and a paused PG resumes on its own departures.

use super::level::Level;
use crate::config::{PoolLayout, Profile};
use std::sync::Arc;

/// What one priority group holds of each part (ingress accounting in mode "pools").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PgUse {
    pub reserved: u64,
    pub shared: u64,
    pub headroom: Level,
}

/// A pool's shared bytes and, for an ingress pool with one, its shared headroom pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PoolUse {
    pub shared: Level,
    pub headroom: Level,
}

/// Where a frame's bytes go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Placement {
    reserved: u64,
    shared: u64,
    headroom: u64,
}

/// The pools' accounting and the PGs' split.
#[derive(Debug)]
pub struct PoolBook {
    layout: Arc<PoolLayout>,
    pg: Vec<[PgUse; 8]>,
    pools: Vec<PoolUse>,
}

impl PoolBook {
    pub fn new(layout: Arc<PoolLayout>) -> PoolBook {
        PoolBook {
            pg: vec![[PgUse::default(); 8]; layout.pg.len()],
            pools: vec![PoolUse::default(); layout.pools.len()],
            layout,
        }
    }

    pub fn layout(&self) -> &PoolLayout {
        &self.layout
    }

    pub fn pool(&self, pool: usize) -> PoolUse {
        self.pools[pool]
    }

    /// The use of the pool named `name`.
    pub fn pool_named(&self, name: &str) -> Option<PoolUse> {
        self.layout.pools.iter().position(|pool| pool.name == name).map(|pool| self.pools[pool])
    }

    pub fn pg(&self, port: usize, priority: usize) -> PgUse {
        self.pg[port][priority]
    }

    fn free(&self, pool: u16) -> u64 {
        let pool = usize::from(pool);
        self.layout.pools[pool].size.saturating_sub(self.pools[pool].shared.bytes)
    }

    /// The most pool bytes a PG or queue of `profile` may hold now.
    pub fn limit(&self, profile: &Profile) -> u64 {
        profile.threshold.limit(self.free(profile.pool))
    }

    /// Where `charge` more bytes of PG (port, priority) go, or `None` if nowhere.
    fn place(&self, port: usize, priority: usize, charge: u64) -> Option<Placement> {
        let Some(profile) = &self.layout.pg[port][priority] else { return Some(Placement::default()) };
        let held = &self.pg[port][priority];
        let reserved = charge.min(profile.reserved - held.reserved);
        let rest = charge - reserved;
        if rest == 0 {
            return Some(Placement { reserved, ..Placement::default() });
        }
        let pool = usize::from(profile.pool);
        if held.shared + rest <= self.limit(profile)
            && self.pools[pool].shared.bytes + rest <= self.layout.pools[pool].size
        {
            return Some(Placement { reserved, shared: rest, headroom: 0 });
        }
        let shared_headroom =
            self.layout.pools[pool].headroom.is_none_or(|size| self.pools[pool].headroom.bytes + rest <= size);
        (held.headroom.bytes + rest <= profile.headroom && shared_headroom).then_some(Placement {
            reserved,
            shared: 0,
            headroom: rest,
        })
    }

    /// Whether PG (port, priority) can take `charge` more bytes.
    pub fn pg_admits(&self, port: usize, priority: usize, charge: u64) -> bool {
        self.place(port, priority, charge).is_some()
    }

    /// Charges `charge` bytes to PG (port, priority); the caller checked [`PoolBook::pg_admits`].
    pub fn charge_pg(&mut self, port: usize, priority: usize, charge: u64) {
        let Some(profile) = self.layout.pg[port][priority] else { return };
        let placement = self.place(port, priority, charge).expect("admission checked before charging");
        let held = &mut self.pg[port][priority];
        let pool = &mut self.pools[usize::from(profile.pool)];
        held.reserved += placement.reserved;
        held.shared += placement.shared;
        pool.shared.add(placement.shared);
        if placement.headroom > 0 {
            held.headroom.add(placement.headroom);
            if self.layout.pools[usize::from(profile.pool)].headroom.is_some() {
                pool.headroom.add(placement.headroom);
            }
        }
    }

    /// Frees `charge` bytes of PG (port, priority): headroom first, then pool, then reserve.
    pub fn release_pg(&mut self, port: usize, priority: usize, charge: u64) {
        let Some(profile) = self.layout.pg[port][priority] else { return };
        let shared_headroom = self.layout.pools[usize::from(profile.pool)].headroom.is_some();
        let held = &mut self.pg[port][priority];
        let pool = &mut self.pools[usize::from(profile.pool)];
        let from_headroom = charge.min(held.headroom.bytes);
        held.headroom.sub(from_headroom);
        if shared_headroom {
            pool.headroom.sub(from_headroom);
        }
        let from_shared = (charge - from_headroom).min(held.shared);
        held.shared -= from_shared;
        pool.shared.sub(from_shared);
        held.reserved -= charge - from_headroom - from_shared;
    }

    /// XOFF and XON points on PG (port, priority)'s whole use, in force now: XOFF at its
    /// reserve plus its threshold (at once while it uses headroom), XON at
    /// `max(xon, XOFF − xon_offset)`. `None` for a PG without a profile.
    pub fn pg_thresholds(&self, port: usize, priority: usize) -> Option<(u64, u64)> {
        let profile = self.layout.pg[port][priority]?;
        let held = &self.pg[port][priority];
        let mut xoff = profile.reserved.saturating_add(self.limit(&profile));
        if held.headroom.bytes > 0 {
            xoff = xoff.min(held.reserved + held.shared + held.headroom.bytes);
        }
        Some((xoff, profile.xon.max(xoff.saturating_sub(profile.xon_offset))))
    }

    /// Whether egress queue (port, priority), holding `bytes`, can take `len` more: its
    /// reserve, then its pool within the threshold and the pool's size.
    pub fn queue_fits(&self, port: usize, priority: usize, bytes: u64, len: u64) -> bool {
        let Some(profile) = &self.layout.queue[port][priority] else { return true };
        let (before, after) = (bytes.saturating_sub(profile.reserved), (bytes + len).saturating_sub(profile.reserved));
        let pool = usize::from(profile.pool);
        after == before
            || (after <= self.limit(profile)
                && self.pools[pool].shared.bytes + (after - before) <= self.layout.pools[pool].size)
    }

    /// Egress queue (port, priority) went from `before` to `after` bytes.
    pub fn queue_changed(&mut self, port: usize, priority: usize, before: u64, after: u64) {
        let Some(profile) = &self.layout.queue[port][priority] else { return };
        let shared = &mut self.pools[usize::from(profile.pool)].shared;
        let (old, new) = (before.saturating_sub(profile.reserved), after.saturating_sub(profile.reserved));
        if new > old {
            shared.add(new - old);
        } else {
            shared.sub(old - new);
        }
    }

    /// Rebuilds the accounting from the PGs' and queues' totals (a new layout on a running
    /// switch): reserve first, the rest in the pool, none in headroom.
    pub fn rebuild(&mut self, ingress: &[[Level; 8]], egress: &[[Level; 8]]) {
        let layout = self.layout.clone();
        *self = PoolBook::new(layout.clone());
        for (port, levels) in ingress.iter().enumerate() {
            for (p, level) in levels.iter().enumerate() {
                let Some(profile) = layout.pg[port][p] else { continue };
                let held = &mut self.pg[port][p];
                held.reserved = level.bytes.min(profile.reserved);
                held.shared = level.bytes - held.reserved;
                self.pools[usize::from(profile.pool)].shared.add(held.shared);
            }
        }
        for (port, levels) in egress.iter().enumerate() {
            for (p, level) in levels.iter().enumerate() {
                self.queue_changed(port, p, 0, level.bytes);
            }
        }
    }

    pub fn reset_high_water(&mut self) {
        for pool in &mut self.pools {
            pool.shared.high_water = pool.shared.bytes;
            pool.headroom.high_water = pool.headroom.bytes;
        }
        for held in self.pg.iter_mut().flatten() {
            held.headroom.high_water = held.headroom.bytes;
        }
    }
}
