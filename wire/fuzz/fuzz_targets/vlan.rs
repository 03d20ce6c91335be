//! 802.1Q tag: parse never panics; what parses re-emits to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{VlanHeader, VlanRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(header) = VlanHeader::new_checked(data) else { return };
    let repr = VlanRepr::parse(&header);
    let _ = header.payload();
    let mut out = data.to_vec();
    repr.emit(&mut VlanHeader::new_unchecked(&mut out[..]));
    assert_eq!(out, data);
});
