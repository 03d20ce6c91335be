//! PAUSE and PFC: parse never panics; a parsed PDU re-emits to a PDU that parses equal and
//! whose fixed fields are byte-identical to the input.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{MacControlPacket, MacControlRepr};

fuzz_target!(|data: &[u8]| {
    let Ok(packet) = MacControlPacket::new_checked(data) else { return };
    let _ = packet.trailer();
    let Ok(repr) = MacControlRepr::parse(&packet) else { return };
    let mut out = vec![0u8; repr.buffer_len()];
    repr.emit(&mut MacControlPacket::new_unchecked(&mut out[..]));
    let fixed = match repr {
        MacControlRepr::Pause { .. } => 4,
        MacControlRepr::Pfc(_) => 20,
    };
    assert_eq!(&out[..fixed], &data[..fixed]);
    assert_eq!(MacControlRepr::parse(&MacControlPacket::new_checked(&out[..]).unwrap()).unwrap(), repr);
});
