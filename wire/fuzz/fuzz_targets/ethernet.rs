//! Ethernet II header: parse never panics; what parses re-emits to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{EthernetFrame, EthernetRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(frame) = EthernetFrame::new_checked(data) else { return };
    let Ok(repr) = EthernetRepr::parse(&frame) else { return };
    let mut out = data.to_vec();
    repr.emit(&mut EthernetFrame::new_unchecked(&mut out[..]));
    assert_eq!(out, data);
});
