//! The traffic endpoints' header, carried in UDP after 802.1Q + IPv4.
//!
//! | bytes  | field                                                     |
//! |--------|-----------------------------------------------------------|
//! | 0–1    | magic 0x5046 ("PF")                                       |
//! | 2      | version (1)                                               |
//! | 3      | kind (bits 0–6): 0 data, 1 acknowledgement, 2 negative acknowledgement, 3 CNP; bit 7: ACK requested (a data segment) |
//! | 4–7    | flow id                                                   |
//! | 8–11   | sequence number (per flow; next expected in an ACK or NAK) |
//! | 12–15  | message id (per flow)                                     |
//! | 16–19  | message length in bytes                                   |
//! | 20–23  | offset of this segment in the message                     |
//! | 24–31  | send timestamp, nanoseconds on the sender's clock         |
//!
//! A receiver knows a message is complete when it holds `[0, length)`, so FCTs need no
//! extra signalling; the timestamp lets it measure one-way delay on a shared clock.
//!
//! The same [`TrafficRepr`] can travel as RoCEv2 instead ([`Framing::Rocev2`]): the flow is
//! the destination QP, the sequence the PSN, the kind the opcode, and the message fields a
//! 20-byte segment info at the start of the SEND payload (docs/frames.md).

use super::{Error, ErrorKind, Layer, Result};
use crate::field::{check_len, read_u16, write_u16};
use crate::roce::{
    AETH_INVALID_CREDITS, AethRepr, AethSyndrome, BTH_LEN, BthRepr, CNP_PAYLOAD_LEN, DEFAULT_PKEY, ICRC_LEN, NakCode,
    Opcode, RoceRepr,
};

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
    /// A congestion notification for the flow (RoCEv2's CNP, A17.9.3): its receiver saw
    /// CE-marked segments.
    Cnp,
}

/// How an endpoint's frames are encoded: the project's traffic header in UDP port 39000, or
/// RoCEv2 (UDP port 4791), which Wireshark and NIC-facing tools read as RDMA traffic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum Framing {
    #[default]
    Traffic,
    Rocev2,
}

impl Framing {
    /// Bytes of a full, tagged data frame (no FCS) that are not message payload: Ethernet,
    /// 802.1Q, IPv4, UDP, then the traffic header (78 in all), or the BTH, the segment info
    /// and the ICRC (82).
    pub const fn overhead(self) -> usize {
        14 + 4
            + 20
            + 8
            + match self {
                Framing::Traffic => TRAFFIC_HEADER_LEN,
                Framing::Rocev2 => BTH_LEN + SEGMENT_INFO_LEN + ICRC_LEN,
            }
    }
}

/// Destination QP = flow id + `QPN_BASE` in RoCEv2 framing: QPs 0 and 1 are the special
/// SMI/GSI QPs (IBTA §3.5.5), which Wireshark decodes as management datagrams. Flow ids
/// must therefore be below 2^24 − `QPN_BASE`.
pub const QPN_BASE: u32 = 0x100;
/// The segment info at the start of a RoCEv2 SEND's payload: message id, message length,
/// offset (4 bytes each) and send timestamp (8), big-endian. RC SENDs carry no offset or
/// timestamp of their own, and the endpoints' receivers need both.
pub const SEGMENT_INFO_LEN: usize = 20;
const PSN_MASK: u32 = 0xFF_FFFF;

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
    /// A data segment the sender wants acknowledged at once, as RoCE's BTH AckReq: the last
    /// of a message, or the one that fills the sender's window (its receiver would otherwise
    /// wait for `ack_every` segments that cannot come).
    pub ack_req: bool,
}

/// Bit 7 of the kind byte: the segment asks for an ACK.
const ACK_REQUESTED: u8 = 0x80;

impl TrafficRepr {
    pub fn parse<T: AsRef<[u8]>>(header: &TrafficHeader<T>) -> Result<TrafficRepr> {
        let error = |kind| Err(Error::new(Layer::Traffic, kind));
        if header.magic() != TRAFFIC_MAGIC || header.version() != TRAFFIC_VERSION {
            return error(ErrorKind::BadVersion);
        }
        let kind = match header.kind_byte() & !ACK_REQUESTED {
            0 => TrafficKind::Data,
            1 => TrafficKind::Ack,
            2 => TrafficKind::Nak,
            3 => TrafficKind::Cnp,
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
            ack_req: header.kind_byte() & ACK_REQUESTED != 0,
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
            TrafficKind::Cnp => 3,
        } | if self.ack_req { ACK_REQUESTED } else { 0 };
        data[4..8].copy_from_slice(&self.flow_id.to_be_bytes());
        data[8..12].copy_from_slice(&self.sequence.to_be_bytes());
        data[12..16].copy_from_slice(&self.message_id.to_be_bytes());
        data[16..20].copy_from_slice(&self.message_len.to_be_bytes());
        data[20..24].copy_from_slice(&self.offset.to_be_bytes());
        data[24..32].copy_from_slice(&self.timestamp_ns.to_be_bytes());
    }
}

/// The SEND opcode of a segment carrying `carried` bytes at `offset` of a message of
/// `message_len` bytes (`u32::MAX`: unbounded, FIRST then MIDDLE forever).
pub fn send_opcode(offset: u32, message_len: u32, carried: usize) -> Opcode {
    let ends = message_len != u32::MAX && u64::from(offset) + carried as u64 >= u64::from(message_len);
    match (offset == 0, ends) {
        (true, true) => Opcode::RcSendOnly,
        (true, false) => Opcode::RcSendFirst,
        (false, true) => Opcode::RcSendLast,
        (false, false) => Opcode::RcSendMiddle,
    }
}

impl TrafficRepr {
    /// The RoCEv2 headers that carry this repr; a data segment carries `carried` message
    /// bytes after its segment info. An ACK names the last PSN received (`sequence` − 1,
    /// §9.7.5.1.2), a NAK the PSN it expects; both carry the message id as MSN.
    pub fn to_roce(&self, carried: usize) -> RoceRepr {
        debug_assert!(self.flow_id < (1 << 24) - QPN_BASE, "flow id {} has no QP", self.flow_id);
        let bth = |opcode, psn: u32| BthRepr {
            opcode,
            solicited: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: self.flow_id.wrapping_add(QPN_BASE) & PSN_MASK,
            ack_req: false,
            psn: psn & PSN_MASK,
        };
        let aeth = |syndrome| Some(AethRepr { syndrome, msn: self.message_id & PSN_MASK });
        match self.kind {
            TrafficKind::Data => {
                let opcode = send_opcode(self.offset, self.message_len, carried);
                let ack_req = self.ack_req || matches!(opcode, Opcode::RcSendLast | Opcode::RcSendOnly);
                RoceRepr::new(BthRepr { ack_req, ..bth(opcode, self.sequence) }, None, SEGMENT_INFO_LEN + carried)
            }
            TrafficKind::Ack => RoceRepr::new(
                bth(Opcode::RcAcknowledge, self.sequence.wrapping_sub(1)),
                aeth(AethSyndrome::Ack { credits: AETH_INVALID_CREDITS }),
                0,
            ),
            TrafficKind::Nak => RoceRepr::new(
                bth(Opcode::RcAcknowledge, self.sequence),
                aeth(AethSyndrome::Nak(NakCode::PsnSequenceError)),
                0,
            ),
            TrafficKind::Cnp => RoceRepr::new(bth(Opcode::Cnp, 0), None, CNP_PAYLOAD_LEN),
        }
    }

    /// Writes a data segment's segment info into `payload` (at least 20 bytes).
    pub fn emit_segment_info(&self, payload: &mut [u8]) {
        payload[0..4].copy_from_slice(&self.message_id.to_be_bytes());
        payload[4..8].copy_from_slice(&self.message_len.to_be_bytes());
        payload[8..12].copy_from_slice(&self.offset.to_be_bytes());
        payload[12..20].copy_from_slice(&self.timestamp_ns.to_be_bytes());
    }

    /// The repr a RoCEv2 packet carries (`payload` without the pad): sequence numbers are
    /// the 24-bit PSNs, which the transport unwraps. Rejects QPs below [`QPN_BASE`]
    /// (`BadValue`), NAKs other than PSN sequence errors (`BadValue`) and SENDs without a
    /// segment info (`Truncated`).
    pub fn from_roce(roce: &RoceRepr, payload: &[u8]) -> Result<TrafficRepr> {
        let error = |kind| Err(Error::new(Layer::Roce, kind));
        let Some(flow_id) = roce.bth.dest_qp.checked_sub(QPN_BASE) else { return error(ErrorKind::BadValue) };
        let mut repr = TrafficRepr {
            kind: TrafficKind::Data,
            flow_id,
            sequence: roce.bth.psn,
            message_id: 0,
            message_len: 0,
            offset: 0,
            timestamp_ns: 0,
            ack_req: false,
        };
        match (roce.bth.opcode, roce.aeth) {
            (Opcode::Cnp, _) => {
                repr.kind = TrafficKind::Cnp;
                repr.sequence = 0;
            }
            (Opcode::RcAcknowledge, Some(AethRepr { syndrome, msn })) => {
                repr.message_id = msn;
                match syndrome {
                    AethSyndrome::Ack { .. } => {
                        repr.kind = TrafficKind::Ack;
                        repr.sequence = (roce.bth.psn + 1) & PSN_MASK;
                    }
                    AethSyndrome::Nak(NakCode::PsnSequenceError) => repr.kind = TrafficKind::Nak,
                    _ => return error(ErrorKind::BadValue),
                }
            }
            (opcode, _) if opcode.is_send() => {
                let Some(info) = payload.get(..SEGMENT_INFO_LEN) else { return error(ErrorKind::Truncated) };
                let word = |at: usize| u32::from_be_bytes(info[at..at + 4].try_into().expect("4 bytes"));
                repr.message_id = word(0);
                repr.message_len = word(4);
                repr.offset = word(8);
                repr.timestamp_ns = u64::from_be_bytes(info[12..20].try_into().expect("8 bytes"));
                repr.ack_req = roce.bth.ack_req;
            }
            _ => return error(ErrorKind::BadValue),
        }
        Ok(repr)
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
        fn round_trip(kind in 0u8..4, flow_id: u32, sequence: u32, message_id: u32, message_len: u32, offset: u32, timestamp_ns: u64, ack_req: bool) {
            let kind = [TrafficKind::Data, TrafficKind::Ack, TrafficKind::Nak, TrafficKind::Cnp][usize::from(kind)];
            let repr = TrafficRepr { kind, flow_id, sequence, message_id, message_len, offset, timestamp_ns, ack_req };
            let mut bytes = [0u8; 32];
            repr.emit(&mut TrafficHeader::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(TrafficRepr::parse(&TrafficHeader::new_checked(&bytes[..]).unwrap()).unwrap(), repr);
        }
    }
}
