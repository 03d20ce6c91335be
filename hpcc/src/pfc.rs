//! `pfc.txt` as HPCC's `third.cc` writes it (`get_pfc`): a line per PAUSE or RESUME a
//! device took, `time_ns node node_type if_index type` (node type 1 a switch, 0 a host; type
//! 1 pause, 0 resume), and the time the devices spent paused, the figure HPCC's papers give
//! per scheme.

use crate::FileError;
use crate::error::{parse_token, token_lines};
use std::collections::BTreeMap;
use std::path::Path;

/// One line of a `pfc.txt`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEvent {
    pub time_ns: u64,
    pub node: u32,
    pub switch: bool,
    pub interface: u32,
    pub pause: bool,
}

/// Reads a `pfc.txt`, ours or HPCC's.
pub fn parse(text: &str, file: &Path) -> Result<Vec<PfcEvent>, FileError> {
    token_lines(text)
        .map(|(line, tokens)| {
            let [time, node, kind, interface, pause] = tokens[..] else {
                return Err(FileError::at(
                    file,
                    line,
                    format!("a PFC event is `time node node_type if_index type`, found {} values", tokens.len()),
                ));
            };
            let flag = |token: &str, what: &str| match token {
                "0" => Ok(false),
                "1" => Ok(true),
                _ => Err(FileError::at(file, line, format!("{what} `{token}` is neither 0 nor 1"))),
            };
            Ok(PfcEvent {
                time_ns: parse_token(file, line, time, "time")?,
                node: parse_token(file, line, node, "node")?,
                switch: flag(kind, "node type")?,
                interface: parse_token(file, line, interface, "interface")?,
                pause: flag(pause, "type")?,
            })
        })
        .collect()
}

/// Reads `file`.
pub fn read(file: &Path) -> Result<Vec<PfcEvent>, FileError> {
    let text = std::fs::read_to_string(file).map_err(|e| FileError::at(file, 0, e.to_string()))?;
    parse(&text, file)
}

/// Nanoseconds spent paused, summed over every device (node and interface): from each
/// pause to the device's next resume, or to `end_ns` when none follows. A pause while paused
/// extends nothing: a device is paused or not, as ns-3 logs it per class.
pub fn paused_ns(events: &[PfcEvent], end_ns: u64) -> u64 {
    let mut since: BTreeMap<(u32, u32), u64> = BTreeMap::new();
    let mut total = 0;
    let mut sorted = events.to_vec();
    sorted.sort_by_key(|e| e.time_ns);
    for event in sorted {
        let device = (event.node, event.interface);
        match (event.pause, since.get(&device)) {
            (true, None) => {
                since.insert(device, event.time_ns);
            }
            (false, Some(&from)) => {
                total += event.time_ns.saturating_sub(from);
                since.remove(&device);
            }
            _ => {}
        }
    }
    total + since.values().map(|&from| end_ns.saturating_sub(from)).sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_last_until_the_device_resumes_or_the_end() {
        let text = "2000000100 320 1 3 1\n2000000150 320 1 3 1\n2000000400 320 1 3 0\n2000000200 7 0 1 1\n";
        let events = parse(text, Path::new("pfc.txt")).unwrap();
        assert_eq!(events[3], PfcEvent { time_ns: 2_000_000_200, node: 7, switch: false, interface: 1, pause: true });
        // Switch 320's port 3: 300 ns (the second pause changes nothing); host 7: to the end.
        assert_eq!(paused_ns(&events, 2_000_001_000), 300 + 800);
        assert_eq!(paused_ns(&[], 5), 0);
    }

    #[test]
    fn bad_lines_are_refused_with_the_line_and_why() {
        let error = parse("1 2 1 3 1\n1 2 1 3\n", Path::new("pfc.txt")).unwrap_err();
        assert_eq!(error.to_string(), "pfc.txt:2: a PFC event is `time node node_type if_index type`, found 4 values");
        let error = parse("1 2 5 3 1\n", Path::new("pfc.txt")).unwrap_err();
        assert_eq!(error.to_string(), "pfc.txt:1: node type `5` is neither 0 nor 1");
    }
}
