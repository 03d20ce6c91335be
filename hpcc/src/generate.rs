//! Flow files as HPCC's `traffic_gen/traffic_gen.py` makes them, and the incast its authors
//! describe (HPCC issue #36: 2 % of the network's capacity in Poisson events, 60 senders
//! each sending 500 KB to one receiver), seeded with pfcswitch's RNG rather than Python's,
//! so a seed gives the same file on every machine.
//!
//! `traffic_gen.py`'s semantics, kept as they are: every host starts flows in a Poisson
//! process whose mean gap makes its offered load `load × host rate` given the mean flow
//! size; gaps are whole nanoseconds (truncated); the first flow of each host comes one gap
//! after 2 s (its `base_t`); destinations are uniform over the other hosts; sizes are drawn
//! by the caller (`traffic_gen.py` interpolates its CDF linearly, as `lab::flow_sizes` does)
//! and at least 1 byte. Flows come out in time order (its heap of `(time, host)`), and a
//! host stops at the first flow whose *next* gap would end past 2 s + the duration: that
//! flow is not written either, as in the script.

use crate::flows::{DPORT_INCAST, DPORT_NORMAL, Flow};
use pfcswitch_link::rng::Rng;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// When `traffic_gen.py`'s flows start: 2 s, the time HPCC's simulations start traffic.
pub const BASE_NS: u64 = 2_000_000_000;

/// The priority group `traffic_gen.py` writes.
pub const PG: u8 = 3;

/// What `traffic_gen.py` is asked for.
#[derive(Clone, Debug, PartialEq)]
pub struct PoissonSpec {
    /// The hosts' node ids (`traffic_gen.py -n N`: 0 to N − 1).
    pub hosts: Vec<u32>,
    /// Offered load per host as a share of its link (`-l`).
    pub load: f64,
    /// The hosts' link rate (`-b`).
    pub host_bps: u64,
    /// How long flows start for, after 2 s (`-t`).
    pub duration_ns: u64,
    /// The size distribution's mean, in bytes.
    pub mean_size: f64,
}

/// The incast of HPCC's Fig. 11.
#[derive(Clone, Debug, PartialEq)]
pub struct IncastSpec {
    /// Share of the network's capacity (every host's link) the incasts offer: 0.02.
    pub load: f64,
    /// Senders per event: 60.
    pub senders: usize,
    /// Bytes each sender sends: 500 KB.
    pub size: u64,
}

impl Default for IncastSpec {
    fn default() -> IncastSpec {
        IncastSpec { load: 0.02, senders: 60, size: 500_000 }
    }
}

/// `-ln(U) × mean`, truncated to whole ns, as `int(poisson(avg_inter_arrival))`.
fn gap(rng: &mut Rng, mean_ns: f64) -> u64 {
    (-rng.fraction().ln() * mean_ns) as u64
}

/// A host of `hosts` other than `not`.
fn other_host(rng: &mut Rng, hosts: &[u32], not: u32) -> u32 {
    loop {
        let host = hosts[rng.below(hosts.len())];
        if host != not {
            return host;
        }
    }
}

/// Checks what both generators need.
fn check(hosts: &[u32], load: f64, host_bps: u64) -> Result<(), String> {
    if hosts.len() < 2 {
        return Err(format!("{} host(s): flows need at least two", hosts.len()));
    }
    if !(load > 0.0 && load.is_finite()) {
        return Err(format!("load {load} must be above 0"));
    }
    if host_bps == 0 {
        return Err("the host rate must be above 0".into());
    }
    Ok(())
}

/// `traffic_gen.py`'s flows.
pub fn poisson(spec: &PoissonSpec, rng: &mut Rng, mut size: impl FnMut(&mut Rng) -> u64) -> Result<Vec<Flow>, String> {
    check(&spec.hosts, spec.load, spec.host_bps)?;
    if spec.mean_size.is_nan() || spec.mean_size <= 0.0 {
        return Err(format!("a mean flow size of {} bytes", spec.mean_size));
    }
    let mean_gap_ns = spec.mean_size * 8.0 / (spec.host_bps as f64 * spec.load) * 1e9;
    let end = BASE_NS + spec.duration_ns;
    let mut next: BinaryHeap<Reverse<(u64, u32)>> =
        spec.hosts.iter().map(|&host| Reverse((BASE_NS + gap(rng, mean_gap_ns), host))).collect();
    let mut flows = Vec::new();
    while let Some(Reverse((t, src))) = next.pop() {
        let after = t + gap(rng, mean_gap_ns);
        let dst = other_host(rng, &spec.hosts, src);
        if after > end {
            continue;
        }
        let size = size(rng).max(1);
        flows.push(Flow { src, dst, pg: PG, dport: DPORT_NORMAL, size, start_ns: t });
        next.push(Reverse((after, src)));
    }
    Ok(flows)
}

/// Incast events from 2 s for `duration_ns`, Poisson at the rate that offers `incast.load`
/// of the hosts' total capacity: a uniform receiver and `senders` distinct other hosts,
/// every flow starting at the event, on `dport` 200.
pub fn incast(
    hosts: &[u32],
    host_bps: u64,
    duration_ns: u64,
    incast: &IncastSpec,
    rng: &mut Rng,
) -> Result<Vec<Flow>, String> {
    check(hosts, incast.load, host_bps)?;
    if incast.senders == 0 || incast.senders >= hosts.len() || incast.size == 0 {
        return Err(format!(
            "an incast of {} senders of {} bytes among {} hosts",
            incast.senders,
            incast.size,
            hosts.len()
        ));
    }
    let event_bits = (incast.senders as u64 * incast.size * 8) as f64;
    let mean_gap_ns = event_bits / (incast.load * host_bps as f64 * hosts.len() as f64) * 1e9;
    let mut flows = Vec::new();
    let mut t = BASE_NS + gap(rng, mean_gap_ns);
    while t <= BASE_NS + duration_ns {
        let dst = hosts[rng.below(hosts.len())];
        let mut others: Vec<u32> = hosts.iter().copied().filter(|&h| h != dst).collect();
        for i in 0..incast.senders {
            let pick = i + rng.below(others.len() - i);
            others.swap(i, pick);
            flows.push(Flow { src: others[i], dst, pg: PG, dport: DPORT_INCAST, size: incast.size, start_ns: t });
        }
        t += gap(rng, mean_gap_ns);
    }
    Ok(flows)
}

/// `a` and `b` in one start order, `a`'s first at equal starts.
pub fn merge(mut a: Vec<Flow>, b: Vec<Flow>) -> Vec<Flow> {
    a.extend(b);
    a.sort_by_key(|f| f.start_ns);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(hosts: u32, load: f64) -> PoissonSpec {
        PoissonSpec {
            hosts: (0..hosts).collect(),
            load,
            host_bps: 100_000_000_000,
            duration_ns: 10_000_000,
            mean_size: 100_000.0,
        }
    }

    /// At 100 Gbit/s, 30 % load and 100 KB flows a host starts a flow every 26.7 µs on
    /// average: 16 hosts × 10 ms ≈ 6,000 flows; the offered bytes match the load within 5 %.
    #[test]
    fn offers_the_load_in_time_order_between_distinct_hosts() {
        let mut rng = Rng::new(7);
        let flows = poisson(&spec(16, 0.3), &mut rng, |_| 100_000).unwrap();
        let offered: u64 = flows.iter().map(|f| f.size * 8).sum();
        let capacity = 16.0 * 100e9 * 0.010 * 0.3;
        assert!((offered as f64 / capacity - 1.0).abs() < 0.05, "{offered} bits of {capacity}");
        assert!(flows.windows(2).all(|w| w[0].start_ns <= w[1].start_ns));
        assert!(flows.iter().all(|f| f.src != f.dst && f.start_ns > BASE_NS && f.start_ns <= BASE_NS + 10_000_000));
        assert!(flows.iter().all(|f| (f.pg, f.dport) == (3, 100)));
        assert_eq!(
            poisson(&spec(16, 0.3), &mut Rng::new(7), |_| 100_000).unwrap(),
            flows,
            "a seed gives the same flows"
        );
    }

    /// 320 hosts at 100 Gbit/s, 2 % of 32 Tbit/s = 640 Gbit/s of 60 × 500 KB = 240 Mbit
    /// events: one every 375 µs, about 27 in 10 ms.
    #[test]
    fn incast_events_offer_their_share_with_distinct_senders() {
        let hosts: Vec<u32> = (0..320).collect();
        let flows = incast(&hosts, 100_000_000_000, 10_000_000, &IncastSpec::default(), &mut Rng::new(3)).unwrap();
        assert_eq!(flows.len() % 60, 0);
        let events = flows.len() / 60;
        assert!((15..=40).contains(&events), "{events} events");
        for event in flows.chunks(60) {
            let mut senders: Vec<u32> = event.iter().map(|f| f.src).collect();
            senders.sort_unstable();
            senders.dedup();
            assert_eq!(senders.len(), 60, "distinct senders");
            assert!(event.iter().all(|f| f.dst == event[0].dst && f.src != f.dst && f.start_ns == event[0].start_ns));
            assert!(event.iter().all(|f| (f.dport, f.size) == (200, 500_000)));
        }
    }

    #[test]
    fn impossible_requests_are_refused() {
        assert!(poisson(&spec(1, 0.3), &mut Rng::new(1), |_| 1).unwrap_err().contains("at least two"));
        assert!(poisson(&spec(4, 0.0), &mut Rng::new(1), |_| 1).unwrap_err().contains("above 0"));
        let too_many = IncastSpec { senders: 4, ..IncastSpec::default() };
        assert!(incast(&[0, 1, 2, 3], 1, 1, &too_many, &mut Rng::new(1)).unwrap_err().contains("4 senders"));
    }

    #[test]
    fn merged_flows_stay_in_start_order() {
        let at = |start_ns, dport| Flow { src: 0, dst: 1, pg: 3, dport, size: 1, start_ns };
        let merged = merge(vec![at(1, 100), at(5, 100)], vec![at(1, 200), at(3, 200)]);
        assert_eq!(
            merged.iter().map(|f| (f.start_ns, f.dport)).collect::<Vec<_>>(),
            vec![(1, 100), (1, 200), (3, 200), (5, 100)]
        );
    }
}
