//! A generated fabric on the real datapath: `scenario run fat-tree-4` builds the k = 4
//! fat-tree (20 switches, 16 hosts) from the topology file the generator writes, carries a
//! WebSearch workload over ECMP with no lossless loss, and agrees with `--sim` on the same plan.

use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;

fn web(results: &Value) -> &Value {
    &results["summary"]["classes"][0]
}

/// Priority-3 frames `switch` sent, over all its ports.
fn sent(results: &Value, switch: &str) -> u64 {
    let switches = results["switches"].as_array().unwrap();
    let snapshot = &switches.iter().find(|s| s["name"] == switch).unwrap()["snapshot"];
    snapshot["ports"].as_array().unwrap().iter().map(|p| p["priorities"][3]["tx_frames"].as_u64().unwrap()).sum()
}

#[test]
fn a_k4_fat_tree_runs_on_the_datapath_lossless_and_agrees_with_the_simulator() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run_dir, sim_dir) = (dir.path().join("run"), dir.path().join("sim"));
    println!("{}", pfcswitch_scenario(&["run", "fat-tree-4", "--seed", "1"], &run_dir));
    pfcswitch_scenario(&["simulate", "fat-tree-4", "--seed", "1"], &sim_dir);
    let (run, sim) = (results(&run_dir), results(&sim_dir));
    assert!(run_dir.join("topology.toml").is_file(), "the fabric's topology file is kept with the run");

    let (messages, finished) = (web(&run)["messages"].as_u64().unwrap(), web(&run)["finished"].as_u64().unwrap());
    assert!(messages > 30 && finished == messages, "every message completes: {finished} of {messages}");
    assert_eq!(run["summary"]["lossless_drops"], 0, "no lossless frame lost on 20 switches");
    assert!(run["summary"]["pfc_frames"].as_u64().unwrap() > 0, "the workload makes PFC pause");
    let cores = ["sw17", "sw18", "sw19", "sw20"].map(|core| sent(&run, core));
    assert!(cores.iter().filter(|&&frames| frames > 100).count() >= 3, "ECMP spreads over the cores: {cores:?}");

    // The same plan on virtual time. Margins for a busy two-core machine running 20 switches
    // and 16 endpoints: measured 0.99 (FCT) and 1.00 (slowdown) on an idle one.
    let ratio = |pick: fn(&Value) -> f64| pick(&run) / pick(&sim);
    let fct = ratio(|r| web(r)["fct_p50_ms"].as_f64().unwrap());
    let slowdown = ratio(|r| r["summary"]["slowdown"]["p50"].as_f64().unwrap());
    println!("fat-tree-4, datapath / simulator: median FCT {fct:.2}, median slowdown {slowdown:.2}");
    assert!((0.7..1.5).contains(&fct), "median FCT datapath / simulator = {fct:.2}");
    assert!((0.7..1.5).contains(&slowdown), "median slowdown datapath / simulator = {slowdown:.2}");
}
