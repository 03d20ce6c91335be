//! The Base Transport Header (IBTA InfiniBand Architecture Spec vol. 1, §9.2): 12 bytes in
//! front of every RoCEv2 packet.
//!
//! | bytes | field                                                               |
//! |-------|---------------------------------------------------------------------|
//! | 0     | opcode                                                              |
//! | 1     | solicited event (bit 7) · MigReq (6) · pad count (5–4) · TVer (3–0) |
//! | 2–3   | partition key                                                       |
//! | 4     | FECN (bit 7) · BECN (6) · reserved (`resv8a` with them, masked in the ICRC) |
//! | 5–7   | destination QP                                                      |
//! | 8     | AckReq (bit 7) · reserved                                           |
//! | 9–11  | PSN                                                                 |

use crate::field::{check_len, read_u16, write_u16};
use crate::{Error, ErrorKind, Layer, Result};

pub const BTH_LEN: usize = 12;
/// The partition key every port is a full member of (§10.9.1.1), as RoCE NICs send by default.
pub const DEFAULT_PKEY: u16 = 0xFFFF;

/// The BTH opcodes pfcswitch speaks (§9.2.1 table 38; CNP from Annex A17.9.3): an RC SEND's
/// four places in its message, the RC ACK (which also carries NAKs, in the AETH), and the
/// congestion notification packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Opcode {
    RcSendFirst,
    RcSendMiddle,
    RcSendLast,
    RcSendOnly,
    RcAcknowledge,
    Cnp,
}

impl Opcode {
    pub const fn value(self) -> u8 {
        match self {
            Opcode::RcSendFirst => 0x00,
            Opcode::RcSendMiddle => 0x01,
            Opcode::RcSendLast => 0x02,
            Opcode::RcSendOnly => 0x04,
            Opcode::RcAcknowledge => 0x11,
            Opcode::Cnp => 0x81,
        }
    }

    /// Fails with `UnknownOpcode` for any other opcode.
    pub const fn from_value(value: u8) -> Result<Opcode> {
        Ok(match value {
            0x00 => Opcode::RcSendFirst,
            0x01 => Opcode::RcSendMiddle,
            0x02 => Opcode::RcSendLast,
            0x04 => Opcode::RcSendOnly,
            0x11 => Opcode::RcAcknowledge,
            0x81 => Opcode::Cnp,
            _ => return Err(Error::new(Layer::Roce, ErrorKind::UnknownOpcode)),
        })
    }

    /// Whether the opcode is an RC SEND, which carries message data.
    pub const fn is_send(self) -> bool {
        matches!(self, Opcode::RcSendFirst | Opcode::RcSendMiddle | Opcode::RcSendLast | Opcode::RcSendOnly)
    }

    /// The name Wireshark and the IBTA tables give it, e.g. `RC SEND ONLY`.
    pub const fn name(self) -> &'static str {
        match self {
            Opcode::RcSendFirst => "RC SEND FIRST",
            Opcode::RcSendMiddle => "RC SEND MIDDLE",
            Opcode::RcSendLast => "RC SEND LAST",
            Opcode::RcSendOnly => "RC SEND ONLY",
            Opcode::RcAcknowledge => "RC ACKNOWLEDGE",
            Opcode::Cnp => "CNP",
        }
    }
}

/// A view of a BTH.
#[derive(Debug, Clone)]
pub struct BthHeader<T: AsRef<[u8]>> {
    buffer: T,
}

fn read_u24(data: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([0, data[at], data[at + 1], data[at + 2]])
}

fn write_u24(data: &mut [u8], at: usize, value: u32) {
    data[at..at + 3].copy_from_slice(&value.to_be_bytes()[1..]);
}

fn set_bit(byte: &mut u8, mask: u8, on: bool) {
    *byte = if on { *byte | mask } else { *byte & !mask };
}

impl<T: AsRef<[u8]>> BthHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        BthHeader { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Roce, buffer.as_ref().len(), BTH_LEN)?;
        Ok(BthHeader { buffer })
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn opcode(&self) -> u8 {
        self.data()[0]
    }

    pub fn solicited_event(&self) -> bool {
        self.data()[1] & 0x80 != 0
    }

    pub fn migreq(&self) -> bool {
        self.data()[1] & 0x40 != 0
    }

    /// Bytes after the payload that pad it to a multiple of 4.
    pub fn pad_count(&self) -> u8 {
        (self.data()[1] >> 4) & 0x03
    }

    pub fn transport_version(&self) -> u8 {
        self.data()[1] & 0x0F
    }

    pub fn pkey(&self) -> u16 {
        read_u16(self.data(), 2)
    }

    pub fn fecn(&self) -> bool {
        self.data()[4] & 0x80 != 0
    }

    pub fn becn(&self) -> bool {
        self.data()[4] & 0x40 != 0
    }

    pub fn dest_qp(&self) -> u32 {
        read_u24(self.data(), 5)
    }

    pub fn ack_req(&self) -> bool {
        self.data()[8] & 0x80 != 0
    }

    pub fn psn(&self) -> u32 {
        read_u24(self.data(), 9)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> BthHeader<T> {
    fn data_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    pub fn set_opcode(&mut self, opcode: u8) {
        self.data_mut()[0] = opcode;
    }

    pub fn set_solicited_event(&mut self, on: bool) {
        set_bit(&mut self.data_mut()[1], 0x80, on);
    }

    pub fn set_migreq(&mut self, on: bool) {
        set_bit(&mut self.data_mut()[1], 0x40, on);
    }

    pub fn set_pad_count(&mut self, pad: u8) {
        let byte = &mut self.data_mut()[1];
        *byte = (*byte & !0x30) | ((pad & 0x03) << 4);
    }

    pub fn set_transport_version(&mut self, version: u8) {
        let byte = &mut self.data_mut()[1];
        *byte = (*byte & 0xF0) | (version & 0x0F);
    }

    pub fn set_pkey(&mut self, pkey: u16) {
        write_u16(self.data_mut(), 2, pkey);
    }

    pub fn set_fecn(&mut self, on: bool) {
        set_bit(&mut self.data_mut()[4], 0x80, on);
    }

    pub fn set_becn(&mut self, on: bool) {
        set_bit(&mut self.data_mut()[4], 0x40, on);
    }

    /// The low 24 bits of `qp`.
    pub fn set_dest_qp(&mut self, qp: u32) {
        write_u24(self.data_mut(), 5, qp);
    }

    pub fn set_ack_req(&mut self, on: bool) {
        set_bit(&mut self.data_mut()[8], 0x80, on);
    }

    /// The low 24 bits of `psn`.
    pub fn set_psn(&mut self, psn: u32) {
        write_u24(self.data_mut(), 9, psn);
    }
}

/// A BTH as values. FECN and BECN are not kept: RoCEv2 signals congestion in the IP ECN
/// field, and a CNP's BECN (A17.9.3) follows from its opcode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BthRepr {
    pub opcode: Opcode,
    pub solicited: bool,
    pub pad_count: u8,
    pub pkey: u16,
    /// 24 bits.
    pub dest_qp: u32,
    pub ack_req: bool,
    /// 24 bits.
    pub psn: u32,
}

impl BthRepr {
    /// Rejects unknown opcodes and transport header versions other than 0. Reserved bits are
    /// ignored, as §9.2 asks of receivers.
    pub fn parse<T: AsRef<[u8]>>(header: &BthHeader<T>) -> Result<BthRepr> {
        let opcode = Opcode::from_value(header.opcode())?;
        if header.transport_version() != 0 {
            return Err(Error::new(Layer::Roce, ErrorKind::BadVersion));
        }
        Ok(BthRepr {
            opcode,
            solicited: header.solicited_event(),
            pad_count: header.pad_count(),
            pkey: header.pkey(),
            dest_qp: header.dest_qp(),
            ack_req: header.ack_req(),
            psn: header.psn(),
        })
    }

    pub const fn buffer_len(&self) -> usize {
        BTH_LEN
    }

    /// Writes the header with TVer 0, reserved bits 0 and MigReq set as NICs send it (the QP
    /// is migrated, i.e. has no alternate path), except in a CNP, whose M is 0 and BECN 1
    /// (A17.9.3).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut BthHeader<T>) {
        let cnp = self.opcode == Opcode::Cnp;
        header.data_mut()[..BTH_LEN].fill(0);
        header.set_opcode(self.opcode.value());
        header.set_solicited_event(self.solicited);
        header.set_migreq(!cnp);
        header.set_pad_count(self.pad_count);
        header.set_pkey(self.pkey);
        header.set_becn(cnp);
        header.set_dest_qp(self.dest_qp);
        header.set_ack_req(self.ack_req);
        header.set_psn(self.psn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const OPCODES: [Opcode; 6] = [
        Opcode::RcSendFirst,
        Opcode::RcSendMiddle,
        Opcode::RcSendLast,
        Opcode::RcSendOnly,
        Opcode::RcAcknowledge,
        Opcode::Cnp,
    ];

    #[test]
    fn unknown_opcodes_and_versions_are_rejected() {
        let mut bytes = [0u8; BTH_LEN];
        bytes[0] = 0x03; // RC SEND LAST with immediate
        let error = BthRepr::parse(&BthHeader::new_checked(&bytes[..]).unwrap()).unwrap_err();
        assert_eq!(error, Error::new(Layer::Roce, ErrorKind::UnknownOpcode));
        bytes[0] = 0x04;
        bytes[1] = 0x01;
        assert_eq!(
            BthRepr::parse(&BthHeader::new_checked(&bytes[..]).unwrap()).unwrap_err().kind,
            ErrorKind::BadVersion
        );
        assert_eq!(BthHeader::new_checked(&bytes[..11]).unwrap_err(), Error::new(Layer::Roce, ErrorKind::Truncated));
    }

    #[test]
    fn a_cnp_has_becn_and_no_migreq() {
        let repr = BthRepr {
            opcode: Opcode::Cnp,
            solicited: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: 0xD2,
            ack_req: false,
            psn: 0,
        };
        let mut bytes = [0u8; BTH_LEN];
        repr.emit(&mut BthHeader::new_unchecked(&mut bytes[..]));
        // A17.9.3's example CNP, as a ConnectX NIC sends it.
        assert_eq!(bytes, [0x81, 0x00, 0xFF, 0xFF, 0x40, 0x00, 0x00, 0xD2, 0, 0, 0, 0]);
    }

    proptest! {
        #[test]
        fn round_trip(op in 0usize..6, solicited: bool, pad_count in 0u8..4, pkey: u16, dest_qp in 0u32..1 << 24, ack_req: bool, psn in 0u32..1 << 24) {
            let repr = BthRepr { opcode: OPCODES[op], solicited, pad_count, pkey, dest_qp, ack_req, psn };
            let mut bytes = [0xEEu8; BTH_LEN];
            repr.emit(&mut BthHeader::new_unchecked(&mut bytes[..]));
            let header = BthHeader::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!(header.migreq(), repr.opcode != Opcode::Cnp);
            prop_assert!(!header.fecn());
            prop_assert_eq!(BthRepr::parse(&header).unwrap(), repr);
        }
    }
}
