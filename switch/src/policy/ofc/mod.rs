//! OFC, original-congestion-based fine-grained PFC, as in the OFC paper §III
//! (../shared/papers/ofc-original-congestion-fine-grained-pfc.md).
//!
//! Per port and lossless priority the engine keeps the three tables of §III, each a
//! [`FlowTable`] of configured capacity (`policy.flow_table_capacity`), allocated once:
//! - `flow_in_port_tab`, egress side: the flows with frames in the egress queue, with their
//!   frame counts (Algorithm 2 line 12, Algorithm 3 lines 9–12) and the port they came in on;
//! - `congested_flow_tab`, egress side: the flows the peer paused in OFC PAUSE frames
//!   (Algorithm 2 lines 3–10);
//! - `pause_frame_tab`, ingress side: the flows this port has paused upstream (Algorithm 1
//!   lines 13–18). A port has one upstream peer, so the paper's key (p_up, pri) is (port, pri).
//!
//! Algorithm 1 runs on the ingress accounting q_in (= Σ q_out, as in §III-A): on an arrival
//! with X^c_OFF ≤ q_in < X_OFF whose egress queue holds q_out ≥ X^c_OFF, the port pauses the
//! flows of that egress — the ones it queued there itself if the egress has no PAUSE
//! information (original congestion, line 6), else the congested flows learnt from downstream
//! that enter through this port (local congestion, line 8; under a plain PFC pause, which
//! names none, the flows it queued there); at q_in ≥ X_OFF every flow (lines 10–11, sent as
//! COARSE); at q_in ≤ X_ON it resumes what `pause_frame_tab` holds (lines 16–19). Algorithm 2
//! is [`Ofc::pause_received`] / [`Ofc::resume_received`]; Algorithm 3 is [`NestedQueue`].
//!
//! Where the paper is silent or would break something, decided here (README "OFC"):
//! - The resume check (lines 16–19) runs whenever q_in changes, not only on arrivals: a port
//!   whose upstream is paused receives nothing, and would never resume.
//! - A PAUSE is sent when the paused set grows (and refreshed at half the pause time, as PFC
//!   is), not once per arriving frame; `pause_frame_tab` accumulates (a union) so that the
//!   RESUME names every flow still paused upstream.
//! - Original congestion pauses the flows this ingress port queued at the congested egress
//!   (plus the arriving frame's flow, still in the pipeline): the paper's "flows within it",
//!   read as the flows of this port — others' flows are not the upstream's to pause.
//! - Local congestion (line 8) pauses the congested flows that enter through this port, not
//!   the whole `congested_flow_tab`: a PAUSE naming flows the upstream does not send stops
//!   nothing at an OFC peer and the whole priority at a PFC-only one (a host's NIC). Only if
//!   the egress could not record its flows (a full `flow_in_port_tab`) does it name them all.
//! - "Stored information from a previous PAUSE frame" (§III-A) is kept per egress for as long
//!   as that congestion lasts: the flows PAUSE frames named stay on record until the egress
//!   queue has emptied, even after their RESUME. Otherwise the backlog a RESUME releases
//!   (still ≥ X^c_OFF while it drains) looks like original congestion, and the upstream
//!   port pauses every flow queued there, the uncongested ones too — the HoL blocking OFC
//!   exists to avoid.
//! - A congested flow stays paused until a RESUME names it or, like a PFC pause, until the
//!   PAUSE's time runs out without a refresh (a lost RESUME cannot park a flow forever).
//! - A full table falls back to the coarse, per-priority pause and counts it: a full
//!   `flow_in_port_tab` or `pause_frame_tab` makes the port pause every flow (COARSE), a full
//!   `congested_flow_tab` makes the egress obey the PAUSE for the whole priority.

mod flow_table;
mod nested;

pub use flow_table::{FlowTable, TableFull};
pub use nested::NestedQueue;

use crate::policy::interface::{EgressEvent, IngressLevel, Policy, PolicyActions};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{FlowKey, OfcHeader, OfcOp, Pcp, PfcRepr};
use std::collections::VecDeque;

/// X_OFF, X_ON and X^c_OFF = α·X_OFF in bytes (§III-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfcThresholds {
    pub xoff: u64,
    pub xon: u64,
    pub xoff_c: u64,
}

/// The three tables, for counters and reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OfcTable {
    FlowInPort,
    CongestedFlow,
    PauseFrame,
}

impl OfcTable {
    pub const ALL: [OfcTable; 3] = [OfcTable::FlowInPort, OfcTable::CongestedFlow, OfcTable::PauseFrame];

    pub const fn name(self) -> &'static str {
        match self {
            OfcTable::FlowInPort => "flow_in_port_tab",
            OfcTable::CongestedFlow => "congested_flow_tab",
            OfcTable::PauseFrame => "pause_frame_tab",
        }
    }

    /// Bytes one entry takes (Table II's unit): the 12-byte flow, plus a 4-byte frame count
    /// in `flow_in_port_tab`.
    pub const fn entry_bytes(self) -> u64 {
        match self {
            OfcTable::FlowInPort => 16,
            OfcTable::CongestedFlow | OfcTable::PauseFrame => 12,
        }
    }
}

/// What OFC did on one (port, lossless priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OfcCounters {
    /// OFC PAUSE / RESUME frames sent towards the peer, and received from it.
    pub pause_tx: u64,
    pub resume_tx: u64,
    pub pause_rx: u64,
    pub resume_rx: u64,
    /// Algorithm 1 decisions that paused new flows: original (line 6), local (line 8)
    /// congestion, and every flow at X_OFF (lines 10–11).
    pub original: u64,
    pub local: u64,
    pub coarse: u64,
    /// Fallbacks because a table was full, by [`OfcTable`] (flow_in_port_tab,
    /// congested_flow_tab, pause_frame_tab): a coarse pause, or, for local congestion at an
    /// egress whose `flow_in_port_tab` is full, every congested flow it learnt.
    pub table_full: [u64; 3],
    /// Flow entries of PAUSE frames sent that [`OfcTables::pauses_naming`], full, could not
    /// record.
    #[serde(default)]
    pub named_unrecorded: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct Queued {
    frames: u32,
    ingress: u16,
}

/// An OFC frame waiting to go out on a port; its flows are in that port's outbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfcFrame {
    pub header: OfcHeader,
    /// The PFC time of the class: the configured quanta for a PAUSE, 0 for a RESUME.
    pub quanta: u16,
    start: u32,
    count: u32,
}

impl OfcFrame {
    pub fn entries(&self) -> usize {
        self.count as usize
    }
}

#[derive(Clone, Debug, Default)]
struct Outbox {
    frames: VecDeque<OfcFrame>,
    flows: Vec<FlowKey>,
}

impl Outbox {
    fn flows_of(&self, frame: &OfcFrame) -> &[FlowKey] {
        &self.flows[frame.start as usize..(frame.start + frame.count) as usize]
    }
}

/// An arrival as Algorithm 1 line 2 sees it.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    pub ingress: usize,
    pub priority: Pcp,
    pub flow: FlowKey,
    /// The ingress accounting after the arrival.
    pub q_in: u64,
    /// The frame's egress port (the fullest, if flooded) and its queue's bytes.
    pub egress: usize,
    pub q_out: u64,
    /// The egress's peer pauses the whole priority (a plain PFC or COARSE pause).
    pub egress_coarse_paused: bool,
}

/// The tables of one (port, lossless priority), for `pfcswitch ofc show`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OfcTables {
    /// flow, frames queued, ingress port.
    pub flow_in_port: Vec<(FlowKey, u32, usize)>,
    /// Frames queued whose flow a full `flow_in_port_tab` could not record.
    pub untracked_frames: u32,
    /// flow, resumed but held until the current drain ends.
    pub congested: Vec<(FlowKey, bool)>,
    /// When the congested flows resume without a refresh.
    pub congested_until: Option<Instant>,
    /// Flows PAUSE frames named while the egress queue has not emptied since: what Algorithm
    /// 1 line 8 pauses upstream.
    pub named: Vec<FlowKey>,
    pub pause_frame: Vec<FlowKey>,
    /// Every flow of the priority is paused upstream (X_OFF or a fallback).
    pub coarse: bool,
    /// Each flow PAUSE frames of this port named since the counters were reset, with how
    /// many named it (refreshes included): who was stopped upstream, which the tables, that
    /// forget a flow on its RESUME, cannot say after the fact.
    pub pauses_naming: Vec<(FlowKey, u64)>,
    pub counters: OfcCounters,
}

#[derive(Clone, Debug)]
pub struct Ofc {
    /// Lossless priority → its slot in the per-(port, slot) vectors.
    slot: [Option<usize>; 8],
    slots: usize,
    thresholds: OfcThresholds,
    /// Entries one OFC frame carries on each port (`policy.ofc_frame_len`, its MTU).
    max_entries: Vec<usize>,
    flow_in_port: Vec<FlowTable<Queued>>,
    untracked: Vec<u32>,
    /// `true`: resumed, held paused until the current drain ends.
    congested: Vec<FlowTable<bool>>,
    congested_until: Vec<Instant>,
    /// Flows PAUSE frames named since the egress queue was last empty.
    named: Vec<FlowTable<()>>,
    pause_frame: Vec<FlowTable<()>>,
    coarse: Vec<bool>,
    /// Flows of a RESUME not sent yet.
    resuming: Vec<FlowTable<()>>,
    pauses_naming: Vec<FlowTable<u64>>,
    counters: Vec<OfcCounters>,
    outboxes: Vec<Outbox>,
}

impl Ofc {
    /// `frame_lens[i]` is the longest OFC frame port i sends, which bounds the flows one frame
    /// carries.
    pub fn new(frame_lens: &[usize], lossless: u8, thresholds: OfcThresholds, capacity: usize) -> Ofc {
        let mut slot = [None; 8];
        let mut slots = 0;
        for pcp in Pcp::ALL.iter().filter(|p| lossless & p.mask() != 0) {
            slot[pcp.index()] = Some(slots);
            slots += 1;
        }
        let pairs = frame_lens.len() * slots;
        let outbox_flows = slots * 3 * capacity;
        let mut ofc = Ofc {
            slot,
            slots,
            thresholds,
            // Room for one frame per flow, the standard frame's share, whatever a reload sets.
            outboxes: frame_lens
                .iter()
                .map(|_| Outbox {
                    frames: VecDeque::with_capacity(slots * (3 * capacity + 2)),
                    flows: Vec::with_capacity(outbox_flows),
                })
                .collect(),
            max_entries: vec![1; frame_lens.len()],
            flow_in_port: (0..pairs).map(|_| FlowTable::new(capacity)).collect(),
            untracked: vec![0; pairs],
            congested: (0..pairs).map(|_| FlowTable::new(capacity)).collect(),
            congested_until: vec![Instant::ZERO; pairs],
            named: (0..pairs).map(|_| FlowTable::new(capacity)).collect(),
            pause_frame: (0..pairs).map(|_| FlowTable::new(capacity)).collect(),
            coarse: vec![false; pairs],
            // A RESUME can still be pending when the set it resumed is paused and resumed again.
            resuming: (0..pairs).map(|_| FlowTable::new(2 * capacity)).collect(),
            // The flows a port pauses over a run, not at once: room for more than one table.
            pauses_naming: (0..pairs).map(|_| FlowTable::new(4 * capacity)).collect(),
            counters: vec![OfcCounters::default(); pairs],
        };
        ofc.set_frame_lens(frame_lens);
        ofc
    }

    /// New longest frames for a running engine (a reload); frames already queued keep theirs.
    pub fn set_frame_lens(&mut self, frame_lens: &[usize]) {
        for (entries, &len) in self.max_entries.iter_mut().zip(frame_lens) {
            *entries = pfcswitch_wire::ofc_entries_per_frame(len).max(1);
        }
    }

    pub fn thresholds(&self) -> OfcThresholds {
        self.thresholds
    }

    /// New thresholds for a running engine (a reload); the tables stay.
    pub fn set_thresholds(&mut self, thresholds: OfcThresholds) {
        self.thresholds = thresholds;
    }

    pub fn capacity(&self) -> usize {
        self.pause_frame.first().map_or(0, FlowTable::capacity)
    }

    fn index(&self, port: usize, priority: Pcp) -> Option<usize> {
        self.slot[priority.index()].map(|s| port * self.slots + s)
    }

    /// Whether `flow` is paused on egress (port, priority) (Algorithm 3 line 7).
    pub fn is_paused(&self, port: usize, priority: Pcp, flow: &FlowKey) -> bool {
        self.index(port, priority).is_some_and(|i| self.congested[i].contains(flow))
    }

    /// Pauses every flow of `i` (COARSE); `full` names the table whose overflow forced it.
    fn pause_all(&mut self, i: usize, full: Option<OfcTable>) -> bool {
        match full {
            Some(table) => self.counters[i].table_full[table as usize] += 1,
            None => self.counters[i].coarse += 1,
        }
        !std::mem::replace(&mut self.coarse[i], true)
    }

    /// Algorithm 1 lines 3–9 for one arrival.
    pub fn on_arrival(&mut self, arrival: &Arrival, actions: &mut PolicyActions<'_>) {
        let t = self.thresholds;
        let (Some(i), Some(e)) =
            (self.index(arrival.ingress, arrival.priority), self.index(arrival.egress, arrival.priority))
        else {
            return;
        };
        if !(arrival.q_in >= t.xoff_c && arrival.q_in < t.xoff && arrival.q_out >= t.xoff_c) {
            return;
        }
        let mut changed = false;
        let original = self.named[e].is_empty() && !arrival.egress_coarse_paused;
        if self.named[e].is_empty() || arrival.egress_coarse_paused {
            // Line 6, original congestion: the flows this port queued at the congested egress.
            // Also local congestion under a peer's coarse pause (plain PFC, or COARSE): every
            // flow there is stopped, so every flow there is congested, named or not.
            let ingress = arrival.ingress as u16;
            let queued = self.flow_in_port[e].iter().filter(|(_, q)| q.ingress == ingress).map(|(flow, _)| flow);
            let (added, full) = add_flows(&mut self.pause_frame[i], queued.chain([arrival.flow]));
            changed |= added;
            if full {
                changed |= self.pause_all(i, Some(OfcTable::PauseFrame));
            }
            if self.untracked[e] > 0 {
                // The egress could not record every flow it holds: the list is incomplete.
                changed |= self.pause_all(i, Some(OfcTable::FlowInPort));
            }
        } else {
            // Line 8, local congestion: the congested flows learnt from downstream that enter
            // through this port (queued at the egress from it, or arriving now). A port that
            // carries none of them is not the upstream of the congestion.
            let ingress = arrival.ingress as u16;
            let (named, queued) = (&self.named[e], &self.flow_in_port[e]);
            // If the egress could not record every flow it holds, which port carries which is
            // unknown: the whole list, as line 8 has it.
            let every = self.untracked[e] > 0;
            let carried = named.keys().filter(|flow| {
                every || *flow == arrival.flow || queued.get(flow).is_some_and(|q| q.ingress == ingress)
            });
            let (added, full) = add_flows(&mut self.pause_frame[i], carried);
            changed |= added;
            if full {
                changed |= self.pause_all(i, Some(OfcTable::PauseFrame));
            }
            if every && added {
                self.counters[i].table_full[OfcTable::FlowInPort as usize] += 1;
            }
        }
        if changed {
            if original {
                self.counters[i].original += 1;
            } else {
                self.counters[i].local += 1;
            }
        }
        if changed {
            actions.set_xoff(arrival.ingress, arrival.priority, true);
            actions.announce(arrival.ingress, arrival.priority);
        }
    }

    /// Algorithm 2 lines 3–6: a PAUSE from the peer of `port` names `flows`, paused until
    /// `until` unless refreshed. Returns `false` if `congested_flow_tab` could not take them
    /// all: the caller then obeys the PAUSE for the whole priority.
    pub fn pause_received(
        &mut self,
        port: usize,
        priority: Pcp,
        flows: impl IntoIterator<Item = FlowKey>,
        until: Instant,
    ) -> bool {
        let Some(e) = self.index(port, priority) else { return true };
        self.counters[e].pause_rx += 1;
        self.congested_until[e] = until;
        let mut stored = true;
        for flow in flows {
            match self.congested[e].entry(flow, false) {
                // A flow paused again is no longer waiting to resume.
                Ok(resumed) => *resumed = false,
                Err(TableFull) => stored = false,
            }
            // Same capacity as congested_flow_tab, and emptied no later: it fits if that did.
            let _ = self.named[e].insert(flow, ());
        }
        if !stored {
            self.counters[e].table_full[OfcTable::CongestedFlow as usize] += 1;
        }
        stored
    }

    /// Algorithm 2 lines 7–9: a RESUME names `flows` (all flows if `None`: a plain PFC resume
    /// or an expired pause). While the egress drains an earlier RESUME (`draining`) they stay
    /// paused, marked, until [`Ofc::commit_resumes`].
    pub fn resume_received(
        &mut self,
        port: usize,
        priority: Pcp,
        flows: Option<&mut dyn Iterator<Item = FlowKey>>,
        draining: bool,
    ) {
        let Some(e) = self.index(port, priority) else { return };
        let congested = &mut self.congested[e];
        match (flows, draining) {
            (Some(flows), false) => flows.for_each(|flow| {
                congested.remove(&flow);
            }),
            (Some(flows), true) => flows.for_each(|flow| {
                if let Some(resumed) = congested.get_mut(&flow) {
                    *resumed = true;
                }
            }),
            (None, false) => congested.clear(),
            (None, true) => congested.retain(|_, resumed| {
                *resumed = true;
                true
            }),
        }
        self.forget_if_drained(e);
    }

    /// Forgets the flows PAUSE frames named once the congestion they reported has drained
    /// from egress `e`: nothing queued, nothing paused.
    fn forget_if_drained(&mut self, e: usize) {
        if self.flow_in_port[e].is_empty() && self.untracked[e] == 0 && self.congested[e].is_empty() {
            self.named[e].clear();
        }
    }

    /// Counts a received OFC RESUME.
    pub fn count_resume_rx(&mut self, port: usize, priority: Pcp) {
        if let Some(e) = self.index(port, priority) {
            self.counters[e].resume_rx += 1;
        }
    }

    /// The drain that deferred a RESUME ended: its flows resume now.
    pub fn commit_resumes(&mut self, port: usize, priority: Pcp) {
        if let Some(e) = self.index(port, priority) {
            self.congested[e].retain(|_, resumed| !*resumed);
            self.forget_if_drained(e);
        }
    }

    /// The earliest time congested flows resume for want of a refresh.
    pub fn next_timeout(&self) -> Option<Instant> {
        (0..self.congested.len()).filter(|&e| !self.congested[e].is_empty()).map(|e| self.congested_until[e]).min()
    }

    /// The (port, priority) whose congested flows' pause ran out at `now`, if any.
    pub fn expired(&self, now: Instant) -> Option<(usize, Pcp)> {
        let e = (0..self.congested.len())
            .find(|&e| !self.congested[e].is_empty() && self.congested_until[e] <= now && !self.all_resumed(e))?;
        let slot = e % self.slots;
        let priority = Pcp::ALL.into_iter().find(|p| self.slot[p.index()] == Some(slot)).expect("slot of a priority");
        Some((e / self.slots, priority))
    }

    fn all_resumed(&self, e: usize) -> bool {
        self.congested[e].iter().all(|(_, resumed)| resumed)
    }

    /// Turns the transmitter's PFC decision for `port` into OFC frames: for each lossless
    /// class that `changed` (or is due for a refresh), a RESUME with the flows resumed and not
    /// paused again, then (if the class is asserted) a PAUSE with every flow of
    /// `pause_frame_tab`, split into frames of at most the port's entries. A class the PFC
    /// frame only restates (one PFC frame carries every asserted class) is not repeated: an
    /// OFC frame carries one class. Classes the engine does not manage are returned.
    pub fn queue_frames(&mut self, port: usize, pfc: PfcRepr, changed: u8) -> PfcRepr {
        let mut rest = PfcRepr::default();
        let outbox = &mut self.outboxes[port];
        if outbox.frames.is_empty() {
            outbox.flows.clear();
        }
        for (class, quanta) in pfc.classes() {
            let Some(i) = self.index(port, class) else {
                rest = rest.with_class(class, quanta);
                continue;
            };
            if changed & class.mask() == 0 {
                continue;
            }
            let (paused, resuming) = (&self.pause_frame[i], &mut self.resuming[i]);
            resuming.retain(|flow, _| !paused.contains(flow));
            let outbox = &mut self.outboxes[port];
            let per_frame = self.max_entries[port];
            if quanta == 0 || !resuming.is_empty() {
                let header = OfcHeader { op: OfcOp::Resume, priority: class, coarse: false, more: false };
                push_frames(outbox, header, 0, resuming.keys(), per_frame);
            }
            resuming.clear();
            if quanta > 0 {
                let header = OfcHeader { op: OfcOp::Pause, priority: class, coarse: self.coarse[i], more: false };
                push_frames(outbox, header, quanta, self.pause_frame[i].keys(), per_frame);
            }
        }
        rest
    }

    /// The next OFC frame to send on `port`.
    pub fn poll_frame(&mut self, port: usize) -> Option<OfcFrame> {
        let frame = self.outboxes[port].frames.pop_front()?;
        if let Some(i) = self.index(port, frame.header.priority) {
            match frame.header.op {
                OfcOp::Pause => {
                    self.counters[i].pause_tx += 1;
                    for &flow in self.outboxes[port].flows_of(&frame) {
                        match self.pauses_naming[i].entry(flow, 0) {
                            Ok(count) => *count += 1,
                            Err(TableFull) => self.counters[i].named_unrecorded += 1,
                        }
                    }
                }
                OfcOp::Resume => self.counters[i].resume_tx += 1,
            }
        }
        Some(frame)
    }

    pub fn has_frames(&self, port: usize) -> bool {
        !self.outboxes[port].frames.is_empty()
    }

    /// The flows `frame` (polled from `port`) carries.
    pub fn frame_flows(&self, port: usize, frame: &OfcFrame) -> &[FlowKey] {
        self.outboxes[port].flows_of(frame)
    }

    /// The tables and counters of (port, priority); `None` for a lossy priority.
    pub fn tables(&self, port: usize, priority: Pcp) -> Option<OfcTables> {
        let i = self.index(port, priority)?;
        let mut flow_in_port: Vec<_> =
            self.flow_in_port[i].iter().map(|(flow, q)| (flow, q.frames, usize::from(q.ingress))).collect();
        flow_in_port.sort_unstable();
        let mut congested: Vec<_> = self.congested[i].iter().collect();
        congested.sort_unstable();
        let mut named: Vec<_> = self.named[i].keys().collect();
        named.sort_unstable();
        let mut pause_frame: Vec<_> = self.pause_frame[i].keys().collect();
        pause_frame.sort_unstable();
        let mut pauses_naming: Vec<_> = self.pauses_naming[i].iter().collect();
        pauses_naming.sort_unstable();
        Some(OfcTables {
            flow_in_port,
            untracked_frames: self.untracked[i],
            congested_until: (!self.congested[i].is_empty()).then_some(self.congested_until[i]),
            congested,
            named,
            pause_frame,
            coarse: self.coarse[i],
            pauses_naming,
            counters: self.counters[i],
        })
    }

    /// Table II: the bytes each table of (port, priority) holds, without building the tables.
    pub fn table_bytes(&self, port: usize, priority: Pcp) -> Option<[u64; 3]> {
        let i = self.index(port, priority)?;
        let lens = [self.flow_in_port[i].len(), self.congested[i].len(), self.pause_frame[i].len()];
        Some(std::array::from_fn(|t| lens[t] as u64 * OfcTable::ALL[t].entry_bytes()))
    }

    pub fn reset_counters(&mut self) {
        self.counters.fill(OfcCounters::default());
        self.pauses_naming.iter_mut().for_each(FlowTable::clear);
    }
}

/// Adds `flows` to a `pause_frame_tab`: whether one was new, and whether one did not fit.
fn add_flows(table: &mut FlowTable<()>, flows: impl Iterator<Item = FlowKey>) -> (bool, bool) {
    let (mut added, mut full) = (false, false);
    for flow in flows {
        match table.insert(flow, ()) {
            Ok(new) => added |= new,
            Err(TableFull) => full = true,
        }
    }
    (added, full)
}

/// Appends frames carrying `flows` (at least one frame, MORE on all but the last).
fn push_frames(
    outbox: &mut Outbox,
    header: OfcHeader,
    quanta: u16,
    flows: impl Iterator<Item = FlowKey>,
    per_frame: usize,
) {
    let start = outbox.flows.len();
    outbox.flows.extend(flows);
    let total = outbox.flows.len() - start;
    let frames = total.div_ceil(per_frame).max(1);
    for n in 0..frames {
        let first = start + n * per_frame;
        let count = per_frame.min(start + total - first);
        let more = n + 1 < frames;
        outbox.frames.push_back(OfcFrame {
            header: OfcHeader { more, ..header },
            quanta,
            start: first as u32,
            count: count as u32,
        });
    }
}

impl Policy for Ofc {
    /// Algorithm 1 lines 10–11 (every flow at X_OFF) and 16–19 (RESUME at X_ON), on every
    /// change of q_in.
    fn on_ingress(&mut self, port: usize, priority: Pcp, level: IngressLevel, actions: &mut PolicyActions<'_>) {
        let Some(i) = self.index(port, priority) else { return };
        // OFC's thresholds are its own (mode "pools" is refused under OFC, see validate).
        if level.bytes >= self.thresholds.xoff {
            if self.pause_all(i, None) {
                actions.set_xoff(port, priority, true);
                actions.announce(port, priority);
            }
        } else if level.bytes <= self.thresholds.xon && (self.coarse[i] || !self.pause_frame[i].is_empty()) {
            let (paused, resuming) = (&mut self.pause_frame[i], &mut self.resuming[i]);
            let mut complete = true;
            for flow in paused.keys() {
                complete &= resuming.insert(flow, ()).is_ok();
            }
            if !complete {
                // The peer resumes the flows left out when their pause runs out.
                self.counters[i].table_full[OfcTable::PauseFrame as usize] += 1;
            }
            self.pause_frame[i].clear();
            self.coarse[i] = false;
            actions.set_xoff(port, priority, false);
        }
    }

    /// Algorithm 2 line 12 and Algorithm 3 lines 9–12: `flow_in_port_tab` counts the frames
    /// each flow has in the egress queue.
    fn on_egress(&mut self, event: &EgressEvent, _actions: &mut PolicyActions<'_>) {
        let Some(e) = self.index(event.egress, event.priority) else { return };
        let table = &mut self.flow_in_port[e];
        if event.enqueued {
            let default = Queued { frames: 0, ingress: event.ingress as u16 };
            match table.entry(event.flow, default) {
                Ok(queued) => {
                    queued.frames += 1;
                    queued.ingress = event.ingress as u16;
                }
                Err(TableFull) => self.untracked[e] += 1,
            }
            return;
        }
        match table.get_mut(&event.flow) {
            Some(queued) if queued.frames > 1 => queued.frames -= 1,
            Some(_) => {
                table.remove(&event.flow);
            }
            // Queued while the table was full.
            None => self.untracked[e] = self.untracked[e].saturating_sub(1),
        }
        self.forget_if_drained(e);
    }

    /// Takes over a pause another policy left: one this engine did not send becomes coarse,
    /// resumed at X_ON (a reload that keeps the engine changes nothing).
    fn adopt(&mut self, port: usize, priority: Pcp, asserted: bool) {
        if let Some(i) = self.index(port, priority) {
            self.coarse[i] |= asserted && self.pause_frame[i].is_empty();
        }
    }
}

#[cfg(test)]
mod tests;
