//! PAUSE and PFC frames shorter than Ethernet's 60-byte minimum, as SONiC's `pfc_gen.py`
//! writes them on a veth (no MAC pads them there): a 32-byte PFC frame with seven class
//! timers and an 18-byte PAUSE. The frames are written byte by byte here, as pfc_gen packs
//! them, not with the project's builders. `[pfc] short_frames = "pad"` reads them as a NIC
//! would have sent them and obeys them; `"drop"` drops them as runts; both count them.

mod common;

use common::pcp;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_switch::config::{ShortFrames, SwitchConfig};
use pfcswitch_switch::{Switch, Tx};
use pfcswitch_wire::{DataFrameSpec, EthernetAddress, VlanRepr};

/// pfc_gen's PFC frame: DA, SA 00:01:02:03:04:05, 0x8808, opcode 0x0101, a two-byte
/// class-enable vector and timers for classes 0–6 only: 32 bytes.
fn pfc_gen_pfc(enable: u8, quanta: u16) -> Vec<u8> {
    let mut frame =
        vec![0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x88, 0x08, 0x01, 0x01];
    frame.extend([0x00, enable]);
    for class in 0..7 {
        let time = if enable & (1 << class) != 0 { quanta } else { 0 };
        frame.extend(time.to_be_bytes());
    }
    assert_eq!(frame.len(), 32);
    frame
}

/// pfc_gen's `-g` frame: an 802.3x PAUSE of 18 bytes.
fn pfc_gen_pause(quanta: u16) -> Vec<u8> {
    let mut frame =
        vec![0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x88, 0x08, 0x00, 0x01];
    frame.extend(quanta.to_be_bytes());
    frame
}

fn mac(n: u8) -> EthernetAddress {
    EthernetAddress([2, 0, 0, 0, 0, n])
}

fn data(prio: u8) -> Vec<u8> {
    let vlan = Some(VlanRepr { pcp: pcp(prio), dei: false, vid: 1 });
    DataFrameSpec::between(mac(1), mac(2), vlan, 200).to_bytes()
}

fn us(n: u64) -> Instant {
    Instant::from_nanos(n * 1_000)
}

/// Two 1 Gbit/s ports, PFC on priority 3; the host behind port 1 (mac 2) is learned.
fn switch(short_frames: ShortFrames) -> Switch {
    switch_lossless(short_frames, &[3])
}

fn switch_lossless(short_frames: ShortFrames, lossless: &[u8]) -> Switch {
    let mut config = SwitchConfig::with_ports("sw", 2, BitRate::gbps(1));
    config.pfc.short_frames = short_frames;
    config.pfc.lossless = lossless.to_vec();
    let mut sw = Switch::new(&config).unwrap().0;
    sw.handle_rx(us(0), 1, 1, &DataFrameSpec::between(mac(2), mac(1), None, 100).to_bytes());
    while sw.poll_tx(us(0), 0).is_some() {}
    sw
}

/// The handles of the data frames port 1 sends at `now`.
fn sent(sw: &mut Switch, now: Instant) -> Vec<u64> {
    std::iter::from_fn(|| sw.poll_tx(now, 1))
        .filter_map(|tx| match tx {
            Tx::Data { handle, .. } => Some(handle),
            _ => None,
        })
        .collect()
}

#[test]
fn a_32_byte_pfc_frame_from_pfc_gen_is_padded_counted_and_obeyed() {
    let mut sw = switch(ShortFrames::Pad);
    sw.handle_rx(us(1), 1, 2, &pfc_gen_pfc(1 << 3, 0xFFFF));
    let counters = sw.counters(1);
    assert_eq!(counters.short_mac_control, 1);
    assert_eq!(counters.priority[3].pfc_rx, 1, "counted as PFC on priority 3");
    assert_eq!(counters.total_malformed(), 0);
    assert!(sw.queue_state(us(1), 1, pcp(3)).peer_paused, "priority 3 is paused");
    assert!(!sw.queue_state(us(1), 1, pcp(0)).peer_paused, "and no other");

    sw.handle_rx(us(2), 0, 10, &data(3));
    sw.handle_rx(us(2), 0, 11, &data(0));
    assert_eq!(sent(&mut sw, us(3)), vec![11], "priority 3 is held while priority 0 passes");
    // 65535 quanta at 1 Gbit/s: 33.6 ms.
    assert_eq!(sent(&mut sw, us(33_000)), Vec::<u64>::new());
    assert_eq!(sent(&mut sw, us(34_000)), vec![10], "and leaves when the pause expires");
}

#[test]
fn a_class_the_short_frame_does_not_carry_reads_as_zero_as_padding_makes_it() {
    let mut sw = switch_lossless(ShortFrames::Pad, &[3, 6, 7]);
    sw.handle_rx(us(1), 1, 2, &pfc_gen_pfc(1 << 6, 0xFFFF));
    assert!(sw.queue_state(us(1), 1, pcp(6)).peer_paused);
    // Class 7 enabled with no timer in the frame: padded, its timer is 0, a resume.
    let mut frame = pfc_gen_pfc(1 << 6, 0xFFFF);
    frame[17] |= 1 << 7;
    let mut full = [0u8; 60];
    full[..14].copy_from_slice(&frame[..14]);
    full[14..18].copy_from_slice(&[0x01, 0x01, 0x00, 1 << 7]);
    full[18 + 14..18 + 16].copy_from_slice(&0xFFFFu16.to_be_bytes());
    sw.handle_rx(us(2), 1, 3, &full);
    assert!(sw.queue_state(us(2), 1, pcp(7)).peer_paused, "a full frame pauses class 7");
    sw.handle_rx(us(3), 1, 4, &frame);
    assert!(!sw.queue_state(us(3), 1, pcp(7)).peer_paused, "the short frame's class 7 resumes it");
    assert!(sw.queue_state(us(3), 1, pcp(6)).peer_paused, "class 6 stays paused");
    assert_eq!(sw.counters(1).short_mac_control, 2);
}

#[test]
fn an_18_byte_pause_from_pfc_gen_pauses_every_priority() {
    let mut sw = switch(ShortFrames::Pad);
    sw.handle_rx(us(1), 1, 2, &pfc_gen_pause(0xFFFF));
    assert_eq!((sw.counters(1).pause_rx, sw.counters(1).short_mac_control), (1, 1));
    sw.handle_rx(us(2), 0, 10, &data(0));
    sw.handle_rx(us(2), 0, 11, &data(5));
    assert_eq!(sent(&mut sw, us(3)), Vec::<u64>::new(), "every priority is held");
    sw.handle_rx(us(4), 1, 3, &pfc_gen_pause(0));
    let resumed: Vec<u64> = [50, 100].into_iter().flat_map(|t| sent(&mut sw, us(t))).collect();
    assert_eq!(resumed, vec![10, 11], "until a PAUSE of 0 resumes");
}

#[test]
fn strict_mode_drops_short_frames_as_runts_and_counts_them() {
    let mut sw = switch(ShortFrames::Drop);
    sw.handle_rx(us(1), 1, 2, &pfc_gen_pfc(1 << 3, 0xFFFF));
    sw.handle_rx(us(1), 1, 3, &pfc_gen_pause(0xFFFF));
    let counters = sw.counters(1);
    assert_eq!(counters.short_mac_control, 2);
    assert_eq!(
        counters.malformed(pfcswitch_wire::Error::new(
            pfcswitch_wire::Layer::MacControl,
            pfcswitch_wire::ErrorKind::BadLength
        )),
        2
    );
    assert_eq!((counters.priority[3].pfc_rx, counters.pause_rx), (0, 0));
    sw.handle_rx(us(2), 0, 10, &data(3));
    assert_eq!(sent(&mut sw, us(3)), vec![10], "nothing is paused");
}
