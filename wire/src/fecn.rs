//! FECN rate-discovery probe (IEEE 802 local experimental EtherType 0x88B5), the project's
//! format for the FECN paper's 3-point architecture (§III-A): a source sends probes along
//! its flow's path, every FECN switch lowers the rate field to its advertised rate when that
//! is smaller (§IV, "Marking"), and the destination reflects the probe to the source.
//!
//! The view starts after the EtherType:
//!
//! | bytes  | field                                                                 |
//! |--------|-----------------------------------------------------------------------|
//! | 0      | version (4 bits, 1) · subtype (4 bits: 1 probe, 2 reflected)          |
//! | 1      | hops: FECN egress ports that examined the probe                       |
//! | 2–3    | flow id: the source's RPID for the flow (as a CN-TAG's)               |
//! | 4–7    | sequence number of the probe in its flow                              |
//! | 8–11   | rate, kbit/s: the source's line rate when sent, lowered on the path   |
//! | 12–17  | bottleneck: MAC of the egress port that last lowered the rate, or 0   |
//! | 18–25  | timestamp: the source's send time, ns (its round-trip measurement)    |
//!
//! The frame is padded to 60 bytes. A reflected probe keeps every field but the subtype, so
//! the source reads the path's rate, its bottleneck and the round trip.

use super::{Error, ErrorKind, EthernetAddress, Layer, Result};
use crate::field::{check_len, read_u16, write_u16};

pub const FECN_PROBE_LEN: usize = 26;
const VERSION: u8 = 1;

/// Whether a probe is on its way to the destination or back to the source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FecnSubtype {
    /// Source → destination: switches mark it.
    Probe = 1,
    /// Destination → source: carries the path's rate back, unmarked.
    Reflected = 2,
}

impl FecnSubtype {
    fn from_bits(bits: u8) -> Option<FecnSubtype> {
        match bits {
            1 => Some(FecnSubtype::Probe),
            2 => Some(FecnSubtype::Reflected),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FecnSubtype::Probe => "probe",
            FecnSubtype::Reflected => "reflected",
        }
    }
}

/// A view of a FECN probe.
#[derive(Debug, Clone)]
pub struct FecnProbe<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> FecnProbe<T> {
    pub const fn new_unchecked(buffer: T) -> Self {
        FecnProbe { buffer }
    }

    /// Guarantees the fixed fields are in bounds.
    pub fn new_checked(buffer: T) -> Result<Self> {
        check_len(Layer::Fecn, buffer.as_ref().len(), FECN_PROBE_LEN)?;
        Ok(FecnProbe { buffer })
    }

    fn data(&self) -> &[u8] {
        self.buffer.as_ref()
    }

    pub fn version(&self) -> u8 {
        self.data()[0] >> 4
    }

    pub fn subtype_bits(&self) -> u8 {
        self.data()[0] & 0x0F
    }

    pub fn hops(&self) -> u8 {
        self.data()[1]
    }

    pub fn flow_id(&self) -> u16 {
        read_u16(self.data(), 2)
    }

    pub fn sequence(&self) -> u32 {
        u32::from_be_bytes(self.data()[4..8].try_into().expect("checked length"))
    }

    pub fn rate_kbps(&self) -> u32 {
        u32::from_be_bytes(self.data()[8..12].try_into().expect("checked length"))
    }

    pub fn bottleneck(&self) -> EthernetAddress {
        EthernetAddress(self.data()[12..18].try_into().expect("checked length"))
    }

    pub fn timestamp_ns(&self) -> u64 {
        u64::from_be_bytes(self.data()[18..26].try_into().expect("checked length"))
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> FecnProbe<T> {
    fn data_mut(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }

    pub fn set_version_and_subtype(&mut self, subtype: FecnSubtype) {
        self.data_mut()[0] = (VERSION << 4) | subtype as u8;
    }

    pub fn set_hops(&mut self, hops: u8) {
        self.data_mut()[1] = hops;
    }

    pub fn set_flow_id(&mut self, flow_id: u16) {
        write_u16(self.data_mut(), 2, flow_id);
    }

    pub fn set_sequence(&mut self, sequence: u32) {
        self.data_mut()[4..8].copy_from_slice(&sequence.to_be_bytes());
    }

    pub fn set_rate_kbps(&mut self, rate: u32) {
        self.data_mut()[8..12].copy_from_slice(&rate.to_be_bytes());
    }

    pub fn set_bottleneck(&mut self, mac: EthernetAddress) {
        self.data_mut()[12..18].copy_from_slice(&mac.0);
    }

    pub fn set_timestamp_ns(&mut self, ns: u64) {
        self.data_mut()[18..26].copy_from_slice(&ns.to_be_bytes());
    }

    /// The marking rule of §IV: an egress port advertising `rate_kbps` lowers the probe's
    /// rate to it when that is smaller, and names itself the bottleneck. Every examining port
    /// counts a hop. Returns whether it lowered the rate.
    pub fn mark(&mut self, rate_kbps: u32, port: EthernetAddress) -> bool {
        let hops = self.hops().saturating_add(1);
        self.set_hops(hops);
        let lower = rate_kbps < self.rate_kbps();
        if lower {
            self.set_rate_kbps(rate_kbps);
            self.set_bottleneck(port);
        }
        lower
    }
}

/// A FECN probe as values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FecnProbeRepr {
    pub subtype: FecnSubtype,
    pub hops: u8,
    pub flow_id: u16,
    pub sequence: u32,
    pub rate_kbps: u32,
    pub bottleneck: EthernetAddress,
    pub timestamp_ns: u64,
}

impl FecnProbeRepr {
    pub fn parse<T: AsRef<[u8]>>(probe: &FecnProbe<T>) -> Result<FecnProbeRepr> {
        if probe.version() != VERSION {
            return Err(Error::new(Layer::Fecn, ErrorKind::BadVersion));
        }
        let subtype =
            FecnSubtype::from_bits(probe.subtype_bits()).ok_or(Error::new(Layer::Fecn, ErrorKind::BadValue))?;
        Ok(FecnProbeRepr {
            subtype,
            hops: probe.hops(),
            flow_id: probe.flow_id(),
            sequence: probe.sequence(),
            rate_kbps: probe.rate_kbps(),
            bottleneck: probe.bottleneck(),
            timestamp_ns: probe.timestamp_ns(),
        })
    }

    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, probe: &mut FecnProbe<T>) {
        probe.set_version_and_subtype(self.subtype);
        probe.set_hops(self.hops);
        probe.set_flow_id(self.flow_id);
        probe.set_sequence(self.sequence);
        probe.set_rate_kbps(self.rate_kbps);
        probe.set_bottleneck(self.bottleneck);
        probe.set_timestamp_ns(self.timestamp_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn repr() -> impl Strategy<Value = FecnProbeRepr> {
        (any::<bool>(), any::<u8>(), any::<u16>(), any::<u32>(), any::<u32>(), any::<[u8; 6]>(), any::<u64>()).prop_map(
            |(reflected, hops, flow_id, sequence, rate_kbps, mac, timestamp_ns)| FecnProbeRepr {
                subtype: if reflected { FecnSubtype::Reflected } else { FecnSubtype::Probe },
                hops,
                flow_id,
                sequence,
                rate_kbps,
                bottleneck: EthernetAddress(mac),
                timestamp_ns,
            },
        )
    }

    proptest! {
        #[test]
        fn round_trip(probe in repr()) {
            let mut bytes = [0u8; FECN_PROBE_LEN];
            probe.emit(&mut FecnProbe::new_unchecked(&mut bytes[..]));
            prop_assert_eq!(FecnProbeRepr::parse(&FecnProbe::new_checked(&bytes[..]).unwrap()), Ok(probe));
        }

        #[test]
        fn marking_keeps_the_smaller_rate(probe in repr(), advertised: u32) {
            let mut bytes = [0u8; FECN_PROBE_LEN];
            probe.emit(&mut FecnProbe::new_unchecked(&mut bytes[..]));
            let port = EthernetAddress([2, 0, 0, 0, 0, 9]);
            let lowered = FecnProbe::new_unchecked(&mut bytes[..]).mark(advertised, port);
            let marked = FecnProbeRepr::parse(&FecnProbe::new_checked(&bytes[..]).unwrap()).unwrap();
            prop_assert_eq!(marked.rate_kbps, probe.rate_kbps.min(advertised));
            prop_assert_eq!(lowered, advertised < probe.rate_kbps);
            prop_assert_eq!(marked.bottleneck, if lowered { port } else { probe.bottleneck });
            prop_assert_eq!(marked.hops, probe.hops.saturating_add(1));
        }

        #[test]
        fn short_buffers_are_truncated(len in 0usize..FECN_PROBE_LEN) {
            prop_assert!(FecnProbe::new_checked(&[0u8; FECN_PROBE_LEN][..len]).is_err());
        }
    }

    #[test]
    fn the_layout_is_the_documented_one() {
        let probe = FecnProbeRepr {
            subtype: FecnSubtype::Probe,
            hops: 2,
            flow_id: 0x0102,
            sequence: 0x0304_0506,
            rate_kbps: 100_000,
            bottleneck: EthernetAddress([0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]),
            timestamp_ns: 0x1122_3344_5566_7788,
        };
        let mut bytes = [0u8; FECN_PROBE_LEN];
        probe.emit(&mut FecnProbe::new_unchecked(&mut bytes[..]));
        assert_eq!(
            bytes,
            [
                0x11, 2, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x00, 0x01, 0x86, 0xA0, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE,
                0xFF, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88
            ]
        );
        bytes[0] = 0x21;
        assert_eq!(
            FecnProbeRepr::parse(&FecnProbe::new_checked(&bytes[..]).unwrap()),
            Err(Error::new(Layer::Fecn, ErrorKind::BadVersion))
        );
        bytes[0] = 0x13;
        assert_eq!(
            FecnProbeRepr::parse(&FecnProbe::new_checked(&bytes[..]).unwrap()),
            Err(Error::new(Layer::Fecn, ErrorKind::BadValue))
        );
    }
}
