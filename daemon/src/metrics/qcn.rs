//! QCN's families (`pfcswitch_qcn_*`), per congestion point (port and monitored priority):
//! the queue it watches, its samples, the CNMs it sent and dropped, and the distribution of
//! the QntzFb they carried.

use super::family::{Labels, counter, family, gauge, port_priority};
use pfcswitch_switch::report::{CpReport, QcnReport};
use prometheus_client::encoding::DescriptorEncoder;
use std::fmt;

pub fn encode(e: &mut DescriptorEncoder, report: &QcnReport) -> fmt::Result {
    let points = &report.points;
    let labels = |c: &CpReport| port_priority(&c.port, c.priority);
    let per_point = |value: fn(&CpReport) -> u64| points.iter().map(move |c| (labels(c), value(c)));
    family(
        e,
        "pfcswitch_qcn_queue_bytes",
        "The queue the congestion point watches: the egress queue (output) or the ingress share (input).",
        per_point(|c| c.q_bytes).map(|(l, v)| (l, gauge(v))).collect::<Vec<_>>(),
    )?;
    for (name, help, value) in [
        (
            "pfcswitch_qcn_samples_total",
            "Samples of the watched queue.",
            (|c: &CpReport| c.samples) as fn(&CpReport) -> u64,
        ),
        ("pfcswitch_qcn_cnms_sent_total", "CNMs sent (samples that found Fb < 0 and a culprit).", |c| {
            c.counters.cnms_sent
        }),
        ("pfcswitch_qcn_cnms_dropped_total", "CNMs dropped because the port's CNM queue was full.", |c| {
            c.counters.cnms_dropped
        }),
        ("pfcswitch_qcn_no_culprit_total", "Congested samples that found no frame to blame.", |c| {
            c.counters.no_culprit
        }),
    ] {
        family(e, name, help, per_point(value).map(|(l, v)| (l, counter(v))).collect::<Vec<_>>())?;
    }
    let bins = points.iter().flat_map(|c| {
        c.counters.quantized_feedback.iter().enumerate().map(move |(bin, &n)| {
            let mut l: Labels = labels(c);
            l.push(("qntzfb", format!("{}-{}", bin * 8, bin * 8 + 7)));
            (l, counter(n))
        })
    });
    family(
        e,
        "pfcswitch_qcn_cnm_feedback_total",
        "CNMs sent, by the QntzFb they carried (bins of eight values).",
        bins.collect::<Vec<_>>(),
    )
}
