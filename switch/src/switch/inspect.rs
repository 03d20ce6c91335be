//! Read-only views of a switch (counters, queue state, the policies' and watchdog's state,
//! the FDB) for the control socket, metrics, reports and tests; and resetting its counters.

use super::{QueueState, Switch};
use crate::counters::PortCounters;
use crate::fdb::FdbEntry;
use crate::fecn::Fecn;
use crate::ledger::{EgressLedger, IngressLedger, Ledger};
use crate::pfcwd::Watchdog;
use crate::policy::PolicyEngine;
use crate::qcn::{Placement, Qcn};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{EthernetAddress, Pcp};
use std::time::Duration;

impl Switch {
    pub fn counters(&self, port: usize) -> &PortCounters {
        &self.counters[port]
    }

    pub fn queue_state(&self, now: Instant, port: usize, priority: Pcp) -> QueueState {
        let p = priority.index();
        QueueState {
            ingress: self.buffers.ingress(port, p),
            egress: self.buffers.egress(port, p),
            peer_paused: self.ports[port].peer_pause.is_paused(now, priority),
            pausing_peer: self.xoff.asserted(port) & priority.mask() != 0,
            paused_time: self.ports[port].peer_pause.paused_time(now, priority),
            pausing_time: self.xoff.pausing_time(now, port, priority),
            xoff_to_xon: self.xoff.xoff_to_xon(port, priority),
            stormed: self.pfcwd.is_stormed(port, p),
        }
    }

    /// Buffer mode "pools": the pools' use and each priority group's split.
    pub fn pools(&self) -> Option<&crate::buffer::PoolBook> {
        self.buffers.pools()
    }

    /// Ingress accounting, egress queues and pools, for reports.
    pub fn buffers(&self) -> &crate::buffer::Buffers {
        &self.buffers
    }

    /// Restarts every high-water mark (PG, queue, pool) from the current levels; counters stay
    /// (SONiC's `sonic-clear ... watermark`).
    pub fn clear_watermarks(&mut self) {
        self.buffers.reset_high_water();
    }

    pub fn pfcwd(&self) -> &Watchdog {
        &self.pfcwd
    }

    /// How long `port` has been asserting XOFF on `priority` without a break (zero if not).
    pub fn pausing_for(&self, now: Instant, port: usize, priority: Pcp) -> Duration {
        crate::pfcwd::pausing_for(now, self.xoff.asserting_since(port, priority.index()))
    }

    /// The OFC engine's state, when the policy is OFC.
    pub fn ofc(&self) -> Option<&crate::policy::Ofc> {
        match &self.policy {
            PolicyEngine::Ofc(ofc) => Some(ofc),
            _ => None,
        }
    }

    /// OFC's nested queues of egress (port, priority): frames parked for paused flows,
    /// whether a backup is draining, and the rotations so far.
    pub fn nested_queue(&self, port: usize, priority: Pcp) -> &crate::policy::NestedQueue {
        self.buffers.nested(port, priority.index())
    }

    /// QCN's congestion points, when `[qcn]` monitors a priority.
    pub fn qcn(&self) -> Option<&Qcn> {
        self.qcn.as_ref()
    }

    /// FECN's rate points, when `[fecn]` monitors a priority.
    pub fn fecn(&self) -> Option<&Fecn> {
        self.fecn.as_ref()
    }

    /// This switch's INT node ID, when `[int]` stamps a priority.
    pub fn int_node_id(&self) -> Option<u32> {
        self.int.as_ref().map(crate::int::IntStamper::node_id)
    }

    /// The queue the CP of (port, priority) watches: the egress queue at the output, the
    /// ingress share at the input (0 without QCN).
    pub fn qcn_queue_bytes(&self, port: usize, priority: Pcp) -> u64 {
        match self.qcn.as_ref().map(Qcn::placement) {
            Some(Placement::Output) => self.buffers.egress(port, priority.index()).bytes,
            Some(Placement::Input) => self.buffers.ingress(port, priority.index()).bytes,
            None => 0,
        }
    }

    /// The CaPFC engine's state, when the policy is CaPFC.
    pub fn capfc(&self) -> Option<&crate::policy::Capfc> {
        match &self.policy {
            PolicyEngine::Capfc(capfc) => Some(capfc),
            _ => None,
        }
    }

    /// The frame ledger of (port, priority): see [`crate::ledger`].
    pub fn ledger(&self, port: usize, priority: Pcp) -> Ledger {
        let p = priority.index();
        let counters = &self.counters[port].priority[p];
        Ledger {
            ingress: IngressLedger {
                received: counters.rx_frames,
                carried: counters.ingress_carried,
                dropped: counters.rx_dropped,
                forwarded: counters.forwarded,
                waiting: self.waiting(port, p),
            },
            egress: EgressLedger {
                assigned: counters.assigned,
                carried: counters.egress_carried,
                sent: counters.tx_frames,
                dropped: counters.egress_dropped,
                queued: self.buffers.queue_len(port, p) as u64,
            },
        }
    }

    /// Frames received on (port, p) still in the pipeline.
    fn waiting(&self, port: usize, p: usize) -> u64 {
        self.pipeline.fifos[port].iter().filter(|&&index| usize::from(self.arena.get(index).priority) == p).count()
            as u64
    }

    /// Frames the switch holds (in the pipeline or egress queues).
    pub fn frames_held(&self) -> usize {
        self.arena.in_use()
    }

    pub fn port_mac(&self, port: usize) -> EthernetAddress {
        self.ports[port].mac
    }

    pub fn fdb_entries(&self, now: Instant) -> Vec<FdbEntry> {
        self.fdb.entries(now)
    }

    /// `fdb.default_route`'s ports (bit i: port i; 0: none, unknown unicast floods).
    pub fn fdb_default_route(&self) -> u64 {
        self.fdb.default_route()
    }

    /// Zeroes counters, high-water marks and accumulated pause times; state stays.
    pub fn reset_counters(&mut self, now: Instant) {
        self.counters.fill(PortCounters::default());
        for port in 0..self.ports.len() {
            for p in 0..8 {
                let (waiting, queued) = (self.waiting(port, p), self.buffers.queue_len(port, p) as u64);
                let counters = &mut self.counters[port].priority[p];
                (counters.ingress_carried, counters.egress_carried) = (waiting, queued);
            }
        }
        self.buffers.reset_high_water();
        self.xoff.reset_counters(now);
        self.pfcwd.reset_counters();
        if let PolicyEngine::Ofc(ofc) = &mut self.policy {
            ofc.reset_counters();
        }
        if let Some(qcn) = &mut self.qcn {
            qcn.reset_counters();
        }
        if let Some(fecn) = &mut self.fecn {
            fecn.reset_counters();
        }
        for port in 0..self.ports.len() {
            for p in 0..8 {
                self.buffers.nested_mut(port, p).reset_rotations();
            }
        }
        for port in &mut self.ports {
            port.peer_pause.reset_time(now);
        }
    }
}
