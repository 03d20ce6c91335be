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

// Interim definitions until the wire branch lands (it replaces this file).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OfcOp {
    Pause,
    Resume,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfcHeader {
    pub op: OfcOp,
    pub priority: super::Pcp,
    pub coarse: bool,
    pub more: bool,
}

pub fn ofc_max_entries(mtu: u32) -> usize {
    (mtu as usize).saturating_sub(32) / 12
}

pub const OFC_MAGIC: [u8; 4] = *b"OFCT";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfcRepr<'a> {
    pub op: OfcOp,
    pub priority: super::Pcp,
    pub coarse: bool,
    pub more: bool,
    entries: &'a [u8],
}

impl<'a> OfcRepr<'a> {
    pub fn count(&self) -> usize {
        self.entries.len() / 12
    }

    pub fn flows(&self) -> impl Iterator<Item = FlowKey> + 'a {
        self.entries.chunks_exact(12).map(|e| FlowKey {
            src: EthernetAddress(e[..6].try_into().expect("6")),
            dst: EthernetAddress(e[6..].try_into().expect("6")),
        })
    }

    pub fn parse_trailer(trailer: &'a [u8]) -> super::Result<Option<OfcRepr<'a>>> {
        use super::{Error, ErrorKind, Layer};
        if !trailer.starts_with(&OFC_MAGIC) {
            return Ok(None);
        }
        let bad = |kind| Err(Error::new(Layer::MacControl, kind));
        if trailer.len() < 12 {
            return bad(ErrorKind::Truncated);
        }
        let op = match trailer[5] {
            1 => OfcOp::Pause,
            2 => OfcOp::Resume,
            _ => return bad(ErrorKind::BadValue),
        };
        let count = usize::from(u16::from_be_bytes([trailer[10], trailer[11]]));
        let Some(entries) = trailer.get(12..12 + 12 * count) else { return bad(ErrorKind::BadLength) };
        Ok(Some(OfcRepr {
            op,
            priority: super::Pcp::from_low_bits(trailer[6]),
            coarse: trailer[7] & 1 != 0,
            more: trailer[7] & 2 != 0,
            entries,
        }))
    }
}

pub fn build_ofc_frame(
    frame: &mut [u8],
    src: EthernetAddress,
    header: OfcHeader,
    quanta: u16,
    flows: impl IntoIterator<Item = FlowKey>,
) -> usize {
    let quanta = if header.op == OfcOp::Resume { 0 } else { quanta };
    let pfc = super::PfcRepr::default().with_class(header.priority, quanta);
    super::build_mac_control_frame(frame, src, super::PAUSE_MULTICAST, &super::MacControlRepr::Pfc(pfc));
    let t = &mut frame[34..];
    t[..4].copy_from_slice(&OFC_MAGIC);
    t[4] = 1;
    t[5] = if header.op == OfcOp::Pause { 1 } else { 2 };
    t[6] = header.priority.index() as u8;
    t[7] = u8::from(header.coarse) | (u8::from(header.more) << 1);
    t[8] = 1;
    t[9] = 0;
    let mut count = 0usize;
    for flow in flows {
        let at = 12 + 12 * count;
        if at + 12 > t.len() {
            break;
        }
        t[at..at + 6].copy_from_slice(&flow.src.0);
        t[at + 6..at + 12].copy_from_slice(&flow.dst.0);
        count += 1;
    }
    t[10..12].copy_from_slice(&(count as u16).to_be_bytes());
    (34 + 12 + 12 * count).max(60)
}

pub fn ofc_frame_len(entries: usize) -> usize {
    (46 + 12 * entries).max(60)
}
