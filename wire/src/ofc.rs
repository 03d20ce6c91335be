//! OFC's flow identity and the TLV its PAUSE and RESUME frames carry after the PFC fields
//! (the OFC paper §III; layout in docs/frames.md). The view starts after the PFC fields
//! (byte 34 of an untagged frame, what [`MacControlPacket::trailer`] returns):
//!
//! ```text
//! 0–3   magic "OFCT"          8     key type: 1 = MAC pair
//! 4     version = 1           9     reserved (0)
//! 5     op: 1 PAUSE 2 RESUME  10–11 count (big-endian)
//! 6     priority (0–7)        12..  count × (6-byte source, 6-byte destination)
//! 7     flags: bit 0 COARSE, bit 1 MORE, others reserved (0)
//! ```
//!
//! [`MacControlPacket::trailer`]: super::MacControlPacket::trailer

use super::{Error, ErrorKind, EthernetAddress, Layer, Pcp, PfcRepr, Result};
use crate::field::{check_len, read_u16, write_u16};
use std::fmt;

/// A flow as OFC's tables key it (§III: the (source, destination) pair): the frame's source
/// and destination MAC addresses.
///
/// MAC rather than IP pair because pfcswitch is an L2 bridge: every frame it forwards has both
/// addresses (also non-IP lossless traffic such as RoCEv1 or FCoE), within one L2 domain an
/// IP pair maps to one MAC pair, and a fixed 12-byte key keeps table slots and TLV entries
/// fixed-size.
///
/// Its fields lie in the header's order, destination first, so that [`FlowKey::of_header`]
/// is one 12-byte copy, which a reader of the key takes in one go without waiting on
/// narrower stores; it orders and hashes by (source, destination) all the same.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub struct FlowKey {
    pub dst: EthernetAddress,
    pub src: EthernetAddress,
}

impl FlowKey {
    /// The flow of a frame, read from its Ethernet header (which the caller has checked it
    /// has). Always inlined: out of line, the key came back through memory.
    #[inline(always)]
    pub fn of_header(frame: &[u8]) -> FlowKey {
        // The addresses as they lie, in one piece (the Ethernet view reads each on its own).
        let header: [u8; 12] = frame[..12].try_into().expect("an Ethernet header");
        let [d0, d1, d2, d3, d4, d5, s0, s1, s2, s3, s4, s5] = header;
        FlowKey { dst: EthernetAddress([d0, d1, d2, d3, d4, d5]), src: EthernetAddress([s0, s1, s2, s3, s4, s5]) }
    }
}

impl Ord for FlowKey {
    fn cmp(&self, other: &FlowKey) -> std::cmp::Ordering {
        (self.src, self.dst).cmp(&(other.src, other.dst))
    }
}

impl PartialOrd for FlowKey {
    fn partial_cmp(&self, other: &FlowKey) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl std::hash::Hash for FlowKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        (self.src, self.dst).hash(state);
    }
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

pub const OFC_MAGIC: [u8; 4] = *b"OFCT";
/// Where the TLV starts in an untagged frame: after the 14-byte header and 20 PFC bytes.
pub const OFC_TLV_OFFSET: usize = 34;
pub const OFC_HEADER_LEN: usize = 12;
pub const OFC_ENTRY_LEN: usize = 12;
const VERSION: u8 = 1;
const KEY_MAC_PAIR: u8 = 1;
const OP_PAUSE: u8 = 1;
const OP_RESUME: u8 = 2;
const FLAG_COARSE: u8 = 1;
const FLAG_MORE: u8 = 2;

/// Flows one frame of at most `frame_len` bytes (FCS excluded) carries after the 14-byte
/// header, the 20 PFC bytes and the 12-byte TLV header: 1 in a standard 60-byte MAC Control
/// frame (IEEE 802.3 clause 31.4: minFrameSize, 64 bytes with the FCS).
pub fn ofc_entries_per_frame(frame_len: usize) -> usize {
    frame_len.saturating_sub(OFC_TLV_OFFSET + OFC_HEADER_LEN) / OFC_ENTRY_LEN
}

/// Flows one frame carries on a port of `mtu`, the longest frame its link takes (the MTU of
/// payload after the 14-byte header).
pub fn ofc_max_entries(mtu: u32) -> usize {
    ofc_entries_per_frame(mtu as usize + 14)
}

/// The length (FCS excluded, padded to 60) of a frame with `entries` flows.
pub fn ofc_frame_len(entries: usize) -> usize {
    (OFC_TLV_OFFSET + OFC_HEADER_LEN + OFC_ENTRY_LEN * entries).max(super::MIN_FRAME_LEN)
}

/// Whether the bytes after a PFC frame's fields are an OFC TLV (a plain PFC frame has padding).
pub fn has_ofc_tlv(trailer: &[u8]) -> bool {
    trailer.starts_with(&OFC_MAGIC)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OfcOp {
    Pause,
    Resume,
}

impl OfcOp {
    pub const fn name(self) -> &'static str {
        match self {
            OfcOp::Pause => "PAUSE",
            OfcOp::Resume => "RESUME",
        }
    }
}

/// What an OFC frame says besides its flows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OfcHeader {
    pub op: OfcOp,
    pub priority: Pcp,
    /// PAUSE: every flow of the priority is paused (X_OFF, or a full table).
    pub coarse: bool,
    /// Another frame continues this list.
    pub more: bool,
}

/// A view of the TLV.
#[derive(Debug, Clone)]
pub struct OfcTlv<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> OfcTlv<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        OfcTlv { buffer }
    }

    /// Guarantees the header and `count` entries are in bounds.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let data = buffer.as_ref();
        check_len(Layer::Ofc, data.len(), OFC_HEADER_LEN)?;
        let tlv = OfcTlv { buffer };
        if tlv.buffer.as_ref().len() < OFC_HEADER_LEN + OFC_ENTRY_LEN * usize::from(tlv.count()) {
            return Err(Error::new(Layer::Ofc, ErrorKind::BadLength));
        }
        Ok(tlv)
    }

    pub fn magic(&self) -> [u8; 4] {
        self.buffer.as_ref()[..4].try_into().expect("4 bytes")
    }

    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[4]
    }

    pub fn op(&self) -> u8 {
        self.buffer.as_ref()[5]
    }

    pub fn priority(&self) -> u8 {
        self.buffer.as_ref()[6]
    }

    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[7]
    }

    pub fn key_type(&self) -> u8 {
        self.buffer.as_ref()[8]
    }

    pub fn reserved(&self) -> u8 {
        self.buffer.as_ref()[9]
    }

    pub fn count(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 10)
    }

    /// Entry `index` (below [`OfcTlv::count`]).
    pub fn flow(&self, index: usize) -> FlowKey {
        entry(&self.buffer.as_ref()[OFC_HEADER_LEN + OFC_ENTRY_LEN * index..])
    }
}

fn entry(bytes: &[u8]) -> FlowKey {
    FlowKey {
        src: EthernetAddress(bytes[..6].try_into().expect("6 bytes")),
        dst: EthernetAddress(bytes[6..12].try_into().expect("6 bytes")),
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> OfcTlv<T> {
    fn data(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    /// Writes the header for `count` entries.
    pub fn set_header(&mut self, header: &OfcHeader, count: u16) {
        let data = self.data();
        data[..4].copy_from_slice(&OFC_MAGIC);
        data[4] = VERSION;
        data[5] = if header.op == OfcOp::Pause { OP_PAUSE } else { OP_RESUME };
        data[6] = header.priority.value();
        data[7] = if header.coarse { FLAG_COARSE } else { 0 } | if header.more { FLAG_MORE } else { 0 };
        data[8] = KEY_MAC_PAIR;
        data[9] = 0;
        write_u16(data, 10, count);
    }

    pub fn set_flow(&mut self, index: usize, flow: &FlowKey) {
        let at = OFC_HEADER_LEN + OFC_ENTRY_LEN * index;
        let data = self.data();
        data[at..at + 6].copy_from_slice(&flow.src.0);
        data[at + 6..at + 12].copy_from_slice(&flow.dst.0);
    }
}

/// An OFC TLV as values; the flows stay in the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OfcRepr<'a> {
    pub op: OfcOp,
    pub priority: Pcp,
    pub coarse: bool,
    pub more: bool,
    entries: &'a [u8],
}

impl<'a> OfcRepr<'a> {
    /// Checks, in order: magic, version, op, priority, flags and reserved bits, key type, and
    /// that the PFC fields agree (the class enabled; time > 0 for PAUSE, 0 for RESUME).
    pub fn parse(tlv: &OfcTlv<&'a [u8]>, pfc: &PfcRepr) -> Result<OfcRepr<'a>> {
        let error = |kind| Err(Error::new(Layer::Ofc, kind));
        if tlv.magic() != OFC_MAGIC || tlv.version() != VERSION {
            return error(ErrorKind::BadVersion);
        }
        let op = match tlv.op() {
            OP_PAUSE => OfcOp::Pause,
            OP_RESUME => OfcOp::Resume,
            _ => return error(ErrorKind::BadValue),
        };
        let Some(priority) = Pcp::new(tlv.priority()) else { return error(ErrorKind::ReservedBits) };
        if tlv.flags() & !(FLAG_COARSE | FLAG_MORE) != 0 || tlv.reserved() != 0 {
            return error(ErrorKind::ReservedBits);
        }
        if tlv.key_type() != KEY_MAC_PAIR {
            return error(ErrorKind::BadValue);
        }
        let coarse = tlv.flags() & FLAG_COARSE != 0;
        let time = pfc.quanta[priority.index()];
        if !pfc.is_enabled(priority) || (op == OfcOp::Pause) != (time > 0) || (coarse && op == OfcOp::Resume) {
            return error(ErrorKind::BadValue);
        }
        let end = OFC_HEADER_LEN + OFC_ENTRY_LEN * usize::from(tlv.count());
        Ok(OfcRepr {
            op,
            priority,
            coarse,
            more: tlv.flags() & FLAG_MORE != 0,
            entries: &tlv.buffer[OFC_HEADER_LEN..end],
        })
    }

    pub fn header(&self) -> OfcHeader {
        OfcHeader { op: self.op, priority: self.priority, coarse: self.coarse, more: self.more }
    }

    pub fn count(&self) -> usize {
        self.entries.len() / OFC_ENTRY_LEN
    }

    pub fn flows(&self) -> impl Iterator<Item = FlowKey> + 'a {
        self.entries.chunks_exact(OFC_ENTRY_LEN).map(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FrameView, MacControlRepr, build_ofc_frame};
    use proptest::prelude::*;

    fn flow(n: u8) -> FlowKey {
        FlowKey { src: EthernetAddress([2, 0, 0, 0, 1, n]), dst: EthernetAddress([2, 0, 0, 0, 2, n]) }
    }

    fn header(op: OfcOp, coarse: bool, more: bool) -> OfcHeader {
        OfcHeader { op, priority: Pcp::from_low_bits(3), coarse, more }
    }

    #[test]
    fn a_pause_with_two_flows_byte_by_byte() {
        let mut frame = [0u8; 100];
        let len = build_ofc_frame(
            &mut frame,
            EthernetAddress([2, 0, 0, 0, 0, 9]),
            header(OfcOp::Pause, false, true),
            500,
            [flow(1), flow(2)],
        );
        assert_eq!(len, 34 + 12 + 24);
        assert_eq!(frame[..6], [0x01, 0x80, 0xC2, 0, 0, 1]);
        assert_eq!(frame[12..18], [0x88, 0x08, 0x01, 0x01, 0x00, 0x08], "PFC, class 3 enabled");
        assert_eq!(frame[24..26], 500u16.to_be_bytes(), "time[3]");
        assert_eq!(frame[34..46], [b'O', b'F', b'C', b'T', 1, 1, 3, 2, 1, 0, 0, 2]);
        assert_eq!(frame[46..58], [2, 0, 0, 0, 1, 1, 2, 0, 0, 0, 2, 1]);
        let view = FrameView::parse(&frame[..len]).unwrap();
        let tlv = view.ofc().unwrap().unwrap();
        assert_eq!(tlv.header(), header(OfcOp::Pause, false, true));
        assert_eq!(tlv.flows().collect::<Vec<_>>(), [flow(1), flow(2)]);
    }

    #[test]
    fn small_frames_are_padded_and_a_resume_has_time_zero() {
        let mut frame = [0xAAu8; 64];
        let len = build_ofc_frame(&mut frame, EthernetAddress([2; 6]), header(OfcOp::Resume, false, false), 500, []);
        assert_eq!(len, 60);
        assert!(frame[46..60].iter().all(|&b| b == 0));
        let view = FrameView::parse(&frame[..len]).unwrap();
        let Ok(MacControlRepr::Pfc(pfc)) = view.mac_control() else { panic!() };
        assert_eq!(pfc.quanta[3], 0);
        assert_eq!(view.ofc().unwrap().unwrap().count(), 0);
    }

    #[test]
    fn plain_pfc_has_no_tlv_and_bad_tlvs_are_errors() {
        let mut frame = [0u8; 60];
        let repr = MacControlRepr::Pfc(PfcRepr::default().with_class(Pcp::from_low_bits(3), 9));
        crate::build_mac_control_frame(&mut frame, EthernetAddress([2; 6]), crate::PAUSE_MULTICAST, &repr);
        assert_eq!(FrameView::parse(&frame).unwrap().ofc(), Ok(None));
        let good = {
            let mut f = [0u8; 80];
            let len =
                build_ofc_frame(&mut f, EthernetAddress([2; 6]), header(OfcOp::Pause, false, false), 9, [flow(1)]);
            f[..len].to_vec()
        };
        let corrupt = |at: usize, value: u8| {
            let mut f = good.clone();
            f[at] = value;
            FrameView::parse(&f).unwrap().ofc().unwrap_err().kind
        };
        assert_eq!(corrupt(38, 2), ErrorKind::BadVersion);
        assert_eq!(corrupt(39, 3), ErrorKind::BadValue, "op");
        assert_eq!(corrupt(40, 8), ErrorKind::ReservedBits, "priority");
        assert_eq!(corrupt(40, 4), ErrorKind::BadValue, "class 4 is not enabled in the PFC vector");
        assert_eq!(corrupt(41, 4), ErrorKind::ReservedBits, "flags");
        assert_eq!(corrupt(42, 2), ErrorKind::BadValue, "key type");
        assert_eq!(corrupt(45, 2), ErrorKind::BadLength, "count beyond the frame");
        assert_eq!(corrupt(25, 0), ErrorKind::BadValue, "a PAUSE with time 0");
        // Shorter than a MAC control frame may be: the PFC part is already malformed.
        let short = FrameView::parse(&good[..40]).unwrap().ofc().unwrap_err();
        assert_eq!((short.layer, short.kind), (Layer::MacControl, ErrorKind::BadLength));
        assert_eq!(OfcTlv::new_checked(&good[34..40]).unwrap_err().kind, ErrorKind::Truncated);
    }

    #[test]
    fn entries_fit_the_mtu() {
        assert_eq!(ofc_entries_per_frame(60), 1, "a standard MAC Control frame: one flow");
        assert_eq!(ofc_frame_len(1), 60);
        assert_eq!(ofc_entries_per_frame(57), 0);
        assert_eq!(ofc_max_entries(1500), 122);
        assert!(ofc_frame_len(122) - 14 <= 1500);
        assert!(ofc_frame_len(123) - 14 > 1500);
    }

    proptest! {
        /// Any header and flows round-trip through the frame builder and the parser.
        #[test]
        fn round_trips(pause: bool, coarse: bool, more: bool, priority in 0u8..8, quanta in 1u16.., flows in proptest::collection::vec((any::<[u8; 6]>(), any::<[u8; 6]>()), 0..122)) {
            let op = if pause { OfcOp::Pause } else { OfcOp::Resume };
            let header = OfcHeader { op, priority: Pcp::from_low_bits(priority), coarse: coarse && pause, more };
            let flows: Vec<FlowKey> = flows.into_iter().map(|(s, d)| FlowKey { src: EthernetAddress(s), dst: EthernetAddress(d) }).collect();
            let mut frame = vec![0u8; ofc_frame_len(flows.len())];
            let len = build_ofc_frame(&mut frame, EthernetAddress([2; 6]), header, quanta, flows.iter().copied());
            prop_assert_eq!(len, frame.len());
            let tlv = FrameView::parse(&frame).unwrap().ofc().unwrap().unwrap();
            prop_assert_eq!(tlv.header(), header);
            prop_assert_eq!(tlv.flows().collect::<Vec<_>>(), flows);
        }
    }
}
