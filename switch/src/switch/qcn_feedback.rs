//! The switch's side of QCN (the congestion points are `crate::qcn`): feeding arrivals to
//! the CP of a queue and sending its feedback towards the culprit the sampling picks.

use super::Switch;
use crate::buffer::{Arena, Buffers};
use crate::qcn::{Placement, cpid};
use pfcswitch_link::time::Instant;
use pfcswitch_wire::Pcp;
use std::collections::VecDeque;

impl Switch {
    /// QCN: a frame of `len` bytes (arena `index`) entered the queue the CP of (port,
    /// priority) at `placement` watches, which now holds `q` bytes. A congested sample
    /// queues a CNM to the culprit the sampling picks.
    #[inline(always)]
    pub(super) fn qcn_arrival(
        &mut self,
        now: Instant,
        placement: Placement,
        at: (usize, Pcp),
        len: u32,
        q: u64,
        index: u32,
    ) {
        // Inline, the check costs a switch without CPs nothing: twice a frame.
        if self.qcn_watches(placement, at.1) {
            self.qcn_sample(now, placement, at, len, q, index);
        }
    }

    /// Whether a CP at `placement` watches `priority`.
    #[inline(always)]
    pub(super) fn qcn_watches(&self, placement: Placement, priority: Pcp) -> bool {
        self.qcn.as_ref().is_some_and(|qcn| qcn.placement() == placement && qcn.monitors(priority))
    }

    fn qcn_sample(&mut self, now: Instant, placement: Placement, at: (usize, Pcp), len: u32, q: u64, index: u32) {
        let Some(qcn) = &mut self.qcn else { return };
        let (port, priority) = at;
        let Some(feedback) = qcn.arrival(port, priority, len, q) else { return };
        let (buffers, arena, fifos, ports) = (&self.buffers, &self.arena, &self.pipeline.fifos, self.ports.len());
        let held = || monitored(buffers, arena, fifos, placement, ports, at);
        let Some(culprit) = qcn.pick(port, priority, index, held) else { return };
        let out = match placement {
            Placement::Input => port,
            Placement::Output => {
                // Towards the source; over the culprit's own ingress where an ECMP group leads there.
                match self.fdb.route(now, qcn.culprit(culprit).src) {
                    Some(ports) if ports.count_ones() == 1 => ports.trailing_zeros() as usize,
                    _ => usize::from(arena.get(culprit).ingress),
                }
            }
        };
        let mac = self.ports[port].mac;
        qcn.notify(at, out, mac, cpid(mac, priority, placement), feedback, culprit);
    }
}

/// The frames (arena index, length) the CP of (port, priority) at `placement` watches: its
/// egress queue at the output; at the input, every frame received there on the priority and
/// not yet sent, wherever it waits.
fn monitored<'a>(
    buffers: &'a Buffers,
    arena: &'a Arena,
    fifos: &'a [VecDeque<u32>],
    placement: Placement,
    ports: usize,
    (port, priority): (usize, Pcp),
) -> impl Iterator<Item = (u32, u32)> + 'a {
    let p = priority.index();
    let output = (placement == Placement::Output).then(|| buffers.nested(port, p).frames()).into_iter().flatten();
    let queued = (0..ports).flat_map(move |o| buffers.nested(o, p).frames());
    let input = (placement == Placement::Input)
        .then(|| queued.chain(fifos[port].iter().copied()))
        .into_iter()
        .flatten()
        .filter(move |&i| {
            let frame = arena.get(i);
            usize::from(frame.ingress) == port && usize::from(frame.priority) == p
        });
    output.chain(input).map(move |i| (i, arena.get(i).len))
}
