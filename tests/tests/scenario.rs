//! `pfcswitch scenario run` end to end: namespaces, one pfcswitchd per switch, AF_XDP
//! endpoints with go-back-N, results.json and plots.

use pfcswitch_tests::scenario::{pfcswitch_scenario, results, scenario_file};
use pfcswitch_tests::topology::{repo, serial};
use serde_json::Value;
use std::path::Path;

/// Runs a scenario (name or file) into `out` and returns its results.json.
fn run(scenario: &str, out: &Path, extra: &[&str]) -> Value {
    let args: Vec<&str> = ["run", scenario].iter().chain(extra).copied().collect();
    println!("{}", pfcswitch_scenario(&args, out));
    results(out)
}

fn class<'a>(results: &'a Value, name: &str) -> &'a Value {
    results["summary"]["classes"].as_array().unwrap().iter().find(|c| c["class"] == name).unwrap()
}

fn total(results: &Value, field: &str) -> u64 {
    results["summary"]["classes"].as_array().unwrap().iter().map(|c| c[field].as_u64().unwrap()).sum()
}

/// Every (flow, message, size, start offset) of a run: what the seed decides.
fn flow_set(out: &Path) -> Vec<(u64, u64, Option<u64>, u64)> {
    let mut set = Vec::new();
    for entry in std::fs::read_dir(out.join("plans")).unwrap() {
        let plan: Value = serde_json::from_slice(&std::fs::read(entry.unwrap().path()).unwrap()).unwrap();
        let epoch = plan["epoch_ns"].as_u64().unwrap();
        for c in plan["connections"].as_array().unwrap() {
            for m in c["messages"].as_array().unwrap() {
                let start = m[2].as_u64().unwrap() - epoch;
                set.push((c["id"].as_u64().unwrap(), m[0].as_u64().unwrap(), m[1].as_u64(), start));
            }
        }
    }
    set.sort();
    set
}

#[test]
fn incast_under_pfc_is_lossless_reproducible_and_plotted() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let first = run("incast", &dir.path().join("a"), &["--seed", "1"]);
    let second = run("incast", &dir.path().join("b"), &["--seed", "1"]);
    assert_eq!(flow_set(&dir.path().join("a")), flow_set(&dir.path().join("b")), "one seed, one flow set");
    let other = tempfile::tempdir().unwrap();
    run("incast", other.path(), &["--seed", "2"]);
    assert_ne!(flow_set(&dir.path().join("a")), flow_set(other.path()), "another seed, other flows");
    for results in [&first, &second] {
        let query = class(results, "query");
        assert!(query["messages"].as_u64().unwrap() > 50, "{query}");
        assert_eq!(query["finished"], query["messages"], "every FCT is finite: {query}");
        assert_eq!((query["retransmitted"].as_u64(), query["timeouts"].as_u64()), (Some(0), Some(0)));
        // A lossy segment lost before the switch (shed by the classifier or dropped at an
        // AF_XDP socket while a daemon was descheduled) is in `datapath_drops`, not `drops`.
        let summary = &results["summary"];
        assert_eq!(
            summary["out_of_order_at_receivers"], 0,
            "receivers saw every segment in order; lost in the switches {}, before them {}",
            summary["drops"], summary["datapath_drops"]
        );
        assert_eq!(results["summary"]["drops"], 0);
        assert!(results["summary"]["pfc_frames"].as_u64().unwrap() > 0, "the incast triggered PFC");
        let paused: Vec<&str> = verdicts(results).into_iter().filter(|v| v.starts_with("reached XOFF: ")).collect();
        assert!(!paused.is_empty() && paused.iter().all(|v| v.contains("no drop")), "why PFC fired: {paused:?}");
        let background = results["flows"].as_array().unwrap().iter().find(|f| f["class"] == "background").unwrap();
        // 65-70 Mbit/s under `stress-ng --cpu 2`, below 40 when a simulation shared the cores:
        // the margin is for the endpoints' CPU, not for pauses (priority 0 is never paused, and
        // the query's pauses of priority 3 last milliseconds).
        let goodput = background["goodput_mbps"].as_f64().unwrap();
        println!("background (priority 0) beside the incast: {goodput:.1} Mbit/s");
        assert!(goodput > 30.0, "PFC on priority 3 leaves priority 0 running: {goodput:.1} Mbit/s");
    }
    for plot in ["fct-cdf", "queues", "throughput"] {
        for extension in ["svg", "png"] {
            let path = dir.path().join("a").join(format!("{plot}.{extension}"));
            assert!(std::fs::metadata(&path).is_ok_and(|m| m.len() > 1000), "{} exists", path.display());
        }
    }
    let spread = |stat: &str| {
        let (a, b) = (class(&first, "query")[stat].as_f64().unwrap(), class(&second, "query")[stat].as_f64().unwrap());
        (a - b).abs() / a.max(b)
    };
    println!(
        "FCT spread between two runs of seed 1: p50 {:.1}%, p99 {:.1}%",
        100.0 * spread("fct_p50_ms"),
        100.0 * spread("fct_p99_ms")
    );
    // The simulator agrees with the datapath on the same plan (docs/simulator.md, "Simulator
    // and datapath"). The datapath is the slower by its own latency, and by how late these
    // shared machines wake its processes: the same seed back to back on an idle machine gave
    // a median of 12.1 and 16.2 ms (206 and 358 PFC frames) against the simulator's 11.2 ms
    // (184). So the better of the two runs must agree: the simulator's median 0.65–1.2 times
    // its median, PFC frames within a factor of 2.5. A datapath that lost its pacing or its
    // pauses is far outside both.
    let sim_dir = dir.path().join("sim");
    pfcswitch_scenario(&["simulate", "incast", "--seed", "1"], &sim_dir);
    let sim = results(&sim_dir);
    let p50 = |results: &Value| class(results, "query")["fct_p50_ms"].as_f64().unwrap();
    let pfc = |results: &Value| results["summary"]["pfc_frames"].as_u64().unwrap();
    for datapath in [&first, &second] {
        println!(
            "query FCT p50: datapath {:.3} ms, simulator {:.3} ms ({:.2}); PFC frames {} and {}",
            p50(datapath),
            p50(&sim),
            p50(&sim) / p50(datapath),
            pfc(datapath),
            pfc(&sim)
        );
    }
    let best = if p50(&first) <= p50(&second) { &first } else { &second };
    let ratio = p50(&sim) / p50(best);
    assert!((0.65..=1.2).contains(&ratio), "median FCTs of the better run within 0.65-1.2: {ratio:.2}");
    assert!(
        2 * pfc(&sim) <= 5 * pfc(best) && 2 * pfc(best) <= 5 * pfc(&sim),
        "PFC frames within 2.5x: {} and {}",
        pfc(best),
        pfc(&sim)
    );
}

#[test]
fn without_pfc_losses_are_counted_and_go_back_n_completes_every_message() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let file = scenario_file(
        dir.path(),
        r#"
name = "lossy-incast"
description = "2:1 incast into a 20 KB egress queue without PFC"
topology = "star3"
switches = { sw1 = "@CONFIGS@/default.toml" }
policy = "none"
speed = "100Mbps"
duration = "2s"
[overrides]
buffer = { egress_max = "20KB" }
[transport]
rto = "20ms"
[[class]]
name = "query"
kind = "query"
priority = 3
size = "64KB"
rate = 40.0
senders = ["h1", "h2"]
receivers = ["h3"]
"#,
    );
    let results = run(&file, &dir.path().join("out"), &[]);
    let query = class(&results, "query");
    assert!(results["summary"]["drops"].as_u64().unwrap() > 0, "the small queue dropped");
    assert!(total(&results, "retransmitted") > 0);
    assert!(results["summary"]["out_of_order_at_receivers"].as_u64().unwrap() > 0, "receivers saw the gaps");
    assert_eq!(query["finished"], query["messages"], "go-back-N completed every message: {query}");
    assert_eq!(results["summary"]["pfc_frames"], 0);
    let verdicts = verdicts(&results);
    assert!(
        verdicts.iter().any(|v| v.contains(" at egress_full: its egress queue was full and policy none drops there")),
        "why frames were lost: {verdicts:?}"
    );
}

/// The verdicts of `pfc_explain` in results.json, every switch's.
fn verdicts(results: &Value) -> Vec<&str> {
    let switches = results["pfc_explain"].as_array().expect("pfc_explain in results.json");
    let groups = switches.iter().flat_map(|s| s["priority_groups"].as_array().unwrap());
    groups.map(|g| g["verdict"].as_str().unwrap()).collect()
}

#[test]
fn a_long_flow_fills_the_link_through_one_and_three_switches() {
    let _serial = serial();
    for (topology, switches, to) in [
        ("star3", r#"{ sw1 = "@CONFIGS@/default.toml" }"#, "h3"),
        (
            "ofc-fig1",
            r#"{ sw1 = "@CONFIGS@/ofc-fig1/sw1.toml", sw2 = "@CONFIGS@/ofc-fig1/sw2.toml", sw3 = "@CONFIGS@/ofc-fig1/sw3.toml" }"#,
            "h9",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = scenario_file(
            dir.path(),
            &format!(
                r#"
name = "long"
description = "one long-lived flow"
topology = "{topology}"
switches = {switches}
speed = "100Mbps"
duration = "3s"
[[class]]
name = "long"
kind = "long"
priority = 3
senders = ["h1"]
receivers = ["{to}"]
"#
            ),
        );
        let results = run(&file, &dir.path().join("out"), &[]);
        let flow = &results["flows"][0];
        let link_use = flow["link_use"].as_f64().unwrap();
        println!("{topology}: h1 -> {to} used {:.1}% of 100 Mbit/s", 100.0 * link_use);
        // The ≥ 97 % target is scripts/bench-line-rate.sh's (medians of runs), and line rate to
        // 0.5 % is the core's on virtual time (sim/tests/line_rate.rs). A single run here gets
        // 90-97 % on an idle machine, 90-94 % under `stress-ng --cpu 2`, 65-70 % when a
        // simulation also shared the cores (whole 10 ms bins empty): this asserts that frames
        // cross the datapath at speed and in order, with a margin for a busy machine.
        assert!(link_use >= 0.75, "{topology}: {flow}");
        assert_eq!(flow["receiver"]["out_of_order"], 0);
    }
}

/// Every built-in scenario loads, gets its switch configs and plan, and runs to the end on
/// virtual time with every message finished and no slowdown below 1: a broken scenario file
/// fails here, not in a user's experiment.
#[test]
fn every_builtin_scenario_simulates_to_completion() {
    // Not beside a datapath test: the simulations would take one of its two cores.
    let _serial = serial();
    let mut names: Vec<String> = std::fs::read_dir(repo().join("scenarios"))
        .unwrap()
        .filter_map(|e| e.unwrap().path().file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    assert!(names.len() >= 8, "{names:?}");
    for name in names {
        let dir = tempfile::tempdir().unwrap();
        pfcswitch_scenario(&["simulate", &name], dir.path());
        let results = results(dir.path());
        for class in results["summary"]["classes"].as_array().unwrap() {
            assert_eq!(class["finished"], class["messages"], "{name}: {class}");
        }
        // No flow beats its FCT alone on the network: the ideal is a true lower bound.
        for m in results["messages"].as_array().unwrap().iter().filter(|m| !m["size"].is_null()) {
            let slowdown = m["slowdown"].as_f64().unwrap_or_else(|| panic!("{name}: no slowdown: {m}"));
            assert!(slowdown >= 1.0, "{name}: a flow faster than alone: {m}");
        }
        // One sample per queue and time, however many classes share a priority: the queue plot
        // sums samples per port.
        let samples = results["queue_samples"].as_array().unwrap();
        let keys: std::collections::BTreeSet<String> = samples
            .iter()
            .map(|q| format!("{} {} {} {}", q["seconds"], q["switch"], q["port"], q["priority"]))
            .collect();
        assert!(!samples.is_empty() && keys.len() == samples.len(), "{name}: repeated queue samples");
    }
}

/// A class's (or group's) summary entry of a results.json.
fn entry<'a>(results: &'a Value, list: &str, key: &str, name: &str) -> &'a Value {
    let found = results["summary"][list].as_array().unwrap().iter().find(|c| c[key] == name);
    found.unwrap_or_else(|| panic!("no {list} entry {name}"))
}

/// OFC's experiments on virtual time, where only the policy decides: in `ofc-fig1` F0's sender
/// is paused under pfc and never under ofc, where no PAUSE names it (seeds 1–5), and keeps 90 %
/// of its rate and finishes sooner; in `ofc-incast-8` the uncongested messages' tail is shorter under ofc. The datapath
/// figures are in docs/ofc.md.
#[test]
fn ofc_keeps_uncongested_flows_going_where_pfc_spreads_congestion() {
    let _serial = serial();
    let simulate = |scenario: &str, policy: &str| {
        let dir = tempfile::tempdir().unwrap();
        pfcswitch_scenario(&["simulate", scenario, "--policy", policy], dir.path());
        results(dir.path())
    };
    let (pfc, ofc) = (simulate("ofc-fig1", "pfc"), simulate("ofc-fig1", "ofc"));
    let f0 = |r: &Value, key: &str| entry(r, "classes", "class", "F0-uncongested")[key].as_f64().unwrap();
    assert!(f0(&pfc, "senders_paused_ms") > 10.0, "pfc pauses F0's sender");
    assert_eq!(f0(&ofc, "senders_paused_ms"), 0.0, "ofc never does");
    assert_eq!(f0(&ofc, "ofc_pauses_naming"), 0.0, "no OFC PAUSE names F0, on any link");
    let f1_named = entry(&ofc, "classes", "class", "F1-congested")["ofc_pauses_naming"].as_u64().unwrap();
    assert!(f1_named > 0, "OFC PAUSEs name F1");
    let f0_pfc = entry(&pfc, "classes", "class", "F0-uncongested");
    assert!(f0_pfc["ofc_pauses_naming"].is_null(), "no OFC under pfc");
    assert!(f0(&ofc, "goodput_mbps") >= 0.9 * 40.0, "F0 keeps its rate: {}", f0(&ofc, "goodput_mbps"));
    let max = |r: &Value, group: &str| entry(r, "groups", "group", group)["fct_max_ms"].as_f64().unwrap();
    let (ofc_f0, pfc_f0) = (max(&ofc, "uncongested"), max(&pfc, "uncongested"));
    assert!(ofc_f0 < 0.99 * pfc_f0, "uncongested: max FCT {ofc_f0} under ofc, {pfc_f0} under pfc");
    // F1 is paced (the links it shares with F0 stay uncongested): it cannot take the room F0
    // leaves, so OFC does not shorten it (docs/ofc.md), nor may it lengthen it much.
    for group in ["all", "congested"] {
        let (o, p) = (max(&ofc, group), max(&pfc, group));
        assert!(o < 1.01 * p, "{group}: max FCT {o} under ofc, {p} under pfc");
    }
    let path = |r: &Value, key: &str| entry(r, "classes", "class", "F0-uncongested")["path"][key].clone();
    assert_eq!(path(&ofc, "ports"), path(&pfc, "ports"), "F0 takes the same path under both");
    assert!(path(&pfc, "paused_ms").as_f64().unwrap() > 10.0, "pfc pauses F0's path: {}", path(&pfc, "paused_ms"));
    assert_eq!(path(&ofc, "paused_ms").as_f64(), Some(0.0), "ofc never pauses an egress queue on F0's path");
    let queue = |r: &Value| r["summary"]["average_queue_bytes"].as_f64().unwrap();
    assert!(queue(&ofc) < queue(&pfc));
    for group in ["all", "uncongested", "congested"] {
        let queue = |r: &Value| entry(r, "groups", "group", group)["path"]["average_queue_bytes"].as_f64().unwrap();
        assert!(queue(&ofc) < queue(&pfc), "{group}: path queue {} under ofc, {} under pfc", queue(&ofc), queue(&pfc));
    }
    assert_eq!(ofc["summary"]["lossless_drops"], 0);
    // Other seeds: F0 is never paused (the seed draws nothing in this scenario, docs/ofc.md).
    for seed in ["2", "3", "4", "5"] {
        let dir = tempfile::tempdir().unwrap();
        pfcswitch_scenario(&["simulate", "ofc-fig1", "--policy", "ofc", "--seed", seed], dir.path());
        let other = results(dir.path());
        assert_eq!(f0(&other, "senders_paused_ms"), 0.0, "seed {seed}: F0's sender never paused");
        assert_eq!(f0(&other, "ofc_pauses_naming"), 0.0, "seed {seed}: nor named");
        assert_eq!(path(&other, "paused_ms").as_f64(), Some(0.0), "seed {seed}: nor its path");
    }

    let (pfc, ofc) = (simulate("ofc-incast-8", "pfc"), simulate("ofc-incast-8", "ofc"));
    let p99 = |r: &Value| entry(r, "groups", "group", "uncongested")["fct_p99_ms"].as_f64().unwrap();
    assert!(p99(&ofc) < 0.6 * p99(&pfc), "uncongested p99 {} under ofc, {} under pfc", p99(&ofc), p99(&pfc));
    let tables = ofc["summary"]["ofc_table_bytes"].as_array().unwrap();
    assert!(tables.iter().any(|b| b.as_f64().unwrap() > 0.0), "Table II: the tables held flows");
}

/// Fig. 4 and 5 at the paper's scale (2 × 32 servers, 40 Gbit/s, 20 ns cables), 10:1.
#[test]
fn ofc_shortens_uncongested_flows_and_queues_at_the_papers_scale() {
    let _serial = serial();
    let simulate = |policy: &str| {
        let dir = tempfile::tempdir().unwrap();
        pfcswitch_scenario(&["simulate", "ofc-incast-32-10", "--policy", policy], dir.path());
        results(dir.path())
    };
    let (pfc, ofc) = (simulate("pfc"), simulate("ofc"));
    let group = |r: &Value, name: &str| entry(r, "groups", "group", name).clone();
    let uncongested = |r: &Value, key: &str| group(r, "uncongested")[key].as_f64().unwrap();
    assert!(uncongested(&pfc, "messages") > 1000.0, "thousands of flows, as §IV-A");
    for key in ["fct_p99_ms", "fct_max_ms"] {
        assert!(
            uncongested(&ofc, key) < uncongested(&pfc, key),
            "uncongested {key}: {} under ofc, {} under pfc",
            uncongested(&ofc, key),
            uncongested(&pfc, key)
        );
    }
    for name in ["all", "uncongested", "congested"] {
        let queue = |r: &Value| group(r, name)["path"]["average_queue_bytes"].as_f64().unwrap();
        assert!(queue(&ofc) < queue(&pfc), "{name}: path queue {} under ofc, {} under pfc", queue(&ofc), queue(&pfc));
        assert_eq!(group(&ofc, name)["path"]["unknown_paths"], 0, "every flow's path was learnt");
    }
    assert_eq!(pfc["summary"]["lossless_drops"], 0);
    assert_eq!(ofc["summary"]["lossless_drops"], 0);
}

/// A scenario on a generated fabric: a k = 4 fat-tree (20 switches, 16 hosts) from one base
/// config. It simulates with ECMP over the cores, reports the simulator's speed, writes the
/// fabric as a topology file beside its configs, and a bad `[fabric]` names the file and key.
#[test]
fn a_fat_tree_scenario_simulates_over_every_core_and_writes_its_topology_file() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
name = "fat-tree-4"
description = "k = 4"
topology = "fabric"
speed = "1Gbps"
duration = "200ms"

[fabric]
kind = "fat-tree"
k = 4
switch = "@CONFIGS@/fabric/capfc.toml"

[[class]]
name = "long"
kind = "poisson"
priority = 1
size = "256KB"
rate = 20.0
"#;
    let file = scenario_file(dir.path(), text);
    let out = dir.path().join("sim");
    println!("{}", pfcswitch_scenario(&["simulate", &file], &out));
    let results = results(&out);
    let long = class(&results, "long");
    assert!(long["messages"].as_u64().unwrap() > 30 && long["finished"] == long["messages"], "{long}");
    assert_eq!(results["topology"], "fat-tree k=4 o=1");
    let speed = &results["simulator"];
    assert!(speed["frame_hops"].as_u64().unwrap() > 10_000 && speed["events_per_second"].as_f64().unwrap() > 0.0);
    // Cores sw17–sw20 each carried data between pods.
    let switches = results["switches"].as_array().unwrap();
    assert_eq!(switches.len(), 20);
    for core in &switches[16..] {
        let sent: u64 = (core["snapshot"]["ports"].as_array().unwrap().iter())
            .map(|p| p["priorities"][1]["tx_frames"].as_u64().unwrap())
            .sum();
        assert!(sent > 100, "{} sent {sent} frames of priority 1", core["name"]);
    }
    assert!(out.join("configs/sw17.toml").is_file(), "the generated configs are kept with the run");

    let generated = pfcswitch_topology::Topology::load(&out.join("topology.toml")).unwrap();
    assert_eq!((generated.switches.len(), generated.hosts.len(), generated.links.len()), (20, 16, 48));
    assert_eq!(generated.link_at("h1").unwrap().name(), "sw1:p1-h1", "the fabric as a topology file");

    std::fs::write(&file, text.replace("k = 4", "k = 5").replace("@CONFIGS@", "/nonexistent")).unwrap();
    let bad = std::process::Command::new(pfcswitch_tests::topology::binary("pfcswitch"))
        .args(["scenario", "simulate", &file, "--out"])
        .arg(dir.path().join("bad"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(!bad.status.success() && stderr.contains("scenario.toml") && stderr.contains("fabric.k"), "{stderr}");
}

/// `pfcswitch scenario deadlock` counts deadlocks per policy and M, writes every run's split
/// and cycle, and draws the counts.
#[test]
fn the_deadlock_experiment_counts_per_policy_and_total() {
    let dir = tempfile::tempdir().unwrap();
    let stdout = pfcswitch_scenario(&["deadlock", "--iterations", "30", "--totals", "240,640"], dir.path());
    println!("{stdout}");
    let results: Value = serde_json::from_slice(&std::fs::read(dir.path().join("deadlocks.json")).unwrap()).unwrap();
    let counts = results["counts"].as_array().unwrap();
    assert_eq!(counts.len(), 6, "three policies by two totals");
    assert_eq!(results["runs"].as_array().unwrap().len(), 180);
    let deadlocks = |policy: &str| -> u64 {
        counts.iter().filter(|c| c["policy"] == policy).map(|c| c["deadlocks"].as_u64().unwrap()).sum()
    };
    assert!(deadlocks("capfc-max") > 0, "CaPFC pauses whole ingress ports: the cycle locks");
    assert!(deadlocks("ofc") <= deadlocks("pfc"), "{counts:?}");
    for run in results["runs"].as_array().unwrap() {
        let split: u64 = run["split"].as_array().unwrap().iter().map(|m| m.as_u64().unwrap()).sum();
        assert_eq!(split, run["total"].as_u64().unwrap());
        assert!(run["deadlock"].is_null() == (run["delivered"] == run["total"]), "stuck without a cycle: {run}");
    }
    assert!(dir.path().join("deadlocks.svg").is_file() && dir.path().join("deadlocks.png").is_file());
}
