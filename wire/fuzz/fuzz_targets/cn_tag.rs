//! CN-TAG: parse never panics; what parses re-emits to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{CnTagHeader, CnTagRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(header) = CnTagHeader::new_checked(data) else { return };
    let repr = CnTagRepr::parse(&header);
    let mut out = data.to_vec();
    repr.emit(&mut CnTagHeader::new_unchecked(&mut out[..]));
    assert_eq!(out, data);
});
