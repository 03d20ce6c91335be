//! Congestion-control state a transport keeps beside its windows: a connection's rate-based
//! reaction (QCN's reaction point or DCQCN's) with the rate limiter it sets, and the FECN
//! probes of other hosts' flows that this host reflects back to their sources. DCTCP's window and a connection's FECN source are
//! the crate's `Dctcp` and `FecnSource`, held by the sender as they are.

use super::config::TransportConfig;
use crate::{Dcqcn, HopRecord, Hpcc, RateLimiter, ReactionPoint, RpPhase};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, FecnProbeRepr, L2Repr, Pcp, VlanRepr, build_fecn_probe_frame, ethertype};

/// The control that sets a connection's rate: QCN's reaction point (CNMs), DCQCN's (CNPs)
/// or HPCC's law (the INT records its acknowledgements echo).
#[derive(Clone, Debug)]
pub(super) enum Reaction {
    Qcn(ReactionPoint),
    Dcqcn(Dcqcn),
    Hpcc(Hpcc),
}

impl Reaction {
    fn rate(&self) -> BitRate {
        match self {
            Reaction::Qcn(rp) => rp.rate(),
            Reaction::Dcqcn(rp) => rp.rate(),
            Reaction::Hpcc(law) => law.rate(),
        }
    }

    /// Whether the rate limiter holds the flow back: not while a reaction point is released
    /// at line rate; HPCC's NIC always paces a queue pair at its rate.
    fn limits(&self) -> bool {
        match self {
            Reaction::Qcn(rp) => rp.phase() != RpPhase::Idle,
            Reaction::Dcqcn(rp) => rp.phase() != RpPhase::Idle,
            Reaction::Hpcc(_) => true,
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<pfcswitch_link::time::Instant> {
        match self {
            Reaction::Qcn(rp) => rp.poll_timeout(),
            Reaction::Dcqcn(rp) => rp.poll_timeout(),
            Reaction::Hpcc(_) => None,
        }
    }

    /// HPCC's window in bytes, if this is HPCC.
    pub(super) fn window_bytes(&self) -> Option<u64> {
        match self {
            Reaction::Hpcc(law) => Some(law.window_bytes()),
            _ => None,
        }
    }

    /// Whether it has nothing to do before its connection's first message or after the last
    /// is acknowledged ([`Dcqcn::lives_with_its_messages`]).
    pub(super) fn lives_with_its_messages(&self) -> bool {
        matches!(self, Reaction::Dcqcn(rp) if rp.lives_with_its_messages())
    }
}

/// A connection's reaction point and the rate limiter it sets.
#[derive(Clone, Debug)]
pub(super) struct ReactionLimiter {
    pub(super) rp: Reaction,
    pub(super) limiter: RateLimiter,
}

impl ReactionLimiter {
    /// QCN's reaction point if the config has one, else DCQCN's if it has that, else HPCC's.
    pub(super) fn new(config: &TransportConfig) -> Option<ReactionLimiter> {
        let (rp, line_rate) = match (config.qcn, config.dcqcn, config.hpcc) {
            (Some(qcn), ..) => (Reaction::Qcn(ReactionPoint::new(qcn.params, qcn.line_rate)), qcn.line_rate),
            (None, Some(params), _) => (Reaction::Dcqcn(Dcqcn::new(params, config.line_rate)), config.line_rate),
            (None, None, Some(hpcc)) => {
                (Reaction::Hpcc(Hpcc::new(hpcc.params, config.line_rate, hpcc.base_rtt)), config.line_rate)
            }
            (None, None, None) => return None,
        };
        Some(ReactionLimiter { rp, limiter: RateLimiter::new(line_rate, config.epoch, config.bin) })
    }

    /// Whether the limiter holds the flow back (not while released at line rate).
    pub(super) fn limits(&self) -> bool {
        self.rp.limits()
    }

    /// The flow sent a frame of `len` bytes.
    pub(super) fn sent(&mut self, now: Instant, len: usize) {
        if self.limits() {
            self.limiter.send(now, len);
        }
        match &mut self.rp {
            Reaction::Qcn(rp) => rp.on_sent(len as u64),
            Reaction::Dcqcn(rp) => rp.on_sent(len as u64),
            Reaction::Hpcc(_) => {}
        }
        self.follow_rate(now);
    }

    /// Fires the reaction point's timers.
    pub(super) fn handle_timeout(&mut self, now: Instant) {
        match &mut self.rp {
            Reaction::Qcn(rp) => rp.handle_timeout(now),
            Reaction::Dcqcn(rp) => rp.handle_timeout(now),
            Reaction::Hpcc(_) => return,
        }
        self.follow_rate(now);
    }

    /// An acknowledgement of segments up to `acked` (`next`: the next to send) echoing
    /// `hops`' records: HPCC's law reacts.
    pub(super) fn acknowledged(&mut self, now: Instant, acked: u32, next: u32, hops: &[HopRecord]) {
        if let Reaction::Hpcc(law) = &mut self.rp {
            law.on_ack(u64::from(acked), u64::from(next), hops);
            self.follow_rate(now);
        }
    }

    /// A congestion notification for the flow (a CNM's feedback, or a CNP): whether this
    /// reaction point takes it.
    pub(super) fn notified(&mut self, now: Instant, cnm_feedback: Option<u8>) -> bool {
        match (&mut self.rp, cnm_feedback) {
            (Reaction::Qcn(rp), Some(quantized)) => rp.on_cnm(now, quantized),
            (Reaction::Dcqcn(rp), None) => rp.on_cnp(now),
            _ => return false,
        }
        self.limiter.trace_mut().cnm_received(now);
        self.follow_rate(now);
        true
    }

    /// Sets the limit to the reaction point's rate.
    fn follow_rate(&mut self, now: Instant) {
        self.limiter.set_rate(now, self.rp.rate());
    }
}

/// A probe this host reflects: back to its source, on its VLAN and priority.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reflection {
    pub(super) dst: EthernetAddress,
    pub(super) vlan: Option<VlanRepr>,
    pub(super) probe: FecnProbeRepr,
}

impl Reflection {
    pub(super) fn priority(&self) -> Pcp {
        self.vlan.map_or(Pcp::default(), |v| v.pcp)
    }
}

/// Reflections a host queues at most: probes come once per flow and interval, so more
/// waiting means the host cannot send, and older ones carry stale rates anyway.
pub(super) const MAX_REFLECTIONS: usize = 64;

/// Writes a FECN probe (a connection's own, or a reflection) from `src` to `dst` into
/// `buffer` and returns its length.
pub(super) fn probe_frame(
    buffer: &mut [u8],
    src: EthernetAddress,
    dst: EthernetAddress,
    vlan: Option<VlanRepr>,
    probe: &FecnProbeRepr,
) -> usize {
    let l2 = L2Repr { dst, src, vlan, cn_tag: None, ethertype: ethertype::LOCAL_EXPERIMENTAL_1 };
    build_fecn_probe_frame(buffer, &l2, probe)
}
