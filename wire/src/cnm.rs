//! 802.1Qau congestion notification message (EtherType 0x22E7), as laid out in DESIGN.md.
//!
//! The view starts after the EtherType:
//!
//! | bytes  | field                                                          |
//! |--------|----------------------------------------------------------------|
//! | 0–1    | version (4 bits, 0) · reserved (6 bits, 0) · QntzFb (6 bits)   |
//! | 2–9    | congestion point identifier (CPID)                             |
//! | 10–11  | cnmQOffset, signed                                             |
//! | 12–13  | cnmQDelta, signed                                              |
//! | 14–15  | encapsulated priority: priority in the top 3 bits, 13 bits 0   |
//! | 16–21  | encapsulated destination MAC address                           |
//! | 22–23  | encapsulated MSDU length: of the sampled frame's whole MSDU    |
//! | 24..   | encapsulated MSDU: its first min(length, 64) bytes             |
//!
//! As in 802.1Qau §33.4, the length field gives the sampled MSDU's full length while only
//! its first 64 bytes travel; the number of encapsulated bytes is therefore
//! min(length, 64), and the frame is padded to 60 bytes.

use super::{Error, ErrorKind, EthernetAddress, Layer, Pcp, Result};
use crate::field::{check_len, read_u16, write_u16};

/// At most this many bytes of the sampled frame's MSDU travel in a CNM.
pub const CNM_MAX_ENCAPSULATED: usize = 64;
const CNM_FIXED_LEN: usize = 24;

/// A view of a CNM PDU.
#[derive(Debug, Clone)]
pub struct CnmPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CnmPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        CnmPacket { buffer }
    }

    /// Guarantees the 24 fixed bytes are in bounds.
    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Cnm, buffer.as_ref().len(), CNM_FIXED_LEN)?;
        Ok(CnmPacket { buffer })
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.data()[0] >> 4
    }

    pub fn reserved(&self) -> u8 {
        ((read_u16(self.data(), 0) >> 6) & 0x3F) as u8
    }

    pub fn quantized_feedback(&self) -> u8 {
        self.data()[1] & 0x3F
    }

    pub fn cpid(&self) -> u64 {
        u64::from_be_bytes(self.data()[2..10].try_into().expect("checked length"))
    }

    pub fn q_offset(&self) -> i16 {
        read_u16(self.data(), 10) as i16
    }

    pub fn q_delta(&self) -> i16 {
        read_u16(self.data(), 12) as i16
    }

    pub fn encapsulated_priority_field(&self) -> u16 {
        read_u16(self.data(), 14)
    }

    pub fn encapsulated_dst(&self) -> EthernetAddress {
        EthernetAddress(self.data()[16..22].try_into().expect("checked length"))
    }

    pub fn encapsulated_msdu_len(&self) -> u16 {
        read_u16(self.data(), 22)
    }

    /// The encapsulated MSDU bytes, or `None` if the buffer holds fewer than the length
    /// field promises.
    pub fn encapsulated_msdu(&self) -> Option<&[u8]> {
        let count = usize::from(self.encapsulated_msdu_len()).min(CNM_MAX_ENCAPSULATED);
        self.data().get(CNM_FIXED_LEN..CNM_FIXED_LEN + count)
    }
}

/// A CNM as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CnmRepr<'a> {
    /// Quantized feedback |Fb|, 0–63.
    pub quantized_feedback: u8,
    pub cpid: u64,
    pub q_offset: i16,
    pub q_delta: i16,
    pub encapsulated_priority: Pcp,
    pub encapsulated_dst: EthernetAddress,
    /// Length of the sampled frame's whole MSDU.
    pub msdu_len: u16,
    /// Its first min(msdu_len, 64) bytes.
    pub msdu: &'a [u8],
}

impl<'a> CnmRepr<'a> {
    pub fn parse(packet: &CnmPacket<&'a [u8]>) -> Result<CnmRepr<'a>> {
        let error = |kind| Err(Error::new(Layer::Cnm, kind));
        if packet.version() != 0 {
            return error(ErrorKind::BadVersion);
        }
        if packet.reserved() != 0 || packet.encapsulated_priority_field() & 0x1FFF != 0 {
            return error(ErrorKind::ReservedBits);
        }
        let count = usize::from(packet.encapsulated_msdu_len()).min(CNM_MAX_ENCAPSULATED);
        let buffer: &'a [u8] = packet.buffer;
        let Some(msdu) = buffer.get(CNM_FIXED_LEN..CNM_FIXED_LEN + count) else {
            return error(ErrorKind::BadLength);
        };
        Ok(CnmRepr {
            quantized_feedback: packet.quantized_feedback(),
            cpid: packet.cpid(),
            q_offset: packet.q_offset(),
            q_delta: packet.q_delta(),
            encapsulated_priority: Pcp::from_low_bits((packet.encapsulated_priority_field() >> 13) as u8),
            encapsulated_dst: packet.encapsulated_dst(),
            msdu_len: packet.encapsulated_msdu_len(),
            msdu,
        })
    }

    /// Bytes `emit` writes: the fixed fields and the encapsulated MSDU (padding is the
    /// frame builder's business).
    pub fn buffer_len(&self) -> usize {
        CNM_FIXED_LEN + self.msdu.len()
    }

    /// Checks the invariants `emit` relies on: feedback fits 6 bits and the MSDU slice is
    /// exactly min(msdu_len, 64) bytes.
    pub fn is_valid(&self) -> bool {
        self.quantized_feedback < 64 && self.msdu.len() == usize::from(self.msdu_len).min(CNM_MAX_ENCAPSULATED)
    }

    /// # Panics
    /// If `!self.is_valid()` or the buffer is shorter than `buffer_len()`.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut CnmPacket<T>) {
        assert!(self.is_valid(), "invalid CNM repr: {self:?}");
        let data = packet.buffer.as_mut();
        write_u16(data, 0, u16::from(self.quantized_feedback));
        data[2..10].copy_from_slice(&self.cpid.to_be_bytes());
        write_u16(data, 10, self.q_offset as u16);
        write_u16(data, 12, self.q_delta as u16);
        write_u16(data, 14, u16::from(self.encapsulated_priority.value()) << 13);
        data[16..22].copy_from_slice(&self.encapsulated_dst.0);
        write_u16(data, 22, self.msdu_len);
        data[CNM_FIXED_LEN..CNM_FIXED_LEN + self.msdu.len()].copy_from_slice(self.msdu);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn fixed() -> Vec<u8> {
        vec![0u8; CNM_FIXED_LEN]
    }

    #[test]
    fn rejection_reasons() {
        let kind = |bytes: Vec<u8>| match CnmPacket::new_checked(&bytes[..]) {
            Err(e) => e.kind,
            Ok(packet) => CnmRepr::parse(&packet).unwrap_err().kind,
        };
        assert_eq!(kind(vec![0u8; 23]), ErrorKind::Truncated);
        let mut version = fixed();
        version[0] = 0x10;
        assert_eq!(kind(version), ErrorKind::BadVersion);
        let mut reserved = fixed();
        reserved[1] = 0x40;
        assert_eq!(kind(reserved), ErrorKind::ReservedBits);
        let mut prio_reserved = fixed();
        prio_reserved[15] = 0x01;
        assert_eq!(kind(prio_reserved), ErrorKind::ReservedBits);
        let mut long = fixed();
        long[23] = 10;
        assert_eq!(kind(long), ErrorKind::BadLength);
    }

    #[test]
    fn only_64_bytes_of_a_long_msdu_travel() {
        let msdu = [0x5Au8; 64];
        let repr = CnmRepr {
            quantized_feedback: 63,
            cpid: 1,
            q_offset: -5,
            q_delta: 7,
            encapsulated_priority: Pcp::new(3).unwrap(),
            encapsulated_dst: EthernetAddress([2, 0, 0, 0, 0, 9]),
            msdu_len: 1500,
            msdu: &msdu,
        };
        let mut bytes = vec![0u8; repr.buffer_len()];
        repr.emit(&mut CnmPacket::new_unchecked(&mut bytes[..]));
        assert_eq!(&bytes[0..2], &[0x00, 0x3F]);
        assert_eq!(&bytes[14..16], &[0x60, 0x00]);
        assert_eq!(&bytes[22..24], &1500u16.to_be_bytes());
        let packet = CnmPacket::new_checked(&bytes[..]).unwrap();
        assert_eq!(CnmRepr::parse(&packet).unwrap(), repr);
    }

    proptest! {
        #[test]
        fn round_trip(fb in 0u8..64, cpid: u64, q_offset: i16, q_delta: i16, prio in 0u8..8, dst: [u8; 6],
                      msdu_len: u16, content in proptest::collection::vec(any::<u8>(), 64)) {
            let count = usize::from(msdu_len).min(64);
            let repr = CnmRepr {
                quantized_feedback: fb, cpid, q_offset, q_delta,
                encapsulated_priority: Pcp::new(prio).unwrap(),
                encapsulated_dst: EthernetAddress(dst),
                msdu_len, msdu: &content[..count],
            };
            let mut bytes = vec![0u8; repr.buffer_len()];
            repr.emit(&mut CnmPacket::new_unchecked(&mut bytes[..]));
            let packet = CnmPacket::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(CnmRepr::parse(&packet).unwrap(), repr);
        }
    }
}
