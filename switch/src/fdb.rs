//! The forwarding database: MAC learning with aging on the caller's clock, plus static
//! entries. Capacity is fixed when the switch is built; a full table stops learning (those
//! destinations are flooded) instead of allocating on the per-frame path.
//!
//! An entry names a set of ports: one for a learned address, one or several for a static
//! one. Several ports are an ECMP group; the switch picks one per flow ([`pick`]).
//!
//! The table remembers its last learn and its last hit, as VPP's L2 nodes do: a burst from
//! one port is mostly one flow, or flows to one destination under incast, and the memo spares
//! those frames the hashing and the probe. A remembered learn refreshes an entry's age at
//! most once per [`LEARN_REFRESH`]: the age the control plane shows may be that much older.

use pfcswitch_link::time::Instant;
use pfcswitch_wire::EthernetAddress;
use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Duration;

/// Default number of addresses a switch learns.
pub const DEFAULT_FDB_CAPACITY: usize = 4096;

/// How stale a learned entry's age may grow while frames from its address keep coming on
/// its port: the resolution of the ages shown, far below any aging time a user sets.
pub const LEARN_REFRESH: Duration = Duration::from_millis(1);

/// One entry as the control plane shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FdbEntry {
    pub mac: EthernetAddress,
    /// Bit i: port i (one bit, or an ECMP group).
    pub ports: u64,
    /// Static entries never age and are never moved by learning.
    pub is_static: bool,
    /// Time since a frame from this address was last seen (zero for static entries).
    pub age: Duration,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    ports: u64,
    last_seen: Instant,
    is_static: bool,
}

/// Multiply-shift hashing of the 48-bit address: deterministic and a few instructions,
/// unlike SipHash; MAC addresses are not attacker-chosen keys in a test fabric.
#[derive(Default)]
struct MacHasher(u64);

impl Hasher for MacHasher {
    fn finish(&self) -> u64 {
        self.0.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 << 8) | u64::from(byte);
        }
    }
}

/// A learn that changed nothing the table shows: `mac` was seen on `port`, and its entry
/// was refreshed (or is static); it is not refreshed again before `refresh` (a deadline
/// rather than the time of the refresh: one comparison a frame, not a subtraction and a
/// comparison of durations).
#[derive(Clone, Copy, Debug)]
struct LearnMemo {
    mac: EthernetAddress,
    port: usize,
    refresh: Instant,
}

/// A hit: `mac`'s entry names `ports` until `until` (while the table is not changed).
#[derive(Clone, Copy, Debug)]
struct HitMemo {
    mac: EthernetAddress,
    ports: u64,
    until: Instant,
}

#[derive(Debug)]
pub struct Fdb {
    table: HashMap<EthernetAddress, Slot, BuildHasherDefault<MacHasher>>,
    capacity: usize,
    aging: Duration,
    /// Ports for unicast the table misses (0: none, it floods).
    default_route: u64,
    last_learn: Option<LearnMemo>,
    /// A cell: a lookup reads the table, and remembers what it found.
    last_hit: Cell<Option<HitMemo>>,
    /// Counts the changes that may change where an address routes at a given instant.
    generation: u64,
}

impl Fdb {
    /// A table for `capacity` learned entries (static ones come on top), allocated as it fills.
    pub fn new(capacity: usize, aging: Duration) -> Fdb {
        Fdb {
            table: HashMap::default(),
            capacity,
            aging,
            default_route: 0,
            last_learn: None,
            last_hit: Cell::new(None),
            generation: 0,
        }
    }

    /// Forgets the memos: the table changed.
    fn forget(&mut self) {
        self.last_learn = None;
        self.last_hit.set(None);
        self.generation += 1;
    }

    /// Changes whenever [`Fdb::route`] may answer differently at the same instant (an entry
    /// added, moved, revived from expiry or removed, the default route set): a caller that
    /// kept an answer keeps it while this stays the same.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Room for `capacity` entries now, so that learning never allocates (the datapath's choice).
    pub fn preallocate(&mut self) {
        self.table.reserve(self.capacity.saturating_sub(self.table.len()));
    }

    /// A static entry towards `ports` (bit i: port i; several bits: an ECMP group).
    pub fn add_static(&mut self, mac: EthernetAddress, ports: u64) {
        self.forget();
        self.table.insert(mac, Slot { ports, last_seen: Instant::ZERO, is_static: true });
    }

    /// Records that `mac` sent a frame on `port` at `now`.
    pub fn learn(&mut self, now: Instant, mac: EthernetAddress, port: usize) {
        if let Some(memo) = self.last_learn
            && memo.mac == mac
            && memo.port == port
            && now < memo.refresh
        {
            return;
        }
        if !mac.is_unicast() {
            return;
        }
        if let Some(slot) = self.table.get_mut(&mac) {
            if !slot.is_static {
                if slot.ports != 1 << port {
                    self.last_hit.set(None);
                    self.generation += 1;
                } else if now - slot.last_seen > self.aging {
                    self.generation += 1;
                }
                *slot = Slot { ports: 1 << port, last_seen: now, is_static: false };
            }
            self.last_learn = Some(LearnMemo { mac, port, refresh: now + LEARN_REFRESH.min(self.aging) });
            return;
        }
        if self.table.len() >= self.capacity {
            self.purge_expired(now);
            if self.table.len() >= self.capacity {
                return;
            }
        }
        self.table.insert(mac, Slot { ports: 1 << port, last_seen: now, is_static: false });
        self.generation += 1;
        self.last_learn = Some(LearnMemo { mac, port, refresh: now + LEARN_REFRESH.min(self.aging) });
    }

    /// The ports towards `mac` (bit i: port i), unless unknown or aged out.
    pub fn lookup(&self, now: Instant, mac: EthernetAddress) -> Option<u64> {
        if let Some(memo) = self.last_hit.get()
            && memo.mac == mac
            && now <= memo.until
        {
            return Some(memo.ports);
        }
        let slot = self.table.get(&mac)?;
        if self.expired(now, slot) {
            return None;
        }
        let until = if slot.is_static { Instant::from_nanos(u64::MAX) } else { slot.last_seen + self.aging };
        self.last_hit.set(Some(HitMemo { mac, ports: slot.ports, until }));
        Some(slot.ports)
    }

    /// Where unicast to `mac` goes: its entry, else the default route if there is one.
    pub fn route(&self, now: Instant, mac: EthernetAddress) -> Option<u64> {
        self.lookup(now, mac).or((self.default_route != 0).then_some(self.default_route))
    }

    /// `fdb.default_route` as a port set (0: none).
    pub fn set_default_route(&mut self, ports: u64) {
        self.default_route = ports;
        self.generation += 1;
    }

    /// The default route's ports (0: none).
    pub fn default_route(&self) -> u64 {
        self.default_route
    }

    fn expired(&self, now: Instant, slot: &Slot) -> bool {
        !slot.is_static && now - slot.last_seen > self.aging
    }

    fn purge_expired(&mut self, now: Instant) {
        self.forget();
        let aging = self.aging;
        self.table.retain(|_, slot| slot.is_static || now - slot.last_seen <= aging);
    }

    /// Live entries sorted by (first) port then address, for the control plane.
    pub fn entries(&self, now: Instant) -> Vec<FdbEntry> {
        let mut entries: Vec<FdbEntry> = self
            .table
            .iter()
            .filter(|(_, slot)| !self.expired(now, slot))
            .map(|(&mac, slot)| FdbEntry {
                mac,
                ports: slot.ports,
                is_static: slot.is_static,
                age: if slot.is_static { Duration::ZERO } else { now - slot.last_seen },
            })
            .collect();
        entries.sort_by_key(|e| (e.ports.trailing_zeros(), e.ports, e.mac));
        entries
    }

    /// Replaces the aging time and the static entries (a configuration reload).
    pub fn reconfigure(&mut self, aging: Duration, statics: &[(EthernetAddress, u64)]) {
        self.forget();
        self.aging = aging;
        self.table.retain(|_, slot| !slot.is_static);
        for &(mac, ports) in statics {
            self.add_static(mac, ports);
        }
    }

    /// Forgets the addresses learned on `port` (its link went down); static entries stay.
    pub fn flush_port(&mut self, port: usize) {
        self.forget();
        self.table.retain(|_, slot| slot.is_static || slot.ports != 1 << port);
    }

    /// Forgets every learned (non-static) address.
    pub fn flush(&mut self) {
        self.forget();
        self.table.retain(|_, slot| slot.is_static);
    }
}

/// The port of `ports` (bit i: port i, at least one bit) that carries the flow with hash
/// `flow`: always the same one for the same flow and set, so a flow is never reordered;
/// flows spread evenly over the group.
pub fn pick(ports: u64, flow: u32) -> usize {
    let count = ports.count_ones();
    debug_assert!(count > 0, "an empty port set");
    // Multiply-shift maps the hash onto 0..count without the bias of the low bits a modulo keeps.
    let mut rank = ((u64::from(flow) * u64::from(count)) >> 32) as u32;
    let mut rest = ports;
    while rank > 0 {
        rest &= rest - 1;
        rank -= 1;
    }
    rest.trailing_zeros() as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 0xA]);
    const B: EthernetAddress = EthernetAddress([2, 0, 0, 0, 0, 0xB]);

    fn at(secs: u64) -> Instant {
        Instant::from_nanos(secs * 1_000_000_000)
    }

    #[test]
    fn learns_moves_and_ages() {
        let mut fdb = Fdb::new(16, Duration::from_secs(300));
        fdb.learn(at(0), A, 1);
        assert_eq!(fdb.lookup(at(1), A), Some(1 << 1));
        fdb.learn(at(2), A, 3);
        assert_eq!(fdb.lookup(at(2), A), Some(1 << 3), "a station move follows the newest frame");
        assert_eq!(fdb.lookup(at(302), A), Some(1 << 3));
        assert_eq!(fdb.lookup(at(303), A), None, "aged out after 300 s of silence");
        fdb.learn(at(0), EthernetAddress::BROADCAST, 2);
        assert_eq!(fdb.lookup(at(0), EthernetAddress::BROADCAST), None, "group addresses are never learned");
    }

    #[test]
    fn the_memos_never_hide_a_move_a_flush_or_an_expiry() {
        let ms = |n: u64| Instant::from_nanos(n * 1_000_000);
        let mut fdb = Fdb::new(16, Duration::from_secs(300));
        fdb.learn(ms(0), A, 1);
        assert_eq!(fdb.lookup(ms(0), A), Some(1 << 1));
        fdb.learn(ms(0) + Duration::from_micros(500), A, 1);
        let age = |fdb: &Fdb, now| fdb.entries(now)[0].age;
        assert_eq!(age(&fdb, ms(1)), Duration::from_millis(1), "refreshed at most once a millisecond");
        fdb.learn(ms(1), A, 1);
        assert_eq!(age(&fdb, ms(1)), Duration::ZERO);
        fdb.learn(ms(1), A, 2);
        assert_eq!(fdb.lookup(ms(1), A), Some(1 << 2), "a move within the millisecond is seen at once");
        fdb.flush_port(2);
        assert_eq!(fdb.lookup(ms(1), A), None, "a flush forgets the remembered hit");
        fdb.learn(ms(2), A, 3);
        assert_eq!(fdb.lookup(ms(2), A), Some(1 << 3));
        assert_eq!(fdb.lookup(ms(300_002), A), Some(1 << 3));
        assert_eq!(fdb.lookup(ms(300_003), A), None, "a remembered hit ages out with its entry");
        fdb.add_static(A, 0b11);
        assert_eq!(fdb.lookup(ms(300_003), A), Some(0b11), "a static entry replaces the remembered one");
    }

    #[test]
    fn static_entries_win_and_never_age() {
        let mut fdb = Fdb::new(16, Duration::from_secs(1));
        fdb.add_static(A, 0b101);
        fdb.learn(at(5), A, 2);
        assert_eq!(fdb.lookup(at(1000), A), Some(0b101), "an ECMP group stays as configured");
        fdb.flush();
        assert_eq!(
            fdb.entries(at(1000)),
            vec![FdbEntry { mac: A, ports: 0b101, is_static: true, age: Duration::ZERO }]
        );
    }

    #[test]
    fn a_full_table_stops_learning_until_entries_expire() {
        let mut fdb = Fdb::new(1, Duration::from_secs(10));
        fdb.learn(at(0), A, 0);
        fdb.learn(at(1), B, 1);
        assert_eq!(fdb.lookup(at(1), B), None, "no room: B is flooded");
        fdb.learn(at(20), B, 1);
        assert_eq!(fdb.lookup(at(20), B), Some(1 << 1), "A expired and made room");
    }

    #[test]
    fn a_flow_keeps_its_port_and_flows_spread_over_the_group() {
        let group = 0b1011_0000;
        let mut per_port = [0u32; 8];
        for flow in 0..30_000u32 {
            let hash = flow.wrapping_mul(0x9E37_79B9);
            let port = pick(group, hash);
            assert_eq!(pick(group, hash), port, "the same flow, the same port");
            assert!(group & (1 << port) != 0, "a port of the group");
            per_port[port] += 1;
        }
        for port in [4, 5, 7] {
            assert!((9_000..11_000).contains(&per_port[port]), "even spread: {per_port:?}");
        }
        assert_eq!(pick(1 << 6, 12345), 6, "a single port is itself");
    }
}
