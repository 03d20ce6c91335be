//! A plan's sized messages as a flow list another simulator can run (`bench/ns3/`): one
//! flow a line, `connection message sender receiver size_bytes start_ns`, hosts by index
//! (0-based, the topology's order: `h1` is 0), the start in nanoseconds from the workload's
//! start. Lines starting with `#` are comments. Long-lived flows (no size) are left out.

use super::PlannedConnection;
use pfcswitch_link::time::Instant;
use std::fmt::Write as _;

/// The first line of every list: its columns.
const FLOW_LIST_HEADER: &str = "# connection message sender receiver size_bytes start_ns";

/// `connections`' sized messages, in plan order, with starts counted from `epoch`.
pub fn flow_list(connections: &[PlannedConnection], epoch: Instant) -> String {
    let mut list = format!("{FLOW_LIST_HEADER}\n");
    for c in connections {
        for m in &c.messages {
            let Some(size) = m.size else { continue };
            let start = m.start.as_nanos() - epoch.as_nanos();
            writeln!(list, "{} {} {} {} {size} {start}", c.id, m.id, c.sender, c.receiver).expect("a String takes it");
        }
    }
    list
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_hosts::{Arrivals, MessageSpec};

    fn connection(id: u32, sender: usize, receiver: usize, messages: Vec<MessageSpec>) -> PlannedConnection {
        PlannedConnection {
            id,
            class: 0,
            sender,
            receiver,
            priority: 3,
            rate: None,
            arrivals: Arrivals::default(),
            until: None,
            messages,
            dport: None,
        }
    }

    #[test]
    fn a_line_per_sized_message_with_hosts_by_index_and_starts_from_the_epoch() {
        let epoch = Instant::from_nanos(10_000_000);
        let at = |ns: u64| Instant::from_nanos(10_000_000 + ns);
        let connections = [
            connection(0, 5, 17, vec![MessageSpec { id: 0, size: Some(1_460), start: at(2_500) }]),
            connection(
                1,
                127,
                0,
                vec![
                    MessageSpec { id: 0, size: Some(65_536), start: at(0) },
                    MessageSpec { id: 1, size: Some(30_000_000), start: at(9_999_999) },
                ],
            ),
            connection(2, 3, 4, vec![MessageSpec { id: 0, size: None, start: at(0) }]),
        ];
        assert_eq!(
            flow_list(&connections, epoch),
            "# connection message sender receiver size_bytes start_ns\n\
             0 0 5 17 1460 2500\n\
             1 0 127 0 65536 0\n\
             1 1 127 0 30000000 9999999\n"
        );
    }
}
