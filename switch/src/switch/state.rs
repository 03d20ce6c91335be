//! The plain state `Switch` holds per port and in its pipeline. Data only: the behaviour is
//! `Switch`'s, in the sibling files; kept apart so `mod.rs` can hold these without importing
//! from the files that implement `Switch`.

use crate::config::EgressFull;
use crate::sched::Scheduler;
use pfcswitch_link::pause::PeerPause;
use pfcswitch_link::shaper::Shaper;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{EthernetAddress, Pcp};
use std::collections::VecDeque;
use std::time::Duration;

/// One port: its source address, how it classifies, its wire (shaper, scheduler) and the
/// peer's pause state of its egress.
#[derive(Debug)]
pub(super) struct Port {
    pub(super) mac: EthernetAddress,
    pub(super) default_priority: Pcp,
    pub(super) dscp_map: Option<[Pcp; 64]>,
    pub(super) shaper: Shaper,
    pub(super) scheduler: Scheduler,
    pub(super) peer_pause: PeerPause,
    /// The receive path's decisions for the port's last data frame (see `RxMemo`).
    pub(super) rx_memo: Option<RxMemo>,
}

/// What the receive path decided for a data frame: its priority and its route, which follow
/// from its first 18 bytes (addresses, tag, EtherType, and the IP header's DSCP where no tag
/// precedes it), the port's configuration and the FDB. A frame with the same bytes on the
/// same port at the same instant, the FDB unchanged, gets the same ones without being parsed,
/// classified, learned and routed again: a burst of one flow, as the datapath hands frames
/// in, does that once. Kept only while no feature reads further into the headers (ECN,
/// FECN, INT, QCN), and never for a frame with a CN-TAG or routed to more than one port
/// (ECMP hashes further in).
#[derive(Clone, Copy, Debug)]
pub(super) struct RxMemo {
    pub(super) header: (u128, u16),
    pub(super) now: Instant,
    /// [`crate::fdb::Fdb::generation`] when the route was read.
    pub(super) fdb: u64,
    pub(super) priority: Pcp,
    pub(super) route: Option<u64>,
}

/// The packet processor between ingress and egress (CaPFC §II-A): one FIFO per ingress
/// port, served round robin at `interval` per frame (or at once when unlimited).
#[derive(Debug)]
pub(super) struct Pipeline {
    pub(super) fifos: Vec<VecDeque<u32>>,
    pub(super) waiting: usize,
    pub(super) interval: Option<Duration>,
    pub(super) next_slot: Instant,
    pub(super) next_port: usize,
    pub(super) egress_full: EgressFull,
    /// Stop mode: the ingress port whose head frame waits for egress room.
    pub(super) blocked: Option<usize>,
}
