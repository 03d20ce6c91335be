//! Host-side engines. [`HostNic`] is an endpoint's NIC as a lossless fabric sees it: a line
//! rate, and obedience to PFC and 802.3x PAUSE per priority with exact quanta timing, as a
//! RoCE NIC behaves. The traffic endpoints and the simulator's hosts send through it, with
//! [`FlowSender`]s and a [`FlowReceiver`].

mod flow;
mod transport;

pub use flow::{FlowReceiver, FlowSender, FlowSpec, FlowStats, MINIMAL_FRAME_ETHERTYPE};
pub use transport::{
    ConnectionSpec, MessageRecord, MessageSpec, ReceiverStats, SEGMENT_OVERHEAD, SenderStats, Transport,
    TransportConfig,
};

use crate::pause::PeerPause;
use crate::sched::Shaper;
use crate::time::Instant;
use crate::units::BitRate;
use crate::wire::{FrameView, MacControlRepr, Pcp};
use std::time::Duration;

#[derive(Clone, Debug)]
pub struct HostNic {
    shaper: Shaper,
    pause: PeerPause,
    /// Priorities whose PFC pauses this NIC obeys (802.3x PAUSE stops all).
    pfc_enabled: u8,
    pfc_rx: u64,
    pause_rx: u64,
}

impl HostNic {
    pub fn new(speed: BitRate, pfc_enabled: u8) -> HostNic {
        HostNic {
            shaper: Shaper::new(speed, Duration::ZERO),
            pause: PeerPause::new(speed),
            pfc_enabled,
            pfc_rx: 0,
            pause_rx: 0,
        }
    }

    /// Lets the NIC send up to `burst` early after a late wake-up (a userspace sender's
    /// timer jitter), keeping its long-run rate exact.
    pub fn set_burst(&mut self, burst: Duration) {
        self.shaper = Shaper::new(self.shaper.speed(), burst);
    }

    pub fn speed(&self) -> BitRate {
        self.shaper.speed()
    }

    /// Consumes a received frame if it is PAUSE or PFC; returns whether it was.
    pub fn handle_rx(&mut self, now: Instant, frame: &[u8]) -> bool {
        let Ok(view) = FrameView::parse(frame) else { return false };
        if !view.is_mac_control() {
            return false;
        }
        match view.mac_control() {
            Ok(MacControlRepr::Pfc(mut pfc)) => {
                self.pfc_rx += 1;
                pfc.enable &= self.pfc_enabled;
                self.pause.apply(now, &MacControlRepr::Pfc(pfc));
            }
            Ok(pause @ MacControlRepr::Pause { .. }) => {
                self.pause_rx += 1;
                self.pause.apply(now, &pause);
            }
            Err(_) => {}
        }
        true
    }

    /// Whether the wire is free now (MAC control frames ignore pauses).
    pub fn wire_free(&self, now: Instant) -> bool {
        self.shaper.is_ready(now)
    }

    pub fn wire_free_at(&self) -> Instant {
        self.shaper.ready_at()
    }

    /// Whether a frame of `priority` may start now.
    pub fn can_send(&self, now: Instant, priority: Pcp) -> bool {
        self.shaper.is_ready(now) && !self.pause.is_paused(now, priority)
    }

    /// Whether the peer pauses `priority` at `now`.
    pub fn is_paused(&self, now: Instant, priority: Pcp) -> bool {
        self.pause.is_paused(now, priority)
    }

    /// The earliest time a frame of `priority` may start.
    pub fn ready_at(&self, priority: Pcp) -> Instant {
        self.shaper.ready_at().max(self.pause.paused_until(priority))
    }

    /// Books the wire for a frame of `len` bytes starting now.
    pub fn sent(&mut self, now: Instant, len: usize) {
        self.shaper.send(now, len);
    }

    pub fn paused_time(&self, now: Instant, priority: Pcp) -> Duration {
        self.pause.paused_time(now, priority)
    }

    /// PFC and PAUSE frames received.
    pub fn control_frames_rx(&self) -> (u64, u64) {
        (self.pfc_rx, self.pause_rx)
    }
}
