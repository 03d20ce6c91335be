//! The ACK Extended Transport Header (IBTA vol. 1 §9.3.5): after the BTH of an RC
//! ACKNOWLEDGE, a syndrome byte and the 24-bit message sequence number.
//!
//! Syndrome (table 42): bit 7 reserved, bits 6–5 the kind (00 ACK, 01 RNR NAK, 11 NAK;
//! 10 is reserved), bits 4–0 its value (credit count, RNR timer, NAK code).

use crate::field::check_len;
use crate::{Error, ErrorKind, Layer, Result};

pub const AETH_LEN: usize = 4;
/// The credit count that says "no end-to-end flow control credits": pfcswitch's receivers
/// keep no receive queue to count (§9.7.7.2.5).
pub const AETH_INVALID_CREDITS: u8 = 0x1F;

/// A view of an AETH.
#[derive(Debug, Clone)]
pub struct AethHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> AethHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        AethHeader { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Roce, buffer.as_ref().len(), AETH_LEN)?;
        Ok(AethHeader { buffer })
    }

    pub fn syndrome(&self) -> u8 {
        self.buffer.as_ref()[0]
    }

    pub fn msn(&self) -> u32 {
        let data = self.buffer.as_ref();
        u32::from_be_bytes([0, data[1], data[2], data[3]])
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> AethHeader<T> {
    pub fn set_syndrome(&mut self, syndrome: u8) {
        self.buffer.as_mut()[0] = syndrome;
    }

    /// The low 24 bits of `msn`.
    pub fn set_msn(&mut self, msn: u32) {
        self.buffer.as_mut()[1..4].copy_from_slice(&msn.to_be_bytes()[1..]);
    }
}

/// Why a responder refuses a request (§9.7.5.2.4, table 43).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NakCode {
    /// A packet arrived out of order: the requester goes back to the PSN in the BTH.
    PsnSequenceError,
    InvalidRequest,
    RemoteAccessError,
    RemoteOperationalError,
    InvalidRdRequest,
}

impl NakCode {
    pub const fn value(self) -> u8 {
        match self {
            NakCode::PsnSequenceError => 0,
            NakCode::InvalidRequest => 1,
            NakCode::RemoteAccessError => 2,
            NakCode::RemoteOperationalError => 3,
            NakCode::InvalidRdRequest => 4,
        }
    }
}

/// An AETH syndrome as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AethSyndrome {
    /// 0b000CCCCC; `credits` is 5 bits.
    Ack { credits: u8 },
    /// 0b001TTTTT: receiver not ready, retry after the encoded `timer` (5 bits).
    RnrNak { timer: u8 },
    /// 0b011xxxxx.
    Nak(NakCode),
}

impl AethSyndrome {
    /// Rejects the reserved bit 7 (`ReservedBits`), the reserved kind 0b10 and undefined NAK
    /// codes (`BadValue`).
    pub fn from_byte(byte: u8) -> Result<AethSyndrome> {
        let error = |kind| Err(Error::new(Layer::Roce, kind));
        if byte & 0x80 != 0 {
            return error(ErrorKind::ReservedBits);
        }
        let value = byte & 0x1F;
        Ok(match byte >> 5 {
            0b00 => AethSyndrome::Ack { credits: value },
            0b01 => AethSyndrome::RnrNak { timer: value },
            0b11 => AethSyndrome::Nak(match value {
                0 => NakCode::PsnSequenceError,
                1 => NakCode::InvalidRequest,
                2 => NakCode::RemoteAccessError,
                3 => NakCode::RemoteOperationalError,
                4 => NakCode::InvalidRdRequest,
                _ => return error(ErrorKind::BadValue),
            }),
            _ => return error(ErrorKind::BadValue),
        })
    }

    pub const fn to_byte(self) -> u8 {
        match self {
            AethSyndrome::Ack { credits } => credits & 0x1F,
            AethSyndrome::RnrNak { timer } => 0x20 | (timer & 0x1F),
            AethSyndrome::Nak(code) => 0x60 | code.value(),
        }
    }
}

/// An AETH as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AethRepr {
    pub syndrome: AethSyndrome,
    /// 24 bits: the responder's count of completed messages.
    pub msn: u32,
}

impl AethRepr {
    pub fn parse<T: AsRef<[u8]>>(header: &AethHeader<T>) -> Result<AethRepr> {
        Ok(AethRepr { syndrome: AethSyndrome::from_byte(header.syndrome())?, msn: header.msn() })
    }

    pub const fn buffer_len(&self) -> usize {
        AETH_LEN
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut AethHeader<T>) {
        header.set_syndrome(self.syndrome.to_byte());
        header.set_msn(self.msn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn syndromes_as_table_42_encodes_them() {
        assert_eq!(AethSyndrome::Ack { credits: AETH_INVALID_CREDITS }.to_byte(), 0x1F);
        assert_eq!(AethSyndrome::RnrNak { timer: 14 }.to_byte(), 0x2E);
        assert_eq!(AethSyndrome::Nak(NakCode::PsnSequenceError).to_byte(), 0x60);
        assert_eq!(AethSyndrome::Nak(NakCode::InvalidRdRequest).to_byte(), 0x64);
        assert_eq!(AethSyndrome::from_byte(0x40).unwrap_err().kind, ErrorKind::BadValue, "kind 0b10 is reserved");
        assert_eq!(AethSyndrome::from_byte(0x65).unwrap_err().kind, ErrorKind::BadValue, "NAK code 5");
        assert_eq!(AethSyndrome::from_byte(0x9F).unwrap_err().kind, ErrorKind::ReservedBits);
        assert_eq!(AethHeader::new_checked(&[0u8; 3][..]).unwrap_err().kind, ErrorKind::Truncated);
    }

    proptest! {
        #[test]
        fn round_trip(byte in 0u8..0x80, msn in 0u32..1 << 24) {
            let Ok(syndrome) = AethSyndrome::from_byte(byte) else { return Ok(()) };
            prop_assert_eq!(syndrome.to_byte(), byte);
            let repr = AethRepr { syndrome, msn };
            let mut bytes = [0u8; AETH_LEN];
            repr.emit(&mut AethHeader::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(AethRepr::parse(&AethHeader::new_checked(&bytes[..]).unwrap()).unwrap(), repr);
        }
    }
}
