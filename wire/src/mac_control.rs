//! MAC control frames (EtherType 0x8808): 802.3x PAUSE and 802.1Qbb PFC.
//!
//! The view starts after the EtherType. Opcode (0–1); PAUSE: pause_time (2–3);
//! PFC: reserved (2, must be 0), class-enable vector (3, bit n = priority n), time[0..7]
//! (4–19, big-endian quanta). MAC control frames are padded to the 60-byte minimum, so the
//! payload is at least 46 bytes; anything after the fixed fields (OFC's TLV) is left alone.

use super::{Error, ErrorKind, EthernetAddress, Layer, Pcp, Result};
use crate::field::{check_len, read_u16, write_u16};

/// The reserved multicast destination of PAUSE and PFC frames.
pub const PAUSE_MULTICAST: EthernetAddress = EthernetAddress([0x01, 0x80, 0xC2, 0x00, 0x00, 0x01]);

pub const OPCODE_PAUSE: u16 = 0x0001;
pub const OPCODE_PFC: u16 = 0x0101;

/// Payload of a minimum-size (60-byte, FCS excluded) frame after its 14-byte header.
pub const MAC_CONTROL_MIN_PAYLOAD: usize = 46;
const PAUSE_FIELDS_LEN: usize = 4;
const PFC_FIELDS_LEN: usize = 20;

/// A view of a MAC control PDU.
#[derive(Debug, Clone)]
pub struct MacControlPacket<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> MacControlPacket<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        MacControlPacket { buffer }
    }

    /// Guarantees the opcode and, for PAUSE and PFC, every fixed field are in bounds.
    pub fn new_checked(buffer: T) -> Result<Self> {
        let data = buffer.as_ref();
        check_len(Layer::MacControl, data.len(), 2)?;
        let need = match read_u16(data, 0) {
            OPCODE_PAUSE => PAUSE_FIELDS_LEN,
            OPCODE_PFC => PFC_FIELDS_LEN,
            _ => 2,
        };
        check_len(Layer::MacControl, data.len(), need)?;
        Ok(MacControlPacket { buffer })
    }

    pub fn opcode(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 0)
    }

    /// PAUSE only.
    pub fn pause_time(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 2)
    }

    /// PFC only.
    pub fn pfc_reserved(&self) -> u8 {
        self.buffer.as_ref()[2]
    }

    /// PFC only.
    pub fn class_enable(&self) -> u8 {
        self.buffer.as_ref()[3]
    }

    /// PFC only: the timer field of `class`, whether or not its enable bit is set.
    pub fn class_time(&self, class: Pcp) -> u16 {
        read_u16(self.buffer.as_ref(), 4 + 2 * class.index())
    }

    pub fn len(&self) -> usize {
        self.buffer.as_ref().len()
    }

    pub fn is_empty(&self) -> bool {
        self.buffer.as_ref().is_empty()
    }

    /// Bytes after the fixed fields of a known opcode (padding, or OFC's TLV after PFC).
    pub fn trailer(&self) -> &[u8] {
        let start = if self.opcode() == OPCODE_PAUSE { PAUSE_FIELDS_LEN } else { PFC_FIELDS_LEN };
        self.buffer.as_ref().get(start..).unwrap_or(&[])
    }
}

/// A PFC frame's content: which classes it addresses and their timers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PfcRepr {
    /// Class-enable vector: bit n set means `quanta[n]` applies to priority n.
    pub enable: u8,
    /// Pause time per class in quanta; 0 on an enabled class means resume.
    pub quanta: [u16; 8],
}

impl PfcRepr {
    /// Adds `class` with `quanta` (0 resumes it).
    pub fn with_class(mut self, class: Pcp, quanta: u16) -> PfcRepr {
        self.enable |= class.mask();
        self.quanta[class.index()] = quanta;
        self
    }

    pub fn is_enabled(&self, class: Pcp) -> bool {
        self.enable & class.mask() != 0
    }

    /// The enabled classes with their timers, lowest priority first.
    pub fn classes(&self) -> impl Iterator<Item = (Pcp, u16)> + '_ {
        Pcp::ALL.into_iter().filter(|&c| self.is_enabled(c)).map(|c| (c, self.quanta[c.index()]))
    }
}

/// A MAC control PDU as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MacControlRepr {
    /// 802.3x PAUSE: all traffic for `quanta` × 512 bit times (0 resumes).
    Pause { quanta: u16 },
    /// 802.1Qbb priority-based flow control.
    Pfc(PfcRepr),
}

impl MacControlRepr {
    /// Checks, in order: opcode known, reserved byte zero, padded to the minimum frame size.
    pub fn parse<T: AsRef<[u8]>>(packet: &MacControlPacket<T>) -> Result<MacControlRepr> {
        let error = |kind| Err(Error::new(Layer::MacControl, kind));
        let repr = match packet.opcode() {
            OPCODE_PAUSE => MacControlRepr::Pause { quanta: packet.pause_time() },
            OPCODE_PFC => {
                if packet.pfc_reserved() != 0 {
                    return error(ErrorKind::ReservedBits);
                }
                MacControlRepr::Pfc(PfcRepr {
                    enable: packet.class_enable(),
                    quanta: Pcp::ALL.map(|c| packet.class_time(c)),
                })
            }
            _ => return error(ErrorKind::UnknownOpcode),
        };
        if packet.len() < MAC_CONTROL_MIN_PAYLOAD {
            return error(ErrorKind::BadLength);
        }
        Ok(repr)
    }

    /// Always the minimum payload: the fixed fields plus zero padding.
    pub const fn buffer_len(&self) -> usize {
        MAC_CONTROL_MIN_PAYLOAD
    }

    /// Writes the fields and zeroes the padding of `buffer_len()` bytes.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut MacControlPacket<T>) {
        let data = packet.buffer.as_mut();
        data[..MAC_CONTROL_MIN_PAYLOAD].fill(0);
        match self {
            MacControlRepr::Pause { quanta } => {
                write_u16(data, 0, OPCODE_PAUSE);
                write_u16(data, 2, *quanta);
            }
            MacControlRepr::Pfc(pfc) => {
                write_u16(data, 0, OPCODE_PFC);
                data[3] = pfc.enable;
                for class in Pcp::ALL {
                    write_u16(data, 4 + 2 * class.index(), pfc.quanta[class.index()]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pdu(opcode: u16, len: usize) -> Vec<u8> {
        let mut bytes = vec![0u8; len];
        bytes[..2].copy_from_slice(&opcode.to_be_bytes());
        bytes
    }

    #[test]
    fn rejection_reasons() {
        let kind = |bytes: &[u8]| match MacControlPacket::new_checked(bytes) {
            Err(e) => e.kind,
            Ok(packet) => MacControlRepr::parse(&packet).unwrap_err().kind,
        };
        assert_eq!(kind(&[0x01]), ErrorKind::Truncated);
        assert_eq!(kind(&pdu(OPCODE_PFC, 19)), ErrorKind::Truncated);
        assert_eq!(kind(&pdu(OPCODE_PAUSE, 3)), ErrorKind::Truncated);
        assert_eq!(kind(&pdu(0x0002, 46)), ErrorKind::UnknownOpcode);
        let mut reserved = pdu(OPCODE_PFC, 46);
        reserved[2] = 0x80;
        assert_eq!(kind(&reserved), ErrorKind::ReservedBits);
        assert_eq!(kind(&pdu(OPCODE_PFC, 20)), ErrorKind::BadLength);
        assert!(MacControlRepr::parse(&MacControlPacket::new_checked(&pdu(OPCODE_PFC, 46)[..]).unwrap()).is_ok());
    }

    #[test]
    fn pfc_layout() {
        let pfc = PfcRepr::default().with_class(Pcp::new(3).unwrap(), 0xFFFF).with_class(Pcp::new(4).unwrap(), 0);
        let mut bytes = [0xAAu8; 46];
        MacControlRepr::Pfc(pfc).emit(&mut MacControlPacket::new_unchecked(&mut bytes[..]));
        assert_eq!(&bytes[..4], &[0x01, 0x01, 0x00, 0x18]);
        assert_eq!(&bytes[10..14], &[0xFF, 0xFF, 0x00, 0x00]);
        assert!(bytes[20..].iter().all(|&b| b == 0), "padding is zeroed");
        assert_eq!(pfc.classes().collect::<Vec<_>>(), vec![(Pcp::new(3).unwrap(), 0xFFFF), (Pcp::new(4).unwrap(), 0)]);
    }

    proptest! {
        #[test]
        fn pfc_round_trip(enable: u8, quanta: [u16; 8], extra in 0usize..64) {
            let repr = MacControlRepr::Pfc(PfcRepr { enable, quanta });
            let mut bytes = vec![0u8; repr.buffer_len() + extra];
            repr.emit(&mut MacControlPacket::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(MacControlRepr::parse(&MacControlPacket::new_checked(&bytes[..]).unwrap()).unwrap(), repr);
        }

        #[test]
        fn pause_round_trip(quanta: u16) {
            let repr = MacControlRepr::Pause { quanta };
            let mut bytes = [0u8; 46];
            repr.emit(&mut MacControlPacket::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(MacControlRepr::parse(&MacControlPacket::new_checked(&bytes[..]).unwrap()).unwrap(), repr);
        }

        #[test]
        fn parse_never_panics(bytes: Vec<u8>) {
            if let Ok(packet) = MacControlPacket::new_checked(&bytes[..]) {
                let _ = MacControlRepr::parse(&packet);
                let _ = packet.trailer();
            }
        }
    }
}
