//! Flow-control policies: one state machine per scheme behind the [`Policy`] trait.
//!
//! The switch reports ingress-accounting and egress-queue changes; a policy answers with
//! XOFF/XON decisions per (ingress port, priority), which [`XoffTransmitter`] turns into PFC
//! frames. Adding a scheme means a new engine here and a config kind, nothing else.

mod pfc;
mod xoff;

pub use pfc::Pfc;
pub use xoff::XoffTransmitter;

use crate::config::{PolicyKind, SwitchConfig};
use crate::time::Instant;
use crate::wire::Pcp;

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
}

/// A frame entered or left an egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EgressEvent {
    pub ingress: usize,
    pub egress: usize,
    pub priority: Pcp,
    pub len: u32,
    /// The egress queue's bytes after the event.
    pub queue_bytes: u64,
    pub enqueued: bool,
}

/// A flow-control scheme's decision logic.
pub trait Policy {
    /// Ingress accounting of (port, priority) changed to `bytes`.
    fn on_ingress(&mut self, port: usize, priority: Pcp, bytes: u64, actions: &mut PolicyActions<'_>);

    /// A frame was queued on or sent from an egress queue.
    fn on_egress(&mut self, _event: &EgressEvent, _actions: &mut PolicyActions<'_>) {}
}

/// The configured policy, dispatched statically.
#[derive(Clone, Debug)]
pub enum PolicyEngine {
    /// No pause at all.
    None,
    Pfc(Pfc),
}

impl PolicyEngine {
    pub fn from_config(config: &SwitchConfig) -> PolicyEngine {
        match config.policy.kind {
            PolicyKind::None => PolicyEngine::None,
            PolicyKind::Pfc | PolicyKind::PfcWstop => {
                PolicyEngine::Pfc(Pfc::new(config.lossless_mask(), config.pfc.xoff.bytes(), config.pfc.xon.bytes()))
            }
        }
    }

    fn engine(&mut self) -> Option<&mut dyn Policy> {
        match self {
            PolicyEngine::None => None,
            PolicyEngine::Pfc(pfc) => Some(pfc),
        }
    }

    pub fn on_ingress(&mut self, port: usize, priority: Pcp, bytes: u64, actions: &mut PolicyActions<'_>) {
        if let Some(engine) = self.engine() {
            engine.on_ingress(port, priority, bytes, actions);
        }
    }

    pub fn on_egress(&mut self, event: &EgressEvent, actions: &mut PolicyActions<'_>) {
        if let Some(engine) = self.engine() {
            engine.on_egress(event, actions);
        }
    }
}
