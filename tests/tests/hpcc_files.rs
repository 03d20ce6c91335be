//! HPCC's ns-3 files through `pfcswitch hpcc`: its FCT analysis checked against the Python 3
//! port of `fct_analysis.py` (`tests/oracles/fct_analysis.py`, awk and sort included) on a
//! file in HPCC's own format and on files pfcswitch wrote; `traffic-gen`'s flow file read
//! back against HPCC's fat-tree; bad files refused with the file, the line and the reason.
//! No root or namespaces needed.

use pfcswitch_hpcc::fct::{self, FctRecord};
use pfcswitch_link::rng::Rng;
use pfcswitch_tests::oracle::{fct_analysis, hpcc_standalone};
use pfcswitch_tests::scenario::{pfcswitch_scenario, results, scenario_file};
use pfcswitch_tests::topology::{binary, repo};
use std::path::Path;
use std::process::{Command, Output};

fn pfcswitch(args: &[&str]) -> Output {
    Command::new(binary("pfcswitch")).args(args).output().expect("run pfcswitch")
}

fn stdout(args: &[&str]) -> String {
    let output = pfcswitch(args);
    assert!(output.status.success(), "pfcswitch {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap()
}

/// Ours and the oracle's tables for the same options and files, compared byte for byte.
fn assert_tables_agree(options: &[&str], files: &[&Path]) {
    let files: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let oracle_args: Vec<&str> = options.iter().chain(&files).copied().collect();
    let ours: Vec<&str> = ["hpcc", "fct-analysis"].iter().chain(&oracle_args).copied().collect();
    let ours: Vec<&str> = ours.iter().map(|a| if *a == "-s" { "--step" } else { a }).collect();
    let (mine, theirs) = (stdout(&ours), fct_analysis(&oracle_args));
    assert!(!theirs.is_empty());
    assert_eq!(mine, theirs, "options {options:?}");
}

/// `tests/fixtures/hpcc-fct.txt`: 400 lines in `qp_finish`'s format, written by a Python
/// snippet with `%08x %08x %u %u %lu %lu %lu %lu` (hosts as 11.0.x.1, 500 KB flows on dport
/// 200, FCTs from 0.9× to 50× the standalone one, sizes repeated).
#[test]
fn the_fct_analysis_agrees_with_hpccs_script_on_a_file_in_hpccs_format() {
    let file = repo().join("tests/fixtures/hpcc-fct.txt");
    for options in [&[][..], &["-t", "1"], &["-t", "2", "-s", "10"], &["-s", "3"], &["-s", "20", "-T", "2500000000"]] {
        assert_tables_agree(options, &[&file]);
    }
}

/// Records pfcswitch wrote, two files as two column groups: many equal sizes (ties broken
/// by the line's bytes), slowdowns below 1 and whole-number slowdowns.
#[test]
fn the_fct_analysis_agrees_with_hpccs_script_on_files_pfcswitch_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(11);
    let files: Vec<_> = (0..2)
        .map(|n| {
            let records: Vec<FctRecord> = (0..1000)
                .map(|i| {
                    let standalone_ns = 10_000 + rng.below(50_000) as u64;
                    let fct_ns = match rng.below(4) {
                        0 => standalone_ns * (1 + rng.below(5) as u64),
                        1 => standalone_ns - rng.below(1000) as u64,
                        _ => standalone_ns + rng.below(2_000_000) as u64,
                    };
                    let size = [1_000, 2_000, 64_000][rng.below(3)]
                        + if rng.below(2) == 0 { 0 } else { rng.below(1_000_000) as u64 };
                    let dport = if rng.below(10) == 0 { 200 } else { 100 };
                    let start_ns = 2_000_000_000 + i * 10_000;
                    FctRecord {
                        src: (i % 320) as u32,
                        dst: 5,
                        sport: 10_000,
                        dport,
                        size,
                        start_ns,
                        fct_ns,
                        standalone_ns,
                    }
                })
                .collect();
            let path = dir.path().join(format!("fct{n}.txt"));
            std::fs::write(&path, fct::emit(&records)).unwrap();
            path
        })
        .collect();
    let files: Vec<&Path> = files.iter().map(|f| f.as_path()).collect();
    assert_tables_agree(&[], &files);
    assert_tables_agree(&["-t", "1", "-s", "25"], &files);
}

/// WebSearch at 50 % with an incast class on a k = 4 fat-tree at 10 Gbit/s, 1 µs cables:
/// `simulate` writes fct.txt beside results.json, a line per finished message with its size,
/// start (2 s + its start) and FCT as results.json has them, in finishing order, incast
/// messages on dport 200; the standalone FCT is HPCC's rule: a base RTT of 2 × 1 µs + 800 ns
/// per hop (a 1,000-byte payload at 10 Gbit/s) over 2, 4 or 6 hops, plus the bytes with 48
/// per 1,000 at 10 Gbit/s. The oracle's table of the file is ours.
#[test]
fn simulate_writes_an_fct_txt_that_hpccs_analysis_reads() {
    let dir = tempfile::tempdir().unwrap();
    let text = "name = \"websearch-k4\"\ndescription = \"WebSearch on a k = 4 fat-tree\"\ntopology = \"fabric\"\n\
        speed = \"10Gbps\"\nduration = \"10ms\"\ndrain = \"500ms\"\n\
        [fabric]\nkind = \"fat-tree\"\nk = 4\nswitch = \"@CONFIGS@/fabric/websearch.toml\"\n\
        [transport]\nrto = \"1ms\"\ndctcp = {}\n\
        [[class]]\nname = \"web\"\nkind = \"poisson\"\npriority = 3\nsizes = \"websearch\"\nload = 0.5\n\
        [[class]]\nname = \"incast\"\nkind = \"query\"\npriority = 3\nsize = \"64KB\"\nrate = 500.0\nfan_in = 8\n";
    let out = dir.path().join("sim");
    pfcswitch_scenario(&["simulate", &scenario_file(dir.path(), text)], &out);
    let results = results(&out);
    let finished: Vec<&serde_json::Value> =
        (results["messages"].as_array().unwrap().iter()).filter(|m| m["fct_ms"].is_number()).collect();
    let fct_file = out.join("fct.txt");
    let records = fct::read(&fct_file).unwrap();
    assert_eq!(records.len(), finished.len(), "a line per finished message");
    assert!(records.len() > 50, "{} flows", records.len());
    let mut incast = 0;
    for r in &records {
        let close = |a: f64, b: u64| (a - b as f64).abs() <= 2.0;
        let m = finished
            .iter()
            .find(|m| {
                m["size"] == r.size
                    && close(m["fct_ms"].as_f64().unwrap() * 1e6, r.fct_ns)
                    && close(m["start_seconds"].as_f64().unwrap() * 1e9 + 2e9, r.start_ns)
            })
            .unwrap_or_else(|| panic!("{r:?} is a message of results.json"));
        assert_eq!(m["class"] == "incast", r.dport == 200, "{r:?}");
        incast += usize::from(r.dport == 200);
        let bytes = r.size + r.size.div_ceil(1000) * 48;
        let base_rtt = r.standalone_ns - bytes * 8 / 10;
        assert!([2, 4, 6].iter().any(|hops| base_rtt == hops * 1000 * 2 + hops * 800), "{r:?}: base RTT {base_rtt}");
    }
    assert!(incast > 0, "incast messages on dport 200");
    let finish: Vec<u64> = records.iter().map(|r| r.start_ns + r.fct_ns).collect();
    assert!(finish.windows(2).all(|w| w[0] <= w[1]), "in finishing order");
    assert_tables_agree(&["-s", "10"], &[&fct_file]);
    assert_tables_agree(&["-t", "1", "-s", "50"], &[&fct_file]);
}

/// An experiment as HPCC's simulator takes it: a `topology.txt` numbered as its
/// `mix/topology.txt` is (switch 0, hosts 1–4, 100 Gbit/s, 1 µs) and a `flow.txt` with a
/// 3:1 incast on dport 200 and a flow on dport 100, run on the simulator with `[fabric]
/// kind = "hpcc"` and a `flows` class: fct.txt has every flow with the file's node ids, size,
/// dport and start, and ns-3's source ports (10000 and up per pair). Windows of 400 segments
/// (no limit on a 500 KB flow, as HPCC's senders without a window) let the incast fill each
/// sender's ingress past XOFF: pfc.txt logs the pauses where ns-3 would, at the senders.
#[test]
fn an_experiment_from_hpccs_files_runs_in_the_simulator_and_comes_back_as_fct_txt() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("topology.txt"),
        "5 1 4\n0\n0 1 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n0 4 100Gbps 0.001ms 0\nnotes ns-3 never reads\n",
    )
    .unwrap();
    let flows = "5\n2 1 3 200 500000 2\n3 1 3 200 500000 2\n4 1 3 200 500000 2\n2 4 3 100 10000 2.0001\n2 4 3 100 20000 2.0002\n";
    std::fs::write(dir.path().join("flow.txt"), flows).unwrap();
    let text = "name = \"hpcc-files\"\ndescription = \"HPCC's files\"\ntopology = \"fabric\"\nspeed = \"100Gbps\"\n\
        duration = \"1ms\"\ndrain = \"100ms\"\nqlen_interval = \"100ns\"\n\
        [fabric]\nkind = \"hpcc\"\nfile = \"topology.txt\"\nswitch = \"@CONFIGS@/fabric/hpcc.toml\"\n\
        [transport]\nrto = \"1ms\"\nwindow = 400\n\
        [[class]]\nname = \"hpcc\"\nkind = \"flows\"\npriority = 3\nfile = \"flow.txt\"\n";
    let out = dir.path().join("sim");
    pfcswitch_scenario(&["simulate", &scenario_file(dir.path(), text)], &out);
    let mut records = fct::read(&out.join("fct.txt")).unwrap();
    records.sort_by_key(|r| (r.start_ns, r.src));
    let got: Vec<_> = records.iter().map(|r| (r.src, r.dst, r.sport, r.dport, r.size, r.start_ns)).collect();
    assert_eq!(
        got,
        vec![
            (2, 1, 10000, 200, 500_000, 2_000_000_000),
            (3, 1, 10000, 200, 500_000, 2_000_000_000),
            (4, 1, 10000, 200, 500_000, 2_000_000_000),
            (2, 4, 10000, 100, 10_000, 2_000_100_000),
            (2, 4, 10001, 100, 20_000, 2_000_200_000),
        ]
    );
    // 1.5 MB into one 100 Gbit/s port takes at least 120 µs: the incast's last flow is that slow.
    let slowest = records.iter().filter(|r| r.dport == 200).map(|r| r.fct_ns).max().unwrap();
    assert!(slowest >= 120_000, "{slowest} ns");

    // pfc.txt: the incast fills the switch past XOFF, which pauses the senders (nodes 2–4,
    // hosts: type 0, interface 1); each host's lines are its PFC frames, pause then resume.
    let results = results(&out);
    let pfc = std::fs::read_to_string(out.join("pfc.txt")).unwrap();
    let lines: Vec<Vec<u64>> = pfc.lines().map(|l| l.split(' ').map(|f| f.parse().unwrap()).collect()).collect();
    assert!(!lines.is_empty(), "the incast paused its senders");
    for node in 1..=4u64 {
        let host = &results["endpoints"][(node - 1) as usize];
        let mine: Vec<&Vec<u64>> = lines.iter().filter(|l| l[1] == node).collect();
        assert_eq!(
            mine.len() as u64,
            host["pfc_rx"].as_u64().unwrap(),
            "node {node}: a line per PFC frame it received"
        );
        assert!(mine.iter().all(|l| l[0] >= 2_000_000_000 && (l[2], l[3]) == (0, 1)), "{mine:?}");
        let kinds: Vec<u64> = mine.iter().map(|l| l[4]).collect();
        assert!(
            kinds.chunks(2).all(|pair| pair[0] == 1 && pair.get(1).is_none_or(|&k| k == 0)),
            "node {node}: {kinds:?}"
        );
    }
    assert!(lines.iter().all(|l| l[1] != 1), "the receiver is never paused");
    let standalone = hpcc_standalone(&dir.path().join("topology.txt"), &out.join("fct.txt"));
    assert_eq!(
        (standalone["lines"].as_u64(), standalone["wrong"].as_array().map(Vec::len)),
        (Some(5), Some(0)),
        "{standalone}"
    );

    // qlen.txt, every 100 ns: a dump at 2 s (one sample, every queue empty) and one at the
    // last sample; switch 0's interface 1 leads to the incast's receiver, whose queue passes
    // 100 KB; interfaces 2 and 3 carry only ACKs, never a KB.
    let qlen = std::fs::read_to_string(out.join("qlen.txt")).unwrap();
    let dumps: Vec<&str> = qlen.split("time: ").filter(|d| !d.is_empty()).collect();
    assert_eq!(dumps.len(), 2, "{qlen:.300}");
    assert_eq!(dumps[0], "2000000000\n0 1 1\n0 2 1\n0 3 1\n0 4 1\n");
    let mut last = dumps[1].lines();
    let time: u64 = last.next().unwrap().parse().unwrap();
    let samples = (time - 2_000_000_000) / 100 + 1;
    for (i, line) in last.enumerate() {
        let fields: Vec<u64> = line.split(' ').map(|f| f.parse().unwrap()).collect();
        assert_eq!((fields[0], fields[1]), (0, i as u64 + 1));
        assert_eq!(fields[2..].iter().sum::<u64>(), samples, "every sample counted once: {line:.100}");
        match i + 1 {
            1 => assert!(fields.len() - 2 > 100, "the receiver's queue passes 100 KB"),
            2 | 3 => assert_eq!(fields.len(), 3, "ACKs only: {line}"),
            _ => {}
        }
    }
}

/// An ns-3 experiment directory as HPCC's run.py leaves it (`mix/config.txt` naming
/// `mix/topology.txt` and `mix/flow.txt`), imported with `pfcswitch hpcc import` from that
/// directory and simulated: every flow comes back in fct.txt, the incast's queue is marked and
/// its senders' DCQCN (HPCC's NIC model) cut their rates on the CNPs, and nothing lossless is
/// dropped.
#[test]
fn a_config_txt_imports_as_a_scenario_that_runs_dcqcn_on_hpccs_switches() {
    let dir = tempfile::tempdir().unwrap();
    let mix = dir.path().join("mix");
    std::fs::create_dir(&mix).unwrap();
    std::fs::write(
        mix.join("topology.txt"),
        "5 1 4\n0\n0 1 100Gbps 0.001ms 0\n0 2 100Gbps 0.001ms 0\n0 3 100Gbps 0.001ms 0\n0 4 100Gbps 0.001ms 0\n",
    )
    .unwrap();
    let flows = "5\n2 1 3 200 2000000 2\n3 1 3 200 2000000 2\n4 1 3 200 2000000 2\n2 4 3 100 10000 2.0001\n3 4 3 100 20000 2.0002\n";
    std::fs::write(mix.join("flow.txt"), flows).unwrap();
    let config = stdout(&["hpcc", "preset", "dcqcn", "--bw", "100", "--topo", "topology"])
        .replace("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME 2.01")
        .replace("QLEN_MON_END 3000000000", "QLEN_MON_END 2000005000");
    std::fs::write(mix.join("config.txt"), config).unwrap();
    let import = Command::new(binary("pfcswitch"))
        .args(["hpcc", "import", "mix/config.txt", "-o", "imported"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let notes = String::from_utf8_lossy(&import.stderr);
    assert!(import.status.success(), "{notes}");
    assert!(notes.contains("note: ACK_HIGH_PRIO"), "what differs from ns-3 is said: {notes}");

    let out = dir.path().join("sim");
    pfcswitch_scenario(&["simulate", dir.path().join("imported/scenario.toml").to_str().unwrap()], &out);
    let records = fct::read(&out.join("fct.txt")).unwrap();
    assert_eq!(records.len(), 5, "every flow finished within ns-3's stop time");
    let results = results(&out);
    let port = &results["switches"][0]["snapshot"]["ports"][0]["priorities"][3];
    assert!(port["ecn_marked"].as_u64().unwrap() > 0, "the incast's queue (1600 KB max) is marked: {port}");
    let cnps: u64 =
        results["flows"].as_array().unwrap().iter().map(|f| f["sender"]["dcqcn"]["cnps"].as_u64().unwrap()).sum();
    assert!(cnps > 0, "the incast's senders took CNPs");
    let slowest = results["flows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            f["sender"]["dcqcn"]["rate_mbps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r.as_f64().unwrap())
                .fold(f64::MAX, f64::min)
        })
        .fold(f64::MAX, f64::min);
    assert!(slowest < 100_000.0, "a sender was cut below the line rate: {slowest} Mbit/s");
    assert_eq!(results["summary"]["lossless_drops"].as_u64(), Some(0));
    // QLEN_MON_END: sampled every 100 ns from 2 s to 5 µs later, 51 samples, then no more.
    let qlen = std::fs::read_to_string(out.join("qlen.txt")).unwrap();
    let last = qlen.split("time: ").last().unwrap();
    assert!(last.starts_with("2000005000\n"), "{last:.200}");
    for line in last.lines().skip(1) {
        let samples: u64 = line.split(' ').skip(2).map(|n| n.parse::<u64>().unwrap()).sum();
        assert_eq!(samples, 51, "{line:.100}");
    }
}

/// HPCC's fat-tree (100 Gbit/s hosts, 400 Gbit/s between switches) with 50 µs of
/// `traffic_gen` FB_Hadoop flows at 30 %: every flow finishes, and every standalone FCT in
/// fct.txt is HPCC's rule as the port of its `third.cc` computes it from the topology.txt
/// (paths of 2, 4 and 6 links at two rates).
#[test]
fn hpccs_fat_tree_runs_its_flows_with_hpccs_standalone_fcts() {
    let dir = tempfile::tempdir().unwrap();
    let (fat, flows) = (dir.path().join("fat.txt"), dir.path().join("flow.txt"));
    stdout(&["hpcc", "fat-tree", "-o", fat.to_str().unwrap()]);
    let args = ["-c", "hadoop", "-n", "320", "-l", "0.3", "-b", "100G", "-t", "0.00005", "--seed", "2"];
    stdout(&[&["hpcc", "traffic-gen", "-o", flows.to_str().unwrap()][..], &args[..]].concat());
    let count: u64 = std::fs::read_to_string(&flows).unwrap().lines().next().unwrap().parse().unwrap();
    assert!(count > 100, "{count} flows");
    let text = "name = \"hpcc-fat\"\ndescription = \"HPCC's fat-tree\"\ntopology = \"fabric\"\nspeed = \"100Gbps\"\n\
        duration = \"1ms\"\ndrain = \"100ms\"\n\
        [fabric]\nkind = \"hpcc\"\nfile = \"fat.txt\"\nswitch = \"@CONFIGS@/fabric/hpcc.toml\"\n\
        [transport]\nrto = \"1ms\"\n\
        [[class]]\nname = \"hadoop\"\nkind = \"flows\"\npriority = 3\nfile = \"flow.txt\"\n";
    let out = dir.path().join("sim");
    pfcswitch_scenario(&["simulate", &scenario_file(dir.path(), text)], &out);
    let standalone = hpcc_standalone(&fat, &out.join("fct.txt"));
    assert_eq!(
        (standalone["lines"].as_u64(), standalone["wrong"].as_array().map(Vec::len)),
        (Some(count), Some(0)),
        "{standalone}"
    );
}

/// HPCC's Fig. 11 flows: FB_Hadoop at 30 % with the incast on its fat-tree, 2 ms of it.
#[test]
fn traffic_gen_writes_a_flow_file_that_reads_back_against_hpccs_fat_tree() {
    let dir = tempfile::tempdir().unwrap();
    let (fat, flows) = (dir.path().join("fat.txt"), dir.path().join("flow.txt"));
    stdout(&["hpcc", "fat-tree", "-o", fat.to_str().unwrap()]);
    let args = ["-c", "hadoop", "-n", "320", "-l", "0.3", "-b", "100G", "-t", "0.002", "--incast", "--seed", "4"];
    let said = stdout(&[&["hpcc", "traffic-gen", "-o", flows.to_str().unwrap()][..], &args[..]].concat());
    let text = std::fs::read_to_string(&flows).unwrap();
    let mut lines = text.lines();
    let count: usize = lines.next().unwrap().parse().unwrap();
    let flow_lines: Vec<Vec<&str>> = lines.map(|l| l.split(' ').collect()).collect();
    assert_eq!(count, flow_lines.len(), "the first line is the exact count");
    let incast = flow_lines.iter().filter(|f| f[3] == "200").count();
    assert!(incast > 0 && incast % 60 == 0, "{incast} incast flows, 60 per event");
    assert!(said.contains(&format!("{} incast flows", incast)), "{said}");
    let check = stdout(&["hpcc", "check", fat.to_str().unwrap(), "--flows", flows.to_str().unwrap()]);
    assert!(check.contains("376 nodes, 320 hosts, 56 switches, 480 links (320 at 100Gbps, 160 at 400Gbps)"), "{check}");
    assert!(check.contains(&format!("{count} flows")), "{check}");

    // Hosts taken from a topology that numbers its switch first (node 0, as HPCC's
    // mix/topology.txt): no flow starts or ends at the switch.
    let star = dir.path().join("star.txt");
    std::fs::write(&star, "5 1 4\n0\n0 1 100Gbps 1us 0\n0 2 100Gbps 1us 0\n0 3 100Gbps 1us 0\n0 4 100Gbps 1us 0\n")
        .unwrap();
    let args = ["-c", "hadoop", "--topology", star.to_str().unwrap(), "-b", "100G", "-t", "0.001"];
    stdout(&[&["hpcc", "traffic-gen", "-o", flows.to_str().unwrap()][..], &args[..]].concat());
    let text = std::fs::read_to_string(&flows).unwrap();
    assert!(text.lines().skip(1).count() > 10);
    assert!(text.lines().skip(1).all(|l| !l.starts_with("0 ") && l.split(' ').nth(1) != Some("0")), "{text:.300}");
}

#[test]
fn bad_files_are_refused_with_the_file_the_line_and_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let topology = write("topology.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1ns 0\n");
    let refused = |args: &[&str], reason: &str| {
        let output = pfcswitch(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} accepted");
        assert!(stderr.contains(reason), "{args:?}: {stderr}");
    };
    let bad_topology = write("bad-topology.txt", "3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbit 1ns 0\n");
    refused(&["hpcc", "check", &bad_topology], "bad-topology.txt:4: `100Gbit`: unknown rate unit `Gbit`");
    let to_switch = write("to-switch.txt", "1\n0 2 3 100 1000 2\n");
    refused(
        &["hpcc", "check", &topology, "--flows", &to_switch],
        "to-switch.txt:2: dst 2 is a switch of the topology, not a host",
    );
    let fct = write("fct.txt", "0b000001 0b000101 10000 100 1000 2000000000 9000\n");
    refused(
        &["hpcc", "fct-analysis", &fct],
        "fct.txt:1: a completed flow is `sip dip sport dport size start_ns fct_ns standalone_ns`, found 7 values",
    );
    let few = write("few.txt", "0b000001 0b000101 10000 100 1000 2000000000 9000 8000\n");
    refused(&["hpcc", "fct-analysis", &few], "the bin from 0 % has no flow: 0 flows counted, too few for 5 % bins");
    let config = write("config.txt", "CC_MODE 3\nKMAX_MAP 2 100000000000 1600\n");
    refused(
        &["hpcc", "check", &topology, "--config", &config],
        "config.txt:2: KMAX_MAP: says 2 pairs, has 2 values after the count",
    );
    refused(&["hpcc", "preset", "cubic"], "unknown preset `cubic`");
    let pint = write("pint.txt", &stdout(&["hpcc", "preset", "hpccPint", "--bw", "100"]));
    refused(
        &["hpcc", "import", &pint, "-o", "unused"],
        "pint.txt:15: CC_MODE: 10 (HPCC-PINT) is not imported yet; 1, 3, 7 and 8 are",
    );
}

/// Every `run.py` preset, as `hpcc preset` writes it, reads back as a config.txt with the
/// congestion-control mode run.py gives it.
#[test]
fn run_py_presets_read_back_as_configs() {
    let dir = tempfile::tempdir().unwrap();
    let topology = dir.path().join("fat.txt");
    stdout(&["hpcc", "fat-tree", "-o", topology.to_str().unwrap()]);
    for (cc, mode) in
        [("dcqcn", 1), ("dcqcn_vwin", 1), ("hp", 3), ("timely", 7), ("timely_vwin", 7), ("dctcp", 8), ("hpccPint", 10)]
    {
        let config = dir.path().join(format!("config-{cc}.txt"));
        std::fs::write(&config, stdout(&["hpcc", "preset", cc, "--bw", "100"])).unwrap();
        let check = stdout(&["hpcc", "check", topology.to_str().unwrap(), "--config", config.to_str().unwrap()]);
        assert!(check.contains(&format!("47 keys, CC_MODE {mode} (")), "{cc}: {check}");
    }
}
