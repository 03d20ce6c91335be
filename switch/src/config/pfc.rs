//! `[pfc]`: the 802.1Qbb ingress thresholds, and the headroom a port needs above XOFF.

use pfcswitch_link::shaper::WIRE_OVERHEAD;
use pfcswitch_link::units::{self, BitRate, ByteSize};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Ethernet header with one 802.1Q tag, without FCS: what a frame adds to its MTU.
pub const L2_HEADER_MAX: u64 = 18;
/// A PAUSE/PFC frame on the wire: 60 B + FCS + preamble + gap.
pub const PFC_WIRE_BYTES: u64 = 60 + WIRE_OVERHEAD;

/// The CaPFC paper's Table II ingress MAX, the default unless a link needs more headroom.
pub const DEFAULT_PFC_MAX: u64 = 60_000;

/// `[pfc]`: 802.1Qbb thresholds on ingress accounting, per (port, lossless priority).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// PFC-enabled priorities; the others are lossy (tail drop).
    pub lossless: Vec<u8>,
    pub xoff: ByteSize,
    pub xon: ByteSize,
    /// Ingress MAX: a lossless frame that would exceed it is dropped. Default: 60KB, or more
    /// when a port's link needs more headroom above XOFF
    /// ([`SwitchConfig::pfc_max`](crate::config::SwitchConfig::pfc_max)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<ByteSize>,
    /// Pause time sent with XOFF; refreshed at half of it while still above XON.
    pub quanta: u16,
    /// One-way propagation delay of the cables, for the headroom check.
    #[serde(with = "units::duration")]
    pub cable_delay: Duration,
    /// Time from XOFF crossing to the peer's reaction, beyond wire times (processing, DMA).
    #[serde(with = "units::duration")]
    pub response_time: Duration,
    /// PAUSE and PFC frames shorter than Ethernet's 60-byte minimum: a sender on a veth
    /// (SONiC's pfc_gen writes 32-byte PFC frames), where no MAC pads them.
    pub short_frames: ShortFrames,
}

/// What the switch does with a MAC Control frame shorter than 60 bytes; counted either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ShortFrames {
    /// Read it as the sender's NIC would have sent it, zero-padded to 60 bytes (timers the
    /// frame does not carry read as 0), and obey it.
    #[default]
    Pad,
    /// Drop it as an 802.3 runt, counted as malformed.
    Drop,
}

impl Default for PfcConfig {
    /// The CaPFC paper's Table II ingress thresholds.
    fn default() -> Self {
        PfcConfig {
            lossless: vec![3],
            xoff: ByteSize(50_000),
            xon: ByteSize(40_000),
            max: None,
            quanta: u16::MAX,
            cable_delay: Duration::from_nanos(100),
            response_time: Duration::from_micros(1),
            short_frames: ShortFrames::Pad,
        }
    }
}

/// Minimum PFC headroom (MAX − XOFF) for a port, in bytes, so that no lossless frame is lost.
///
/// After the frame that crosses XOFF (up to one maximum frame above XOFF), the bytes that
/// still arrive are: the frame our port may be sending when XOFF is raised (the PFC frame
/// waits for it), the PFC frame itself, the round trip of the cable, the peer's response
/// time, and the frame the peer may have just started. In wire bytes:
/// `speed·(2·cable_delay + response_time) + 3·(MTU + 18 + 24) + 84`. This is DESIGN.md's
/// `speed × (2 × cable delay + response time) + 2 × MTU` made exact for our accounting: it
/// adds the crossing frame, the PFC frame and the per-frame wire overhead.
pub fn headroom_bound(speed: BitRate, mtu: u32, cable_delay: Duration, response_time: Duration) -> u64 {
    let (flight, frames) = headroom_terms(speed, mtu, cable_delay, response_time);
    flight.saturating_add(frames)
}

/// [`headroom_bound`]'s two terms: the bytes in flight at line rate during the cable's round
/// trip and the peer's response, and the frames on the wire (three maximum frames, one PFC).
pub fn headroom_terms(speed: BitRate, mtu: u32, cable_delay: Duration, response_time: Duration) -> (u64, u64) {
    let flight = cable_delay * 2 + response_time;
    let flight_bytes = (flight.as_nanos() * u128::from(speed.bps())).div_ceil(8 * 1_000_000_000);
    let max_frame_wire = u64::from(mtu) + L2_HEADER_MAX + WIRE_OVERHEAD;
    (u64::try_from(flight_bytes).unwrap_or(u64::MAX), 3 * max_frame_wire + PFC_WIRE_BYTES)
}
