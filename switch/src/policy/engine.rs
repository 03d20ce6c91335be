//! The configured policy, built from the switch configuration and dispatched statically.

use crate::config::{PolicyKind, SwitchConfig};
use crate::policy::capfc::{Capfc, CapfcThresholds};
use crate::policy::interface::{EgressEvent, IngressLevel, Policy, PolicyActions};
use crate::policy::ofc::{Ofc, OfcThresholds};
use crate::policy::pfc::Pfc;
use pfcswitch_wire::Pcp;

/// OFC's X_OFF, X_ON (PFC's) and X^c_OFF = alpha × X_OFF.
pub fn ofc_thresholds(config: &SwitchConfig) -> OfcThresholds {
    OfcThresholds { xoff: config.pfc.xoff.bytes(), xon: config.pfc.xon.bytes(), xoff_c: config.ofc_xoff_c() }
}

/// The longest OFC frame each port sends: `policy.ofc_frame_len`, at most the port's MTU + 14.
pub fn ofc_frame_lens(config: &SwitchConfig) -> Vec<usize> {
    config.ports.iter().map(|port| config.policy.ofc_frame_len.min(port.mtu + 14) as usize).collect()
}

/// Calls `$call` with `$policy` bound to the configured policy as its own type: a direct
/// call the compiler can inline, where a call through `&mut dyn Policy` stayed indirect (four
/// a frame: its admission and queueing, its dequeue and release; under `pfc` two of them do
/// nothing, and still cost a call).
macro_rules! each_policy {
    ($engine:expr, $policy:ident => $call:expr) => {
        match $engine {
            PolicyEngine::None => {}
            PolicyEngine::Pfc($policy) => $call,
            PolicyEngine::Capfc($policy) => $call,
            PolicyEngine::Ofc($policy) => $call,
        }
    };
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
                PolicyEngine::Pfc(Pfc::new(config.lossless_mask()))
            }
            PolicyKind::Capfc => {
                let policy = &config.policy;
                let thresholds = CapfcThresholds {
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
                &ofc_frame_lens(config),
                config.lossless_mask(),
                ofc_thresholds(config),
                config.policy.flow_table_capacity as usize,
            ))),
        }
    }

    pub fn on_ingress(&mut self, port: usize, priority: Pcp, level: IngressLevel, actions: &mut PolicyActions<'_>) {
        each_policy!(self, policy => policy.on_ingress(port, priority, level, actions));
    }

    pub fn adopt(&mut self, port: usize, priority: Pcp, asserted: bool) {
        each_policy!(self, policy => policy.adopt(port, priority, asserted));
    }

    /// `event` is built only for a policy that sees egress queues (not `pfc`'s).
    pub fn on_egress(&mut self, event: impl FnOnce() -> EgressEvent, actions: &mut PolicyActions<'_>) {
        each_policy!(self, policy => if policy.sees_egress() { policy.on_egress(&event(), actions) });
    }
}
