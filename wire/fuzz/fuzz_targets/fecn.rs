//! FECN probe: parse never panics; a parsed probe re-emits to the same bytes; marking never
//! raises the rate.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{EthernetAddress, FECN_PROBE_LEN, FecnProbe, FecnProbeRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(probe) = FecnProbe::new_checked(data) else { return };
    let Ok(repr) = FecnProbeRepr::parse(&probe) else { return };
    let mut out = [0u8; FECN_PROBE_LEN];
    repr.emit(&mut FecnProbe::new_unchecked(&mut out[..]));
    assert_eq!(&out[..], &data[..FECN_PROBE_LEN]);
    let advertised = u32::from_be_bytes([data[0], data[1], data[2], data[3]]);
    FecnProbe::new_unchecked(&mut out[..]).mark(advertised, EthernetAddress([2, 0, 0, 0, 0, 1]));
    assert!(FecnProbe::new_unchecked(&out[..]).rate_kbps() <= repr.rate_kbps);
});
