//! HPCC's `fct.txt`: one completed flow a line, written by `qp_finish` in its
//! `scratch/third.cc` as `%08x %08x %u %u %lu %lu %lu %lu`: source and destination IPv4
//! addresses in hex (host n is 11.0.x.1 with x = n, `node_id_to_ip`), source and destination
//! ports, size in bytes, start in ns, FCT in ns, and the FCT the flow would have alone on
//! the network ("standalone", [`standalone_fct_ns`]).

use crate::error::{FileError, token_lines};
use std::fmt::Write as _;
use std::path::Path;

/// Bytes of headers HPCC charges every packet of a flow in the standalone FCT: 14 Ethernet,
/// 20 IPv4, 8 UDP, 2 priority group and 4 sequence number (`CustomHeader`'s whole header
/// without the INT header).
pub const HEADER_BYTES: u64 = 14 + 20 + 8 + 2 + 4;

/// HPCC's payload per packet (`PACKET_PAYLOAD_SIZE` of every `run.py` preset).
pub const DEFAULT_PAYLOAD: u64 = 1000;

/// One completed flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FctRecord {
    /// Source node id (written as its IPv4 address).
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
    pub size: u64,
    pub start_ns: u64,
    pub fct_ns: u64,
    pub standalone_ns: u64,
}

/// A node's address in HPCC's simulator: 11.0.0.1 + (id / 256) << 16 + (id % 256) << 8.
pub fn node_ip(id: u32) -> u32 {
    0x0b00_0001 + (id / 256) * 0x0001_0000 + (id % 256) * 0x0000_0100
}

/// The node id of one of those addresses (`ip_to_node_id`).
pub fn ip_node(ip: u32) -> u32 {
    (ip >> 8) & 0xffff
}

/// The base RTT HPCC gives a pair of hosts (`third.cc`, "get BDP and delay"): twice the
/// one-way propagation delay plus one `payload`-byte packet's transmission time at every hop
/// of one direction, each hop's in whole nanoseconds. `path` is that direction's links,
/// (delay ns, rate bit/s) each.
pub fn base_rtt_ns(path: &[(u64, u64)], payload: u64) -> u64 {
    let propagation: u64 = path.iter().map(|&(delay, _)| delay).sum();
    let transmission: u64 = path.iter().map(|&(_, bps)| payload * 8_000_000_000 / bps).sum();
    2 * propagation + transmission
}

/// The FCT of a flow of `size` bytes alone on the network, as HPCC's `qp_finish` computes
/// it: the base RTT plus the flow's bytes with HPCC's headers on every `payload`-byte
/// packet at the path's slowest rate `bottleneck_bps`.
pub fn standalone_fct_ns(base_rtt_ns: u64, bottleneck_bps: u64, size: u64, payload: u64) -> u64 {
    let packets = size.saturating_sub(1) / payload + 1;
    let bytes = size + packets * HEADER_BYTES;
    base_rtt_ns + bytes * 8_000_000_000 / bottleneck_bps
}

impl FctRecord {
    /// The line `qp_finish` writes.
    pub fn emit(&self) -> String {
        format!(
            "{:08x} {:08x} {} {} {} {} {} {}",
            node_ip(self.src),
            node_ip(self.dst),
            self.sport,
            self.dport,
            self.size,
            self.start_ns,
            self.fct_ns,
            self.standalone_ns
        )
    }
}

/// Writes `records`, one a line.
pub fn emit(records: &[FctRecord]) -> String {
    let mut text = String::new();
    for r in records {
        writeln!(text, "{}", r.emit()).expect("a String takes it");
    }
    text
}

/// Reads an `fct.txt`, ours or HPCC's.
pub fn parse(text: &str, file: &Path) -> Result<Vec<FctRecord>, FileError> {
    let at = |line: usize, reason: String| FileError::at(file, line, reason);
    token_lines(text)
        .map(|(line, tokens)| {
            let [sip, dip, sport, dport, size, start, fct, standalone] = tokens[..] else {
                return Err(at(
                    line,
                    format!(
                        "a completed flow is `sip dip sport dport size start_ns fct_ns standalone_ns`, found {} values",
                        tokens.len()
                    ),
                ));
            };
            let ip = |token: &str, what: &str| {
                u32::from_str_radix(token, 16)
                    .map_err(|_| at(line, format!("{what} `{token}` is not an IPv4 address in hex")))
            };
            let number = |token: &str, what: &str| {
                token.parse::<u64>().map_err(|_| at(line, format!("{what} `{token}` is not a whole number")))
            };
            let port = |token: &str, what: &str| {
                token.parse::<u16>().map_err(|_| at(line, format!("{what} `{token}` is not a port")))
            };
            let record = FctRecord {
                src: ip_node(ip(sip, "sip")?),
                dst: ip_node(ip(dip, "dip")?),
                sport: port(sport, "sport")?,
                dport: port(dport, "dport")?,
                size: number(size, "size")?,
                start_ns: number(start, "start")?,
                fct_ns: number(fct, "fct")?,
                standalone_ns: number(standalone, "standalone fct")?,
            };
            if record.standalone_ns == 0 {
                return Err(at(line, "a standalone FCT of 0 makes no slowdown".into()));
            }
            Ok(record)
        })
        .collect()
}

/// Reads `file`.
pub fn read(file: &Path) -> Result<Vec<FctRecord>, FileError> {
    let text = std::fs::read_to_string(file).map_err(|e| FileError::at(file, 0, e.to_string()))?;
    parse(&text, file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_number_hosts_as_hpcc_does() {
        assert_eq!(format!("{:08x}", node_ip(0)), "0b000001");
        assert_eq!(format!("{:08x}", node_ip(5)), "0b000501");
        assert_eq!(format!("{:08x}", node_ip(319)), "0b013f01");
        for id in [0, 1, 255, 256, 319, 65_535] {
            assert_eq!(ip_node(node_ip(id)), id);
        }
    }

    /// HPCC's fat-tree: host–ToR 100 Gbit/s, ToR–Agg–Core 400 Gbit/s, 1 µs each; a flow
    /// through the core crosses 6 links.
    #[test]
    fn the_standalone_fct_by_hpccs_rule() {
        let path = [(1000, 100_000_000_000), (1000, 400_000_000_000), (1000, 400_000_000_000)];
        let path: Vec<_> = path.iter().chain(path.iter().rev()).copied().collect();
        // 2 × 6 µs + 1000 B × 8 / 100G = 80 ns twice + 20 ns four times.
        assert_eq!(base_rtt_ns(&path, 1000), 12_000 + 160 + 80);
        // 2500 B in 3 packets: 2500 + 3 × 48 = 2644 B = 211.52 ns at 100 Gbit/s, truncated.
        assert_eq!(standalone_fct_ns(12_240, 100_000_000_000, 2500, 1000), 12_240 + 211);
        assert_eq!(standalone_fct_ns(0, 100_000_000_000, 1000, 1000), 83);
        assert_eq!(standalone_fct_ns(0, 100_000_000_000, 1001, 1000), 87);
    }

    #[test]
    fn lines_read_back_as_written() {
        let r = FctRecord {
            src: 5,
            dst: 300,
            sport: 10000,
            dport: 100,
            size: 2500,
            start_ns: 2_000_001_000,
            fct_ns: 15_000,
            standalone_ns: 12_451,
        };
        assert_eq!(r.emit(), "0b000501 0b012c01 10000 100 2500 2000001000 15000 12451");
        assert_eq!(parse(&emit(std::slice::from_ref(&r)), Path::new("fct.txt")).unwrap(), vec![r]);
    }

    #[test]
    fn bad_lines_are_refused_with_the_line_and_the_reason() {
        let refused = |text: &str| parse(text, Path::new("fct.txt")).unwrap_err().to_string();
        assert_eq!(
            refused("0b000501 0b000601 1 100 5 0 9\n"),
            "fct.txt:1: a completed flow is `sip dip sport dport size start_ns fct_ns standalone_ns`, found 7 values"
        );
        assert_eq!(
            refused("\n0b00050g 0b000601 1 100 5 0 9 9\n"),
            "fct.txt:2: sip `0b00050g` is not an IPv4 address in hex"
        );
        assert_eq!(refused("0b000501 0b000601 70000 100 5 0 9 9\n"), "fct.txt:1: sport `70000` is not a port");
        assert_eq!(refused("0b000501 0b000601 1 100 5 0 9 0\n"), "fct.txt:1: a standalone FCT of 0 makes no slowdown");
    }
}
