//! 802.1Q tag. The view starts after the TPID (0x8100): TCI (0–1: PCP 3 bits, DEI 1 bit,
//! VID 12 bits), then the encapsulated EtherType (2–3).

use super::{Layer, Result};
use crate::field::{check_len, read_u16, write_u16};
use std::fmt;

pub const VLAN_HEADER_LEN: usize = 4;

/// An 802.1p priority, 0–7: the PCP of a tag, a PFC class, a switch queue index.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Pcp(u8);

impl Pcp {
    pub const COUNT: usize = 8;
    pub const ALL: [Pcp; 8] = [Pcp(0), Pcp(1), Pcp(2), Pcp(3), Pcp(4), Pcp(5), Pcp(6), Pcp(7)];

    pub const fn new(value: u8) -> Option<Pcp> {
        if value < 8 { Some(Pcp(value)) } else { None }
    }

    /// The low three bits of `bits`.
    pub const fn from_low_bits(bits: u8) -> Pcp {
        Pcp(bits & 0x07)
    }

    pub const fn value(self) -> u8 {
        self.0
    }

    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// This priority's bit in a PFC class-enable vector.
    pub const fn mask(self) -> u8 {
        1 << self.0
    }
}

impl fmt::Display for Pcp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A view of an 802.1Q tag (after the TPID).
#[derive(Debug, Clone)]
pub struct VlanHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> VlanHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        VlanHeader { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Vlan, buffer.as_ref().len(), VLAN_HEADER_LEN)?;
        Ok(VlanHeader { buffer })
    }

    fn tci(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 0)
    }

    pub fn pcp(&self) -> Pcp {
        Pcp::from_low_bits((self.tci() >> 13) as u8)
    }

    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    pub fn vid(&self) -> u16 {
        self.tci() & 0x0FFF
    }

    pub fn ethertype(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 2)
    }

    pub fn payload(&self) -> &[u8] {
        &self.buffer.as_ref()[VLAN_HEADER_LEN..]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> VlanHeader<T> {
    pub fn set_tci(&mut self, pcp: Pcp, dei: bool, vid: u16) {
        let tci = (u16::from(pcp.value()) << 13) | (u16::from(dei) << 12) | (vid & 0x0FFF);
        write_u16(self.buffer.as_mut(), 0, tci);
    }

    pub fn set_ethertype(&mut self, ethertype: u16) {
        write_u16(self.buffer.as_mut(), 2, ethertype);
    }
}

/// An 802.1Q tag's control information as values; the encapsulated EtherType belongs to
/// the frame's [`L2Repr`](super::L2Repr).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VlanRepr {
    pub pcp: Pcp,
    pub dei: bool,
    /// 0 (priority-tagged) to 4095; values above 4095 are masked on emit.
    pub vid: u16,
}

impl VlanRepr {
    pub fn parse<T: AsRef<[u8]>>(header: &VlanHeader<T>) -> VlanRepr {
        VlanRepr { pcp: header.pcp(), dei: header.dei(), vid: header.vid() }
    }

    /// Writes the TCI; the caller writes the encapsulated EtherType.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut VlanHeader<T>) {
        header.set_tci(self.pcp, self.dei, self.vid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn field_positions() {
        // PCP 5, DEI 1, VID 0x123 → TCI 0xB123.
        let header = VlanHeader::new_checked(&[0xB1, 0x23, 0x08, 0x00][..]).unwrap();
        assert_eq!((header.pcp().value(), header.dei(), header.vid(), header.ethertype()), (5, true, 0x123, 0x0800));
        assert!(VlanHeader::new_checked(&[0xB1, 0x23, 0x08][..]).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(pcp in 0u8..8, dei: bool, vid in 0u16..4096) {
            let repr = VlanRepr { pcp: Pcp::new(pcp).unwrap(), dei, vid };
            let mut bytes = [0u8; 4];
            repr.emit(&mut VlanHeader::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(VlanRepr::parse(&VlanHeader::new_checked(&bytes[..]).unwrap()), repr);
        }
    }
}
