//! `[policy]`: the flow-control scheme and the settings of CaPFC and OFC.

use pfcswitch_link::units::ByteSize;
use serde::{Deserialize, Serialize};

/// Flow-control scheme names, as in DESIGN.md.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
pub enum PolicyKind {
    /// IEEE 802.1Qbb PFC as switches deploy it (SONiC on merchant silicon, Linux `dcb`): a
    /// lossless frame is admitted at ingress (XOFF/XON/MAX and headroom) or not at all, and an
    /// admitted one is never dropped at egress; lossy priorities tail-drop at egress.
    #[default]
    #[serde(rename = "pfc")]
    Pfc,
    /// The CaPFC paper's PFC_wdrop baseline (§IV): 802.1Qbb thresholds, and a full egress queue
    /// drops, lossless or not.
    #[serde(rename = "pfc-wdrop")]
    PfcWdrop,
    /// The CaPFC paper's PFC_wstop baseline (§IV): a full egress queue stalls the pipeline.
    #[serde(rename = "pfc-wstop")]
    PfcWstop,
    /// No pause at all: lossless priorities behave as lossy ones.
    #[serde(rename = "none")]
    None,
    /// Congestion-aware PFC (CaPFC paper §II): ingress state OR egress congestion signals.
    #[serde(rename = "capfc")]
    Capfc,
    /// Original-congestion fine-grained PFC (OFC paper §III): PAUSE frames carry the congested
    /// flows, upstream egresses park only those in a nested three-queue hierarchy; lossless
    /// like `pfc` (egress never drops an admitted lossless frame).
    #[serde(rename = "ofc")]
    Ofc,
}

impl PolicyKind {
    pub const fn name(self) -> &'static str {
        match self {
            PolicyKind::Pfc => "pfc",
            PolicyKind::PfcWdrop => "pfc-wdrop",
            PolicyKind::PfcWstop => "pfc-wstop",
            PolicyKind::None => "none",
            PolicyKind::Capfc => "capfc",
            PolicyKind::Ofc => "ofc",
        }
    }

    /// Whether admitted lossless frames are exempt from egress limits (only bounded by the
    /// ingress accounting that feeds their queue).
    pub const fn lossless_egress_unbounded(self) -> bool {
        self.keeps_lossless()
    }

    /// Policies that promise lossless priorities never lose an admitted frame (`pfc` and
    /// `ofc`, which is PFC with finer pauses): the config checks refuse what would break it.
    pub const fn keeps_lossless(self) -> bool {
        matches!(self, PolicyKind::Pfc | PolicyKind::Ofc)
    }
}

/// CaPFC's choice of the inputs to pause for a congested egress queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CapfcAlgorithm {
    /// Stop-Max (Algorithm 1): the heaviest contributor.
    #[default]
    Max,
    /// Stop-Calibrate (Algorithm 2): the fewest inputs whose share passes `cut`.
    Calibrate,
}

/// `[policy]`. The egress thresholds and `cut` apply to `capfc`; their defaults are the
/// CaPFC paper's Table II (egress XOFF 25KB, XON 20KB, WARN 20KB, CUT 80%).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    pub kind: PolicyKind,
    pub algorithm: CapfcAlgorithm,
    /// Stop-Calibrate: the share of the counted arrivals the paused inputs must cover, in (0, 1].
    pub cut: f64,
    pub egress_xoff: ByteSize,
    pub egress_xon: ByteSize,
    pub egress_warn: ByteSize,
    /// OFC: the congested pause threshold X^c_OFF = alpha × pfc.xoff (§III-C), with
    /// pfc.xon < X^c_OFF < pfc.xoff.
    pub alpha: f64,
    /// OFC: flows each of the three tables holds per port and lossless priority.
    pub flow_table_capacity: u32,
    /// OFC: the longest PAUSE/RESUME frame, in bytes without the FCS. 60, the default, is the
    /// standard MAC Control frame (IEEE 802.3 clause 31.4), with one flow: a longer list is
    /// split over several frames. Up to a port's MTU + 14 is allowed but non-standard: a frame
    /// then carries (len − 46) / 12 flows, and a peer may drop MAC Control frames over 60 bytes.
    pub ofc_frame_len: u32,
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            kind: PolicyKind::default(),
            algorithm: CapfcAlgorithm::default(),
            cut: 0.8,
            egress_xoff: ByteSize(25_000),
            egress_xon: ByteSize(20_000),
            egress_warn: ByteSize(20_000),
            alpha: 0.9,
            flow_table_capacity: 256,
            ofc_frame_len: pfcswitch_wire::MIN_FRAME_LEN as u32,
        }
    }
}
