//! `[pipeline]`: the packet processor between ingress and egress, and what it does when an
//! egress queue is full.

use pfcswitch_link::units::PacketRate;
use serde::{Deserialize, Serialize};

/// What happens when a processed frame finds its egress queue full (CaPFC §II-A, §IV-C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EgressFull {
    /// Drop the frame (PFC_wdrop).
    Drop,
    /// Stall the pipeline until the queue has room (PFC_wstop): head-of-line blocking
    /// across all ports and priorities.
    Stop,
}

/// `[pipeline]`: the packet processor between ingress and egress.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// Packets per second, round-robin over ingress ports; absent = infinitely fast.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<PacketRate>,
    /// Defaults to `stop` under policy `pfc-wstop`, `drop` otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub egress_full: Option<EgressFull>,
}
