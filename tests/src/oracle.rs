//! Independent decoders: `tshark` (Wireshark's dissectors) and scapy. Both must be installed
//! (scripts/setup.sh does it); a missing oracle fails the test instead of skipping it.

use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Writes `frames` to a pcap file.
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    let file = std::fs::File::create(path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
    let header = PcapHeader { datalink: DataLink::ETHERNET, ..PcapHeader::default() };
    let mut writer = PcapWriter::with_header(file, header).expect("pcap header");
    for (index, frame) in frames.iter().enumerate() {
        writer
            .write_packet(&PcapPacket::new(Duration::from_micros(index as u64), frame.len() as u32, frame))
            .expect("pcap write");
    }
}

/// Reads every frame of a pcap file.
pub fn read_pcap(path: &Path) -> Vec<Vec<u8>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("open {}: {e}", path.display()));
    let mut reader = pcap_file::pcap::PcapReader::new(file).expect("pcap header");
    let mut frames = Vec::new();
    while let Some(packet) = reader.next_packet() {
        frames.push(packet.expect("pcap record").data.into_owned());
    }
    frames
}

fn run(program: &str, args: &[&str], what: &str) -> String {
    let output = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {program} ({what}): {e}; run scripts/setup.sh to install it"));
    assert!(output.status.success(), "{program} {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).expect("utf-8 output")
}

/// `tshark -T fields` over `pcap`: one row per frame, one column per field (repeated
/// occurrences joined by commas). `prefs` are `-o name:value` preferences.
pub fn tshark_fields(pcap: &Path, fields: &[&str], prefs: &[&str]) -> Vec<Vec<String>> {
    tshark_fields_with(pcap, fields, prefs, &[])
}

fn tshark_fields_with(pcap: &Path, fields: &[&str], prefs: &[&str], extra: &[&str]) -> Vec<Vec<String>> {
    let mut args = vec!["-r", pcap.to_str().unwrap(), "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a"];
    args.extend_from_slice(extra);
    for pref in prefs {
        args.extend(["-o", pref]);
    }
    for field in fields {
        args.extend(["-e", field]);
    }
    run("tshark", &args, "Wireshark dissectors as oracle")
        .lines()
        .map(|line| line.split('\t').map(str::to_string).collect())
        .collect()
}

/// `tshark -T fields` with the project's Lua dissector loaded, as a user opening a capture
/// of our frames does.
pub fn tshark_fields_with_dissector(pcap: &Path, fields: &[&str]) -> Vec<Vec<String>> {
    let script = format!("lua_script:{}", project_dissector().display());
    tshark_fields_with(pcap, fields, &[], &["-X", &script])
}

/// The project's Wireshark dissector, contrib/wireshark/pfcswitch.lua.
pub fn project_dissector() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../contrib/wireshark/pfcswitch.lua")
}

/// An OFC TLV as the project's Lua dissector shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DissectedOfc {
    /// 1 PAUSE, 2 RESUME.
    pub op: u8,
    pub priority: u8,
    pub coarse: bool,
    pub more: bool,
    /// (source, destination) MAC addresses as tshark prints them.
    pub flows: Vec<(String, String)>,
}

/// Per frame of `pcap`, the OFC TLV tshark reads with the project's Lua dissector loaded
/// (`None` for frames without one), and the expert messages it raised.
pub fn tshark_ofc(pcap: &Path) -> Vec<(Option<DissectedOfc>, String)> {
    let script = format!("lua_script:{}", project_dissector().display());
    let fields = [
        "pfcswitch.ofc.op",
        "pfcswitch.ofc.priority",
        "pfcswitch.ofc.flags.coarse",
        "pfcswitch.ofc.flags.more",
        "pfcswitch.ofc.flow.src",
        "pfcswitch.ofc.flow.dst",
        "_ws.expert.message",
    ];
    let split = |text: &str| text.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect::<Vec<_>>();
    let truthy = |text: &str| text == "1" || text.eq_ignore_ascii_case("true");
    tshark_fields_with(pcap, &fields, &[], &["-X", &script])
        .into_iter()
        .map(|row| {
            let ofc = (!row[0].is_empty()).then(|| DissectedOfc {
                op: row[0].parse().expect("op"),
                priority: row[1].parse().expect("priority"),
                coarse: truthy(&row[2]),
                more: truthy(&row[3]),
                flows: split(&row[4]).into_iter().zip(split(&row[5])).collect(),
            });
            (ofc, row.get(6).cloned().unwrap_or_default())
        })
        .collect()
}

/// Per frame of `pcap`, the fields `prefix.NAME` tshark reads with the project's Lua
/// dissector loaded, by name, with `expert` for the frame's expert messages; empty values
/// for frames without them.
fn tshark_project_fields(
    pcap: &Path,
    prefix: &str,
    names: &[&'static str],
) -> Vec<std::collections::BTreeMap<&'static str, String>> {
    let script = format!("lua_script:{}", project_dissector().display());
    let mut fields: Vec<String> = names.iter().map(|n| format!("{prefix}.{n}")).collect();
    fields.push("_ws.expert.message".into());
    let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
    tshark_fields_with(pcap, &fields, &[], &["-X", &script])
        .into_iter()
        .map(|row| {
            let mut read: std::collections::BTreeMap<&'static str, String> =
                names.iter().copied().zip(row.iter().cloned()).collect();
            read.insert("expert", row.get(names.len()).cloned().unwrap_or_default());
            read
        })
        .collect()
}

/// Per frame of `pcap`, the CNM fields tshark reads with the project's Lua dissector loaded
/// (`qntz_fb`, `cpid` as 16 hex digits, `q_offset`, `q_delta`, `encap_priority`,
/// `encap_dst`, `msdu_len`, `expert`).
pub fn tshark_cnm(pcap: &Path) -> Vec<std::collections::BTreeMap<&'static str, String>> {
    let names = ["qntz_fb", "cpid", "q_offset", "q_delta", "encap_priority", "encap_dst", "msdu_len"];
    let mut rows = tshark_project_fields(pcap, "pfcswitch.cnm", &names);
    for read in &mut rows {
        // tshark prints the uint64 as 0x-prefixed hex; the checker as bare hex digits.
        if let Some(cpid) = read.get_mut("cpid") {
            *cpid = format!("{:016x}", u64::from_str_radix(cpid.trim_start_matches("0x"), 16).unwrap_or(0));
        }
    }
    rows
}

/// Per frame of `pcap`, the FECN probe fields tshark reads with the project's Lua dissector
/// loaded (`subtype`, `hops`, `flow_id`, `sequence`, `rate_kbps`, `bottleneck`,
/// `timestamp_ns`, `expert`).
pub fn tshark_fecn(pcap: &Path) -> Vec<std::collections::BTreeMap<&'static str, String>> {
    let names = ["subtype", "hops", "flow_id", "sequence", "rate_kbps", "bottleneck", "timestamp_ns"];
    tshark_project_fields(pcap, "pfcswitch.fecn", &names)
}

/// The expert messages (warnings, errors: "Malformed Packet", ...) tshark raises per frame.
pub fn tshark_expert_messages(pcap: &Path) -> Vec<String> {
    tshark_fields(pcap, &["_ws.expert.message"], &[]).into_iter().map(|row| row.join(" ")).collect()
}

/// The expert messages tshark raises per frame with the project's Lua dissector loaded.
pub fn tshark_expert_messages_with_dissector(pcap: &Path) -> Vec<String> {
    let fields = tshark_fields_with_dissector(pcap, &["_ws.expert.message"]);
    fields.into_iter().map(|row| row.join(" ")).collect()
}

/// The INT decoder (`oracles/int_check.py`, plain Python from docs/frames.md, not
/// pfcswitch_wire) over `pcap`: one JSON value per frame with INT, with the rules it breaks
/// in `errors`.
pub fn int_check(pcap: &Path) -> Vec<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/int_check.py");
    run(&python(), &[script.to_str().unwrap(), pcap.to_str().unwrap()], "the INT decoder")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("int_check.py printed `{line}`: {e}")))
        .collect()
}

/// The interpreter with scapy: Debian's python3 (python3-scapy), or `$PFCSWITCH_PYTHON`.
fn python() -> String {
    std::env::var("PFCSWITCH_PYTHON").unwrap_or_else(|_| "/usr/bin/python3".into())
}

fn scapy_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/scapy_oracle.py")
}

/// Runs the scapy oracle with `args`; returns one JSON value per output line.
pub fn scapy(args: &[&str]) -> Vec<serde_json::Value> {
    let script = scapy_script();
    let mut full = vec![script.to_str().unwrap()];
    full.extend_from_slice(args);
    run(&python(), &full, "scapy as oracle")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("scapy printed `{line}`: {e}")))
        .collect()
}

/// The CNM checker (`oracles/cnm_check.py`, plain Python, not pfcswitch_wire) over `pcap`, with
/// the CPs' Qeq and w: one JSON value per frame, with the rules it breaks in `errors`.
pub fn cnm_check(pcap: &Path, qeq: u64, w: u32) -> Vec<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/cnm_check.py");
    let args = [script.to_str().unwrap(), pcap.to_str().unwrap(), &qeq.to_string(), &w.to_string()];
    run(&python(), &args, "the CNM checker")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("cnm_check.py printed `{line}`: {e}")))
        .collect()
}

/// The RoCEv2 oracle (`oracles/roce_check.py`: scapy's contrib/roce.py, not pfcswitch_wire)
/// over `pcap`: one JSON value per frame, with its BTH and AETH fields and `icrc_ok`.
pub fn roce_check(pcap: &Path) -> Vec<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/roce_check.py");
    run(&python(), &[script.to_str().unwrap(), pcap.to_str().unwrap()], "the RoCEv2 checker")
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("roce_check.py printed `{line}`: {e}")))
        .collect()
}

/// Python's prometheus_client OpenMetrics parser (Debian python3-prometheus-client), which is
/// strict (`# EOF`, family types, sample suffixes): fails the test on any complaint; returns
/// the families it read.
pub fn assert_openmetrics_parses(exposition: &str) -> usize {
    let script = "import sys\nfrom prometheus_client.openmetrics.parser import text_string_to_metric_families as p\n\
                  print(len(list(p(sys.stdin.read()))))";
    let mut python = std::process::Command::new(python())
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("python3 (scripts/setup.sh installs it)");
    std::io::Write::write_all(python.stdin.as_mut().unwrap(), exposition.as_bytes()).unwrap();
    let output = python.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the OpenMetrics parser (python3-prometheus-client) refused it: {stderr}");
    String::from_utf8_lossy(&output.stdout).trim().parse().expect("a family count")
}

/// `promtool check metrics` on an exposition: fails the test on any complaint.
pub fn assert_promtool_clean(metrics: &str) {
    let mut promtool = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool (scripts/setup.sh installs it)");
    std::io::Write::write_all(promtool.stdin.as_mut().unwrap(), metrics.as_bytes()).unwrap();
    let output = promtool.wait_with_output().unwrap();
    let complaints = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && complaints.trim().is_empty(), "promtool: {complaints}");
}

/// HPCC's `fct_analysis.py` ported to Python 3 (`tests/oracles/fct_analysis.py`): its table
/// for `args` (options, then fct.txt files).
pub fn fct_analysis(args: &[&str]) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/fct_analysis.py");
    let mut all = vec![script.to_str().expect("a UTF-8 path")];
    all.extend_from_slice(args);
    run("python3", &all, "HPCC's fct_analysis.py as oracle")
}

/// `tests/oracles/hpcc_standalone.py`: every line of `fct` whose standalone FCT is not HPCC's
/// rule on `topology` (its `third.cc`, ported), with the lines read.
pub fn hpcc_standalone(topology: &Path, fct: &Path) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("oracles/hpcc_standalone.py");
    let args = [script.to_str(), topology.to_str(), fct.to_str()].map(|a| a.expect("a UTF-8 path"));
    serde_json::from_str(&run("python3", &args, "HPCC's standalone-FCT rule as oracle")).expect("JSON")
}
