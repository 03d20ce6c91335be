//! Congestion-control state a transport keeps beside its windows: a connection's QCN reaction
//! point with the rate limiter it sets, and the FECN probes of other hosts' flows that this
//! host reflects back to their sources. DCTCP's window and a connection's FECN source are
//! the crate's `Dctcp` and `FecnSource`, held by the sender as they are.

use super::config::{QcnReaction, TransportConfig};
use crate::{RateLimiter, ReactionPoint};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::{EthernetAddress, FecnProbeRepr, L2Repr, Pcp, VlanRepr, build_fecn_probe_frame, ethertype};

/// A connection's QCN reaction point and the rate limiter it sets.
#[derive(Clone, Debug)]
pub(super) struct QcnLimiter {
    pub(super) rp: ReactionPoint,
    pub(super) limiter: RateLimiter,
}

impl QcnLimiter {
    pub(super) fn new(qcn: QcnReaction, config: &TransportConfig) -> QcnLimiter {
        QcnLimiter {
            rp: ReactionPoint::new(qcn.params, qcn.line_rate),
            limiter: RateLimiter::new(qcn.line_rate, config.epoch, config.bin),
        }
    }

    /// Sets the limit to the reaction point's rate.
    pub(super) fn follow_rate(&mut self, now: Instant) {
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
