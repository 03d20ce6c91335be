//! OFC TLVs after PFC fields: parse never panics; a parsed TLV rebuilt with the same header
//! and flows parses equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{EthernetAddress, FlowKey, FrameView, build_ofc_frame, ofc_frame_len};

fuzz_target!(|data: &[u8]| {
    let Ok(view) = FrameView::parse(data) else { return };
    let Ok(Some(tlv)) = view.ofc() else { return };
    let flows: Vec<FlowKey> = tlv.flows().collect();
    let mut out = vec![0u8; ofc_frame_len(flows.len())];
    let quanta = u16::from(tlv.op == pfcswitch_wire::OfcOp::Pause);
    build_ofc_frame(&mut out, EthernetAddress([2; 6]), tlv.header(), quanta, flows.iter().copied());
    let again = FrameView::parse(&out).unwrap().ofc().unwrap().unwrap();
    assert_eq!(again.header(), tlv.header());
    assert!(again.flows().eq(flows));
});
