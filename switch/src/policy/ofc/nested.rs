//! The nested hierarchy of one egress (port, lossless priority): OFC §III-B, Algorithm 3.
//!
//! Three FIFOs of descriptor indices: the normal queue (q_Id 0), which every arrival joins,
//! and two backup queues. Frames of paused flows leave the head of the normal queue for the
//! *paused queue* (Algorithm 3 lines 7, 13–14). A RESUME puts an order mark behind the
//! paused queue's frames and *rotates* (lines 3–5, 17–20): that backup is now served first,
//! up to the mark, sending the resumed frames and moving frames still paused to the other,
//! empty, backup, which becomes the paused queue; at the mark the normal queue is served
//! again. So every flow's frames leave in order (a resumed flow's older frames go before its
//! newer ones in the normal queue) and a paused frame never holds up another flow.
//!
//! Two points the paper leaves open, decided here:
//! - The paper's `Rotate` toggles `q_Id` modulo 2 while the text rotates the paused queue
//!   1 → 2; we follow the text, as roles: which backup is the paused queue, which one drains.
//! - A RESUME that arrives while a backup is still draining cannot place its mark there
//!   without reordering (frames of the resumed flows already moved to the new paused queue
//!   are older than those still ahead in the draining one). It is deferred: [`NestedQueue::resume`]
//!   reports it, the engine keeps those flows paused until the drain ends
//!   ([`NestedQueue::settle`] returns `true`), then commits the resume and rotates again.

use std::collections::VecDeque;

/// The order mark: the copied RESUME frame of Algorithm 2 line 9.
const ORDER_MARK: u32 = u32::MAX;

#[derive(Clone, Debug, Default)]
pub struct NestedQueue {
    normal: VecDeque<u32>,
    backups: [VecDeque<u32>; 2],
    /// Index in `backups` of the paused queue.
    paused: usize,
    /// The backup served before the normal queue, up to its order mark.
    draining: Option<usize>,
    resume_pending: bool,
    frames: usize,
    /// The most frames the normal queue takes ([`NestedQueue::has_room`]).
    limit: usize,
    rotations: u64,
}

impl NestedQueue {
    /// A queue for up to `frames` frames, allocated as it fills.
    pub fn new(frames: usize) -> NestedQueue {
        NestedQueue { limit: frames, ..Default::default() }
    }

    /// A new bound (a reload): frames beyond it stay, and it has no room until they leave.
    pub fn set_limit(&mut self, frames: usize) {
        self.limit = frames;
    }

    /// Allocates room for the bound now, in the backups too if `nested`, so that the
    /// per-frame path never allocates (the datapath's choice).
    pub fn preallocate(&mut self, nested: bool) {
        self.normal.reserve(self.limit.saturating_sub(self.normal.len()));
        if nested {
            for backup in &mut self.backups {
                backup.reserve((self.limit + 1).saturating_sub(backup.len()));
            }
        }
    }

    /// Whether another frame is within the bound.
    #[inline]
    pub fn has_room(&self) -> bool {
        self.normal.len() < self.limit
    }

    /// An arrival joins the normal queue.
    #[inline]
    pub fn push(&mut self, index: u32) {
        self.normal.push_back(index);
        self.frames += 1;
    }

    /// The frame to send next, if any (valid after [`NestedQueue::settle`]).
    #[inline]
    pub fn head(&self) -> Option<u32> {
        match self.draining {
            Some(d) => self.backups[d].front().copied(),
            None => self.normal.front().copied(),
        }
    }

    /// Removes the head; the caller settles the queue again afterwards.
    #[inline]
    pub fn pop(&mut self) -> u32 {
        let queue = match self.draining {
            Some(d) => &mut self.backups[d],
            None => &mut self.normal,
        };
        let index = queue.pop_front().expect("pop from a queue without a head");
        debug_assert_ne!(index, ORDER_MARK);
        self.frames -= 1;
        index
    }

    /// Every frame held (marks excluded), in no particular order.
    pub fn frames(&self) -> impl Iterator<Item = u32> + '_ {
        self.normal.iter().chain(&self.backups[0]).chain(&self.backups[1]).copied().filter(|&i| i != ORDER_MARK)
    }

    /// Frames held, in all three queues.
    #[inline]
    pub fn len(&self) -> usize {
        self.frames
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.frames == 0
    }

    /// Frames in the paused queue.
    pub fn paused_len(&self) -> usize {
        self.backups[self.paused].len()
    }

    pub fn is_draining(&self) -> bool {
        self.draining.is_some()
    }

    pub fn rotations(&self) -> u64 {
        self.rotations
    }

    /// Counters reset; the queues' state stays.
    pub fn reset_rotations(&mut self) {
        self.rotations = 0;
    }

    /// Moves paused frames off the head until the head may be sent or nothing can be
    /// (Algorithm 3 lines 7–15; at an order mark, lines 17–20 rotate back). Returns `true`
    /// when a drain ended with a deferred RESUME: the caller commits it, then calls
    /// [`NestedQueue::rotate`] and settles again.
    pub fn settle(&mut self, mut is_paused: impl FnMut(u32) -> bool) -> bool {
        loop {
            let from = match self.draining {
                Some(d) => &mut self.backups[d],
                None => &mut self.normal,
            };
            match from.front().copied() {
                Some(ORDER_MARK) => {
                    from.pop_front();
                    self.draining = None;
                    if self.resume_pending {
                        return true;
                    }
                }
                Some(index) if is_paused(index) => {
                    from.pop_front();
                    self.backups[self.paused].push_back(index);
                }
                _ => return false,
            }
        }
    }

    /// A RESUME reached this egress. Returns `true` if it must wait for the current drain
    /// (see the module docs); otherwise the queue has rotated.
    pub fn resume(&mut self) -> bool {
        if self.draining.is_some() {
            self.resume_pending = true;
            return true;
        }
        self.rotate();
        false
    }

    /// Algorithm 3 lines 3–5: the order mark goes behind the paused frames, which are served
    /// next; frames still paused go to the other backup, empty since its own drain ended.
    pub fn rotate(&mut self) {
        debug_assert!(self.draining.is_none());
        self.resume_pending = false;
        let p = self.paused;
        if self.backups[p].is_empty() {
            return;
        }
        debug_assert!(self.backups[1 - p].is_empty());
        self.backups[p].push_back(ORDER_MARK);
        self.draining = Some(p);
        self.paused = 1 - p;
        self.rotations += 1;
    }

    /// Puts every frame back into the normal queue, each flow's frames in order, and forgets
    /// pauses and marks: for a policy change away from OFC, or the watchdog flushing the queue.
    /// Frames in the paused queue are older than those still in the draining one (they came
    /// from its front), and both are older than the normal queue's.
    pub fn flatten(&mut self) {
        if self.backups.iter().all(VecDeque::is_empty) {
            self.draining = None;
            self.resume_pending = false;
            return;
        }
        let mut merged = VecDeque::with_capacity(self.normal.capacity());
        merged.extend(self.backups[self.paused].drain(..));
        if let Some(d) = self.draining {
            merged.extend(self.backups[d].drain(..).filter(|&i| i != ORDER_MARK));
        }
        merged.extend(self.normal.drain(..));
        self.normal = merged;
        self.draining = None;
        self.resume_pending = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A queue with the congested-flow bookkeeping the engine does around it, frames encoded
    /// as flow × 1000 + sequence.
    #[derive(Default)]
    struct Harness {
        queue: NestedQueue,
        /// Paused flows; `true` = resumed, waiting for the current drain to end.
        congested: BTreeMap<u32, bool>,
        next_seq: BTreeMap<u32, u32>,
        sent: Vec<u32>,
    }

    impl Harness {
        fn new() -> Harness {
            Harness { queue: NestedQueue::new(512), ..Default::default() }
        }

        fn settle(&mut self) {
            let congested = &mut self.congested;
            while self.queue.settle(|i| congested.contains_key(&(i / 1000))) {
                congested.retain(|_, resumed| !*resumed);
                self.queue.rotate();
            }
        }

        fn arrive(&mut self, flow: u32) {
            let seq = self.next_seq.entry(flow).or_default();
            self.queue.push(flow * 1000 + *seq);
            *seq += 1;
            self.settle();
        }

        fn pause(&mut self, flows: &[u32]) {
            for &flow in flows {
                self.congested.insert(flow, false);
            }
            self.settle();
        }

        fn resume(&mut self, flows: &[u32]) {
            let deferred = self.queue.is_draining();
            for flow in flows {
                if let Some(resumed) = self.congested.get_mut(flow) {
                    *resumed = true;
                }
            }
            if !deferred {
                self.congested.retain(|_, resumed| !*resumed);
            }
            self.queue.resume();
            self.settle();
        }

        fn send(&mut self) -> Option<u32> {
            self.queue.head()?;
            let index = self.queue.pop();
            self.sent.push(index);
            self.settle();
            Some(index)
        }

        fn held_flows(&self) -> BTreeSet<u32> {
            let q = &self.queue;
            q.normal
                .iter()
                .chain(&q.backups[0])
                .chain(&q.backups[1])
                .filter(|&&i| i != ORDER_MARK)
                .map(|i| i / 1000)
                .collect()
        }
    }

    #[test]
    fn paused_frames_step_aside_and_unpaused_ones_pass() {
        let mut h = Harness::new();
        h.pause(&[1]);
        for flow in [1, 2, 1, 2] {
            h.arrive(flow);
        }
        assert_eq!(h.send(), Some(2000), "flow 1's frame moved to the paused queue");
        assert_eq!(h.send(), Some(2001));
        assert_eq!(h.send(), None);
        assert_eq!(h.queue.paused_len(), 2);
        assert_eq!(h.queue.len(), 2);
    }

    #[test]
    fn a_resume_sends_the_paused_frames_before_newer_ones_of_the_same_flow() {
        let mut h = Harness::new();
        h.pause(&[1, 3]);
        for flow in [1, 3, 1, 3] {
            h.arrive(flow);
        }
        // Newer frames of flow 1 and an unpaused flow arrive while flow 1 is paused.
        h.arrive(1);
        h.arrive(2);
        assert_eq!(h.queue.paused_len(), 5, "the whole normal queue up to flow 2 went aside");
        h.resume(&[1]);
        assert!(h.queue.is_draining(), "rotated: the paused queue is served first");
        let order: Vec<u32> = std::iter::from_fn(|| h.send()).collect();
        assert_eq!(order, [1000, 1001, 1002, 2000], "flow 1 in order, then the normal queue");
        assert!(!h.queue.is_draining(), "the order mark rotated back");
        assert_eq!(h.queue.paused_len(), 2, "flow 3 still paused, in the other backup");
        assert_eq!(h.queue.rotations(), 1);
    }

    #[test]
    fn a_resume_during_a_drain_waits_for_it() {
        let mut h = Harness::new();
        h.pause(&[1, 2]);
        for flow in [2, 1, 2, 1] {
            h.arrive(flow);
        }
        h.resume(&[1]);
        // Draining [2000, 1000, 2001, 1001, mark]: 2000 moves to the new paused queue at once.
        assert_eq!(h.queue.head(), Some(1000));
        h.resume(&[2]);
        assert!(h.congested[&2], "flow 2 resumes only when this drain ends");
        let order: Vec<u32> = std::iter::from_fn(|| h.send()).collect();
        assert_eq!(order, [1000, 1001, 2000, 2001]);
        assert!(h.congested.is_empty());
    }

    #[test]
    fn flatten_keeps_each_flows_order() {
        let mut h = Harness::new();
        h.pause(&[1, 2]);
        for flow in [1, 2, 1, 2] {
            h.arrive(flow);
        }
        h.resume(&[2]);
        h.arrive(1);
        h.queue.flatten();
        h.congested.clear();
        let order: Vec<u32> = std::iter::from_fn(|| h.send()).collect();
        let of = |flow| order.iter().copied().filter(|i| i / 1000 == flow).collect::<Vec<_>>();
        assert_eq!(of(1), [1000, 1001, 1002]);
        assert_eq!(of(2), [2000, 2001]);
    }

    #[derive(Clone, Debug)]
    enum Op {
        Arrive(u32),
        Pause(Vec<u32>),
        Resume(Vec<u32>),
        Send,
    }

    fn op() -> impl Strategy<Value = Op> {
        let flows = || proptest::collection::vec(0u32..6, 1..4);
        prop_oneof![
            4 => (0u32..6).prop_map(Op::Arrive),
            1 => flows().prop_map(Op::Pause),
            1 => flows().prop_map(Op::Resume),
            4 => Just(Op::Send),
        ]
    }

    proptest! {
        /// Random arrivals, PAUSEs, RESUMEs and sends through one egress: every flow's frames
        /// leave in order, none is lost or duplicated, and whenever a frame of an unpaused
        /// flow is held the queue has something to send.
        #[test]
        fn flows_leave_in_order_and_paused_ones_never_block(ops in proptest::collection::vec(op(), 0..300)) {
            let mut h = Harness::new();
            for op in ops {
                match op {
                    Op::Arrive(flow) => h.arrive(flow),
                    Op::Pause(flows) => h.pause(&flows),
                    Op::Resume(flows) => h.resume(&flows),
                    Op::Send => { h.send(); }
                }
                let unpaused_held = h.held_flows().iter().any(|f| !h.congested.contains_key(f));
                prop_assert!(!unpaused_held || h.queue.head().is_some(), "an unpaused flow waits");
            }
            let all: Vec<u32> = h.congested.keys().copied().collect();
            h.resume(&all);
            while h.send().is_some() {}
            prop_assert!(h.queue.is_empty());
            let mut per_flow: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
            for index in &h.sent {
                per_flow.entry(index / 1000).or_default().push(index % 1000);
            }
            for (flow, seqs) in per_flow {
                let expected: Vec<u32> = (0..h.next_seq[&flow]).collect();
                prop_assert_eq!(seqs, expected, "flow {} out of order, lost or duplicated", flow);
            }
        }
    }
}
