//! 802.1Qau CNM: parse never panics; a parsed CNM re-emits to the same leading bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{CnmPacket, CnmRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(packet) = CnmPacket::new_checked(data) else { return };
    let _ = packet.encapsulated_msdu();
    let Ok(repr) = CnmRepr::parse(&packet) else { return };
    let mut out = vec![0u8; repr.buffer_len()];
    repr.emit(&mut CnmPacket::new_unchecked(&mut out[..]));
    assert_eq!(&out[..], &data[..out.len()]);
});
