//! RoCEv2 (IBTA InfiniBand Architecture Spec vol. 1 release 1.x, Annex A17): InfiniBand's
//! transport headers in a UDP datagram to port 4791, after IPv4.
//!
//! | bytes of the UDP payload | field                                          |
//! |--------------------------|------------------------------------------------|
//! | 0–11                     | BTH (§9.2)                                     |
//! | 12–15                    | AETH (§9.3.5), in an RC ACKNOWLEDGE only       |
//! | …                        | payload, then `pad_count` bytes to a multiple of 4 |
//! | last 4                   | ICRC (§7.8.1, A17.3.3)                         |
//!
//! pfcswitch speaks the subset its endpoints need: RC SENDs, ACK/NAK and the CNP.

mod aeth;
mod bth;
mod icrc;

pub use aeth::{AETH_INVALID_CREDITS, AETH_LEN, AethHeader, AethRepr, AethSyndrome, NakCode};
pub use bth::{BTH_LEN, BthHeader, BthRepr, DEFAULT_PKEY, Opcode};
pub use icrc::{ICRC_LEN, check_icrc, fill_icrc, icrc, stored_icrc};

use crate::field::check_len;
use crate::ipv4::PROTOCOL_UDP;
use crate::{Error, ErrorKind, Ipv4Packet, Ipv4Repr, Layer, Result, UdpPacket, UdpRepr};

/// The UDP destination port IANA assigned to RoCEv2 (A17.2.1); Wireshark decodes it as
/// InfiniBand.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// A CNP's reserved bytes after the BTH (A17.9.3).
pub const CNP_PAYLOAD_LEN: usize = 16;

/// Pad bytes that bring a payload of `len` bytes to a multiple of 4 (§9.2's PadCnt).
pub const fn pad_count_for(len: usize) -> u8 {
    (len.wrapping_neg() % 4) as u8
}

/// A view of a RoCEv2 packet: a UDP payload from the BTH through the ICRC.
#[derive(Debug, Clone)]
pub struct RocePacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> RocePacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        RocePacket { buffer }
    }

    /// Guarantees the BTH, the AETH its opcode announces and the ICRC are in bounds
    /// (`Truncated` otherwise).
    pub fn new_checked(buffer: T) -> Result<Self> {
        let packet = RocePacket { buffer };
        check_len(Layer::Roce, packet.data().len(), BTH_LEN + ICRC_LEN)?;
        check_len(Layer::Roce, packet.data().len(), packet.header_len() + ICRC_LEN)?;
        Ok(packet)
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn bth(&self) -> BthHeader<&[u8]> {
        BthHeader::new_unchecked(&self.data()[..BTH_LEN])
    }

    fn has_aeth(&self) -> bool {
        self.data()[0] == Opcode::RcAcknowledge.value()
    }

    /// The AETH of an RC ACKNOWLEDGE.
    pub fn aeth(&self) -> Option<AethHeader<&[u8]>> {
        self.has_aeth().then(|| AethHeader::new_unchecked(&self.data()[BTH_LEN..BTH_LEN + AETH_LEN]))
    }

    /// Bytes of the BTH and the extended headers the opcode announces.
    pub fn header_len(&self) -> usize {
        BTH_LEN + if self.has_aeth() { AETH_LEN } else { 0 }
    }

    /// Everything between the headers and the ICRC, the pad bytes included.
    pub fn padded_payload(&self) -> &[u8] {
        &self.data()[self.header_len()..self.data().len() - ICRC_LEN]
    }

    /// The payload without the pad bytes (empty if the pad count exceeds it).
    pub fn payload(&self) -> &[u8] {
        let padded = self.padded_payload();
        &padded[..padded.len().saturating_sub(usize::from(self.bth().pad_count()))]
    }

    /// The ICRC as stored (see [`icrc`]).
    pub fn icrc(&self) -> u32 {
        stored_icrc(self.data()).expect("checked length")
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> RocePacket<T> {
    /// The payload's place after the headers, `len` bytes (for [`RoceRepr::payload_len`]).
    pub fn payload_mut(&mut self, len: usize) -> &mut [u8] {
        let at = self.header_len();
        &mut self.buffer.as_mut()[at..at + len]
    }
}

/// A RoCEv2 packet's headers as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RoceRepr {
    pub bth: BthRepr,
    /// Present exactly when the opcode is RC ACKNOWLEDGE.
    pub aeth: Option<AethRepr>,
    /// Payload bytes, without the pad.
    pub payload_len: usize,
}

impl RoceRepr {
    /// A packet carrying `payload_len` bytes, its BTH's pad count set to match.
    pub const fn new(bth: BthRepr, aeth: Option<AethRepr>, payload_len: usize) -> RoceRepr {
        RoceRepr { bth: BthRepr { pad_count: pad_count_for(payload_len), ..bth }, aeth, payload_len }
    }

    /// Parses and verifies a whole IPv4 packet (Ethernet padding may follow; the total
    /// length delimits it): IPv4, UDP (any port; the caller dispatches on 4791), the RoCE
    /// headers as [`RoceRepr::parse_headers`], and the ICRC (`BadChecksum`).
    pub fn parse(ip_packet: &[u8]) -> Result<RoceRepr> {
        let packet = Ipv4Packet::new_checked(ip_packet)?;
        let ip = Ipv4Repr::parse(&packet)?;
        if ip.protocol != PROTOCOL_UDP {
            return Err(Error::new(Layer::Udp, ErrorKind::WrongEtherType));
        }
        let udp_packet = UdpPacket::new_checked(packet.payload())?;
        UdpRepr::parse(&udp_packet)?;
        let repr = RoceRepr::parse_headers(&RocePacket::new_checked(udp_packet.payload())?)?;
        let end = packet.header_len() + ip.payload_len;
        check_icrc(&ip_packet[..end])?;
        Ok(repr)
    }

    /// The headers without the ICRC, which needs the IP header: unknown opcodes
    /// (`UnknownOpcode`), TVer (`BadVersion`), AETH syndromes, and lengths (`BadLength`: a pad
    /// count beyond the payload, an ACK with a payload, a CNP without its 16 bytes).
    pub fn parse_headers<T: AsRef<[u8]>>(packet: &RocePacket<T>) -> Result<RoceRepr> {
        let bth = BthRepr::parse(&packet.bth())?;
        let aeth = packet.aeth().map(|aeth| AethRepr::parse(&aeth)).transpose()?;
        let padded = packet.padded_payload().len();
        let pad = usize::from(bth.pad_count);
        let expected = match bth.opcode {
            Opcode::RcAcknowledge => Some(0),
            Opcode::Cnp => Some(CNP_PAYLOAD_LEN),
            _ => None,
        };
        if pad > padded || expected.is_some_and(|len| len != padded - pad) {
            return Err(Error::new(Layer::Roce, ErrorKind::BadLength));
        }
        Ok(RoceRepr { bth, aeth, payload_len: padded - pad })
    }

    /// Bytes from the BTH through the ICRC.
    pub fn buffer_len(&self) -> usize {
        BTH_LEN
            + self.aeth.map_or(0, |aeth| aeth.buffer_len())
            + self.payload_len
            + usize::from(self.bth.pad_count)
            + ICRC_LEN
    }

    /// Writes the headers and zeroes the pad bytes; the payload is the caller's (before or
    /// after, [`RocePacket::payload_mut`]) and so is the ICRC, which covers the IP header
    /// ([`fill_icrc`] once the IP and UDP headers are written).
    ///
    /// # Panics
    /// If the buffer is shorter than [`RoceRepr::buffer_len`], or `aeth` disagrees with the
    /// opcode.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut RocePacket<T>) {
        assert_eq!(self.aeth.is_some(), self.bth.opcode == Opcode::RcAcknowledge, "an AETH goes with an ACK");
        let data = packet.buffer.as_mut();
        self.bth.emit(&mut BthHeader::new_unchecked(&mut data[..BTH_LEN]));
        let mut at = BTH_LEN;
        if let Some(aeth) = self.aeth {
            aeth.emit(&mut AethHeader::new_unchecked(&mut data[at..at + AETH_LEN]));
            at += AETH_LEN;
        }
        at += self.payload_len;
        data[at..at + usize::from(self.bth.pad_count)].fill(0);
    }
}

#[cfg(test)]
pub(crate) mod tests;
