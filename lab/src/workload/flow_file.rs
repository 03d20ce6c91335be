//! A `flows` class: the flows of HPCC's `flow.txt` (`pfcswitch_hpcc::flows`, read as ns-3
//! reads it), so an experiment made for HPCC's simulator runs here with the same flows; or
//! the flows `traffic_gen.py` would write (`crate::hpcc_traffic`), generated from the class's
//! `sizes` and `load` (with `incast`, the Fig. 11 incast) over the run's hosts and duration,
//! from the run's seed, so that a scenario or a sweep varies them as any other key.
//!
//! Each flow is a connection of its own (HPCC gives each a queue pair), from the host whose
//! node id is `src` to the one whose node id is `dst`, of `size` bytes, starting at its
//! start less the class's `offset` (2 s by default: `traffic_gen.py` starts flows at 2 s, and
//! our runs start their workload at 0). Hosts are numbered as in HPCC's files: by the
//! `topology.txt` the fabric was read from, else host n (from 0: `h1`) is node n. Every
//! flow's `pg` must be the class's priority (a class has one), and every flow must start
//! within the scenario's `duration` after the offset; both are refused with the line
//! otherwise, as is a flow whose end is no host.

use super::error::WorkloadError;
use crate::hpcc_traffic::{self, TrafficSpec};
use pfcswitch_hpcc::flows::FlowFile;
use std::path::Path;
use std::time::Duration;

/// Where `traffic_gen.py`'s flows begin.
const DEFAULT_OFFSET: Duration = Duration::from_secs(2);

/// One flow of the file, on the run's hosts and clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlannedFlow {
    pub sender: usize,
    pub receiver: usize,
    pub size: u32,
    /// From the workload's start.
    pub start: Duration,
    pub dport: u16,
}

/// Where a `flows` class's flows come from.
#[derive(Clone, Debug)]
pub(super) enum Source<'a> {
    File(&'a Path),
    Generated(TrafficSpec<'a>),
}

/// A `flows` class as its plan reads it.
#[derive(Clone, Debug)]
pub(super) struct FlowClass<'a> {
    pub name: &'a str,
    pub source: Source<'a>,
    pub offset: Option<Duration>,
    pub priority: u8,
    /// The hosts' node ids, when the topology is HPCC's.
    pub hpcc_hosts: Option<&'a [u32]>,
}

/// The flows of `class`'s file among `hosts` hosts, each starting before `stop`.
pub(super) fn flows(class: FlowClass, hosts: usize, stop: Duration) -> Result<Vec<PlannedFlow>, WorkloadError> {
    let invalid = |reason: String| WorkloadError::Invalid { class: class.name.to_string(), reason };
    let (file, path) = match &class.source {
        Source::File(path) => (FlowFile::read(path).map_err(|e| invalid(e.to_string()))?, *path),
        Source::Generated(spec) => {
            (hpcc_traffic::generate(spec).map_err(|e| invalid(e.to_string()))?.0, Path::new("generated flows"))
        }
    };
    let offset = class.offset.unwrap_or(DEFAULT_OFFSET);
    let host = |id: u32| match class.hpcc_hosts {
        Some(ids) => ids.binary_search(&id).ok(),
        None => Some(id as usize).filter(|&h| h < hosts),
    };
    let mut planned = Vec::with_capacity(file.flows.len());
    for (flow, &line) in file.flows.iter().zip(&file.lines) {
        let at = |reason: String| invalid(format!("{}:{line}: {reason}", path.display()));
        let end = |what: &str, id: u32| {
            host(id).ok_or_else(|| at(format!("{what} {id} is not a host of the topology ({hosts} hosts)")))
        };
        let (sender, receiver) = (end("src", flow.src)?, end("dst", flow.dst)?);
        if flow.pg != class.priority {
            return Err(at(format!("pg {} is not the class's priority {}", flow.pg, class.priority)));
        }
        let start = Duration::from_nanos(flow.start_ns)
            .checked_sub(offset)
            .ok_or_else(|| at(format!("starts before the offset {offset:?}")))?;
        if start >= stop {
            return Err(at(format!("starts {start:?} after the offset, not within the duration {stop:?}")));
        }
        let size = u32::try_from(flow.size)
            .ok()
            .filter(|&s| s < u32::MAX)
            .ok_or_else(|| at(format!("{} bytes; a message must be smaller than 4 GiB", flow.size)))?;
        planned.push(PlannedFlow { sender, receiver, size, start, dport: flow.dport });
    }
    Ok(planned)
}

#[cfg(test)]
mod tests {
    use super::super::{ClassSpec, PlanContext, PlannedConnection, plan};
    use super::*;
    use pfcswitch_link::time::Instant;

    fn context(dir: &std::path::Path, hpcc_hosts: Option<Vec<u32>>) -> PlanContext {
        PlanContext {
            speed: pfcswitch_link::units::BitRate::gbps(100),
            scenario_dir: dir.to_path_buf(),
            builtin_dir: dir.to_path_buf(),
            hpcc_hosts,
        }
    }

    fn class(extra: &str) -> ClassSpec {
        toml::from_str(&format!("name = \"hpcc\"\nkind = \"flows\"\npriority = 3\n{extra}")).unwrap()
    }

    const FLOWS: &str = "3\n1 2 3 100 5000 2.000001\n4 1 3 200 64000 2.000002\n1 2 3 100 7 2.5\n";

    /// Node ids 1–4 are hosts (node 0 a switch, as in HPCC's mix/topology.txt): node 1 is
    /// host 0. Every flow its own connection, at its start less 2 s.
    #[test]
    fn every_flow_is_a_connection_of_its_own_on_the_hosts_node_ids() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("flow.txt"), FLOWS).unwrap();
        let hosts: Vec<String> = (1..=4).map(|h| format!("h{h}")).collect();
        let context = context(dir.path(), Some(vec![1, 2, 3, 4]));
        let planned =
            plan(&[class("file = \"flow.txt\"")], &hosts, 1, Instant::ZERO, Duration::from_secs(1), &context).unwrap();
        let got: Vec<_> =
            planned.iter().map(|c| (c.sender, c.receiver, c.messages[0].size, c.messages[0].start)).collect();
        let ms = |ns| Instant::from_nanos(ns);
        assert_eq!(
            got,
            vec![(0, 1, Some(5000), ms(1000)), (3, 0, Some(64_000), ms(2000)), (0, 1, Some(7), ms(500_000_000))]
        );
        assert!(planned.iter().all(|c| c.messages.len() == 1 && c.priority == 3));
    }

    /// `sizes` and `load` instead of a file: `traffic_gen.py`'s flows over the run's hosts and
    /// duration, from the run's seed, and the incast on request.
    #[test]
    fn generated_flows_offer_the_load_from_the_runs_seed() {
        let workloads = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().join("workloads");
        let context = PlanContext { builtin_dir: workloads, ..context(Path::new("."), None) };
        let hosts: Vec<String> = (1..=64).map(|h| format!("h{h}")).collect();
        let run = |extra: &str, seed, ms| {
            plan(&[class(extra)], &hosts, seed, Instant::ZERO, Duration::from_millis(ms), &context).unwrap()
        };
        let hadoop = "sizes = \"hadoop\"\nload = 0.3";
        let planned = run(hadoop, 1, 2);
        // 64 hosts offering 30 % of 100 Gbit/s for 2 ms, in flows of Hadoop's mean 120,421 B:
        // 3,986 flows expected, a Poisson count whose standard deviation is 63.
        assert!((3_600..4_400).contains(&planned.len()), "{} flows", planned.len());
        assert!(planned.iter().all(|c| c.dport == Some(100) && c.messages[0].start < Instant::from_nanos(2_000_000)));
        let starts = |planned: &[PlannedConnection]| planned.iter().map(|c| c.messages[0].start).collect::<Vec<_>>();
        assert_eq!(starts(&planned), starts(&run(hadoop, 1, 2)), "the same seed, the same flows");
        assert_ne!(starts(&planned), starts(&run(hadoop, 2, 2)));

        // The incast: events of 60 distinct senders to one receiver, 500 KB each, at one time.
        let planned = run(&format!("{hadoop}\nincast = true"), 1, 10);
        let mut events: std::collections::BTreeMap<Instant, Vec<&PlannedConnection>> = Default::default();
        for c in planned.iter().filter(|c| c.dport == Some(200)) {
            events.entry(c.messages[0].start).or_default().push(c);
        }
        assert!(!events.is_empty());
        for flows in events.values() {
            let senders: std::collections::BTreeSet<usize> = flows.iter().map(|c| c.sender).collect();
            assert_eq!((flows.len(), senders.len()), (60, 60));
            assert!(flows.iter().all(|c| c.receiver == flows[0].receiver && c.messages[0].size == Some(500_000)));
        }
    }

    #[test]
    fn flows_that_do_not_fit_the_run_are_refused_with_their_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("flow.txt"), FLOWS).unwrap();
        let hosts: Vec<String> = (1..=4).map(|h| format!("h{h}")).collect();
        let refused = |extra: &str, ids: Option<Vec<u32>>, duration: u64| {
            let context = context(dir.path(), ids);
            plan(&[class(extra)], &hosts, 1, Instant::ZERO, Duration::from_millis(duration), &context)
                .unwrap_err()
                .to_string()
        };
        let file = dir.path().join("flow.txt").display().to_string();
        assert_eq!(
            refused("file = \"flow.txt\"", None, 1000),
            format!("class `hpcc`: {file}:3: src 4 is not a host of the topology (4 hosts)")
        );
        assert_eq!(
            refused("file = \"flow.txt\"", Some(vec![1, 2, 3, 4]), 100),
            format!("class `hpcc`: {file}:4: starts 500ms after the offset, not within the duration 100ms")
        );
        assert_eq!(
            refused("file = \"flow.txt\"\noffset = \"2.1s\"", Some(vec![1, 2, 3, 4]), 1000),
            format!("class `hpcc`: {file}:2: starts before the offset 2.1s")
        );
        let mut four = class("file = \"flow.txt\"");
        four.priority = 4;
        let context = context(dir.path(), Some(vec![1, 2, 3, 4]));
        let error = plan(&[four], &hosts, 1, Instant::ZERO, Duration::from_secs(1), &context).unwrap_err().to_string();
        assert_eq!(error, format!("class `hpcc`: {file}:2: pg 3 is not the class's priority 4"));
        assert_eq!(refused("", None, 1000), "class `hpcc`: `file` is required for kind Flows");
        assert!(
            refused("file = \"flow.txt\"\nsize = \"1KB\"", None, 1000)
                .contains("`size` means nothing to a flows class")
        );
        assert!(refused("file = \"flow.txt\"\nload = 0.3", None, 1000).contains("`file` and `sizes`/`load` exclude"));
        assert!(refused("sizes = \"hadoop\"", None, 1000).contains("generated flows need `load` beside `sizes`"));
        assert!(refused("file = \"flow.txt\"\nincast = true", None, 1000).contains("`incast` applies to generated"));
    }
}
