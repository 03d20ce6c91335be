//! pfcswitch's wire formats, smoltcp style: every frame the switch, the hosts and the tools
//! read or write, and nothing else. It depends on no other crate of the project, so the
//! parsers can be used (and fuzzed, `fuzz/`) alone. It is not a packet socket, a switch or a
//! protocol engine: it only checks, reads and writes bytes in caller-provided buffers.
//!
//! Each format has a zero-copy view (`Frame`, `Header`, `Packet`) built by one checked
//! constructor (`new_checked`, which guarantees every fixed field is in bounds so the
//! accessors after it are infallible) and a high-level `Repr` with `parse` (semantic
//! checks) and `emit` (writes into a caller's buffer). Parsing never panics on any input;
//! every rejection carries an [`Error`] naming the layer and the reason, which the datapath
//! counts.
//!
//! Layouts are those of DESIGN.md ("Wire formats"); byte offsets in the docs below are from
//! the start of the view.
#![forbid(unsafe_code)]

mod cn_tag;
mod cnm;
mod ethernet;
mod fecn;
mod frame;
mod ipv4;
mod mac_control;
mod ofc;
mod traffic;
mod udp;
mod vlan;

pub use cn_tag::{CN_TAG_HEADER_LEN, CnTagHeader, CnTagRepr};
pub use cnm::{CNM_MAX_ENCAPSULATED, CnmPacket, CnmRepr};
pub use ethernet::{ETHERNET_HEADER_LEN, EthernetAddress, EthernetFrame, EthernetRepr};
pub use fecn::{FECN_PROBE_LEN, FecnProbe, FecnProbeRepr, FecnSubtype};
pub use frame::{
    DataFrameSpec, FrameView, L2Repr, MIN_FRAME_LEN, build_announcement_frame, build_cnm_frame, build_data_frame,
    build_fecn_probe_frame, build_mac_control_frame, build_ofc_frame, mark_ecn_ce, mark_fecn_probe,
};
pub use ipv4::{Ipv4Addr, Ipv4Packet, Ipv4Repr};
pub use mac_control::{
    MAC_CONTROL_MIN_PAYLOAD, MacControlPacket, MacControlRepr, OPCODE_PAUSE, OPCODE_PFC, PAUSE_MULTICAST, PfcRepr,
};
pub use ofc::{
    FlowKey, OFC_ENTRY_LEN, OFC_HEADER_LEN, OFC_MAGIC, OFC_TLV_OFFSET, OfcHeader, OfcOp, OfcRepr, OfcTlv, has_ofc_tlv,
    ofc_frame_len, ofc_max_entries,
};
pub use traffic::{TRAFFIC_HEADER_LEN, TRAFFIC_UDP_PORT, TrafficHeader, TrafficKind, TrafficRepr};
pub use udp::{UdpPacket, UdpRepr};
pub use vlan::{Pcp, VLAN_HEADER_LEN, VlanHeader, VlanRepr};

use std::fmt;

/// EtherType values pfcswitch reads or writes.
pub mod ethertype {
    pub const IPV4: u16 = 0x0800;
    pub const ARP: u16 = 0x0806;
    pub const VLAN: u16 = 0x8100;
    pub const IPV6: u16 = 0x86DD;
    pub const MAC_CONTROL: u16 = 0x8808;
    /// IEEE 802 local experimental EtherType 1: the project's own frames, told apart by
    /// their first nibble: a host's announcement (0, a zero payload) or a FECN probe (1).
    pub const LOCAL_EXPERIMENTAL_1: u16 = 0x88B5;
    /// 802.1Qau congestion notification message.
    pub const CNM: u16 = 0x22E7;
    /// 802.1Qau congestion notification tag.
    pub const CN_TAG: u16 = 0x22E9;
}

/// The header or format in which a parse failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layer {
    Ethernet,
    Vlan,
    MacControl,
    CnTag,
    Cnm,
    Ipv4,
    Udp,
    Traffic,
    Ofc,
    Fecn,
}

/// What was wrong with the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// Fewer bytes than the fixed fields need.
    Truncated,
    /// The EtherType does not announce this format (e.g. not 0x8808 for MAC control).
    WrongEtherType,
    /// A MAC control opcode other than PAUSE (0x0001) and PFC (0x0101).
    UnknownOpcode,
    /// Bits the standard reserves (must be zero) are set.
    ReservedBits,
    /// A length field or the frame length is inconsistent with the format.
    BadLength,
    /// A version or magic field this implementation does not speak.
    BadVersion,
    /// A field holds a value its format forbids (e.g. an IPv4 header length below 5).
    BadValue,
}

/// A parse failure: where and why. Small and `Copy` so the datapath can count it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Error {
    pub layer: Layer,
    pub kind: ErrorKind,
}

impl Error {
    pub const fn new(layer: Layer, kind: ErrorKind) -> Error {
        Error { layer, kind }
    }
}

impl Layer {
    pub const ALL: [Layer; 10] = [
        Layer::Ethernet,
        Layer::Vlan,
        Layer::MacControl,
        Layer::CnTag,
        Layer::Cnm,
        Layer::Ipv4,
        Layer::Udp,
        Layer::Traffic,
        Layer::Ofc,
        Layer::Fecn,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            Layer::Ethernet => "ethernet",
            Layer::Vlan => "vlan",
            Layer::MacControl => "mac_control",
            Layer::CnTag => "cn_tag",
            Layer::Cnm => "cnm",
            Layer::Ipv4 => "ipv4",
            Layer::Udp => "udp",
            Layer::Traffic => "traffic",
            Layer::Ofc => "ofc",
            Layer::Fecn => "fecn",
        }
    }
}

impl ErrorKind {
    pub const ALL: [ErrorKind; 7] = [
        ErrorKind::Truncated,
        ErrorKind::WrongEtherType,
        ErrorKind::UnknownOpcode,
        ErrorKind::ReservedBits,
        ErrorKind::BadLength,
        ErrorKind::BadVersion,
        ErrorKind::BadValue,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::Truncated => "truncated",
            ErrorKind::WrongEtherType => "wrong_ethertype",
            ErrorKind::UnknownOpcode => "unknown_opcode",
            ErrorKind::ReservedBits => "reserved_bits",
            ErrorKind::BadLength => "bad_length",
            ErrorKind::BadVersion => "bad_version",
            ErrorKind::BadValue => "bad_value",
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Truncated => "truncated",
            ErrorKind::WrongEtherType => "wrong EtherType for",
            ErrorKind::UnknownOpcode => "unknown opcode in",
            ErrorKind::ReservedBits => "reserved bits set in",
            ErrorKind::BadLength => "bad length of",
            ErrorKind::BadVersion => "unsupported version of",
            ErrorKind::BadValue => "invalid field in",
        };
        write!(f, "{what} {} header", self.layer.name().replace('_', " "))
    }
}

impl std::error::Error for Error {}

impl Error {
    /// Number of distinct errors, for fixed-size counter tables.
    pub const COUNT: usize = Layer::ALL.len() * ErrorKind::ALL.len();

    /// A dense index below [`Error::COUNT`].
    pub const fn index(self) -> usize {
        self.layer as usize * ErrorKind::ALL.len() + self.kind as usize
    }

    /// The error with [`Error::index`] `index`.
    pub const fn from_index(index: usize) -> Error {
        Error::new(Layer::ALL[index / ErrorKind::ALL.len()], ErrorKind::ALL[index % ErrorKind::ALL.len()])
    }

    /// A metrics label such as `mac_control_truncated`.
    pub fn label(self) -> String {
        format!("{}_{}", self.layer.name(), self.kind.name())
    }
}

pub type Result<T> = std::result::Result<T, Error>;

/// Fails with `Truncated` at `layer` unless `len >= need`.
pub(crate) fn check_len(layer: Layer, len: usize, need: usize) -> Result<()> {
    if len < need { Err(Error::new(layer, ErrorKind::Truncated)) } else { Ok(()) }
}

pub(crate) fn read_u16(data: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([data[at], data[at + 1]])
}

pub(crate) fn write_u16(data: &mut [u8], at: usize, value: u16) {
    data[at..at + 2].copy_from_slice(&value.to_be_bytes());
}

/// The Internet checksum (RFC 1071) over `chunks` (concatenated), folded and complemented.
///
/// Sums 32-bit big-endian words into a u64: 2^16 ≡ 1 (mod 2^16 − 1), so folding that sum
/// equals the 16-bit one's-complement sum (RFC 1071 §2(B)) at a quarter of the additions,
/// which matters at 1 Gbit/s where the endpoints checksum every 3000-byte frame.
pub(crate) fn internet_checksum(chunks: &[&[u8]]) -> u16 {
    let mut sum: u64 = 0;
    // A byte left over from an odd-length chunk pairs with the next chunk's first byte.
    let mut pending: Option<u8> = None;
    for chunk in chunks {
        let mut bytes = *chunk;
        if let Some(high) = pending.take() {
            match bytes.split_first() {
                Some((&low, rest)) => {
                    sum += u64::from(u16::from_be_bytes([high, low]));
                    bytes = rest;
                }
                None => {
                    pending = Some(high);
                    continue;
                }
            }
        }
        let mut words = bytes.chunks_exact(4);
        for word in &mut words {
            sum += u64::from(u32::from_be_bytes([word[0], word[1], word[2], word[3]]));
        }
        let mut pairs = words.remainder().chunks_exact(2);
        for pair in &mut pairs {
            sum += u64::from(u16::from_be_bytes([pair[0], pair[1]]));
        }
        pending = pairs.remainder().first().copied();
    }
    if let Some(high) = pending {
        sum += u64::from(u16::from_be_bytes([high, 0]));
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::internet_checksum;
    use proptest::prelude::*;

    #[test]
    fn rfc_1071_example() {
        // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2.
        assert_eq!(internet_checksum(&[&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]]), !0xddf2);
    }

    proptest! {
        /// However the bytes are split into chunks, the checksum is that of their 16-bit words.
        #[test]
        fn equals_the_sum_of_16_bit_words(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..5)) {
            let bytes: Vec<u8> = chunks.concat();
            let mut sum: u32 = bytes.chunks(2).map(|w| u32::from(w[0]) << 8 | u32::from(*w.get(1).unwrap_or(&0))).sum();
            while sum >> 16 != 0 {
                sum = (sum & 0xFFFF) + (sum >> 16);
            }
            let slices: Vec<&[u8]> = chunks.iter().map(Vec::as_slice).collect();
            prop_assert_eq!(internet_checksum(&slices), !(sum as u16));
        }
    }
}
