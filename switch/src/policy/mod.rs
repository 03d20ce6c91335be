//! Flow-control policies: one state machine per scheme behind the [`Policy`] trait.
//!
//! The switch reports ingress-accounting and egress-queue changes; a policy answers with
//! XOFF/XON decisions per (ingress port, priority), which [`XoffTransmitter`] turns into PFC
//! frames. Adding a pause scheme means a new engine here and a config kind. OFC goes further:
//! its PAUSE frames carry flows and it parks frames per flow, so the switch also hands it each
//! arrival, the flows a peer pauses and the nested egress queues (see `switch/ofc.rs`).

mod capfc;
mod engine;
mod interface;
mod ofc;
mod pfc;
mod xoff;

pub use capfc::{Capfc, CapfcQueueState, CapfcThresholds};
pub use engine::{PolicyEngine, ofc_frame_lens, ofc_thresholds};
pub use interface::{EgressEvent, Policy, PolicyActions};
pub use ofc::{
    Arrival, FlowTable, NestedQueue, Ofc, OfcCounters, OfcFrame, OfcTable, OfcTables, OfcThresholds, TableFull,
};
pub use pfc::Pfc;
pub use xoff::XoffTransmitter;
