//! `pfcswitch buffer show`: the buffer as a whole, in the spirit of SONiC's `show
//! buffer_pool watermark`, `show priority-group watermark` and `show queue watermark`: pools,
//! then lossless and mapped priority groups with the XOFF point in force now, then queues.

use crate::control::print_json;
use anyhow::{Context, Result};
use pfcswitch_lab::table::Table;
use pfcswitch_link::units::{BitRate, format_duration};
use pfcswitch_switch::report::{BufferReport, Snapshot};
use std::time::Duration;

/// Prints the buffer report; `all` lists every queue, not only those that held bytes since
/// the watermarks were cleared.
pub fn show(snapshot: &Snapshot, all: bool, json: bool) -> Result<()> {
    let report =
        snapshot.buffer.as_ref().context("this pfcswitchd reports no buffer (older than the `buffer` report)")?;
    if json {
        print_json(&serde_json::to_value(report)?);
        return Ok(());
    }
    println!("buffer mode {}", report.mode);
    print_pools(report);
    print_priority_groups(report);
    print_queues(report, all);
    print_headroom(report);
    Ok(())
}

/// The headroom each port's link needs, term by term (what a lossless profile without `xoff`
/// gets).
fn print_headroom(report: &BufferReport) {
    println!("\nHeadroom from the link: speed × (2 × cable + response) + 3 maximum frames + a PFC frame");
    let mut table = Table::new(&["PORT", "SPEED", "MTU", "CABLE", "RESPONSE", "IN FLIGHT", "FRAMES", "HEADROOM"]);
    for port in &report.headroom {
        table.row(vec![
            port.port.clone(),
            BitRate::from_bps(port.speed_bps).map_or_else(|| "-".into(), |speed| speed.to_string()),
            port.mtu.to_string(),
            format_duration(Duration::from_nanos(port.cable_delay_ns)),
            format_duration(Duration::from_nanos(port.response_time_ns)),
            port.flight_bytes.to_string(),
            port.frames_bytes.to_string(),
            port.headroom_bytes.to_string(),
        ]);
    }
    table.print();
}

fn print_pools(report: &BufferReport) {
    if report.pools.is_empty() {
        return;
    }
    println!("\nPools");
    let mut table =
        Table::new(&["POOL", "TYPE", "MODE", "SIZE", "USED", "WATERMARK", "HEADROOM POOL", "HDRM USED", "HDRM WM"]);
    for pool in &report.pools {
        let headroom = |value: u64| if pool.headroom_size_bytes.is_some() { value.to_string() } else { "-".into() };
        table.row(vec![
            pool.name.clone(),
            pool.kind.clone(),
            pool.mode.clone(),
            pool.size_bytes.to_string(),
            pool.used_bytes.to_string(),
            pool.watermark_bytes.to_string(),
            pool.headroom_size_bytes.map_or_else(|| "-".into(), |size| size.to_string()),
            headroom(pool.headroom_used_bytes),
            headroom(pool.headroom_watermark_bytes),
        ]);
    }
    table.print();
}

fn print_priority_groups(report: &BufferReport) {
    if report.priority_groups.is_empty() {
        return;
    }
    println!("\nPriority groups (ingress)");
    let mut table = Table::new(&[
        "PORT",
        "PG",
        "PROFILE",
        "USED",
        "WATERMARK",
        "RESERVED",
        "SHARED",
        "XOFF AT",
        "XON AT",
        "HEADROOM",
        "HDRM USED",
        "HDRM WM",
    ]);
    let optional = |value: Option<u64>| value.map_or_else(|| "-".into(), |v| v.to_string());
    for pg in &report.priority_groups {
        let threshold = match pg.dynamic_th {
            Some(k) => format!("{} (α=2^{k})", optional(pg.xoff_threshold_bytes)),
            None => optional(pg.xoff_threshold_bytes),
        };
        table.row(vec![
            pg.port.clone(),
            format!("{}{}", pg.priority, if pg.lossless { " lossless" } else { "" }),
            pg.profile.clone(),
            pg.used_bytes.to_string(),
            pg.watermark_bytes.to_string(),
            pg.reserved_bytes.to_string(),
            pg.shared_bytes.to_string(),
            threshold,
            optional(pg.xon_threshold_bytes),
            pg.headroom_size_bytes.to_string(),
            pg.headroom_bytes.to_string(),
            pg.headroom_watermark_bytes.to_string(),
        ]);
    }
    table.print();
}

fn print_queues(report: &BufferReport, all: bool) {
    println!("\nQueues (egress)");
    let mut table = Table::new(&["PORT", "QUEUE", "PROFILE", "USED", "WATERMARK", "LIMIT NOW"]);
    let shown =
        report.queues.iter().filter(|q| all || q.used_bytes > 0 || q.watermark_bytes > 0 || q.limit_bytes.is_some());
    for queue in shown {
        table.row(vec![
            queue.port.clone(),
            queue.priority.to_string(),
            queue.profile.clone(),
            queue.used_bytes.to_string(),
            queue.watermark_bytes.to_string(),
            queue.limit_bytes.map_or_else(|| "unbounded".into(), |limit| limit.to_string()),
        ]);
    }
    table.print();
}
