//! A whole frame as the switch sees it: layer-2 stack, then every payload interpretation.
//! Re-emitting the parsed layer-2 headers reproduces the input's header bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::FrameView;

fuzz_target!(|data: &[u8]| {
    let Ok(view) = FrameView::parse(data) else { return };
    let _ = (view.pcp(), view.dscp(), view.mac_control(), view.cnm(), view.traffic());
    let header_len = view.l2.header_len();
    let mut out = vec![0u8; header_len];
    assert_eq!(view.l2.emit(&mut out), header_len);
    assert_eq!(&out[..], &data[..header_len]);
});
