//! `pfcswitch int show [PORT]`: in-band telemetry at egress: the node ID this switch's hop
//! records carry, the `[int]` settings in force, and what each stamping port did with the
//! INT-MD frames it sent (stamped, or why not).

use crate::control::{int_counters, print_json, selected};
use anyhow::{Result, bail};
use clap::Subcommand;
use pfcswitch_lab::table::Table;
use pfcswitch_switch::int::IntQueue;
use pfcswitch_switch::report::{IntReport, PortReport, Snapshot};
use serde_json::{Map, Value, json};

#[derive(Debug, Subcommand)]
pub enum IntCommand {
    /// The node ID, the settings and the counters of every stamping port, or of PORT.
    Show { port: Option<String> },
}

/// The stamping ports among every port, or PORT.
fn stamping<'a>(snapshot: &'a Snapshot, int: &IntReport, port: Option<&str>) -> Result<Vec<&'a PortReport>> {
    let ports: Vec<&PortReport> =
        selected(snapshot, port)?.into_iter().filter(|p| int.settings.stamps(&p.name)).collect();
    if let Some(name) = port
        && ports.is_empty()
    {
        bail!("port `{name}` does not stamp INT records: it is not in [int] ports");
    }
    Ok(ports)
}

/// The line above the table: node ID, priorities, ports and the occupancy reported.
fn summary(int: &IntReport) -> String {
    let s = &int.settings;
    let list = |items: Vec<String>, empty: &str| if items.is_empty() { empty.to_string() } else { items.join(",") };
    let queue = match s.queue {
        IntQueue::Port => "port (the egress port's bytes over all priorities)",
        IntQueue::Priority => "priority (the frame's own egress queue)",
    };
    format!(
        "int: node ID {} ({:#010x}), priorities {}, ports {}, queue {}",
        int.node_id,
        int.node_id,
        list(s.priorities.iter().map(u8::to_string).collect(), "none"),
        list(s.ports.clone(), "all"),
        queue
    )
}

pub fn show(snapshot: &Snapshot, port: Option<&str>, json: bool) -> Result<()> {
    let Some(int) = &snapshot.int else {
        bail!("INT is off: [int] priorities is empty in the configuration");
    };
    let ports = stamping(snapshot, int, port)?;
    if json {
        let rows: Vec<Value> = ports
            .iter()
            .map(|p| {
                let mut row = Map::new();
                row.insert("port".into(), json!(p.name));
                if let Value::Object(outcomes) = int_counters(p) {
                    row.extend(outcomes);
                }
                Value::Object(row)
            })
            .collect();
        print_json(&json!({ "node_id": int.node_id, "settings": int.settings, "ports": rows }));
        return Ok(());
    }
    println!("{}", summary(int));
    let mut table = Table::new(&["PORT", "STAMPED", "HOP LIMIT (E)", "MTU (M)", "FLOODED", "MALFORMED"]);
    for p in ports {
        let mut row = vec![p.name.clone()];
        row.extend(p.int.outcomes().iter().map(|(_, n)| n.to_string()));
        table.row(row);
    }
    table.print();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::int_not_stamped;
    use pfcswitch_switch::counters::IntCounters;
    use pfcswitch_switch::int::IntConfig;

    fn report(ports: &[&str], queue: IntQueue) -> IntReport {
        let settings = IntConfig {
            priorities: vec![3, 5],
            ports: ports.iter().map(|p| p.to_string()).collect(),
            node_id: None,
            queue,
        };
        IntReport { node_id: 0x811C_9DC5, settings }
    }

    #[test]
    fn the_summary_names_the_node_the_priorities_the_ports_and_the_queue() {
        assert_eq!(
            summary(&report(&[], IntQueue::Port)),
            "int: node ID 2166136261 (0x811c9dc5), priorities 3,5, ports all, \
             queue port (the egress port's bytes over all priorities)"
        );
        assert!(summary(&report(&["p1", "p2"], IntQueue::Priority)).contains("ports p1,p2, queue priority"));
    }

    #[test]
    fn counters_are_one_key_per_outcome_and_not_stamped_sums_the_reasons() {
        let mut port: PortReport = serde_json::from_value(json!({
            "name": "p1", "iface": "p1", "mac": "02:00:00:00:00:01", "speed_bps": 1_000_000_000u64, "mtu": 1500,
            "headroom_bound_bytes": 0, "pause_rx": 0, "malformed": {}, "priorities": [],
        }))
        .expect("a port report");
        port.int = IntCounters { stamped: 10, hop_limit: 1, mtu: 2, flooded: 3, malformed: 4 };
        assert_eq!(
            int_counters(&port),
            json!({ "stamped": 10, "hop_limit": 1, "mtu": 2, "flooded": 3, "malformed": 4 })
        );
        assert_eq!(int_not_stamped(&port), 10);
    }
}
