//! What every policy sees and may do: the events the switch reports ([`EgressEvent`], ingress
//! accounting), the actions it may take ([`PolicyActions`]: XOFF/XON per port and priority),
//! the [`Policy`] trait, and PFC's hysteresis that several engines share.

pub use crate::buffer::IngressLevel;
use crate::policy::xoff::XoffTransmitter;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{FlowKey, Pcp};

/// PFC's ingress hysteresis (802.1Qbb, and CaPFC's I(i,p), §II-C): congested at `xoff`
/// bytes or more, clear at `xon` or less, unchanged (`None`) in between.
pub(crate) fn hysteresis(bytes: u64, xoff: u64, xon: u64) -> Option<bool> {
    if bytes >= xoff {
        Some(true)
    } else if bytes <= xon {
        Some(false)
    } else {
        None
    }
}

/// What a policy may do in reaction to an event.
#[derive(Debug)]
pub struct PolicyActions<'a> {
    pub now: Instant,
    xoff: &'a mut XoffTransmitter,
}

impl<'a> PolicyActions<'a> {
    pub fn new(now: Instant, xoff: &'a mut XoffTransmitter) -> Self {
        PolicyActions { now, xoff }
    }

    /// Asserts or releases XOFF from `port` towards its peer for `priority`.
    pub fn set_xoff(&mut self, port: usize, priority: Pcp, xoff: bool) {
        self.xoff.set(self.now, port, priority, xoff);
    }

    /// Sends the asserted pause of (port, priority) again now: its content changed (OFC's flows).
    pub fn announce(&mut self, port: usize, priority: Pcp) {
        self.xoff.announce(port, priority);
    }

    pub fn is_asserted(&self, port: usize, priority: Pcp) -> bool {
        self.xoff.asserted(port) & priority.mask() != 0
    }
}

/// A frame entered or left an egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EgressEvent {
    pub ingress: usize,
    pub egress: usize,
    pub priority: Pcp,
    pub len: u32,
    pub flow: FlowKey,
    /// The egress queue's bytes after the event.
    pub queue_bytes: u64,
    pub enqueued: bool,
}

/// A flow-control scheme's decision logic.
pub trait Policy {
    /// Ingress accounting of (port, priority) changed: `level` is its bytes and the XOFF and
    /// XON points in force (`[pfc]`'s, or its buffer profile's in mode "pools").
    fn on_ingress(&mut self, port: usize, priority: Pcp, level: IngressLevel, actions: &mut PolicyActions<'_>);

    /// A frame was queued on or sent from an egress queue.
    fn on_egress(&mut self, _event: &EgressEvent, _actions: &mut PolicyActions<'_>) {}

    /// Whether [`Policy::on_egress`] does anything: a policy that ignores egress queues says
    /// no, and the switch does not build the event twice a frame for it.
    fn sees_egress(&self) -> bool {
        true
    }

    /// Takes over a pause another policy left: XOFF is `asserted` for (port, priority).
    fn adopt(&mut self, _port: usize, _priority: Pcp, _asserted: bool) {}
}
