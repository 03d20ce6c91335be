//! RoCEv2: parsing any IPv4 packet as RoCEv2 never panics, nor does the ICRC over any
//! bytes; a packet that parses re-emits to the same headers, and its ICRC check agrees with
//! a recomputation.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{FrameView, RocePacket, RoceRepr, check_icrc, icrc, stored_icrc};

fuzz_target!(|data: &[u8]| {
    let _ = icrc(data);
    let _ = check_icrc(data);
    if let Ok(view) = FrameView::parse(data) {
        let _ = (view.roce(), view.traffic());
    }
    if let Ok(packet) = RocePacket::new_checked(data) {
        let _ = (packet.payload(), packet.padded_payload(), packet.icrc());
        if let Ok(repr) = RoceRepr::parse_headers(&packet) {
            assert_eq!(repr.buffer_len(), data.len());
            let mut out = data.to_vec();
            repr.emit(&mut RocePacket::new_unchecked(&mut out[..]));
            let reparsed = RoceRepr::parse_headers(&RocePacket::new_checked(&out[..]).unwrap()).unwrap();
            assert_eq!(reparsed, repr);
        }
    }
    if RoceRepr::parse(data).is_ok() {
        let end = data.len().min(usize::from(u16::from_be_bytes([data[2], data[3]])));
        assert_eq!(stored_icrc(&data[..end]), Some(icrc(&data[..end - 4])));
    }
});
