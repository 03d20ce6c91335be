//! The control commands: ask pfcswitchd's control socket (through `pfcswitch_lab::control`)
//! and print what it says, as tables for people or JSON (`-j`) for scripts.

use anyhow::{Context, Result};
use pfcswitch_lab::control::{request, unexpected};
use pfcswitch_lab::table::Table;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_switch::report::{ControlRequest, ControlResponse, PortReport, Snapshot};
use serde_json::{Value, json};
use std::path::Path;

/// Runs a request that answers with a message (counter reset, reload).
pub fn command(socket: &Path, req: ControlRequest, json: bool) -> Result<()> {
    match request(socket, &req)? {
        ControlResponse::Done { message } => {
            if json {
                println!("{}", json!({ "ok": true, "message": message }));
            } else {
                println!("{message}");
            }
            Ok(())
        }
        other => unexpected(other),
    }
}

pub fn print_json(value: &Value) {
    println!("{}", serde_json::to_string_pretty(value).expect("JSON values serialize"));
}

fn speed(bps: u64) -> String {
    BitRate::from_bps(bps).map_or_else(|| "-".into(), |s| s.to_string())
}

fn duration(seconds: f64) -> String {
    let s = seconds as u64;
    match s {
        0..60 => format!("{seconds:.1}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
    }
}

fn total<'a>(port: &'a PortReport, field: impl Fn(&'a pfcswitch_switch::report::PriorityReport) -> u64) -> u64 {
    port.priorities.iter().map(field).sum()
}

pub fn status(snapshot: &Snapshot, json: bool) {
    if json {
        return print_json(&json!({
            "switch": snapshot.switch, "version": snapshot.version, "policy": snapshot.policy,
            "uptime_seconds": snapshot.uptime_seconds, "ports": snapshot.ports.len(),
            "links": snapshot.ports.iter().map(|p| (p.name.clone(), p.link.clone())).collect::<std::collections::BTreeMap<_, _>>(),
            "frames_held": snapshot.frames_held, "pfc": snapshot.pfc, "datapath": snapshot.datapath,
        }));
    }
    println!(
        "switch {} (pfcswitch {}), policy {}, up {}",
        snapshot.switch,
        snapshot.version,
        snapshot.policy,
        duration(snapshot.uptime_seconds)
    );
    let lossless: Vec<String> = snapshot.pfc.lossless.iter().map(u8::to_string).collect();
    println!(
        "{} ports; lossless priorities {} (xoff {}, xon {}, max {}, quanta {})",
        snapshot.ports.len(),
        if lossless.is_empty() { "none".into() } else { lossless.join(",") },
        ByteSize(snapshot.pfc.xoff_bytes),
        ByteSize(snapshot.pfc.xon_bytes),
        ByteSize(snapshot.pfc.max_bytes),
        snapshot.pfc.quanta
    );
    let not_up: Vec<String> =
        snapshot.ports.iter().filter(|p| p.link != "up").map(|p| format!("{} {}", p.name, p.link)).collect();
    match not_up.is_empty() {
        true => println!("links: all {} up", snapshot.ports.len()),
        false => println!("links: {} up; {}", snapshot.ports.len() - not_up.len(), not_up.join(", ")),
    }
    println!("frames held by the switch: {}", snapshot.frames_held);
    if let Some(d) = &snapshot.datapath {
        println!(
            "UMEM: {} frames ({} free, {} held, {} in flight, {} in fill rings); resident memory {}",
            d.umem_frames,
            d.umem_frames_free,
            d.umem_frames_held,
            d.umem_frames_in_flight,
            d.umem_frames_filling,
            ByteSize(d.resident_bytes)
        );
        println!(
            "timers: {} wake-ups, late p50 {:.0} µs, p99 {:.0} µs, max {:.0} µs; AF_XDP rx drops {}; frames without XDP metadata {}",
            d.timer_wakeups,
            d.timer_late_p50_us,
            d.timer_late_p99_us,
            d.timer_late_max_us,
            d.xsk_rx_dropped,
            d.meta_missing
        );
    }
}

/// The port's drops by reason, summed over its priorities.
fn drop_reasons(port: &PortReport) -> std::collections::BTreeMap<&str, u64> {
    let mut reasons = std::collections::BTreeMap::new();
    for (reason, count) in port.priorities.iter().flat_map(|q| &q.drops) {
        *reasons.entry(reason.as_str()).or_default() += count;
    }
    reasons
}

pub fn ports(snapshot: &Snapshot, json: bool) {
    // With `[int]` on, each stamping port's INT counters (`null` on the others).
    let int = |p: &PortReport| {
        let on = snapshot.int.as_ref()?;
        Some(if on.settings.stamps(&p.name) { int_counters(p) } else { Value::Null })
    };
    let rows: Vec<Value> = snapshot
        .ports
        .iter()
        .map(|p| {
            let mut row = json!({
                "port": p.name, "iface": p.iface, "link": p.link, "link_transitions": p.link_transitions,
                "mac": p.mac, "speed_bps": p.speed_bps, "mtu": p.mtu,
                "rx_frames": total(p, |q| q.rx_frames), "rx_bytes": total(p, |q| q.rx_bytes),
                "tx_frames": total(p, |q| q.tx_frames), "tx_bytes": total(p, |q| q.tx_bytes),
                "drops": p.priorities.iter().map(|q| q.drops.values().sum::<u64>()).sum::<u64>(),
                "drop_reasons": drop_reasons(p),
                "xdp_drops": p.xdp.as_ref().map(|x| &x.drops),
                "socket_dropped": p.xdp.as_ref().map(|x| x.socket_dropped),
                "malformed": p.malformed.values().sum::<u64>(),
                "pause_rx": p.pause_rx, "short_mac_control": p.short_mac_control, "cable": p.cable,
                "xdp_attach": p.xdp.as_ref().map(|x| &x.attach), "xsk_mode": p.xdp.as_ref().map(|x| &x.socket),
            });
            if let (Some(counters), Value::Object(row)) = (int(p), &mut row) {
                row.insert("int".into(), counters);
            }
            row
        })
        .collect();
    if json {
        return print_json(&Value::Array(rows));
    }
    let mut headers = vec![
        "PORT",
        "IFACE",
        "LINK",
        "MAC",
        "SPEED",
        "MTU",
        "RX FRAMES",
        "RX BYTES",
        "TX FRAMES",
        "TX BYTES",
        "DROPS",
        "MALFORMED",
        "XDP",
    ];
    // INT-MD frames stamped and not (the reasons: `pfcswitch int show`), with `[int]` on.
    if snapshot.int.is_some() {
        headers.extend(["INT STAMPED", "INT NOT STAMPED"]);
    }
    let mut table = Table::new(&headers);
    for (p, row) in snapshot.ports.iter().zip(&rows) {
        let mut cells = vec![
            p.name.clone(),
            p.iface.clone(),
            p.link.clone(),
            p.mac.clone(),
            speed(p.speed_bps),
            p.mtu.to_string(),
            row["rx_frames"].to_string(),
            row["rx_bytes"].to_string(),
            row["tx_frames"].to_string(),
            row["tx_bytes"].to_string(),
            row["drops"].to_string(),
            row["malformed"].to_string(),
            p.xdp.as_ref().map_or_else(|| "-".to_string(), xdp_modes),
        ];
        match row.get("int") {
            Some(Value::Null) => cells.extend(["-".to_string(), "-".to_string()]),
            Some(_) => cells.extend([p.int.stamped.to_string(), int_not_stamped(p).to_string()]),
            None => {}
        }
        table.row(cells);
    }
    table.print();
}

/// `native/copy`: where the classifier runs and how the sockets move frames (`-` for what
/// a port without an interface lacks).
fn xdp_modes(xdp: &pfcswitch_switch::report::XdpPortReport) -> String {
    let or_dash = |mode: &str| if mode.is_empty() { "-".to_string() } else { mode.to_string() };
    format!("{}/{}", or_dash(&xdp.attach), or_dash(&xdp.socket))
}

/// Every port, or the one named `port` (by name or interface).
pub fn selected<'a>(snapshot: &'a Snapshot, port: Option<&str>) -> Result<Vec<&'a PortReport>> {
    match port {
        Some(name) => Ok(vec![snapshot.port(name).with_context(|| format!("no port named `{name}`"))?]),
        None => Ok(snapshot.ports.iter().collect()),
    }
}

/// The entries of `entries` on `port` (every port's without one), `port_of` naming an
/// entry's port: what `ofc show`, `qcn show` and `fecn show` print.
pub fn on_ports<'a, T>(
    snapshot: &Snapshot,
    port: Option<&str>,
    entries: &'a [T],
    port_of: impl Fn(&T) -> &str,
) -> Result<Vec<&'a T>> {
    let ports: Vec<&str> = selected(snapshot, port)?.iter().map(|p| p.name.as_str()).collect();
    Ok(entries.iter().filter(|e| ports.contains(&port_of(e))).collect())
}

/// In the spirit of iproute2's `dcb pfc show dev DEV`.
pub fn pfc_show(snapshot: &Snapshot, port: Option<&str>, json: bool) -> Result<()> {
    let ports = selected(snapshot, port)?;
    let headroom = snapshot.pfc.max_bytes - snapshot.pfc.xoff_bytes;
    if json {
        let rows: Vec<Value> = ports
            .iter()
            .map(|p| {
                json!({
                    "port": p.name, "pfc_enabled": p.priorities.iter().filter(|q| q.lossless).map(|q| q.priority).collect::<Vec<_>>(),
                    "xoff_bytes": snapshot.pfc.xoff_bytes, "xon_bytes": snapshot.pfc.xon_bytes, "max_bytes": snapshot.pfc.max_bytes,
                    "headroom_bytes": headroom, "headroom_needed_bytes": p.headroom_bound_bytes, "quanta": snapshot.pfc.quanta,
                    "requests": total(p, |q| q.pfc_tx), "indications": total(p, |q| q.pfc_rx),
                    "pausing_peer": p.priorities.iter().filter(|q| q.pausing_peer).map(|q| q.priority).collect::<Vec<_>>(),
                    "peer_paused": p.priorities.iter().filter(|q| q.peer_paused).map(|q| q.priority).collect::<Vec<_>>(),
                })
            })
            .collect();
        print_json(&Value::Array(rows));
        return Ok(());
    }
    for p in ports {
        let prio: Vec<String> =
            p.priorities.iter().map(|q| format!("{}:{}", q.priority, if q.lossless { "on" } else { "off" })).collect();
        println!("{}: pfc-cap 8 prio-pfc {}", p.name, prio.join(" "));
        println!(
            "    xoff {} xon {} max {} headroom {} (needs {}) quanta {}",
            ByteSize(snapshot.pfc.xoff_bytes),
            ByteSize(snapshot.pfc.xon_bytes),
            ByteSize(snapshot.pfc.max_bytes),
            ByteSize(headroom),
            ByteSize(p.headroom_bound_bytes),
            snapshot.pfc.quanta
        );
        let list = |pred: &dyn Fn(&pfcswitch_switch::report::PriorityReport) -> bool| {
            let v: Vec<String> = p.priorities.iter().filter(|q| pred(q)).map(|q| q.priority.to_string()).collect();
            if v.is_empty() { "none".to_string() } else { v.join(",") }
        };
        println!(
            "    requests {} indications {}  pausing peer: {}  paused by peer: {}",
            total(p, |q| q.pfc_tx),
            total(p, |q| q.pfc_rx),
            list(&|q| q.pausing_peer),
            list(&|q| q.peer_paused)
        );
    }
    Ok(())
}

/// SONiC's pfcstat: PFC frames received and sent per port and priority.
pub fn pfcstat(snapshot: &Snapshot, json: bool) {
    if json {
        let rows: Vec<Value> = snapshot
            .ports
            .iter()
            .map(|p| {
                json!({
                    "port": p.name,
                    "rx": p.priorities.iter().map(|q| q.pfc_rx).collect::<Vec<_>>(),
                    "tx": p.priorities.iter().map(|q| q.pfc_tx).collect::<Vec<_>>(),
                    "short_rx": p.short_mac_control,
                })
            })
            .collect();
        return print_json(&Value::Array(rows));
    }
    for (direction, field) in [("Rx", true), ("Tx", false)] {
        let mut headers = vec![format!("Port {direction}")];
        headers.extend((0..8).map(|p| format!("PFC{p}")));
        let mut table = Table::new(&headers.iter().map(String::as_str).collect::<Vec<_>>());
        for p in &snapshot.ports {
            let mut row = vec![p.name.clone()];
            row.extend(p.priorities.iter().map(|q| if field { q.pfc_rx } else { q.pfc_tx }.to_string()));
            table.row(row);
        }
        table.print_right_aligned();
        println!();
    }
    // SONiC's two tables as they are; a sender's short frames (no MAC padded them) below.
    for p in snapshot.ports.iter().filter(|p| p.short_mac_control > 0) {
        println!(
            "{}: {} PAUSE/PFC frames shorter than 60 bytes received ([pfc] short_frames)",
            p.name, p.short_mac_control
        );
    }
}

/// Ingress and egress occupancy, pause state and high-water marks.
pub fn queues(snapshot: &Snapshot, all: bool, json: bool) {
    let rows: Vec<(&PortReport, &pfcswitch_switch::report::PriorityReport)> = snapshot
        .ports
        .iter()
        .flat_map(|p| p.priorities.iter().map(move |q| (p, q)))
        .filter(|(_, q)| all || q.lossless || q.ingress_high_water > 0 || q.egress_high_water > 0)
        .collect();
    if json {
        let values: Vec<Value> = rows
            .iter()
            .map(|(p, q)| {
                json!({
                    "port": p.name, "priority": q.priority, "lossless": q.lossless,
                    "ingress_bytes": q.ingress_bytes, "ingress_high_water": q.ingress_high_water,
                    "egress_bytes": q.egress_bytes, "egress_high_water": q.egress_high_water,
                    "peer_paused": q.peer_paused, "pausing_peer": q.pausing_peer,
                    "paused_seconds": q.paused_seconds, "pausing_seconds": q.pausing_seconds, "xoff_to_xon": q.xoff_to_xon,
                    "pfcwd_stormed": q.pfcwd.stormed,
                })
            })
            .collect();
        return print_json(&Value::Array(values));
    }
    let mut table = Table::new(&[
        "PORT",
        "PRIO",
        "LOSSLESS",
        "INGRESS",
        "IN-HWM",
        "EGRESS",
        "EG-HWM",
        "PAUSED",
        "PAUSING",
        "PAUSED-S",
        "PAUSING-S",
        "XOFF->XON",
        "PFCWD",
    ]);
    let yes = |b: bool| if b { "yes" } else { "-" }.to_string();
    for (p, q) in rows {
        table.row(vec![
            p.name.clone(),
            q.priority.to_string(),
            yes(q.lossless),
            q.ingress_bytes.to_string(),
            q.ingress_high_water.to_string(),
            q.egress_bytes.to_string(),
            q.egress_high_water.to_string(),
            yes(q.peer_paused),
            yes(q.pausing_peer),
            format!("{:.3}", q.paused_seconds),
            format!("{:.3}", q.pausing_seconds),
            q.xoff_to_xon.to_string(),
            if q.pfcwd.stormed { "stormed" } else { "-" }.to_string(),
        ]);
    }
    table.print();
}

pub fn fdb(snapshot: &Snapshot, json: bool) {
    if json {
        return print_json(&serde_json::to_value(&snapshot.fdb).expect("serializable"));
    }
    let mut table = Table::new(&["MAC", "PORT", "TYPE", "AGE"]);
    for entry in &snapshot.fdb {
        let kind = if entry.is_static { "static" } else { "learned" };
        let age = if entry.is_static { "-".into() } else { duration(entry.age_seconds) };
        table.row(vec![entry.mac.clone(), entry.port.clone(), kind.into(), age]);
    }
    table.print();
}

/// A port's INT counters as a JSON object, one key per outcome.
pub fn int_counters(port: &PortReport) -> Value {
    Value::Object(port.int.outcomes().into_iter().map(|(outcome, n)| (outcome.to_string(), json!(n))).collect())
}

/// Frames sent with INT-MD that the port did not stamp, whatever the reason.
pub fn int_not_stamped(port: &PortReport) -> u64 {
    port.int.outcomes().iter().filter(|(outcome, _)| *outcome != "stamped").map(|(_, n)| n).sum()
}
