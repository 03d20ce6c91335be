//! INT's families (`pfcswitch_int_*`), with `[int]` on: what each stamping egress port did
//! with the INT-MD frames it sent, by outcome, and the node ID its records carry.

use super::family::{Labels, counter, family, gauge};
use pfcswitch_switch::report::{IntReport, PortReport};
use prometheus_client::encoding::DescriptorEncoder;
use std::fmt;

pub fn encode(e: &mut DescriptorEncoder, report: &IntReport, ports: &[PortReport]) -> fmt::Result {
    let settings = &report.settings;
    let info: Labels = vec![("node_id", report.node_id.to_string()), ("queue", settings.queue.name().to_string())];
    family(
        e,
        "pfcswitch_int_info",
        "INT at egress: the node ID this switch's hop records carry and the occupancy they report \
         (queue: port or priority); the value is always 1.",
        [(info, gauge(1i64))],
    )?;
    let frames = ports.iter().filter(|p| settings.stamps(&p.name)).flat_map(|p| {
        p.int.outcomes().into_iter().map(|(outcome, n)| {
            let labels: Labels = vec![("port", p.name.clone()), ("outcome", outcome.to_string())];
            (labels, counter(n))
        })
    });
    family(
        e,
        "pfcswitch_int_frames_total",
        "INT-MD frames the egress port sent, by outcome: stamped (a hop record pushed), hop_limit \
         (no hop left, E set), mtu (no room under the port's MTU, M set), flooded (sent to several \
         ports, not stamped), malformed (INT that did not parse, forwarded as it was).",
        frames.collect::<Vec<_>>(),
    )
}
