//! Congestion-control state a transport keeps beside its windows: a connection's rate-based
//! reaction (QCN's reaction point, DCQCN's, HPCC's, TIMELY's or HPCC's simulator's DCTCP
//! law) with the rate limiter it sets, Swift's window and its pacing below one segment, and
//! the FECN probes of other hosts' flows that this host reflects back to their sources.
//! DCTCP's window and a connection's FECN source are the crate's `Dctcp` and `FecnSource`,
//! held by the sender as they are.

use super::config::SwiftTransport;
use super::config::TransportConfig;
use crate::{Dcqcn, DctcpModel, DctcpRate, HopRecord, Hpcc, RateLimiter, ReactionPoint, RpPhase, Swift, Timely};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, FecnProbeRepr, L2Repr, Pcp, VlanRepr, build_fecn_probe_frame, ethertype};
use std::time::Duration;

/// The control that sets a connection's rate: QCN's reaction point (CNMs), DCQCN's (CNPs)
/// HPCC's law (the INT records its acknowledgements echo), TIMELY's (their RTT samples) or
/// HPCC's simulator's DCTCP (their ECN echo).
#[derive(Clone, Debug)]
pub(super) enum Reaction {
    Qcn(ReactionPoint),
    Dcqcn(Dcqcn),
    Hpcc(Hpcc),
    Timely(Timely),
    Dctcp(DctcpRate),
}

impl Reaction {
    fn rate(&self) -> BitRate {
        match self {
            Reaction::Qcn(rp) => rp.rate(),
            Reaction::Dcqcn(rp) => rp.rate(),
            Reaction::Hpcc(law) => law.rate(),
            Reaction::Timely(law) => law.rate(),
            Reaction::Dctcp(law) => law.rate(),
        }
    }

    /// Whether the rate limiter holds the flow back: not while a reaction point is released
    /// at line rate; HPCC's simulator's NIC always paces a queue pair at its rate (HPCC,
    /// TIMELY, DCTCP).
    fn limits(&self) -> bool {
        match self {
            Reaction::Qcn(rp) => rp.phase() != RpPhase::Idle,
            Reaction::Dcqcn(rp) => rp.phase() != RpPhase::Idle,
            Reaction::Hpcc(_) | Reaction::Timely(_) | Reaction::Dctcp(_) => true,
        }
    }

    pub(super) fn poll_timeout(&self) -> Option<pfcswitch_link::time::Instant> {
        match self {
            Reaction::Qcn(rp) => rp.poll_timeout(),
            Reaction::Dcqcn(rp) => rp.poll_timeout(),
            Reaction::Hpcc(_) | Reaction::Timely(_) | Reaction::Dctcp(_) => None,
        }
    }

    /// Whether it has nothing to do before its connection's first message or after the last
    /// is acknowledged ([`Dcqcn::lives_with_its_messages`]): HPCC's, TIMELY's and DCTCP's
    /// rate laws move only on acknowledgements (no timer: `poll_timeout` above), so their
    /// connections wait for their start and retire as plain ones do. Live from the run's
    /// start to its end, they were all scanned at every send: with 100 ms of flows on HPCC's
    /// fat-tree (5,186 connections a host) that scan was 37 % of the run.
    pub(super) fn lives_with_its_messages(&self) -> bool {
        match self {
            Reaction::Dcqcn(rp) => rp.lives_with_its_messages(),
            Reaction::Hpcc(_) | Reaction::Timely(_) | Reaction::Dctcp(_) => true,
            Reaction::Qcn(_) => false,
        }
    }
}

/// A connection's reaction point, the rate limiter it sets, and for DCQCN+w, TIMELY+w and
/// HPCC's simulator's DCTCP the window at line rate.
#[derive(Clone, Debug)]
pub(super) struct ReactionLimiter {
    pub(super) rp: Reaction,
    pub(super) limiter: RateLimiter,
    line_rate: BitRate,
    /// Bytes of payload in flight at line rate (line rate × the base RTT), DCQCN+w's and
    /// TIMELY+w's (`TransportConfig::rate_window`).
    bdp: Option<u64>,
}

impl ReactionLimiter {
    /// QCN's reaction point if the config has one, else DCQCN's if it has that, else HPCC's,
    /// else TIMELY's, else HPCC's simulator's DCTCP.
    pub(super) fn new(config: &TransportConfig) -> Option<ReactionLimiter> {
        let line = config.line_rate;
        let dctcp_rate = config.dctcp.filter(|params| params.model == DctcpModel::Hpcc);
        let (rp, line_rate) = match (config.qcn, config.dcqcn, config.hpcc, config.timely, dctcp_rate) {
            (Some(qcn), ..) => (Reaction::Qcn(ReactionPoint::new(qcn.params, qcn.line_rate)), qcn.line_rate),
            (None, Some(params), ..) => (Reaction::Dcqcn(Dcqcn::new(params, line)), line),
            (None, None, Some(hpcc), ..) => (Reaction::Hpcc(Hpcc::new(hpcc.params, line, hpcc.base_rtt)), line),
            (None, None, None, Some(timely), _) => (Reaction::Timely(Timely::new(timely.params, line)), line),
            (None, None, None, None, Some(dctcp)) => (Reaction::Dctcp(DctcpRate::new(dctcp, line)), line),
            (None, None, None, None, None) => return None,
        };
        let windowed = matches!(rp, Reaction::Dcqcn(_) | Reaction::Timely(_) | Reaction::Dctcp(_));
        let bdp = config.rate_window.filter(|_| windowed).map(|base_rtt| {
            let bits = u128::from(line_rate.bps()) * base_rtt.as_nanos() / 1_000_000_000;
            u64::try_from(bits / 8).unwrap_or(u64::MAX)
        });
        let limiter = RateLimiter::new(line_rate, config.epoch, config.bin);
        Some(ReactionLimiter { rp, limiter, line_rate, bdp })
    }

    /// The window in bytes of payload, if the control keeps one: HPCC's own, or DCQCN+w's,
    /// TIMELY+w's and HPCC's simulator's DCTCP's BDP × rate / line rate (HPCC's simulator's
    /// `GetWin` with `VAR_WIN`), rounded down but at least one byte.
    pub(super) fn window_bytes(&self) -> Option<u64> {
        if let Reaction::Hpcc(law) = &self.rp {
            return Some(law.window_bytes());
        }
        let window = u128::from(self.bdp?) * u128::from(self.rp.rate().bps()) / u128::from(self.line_rate.bps());
        Some(u64::try_from(window).unwrap_or(u64::MAX).max(1))
    }

    /// Whether the transport reports it (its rate over time): all but HPCC's law.
    pub(super) fn is_reported(&self) -> bool {
        !matches!(self.rp, Reaction::Hpcc(_))
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
            Reaction::Hpcc(_) | Reaction::Timely(_) | Reaction::Dctcp(_) => {}
        }
        self.follow_rate(now);
    }

    /// Fires the reaction point's timers.
    pub(super) fn handle_timeout(&mut self, now: Instant) {
        match &mut self.rp {
            Reaction::Qcn(rp) => rp.handle_timeout(now),
            Reaction::Dcqcn(rp) => rp.handle_timeout(now),
            Reaction::Hpcc(_) | Reaction::Timely(_) | Reaction::Dctcp(_) => return,
        }
        self.follow_rate(now);
    }

    /// An acknowledgement of segments up to `acked` (`next`: the next to send) echoing
    /// `hops`' records and whether it echoes a CE mark (`marked`), with its RTT sample if it
    /// has one: HPCC's law reacts to the records (if any), TIMELY's to the sample, DCTCP's
    /// to the mark.
    pub(super) fn acknowledged(
        &mut self,
        now: Instant,
        (acked, next): (u32, u32),
        hops: &[HopRecord],
        rtt: Option<Duration>,
        marked: bool,
    ) {
        match (&mut self.rp, rtt) {
            (Reaction::Hpcc(law), _) if !hops.is_empty() => law.on_ack(u64::from(acked), u64::from(next), hops),
            (Reaction::Timely(law), Some(rtt)) => law.on_rtt(now, rtt),
            (Reaction::Dctcp(law), _) => law.on_ack(acked, next, marked),
            _ => return,
        }
        self.follow_rate(now);
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

/// Swift's window on a connection: the law, the hop count of its target when the ACK echoes
/// no INT, and below one segment the pacing of one segment per RTT/cwnd.
#[derive(Clone, Debug)]
pub(super) struct SwiftWindow {
    pub(super) law: Swift,
    hops: u32,
    /// The latest RTT sample: the RTT of the pacing interval.
    rtt: Option<Duration>,
    /// Below one segment, when the next segment may go.
    paced_until: Instant,
}

impl SwiftWindow {
    pub(super) fn new(config: SwiftTransport) -> SwiftWindow {
        SwiftWindow { law: Swift::new(config.params), hops: config.hops, rtt: None, paced_until: Instant::ZERO }
    }

    /// Segments that may be unacknowledged: floor(cwnd), at least one (below one segment
    /// the pacing holds the rate to cwnd segments per RTT).
    pub(super) fn window(&self) -> u32 {
        (self.law.cwnd().floor() as u32).max(1)
    }

    /// When the next segment may go as far as the pacing is concerned.
    pub(super) fn ready_at(&self) -> Instant {
        self.paced_until
    }

    /// A segment went out at `now`: below one segment, the next waits RTT/cwnd (until an
    /// RTT sample exists, the window of one alone holds the connection back).
    pub(super) fn sent(&mut self, now: Instant) {
        if let Some(interval) = self.rtt.and_then(|rtt| self.law.pacing_interval(rtt)) {
            self.paced_until = now + interval;
        }
    }

    /// An ACK of `acked_segments` new segments with RTT sample `rtt`, of which `remote` was
    /// spent at the receiver (its remote queuing delay, 0 where the ACK cannot say), echoing
    /// `int_hops` INT records (0: none). The window compares the fabric's delay, the rest
    /// (Swift §3.1); the pacing spreads segments over the whole RTT.
    pub(super) fn acknowledged(
        &mut self,
        now: Instant,
        rtt: Duration,
        remote: Duration,
        int_hops: usize,
        acked_segments: u32,
    ) {
        let hops = if int_hops > 0 { u32::try_from(int_hops).unwrap_or(u32::MAX) } else { self.hops };
        self.rtt = Some(rtt);
        self.law.on_ack(now, rtt.saturating_sub(remote), hops, acked_segments);
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
