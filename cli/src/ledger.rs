//! `pfcswitch ledger`: where every frame each port and priority took in went, on both sides
//! of the pipeline (see `pfcswitch_switch::ledger`), and whether each side balances.

use crate::control::print_json;
use pfcswitch_lab::table::Table;
use pfcswitch_switch::report::Snapshot;
use serde_json::{Value, json};

/// Prints the ledger of every lossless or used (port, priority); of every one with `all`.
pub fn show(snapshot: &Snapshot, all: bool, json: bool) {
    let rows: Vec<_> = snapshot
        .ports
        .iter()
        .flat_map(|port| port.priorities.iter().map(move |priority| (port, priority)))
        .filter(|(_, q)| all || q.lossless || q.ledger.ingress.received > 0 || q.ledger.egress.assigned > 0)
        .collect();
    if json {
        let values = rows
            .iter()
            .map(|(port, q)| {
                json!({
                    "port": port.name, "priority": q.priority, "lossless": q.lossless,
                    "ingress": q.ledger.ingress, "egress": q.ledger.egress, "balanced": q.ledger.balanced(),
                })
            })
            .collect();
        return print_json(&Value::Array(values));
    }
    let mut table = Table::new(&[
        "PORT",
        "PRIO",
        "RECEIVED",
        "DROPPED",
        "FORWARDED",
        "WAITING",
        "|",
        "ASSIGNED",
        "SENT",
        "DROPPED",
        "QUEUED",
        "BALANCED",
    ]);
    for (port, q) in rows {
        let (ingress, egress) = (&q.ledger.ingress, &q.ledger.egress);
        // Frames held when counters were reset count as received (assigned) again.
        let (received, assigned) = (ingress.received + ingress.carried, egress.assigned + egress.carried);
        let balanced = if q.ledger.balanced() { "yes".to_string() } else { "NO".to_string() };
        table.row(vec![
            port.name.clone(),
            q.priority.to_string(),
            received.to_string(),
            ingress.dropped.to_string(),
            ingress.forwarded.to_string(),
            ingress.waiting.to_string(),
            "|".into(),
            assigned.to_string(),
            egress.sent.to_string(),
            egress.dropped.to_string(),
            egress.queued.to_string(),
            balanced,
        ]);
    }
    table.print_right_aligned();
}
