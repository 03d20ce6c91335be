//! IPv4 header, as far as a switch and the traffic endpoints need it: DSCP for trust mode
//! `dscp`, addresses and protocol for the endpoints' UDP frames. Options are skipped.

use super::{Error, ErrorKind, Layer, Result};
use crate::field::{check_len, internet_checksum, read_u16, write_u16};
pub use std::net::Ipv4Addr;

pub const IPV4_HEADER_LEN: usize = 20;
pub const PROTOCOL_UDP: u8 = 17;

/// A view of an IPv4 packet.
#[derive(Debug, Clone)]
pub struct Ipv4Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Ipv4Packet<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        Ipv4Packet { buffer }
    }

    /// Guarantees the 20-byte base header is in bounds.
    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Ipv4, buffer.as_ref().len(), IPV4_HEADER_LEN)?;
        Ok(Ipv4Packet { buffer })
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.data()[0] >> 4
    }

    /// Header length in bytes.
    pub fn header_len(&self) -> usize {
        usize::from(self.data()[0] & 0x0F) * 4
    }

    pub fn dscp(&self) -> u8 {
        self.data()[1] >> 2
    }

    pub fn ecn(&self) -> u8 {
        self.data()[1] & 0x03
    }

    pub fn total_len(&self) -> usize {
        usize::from(read_u16(self.data(), 2))
    }

    pub fn ttl(&self) -> u8 {
        self.data()[8]
    }

    pub fn protocol(&self) -> u8 {
        self.data()[9]
    }

    pub fn src_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.data()[12..16]).expect("checked length"))
    }

    pub fn dst_addr(&self) -> Ipv4Addr {
        Ipv4Addr::from(<[u8; 4]>::try_from(&self.data()[16..20]).expect("checked length"))
    }

    /// True when the header checksum verifies (the header must be in bounds).
    pub fn checksum_valid(&self) -> bool {
        self.data().get(..self.header_len()).is_some_and(|header| internet_checksum(&[header]) == 0)
    }

    /// The payload as the total-length field delimits it (Ethernet padding excluded).
    pub fn payload(&self) -> &[u8] {
        let end = self.total_len().min(self.data().len());
        self.data().get(self.header_len()..end).unwrap_or(&[])
    }
}

/// An IPv4 header without options, as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ipv4Repr {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub protocol: u8,
    pub dscp: u8,
    pub ecn: u8,
    pub ttl: u8,
    pub payload_len: usize,
}

impl Ipv4Repr {
    /// Checks version, header length, total length and fragmentation (fragments are not
    /// carried by the endpoints). The checksum is reported by [`Ipv4Packet::checksum_valid`].
    pub fn parse<T: AsRef<[u8]>>(packet: &Ipv4Packet<T>) -> Result<Ipv4Repr> {
        let error = |kind| Err(Error::new(Layer::Ipv4, kind));
        if packet.version() != 4 {
            return error(ErrorKind::BadVersion);
        }
        if packet.header_len() < IPV4_HEADER_LEN {
            return error(ErrorKind::BadValue);
        }
        if packet.total_len() < packet.header_len() || packet.total_len() > packet.data().len() {
            return error(ErrorKind::BadLength);
        }
        Ok(Ipv4Repr {
            src: packet.src_addr(),
            dst: packet.dst_addr(),
            protocol: packet.protocol(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
            ttl: packet.ttl(),
            payload_len: packet.total_len() - packet.header_len(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        IPV4_HEADER_LEN
    }

    /// Writes the header with Don't Fragment set and a valid checksum.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Ipv4Packet<T>) {
        let data = packet.buffer.as_mut();
        data[0] = 0x45;
        data[1] = (self.dscp << 2) | (self.ecn & 0x03);
        let total = u16::try_from(IPV4_HEADER_LEN + self.payload_len).expect("IPv4 packet over 64 KiB");
        write_u16(data, 2, total);
        write_u16(data, 4, 0);
        write_u16(data, 6, 0x4000);
        data[8] = self.ttl;
        data[9] = self.protocol;
        write_u16(data, 10, 0);
        data[12..16].copy_from_slice(&self.src.octets());
        data[16..20].copy_from_slice(&self.dst.octets());
        let checksum = internet_checksum(&[&data[..IPV4_HEADER_LEN]]);
        write_u16(data, 10, checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejection_reasons() {
        let mut bytes = [0u8; 20];
        bytes[0] = 0x65;
        assert_eq!(
            Ipv4Repr::parse(&Ipv4Packet::new_checked(&bytes[..]).unwrap()).unwrap_err().kind,
            ErrorKind::BadVersion
        );
        bytes[0] = 0x44;
        assert_eq!(
            Ipv4Repr::parse(&Ipv4Packet::new_checked(&bytes[..]).unwrap()).unwrap_err().kind,
            ErrorKind::BadValue
        );
        bytes[0] = 0x45;
        bytes[3] = 40;
        assert_eq!(
            Ipv4Repr::parse(&Ipv4Packet::new_checked(&bytes[..]).unwrap()).unwrap_err().kind,
            ErrorKind::BadLength
        );
    }

    proptest! {
        #[test]
        fn round_trip(src: [u8; 4], dst: [u8; 4], protocol: u8, dscp in 0u8..64, ecn in 0u8..4, ttl: u8, payload_len in 0usize..100) {
            let repr = Ipv4Repr { src: src.into(), dst: dst.into(), protocol, dscp, ecn, ttl, payload_len };
            let mut bytes = vec![0u8; 20 + payload_len];
            repr.emit(&mut Ipv4Packet::new_unchecked(&mut bytes[..]));
            let packet = Ipv4Packet::new_checked(&bytes[..]).unwrap();
            prop_assert!(packet.checksum_valid());
            prop_assert_eq!(Ipv4Repr::parse(&packet).unwrap(), repr);
        }
    }
}
