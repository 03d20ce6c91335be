//! UDP header: source port (0–1), destination port (2–3), length (4–5), checksum (6–7).

use super::ipv4::PROTOCOL_UDP;
use super::{Error, ErrorKind, Ipv4Addr, Layer, Result};
use crate::field::{check_len, internet_checksum, read_u16, write_u16};

pub const UDP_HEADER_LEN: usize = 8;

/// A view of a UDP datagram.
#[derive(Debug, Clone)]
pub struct UdpPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> UdpPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        UdpPacket { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Udp, buffer.as_ref().len(), UDP_HEADER_LEN)?;
        Ok(UdpPacket { buffer })
    }

    pub fn src_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 0)
    }

    pub fn dst_port(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 2)
    }

    pub fn len(&self) -> usize {
        usize::from(read_u16(self.buffer.as_ref(), 4))
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn checksum(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 6)
    }

    /// The payload as the length field delimits it.
    pub fn payload(&self) -> &[u8] {
        let end = self.len().min(self.buffer.as_ref().len());
        self.buffer.as_ref().get(UDP_HEADER_LEN..end).unwrap_or(&[])
    }

    /// Verifies the checksum against the IPv4 pseudo-header; 0 means "not computed".
    pub fn checksum_valid(&self, src: Ipv4Addr, dst: Ipv4Addr) -> bool {
        let Some(datagram) = self.buffer.as_ref().get(..self.len()) else { return false };
        self.checksum() == 0 || internet_checksum(&[&pseudo_header(src, dst, self.len()), datagram]) == 0
    }
}

fn pseudo_header(src: Ipv4Addr, dst: Ipv4Addr, udp_len: usize) -> [u8; 12] {
    let mut header = [0u8; 12];
    header[0..4].copy_from_slice(&src.octets());
    header[4..8].copy_from_slice(&dst.octets());
    header[9] = PROTOCOL_UDP;
    header[10..12].copy_from_slice(&(udp_len as u16).to_be_bytes());
    header
}

/// A UDP header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UdpRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub payload_len: usize,
}

impl UdpRepr {
    pub fn parse<T: AsRef<[u8]>>(packet: &UdpPacket<T>) -> Result<UdpRepr> {
        if packet.len() < UDP_HEADER_LEN || packet.len() > packet.buffer.as_ref().len() {
            return Err(Error::new(Layer::Udp, ErrorKind::BadLength));
        }
        Ok(UdpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
            payload_len: packet.len() - UDP_HEADER_LEN,
        })
    }

    pub const fn buffer_len(&self) -> usize {
        UDP_HEADER_LEN
    }

    /// Writes the header; the payload must already be in place, since the checksum covers it.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut UdpPacket<T>, src: Ipv4Addr, dst: Ipv4Addr) {
        let len = UDP_HEADER_LEN + self.payload_len;
        let data = packet.buffer.as_mut();
        write_u16(data, 0, self.src_port);
        write_u16(data, 2, self.dst_port);
        write_u16(data, 4, u16::try_from(len).expect("UDP datagram over 64 KiB"));
        write_u16(data, 6, 0);
        let checksum = match internet_checksum(&[&pseudo_header(src, dst, len), &data[..len]]) {
            0 => 0xFFFF,
            sum => sum,
        };
        write_u16(data, 6, checksum);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip_with_valid_checksum(src_port: u16, dst_port: u16, payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let (src, dst) = (Ipv4Addr::new(10, 0, 0, 1), Ipv4Addr::new(10, 0, 0, 2));
            let repr = UdpRepr { src_port, dst_port, payload_len: payload.len() };
            let mut bytes = vec![0u8; 8 + payload.len()];
            bytes[8..].copy_from_slice(&payload);
            repr.emit(&mut UdpPacket::new_unchecked(&mut bytes[..]), src, dst);
            let packet = UdpPacket::new_checked(&bytes[..]).unwrap();
            prop_assert!(packet.checksum_valid(src, dst));
            prop_assert_eq!(UdpRepr::parse(&packet).unwrap(), repr);
            prop_assert_eq!(packet.payload(), &payload[..]);
        }
    }
}
