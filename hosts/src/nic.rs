//! The NIC of a host as a lossless fabric sees it: a line rate, and obedience to PFC and
//! 802.3x PAUSE per priority with exact quanta timing, as a RoCE NIC behaves. The traffic
//! endpoints and the simulator's hosts send through it, with `FlowSender`s and a
//! `FlowReceiver` or a `Transport`; it builds no frames itself.
//!
//! An OFC PAUSE is a PFC frame with flows after it: by default the NIC obeys it as the PFC
//! pause of its priority, as a RoCE NIC would. [`HostNic::obey_ofc_per_flow`] makes it an
//! OFC-aware NIC that pauses only the flows named (its own, by destination), for experiments
//! on what such NICs would add.

use pfcswitch_link::pause::PeerPause;
use pfcswitch_link::shaper::Shaper;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, FrameView, MacControlRepr, OfcOp, Pcp};
use std::time::Duration;

/// A host's NIC: its wire's line rate and the pauses its peer sent.
#[derive(Clone, Debug)]
pub struct HostNic {
    shaper: Shaper,
    pause: PeerPause,
    /// Priorities whose PFC pauses this NIC obeys (802.3x PAUSE stops all).
    pfc_enabled: u8,
    pfc_rx: u64,
    pause_rx: u64,
    /// OFC-aware: this host's MAC, and its flows paused per destination.
    per_flow: Option<(EthernetAddress, Vec<FlowPause>)>,
}

/// One of this host's flows an OFC PAUSE named, paused until a RESUME names it or the
/// PAUSE's time runs out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FlowPause {
    priority: Pcp,
    dst: EthernetAddress,
    until: Instant,
}

impl HostNic {
    pub fn new(speed: BitRate, pfc_enabled: u8) -> HostNic {
        HostNic {
            shaper: Shaper::new(speed, Duration::ZERO),
            pause: PeerPause::new(speed),
            pfc_enabled,
            pfc_rx: 0,
            pause_rx: 0,
            per_flow: None,
        }
    }

    /// Obeys OFC PAUSE frames per flow: only this host's (`mac`) flows they name stop.
    pub fn obey_ofc_per_flow(&mut self, mac: EthernetAddress) {
        self.per_flow = Some((mac, Vec::new()));
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
                if let Some((mac, paused)) = &mut self.per_flow {
                    let speed = self.shaper.speed();
                    pfc.enable &= !obey_flows(now, speed, *mac, paused, &view, &pfc);
                }
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

    /// Whether a frame of this host to `dst` may start now (per-flow pauses included).
    pub fn can_send_to(&self, now: Instant, priority: Pcp, dst: EthernetAddress) -> bool {
        self.can_send(now, priority) && self.flow_paused_until(priority, dst).is_none_or(|until| until <= now)
    }

    /// Whether it obeys OFC's per-flow pauses ([`HostNic::obey_ofc_per_flow`]).
    pub fn pauses_flows(&self) -> bool {
        self.per_flow.is_some()
    }

    /// The earliest time a frame of this host to `dst` may start.
    pub fn ready_at_to(&self, priority: Pcp, dst: EthernetAddress) -> Instant {
        let flow = self.flow_paused_until(priority, dst).unwrap_or(Instant::ZERO);
        self.ready_at(priority).max(flow)
    }

    fn flow_paused_until(&self, priority: Pcp, dst: EthernetAddress) -> Option<Instant> {
        let (_, paused) = self.per_flow.as_ref()?;
        paused.iter().find(|f| f.priority == priority && f.dst == dst).map(|f| f.until)
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

    /// Nothing to send at `now`: idle time is no credit (see [`Shaper::rest`]).
    pub fn rest(&mut self, now: Instant) {
        self.shaper.rest(now);
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

/// An OFC-aware NIC's handling of `pfc`: the flows of this host (`mac`) an OFC PAUSE names
/// are paused for its time, a RESUME or a plain PFC resume releases them. Returns the classes
/// handled per flow, which the priority's pause must not apply to (a PAUSE without COARSE).
fn obey_flows(
    now: Instant,
    speed: BitRate,
    mac: EthernetAddress,
    paused: &mut Vec<FlowPause>,
    view: &FrameView<'_>,
    pfc: &pfcswitch_wire::PfcRepr,
) -> u8 {
    let ofc = view.ofc().ok().flatten().filter(|ofc| pfc.is_enabled(ofc.priority));
    let Some(ofc) = ofc.filter(|ofc| !ofc.coarse) else {
        // A plain PFC frame (or COARSE): a resume releases every flow of its classes.
        let resumed = pfc.classes().filter(|&(_, quanta)| quanta == 0).fold(0u8, |mask, (c, _)| mask | c.mask());
        paused.retain(|f| resumed & f.priority.mask() == 0);
        return 0;
    };
    let mine = ofc.flows().filter(|flow| flow.src == mac);
    if ofc.op == OfcOp::Resume {
        for flow in mine {
            paused.retain(|f| !(f.priority == ofc.priority && f.dst == flow.dst));
        }
        // Its PFC part (time 0) ends any pause of the whole priority.
        return 0;
    }
    let until = now + speed.pause_duration(pfc.quanta[ofc.priority.index()]);
    for flow in mine {
        paused.retain(|f| !(f.priority == ofc.priority && f.dst == flow.dst));
        paused.push(FlowPause { priority: ofc.priority, dst: flow.dst, until });
    }
    ofc.priority.mask()
}
