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
