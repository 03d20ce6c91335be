//! FECN at the hosts: the reaction and reflection points of the FECN paper's 3-point
//! architecture (§III-A). A source sends a rate-discovery probe along each active flow every
//! `probe_interval`, with its line rate in the rate field. Every FECN switch on the way lowers
//! that field to its advertised rate when smaller (§IV). The destination sends the probe
//! back as it arrived, subtype "reflected". The source's rate limiter then takes the rate the
//! reflected probe carries: explicit rate control (§III-C), no search.
//!
//! A flow starts at its line rate, before any probe has come back; a sudden overload is then
//! PAUSE's to absorb (§V). Reflected probes older than the last one applied are ignored, so
//! a reordered reply cannot undo a newer rate.

use crate::{RateLimiter, RateTrace};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration};
use pfcswitch_wire::{EthernetAddress, FecnProbeRepr, FecnSubtype};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The sources' settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub struct FecnReaction {
    /// How often each active flow sends a probe.
    #[serde(with = "duration")]
    pub probe_interval: Duration,
    /// The rate a flow starts at and never exceeds: the NIC's.
    pub line_rate: BitRate,
}

/// One flow's FECN source.
#[derive(Clone, Debug)]
pub struct FecnSource {
    reaction: FecnReaction,
    next_probe: Instant,
    /// The next probe's sequence number.
    sequence: u32,
    /// The sequence number of the last reflected probe applied.
    applied: Option<u32>,
    limiter: RateLimiter,
    stats: FecnSourceStats,
}

/// What a flow's source saw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FecnSourceStats {
    pub probes_sent: u64,
    pub probes_returned: u64,
    /// The round trip of the last probe that came back.
    pub last_rtt: Option<Duration>,
    /// The egress port that set the last rate applied, if a switch lowered it.
    pub bottleneck: Option<EthernetAddress>,
}

/// Rates below this are taken as this: a shaper needs a rate, and 1 kbit/s is the probe's unit.
const MIN_RATE: BitRate = match BitRate::from_bps(1000) {
    Some(rate) => rate,
    None => unreachable!(),
};

impl FecnSource {
    /// `epoch` and `bin` are the transport's goodput bins, which the rate trace shares.
    pub fn new(reaction: FecnReaction, epoch: Instant, bin: Duration) -> FecnSource {
        FecnSource {
            reaction,
            next_probe: Instant::ZERO,
            sequence: 0,
            applied: None,
            limiter: RateLimiter::new(reaction.line_rate, epoch, bin),
            stats: FecnSourceStats::default(),
        }
    }

    /// When the next probe is due (its flow permitting).
    pub fn next_probe_at(&self) -> Instant {
        self.next_probe
    }

    /// The probe flow `flow_id` sends at `now`; the next is due an interval later.
    pub fn probe(&mut self, now: Instant, flow_id: u16) -> FecnProbeRepr {
        let probe = FecnProbeRepr {
            subtype: FecnSubtype::Probe,
            hops: 0,
            flow_id,
            sequence: self.sequence,
            rate_kbps: kbps(self.reaction.line_rate),
            bottleneck: EthernetAddress::default(),
            timestamp_ns: now.as_nanos(),
        };
        self.sequence = self.sequence.wrapping_add(1);
        self.next_probe = now + self.reaction.probe_interval;
        self.stats.probes_sent += 1;
        probe
    }

    /// A reflected probe of this flow came back: its rate becomes the flow's. Returns
    /// whether it was applied (not older than the last one).
    pub fn on_reflected(&mut self, now: Instant, probe: &FecnProbeRepr) -> bool {
        if self.applied.is_some_and(|last| probe.sequence <= last) {
            return false;
        }
        self.applied = Some(probe.sequence);
        let rate = BitRate::from_bps(u64::from(probe.rate_kbps) * 1000).unwrap_or(MIN_RATE);
        let rate = rate.max(MIN_RATE).min(self.reaction.line_rate);
        self.limiter.set_rate(now, rate);
        self.stats.probes_returned += 1;
        self.stats.last_rtt = Some(now.saturating_duration_since(Instant::from_nanos(probe.timestamp_ns)));
        self.stats.bottleneck = (probe.bottleneck != EthernetAddress::default()).then_some(probe.bottleneck);
        true
    }

    /// Lets the rate limiter send up to `burst` early after a late wake-up.
    pub fn set_burst(&mut self, burst: Duration) {
        self.limiter.set_burst(burst);
    }

    /// When the rate limiter lets the flow's next frame go.
    pub fn ready_at(&self) -> Instant {
        self.limiter.ready_at()
    }

    /// The flow sent a data frame of `len` bytes.
    pub fn sent(&mut self, now: Instant, len: usize) {
        self.limiter.send(now, len);
    }

    pub fn rate(&self) -> BitRate {
        self.limiter.rate()
    }

    pub fn trace(&self) -> &RateTrace {
        self.limiter.trace()
    }

    pub fn stats(&self) -> FecnSourceStats {
        self.stats
    }
}

fn kbps(rate: BitRate) -> u32 {
    u32::try_from(rate.bps() / 1000).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Instant = Instant::from_nanos(1_000_000_000);
    const MS: Duration = Duration::from_millis(1);

    fn source() -> FecnSource {
        let reaction = FecnReaction { probe_interval: MS, line_rate: BitRate::gbps(1) };
        FecnSource::new(reaction, T0, 10 * MS)
    }

    #[test]
    fn probes_carry_the_line_rate_and_number_themselves() {
        let mut s = source();
        assert_eq!(s.next_probe_at(), Instant::ZERO, "the first is due at once");
        let first = s.probe(T0, 9);
        assert_eq!(
            (first.subtype, first.flow_id, first.sequence, first.rate_kbps),
            (FecnSubtype::Probe, 9, 0, 1_000_000)
        );
        assert_eq!(first.timestamp_ns, T0.as_nanos());
        assert_eq!(s.next_probe_at(), T0 + MS);
        assert_eq!(s.probe(T0 + MS, 9).sequence, 1);
        assert_eq!(s.stats().probes_sent, 2);
    }

    #[test]
    fn the_reflected_rate_becomes_the_flows_and_older_replies_are_ignored() {
        let mut s = source();
        let mut first = s.probe(T0, 1);
        let mut second = s.probe(T0 + MS, 1);
        let port = EthernetAddress([2, 0, 0, 0, 0, 5]);
        (second.subtype, second.rate_kbps, second.bottleneck) = (FecnSubtype::Reflected, 250_000, port);
        assert!(s.on_reflected(T0 + 2 * MS, &second));
        assert_eq!(s.rate(), BitRate::mbps(250));
        assert_eq!(s.stats().last_rtt, Some(MS));
        assert_eq!(s.stats().bottleneck, Some(port));
        (first.subtype, first.rate_kbps) = (FecnSubtype::Reflected, 900_000);
        assert!(!s.on_reflected(T0 + 3 * MS, &first), "an older probe cannot undo a newer rate");
        assert_eq!(s.rate(), BitRate::mbps(250));
        // Never above the line rate, never below 1 kbit/s.
        let mut third = s.probe(T0 + 4 * MS, 1);
        third.rate_kbps = 0;
        s.on_reflected(T0 + 5 * MS, &third);
        assert_eq!(s.rate().bps(), 1000);
    }

    #[test]
    fn the_limiter_paces_frames_at_the_rate() {
        let mut s = source();
        let mut reply = s.probe(T0, 1);
        reply.rate_kbps = 100_000;
        s.on_reflected(T0, &reply);
        s.sent(T0, 1226);
        // 1226 bytes + 24 of preamble, gap and FCS at 100 Mbit/s: 100 µs (less the shaper's
        // 1 ns of credit).
        assert_eq!((s.ready_at() - T0).as_nanos().abs_diff(100_000), 1);
    }
}
