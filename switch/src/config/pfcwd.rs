//! `[pfcwd]`: the PFC watchdog's detection and restoration times and its action.

use pfcswitch_link::units;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What the PFC watchdog does with a stormed queue (SONiC pfcwd's actions).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PfcwdAction {
    /// Drop the queue's frames and those that arrive for it, and ignore the peer's PFC for the
    /// priority, so the storm does not spread back.
    #[default]
    Drop,
    /// Ignore the peer's PFC for the priority and transmit.
    Forward,
    /// Count and report only; the queue stays paused.
    Alert,
}

impl PfcwdAction {
    pub const fn name(self) -> &'static str {
        match self {
            PfcwdAction::Drop => "drop",
            PfcwdAction::Forward => "forward",
            PfcwdAction::Alert => "alert",
        }
    }
}

/// `[pfcwd]`: the PFC watchdog, with the semantics of SONiC's pfcwd. Off by default: its
/// `drop` action gives up losslessness to contain a storm, which is the operator's call.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcwdConfig {
    pub enabled: bool,
    pub action: PfcwdAction,
    /// A lossless egress queue that holds frames and stays paused by its peer this long is stormed.
    #[serde(with = "units::duration")]
    pub detection_time: Duration,
    /// A stormed queue is restored after this long without PFC from its peer for the priority.
    #[serde(with = "units::duration")]
    pub restoration_time: Duration,
    /// A port asserting XOFF towards its peer continuously for longer than this is reported.
    #[serde(with = "units::duration")]
    pub pausing_peer_limit: Duration,
}

impl Default for PfcwdConfig {
    /// SONiC's defaults: 200 ms detection and restoration.
    fn default() -> Self {
        PfcwdConfig {
            enabled: false,
            action: PfcwdAction::Drop,
            detection_time: Duration::from_millis(200),
            restoration_time: Duration::from_millis(200),
            pausing_peer_limit: Duration::from_secs(5),
        }
    }
}
