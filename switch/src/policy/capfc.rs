//! CaPFC, congestion-aware PFC, as in the CaPFC paper §II
//! (../shared/papers/capfc-congestion-aware-pfc.md).
//!
//! - §II-C: the ingress state I(i,p) is PFC's: XOFF at the ingress XOFF threshold, XON at XON.
//! - §II-D: each lossless egress queue (o,p) counts arrivals per input, C(i,o,p), only while
//!   its occupancy is at or above WARN, and resets them when it falls to WARN or below. At or
//!   above the egress XOFF threshold it sets the congestion signal E(i,o,p) for the heaviest
//!   contributor (Stop-Max, Algorithm 1) or for the fewest inputs whose cumulative share of
//!   the counts reaches CUT (Stop-Calibrate, Algorithm 2). At egress XON every E(·,o,p) clears.
//! - §II-E: D(i,p) = I(i,p) ∨ ⋁o E(i,o,p) drives XOFF/XON out of input i. Signals travel only
//!   on a change of state: D is recomputed when I or one E changes, and XOFF/XON is asked for
//!   only when D changes. Egress queues never stop ingress scheduling: a full one drops.
//!
//! Ties go to the lowest input port, so runs are deterministic. Counters, signals and states
//! are dense arrays sized ports² × lossless priorities, allocated once.

use crate::config::CapfcAlgorithm;
use crate::policy::interface::{EgressEvent, IngressLevel, Policy, PolicyActions, hysteresis};
use pfcswitch_wire::Pcp;

/// The egress queues' XOFF/XON/WARN in bytes (the ingress XOFF/XON are PFC's, given with
/// each ingress change).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapfcThresholds {
    pub egress_xoff: u64,
    pub egress_xon: u64,
    pub egress_warn: u64,
}

#[derive(Clone, Debug)]
pub struct Capfc {
    ports: usize,
    /// Lossless priority → its slot in the dense arrays.
    slot: [Option<usize>; 8],
    slots: usize,
    algorithm: CapfcAlgorithm,
    /// CUT in millionths (integer arithmetic on the counts).
    cut_ppm: u64,
    thresholds: CapfcThresholds,
    /// I(i,p), by `ingress_index`.
    ingress_state: Vec<bool>,
    /// D(i,p), by `ingress_index`: the XOFF state asked of the transmitter.
    decision: Vec<bool>,
    /// How many egress queues signal E(i,o,p) = 1, by `ingress_index`: D without a scan.
    signals: Vec<u32>,

    /// C(i,o,p), by `egress_index`.
    counters: Vec<u32>,
    /// E(i,o,p), by `egress_index`.
    egress_signal: Vec<bool>,
    /// Times E(i,o,p) was raised, by `egress_index`: whom each queue blamed.
    signal_activations: Vec<u64>,
    /// Whether (o,p) is counting (occupancy ≥ WARN), by `queue_index`. While it is not, its
    /// counters are all zero.
    counting: Vec<bool>,
    /// How many inputs (o,p) signals, by `queue_index`: below XON with none, nothing to clear.
    signalled: Vec<u32>,
    /// Times (o,p) started counting, by `queue_index`.
    warn_activations: Vec<u64>,
    /// Inputs by descending count, for Stop-Calibrate (scratch, allocated once).
    order: Vec<usize>,
}

/// One egress queue's view, for reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapfcQueueState {
    pub counting: bool,
    pub warn_activations: u64,
    /// C(i,o,p) per input i.
    pub counters: Vec<u32>,
    /// Inputs with E(i,o,p) = 1.
    pub signalled: Vec<usize>,
    /// Times E(i,o,p) was raised, per input i.
    pub signal_activations: Vec<u64>,
}

impl Capfc {
    pub fn new(ports: usize, lossless: u8, algorithm: CapfcAlgorithm, cut: f64, thresholds: CapfcThresholds) -> Capfc {
        let mut slot = [None; 8];
        let mut slots = 0;
        for pcp in Pcp::ALL.iter().filter(|p| lossless & p.mask() != 0) {
            slot[pcp.index()] = Some(slots);
            slots += 1;
        }
        let pairs = ports * slots;
        Capfc {
            ports,
            slot,
            slots,
            algorithm,
            cut_ppm: (cut * 1e6).round() as u64,
            thresholds,
            ingress_state: vec![false; pairs],
            decision: vec![false; pairs],
            signals: vec![0; pairs],
            signal_activations: vec![0; pairs * ports],
            counters: vec![0; pairs * ports],
            egress_signal: vec![false; pairs * ports],
            counting: vec![false; pairs],
            signalled: vec![0; pairs],
            warn_activations: vec![0; pairs],
            order: Vec::with_capacity(ports),
        }
    }

    fn ingress_index(&self, port: usize, slot: usize) -> usize {
        port * self.slots + slot
    }

    fn queue_index(&self, egress: usize, slot: usize) -> usize {
        egress * self.slots + slot
    }

    /// (o,p)'s counters and signals for all inputs start here.
    fn egress_base(&self, egress: usize, slot: usize) -> usize {
        self.queue_index(egress, slot) * self.ports
    }

    /// D(i,p): whether input `port` is asked to pause `priority` upstream.
    pub fn decision(&self, port: usize, priority: Pcp) -> bool {
        self.slot[priority.index()].is_some_and(|s| self.decision[self.ingress_index(port, s)])
    }

    /// I(i,p).
    pub fn ingress_congested(&self, port: usize, priority: Pcp) -> bool {
        self.slot[priority.index()].is_some_and(|s| self.ingress_state[self.ingress_index(port, s)])
    }

    /// Egress queue (o,p)'s counters and signals; `None` for a lossy priority.
    pub fn queue_state(&self, egress: usize, priority: Pcp) -> Option<CapfcQueueState> {
        let s = self.slot[priority.index()]?;
        let base = self.egress_base(egress, s);
        let q = self.queue_index(egress, s);
        Some(CapfcQueueState {
            counting: self.counting[q],
            warn_activations: self.warn_activations[q],
            counters: self.counters[base..base + self.ports].to_vec(),
            signalled: (0..self.ports).filter(|&i| self.egress_signal[base + i]).collect(),
            signal_activations: self.signal_activations[base..base + self.ports].to_vec(),
        })
    }

    /// D(i,p) = I(i,p) ∨ ⋁o E(i,o,p), by `ingress_index`.
    fn wanted(&self, index: usize) -> bool {
        self.ingress_state[index] || self.signals[index] > 0
    }

    /// Recomputes D(i,p) and tells the transmitter only if it changed.
    fn update_decision(&mut self, port: usize, priority: Pcp, slot: usize, actions: &mut PolicyActions<'_>) {
        let index = self.ingress_index(port, slot);
        let decision = self.wanted(index);
        if decision != self.decision[index] {
            self.decision[index] = decision;
            actions.set_xoff(port, priority, decision);
        }
    }

    fn set_signal(
        &mut self,
        input: usize,
        egress: usize,
        priority: Pcp,
        slot: usize,
        on: bool,
        actions: &mut PolicyActions<'_>,
    ) {
        let at = self.egress_base(egress, slot) + input;
        if self.egress_signal[at] == on {
            return;
        }
        self.egress_signal[at] = on;
        let index = self.ingress_index(input, slot);
        let queue = self.queue_index(egress, slot);
        if on {
            self.signals[index] += 1;
            self.signalled[queue] += 1;
            self.signal_activations[at] += 1;
        } else {
            self.signals[index] -= 1;
            self.signalled[queue] -= 1;
        }
        self.update_decision(input, priority, slot, actions);
    }

    /// Algorithm 1 steps 10–13 or Algorithm 2: the inputs to signal for a queue at XOFF.
    fn signal_contributors(&mut self, egress: usize, priority: Pcp, slot: usize, actions: &mut PolicyActions<'_>) {
        let base = self.egress_base(egress, slot);
        let counts = &self.counters[base..base + self.ports];
        match self.algorithm {
            CapfcAlgorithm::Max => {
                // The first maximum: ties go to the lowest port.
                let (heaviest, &count) =
                    counts.iter().enumerate().rev().max_by_key(|&(_, c)| *c).expect("a switch has ports");
                if count > 0 {
                    self.set_signal(heaviest, egress, priority, slot, true, actions);
                }
            }
            CapfcAlgorithm::Calibrate => {
                let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
                if total == 0 {
                    return;
                }
                let mut order = std::mem::take(&mut self.order);
                order.clear();
                order.extend((0..self.ports).filter(|&i| counts[i] > 0));
                order.sort_by_key(|&i| (std::cmp::Reverse(counts[i]), i));
                let mut cumulative = 0u64;
                for &input in &order {
                    cumulative += u64::from(self.counters[base + input]);
                    self.set_signal(input, egress, priority, slot, true, actions);
                    if cumulative * 1_000_000 >= total * self.cut_ppm {
                        break;
                    }
                }
                self.order = order;
            }
        }
    }
}

impl Policy for Capfc {
    /// §II-C: I(i,p) with PFC's hysteresis.
    fn on_ingress(&mut self, port: usize, priority: Pcp, level: IngressLevel, actions: &mut PolicyActions<'_>) {
        let Some(slot) = self.slot[priority.index()] else { return };
        let index = self.ingress_index(port, slot);
        let Some(state) = hysteresis(level.bytes, level.xoff, level.xon) else { return };
        if state != self.ingress_state[index] {
            self.ingress_state[index] = state;
            self.update_decision(port, priority, slot, actions);
        }
    }

    /// A pause left by the previous policy counts as ingress congestion until the ingress
    /// queue falls to XON, so that CaPFC is the one to release it.
    fn adopt(&mut self, port: usize, priority: Pcp, asserted: bool) {
        let Some(slot) = self.slot[priority.index()] else { return };
        let index = self.ingress_index(port, slot);
        self.ingress_state[index] = asserted;
        self.decision[index] = self.wanted(index);
    }

    /// §II-D, Algorithm 1 (enqueue: steps 6–13; dequeue: steps 15–20).
    fn on_egress(&mut self, event: &EgressEvent, actions: &mut PolicyActions<'_>) {
        let Some(slot) = self.slot[event.priority.index()] else { return };
        let (o, p, bytes) = (event.egress, event.priority, event.queue_bytes);
        let q = self.queue_index(o, slot);
        let base = self.egress_base(o, slot);
        let t = self.thresholds;
        if event.enqueued {
            if bytes >= t.egress_warn {
                if !self.counting[q] {
                    self.counting[q] = true;
                    self.warn_activations[q] += 1;
                }
                self.counters[base + event.ingress] += 1;
            }
            if bytes >= t.egress_xoff {
                self.signal_contributors(o, p, slot, actions);
            }
        } else {
            // Both only on the way down: a queue that is not counting holds no counts, and
            // one that signals nobody has nothing to clear.
            if bytes <= t.egress_warn && self.counting[q] {
                self.counting[q] = false;
                self.counters[base..base + self.ports].fill(0);
            }
            if bytes <= t.egress_xon && self.signalled[q] > 0 {
                for input in 0..self.ports {
                    self.set_signal(input, o, p, slot, false, actions);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::XoffTransmitter;
    use pfcswitch_link::time::Instant;
    use pfcswitch_link::units::BitRate;
    use pfcswitch_wire::FlowKey;

    const P3: Pcp = Pcp::from_low_bits(3);
    const KB: u64 = 1000;
    const THRESHOLDS: CapfcThresholds =
        CapfcThresholds { egress_xoff: 25 * KB, egress_xon: 20 * KB, egress_warn: 20 * KB };

    struct Harness {
        capfc: Capfc,
        xoff: XoffTransmitter,
    }

    impl Harness {
        fn new(algorithm: CapfcAlgorithm, cut: f64) -> Harness {
            let speeds = vec![BitRate::gbps(1); 5];
            Harness {
                capfc: Capfc::new(5, P3.mask(), algorithm, cut, THRESHOLDS),
                xoff: XoffTransmitter::new(&speeds, 65535),
            }
        }

        fn egress(&mut self, ingress: usize, egress: usize, queue_bytes: u64, enqueued: bool) {
            let event = EgressEvent {
                ingress,
                egress,
                priority: P3,
                len: 1000,
                flow: FlowKey::default(),
                queue_bytes,
                enqueued,
            };
            self.capfc.on_egress(&event, &mut PolicyActions::new(Instant::ZERO, &mut self.xoff));
        }

        fn ingress(&mut self, port: usize, bytes: u64) {
            let level = IngressLevel { bytes, xoff: 50 * KB, xon: 40 * KB };
            self.capfc.on_ingress(port, P3, level, &mut PolicyActions::new(Instant::ZERO, &mut self.xoff));
        }

        /// Enqueues frames from the given inputs at egress 4, the queue growing 1 KB each.
        fn arrivals(&mut self, from: &[usize], start: u64) -> u64 {
            let mut bytes = start;
            for &i in from {
                bytes += KB;
                self.egress(i, 4, bytes, true);
            }
            bytes
        }

        fn paused(&self) -> Vec<usize> {
            (0..5).filter(|&i| self.capfc.decision(i, P3)).collect()
        }

        fn asserted(&self) -> Vec<usize> {
            (0..5).filter(|&i| self.xoff.asserted(i) & P3.mask() != 0).collect()
        }

        fn counters(&self) -> Vec<u32> {
            self.capfc.queue_state(4, P3).unwrap().counters
        }
    }

    #[test]
    fn counters_count_only_at_or_above_warn_and_reset_at_warn() {
        let mut h = Harness::new(CapfcAlgorithm::Max, 0.8);
        h.arrivals(&[0, 1, 1], 10 * KB); // 11, 12, 13 KB: below WARN
        assert_eq!(h.counters(), [0; 5]);
        let bytes = h.arrivals(&[0, 1, 1], 19 * KB); // 20, 21, 22 KB: counted
        assert_eq!(h.counters(), [1, 2, 0, 0, 0]);
        assert_eq!(h.capfc.queue_state(4, P3).unwrap().warn_activations, 1);
        h.egress(1, 4, bytes - KB, false); // 21 KB: still above WARN
        assert_eq!(h.counters(), [1, 2, 0, 0, 0]);
        h.egress(1, 4, 20 * KB, false); // at WARN: reset
        assert_eq!(h.counters(), [0; 5]);
        assert!(!h.capfc.queue_state(4, P3).unwrap().counting);
        h.arrivals(&[2], 20 * KB);
        assert_eq!((h.counters(), h.capfc.queue_state(4, P3).unwrap().warn_activations), (vec![0, 0, 1, 0, 0], 2));
    }

    #[test]
    fn stop_max_signals_the_heaviest_contributor_then_the_next_as_congestion_persists() {
        let mut h = Harness::new(CapfcAlgorithm::Max, 0.8);
        let bytes = h.arrivals(&[0, 1, 1, 1, 0, 2], 19 * KB); // up to 25 KB = XOFF
        assert_eq!(h.paused(), [1], "input 1 sent 3 of the 6 counted frames");
        assert_eq!(h.asserted(), [1], "XOFF goes out of input 1 only");
        let bytes = h.arrivals(&[0, 0, 0], bytes); // input 0 now leads 5 to 3
        assert_eq!(h.paused(), [0, 1], "inputs are added one by one while congestion persists");
        let blamed = |h: &Harness| h.capfc.queue_state(4, P3).unwrap().signal_activations;
        assert_eq!(blamed(&h), [1, 1, 0, 0, 0], "input 2 contributed, but was never the heaviest");
        // Egress never pauses ingress: nothing else happens to the other inputs.
        assert_eq!(h.capfc.queue_state(4, P3).unwrap().signalled, [0, 1]);
        // Draining to XON clears every E(·,o,p) and with it XOFF.
        h.egress(0, 4, bytes - 5 * KB, false);
        assert_eq!(h.paused(), [0, 1], "above XON the signals stay");
        h.egress(0, 4, 20 * KB, false);
        assert!(h.paused().is_empty() && h.asserted().is_empty());
        h.ingress(3, 60 * KB);
        assert_eq!(h.paused(), [3], "its own ingress XOFF pauses input 3");
        assert_eq!(blamed(&h), [1, 1, 0, 0, 0], "clearing E, and I's pauses, blame no one");
    }

    #[test]
    fn stop_max_breaks_ties_towards_the_lowest_port() {
        let mut h = Harness::new(CapfcAlgorithm::Max, 0.8);
        h.arrivals(&[3, 2, 3, 2, 1, 1], 19 * KB);
        assert_eq!(h.paused(), [1], "1, 2 and 3 tie at 2: the lowest port is chosen");
    }

    #[test]
    fn stop_calibrate_signals_the_fewest_inputs_whose_share_reaches_cut() {
        let mut h = Harness::new(CapfcAlgorithm::Calibrate, 0.8);
        // 20..24 KB: counted, below XOFF; nothing is signalled.
        let bytes = h.arrivals(&[0, 0, 0, 1, 1], 19 * KB);
        assert!(h.paused().is_empty());
        // At 25 KB (XOFF) the counts are 3, 2, 1 of 6: input 0 is 50%, with input 1 83% ≥ 80%.
        let bytes = h.arrivals(&[2], bytes);
        assert_eq!(h.paused(), [0, 1]);
        // Input 2 keeps coming while the queue is above XOFF: 3, 2, 4 of 9 → 2 (44%), 0 (78%),
        // 1 (100%); all three are now signalled.
        h.arrivals(&[2, 2, 2], bytes);
        assert_eq!(h.paused(), [0, 1, 2]);
        let mut h = Harness::new(CapfcAlgorithm::Calibrate, 0.5);
        h.arrivals(&[0, 0, 1, 2, 3, 0], 19 * KB);
        assert_eq!(h.paused(), [0], "input 0's 3 of 6 reach a CUT of 50% alone");
    }

    #[test]
    fn cut_of_one_pauses_every_contributing_input() {
        let mut h = Harness::new(CapfcAlgorithm::Calibrate, 1.0);
        h.arrivals(&[0, 0, 0, 0, 1, 3], 19 * KB);
        assert_eq!(h.paused(), [0, 1, 3], "every input with a frame counted, not input 2");
    }

    #[test]
    fn the_decision_is_the_or_of_ingress_and_egress_states() {
        let mut h = Harness::new(CapfcAlgorithm::Max, 0.8);
        h.ingress(1, 50 * KB);
        assert!(h.capfc.ingress_congested(1, P3) && h.paused() == [1]);
        let bytes = h.arrivals(&[1, 1, 1, 1, 1, 1], 19 * KB);
        assert_eq!(h.capfc.queue_state(4, P3).unwrap().signalled, [1]);
        h.ingress(1, 40 * KB); // I clears; E still holds D
        assert!(!h.capfc.ingress_congested(1, P3));
        assert_eq!((h.paused(), h.asserted()), (vec![1], vec![1]));
        h.ingress(1, 50 * KB); // I sets again: D was already 1, no new signal
        h.egress(1, 4, bytes - 10 * KB, false); // egress XON: E clears; I holds D
        assert_eq!(h.paused(), [1]);
        h.ingress(1, 30 * KB);
        assert!(h.paused().is_empty() && h.asserted().is_empty());
    }

    #[test]
    fn a_pause_adopted_from_another_policy_is_released_at_xon() {
        let mut h = Harness::new(CapfcAlgorithm::Max, 0.8);
        h.xoff.set(Instant::ZERO, 2, P3, true); // left by PFC
        h.capfc.adopt(2, P3, true);
        h.ingress(2, 45 * KB); // between XON and XOFF: the pause holds
        assert_eq!((h.paused(), h.asserted()), (vec![2], vec![2]));
        h.ingress(2, 40 * KB);
        assert!(h.paused().is_empty() && h.asserted().is_empty());
    }

    #[test]
    fn lossy_priorities_are_left_alone() {
        let mut h = Harness::new(CapfcAlgorithm::Max, 0.8);
        let lossy = Pcp::from_low_bits(0);
        for bytes in (1..40).map(|k| k * KB) {
            let event = EgressEvent {
                ingress: 0,
                egress: 4,
                priority: lossy,
                len: 1000,
                flow: FlowKey::default(),
                queue_bytes: bytes,
                enqueued: true,
            };
            h.capfc.on_egress(&event, &mut PolicyActions::new(Instant::ZERO, &mut h.xoff));
        }
        h.capfc.on_ingress(
            0,
            lossy,
            IngressLevel { bytes: 60 * KB, xoff: 50 * KB, xon: 40 * KB },
            &mut PolicyActions::new(Instant::ZERO, &mut h.xoff),
        );
        assert!(!h.capfc.decision(0, lossy) && h.xoff.asserted(0) == 0);
        assert!(h.capfc.queue_state(4, lossy).is_none());
    }
}
