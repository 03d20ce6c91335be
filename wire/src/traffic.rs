//! The traffic endpoints' header, carried in UDP after 802.1Q + IPv4.
//!
//! | bytes  | field                                                     |
//! |--------|-----------------------------------------------------------|
//! | 0–1    | magic 0x5046 ("PF")                                       |
//! | 2      | version (1)                                               |
//! | 3      | kind: 0 data, 1 acknowledgement, 2 negative acknowledgement |
//! | 4–7    | flow id                                                   |
//! | 8–11   | sequence number (per flow; next expected in an ACK or NAK) |
//! | 12–15  | message id (per flow)                                     |
//! | 16–19  | message length in bytes                                   |
//! | 20–23  | offset of this segment in the message                     |
//! | 24–31  | send timestamp, nanoseconds on the sender's clock         |
//!
//! A receiver knows a message is complete when it holds `[0, length)`, so FCTs need no
//! extra signalling; the timestamp lets it measure one-way delay on a shared clock.

use super::{Error, ErrorKind, Layer, Result};
use crate::field::{check_len, read_u16, write_u16};

pub const TRAFFIC_HEADER_LEN: usize = 32;
pub const TRAFFIC_MAGIC: u16 = 0x5046;
pub const TRAFFIC_VERSION: u8 = 1;
/// The endpoints' UDP port. Chosen because no Wireshark dissector claims it (4791, RoCEv2,
/// and many others would make captures decode as something else).
pub const TRAFFIC_UDP_PORT: u16 = 39000;

/// What a traffic frame carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TrafficKind {
    Data,
    /// Cumulative: every segment below `sequence` arrived.
    Ack,
    /// Segment `sequence` is missing (a later one arrived): go back to it.
    Nak,
}

/// A view of a traffic header and its payload.
#[derive(Debug, Clone)]
pub struct TrafficHeader<T: AsRef<[u8]>> {
    buffer: T,
}

fn read_u32(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(data[at..at + 4].try_into().expect("checked length"))
}

impl<T: AsRef<[u8]>> TrafficHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        TrafficHeader { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Traffic, buffer.as_ref().len(), TRAFFIC_HEADER_LEN)?;
        Ok(TrafficHeader { buffer })
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn magic(&self) -> u16 {
        read_u16(self.data(), 0)
    }

    pub fn version(&self) -> u8 {
        self.data()[2]
    }

    pub fn kind_byte(&self) -> u8 {
        self.data()[3]
    }

    pub fn flow_id(&self) -> u32 {
        read_u32(self.data(), 4)
    }

    pub fn sequence(&self) -> u32 {
        read_u32(self.data(), 8)
    }

    pub fn message_id(&self) -> u32 {
        read_u32(self.data(), 12)
    }

    pub fn message_len(&self) -> u32 {
        read_u32(self.data(), 16)
    }

    pub fn offset(&self) -> u32 {
        read_u32(self.data(), 20)
    }

    pub fn timestamp_ns(&self) -> u64 {
        u64::from_be_bytes(self.data()[24..32].try_into().expect("checked length"))
    }
}

/// A traffic header as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrafficRepr {
    pub kind: TrafficKind,
    pub flow_id: u32,
    pub sequence: u32,
    pub message_id: u32,
    pub message_len: u32,
    pub offset: u32,
    pub timestamp_ns: u64,
}

impl TrafficRepr {
    pub fn parse<T: AsRef<[u8]>>(header: &TrafficHeader<T>) -> Result<TrafficRepr> {
        let error = |kind| Err(Error::new(Layer::Traffic, kind));
        if header.magic() != TRAFFIC_MAGIC || header.version() != TRAFFIC_VERSION {
            return error(ErrorKind::BadVersion);
        }
        let kind = match header.kind_byte() {
            0 => TrafficKind::Data,
            1 => TrafficKind::Ack,
            2 => TrafficKind::Nak,
            _ => return error(ErrorKind::BadValue),
        };
        Ok(TrafficRepr {
            kind,
            flow_id: header.flow_id(),
            sequence: header.sequence(),
            message_id: header.message_id(),
            message_len: header.message_len(),
            offset: header.offset(),
            timestamp_ns: header.timestamp_ns(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        TRAFFIC_HEADER_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut TrafficHeader<T>) {
        let data = header.buffer.as_mut();
        write_u16(data, 0, TRAFFIC_MAGIC);
        data[2] = TRAFFIC_VERSION;
        data[3] = match self.kind {
            TrafficKind::Data => 0,
            TrafficKind::Ack => 1,
            TrafficKind::Nak => 2,
        };
        data[4..8].copy_from_slice(&self.flow_id.to_be_bytes());
        data[8..12].copy_from_slice(&self.sequence.to_be_bytes());
        data[12..16].copy_from_slice(&self.message_id.to_be_bytes());
        data[16..20].copy_from_slice(&self.message_len.to_be_bytes());
        data[20..24].copy_from_slice(&self.offset.to_be_bytes());
        data[24..32].copy_from_slice(&self.timestamp_ns.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn rejects_foreign_payloads() {
        let bytes = [0u8; 32];
        assert_eq!(
            TrafficRepr::parse(&TrafficHeader::new_checked(&bytes[..]).unwrap()).unwrap_err().kind,
            ErrorKind::BadVersion
        );
        assert_eq!(TrafficHeader::new_checked(&bytes[..31]).unwrap_err().kind, ErrorKind::Truncated);
    }

    proptest! {
        #[test]
        fn round_trip(kind in 0u8..3, flow_id: u32, sequence: u32, message_id: u32, message_len: u32, offset: u32, timestamp_ns: u64) {
            let kind = [TrafficKind::Data, TrafficKind::Ack, TrafficKind::Nak][usize::from(kind)];
            let repr = TrafficRepr { kind, flow_id, sequence, message_id, message_len, offset, timestamp_ns };
            let mut bytes = [0u8; 32];
            repr.emit(&mut TrafficHeader::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(TrafficRepr::parse(&TrafficHeader::new_checked(&bytes[..]).unwrap()).unwrap(), repr);
        }
    }
}
