//! The XDP classifier loaded into the kernel and attached to a veth in a test namespace:
//! real frames sent through AF_PACKET are counted at the priority the classifier computes.

use pfcswitch_tests::netns::Netns;
use pfcswitch_tests::{require_root, wait_until};
use pfcswitch_wire::{
    DataFrameSpec, EthernetAddress, MacControlRepr, PAUSE_MULTICAST, Pcp, PfcRepr, VlanRepr, build_mac_control_frame,
};
use pfcswitchd::classifier::{Classifier, ClassifierDrop, PortClassification};
use pfcswitchd::packet::RawSocket;
use std::time::Duration;

const PORT: u32 = 5;

fn data_frame(pcp: Option<u8>, dscp: u8) -> Vec<u8> {
    let vlan = pcp.map(|pcp| VlanRepr { pcp: Pcp::new(pcp).unwrap(), dei: false, vid: 10 });
    let (src, dst) = (EthernetAddress([2, 0, 0, 0, 0, 1]), EthernetAddress([2, 0, 0, 0, 0, 2]));
    DataFrameSpec { dscp, ..DataFrameSpec::between(src, dst, vlan, 100) }.to_bytes()
}

fn pfc_frame() -> Vec<u8> {
    let mut frame = vec![0u8; 60];
    let pfc = MacControlRepr::Pfc(PfcRepr::default().with_class(Pcp::new(3).unwrap(), 10));
    build_mac_control_frame(&mut frame, EthernetAddress([2, 0, 0, 0, 0, 1]), PAUSE_MULTICAST, &pfc);
    frame
}

/// Sends `frames` from `from` and returns the classifier's counters on `to` once it has
/// counted every one of them (as a priority or a drop).
fn send_and_count(classifier: &Classifier, from: &str, frames: &[(usize, Vec<u8>)]) -> ([u64; 8], [u64; 8]) {
    let socket = RawSocket::open(from).expect("AF_PACKET socket");
    for (copies, frame) in frames {
        for _ in 0..*copies {
            socket.send(frame).expect("send");
        }
    }
    // veth hands frames to the peer's NAPI, which runs the program when the kernel gets to it.
    let sent: usize = frames.iter().map(|(copies, _)| copies).sum();
    let counted = || {
        let rx: u64 = classifier.rx_counters(PORT).unwrap().iter().map(|c| c.frames).sum();
        rx + ClassifierDrop::ALL.iter().map(|&reason| classifier.drops(PORT, reason).unwrap()).sum::<u64>()
    };
    wait_until("the classifier counted every frame", Duration::from_secs(10), || counted() >= sent as u64);
    let counters = classifier.rx_counters(PORT).unwrap();
    (counters.map(|c| c.frames), counters.map(|c| c.bytes))
}

#[test]
fn classifies_by_pcp_default_priority_and_counts_truncated_tags() {
    require_root();
    let netns = Netns::new("xdpcls");
    netns.veth_pair("host0", "sw0");
    netns.enter(|| {
        let mut classifier = Classifier::load().expect("load the classifier");
        let port = PortClassification {
            port_index: PORT,
            default_priority: Pcp::new(2).unwrap(),
            dscp_map: None,
            lossless: 0,
        };
        classifier.attach("sw0", &port).expect("attach in native mode");

        let mut truncated_tag = data_frame(Some(5), 0);
        truncated_tag.truncate(16);
        let (frames, bytes) = send_and_count(
            &classifier,
            "host0",
            &[(7, data_frame(Some(3), 0)), (4, data_frame(None, 46)), (2, pfc_frame()), (3, truncated_tag)],
        );
        assert_eq!(frames, [0, 0, 4 + 2, 7, 0, 0, 0, 0], "PCP 3 → 3; untagged (even with DSCP 46) and PFC → default 2");
        assert_eq!(bytes[3], 7 * 100);
        assert_eq!(bytes[2], 4 * 100 + 2 * 60);
        assert_eq!(classifier.drops(PORT, ClassifierDrop::TruncatedVlan).unwrap(), 3);
        assert_eq!(classifier.drops(PORT, ClassifierDrop::Runt).unwrap(), 0);
    });
    // The kernel releases a BPF link asynchronously after its last fd closes.
    let attached =
        || String::from_utf8_lossy(&netns.ip(&["-d", "link", "show", "dev", "sw0"]).stdout).contains("prog/xdp");
    wait_until("dropping the classifier detaches it", Duration::from_secs(10), || !attached());
}

#[test]
fn trusts_dscp_for_untagged_ip_when_configured() {
    require_root();
    let netns = Netns::new("xdpdscp");
    netns.veth_pair("host0", "sw0");
    netns.enter(|| {
        let mut classifier = Classifier::load().expect("load the classifier");
        let mut dscp_map = [Pcp::new(0).unwrap(); 64];
        dscp_map[46] = Pcp::new(5).unwrap();
        dscp_map[26] = Pcp::new(3).unwrap();
        let port = PortClassification {
            port_index: PORT,
            default_priority: Pcp::new(1).unwrap(),
            dscp_map: Some(dscp_map),
            lossless: 0,
        };
        classifier.attach("sw0", &port).expect("attach in native mode");
        let (frames, _) = send_and_count(
            &classifier,
            "host0",
            &[(3, data_frame(None, 46)), (2, data_frame(None, 26)), (1, data_frame(Some(7), 46)), (4, pfc_frame())],
        );
        assert_eq!(frames, [0, 4, 0, 2, 0, 3, 0, 1], "DSCP map for untagged IP; the tag wins; non-IP → default");
    });
}

#[test]
fn a_second_attach_to_an_occupied_slot_is_a_clear_error() {
    require_root();
    let netns = Netns::new("xdpbusy");
    netns.veth_pair("host0", "sw0");
    netns.enter(|| {
        let port =
            PortClassification { port_index: 0, default_priority: Pcp::new(0).unwrap(), dscp_map: None, lossless: 0 };
        let mut first = Classifier::load().unwrap();
        first.attach("sw0", &port).unwrap();
        let mut second = Classifier::load().unwrap();
        let error = second.attach("sw0", &port).unwrap_err().to_string();
        assert!(error.contains("occupies the slot") && error.contains("sw0"), "{error}");
        let missing = second.attach("nosuch0", &port).unwrap_err().to_string();
        assert_eq!(missing, "interface `nosuch0` does not exist in this network namespace");
    });
}

/// While pfcswitchd says a port's receive ring backs up, the classifier drops the port's lossy
/// data frames before the kernel copies them, and counts them by priority (after counting
/// them as received there); lossless data frames and MAC control frames still pass.
#[test]
fn a_shedding_port_drops_its_lossy_data_frames_and_counts_them_by_priority() {
    require_root();
    let netns = Netns::new("xdpshed");
    netns.veth_pair("host0", "sw0");
    netns.enter(|| {
        let mut classifier = Classifier::load().expect("load the classifier");
        let lossless = Pcp::new(3).unwrap().mask();
        let port =
            PortClassification { port_index: PORT, default_priority: Pcp::new(0).unwrap(), dscp_map: None, lossless };
        classifier.attach("sw0", &port).expect("attach in native mode");

        classifier.set_shedding(PORT, true);
        let shedding =
            [(5, data_frame(Some(1), 0)), (4, data_frame(None, 0)), (3, data_frame(Some(3), 0)), (2, pfc_frame())];
        let (frames, _) = send_and_count(&classifier, "host0", &shedding);
        assert_eq!(frames, [4 + 2, 5, 0, 3, 0, 0, 0, 0], "every frame counted at its priority as received");
        let shed = classifier.shed_frames(PORT).unwrap();
        assert_eq!(shed, [4, 5, 0, 0, 0, 0, 0, 0], "lossy data frames shed; lossless and PFC passed");

        classifier.set_shedding(PORT, false);
        let socket = RawSocket::open("host0").expect("AF_PACKET socket");
        (0..2).for_each(|_| socket.send(&data_frame(Some(1), 0)).expect("send"));
        let priority_1 = || classifier.rx_counters(PORT).unwrap()[1].frames;
        wait_until("two more frames at priority 1", Duration::from_secs(10), || priority_1() == 5 + 2);
        assert_eq!(classifier.shed_frames(PORT).unwrap(), shed, "none shed once it stops");
    });
}
