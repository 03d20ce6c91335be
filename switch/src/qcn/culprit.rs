//! Which flow a congestion point notifies, and what the CNM says about the frame it answers.
//!
//! - `arrival` (802.1Qau): the frame whose arrival was sampled.
//! - `occupancy-deterministic` (the QCN-at-inputs paper, §IV-B): the flow holding the most
//!   bytes in the monitored buffer.
//! - `occupancy-random` (§IV-B and §V's CulpritArray): the frame holding a byte drawn
//!   uniformly among the bytes the monitored buffer holds, so a flow is picked with
//!   probability q_n / q. Stateless: it reads the frames the switch already holds.
//!
//! Both occupancy rules look at the buffer only when a sample asks for a CNM, so they add
//! nothing to the per-frame path. A flow is the CN-TAG's flow id (RPID) when the frame
//! carries one (802.1Qau's reaction point identifier), else the frame's source MAC.

use pfcswitch_link::rng::Rng;
use pfcswitch_wire::{CNM_MAX_ENCAPSULATED, EthernetAddress, FrameView, Pcp};

/// What a CNM carries about the frame it answers, copied when the frame arrives: the
/// datapath owns the frame's bytes, and they may be gone by the time the CNM is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Culprit {
    pub src: EthernetAddress,
    pub dst: EthernetAddress,
    /// The frame's VLAN; the CNM goes back in it.
    pub vid: u16,
    pub priority: Pcp,
    pub rpid: Option<u16>,
    /// The whole MSDU's length (the payload after the layer-2 headers).
    pub msdu_len: u16,
    /// Its first `head_len` bytes.
    pub head: [u8; CNM_MAX_ENCAPSULATED],
    pub head_len: u8,
}

impl Default for Culprit {
    fn default() -> Culprit {
        Culprit {
            src: EthernetAddress::default(),
            dst: EthernetAddress::default(),
            vid: 0,
            priority: Pcp::default(),
            rpid: None,
            msdu_len: 0,
            head: [0; CNM_MAX_ENCAPSULATED],
            head_len: 0,
        }
    }
}

/// A flow as a congestion point sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CulpritFlow {
    pub src: EthernetAddress,
    pub rpid: Option<u16>,
}

impl Culprit {
    pub fn of(view: &FrameView<'_>, priority: Pcp) -> Culprit {
        let head_len = view.payload.len().min(CNM_MAX_ENCAPSULATED);
        let mut head = [0; CNM_MAX_ENCAPSULATED];
        head[..head_len].copy_from_slice(&view.payload[..head_len]);
        Culprit {
            src: view.l2.src,
            dst: view.l2.dst,
            vid: view.l2.vlan.map_or(0, |v| v.vid),
            priority,
            rpid: view.l2.cn_tag.map(|t| t.flow_id),
            msdu_len: view.payload.len().min(usize::from(u16::MAX)) as u16,
            head,
            head_len: head_len as u8,
        }
    }

    pub fn flow(&self) -> CulpritFlow {
        CulpritFlow { src: self.src, rpid: self.rpid }
    }

    pub fn msdu_head(&self) -> &[u8] {
        &self.head[..usize::from(self.head_len)]
    }
}

/// Flows one deterministic pick can tell apart; a buffer holding more distinct flows is
/// judged on the first this many met (in queue order), and the miss is counted.
pub const MAX_TRACKED_FLOWS: usize = 64;

/// The frame (arena index) of the flow with the most bytes among `held` (index, length,
/// flow), and whether more flows were held than could be told apart. Ties go to the flow
/// met first.
pub fn most_bytes(held: impl Iterator<Item = (u32, u32, CulpritFlow)>) -> (Option<u32>, bool) {
    let mut flows: [(CulpritFlow, u64, u32); MAX_TRACKED_FLOWS] =
        [(CulpritFlow { src: EthernetAddress::default(), rpid: None }, 0, 0); MAX_TRACKED_FLOWS];
    let (mut known, mut overflow) = (0, false);
    for (index, len, flow) in held {
        match flows[..known].iter_mut().find(|(f, _, _)| *f == flow) {
            Some(entry) => entry.1 += u64::from(len),
            None if known < MAX_TRACKED_FLOWS => {
                flows[known] = (flow, u64::from(len), index);
                known += 1;
            }
            None => overflow = true,
        }
    }
    let best = flows[..known].iter().fold(None::<&(CulpritFlow, u64, u32)>, |best, f| match best {
        Some(b) if b.1 >= f.1 => Some(b),
        _ => Some(f),
    });
    (best.map(|f| f.2), overflow)
}

/// The frame holding byte number r of the bytes `held` (index, length), r drawn uniformly in
/// 0..total: a frame is picked in proportion to its length.
pub fn random_byte<I>(held: impl Fn() -> I, rng: &mut Rng) -> Option<u32>
where
    I: Iterator<Item = (u32, u32)>,
{
    let total: u64 = held().map(|(_, len)| u64::from(len)).sum();
    if total == 0 {
        return None;
    }
    let mut r = rng.next_u64() % total;
    for (index, len) in held() {
        if r < u64::from(len) {
            return Some(index);
        }
        r -= u64::from(len);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(n: u8) -> CulpritFlow {
        CulpritFlow { src: EthernetAddress([2, 0, 0, 0, 0, n]), rpid: None }
    }

    /// A buffer as Fig. 3(a) draws it: f6 (host 6) passes through quickly and holds few
    /// bytes, f1 (host 1) backs up.
    fn fig3_buffer() -> Vec<(u32, u32, CulpritFlow)> {
        let mut held = Vec::new();
        for i in 0..20 {
            held.push((i, 1500, flow(1)));
        }
        held.push((20, 1500, flow(6)));
        held.push((21, 1500, flow(6)));
        held
    }

    #[test]
    fn deterministic_occupancy_picks_the_flow_holding_most_bytes() {
        let (pick, overflow) = most_bytes(fig3_buffer().into_iter());
        assert_eq!(pick, Some(0), "a frame of f1");
        assert!(!overflow);
        // Bytes count, not frames: three jumbo frames of f6 outweigh five small ones of f1.
        let held = (0..5).map(|i| (i, 100, flow(1))).chain((5..8).map(|i| (i, 9000, flow(6))));
        assert_eq!(most_bytes(held).0, Some(5));
        assert_eq!(most_bytes(std::iter::empty()).0, None);
    }

    #[test]
    fn a_cn_tag_makes_flows_of_one_host_distinct() {
        let tagged = |rpid| CulpritFlow { src: EthernetAddress([2, 0, 0, 0, 0, 1]), rpid: Some(rpid) };
        let held = [(0, 1500, tagged(1)), (1, 1500, tagged(2)), (2, 1500, tagged(2))];
        assert_eq!(most_bytes(held.into_iter()).0, Some(1));
    }

    #[test]
    fn more_flows_than_tracked_are_reported() {
        let held = (0..=MAX_TRACKED_FLOWS as u32).map(|i| (i, 100 + i, flow(i as u8)));
        let (pick, overflow) = most_bytes(held);
        assert!(overflow);
        assert_eq!(pick, Some(MAX_TRACKED_FLOWS as u32 - 1), "the largest of those tracked");
    }

    #[test]
    fn random_occupancy_picks_flows_in_proportion_to_their_bytes() {
        let held = fig3_buffer();
        let frames = || held.iter().map(|&(i, len, _)| (i, len));
        let mut rng = Rng::new(3);
        let draws = 22_000;
        let f6 = (0..draws).filter(|_| random_byte(frames, &mut rng).unwrap() >= 20).count();
        // f6 holds 2 of 22 frames' bytes: 2000 of 22000 draws expected (σ ≈ 43).
        assert!((1800..2200).contains(&f6), "f6 picked {f6} of {draws} times");
        assert_eq!(random_byte(std::iter::empty, &mut rng), None);
    }
}
