//! A run's files in HPCC's formats, written beside `results.json`, so HPCC's tools (its
//! `fct_analysis.py`, or `pfcswitch hpcc fct-analysis`) read our runs as they read ns-3's.
//! Nodes are numbered as [`HpccNodes`](super::hpcc_nodes::HpccNodes) says; times are on HPCC's clock, where
//! `traffic_gen.py`'s flows begin at 2 s: 2 s plus the time from the workload's start.
//!
//! **`fct.txt`** (`run` and `simulate`, `pfcswitch_hpcc::fct`). What each column means here,
//! and where it differs from ns-3's:
//! - the source port counts from 10000 per (source, destination) pair in the order the
//!   messages start, as ns-3 gives each new queue pair the next port of the pair;
//! - the destination port is the flow file's for a `flows` class, else 200 for a `query`
//!   class (an incast, what `fct_analysis.py -t 1` selects) and 100 for every other,
//!   `traffic_gen.py`'s;
//! - the start is the message's;
//! - the FCT is ours (first byte offered to the last byte acknowledged);
//! - the standalone FCT is HPCC's rule with HPCC's constants (1,000-byte payloads, 48 bytes of
//!   headers) on our path's links, not our own ideal FCT (`results.json`'s slowdowns), so a
//!   slowdown computed from this file is the one ns-3 would report for the same FCT.
//!
//! Lines come in the order flows finish, as ns-3 writes them; unfinished messages and
//! long-lived flows have no line.
//!
//! **`pfc.txt`** (`simulate`): a line per PAUSE or PFC frame that arrived, where ns-3's
//! `QbbNetDevice` logs one (at the paused device, when the frame has arrived): `time node
//! node_type if_index type`, node type 1 for a switch and 0 for a host, the interface from 1
//! (a switch's port `p<k>` is interface k, a host's NIC 1), type 1 for a pause and 0 for a
//! resume. HPCC's switches send one class per frame; a frame of ours that names several
//! classes gives a line per class (a PAUSE, one line). On the datapath the switches count PFC
//! frames (results.json) but do not stamp their arrivals, so `run` writes no `pfc.txt`.

use super::record::RunRecord;
use crate::workload::Pattern;
use anyhow::{Context, Result};
use pfcswitch_hpcc::fct::{self, DEFAULT_PAYLOAD, FctRecord, base_rtt_ns, standalone_fct_ns};
use pfcswitch_hpcc::flows::{DPORT_INCAST, DPORT_NORMAL};
use pfcswitch_hpcc::generate::BASE_NS;
use pfcswitch_sim::Node;
use pfcswitch_wire::MacControlRepr;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The first source port of every pair of hosts (ns-3's `portNumder`).
const FIRST_SPORT: u16 = 10_000;

/// The run's completed sized messages as HPCC's `fct.txt` lines, in finishing order.
pub(super) fn fct_records(record: &RunRecord) -> Vec<FctRecord> {
    let mut messages: Vec<_> = record.endpoints.iter().flat_map(|e| &e.messages).filter(|m| m.size.is_some()).collect();
    messages.sort_by_key(|m| (m.start_ns, m.connection, m.id));
    let node = |host: usize| record.hpcc_nodes.hosts[host];
    let mut next_port: HashMap<(usize, usize), u16> = HashMap::new();
    let mut records: Vec<(u64, FctRecord)> = Vec::new();
    for m in messages {
        let c = &record.connections[m.connection as usize];
        let port = next_port.entry((c.sender, c.receiver)).or_insert(FIRST_SPORT);
        let sport = *port;
        *port = port.wrapping_add(1);
        let (Some(size), Some(finish_ns)) = (m.size, m.finish_ns) else { continue };
        let Some(hops) = record.ideal.hops(c.sender, c.receiver) else { continue };
        let path: Vec<(u64, u64)> = hops.iter().map(|&(bps, delay)| (delay as u64, bps)).collect();
        let bottleneck = path.iter().map(|&(_, bps)| bps).min().unwrap_or(1);
        let base_rtt = base_rtt_ns(&path, DEFAULT_PAYLOAD);
        let incast = record.scenario.classes.get(c.class).is_some_and(|class| class.kind == Pattern::Query);
        let size = u64::from(size);
        records.push((
            finish_ns,
            FctRecord {
                src: node(c.sender),
                dst: node(c.receiver),
                sport,
                dport: c.dport.unwrap_or(if incast { DPORT_INCAST } else { DPORT_NORMAL }),
                size,
                start_ns: BASE_NS + (m.start_ns - record.epoch.as_nanos()),
                fct_ns: finish_ns - m.start_ns,
                standalone_ns: standalone_fct_ns(base_rtt, bottleneck, size, DEFAULT_PAYLOAD),
            },
        ));
    }
    records.sort_by_key(|&(finish, _)| finish);
    records.into_iter().map(|(_, r)| r).collect()
}

/// Writes `out/fct.txt`.
pub(super) fn write_fct(record: &RunRecord, out: &Path) -> Result<PathBuf> {
    write(out.join("fct.txt"), fct::emit(&fct_records(record)))
}

/// The run's `pfc.txt` lines.
fn pfc_lines(record: &RunRecord) -> String {
    let mut text = String::new();
    let epoch = record.epoch.as_nanos();
    for arrival in record.pause_arrivals {
        let time = BASE_NS + arrival.at.as_nanos().saturating_sub(epoch);
        let (node, kind, interface) = match arrival.to.node {
            Node::Switch(s) => (record.hpcc_nodes.switches[s], 1, arrival.to.port + 1),
            Node::Host(h) => (record.hpcc_nodes.hosts[h], 0, 1),
        };
        let pausing: Vec<bool> = match arrival.control {
            MacControlRepr::Pause { quanta } => vec![quanta > 0],
            MacControlRepr::Pfc(pfc) => pfc.classes().map(|(_, quanta)| quanta > 0).collect(),
        };
        for pause in pausing {
            writeln!(text, "{time} {node} {kind} {interface} {}", u8::from(pause)).expect("a String takes it");
        }
    }
    text
}

/// Writes `out/pfc.txt`.
pub(super) fn write_pfc(record: &RunRecord, out: &Path) -> Result<PathBuf> {
    write(out.join("pfc.txt"), pfc_lines(record))
}

fn write(path: PathBuf, text: String) -> Result<PathBuf> {
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}
