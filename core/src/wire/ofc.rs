//! OFC's flow identity and PAUSE/RESUME TLV (the OFC paper §III; layout in docs/frames.md).

use super::EthernetAddress;
use std::fmt;

/// A flow as OFC's tables key it (§III: the (source, destination) pair): the frame's source
/// and destination MAC addresses.
///
/// MAC rather than IP pair because pfcswitch is an L2 bridge: every frame it forwards has both
/// addresses (also non-IP lossless traffic such as RoCEv1 or FCoE), within one L2 domain an
/// IP pair maps to one MAC pair, and a fixed 12-byte key keeps table slots and TLV entries
/// fixed-size.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowKey {
    pub src: EthernetAddress,
    pub dst: EthernetAddress,
}

impl fmt::Display for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}>{}", self.src, self.dst)
    }
}

impl fmt::Debug for FlowKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}
