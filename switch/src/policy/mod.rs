//! Flow-control policies: one state machine per scheme behind the [`Policy`] trait.
//!
//! The switch reports ingress-accounting and egress-queue changes; a policy answers with
//! XOFF/XON decisions per (ingress port, priority), which [`XoffTransmitter`] turns into PFC
//! frames. Adding a pause scheme means a new engine here and a config kind. OFC goes further:
//! its PAUSE frames carry flows and it parks frames per flow, so the switch also hands it each
//! arrival, the flows a peer pauses and the nested egress queues (see `switch.rs`, `ofc_*`).

mod capfc;
mod ofc;
mod pfc;
mod xoff;

pub use capfc::{Capfc, CapfcQueueState, CapfcThresholds};
pub use ofc::{
    Arrival, FlowTable, NestedQueue, Ofc, OfcCounters, OfcFrame, OfcTable, OfcTables, OfcThresholds, TableFull,
};
pub use pfc::Pfc;
pub use xoff::XoffTransmitter;

use crate::config::{PolicyKind, SwitchConfig};
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

/// OFC's X_OFF, X_ON (PFC's) and X^c_OFF = alpha × X_OFF.
pub fn ofc_thresholds(config: &SwitchConfig) -> OfcThresholds {
    OfcThresholds { xoff: config.pfc.xoff.bytes(), xon: config.pfc.xon.bytes(), xoff_c: config.ofc_xoff_c() }
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
    /// Ingress accounting of (port, priority) changed to `bytes`.
    fn on_ingress(&mut self, port: usize, priority: Pcp, bytes: u64, actions: &mut PolicyActions<'_>);

    /// A frame was queued on or sent from an egress queue.
    fn on_egress(&mut self, _event: &EgressEvent, _actions: &mut PolicyActions<'_>) {}

    /// Takes over a pause another policy left: XOFF is `asserted` for (port, priority).
    fn adopt(&mut self, _port: usize, _priority: Pcp, _asserted: bool) {}
}

/// The configured policy, dispatched statically.
#[derive(Clone, Debug)]
pub enum PolicyEngine {
    /// No pause at all.
    None,
    Pfc(Pfc),
    Capfc(Box<Capfc>),
    Ofc(Box<Ofc>),
}

impl PolicyEngine {
    pub fn from_config(config: &SwitchConfig) -> PolicyEngine {
        match config.policy.kind {
            PolicyKind::None => PolicyEngine::None,
            PolicyKind::Pfc | PolicyKind::PfcWdrop | PolicyKind::PfcWstop => {
                PolicyEngine::Pfc(Pfc::new(config.lossless_mask(), config.pfc.xoff.bytes(), config.pfc.xon.bytes()))
            }
            PolicyKind::Capfc => {
                let policy = &config.policy;
                let thresholds = CapfcThresholds {
                    ingress_xoff: config.pfc.xoff.bytes(),
                    ingress_xon: config.pfc.xon.bytes(),
                    egress_xoff: policy.egress_xoff.bytes(),
                    egress_xon: policy.egress_xon.bytes(),
                    egress_warn: policy.egress_warn.bytes(),
                };
                let lossless = config.lossless_mask();
                PolicyEngine::Capfc(Box::new(Capfc::new(
                    config.ports.len(),
                    lossless,
                    policy.algorithm,
                    policy.cut,
                    thresholds,
                )))
            }
            PolicyKind::Ofc => PolicyEngine::Ofc(Box::new(Ofc::new(
                &config.ports.iter().map(|p| p.mtu).collect::<Vec<_>>(),
                config.lossless_mask(),
                ofc_thresholds(config),
                config.policy.flow_table_capacity as usize,
            ))),
        }
    }

    fn engine(&mut self) -> Option<&mut dyn Policy> {
        match self {
            PolicyEngine::None => None,
            PolicyEngine::Pfc(pfc) => Some(pfc),
            PolicyEngine::Capfc(capfc) => Some(capfc.as_mut()),
            PolicyEngine::Ofc(ofc) => Some(ofc.as_mut()),
        }
    }

    pub fn on_ingress(&mut self, port: usize, priority: Pcp, bytes: u64, actions: &mut PolicyActions<'_>) {
        if let Some(engine) = self.engine() {
            engine.on_ingress(port, priority, bytes, actions);
        }
    }

    pub fn adopt(&mut self, port: usize, priority: Pcp, asserted: bool) {
        if let Some(engine) = self.engine() {
            engine.adopt(port, priority, asserted);
        }
    }

    pub fn on_egress(&mut self, event: &EgressEvent, actions: &mut PolicyActions<'_>) {
        if let Some(engine) = self.engine() {
            engine.on_egress(event, actions);
        }
    }
}
