//! The buffer's families: pools (`pfcswitch_buffer_pool_*`, per pool), and per port and
//! priority the PFC thresholds in force and the headroom of priority groups
//! (`pfcswitch_pg_*`) and the limit in force on egress queues (`pfcswitch_queue_limit_bytes`).
//! Dynamic thresholds move with the pools: these are the values of the scrape's instant.

use super::family::{Labels, family, gauge, port_priority};
use pfcswitch_switch::report::{BufferReport, PgReport, PoolReport};
use prometheus_client::encoding::DescriptorEncoder;
use std::fmt;

pub fn encode(e: &mut DescriptorEncoder, report: &BufferReport) -> fmt::Result {
    let pool_labels = |p: &PoolReport| -> Labels { vec![("pool", p.name.clone()), ("kind", p.kind.clone())] };
    for (name, help, value) in [
        (
            "pfcswitch_buffer_pool_size_bytes",
            "The pool's shared bytes.",
            (|p: &PoolReport| p.size_bytes) as fn(&PoolReport) -> u64,
        ),
        ("pfcswitch_buffer_pool_used_bytes", "Shared bytes of the pool in use.", |p| p.used_bytes),
        ("pfcswitch_buffer_pool_watermark_bytes", "Most shared bytes in use since the watermarks were cleared.", |p| {
            p.watermark_bytes
        }),
    ] {
        family(e, name, help, report.pools.iter().map(|p| (pool_labels(p), gauge(value(p)))).collect::<Vec<_>>())?;
    }
    let headroom_pools = || report.pools.iter().filter(|p| p.headroom_size_bytes.is_some());
    family(
        e,
        "pfcswitch_buffer_pool_headroom_watermark_bytes",
        "Most bytes of the ingress pool's shared headroom pool in use since the watermarks were cleared.",
        headroom_pools().map(|p| (pool_labels(p), gauge(p.headroom_watermark_bytes))).collect::<Vec<_>>(),
    )?;
    let lossless = || report.priority_groups.iter().filter(|pg| pg.lossless);
    let per_pg = |value: fn(&PgReport) -> u64| {
        lossless().map(move |pg| (port_priority(&pg.port, pg.priority), gauge(value(pg)))).collect::<Vec<_>>()
    };
    family(
        e,
        "pfcswitch_pg_xoff_threshold_bytes",
        "The ingress use at which this lossless priority group sends XOFF now (dynamic: reserve + alpha × free pool).",
        per_pg(|pg| pg.xoff_threshold_bytes.unwrap_or(0)),
    )?;
    family(
        e,
        "pfcswitch_pg_headroom_bytes",
        "Bytes this lossless priority group holds in headroom.",
        per_pg(|pg| pg.headroom_bytes),
    )?;
    family(
        e,
        "pfcswitch_pg_headroom_watermark_bytes",
        "Most headroom bytes this lossless priority group held since the watermarks were cleared.",
        per_pg(|pg| pg.headroom_watermark_bytes),
    )?;
    let bounded =
        report.queues.iter().filter_map(|q| Some((port_priority(&q.port, q.priority), gauge(q.limit_bytes?))));
    family(
        e,
        "pfcswitch_queue_limit_bytes",
        "The most this egress queue may hold now (dynamic: reserve + alpha × free pool); unbounded queues are absent.",
        bounded.collect::<Vec<_>>(),
    )
}
