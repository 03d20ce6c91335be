//! Ethernet II header: destination (0–5), source (6–11), EtherType (12–13).

use super::{Error, ErrorKind, Layer, Result};
use crate::field::{check_len, read_u16, write_u16};
use std::fmt;
use std::str::FromStr;

pub const ETHERNET_HEADER_LEN: usize = 14;
/// Minimum Ethernet frame without FCS; shorter frames are padded with zeros.
pub const MIN_FRAME_LEN: usize = 60;

/// A 48-bit MAC address.
#[derive(Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EthernetAddress(pub [u8; 6]);

impl EthernetAddress {
    pub const BROADCAST: EthernetAddress = EthernetAddress([0xFF; 6]);

    pub const fn is_broadcast(&self) -> bool {
        matches!(self.0, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
    }

    /// Group (multicast or broadcast) address: the I/G bit is set.
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 0x01 != 0
    }

    pub const fn is_unicast(&self) -> bool {
        !self.is_multicast()
    }

    /// 01-80-C2-00-00-00 … 0F: reserved for link-local protocols (PAUSE, LLDP, STP, ...),
    /// which an 802.1Q bridge never forwards.
    pub const fn is_link_local(&self) -> bool {
        matches!(self.0, [0x01, 0x80, 0xC2, 0x00, 0x00, low] if low <= 0x0F)
    }
}

impl fmt::Display for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5])
    }
}

impl fmt::Debug for EthernetAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The reason a MAC address string was rejected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a MAC address (expected six hex octets such as 02:00:00:00:00:01)")]
pub struct AddressParseError(pub String);

impl FromStr for EthernetAddress {
    type Err = AddressParseError;

    /// Accepts `02:00:00:00:00:01` and `02-00-00-00-00-01`.
    fn from_str(text: &str) -> std::result::Result<Self, Self::Err> {
        let error = || AddressParseError(text.to_string());
        let separator = if text.contains('-') { '-' } else { ':' };
        let mut octets = [0u8; 6];
        let mut parts = text.split(separator);
        for octet in &mut octets {
            let part = parts.next().ok_or_else(error)?;
            if part.len() != 2 {
                return Err(error());
            }
            *octet = u8::from_str_radix(part, 16).map_err(|_| error())?;
        }
        if parts.next().is_some() {
            return Err(error());
        }
        Ok(EthernetAddress(octets))
    }
}

/// A view of an Ethernet II frame.
#[derive(Debug, Clone)]
pub struct EthernetFrame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> EthernetFrame<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        EthernetFrame { buffer }
    }

    /// Fails with `Truncated` when the buffer is shorter than the 14-byte header.
    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Ethernet, buffer.as_ref().len(), ETHERNET_HEADER_LEN)?;
        Ok(EthernetFrame { buffer })
    }

    pub fn into_inner(self) -> T {
        self.buffer
    }

    pub fn dst_addr(&self) -> EthernetAddress {
        EthernetAddress(self.buffer.as_ref()[0..6].try_into().expect("checked length"))
    }

    pub fn src_addr(&self) -> EthernetAddress {
        EthernetAddress(self.buffer.as_ref()[6..12].try_into().expect("checked length"))
    }

    pub fn ethertype(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 12)
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[ETHERNET_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> EthernetFrame<T> {
    pub fn set_dst_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[0..6].copy_from_slice(&addr.0);
    }

    pub fn set_src_addr(&mut self, addr: EthernetAddress) {
        self.buffer.as_mut()[6..12].copy_from_slice(&addr.0);
    }

    pub fn set_ethertype(&mut self, ethertype: u16) {
        write_u16(self.buffer.as_mut(), 12, ethertype);
    }

    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[ETHERNET_HEADER_LEN..]
    }
}

/// The Ethernet II header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EthernetRepr {
    pub src: EthernetAddress,
    pub dst: EthernetAddress,
    pub ethertype: u16,
}

impl EthernetRepr {
    /// Ethernet II only: an EtherType field below 0x0600 is an 802.3 length, which pfcswitch
    /// does not carry (no LLC/SNAP user in a lossless fabric), so it is rejected.
    pub fn parse<T: AsRef<[u8]>>(frame: &EthernetFrame<T>) -> Result<EthernetRepr> {
        if frame.ethertype() < 0x0600 {
            return Err(Error::new(Layer::Ethernet, ErrorKind::BadValue));
        }
        Ok(EthernetRepr { src: frame.src_addr(), dst: frame.dst_addr(), ethertype: frame.ethertype() })
    }

    pub const fn buffer_len(&self) -> usize {
        ETHERNET_HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut EthernetFrame<T>) {
        frame.set_dst_addr(self.dst);
        frame.set_src_addr(self.src);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn address_text_forms() {
        let a: EthernetAddress = "02:00:00:00:00:0a".parse().unwrap();
        assert_eq!(a.0, [2, 0, 0, 0, 0, 10]);
        assert_eq!("02-00-00-00-00-0A".parse::<EthernetAddress>().unwrap(), a);
        assert_eq!(a.to_string(), "02:00:00:00:00:0a");
        for bad in ["", "02:00:00:00:00", "02:00:00:00:00:00:00", "2:00:00:00:00:00", "zz:00:00:00:00:00"] {
            assert!(bad.parse::<EthernetAddress>().is_err(), "{bad}");
        }
    }

    #[test]
    fn address_classes() {
        assert!(EthernetAddress([0x01, 0x80, 0xC2, 0, 0, 0x01]).is_link_local());
        assert!(EthernetAddress([0x01, 0x80, 0xC2, 0, 0, 0x0E]).is_link_local());
        assert!(!EthernetAddress([0x01, 0x80, 0xC2, 0, 0, 0x10]).is_link_local());
        assert!(EthernetAddress::BROADCAST.is_broadcast() && EthernetAddress::BROADCAST.is_multicast());
        assert!(EthernetAddress([0x33, 0x33, 0, 0, 0, 1]).is_multicast());
        assert!(EthernetAddress([0x02, 0, 0, 0, 0, 1]).is_unicast());
    }

    #[test]
    fn rejects_short_and_802_3_length_frames() {
        let err = EthernetFrame::new_checked(&[0u8; 13][..]).unwrap_err();
        assert_eq!(err, Error::new(Layer::Ethernet, ErrorKind::Truncated));
        let mut bytes = [0u8; 14];
        bytes[12..14].copy_from_slice(&0x05DCu16.to_be_bytes());
        let frame = EthernetFrame::new_checked(&bytes[..]).unwrap();
        assert_eq!(EthernetRepr::parse(&frame).unwrap_err().kind, ErrorKind::BadValue);
    }

    proptest! {
        #[test]
        fn round_trip(src: [u8; 6], dst: [u8; 6], ethertype in 0x0600u16..) {
            let repr = EthernetRepr { src: EthernetAddress(src), dst: EthernetAddress(dst), ethertype };
            let mut bytes = [0u8; 14];
            repr.emit(&mut EthernetFrame::new_unchecked(&mut bytes[..]));
            let parsed = EthernetRepr::parse(&EthernetFrame::new_checked(&bytes[..]).unwrap()).unwrap();
            prop_assert_eq!(parsed, repr);
        }
    }
}
