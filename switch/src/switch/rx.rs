//! The receive path: parsing, classification, learning, the egress decision and the
//! admission checks of a received frame; MAC control frames go on to `pause`.

use super::state::RxMemo;
use super::{RxVerdict, Switch};
use crate::buffer::Descriptor;
use crate::config::EgressFull;
use crate::counters::DropReason;
use crate::fdb;
use crate::policy::{PolicyActions, PolicyEngine};
use crate::qcn::Placement;
use crate::qcn::culprit::Culprit;
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{ErrorKind, FecnSubtype, FlowKey, FrameView, Layer, MIN_FRAME_LEN, Pcp};

impl Switch {
    /// Processes a frame received on `port` at `now`.
    pub fn handle_rx(&mut self, now: Instant, port: usize, handle: u64, frame: &[u8]) -> RxVerdict {
        if let Some(memo) = self.recall(now, port, frame) {
            if let Some(dropped) = self.count_rx(port, memo.priority, frame.len()) {
                return dropped;
            }
            return self.admit(now, port, handle, frame, memo.priority, memo.route, None);
        }
        let view = match FrameView::parse(frame) {
            Ok(view) => view,
            Err(error) => return self.malformed(port, error),
        };
        if view.is_mac_control() {
            return match frame.len() {
                len if len < MIN_FRAME_LEN => self.handle_short_mac_control(now, port, frame),
                _ => self.handle_mac_control(now, port, &view),
            };
        }
        let priority = self.classify(port, &view);
        if let Some(dropped) = self.count_rx(port, priority, frame.len()) {
            return dropped;
        }
        if view.l2.dst.is_link_local() {
            return self.drop_rx(port, priority.index(), DropReason::LinkLocal);
        }
        if self.learning & (1 << port) != 0 {
            self.fdb.learn(now, view.l2.src, port);
        }
        let route = view.l2.dst.is_unicast().then(|| self.fdb.route(now, view.l2.dst)).flatten();
        self.remember(now, port, frame, &view, priority, route);
        self.admit(now, port, handle, frame, priority, route, Some(&view))
    }

    /// The port's memo of its last data frame, if it holds for `frame` at `now`.
    fn recall(&self, now: Instant, port: usize, frame: &[u8]) -> Option<RxMemo> {
        let memo = self.ports[port].rx_memo?;
        (memo.now == now && memo.header == memo_header(frame)? && memo.fdb == self.fdb.generation()).then_some(memo)
    }

    /// Keeps what was decided for `frame` for the port's next frame, where nothing but its
    /// first 18 bytes went into it (see [`RxMemo`]).
    fn remember(
        &mut self,
        now: Instant,
        port: usize,
        frame: &[u8],
        view: &FrameView<'_>,
        priority: Pcp,
        route: Option<u64>,
    ) {
        let reads_further = self.ecn.is_some() || self.fecn.is_some() || self.int.is_some() || self.qcn.is_some();
        let plain = !reads_further && view.l2.cn_tag.is_none() && route.is_none_or(|ports| ports.count_ones() <= 1);
        self.ports[port].rx_memo = memo_header(frame).filter(|_| plain).map(|header| RxMemo {
            header,
            now,
            fdb: self.fdb.generation(),
            priority,
            route,
        });
    }

    /// Counts a data frame received on `port`; the watchdog drops it if it holds the
    /// frame's ingress queue as stormed under `drop`.
    fn count_rx(&mut self, port: usize, priority: Pcp, len: usize) -> Option<RxVerdict> {
        let p = priority.index();
        let counters = &mut self.counters[port].priority[p];
        counters.rx_frames += 1;
        counters.rx_bytes += len as u64;
        if self.pfcwd.drops(port, p) {
            self.pfcwd.count_rx_drop(port, p);
            return Some(self.drop_rx(port, p, DropReason::Pfcwd));
        }
        None
    }

    /// A data frame of `priority` whose unicast route (FDB entry or default route) is
    /// `route`, on to its egress ports and through admission. `view`: its headers, `None`
    /// for a frame recalled from the port's memo (then no feature reads them, and `route`
    /// names at most one port, so there is no flow to hash). Inlined into both of
    /// `handle_rx`'s paths: a call with its eight arguments cost 30 instructions a frame.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn admit(
        &mut self,
        now: Instant,
        port: usize,
        handle: u64,
        frame: &[u8],
        priority: Pcp,
        route: Option<u64>,
        view: Option<&FrameView<'_>>,
    ) -> RxVerdict {
        let p = priority.index();
        let len = frame.len() as u32;
        let others = self.all_ports() & !(1u64 << port);
        let live = !self.links_down;
        let flow_hash = || view.map_or(0, |view| view.flow_hash(self.flow_seed));
        let egress = match route {
            // An ECMP group picks among its live members: flows of a dead one rehash.
            Some(ports) => match (ports & others, ports & others & live) {
                (candidates, 0) if candidates != 0 => {
                    // Routed to a dead member and dropped there, as if queued to it.
                    let dead = fdb::pick(candidates, flow_hash());
                    self.counters[port].priority[p].forwarded += 1;
                    self.drop_assigned(dead, p, DropReason::LinkDown);
                    return RxVerdict::Consumed;
                }
                (_, candidates) if candidates.count_ones() > 1 => 1u64 << fdb::pick(candidates, flow_hash()),
                (_, candidates) => candidates,
            },
            None if others & self.flooding != 0 && others & self.flooding & live == 0 => {
                return self.drop_rx(port, p, DropReason::LinkDown);
            }
            None => others & self.flooding & live,
        };
        if egress == 0 {
            return self.drop_rx(port, p, DropReason::Filtered);
        }
        let lossless = self.lossless & priority.mask() != 0;
        if !self.buffers.ingress_admits(port, p, len, lossless) {
            let reason = if lossless { DropReason::IngressMax } else { DropReason::NoBuffer };
            return self.drop_rx(port, p, reason);
        }
        let lossy_held = self.arena.in_use() as u32 - self.lossless_held;
        if !self.buffers.is_unbounded(p) && !self.buffers.pool_has_room()
            || !lossless && lossy_held >= self.lossy_frame_limit
        {
            return self.drop_rx(port, p, DropReason::NoBuffer);
        }
        // Whether the frame's queue has room, asked once here where the answer cannot change
        // before `forward` (which then need not ask again): what happens in between charges
        // the frame's ingress, or in mode "pools" an ingress pool, and an egress queue's
        // room counts neither (its profile names an egress pool). A frame it would refuse is
        // dropped now, counted the same, without holding it.
        let fits_on_arrival = if !lossless && self.arena.has_room() && self.passes_straight(priority, egress) {
            if !self.buffers.fits(egress.trailing_zeros() as usize, p, len) {
                self.counters[port].priority[p].forwarded += 1;
                self.drop_assigned(egress.trailing_zeros() as usize, p, DropReason::EgressFull);
                return RxVerdict::Consumed;
            }
            egress
        } else {
            0
        };
        let probe = self.fecn.as_ref().filter(|fecn| fecn.monitors(priority)).and(view).and_then(|view| {
            view.fecn_probe().ok().filter(|probe| probe.subtype == FecnSubtype::Probe).map(|probe| probe.rate_kbps)
        });
        let ecn_capable = self.ecn.as_ref().is_some_and(|ecn| ecn.monitors(priority))
            && matches!(view.and_then(|view| view.ecn()), Some(1 | 2));
        let int = match (&self.int, view) {
            (Some(int), Some(view)) => int.plan(view, priority, egress, &mut self.counters),
            _ => crate::int::IntPlan::None,
        };
        let descriptor = Descriptor {
            int,
            handle,
            len,
            ecn_capable,
            ce: false,
            ingress: port as u16,
            priority: p as u8,
            lossless,
            copies: 0,
            egress,
            // Only OFC reads it, and only on its (lossless) priorities.
            flow: if lossless { FlowKey::of_header(frame) } else { FlowKey::default() },
            probe,
        };
        let Some(index) = self.arena.alloc(&descriptor) else {
            return self.drop_rx(port, p, DropReason::NoBuffer);
        };
        self.lossless_held += u32::from(lossless);
        if let Some((qcn, view)) = self.qcn.as_mut().filter(|qcn| qcn.monitors(priority)).zip(view) {
            qcn.remember(index, Culprit::of(view, priority));
        }
        let level = self.buffers.add_ingress(port, p, len);
        let bytes = level.bytes;
        if lossless {
            // Every policy pauses lossless priorities only, and only looks at theirs.
            self.policy.on_ingress(port, priority, level, &mut PolicyActions::new(now, &mut self.xoff));
        }
        if lossless && matches!(self.policy, PolicyEngine::Ofc(_)) {
            self.ofc_arrival(now, port, priority, descriptor.flow, bytes, egress);
        }
        // Nothing waits and the pipeline is unpaced: the frame passes it at once, as
        // `run_pipeline` would take it, without the trip through its FIFO. (An input CP counts
        // the frames in the FIFOs, so with one the frame goes the long way.)
        let direct = self.pipeline.waiting == 0
            && self.pipeline.interval.is_none()
            && !self.qcn_watches(Placement::Input, priority);
        if direct && self.pass_pipeline(now, port, index, &descriptor, fits_on_arrival) {
            return RxVerdict::Accepted;
        }
        self.pipeline.fifos[port].push_back(index);
        self.pipeline.waiting += 1;
        if !direct {
            self.qcn_arrival(now, Placement::Input, (port, priority), len, bytes, index);
            self.run_pipeline(now);
        }
        RxVerdict::Accepted
    }

    /// Whether a lossy frame for the single port in `egress` goes straight through the
    /// pipeline onto that queue, to be queued or dropped there for want of room. Such a frame
    /// that does not fit is dropped on arrival: where the egress is the bottleneck, the
    /// frames it cannot take cost the least (no descriptor, no ingress accounting, no trip
    /// through the pipeline, the datapath's buffer back at once) and the transmit side keeps
    /// the CPU. Only where nothing about the frame could differ from the long way: the
    /// pipeline empty and unpaced, the queue in drop mode, and no QCN congestion point
    /// sampling arrivals.
    fn passes_straight(&self, priority: Pcp, egress: u64) -> bool {
        let out = egress.trailing_zeros() as usize;
        egress.count_ones() == 1
            && self.pipeline.waiting == 0
            && self.pipeline.interval.is_none()
            && self.pipeline.egress_full == EgressFull::Drop
            && !self.qcn.as_ref().is_some_and(|qcn| qcn.monitors(priority))
            && !self.pfcwd.drops(out, priority.index())
    }

    fn handle_mac_control(&mut self, now: Instant, port: usize, view: &FrameView<'_>) -> RxVerdict {
        match view.mac_control() {
            Ok(repr) => {
                let ofc = match (&self.policy, view.ofc()) {
                    (PolicyEngine::Ofc(_), Ok(ofc)) => ofc,
                    (PolicyEngine::Ofc(_), Err(error)) => {
                        // The PFC part stands on its own: obey it, count the bad TLV.
                        self.malformed(port, error);
                        None
                    }
                    _ => None,
                };
                self.obey(now, port, &repr, ofc);
                RxVerdict::Consumed
            }
            Err(error) => self.malformed(port, error),
        }
    }

    /// A PAUSE or PFC frame below Ethernet's minimum, as a sender on a veth makes them (no
    /// MAC pads them there): read zero-padded to 60 bytes, as its NIC would have sent it, or
    /// dropped as a runt (`[pfc] short_frames`). Counted either way.
    fn handle_short_mac_control(&mut self, now: Instant, port: usize, frame: &[u8]) -> RxVerdict {
        self.counters[port].short_mac_control += 1;
        if !self.pad_short_frames {
            return self.malformed(port, pfcswitch_wire::Error::new(Layer::MacControl, ErrorKind::BadLength));
        }
        let mut padded = [0u8; MIN_FRAME_LEN];
        padded[..frame.len()].copy_from_slice(frame);
        match FrameView::parse(&padded) {
            Ok(view) => self.handle_mac_control(now, port, &view),
            Err(error) => self.malformed(port, error),
        }
    }

    pub(super) fn malformed(&mut self, port: usize, error: pfcswitch_wire::Error) -> RxVerdict {
        self.counters[port].malformed[error.index()] += 1;
        RxVerdict::Consumed
    }

    /// Drops a frame received on `port` before admission.
    pub(super) fn drop_rx(&mut self, port: usize, priority: usize, reason: DropReason) -> RxVerdict {
        let counters = &mut self.counters[port].priority[priority];
        counters.drops[reason as usize] += 1;
        counters.rx_dropped += 1;
        RxVerdict::Consumed
    }

    /// Drops a copy sent to egress (port, priority) on its way in.
    pub(super) fn drop_assigned(&mut self, port: usize, priority: usize, reason: DropReason) {
        let counters = &mut self.counters[port].priority[priority];
        counters.assigned += 1;
        counters.egress_dropped += 1;
        counters.drops[reason as usize] += 1;
    }

    pub(super) fn all_ports(&self) -> u64 {
        u64::MAX >> (64 - self.ports.len())
    }

    /// PCP if tagged; else the DSCP map (trust dscp, IP) or the port's default.
    pub(super) fn classify(&self, port: usize, view: &FrameView<'_>) -> Pcp {
        let config = &self.ports[port];
        view.pcp()
            .or_else(|| config.dscp_map.zip(view.dscp()).map(|(map, dscp)| map[usize::from(dscp)]))
            .unwrap_or(config.default_priority)
    }
}

/// A frame's first 18 bytes as the key of [`RxMemo`], if it has them.
fn memo_header(frame: &[u8]) -> Option<(u128, u16)> {
    let (front, back) = (frame.get(..16)?, frame.get(16..18)?);
    Some((u128::from_ne_bytes(front.try_into().ok()?), u16::from_ne_bytes(back.try_into().ok()?)))
}
