//! pfcswitch's wire formats, smoltcp style: every frame the switch, the hosts and the tools
//! read or write, and nothing else. It depends on no other crate of the project, so the
//! parsers can be used (and fuzzed, `fuzz/`) alone. It is not a packet socket, a switch or a
//! protocol engine: it only checks, reads and writes bytes in caller-provided buffers.
//!
//! Each format has a zero-copy view (`Frame`, `Header`, `Packet`) built by one checked
//! constructor (`new_checked`, which guarantees every fixed field is in bounds so the
//! accessors after it are infallible) and a high-level `Repr` with `parse` (semantic
//! checks) and `emit` (writes into a caller's buffer). Parsing never panics on any input;
//! every rejection carries an [`Error`] naming the layer and the reason, which the datapath
//! counts.
//!
//! Layouts are those of DESIGN.md ("Wire formats"); byte offsets in the docs below are from
//! the start of the view.
#![forbid(unsafe_code)]

mod cn_tag;
mod cnm;
mod error;
mod ethernet;
pub mod ethertype;
mod fecn;
mod field;
mod frame;
mod int;
mod ipv4;
mod mac_control;
mod ofc;
mod roce;
mod traffic;
mod udp;
mod vlan;

pub use cn_tag::{CN_TAG_HEADER_LEN, CnTagHeader, CnTagRepr};
pub use cnm::{CNM_MAX_ENCAPSULATED, CnmPacket, CnmRepr};
pub use error::{Error, ErrorKind, Layer, Result};
pub use ethernet::{ETHERNET_HEADER_LEN, EthernetAddress, EthernetFrame, EthernetRepr, MIN_FRAME_LEN};
pub use fecn::{FECN_PROBE_LEN, FecnProbe, FecnProbeRepr, FecnSubtype};
pub use frame::{
    DataFrameSpec, FrameView, L2Repr, RoceFrame, build_announcement_frame, build_cnm_frame, build_data_frame,
    build_fecn_probe_frame, build_mac_control_frame, build_ofc_frame, build_roce_frame, mark_ecn_ce, mark_fecn_probe,
};
pub use int::{
    INT_DOMAIN_ID, INT_HEADER_LEN, INT_MAX_QUEUE_BYTES, INT_SHIM_LEN, INT_UDP_PORT, IntEgress, IntHeader, IntHop,
    IntInstructions, IntKind, IntRepr, apply_int, insert_int, int_in, int_of, remove_int,
};
pub use ipv4::{Ipv4Addr, Ipv4Packet, Ipv4Repr};
pub use mac_control::{
    MAC_CONTROL_MIN_PAYLOAD, MacControlPacket, MacControlRepr, OPCODE_PAUSE, OPCODE_PFC, PAUSE_MULTICAST, PfcRepr,
};
pub use ofc::{
    FlowKey, OFC_ENTRY_LEN, OFC_HEADER_LEN, OFC_MAGIC, OFC_TLV_OFFSET, OfcHeader, OfcOp, OfcRepr, OfcTlv, has_ofc_tlv,
    ofc_entries_per_frame, ofc_frame_len, ofc_max_entries,
};
pub use roce::{
    AETH_INVALID_CREDITS, AETH_LEN, AethHeader, AethRepr, AethSyndrome, BTH_LEN, BthHeader, BthRepr, CNP_PAYLOAD_LEN,
    DEFAULT_PKEY, ICRC_LEN, NakCode, Opcode, ROCEV2_UDP_PORT, RocePacket, RoceRepr, check_icrc, fill_icrc, icrc,
    pad_count_for, stored_icrc,
};
pub use traffic::{
    Framing, QPN_BASE, SEGMENT_INFO_LEN, TRAFFIC_HEADER_LEN, TRAFFIC_UDP_PORT, TrafficHeader, TrafficKind, TrafficRepr,
    send_opcode,
};
pub use udp::{UdpPacket, UdpRepr};
pub use vlan::{Pcp, VLAN_HEADER_LEN, VlanHeader, VlanRepr};
