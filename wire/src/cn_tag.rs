//! 802.1Qau CN-TAG (EtherType 0x22E9, placed after the 802.1Q tag). The view starts after
//! the EtherType: flow identifier (RPID, 0–1), then the encapsulated EtherType (2–3).

use super::{Layer, Result};
use crate::field::{check_len, read_u16, write_u16};

pub const CN_TAG_HEADER_LEN: usize = 4;

/// A view of a CN-TAG (after its EtherType).
#[derive(Debug, Clone)]
pub struct CnTagHeader<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> CnTagHeader<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        CnTagHeader { buffer }
    }

    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::CnTag, buffer.as_ref().len(), CN_TAG_HEADER_LEN)?;
        Ok(CnTagHeader { buffer })
    }

    /// The reaction point's flow identifier (RPID).
    pub fn flow_id(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 0)
    }

    pub fn ethertype(&self) -> u16 {
        read_u16(self.buffer.as_ref(), 2)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> CnTagHeader<T> {
    pub fn set_flow_id(&mut self, flow_id: u16) {
        write_u16(self.buffer.as_mut(), 0, flow_id);
    }

    pub fn set_ethertype(&mut self, ethertype: u16) {
        write_u16(self.buffer.as_mut(), 2, ethertype);
    }
}

/// A CN-TAG's flow identifier as a value; the encapsulated EtherType belongs to the
/// frame's [`L2Repr`](super::L2Repr).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CnTagRepr {
    pub flow_id: u16,
}

impl CnTagRepr {
    pub fn parse<T: AsRef<[u8]>>(header: &CnTagHeader<T>) -> CnTagRepr {
        CnTagRepr { flow_id: header.flow_id() }
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, header: &mut CnTagHeader<T>) {
        header.set_flow_id(self.flow_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(flow_id: u16, ethertype: u16) {
            let mut bytes = [0u8; 4];
            let mut header = CnTagHeader::new_unchecked(&mut bytes[..]);
            CnTagRepr { flow_id }.emit(&mut header);
            header.set_ethertype(ethertype);
            prop_assert_eq!(&bytes[..2], &flow_id.to_be_bytes()[..]);
            let header = CnTagHeader::new_checked(&bytes[..]).unwrap();
            prop_assert_eq!((CnTagRepr::parse(&header).flow_id, header.ethertype()), (flow_id, ethertype));
        }

        #[test]
        fn short_buffers_are_truncated(len in 0usize..4) {
            prop_assert!(CnTagHeader::new_checked(&[0u8; 4][..len]).is_err());
        }
    }
}
