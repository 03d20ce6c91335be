//! FCT slowdown on the simulator: a flow alone on the network takes exactly its ideal FCT
//! (the formula of `lab/src/scenario/ideal.rs`, checked against the simulator's frames over
//! paths of one to five links and links of two speeds), and a WebSearch workload at a target
//! load reports every flow's slowdown, by size, with the load it offered.

use pfcswitch_tests::scenario::{pfcswitch_scenario, results, scenario_file};
use serde_json::Value;

/// One message of `size` from `from` to `to` at `at`, alone.
fn lone(name: &str, size: &str, at: &str, from: &str, to: &str) -> String {
    format!(
        "[[class]]\nname = \"{name}\"\nkind = \"burst\"\npriority = 1\nsize = \"{size}\"\nat = [\"{at}\"]\nsenders = [\"{from}\"]\nreceivers = [\"{to}\"]\n"
    )
}

fn slowdowns(results: &Value) -> Vec<(String, f64)> {
    (results["messages"].as_array().unwrap().iter())
        .map(|m| (m["class"].as_str().unwrap().to_string(), m["slowdown"].as_f64().expect("a slowdown")))
        .collect()
}

/// On a k = 4 fat-tree with 4:1 oversubscription (1 Gbit/s host links, 500 Mbit/s up-links),
/// flows within a leaf (2 links), a pod (4) and across the core (6) at sizes from one short
/// frame to 2 MB each finish in their ideal FCT to within 0.1 % (a few ns; half a microsecond
/// where a 64 KB window meets the slower up-links).
#[test]
fn a_flow_alone_takes_its_ideal_fct_on_links_of_two_speeds() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "name = \"lone\"\ndescription = \"lone flows\"\ntopology = \"fabric\"\nspeed = \"1Gbps\"\nduration = \"1s\"\n\
         [fabric]\nkind = \"fat-tree\"\nk = 4\noversubscription = 4\nswitch = \"@CONFIGS@/fabric/capfc.toml\"\n",
    );
    let mut at_ms = 50;
    for (where_to, to) in [("leaf", "h2"), ("pod", "h3"), ("core", "h16")] {
        for size in ["1B", "1400B", "64KB", "2MB"] {
            text += &lone(&format!("{where_to}-{size}"), size, &format!("{at_ms}ms"), "h1", to);
            at_ms += 50;
        }
    }
    let out = dir.path().join("sim");
    pfcswitch_scenario(&["simulate", &scenario_file(dir.path(), &text)], &out);
    let results = results(&out);
    let all = slowdowns(&results);
    assert_eq!(all.len(), 12);
    for (class, slowdown) in &all {
        assert!((1.0..1.001).contains(slowdown), "{class}: slowdown {slowdown}");
    }
    let fct = |class: &str| {
        let m = results["messages"].as_array().unwrap().iter().find(|m| m["class"] == class).unwrap();
        m["ideal_fct_ms"].as_f64().unwrap()
    };
    // 2 MB through a 500 Mbit/s up-link takes twice as long as through the leaf alone.
    assert!((fct("core-2MB") / fct("leaf-2MB") - 2.0).abs() < 0.01, "{} {}", fct("core-2MB"), fct("leaf-2MB"));
}

/// WebSearch flows at 50 % load with an incast class on a k = 4 fat-tree at 10 Gbit/s: every
/// flow's size, FCT, ideal FCT and slowdown in results.json, none below 1; the summary's
/// slowdown by size in (at most) 20 bins; the load asked for and offered; the slowdown plot.
#[test]
fn websearch_at_a_target_load_reports_slowdown_by_flow_size() {
    let dir = tempfile::tempdir().unwrap();
    let text = r#"
name = "websearch-k4"
description = "WebSearch at 50 % on a k = 4 fat-tree"
topology = "fabric"
speed = "10Gbps"
duration = "20ms"
drain = "500ms"
sample = "1ms"

[fabric]
kind = "fat-tree"
k = 4
switch = "@CONFIGS@/fabric/websearch.toml"

[transport]
rto = "1ms"
dctcp = {}

[[class]]
name = "web"
kind = "poisson"
priority = 3
sizes = "websearch"
load = 0.5

[[class]]
name = "incast"
kind = "query"
priority = 3
size = "64KB"
rate = 500.0
fan_in = 8
"#;
    let out = dir.path().join("sim");
    let printed = pfcswitch_scenario(&["simulate", &scenario_file(dir.path(), text), "--seed", "3"], &out);
    assert!(printed.contains("FCT slowdown by flow size") && printed.contains("class web: offered load 0.500 asked"));
    let results = results(&out);
    let messages = results["messages"].as_array().unwrap();
    assert!(messages.len() > 100, "{} flows", messages.len());
    for m in messages {
        let (fct, ideal) = (m["fct_ms"].as_f64().unwrap(), m["ideal_fct_ms"].as_f64().unwrap());
        assert!(m["size"].as_u64().unwrap() > 0 && ideal > 0.0 && fct >= ideal, "{m}");
        assert!((m["slowdown"].as_f64().unwrap() - fct / ideal).abs() < 1e-9, "{m}");
    }
    let summary = &results["summary"]["slowdown"];
    assert_eq!(summary["flows"].as_u64().unwrap() as usize, messages.len());
    assert_eq!(summary["below_one"], 0);
    let bins = summary["bins"].as_array().unwrap();
    // Twenty bins of 5 %, fewer where the incast's 64 KB answers fill more than one.
    assert!((10..=20).contains(&bins.len()), "{} bins", bins.len());
    let in_bins: u64 = bins.iter().map(|b| b["flows"].as_u64().unwrap()).sum();
    assert_eq!(in_bins as usize, messages.len(), "every flow in one bin");
    for pair in bins.windows(2) {
        assert!(pair[0]["max_bytes"].as_u64() < pair[1]["min_bytes"].as_u64(), "bins sorted by size, none shared");
    }
    for bin in bins {
        let (p50, p99) = (bin["p50"].as_f64().unwrap(), bin["p99"].as_f64().unwrap());
        assert!(1.0 <= p50 && p50 <= p99, "{bin}");
    }
    // 16 senders × 20 ms offer ~110 WebSearch flows: their bytes vary by ~25 % (cv 2.3).
    let load = &results["summary"]["offered_load"];
    assert_eq!(load["target"], 0.5);
    assert!((0.2..0.8).contains(&load["achieved"].as_f64().unwrap()), "{load}");
    assert!(out.join("slowdown.svg").is_file() && out.join("slowdown.png").is_file());
}
