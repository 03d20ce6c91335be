//! FECN's families (`pfcswitch_fecn_*`), per rate point (port and monitored priority): the
//! advertised rate, the last interval's load factor, arrival rate and f(q), and the probes
//! seen and marked.

use super::family::{counter, family, gauge, port_priority};
use pfcswitch_switch::report::{FecnReport, RateReport};
use prometheus_client::encoding::DescriptorEncoder;
use std::fmt;

pub fn encode(e: &mut DescriptorEncoder, report: &FecnReport) -> fmt::Result {
    let points = &report.points;
    let labels = |r: &RateReport| port_priority(&r.port, r.priority);
    for (name, help, value) in [
        (
            "pfcswitch_fecn_advertised_rate_bps",
            "The rate the port advertises: probes leaving it are lowered to it (bit/s).",
            (|r: &RateReport| Some(r.advertised_bps)) as fn(&RateReport) -> Option<f64>,
        ),
        ("pfcswitch_fecn_load_factor", "The last interval's effective load A / (f(q)·C).", |r| r.last.map(|l| l.load)),
        ("pfcswitch_fecn_arrival_rate_bps", "The last interval's arrival rate at the egress queue (bit/s).", |r| {
            r.last.map(|l| l.arrival_bps)
        }),
        ("pfcswitch_fecn_queue_control", "The last interval's queue control f(q).", |r| r.last.map(|l| l.f)),
    ] {
        let samples = points.iter().filter_map(|r| Some((labels(r), gauge(value(r)?))));
        family(e, name, help, samples.collect::<Vec<_>>())?;
    }
    for (name, help, value) in [
        (
            "pfcswitch_fecn_probes_total",
            "FECN probes that left through the port.",
            (|r: &RateReport| r.probes_seen) as fn(&RateReport) -> u64,
        ),
        ("pfcswitch_fecn_probes_marked_total", "Probes whose rate the port lowered.", |r| r.probes_marked),
        ("pfcswitch_fecn_intervals_total", "Measurement intervals completed.", |r| r.intervals),
    ] {
        family(e, name, help, points.iter().map(|r| (labels(r), counter(value(r)))).collect::<Vec<_>>())?;
    }
    Ok(())
}
