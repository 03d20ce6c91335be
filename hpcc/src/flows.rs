//! HPCC's `flow.txt`: a first line with the number of flows, then one flow a line,
//! `src dst pg dport size start_s` (node ids, priority group, destination port, bytes, start
//! in seconds). `traffic_gen.py` writes `dport` 100; the incast its authors describe uses
//! 200, which is how `fct_analysis.py -t` tells the two apart.
//!
//! The first line is not trusted blindly. ns-3 reads exactly as many flows as it says and
//! never looks further, and HPCC's own `mix/flow.txt` relies on it: its count is 2, with
//! some 250 spare flows and a note after them. But `traffic_gen.py` writes an estimate there
//! and corrects it by seeking back over the first bytes, which leaves a count with a stray
//! digit, larger than the file, when the true count is shorter than the estimate (ns-3 then
//! reads past the end). So: the header's number of flows when the file has that many, the
//! lines after them ignored and counted ([`FlowFile::trailing_lines`]); every flow line of
//! the file when it has fewer (or no number at all), [`FlowFile::header_count`] keeping what
//! the header said so a caller can warn. ns-3 schedules the flows in the order it reads
//! them, so starts must not decrease.

use crate::error::{FileError, parse_token, token_lines};
use crate::topology::Topology;
use crate::units::{format_seconds, parse_seconds};
use std::fmt::Write as _;
use std::path::Path;

/// The destination port of `traffic_gen.py`'s flows.
pub const DPORT_NORMAL: u16 = 100;
/// The destination port of incast flows (`fct_analysis.py -t 1`).
pub const DPORT_INCAST: u16 = 200;

/// One flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flow {
    pub src: u32,
    pub dst: u32,
    /// Priority group (ns-3 queue), 0–7.
    pub pg: u8,
    pub dport: u16,
    pub size: u64,
    pub start_ns: u64,
}

/// A `flow.txt`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowFile {
    pub flows: Vec<Flow>,
    /// Each flow's line in the file, for errors found later (hosts checked against a topology).
    pub lines: Vec<usize>,
    /// What the first line said, which may be more than `flows.len()`.
    pub header_count: Option<u64>,
    /// Non-blank lines after the header's number of flows, which ns-3 never reads.
    pub trailing_lines: usize,
}

impl FlowFile {
    pub fn new(flows: Vec<Flow>) -> FlowFile {
        let lines = (2..flows.len() + 2).collect();
        FlowFile { header_count: Some(flows.len() as u64), flows, lines, trailing_lines: 0 }
    }

    /// Reads `text`, the contents of `file` (named in errors).
    pub fn parse(text: &str, file: &Path) -> Result<FlowFile, FileError> {
        let at = |line: usize, reason: String| FileError::at(file, line, reason);
        let mut lines = token_lines(text);
        let (_, header) = lines.next().ok_or_else(|| at(0, "empty file: the first line is the flow count".into()))?;
        let header_count = header.first().and_then(|count| count.parse().ok());
        let mut file_flows = FlowFile { flows: Vec::new(), lines: Vec::new(), header_count, trailing_lines: 0 };
        while header_count.is_none_or(|count| (file_flows.flows.len() as u64) < count) {
            let Some((line, tokens)) = lines.next() else { break };
            let [src, dst, pg, dport, size, start] = tokens[..] else {
                return Err(at(
                    line,
                    format!("a flow is `src dst pg dport size start_s`, found {} values", tokens.len()),
                ));
            };
            let flow = Flow {
                src: parse_token(file, line, src, "src")?,
                dst: parse_token(file, line, dst, "dst")?,
                pg: parse_token(file, line, pg, "pg")?,
                dport: parse_token(file, line, dport, "dport")?,
                size: parse_token(file, line, size, "size")?,
                start_ns: parse_seconds(start).map_err(|reason| at(line, format!("start: {reason}")))?,
            };
            if flow.src == flow.dst {
                return Err(at(line, format!("flow from host {} to itself", flow.src)));
            }
            if flow.pg > 7 {
                return Err(at(line, format!("pg {} is not a priority (0 to 7)", flow.pg)));
            }
            if flow.size == 0 {
                return Err(at(line, "a flow of 0 bytes never completes".into()));
            }
            if let Some(last) = file_flows.flows.last().filter(|last| last.start_ns > flow.start_ns) {
                let (was, is) = (format_seconds(last.start_ns), format_seconds(flow.start_ns));
                return Err(at(
                    line,
                    format!("starts at {is} s, before the flow above ({was} s): ns-3 needs them in order"),
                ));
            }
            file_flows.flows.push(flow);
            file_flows.lines.push(line);
        }
        file_flows.trailing_lines = lines.count();
        Ok(file_flows)
    }

    /// Reads `file`.
    pub fn read(file: &Path) -> Result<FlowFile, FileError> {
        let text = std::fs::read_to_string(file).map_err(|e| FileError::at(file, 0, e.to_string()))?;
        FlowFile::parse(&text, file)
    }

    /// Refuses a flow whose end is not a host of `topology`.
    pub fn check_hosts(&self, topology: &Topology, file: &Path) -> Result<(), FileError> {
        for (flow, &line) in self.flows.iter().zip(&self.lines) {
            for (end, id) in [("src", flow.src), ("dst", flow.dst)] {
                let reason = if id >= topology.nodes {
                    format!("{end} {id} is not a node of the topology (0 to {})", topology.nodes - 1)
                } else if topology.is_switch(id) {
                    format!("{end} {id} is a switch of the topology, not a host")
                } else {
                    continue;
                };
                return Err(FileError::at(file, line, reason));
            }
        }
        Ok(())
    }

    /// The file ns-3 reads, with the exact count first.
    pub fn emit(&self) -> String {
        let mut text = format!("{}\n", self.flows.len());
        for f in &self.flows {
            let start = format_seconds(f.start_ns);
            writeln!(text, "{} {} {} {} {} {start}", f.src, f.dst, f.pg, f.dport, f.size).expect("a String takes it");
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<FlowFile, FileError> {
        FlowFile::parse(text, Path::new("flow.txt"))
    }

    #[test]
    fn reads_every_line_when_the_header_claims_more() {
        // traffic_gen.py's estimate "10 " overwritten in place by the count 2: "20 ".
        let f = parse("20 \n1 2 3 100 5000 2.000000100\n7 1 3 200 500000 2.5\n").unwrap();
        assert_eq!(f.header_count, Some(20));
        assert_eq!(f.flows.len(), 2);
        assert_eq!(f.flows[1], Flow { src: 7, dst: 1, pg: 3, dport: 200, size: 500_000, start_ns: 2_500_000_000 });
        assert_eq!(f.lines, vec![2, 3]);
    }

    /// HPCC's `mix/flow.txt`: a count of 2, spare flows and a note after them.
    #[test]
    fn reads_only_the_headers_flows_when_the_file_has_more() {
        let f = parse(
            "2\n2 1 3 100 200000000 2\n3 1 3 100 200000000 2\n4 1 3 100 150000000 2\n\nPlease order the flows!\n",
        )
        .unwrap();
        assert_eq!((f.flows.len(), f.trailing_lines), (2, 2));
    }

    #[test]
    fn what_it_writes_reads_back_the_same() {
        let f = parse("3\n2 1 3 100 200000000 2\n3 1 3 100 150000000 2\n0 4 0 200 1 3.000000001\n").unwrap();
        let back = parse(&f.emit()).unwrap();
        assert_eq!(back, f);
        assert!(f.emit().starts_with("3\n2 1 3 100 200000000 2.000000000\n"));
    }

    #[test]
    fn bad_flows_are_refused_with_the_line_and_the_reason() {
        let refused = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(refused(""), "flow.txt:0: empty file: the first line is the flow count");
        assert_eq!(
            refused("1\n1 2 3 100 5000\n"),
            "flow.txt:2: a flow is `src dst pg dport size start_s`, found 5 values"
        );
        assert_eq!(refused("1\n1 2 3 100 -5 2\n"), "flow.txt:2: size `-5` is not a valid number");
        assert_eq!(refused("1\n1 1 3 100 5 2\n"), "flow.txt:2: flow from host 1 to itself");
        assert_eq!(refused("1\n1 2 8 100 5 2\n"), "flow.txt:2: pg 8 is not a priority (0 to 7)");
        assert_eq!(refused("1\n1 2 3 100 0 2\n"), "flow.txt:2: a flow of 0 bytes never completes");
        assert_eq!(
            refused("1\n1 2 3 100 5 2.0000000001\n"),
            "flow.txt:2: start: `2.0000000001` s is not a whole number of nanoseconds"
        );
        assert_eq!(
            refused("2\n1 2 3 100 5 2.1\n\n2 1 3 100 5 2\n"),
            "flow.txt:4: starts at 2.000000000 s, before the flow above (2.100000000 s): ns-3 needs them in order"
        );
    }

    #[test]
    fn ends_are_checked_against_the_topology() {
        let topology = Topology::parse("3 1 2\n2\n0 2 1Gbps 1us 0\n1 2 1Gbps 1us 0\n", Path::new("t")).unwrap();
        let check = |text: &str| parse(text).unwrap().check_hosts(&topology, Path::new("flow.txt"));
        assert_eq!(check("1\n0 1 3 100 5 2\n"), Ok(()));
        assert_eq!(
            check("1\n0 2 3 100 5 2\n").unwrap_err().to_string(),
            "flow.txt:2: dst 2 is a switch of the topology, not a host"
        );
        assert_eq!(
            check("1\n9 0 3 100 5 2\n").unwrap_err().to_string(),
            "flow.txt:2: src 9 is not a node of the topology (0 to 2)"
        );
    }
}
