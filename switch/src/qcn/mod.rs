//! QCN, IEEE 802.1Qau congestion notification, on the switch side: congestion points (CPs)
//! that sample a queue and send CNMs to the flows that fill it.
//!
//! QCN runs beside the pause policy (`[qcn]`, not a `policy.kind`): every configuration of
//! the QCN-at-inputs paper keeps PAUSE for losslessness. One CP watches each (port, priority)
//! of `qcn.priorities`:
//!
//! - `cp = "output"` (802.1Qau): Q is the egress queue; the CNM goes out of the port the
//!   switch forwards the culprit's source address to (normally the one the culprit came in
//!   on), as a CNM the output made and the switch forwarded would.
//! - `cp = "input"` (the paper, §III): Q is the input's share of the buffer, the bytes
//!   received on that (port, priority) and not yet sent (the ingress accounting). Its frames
//!   sit in several egress queues and can leave in any order (Fig. 3(a)). The CNM goes
//!   straight out of that input port.
//!
//! CNMs wait in a short queue per port and leave before data, as PFC frames do; a CNM that
//! finds that queue full is dropped and counted (a CP's next sample sends another).

pub mod cp;
pub mod culprit;

use crate::config_error::ConfigError;
use cp::{CongestionPoint, CpParams, Feedback};
use culprit::{Culprit, most_bytes, random_byte};
use pfcswitch_link::rng::Rng;
use pfcswitch_link::units::ByteSize;
use pfcswitch_wire::{
    CnTagRepr, CnmRepr, EthernetAddress, L2Repr, MIN_FRAME_LEN, Pcp, VlanRepr, build_cnm_frame, ethertype,
};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// Where the CPs sit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Placement {
    #[default]
    Output,
    Input,
}

impl Placement {
    pub const ALL: [Placement; 2] = [Placement::Output, Placement::Input];

    /// As in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Placement::Output => "output",
            Placement::Input => "input",
        }
    }
}

/// How a CP picks the flow to notify (see [`culprit`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sampling {
    #[default]
    Arrival,
    OccupancyDeterministic,
    OccupancyRandom,
}

impl Sampling {
    pub const ALL: [Sampling; 3] = [Sampling::Arrival, Sampling::OccupancyDeterministic, Sampling::OccupancyRandom];

    /// As in the config file.
    pub fn name(self) -> &'static str {
        match self {
            Sampling::Arrival => "arrival",
            Sampling::OccupancyDeterministic => "occupancy-deterministic",
            Sampling::OccupancyRandom => "occupancy-random",
        }
    }
}

/// `[qcn]`. Defaults: 802.1Qau's MIB (Qeq 26000 B, w = 2, sample base 150000 B, CNMs on
/// priority 6).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct QcnConfig {
    /// CNM-enabled priorities; empty: QCN off.
    pub priorities: Vec<u8>,
    pub cp: Placement,
    pub sampling: Sampling,
    /// The set point Qeq.
    pub qeq: ByteSize,
    /// The weight of Qδ in Fb.
    pub w: u32,
    /// Bytes between samples while Fb is near 0.
    pub sample_base: ByteSize,
    /// The priority CNMs are sent on.
    pub cnm_priority: u8,
    /// Seeds the sampling jitter and random-occupancy picks, so runs reproduce.
    pub seed: u64,
}

impl Default for QcnConfig {
    fn default() -> Self {
        QcnConfig {
            priorities: Vec::new(),
            cp: Placement::Output,
            sampling: Sampling::Arrival,
            qeq: ByteSize(26_000),
            w: 2,
            sample_base: ByteSize(150_000),
            cnm_priority: 6,
            seed: 1,
        }
    }
}

impl QcnConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        let error = |key: &str, reason: String| Err(ConfigError { key: format!("qcn.{key}"), reason });
        if let Some(p) = self.priorities.iter().find(|&&p| Pcp::new(p).is_none()) {
            return error("priorities", format!("{p} is not a priority 0-7"));
        }
        if Pcp::new(self.cnm_priority).is_none() {
            return error("cnm_priority", format!("{} is not a priority 0-7", self.cnm_priority));
        }
        if self.qeq.bytes() < cp::CNM_QUEUE_UNIT {
            return error("qeq", format!("{} is below the CNM's unit of {} B", self.qeq, cp::CNM_QUEUE_UNIT));
        }
        if !(1..=64).contains(&self.w) {
            return error("w", format!("{} is outside 1..=64", self.w));
        }
        if self.sample_base.bytes() < 1500 {
            return error("sample_base", format!("{} is below one full-size frame (1500 B)", self.sample_base));
        }
        Ok(())
    }

    /// The monitored priorities as a bit mask.
    pub fn mask(&self) -> u8 {
        self.priorities.iter().filter_map(|&p| Pcp::new(p)).fold(0, |m, p| m | p.mask())
    }
}

/// A CNM to send, as values; [`CnmFrame::emit`] writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CnmFrame {
    /// The CP's port MAC.
    pub src: EthernetAddress,
    pub priority: Pcp,
    pub cpid: u64,
    pub feedback: Feedback,
    pub culprit: Culprit,
}

impl CnmFrame {
    fn l2(&self) -> L2Repr {
        L2Repr {
            dst: self.culprit.src,
            src: self.src,
            vlan: Some(VlanRepr { pcp: self.priority, dei: false, vid: self.culprit.vid }),
            cn_tag: self.culprit.rpid.map(|flow_id| CnTagRepr { flow_id }),
            ethertype: ethertype::CNM,
        }
    }

    fn repr(&self) -> CnmRepr<'_> {
        CnmRepr {
            quantized_feedback: self.feedback.quantized,
            cpid: self.cpid,
            q_offset: self.feedback.q_offset,
            q_delta: self.feedback.q_delta,
            encapsulated_priority: self.culprit.priority,
            encapsulated_dst: self.culprit.dst,
            msdu_len: self.culprit.msdu_len,
            msdu: self.culprit.msdu_head(),
        }
    }

    /// Bytes on the wire (FCS excluded).
    pub fn wire_len(&self) -> usize {
        (self.l2().header_len() + self.repr().buffer_len()).max(MIN_FRAME_LEN)
    }

    /// Writes the CNM into `buffer` (at least [`CnmFrame::wire_len`] bytes); returns its length.
    pub fn emit(&self, buffer: &mut [u8]) -> usize {
        build_cnm_frame(buffer, &self.l2(), &self.repr())
    }
}

/// The 802.1Qau congestion point identifier: the port's MAC, then the priority, then 0 for a
/// CP at the output or 1 at the input, so that each CP of a switch has its own.
pub fn cpid(port_mac: EthernetAddress, priority: Pcp, placement: Placement) -> u64 {
    let [a, b, c, d, e, f] = port_mac.0;
    u64::from_be_bytes([a, b, c, d, e, f, priority.index() as u8, u8::from(placement == Placement::Input)])
}

/// One CP's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpCounters {
    pub cnms_sent: u64,
    /// Asked for while the port's CNM queue was full.
    pub cnms_dropped: u64,
    /// Samples that found the queue congested but no frame to blame (occupancy sampling of
    /// a buffer that just emptied).
    pub no_culprit: u64,
    /// Deterministic picks over more distinct flows than [`culprit::MAX_TRACKED_FLOWS`].
    pub flows_untracked: u64,
    /// QntzFb of the CNMs sent, in eight bins of eight values (0–7, …, 56–63).
    pub quantized_feedback: [u64; 8],
}

/// CNMs a port holds before it drops new ones.
const PENDING_CNMS: usize = 16;

/// The CPs of a switch, the culprit records of the frames it holds, and the CNMs to send.
///
/// A record is written when a frame of a monitored priority arrives and read only for
/// frames of monitored priorities, so a slot's record is always its current frame's. A reload
/// that changes `[qcn]` starts from blank records: the frames held then have none (a zero
/// source) and are never blamed.
#[derive(Debug)]
pub struct Qcn {
    config: QcnConfig,
    params: CpParams,
    mask: u8,
    cnm_priority: Pcp,
    rng: Rng,
    /// Per (port, priority): `port * 8 + priority`.
    cps: Vec<CongestionPoint>,
    counters: Vec<CpCounters>,
    /// Per arena index, for frames of monitored priorities.
    culprits: Vec<Culprit>,
    pending: Vec<VecDeque<CnmFrame>>,
}

impl Qcn {
    /// `None` when `config` monitors no priority.
    pub fn new(config: &QcnConfig, ports: usize) -> Option<Qcn> {
        let mask = config.mask();
        if mask == 0 {
            return None;
        }
        let params =
            CpParams { set_point: config.qeq.bytes(), weight: config.w, sample_base: config.sample_base.bytes() };
        let mut rng = Rng::new(config.seed);
        let cps = (0..ports * 8).map(|_| CongestionPoint::new(&params, &mut rng)).collect();
        Some(Qcn {
            config: config.clone(),
            params,
            mask,
            cnm_priority: Pcp::new(config.cnm_priority).expect("validated"),
            rng,
            cps,
            counters: vec![CpCounters::default(); ports * 8],
            culprits: Vec::new(),
            pending: (0..ports).map(|_| VecDeque::with_capacity(PENDING_CNMS)).collect(),
        })
    }

    pub fn config(&self) -> &QcnConfig {
        &self.config
    }

    pub fn placement(&self) -> Placement {
        self.config.cp
    }

    pub fn monitors(&self, priority: Pcp) -> bool {
        self.mask & priority.mask() != 0
    }

    /// Room for the records of `frames` descriptors now (the datapath's choice), rather than
    /// as frames arrive.
    pub fn preallocate(&mut self, frames: u32) {
        self.culprits.resize(self.culprits.len().max(frames as usize), Culprit::default());
    }

    /// Keeps what a CNM would say about the frame now held at `index`.
    pub fn remember(&mut self, index: u32, culprit: Culprit) {
        let index = index as usize;
        if index >= self.culprits.len() {
            self.culprits.resize(index + 1, Culprit::default());
        }
        self.culprits[index] = culprit;
    }

    /// The record of the frame at `index`; blank if none was kept (see [`Qcn`]).
    pub fn culprit(&self, index: u32) -> Culprit {
        self.culprits.get(index as usize).copied().unwrap_or_default()
    }

    /// A frame of `len` bytes entered the queue CP (port, priority) watches, which now holds
    /// `q` bytes: the feedback if the sample asks for a CNM.
    pub fn arrival(&mut self, port: usize, priority: Pcp, len: u32, q: u64) -> Option<Feedback> {
        let at = port * 8 + priority.index();
        self.cps[at].arrival(len, q, &self.params, &mut self.rng)
    }

    /// The culprit frame under the configured sampling: `arrived` for arrival sampling, else
    /// one of the frames `held` (arena index, length) yields.
    pub fn pick<I>(&mut self, port: usize, priority: Pcp, arrived: u32, held: impl Fn() -> I) -> Option<u32>
    where
        I: Iterator<Item = (u32, u32)>,
    {
        let at = port * 8 + priority.index();
        let pick = match self.config.sampling {
            Sampling::Arrival => Some(arrived),
            Sampling::OccupancyDeterministic => {
                let culprits = &self.culprits;
                let (pick, overflow) = most_bytes(held().map(|(index, len)| {
                    (index, len, culprits.get(index as usize).copied().unwrap_or_default().flow())
                }));
                self.counters[at].flows_untracked += u64::from(overflow);
                pick
            }
            Sampling::OccupancyRandom => random_byte(held, &mut self.rng),
        };
        self.counters[at].no_culprit += u64::from(pick.is_none());
        pick
    }

    /// Queues the CNM CP (port, priority) sends about `culprit` out of `out`, from `src`.
    pub fn notify(
        &mut self,
        (port, priority): (usize, Pcp),
        out: usize,
        src: EthernetAddress,
        cpid: u64,
        feedback: Feedback,
        culprit: u32,
    ) {
        let culprit = self.culprit(culprit);
        let counters = &mut self.counters[port * 8 + priority.index()];
        if culprit.src == EthernetAddress::default() {
            // Held since before the last change of `[qcn]`: nothing known to answer.
            counters.no_culprit += 1;
            return;
        }
        let queue = &mut self.pending[out];
        if queue.len() == PENDING_CNMS {
            counters.cnms_dropped += 1;
            return;
        }
        counters.cnms_sent += 1;
        counters.quantized_feedback[usize::from(feedback.quantized / 8)] += 1;
        queue.push_back(CnmFrame { src, priority: self.cnm_priority, cpid, feedback, culprit });
    }

    /// The next CNM to send on `port`.
    pub fn has_cnm(&self, port: usize) -> bool {
        !self.pending[port].is_empty()
    }

    pub fn poll_cnm(&mut self, port: usize) -> Option<CnmFrame> {
        self.pending[port].pop_front()
    }

    pub fn congestion_point(&self, port: usize, priority: Pcp) -> &CongestionPoint {
        &self.cps[port * 8 + priority.index()]
    }

    pub fn counters(&self, port: usize, priority: Pcp) -> &CpCounters {
        &self.counters[port * 8 + priority.index()]
    }

    pub fn reset_counters(&mut self) {
        self.counters.fill(CpCounters::default());
    }
}
