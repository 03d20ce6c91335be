//! A network split over two threads, with the results of one (issue 53, "the second core").
//!
//! Conservative synchronisation in windows, with the cables between the two parts as
//! lookahead (Chandy–Misra–Bryant's bound, run as YAWNS-style windows): a frame sent from
//! one part to the other flies at least `lookahead` (the shortest serialisation plus
//! propagation delay of a cable between them), so once both parts have met and agreed
//! that nothing of either happens before `next`, each can handle every event before
//! `next + lookahead` alone. Frames for the other part's nodes wait in an outbox until the
//! parts meet again, then are booked in the other part's queue with the key they were
//! given when sent. The keys ([`crate::rank`]) rank an instant's events by what their
//! senders alone know, so each part handles its events in the order one thread would, and
//! every node sees the same frames at the same instants in the same order: the same run.
//!
//! The hosts are split in halves by index (a fat-tree's pods in order); each switch goes
//! with the half whose hosts are fewer hops away, and of those as far from both (a
//! fat-tree's core) the first half by index goes with the first.
//! What one thread alone has stays out: a tap and lossy cables (whose draws are made in
//! sending order) refuse a split. Traces and pause logs are kept per part and merged in
//! sending order.

use crate::cables::{Cables, arrival_bytes};
use crate::endpoint::Node;
use crate::host::SimHost;
use crate::part::{Check, Crossings, Members, Owners, Part, Shard};
use crate::records::{CHECK_EVERY, SimStats};
use pfcswitch_link::time::Instant;
use pfcswitch_switch::switch::Switch;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// No event: later than any.
const NONE: u64 = u64::MAX;

/// Hosts in halves by index; each switch with the half nearer to it in hops, the first half
/// of the ties with the first.
pub(crate) fn partition(switches: usize, hosts: usize, cables: &Cables) -> Owners {
    let index = |node: Node| match node {
        Node::Switch(s) => s,
        Node::Host(h) => switches + h,
    };
    let mut neighbours = vec![Vec::new(); switches + hosts];
    for (end, wire) in cables.all() {
        neighbours[index(end.node)].push(index(wire.to.node));
    }
    let half = hosts / 2;
    let hops_from = |hosts: std::ops::Range<usize>| {
        let mut hops = vec![u32::MAX; neighbours.len()];
        let mut frontier: Vec<usize> = hosts.map(|h| switches + h).collect();
        frontier.iter().for_each(|&n| hops[n] = 0);
        let mut distance = 0;
        while !frontier.is_empty() {
            distance += 1;
            let mut next = Vec::new();
            for n in frontier {
                for &m in &neighbours[n] {
                    if hops[m] == u32::MAX {
                        hops[m] = distance;
                        next.push(m);
                    }
                }
            }
            frontier = next;
        }
        hops
    };
    let (first, second) = (hops_from(0..half), hops_from(half..hosts));
    // Ties in index order, the first half to the first part: each part's switches in one
    // run of the network's vector (and of the heap, as built), not alternating with the
    // other's, so that the two threads write next to each other only at one boundary:
    // alternating, `websearch-fat-tree` split took 10 % longer.
    let ties = (0..switches).filter(|&s| first[s] == second[s]).count();
    let mut tie = 0;
    let owners = (0..switches).map(|s| match first[s].cmp(&second[s]) {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Greater => 1,
        std::cmp::Ordering::Equal => {
            tie += 1;
            u8::from(tie > ties / 2)
        }
    });
    Owners { switches: owners.collect(), hosts: (0..hosts).map(|h| u8::from(h >= half)).collect() }
}

/// How far one part can run ahead of the other: the shortest flight (the least frame's
/// serialisation plus the propagation delay) of a cable between them.
pub(crate) fn lookahead(cables: &Cables, owners: &Owners) -> Duration {
    (cables.all())
        .filter(|(end, wire)| owners.of(end.node) != owners.of(wire.to.node))
        .map(|(_, wire)| Instant::ZERO + wire.speed.bits_duration(arrival_bytes(0) * 8) + wire.delay)
        .min()
        .map_or(Duration::MAX, |least| least - Instant::ZERO)
}

/// What a split run works on: the network's nodes, state and cables, borrowed apart.
pub(crate) struct Split<'a> {
    pub(crate) switches: &'a mut [Switch],
    pub(crate) hosts: &'a mut [SimHost],
    pub(crate) parts: &'a mut [Part],
    pub(crate) cables: &'a Cables,
    pub(crate) killed: &'a [bool],
    pub(crate) owners: &'a Owners,
    pub(crate) lookahead: Duration,
}

/// Runs a split network until `end`, each part on its own thread (the first on this one).
pub(crate) fn advance(split: Split<'_>, end: Instant, check: &mut Check<'_>) -> bool {
    let Split { switches, hosts, parts, cables, killed, owners, lookahead } = split;
    // Nothing to do before `end` (HPCC's queue monitor looks every 100 ns, idle or not):
    // no threads started.
    if parts.iter_mut().all(|part| part.next_work().is_none_or(|next| next > end.as_nanos())) {
        for part in parts.iter_mut() {
            part.now = part.now.max(end);
        }
        return true;
    }
    let mut switch_sets = by_part(switches, |s| owners.of(Node::Switch(s)));
    let mut host_sets = by_part(hosts, |h| owners.of(Node::Host(h)));
    let mut shards = parts.iter_mut().zip(&mut switch_sets).zip(&mut host_sets).map(|((part, switches), hosts)| {
        Shard { part, switches: &mut switches[..], hosts: &mut hosts[..], cables, killed, owners, one_thread: None }
    });
    let (Some(mut first), Some(mut second)) = (shards.next(), shards.next()) else {
        unreachable!("a network is split in two")
    };
    let meeting = Meeting::default();
    let lookahead = u64::try_from(lookahead.as_nanos()).unwrap_or(NONE);
    std::thread::scope(|scope| {
        let meeting = &meeting;
        let other = scope.spawn(move || run_windows(&mut second, meeting, end, lookahead, None));
        let done = run_windows(&mut first, meeting, end, lookahead, Some(check));
        let done_too = other.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        debug_assert_eq!(done, done_too);
        done
    })
}

/// Each part's nodes, by index (`None` where the other part's are).
fn by_part<T>(nodes: &mut [T], owner: impl Fn(usize) -> usize) -> [Vec<Option<&mut T>>; 2] {
    let mut sets = [Vec::with_capacity(nodes.len()), Vec::with_capacity(nodes.len())];
    for (index, node) in nodes.iter_mut().enumerate() {
        let owner = owner(index);
        sets[1 - owner].push(None);
        sets[owner].push(Some(node));
    }
    sets
}

/// Where the two parts meet between windows. What a part says for a window is in slot
/// `window % 2`: the other part reads it after the window's barrier, before it reaches
/// the next, and the part writes that slot again only after the next.
#[derive(Default)]
struct Meeting {
    barrier: SpinBarrier,
    /// By part: frames from the other part, to book.
    inboxes: [Mutex<Crossings>; 2],
    /// By window parity, by part: the earliest it has to do, or sent the other, in ns.
    next: [[AtomicU64; 2]; 2],
    /// By window parity, by part: events handled and frame hops so far.
    work: [[(AtomicU64, AtomicU64); 2]; 2],
    /// By window parity: the first part's check said stop.
    stop: [AtomicBool; 2],
}

/// Handles one part's events window by window until `end` (or until the first part's
/// `check` says stop, checked every [`CHECK_EVERY`] events of both): false if stopped.
fn run_windows<S, H>(
    shard: &mut Shard<'_, S, H>,
    meeting: &Meeting,
    end: Instant,
    lookahead: u64,
    mut check: Option<&mut Check<'_>>,
) -> bool
where
    S: ?Sized + Members<Switch>,
    H: ?Sized + Members<SimHost>,
{
    let _poison = PoisonOnPanic(&meeting.barrier);
    let (me, other) = (shard.part.index, 1 - shard.part.index);
    let mut next_check = CHECK_EVERY;
    for window in 0usize.. {
        let slot = window % 2;
        let part = &mut *shard.part;
        let sent = part.outbox.earliest().unwrap_or(NONE);
        if !part.outbox.is_empty() {
            part.outbox.move_to(&mut meeting.inboxes[other].lock().expect("the other part panicked"));
        }
        meeting.next[slot][me].store(part.next_work().unwrap_or(NONE).min(sent), Ordering::Relaxed);
        let (events, hops) = &meeting.work[slot][me];
        events.store(part.stats.events, Ordering::Relaxed);
        hops.store(part.stats.frame_hops, Ordering::Relaxed);
        if let Some(check) = check.as_mut() {
            // Both parts' work as of the last meeting: the other's slot of this window
            // may not be written yet.
            let last = &meeting.work[1 - slot];
            let stats = SimStats {
                events: last.iter().map(|(events, _)| events.load(Ordering::Relaxed)).sum(),
                frame_hops: last.iter().map(|(_, hops)| hops.load(Ordering::Relaxed)).sum(),
                ..SimStats::default()
            };
            let stop = window > 0 && stats.events >= next_check && {
                next_check = stats.events + CHECK_EVERY;
                check(part.now, &stats).is_break()
            };
            meeting.stop[slot].store(stop, Ordering::Relaxed);
        }
        meeting.barrier.wait();
        part.receive(&mut meeting.inboxes[me].lock().expect("the other part panicked"));
        if meeting.stop[slot].load(Ordering::Relaxed) {
            return false;
        }
        let next = meeting.next[slot].iter().map(|next| next.load(Ordering::Relaxed)).min().unwrap_or(NONE);
        if next > end.as_nanos() {
            break;
        }
        let until = next.saturating_add(lookahead - 1).min(end.as_nanos());
        shard.advance(Instant::from_nanos(until), &mut |_, _| ControlFlow::Continue(()));
    }
    shard.part.now = shard.part.now.max(end);
    true
}

/// Two threads wait for each other: spinning, as a window is short (tens of microseconds
/// on `websearch-fat-tree`) and the partner usually comes within a few, then asleep, so that
/// on a machine busy with other work the partner can have this core: with four other
/// simulations on the two cores, `sim/tests/split.rs` took 5.5 s yielding instead, 1.4 s
/// sleeping (0.1 s alone). A thread that panics poisons it, so that the other panics too
/// instead of waiting for ever.
#[derive(Default)]
struct SpinBarrier {
    arrived: AtomicUsize,
    generation: AtomicUsize,
    poisoned: AtomicBool,
    /// Threads asleep on `wake` (or about to be): the last to arrive must wake them. A count,
    /// not a flag: a thread waking from one wait may leave after its partner has gone to
    /// sleep in the next, and must not clear what the partner set.
    sleeping: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
}

/// Spins before sleeping: some 20–60 µs.
const SPINS: u32 = 2048;

impl SpinBarrier {
    fn wait(&self) {
        let generation = self.generation.load(Ordering::SeqCst);
        if self.arrived.fetch_add(1, Ordering::AcqRel) == 1 {
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::SeqCst);
            if self.sleeping.load(Ordering::SeqCst) > 0 {
                self.wake_all();
            }
            return;
        }
        let passed = || self.generation.load(Ordering::SeqCst) != generation;
        for _ in 0..SPINS {
            if passed() {
                return;
            }
            std::hint::spin_loop();
        }
        let mut guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        // Set before the last look: whoever arrives after it sees it and wakes this one.
        self.sleeping.fetch_add(1, Ordering::SeqCst);
        while !passed() {
            assert!(!self.poisoned.load(Ordering::SeqCst), "the other thread of a split network panicked");
            guard = self.wake.wait(guard).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        self.sleeping.fetch_sub(1, Ordering::SeqCst);
    }

    fn wake_all(&self) {
        let _guard = self.lock.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        self.wake.notify_all();
    }
}

struct PoisonOnPanic<'a>(&'a SpinBarrier);

impl Drop for PoisonOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.poisoned.store(true, Ordering::SeqCst);
            self.0.wake_all();
        }
    }
}
