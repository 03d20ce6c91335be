//! FECN's `fecn-converge` through `pfcswitch scenario`: flows join and leave a fan-in to h6.
//! On virtual time, where only the algorithm decides: every phase with several flows is
//! within 5 % of fair within a quarter second, nothing is lost, PAUSE all but stops acting
//! and the queue stays below PAUSE's. On the datapath, what must hold on any machine:
//! probes come back to every source through real endpoints, nothing is lost, the split is
//! fair. The figures are in docs/fecn.md.

use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;

fn fairness(results: &Value) -> Vec<(f64, Option<f64>)> {
    (results["summary"]["phases"].as_array().unwrap().iter())
        .filter_map(|p| {
            let f = p["fairness"].get(0)?;
            Some((f["jain"].as_f64().unwrap(), f["converged_after_seconds"].as_f64()))
        })
        .collect()
}

#[test]
fn fecn_converges_on_each_join_and_leave_and_pause_backs_it_up() {
    let _serial = serial();
    let simulate = |fecn: &str| {
        let dir = tempfile::tempdir().unwrap();
        pfcswitch_scenario(&["simulate", "fecn-converge", "--fecn", fecn], dir.path());
        results(dir.path())
    };
    let pause = simulate("off");
    for control in ["hyperbolic", "multistage"] {
        let fecn = simulate(control);
        let phases = fairness(&fecn);
        println!("{control}: (Jain, converged after s) per phase {phases:?}");
        assert_eq!(phases.len(), 3, "three phases with several flows");
        for (jain, after) in phases {
            assert!(jain > 0.99, "{control}: Jain {jain}");
            assert!(after.is_some_and(|s| s <= 0.25), "{control}: within 5 % after {after:?} s");
        }
        let summary = |r: &Value, key: &str| r["summary"][key].as_f64().unwrap();
        assert_eq!(summary(&fecn, "lossless_drops"), 0.0, "{control}: lossless");
        assert!(summary(&fecn, "pfc_frames") * 20.0 < summary(&pause, "pfc_frames"), "{control}: PAUSE backs up");
        assert!(summary(&fecn, "average_queue_bytes") < summary(&pause, "average_queue_bytes") / 2.0);
        for f in fecn["flows"].as_array().unwrap() {
            let source = &f["sender"]["fecn"];
            assert!(source["probes_returned"].as_u64().unwrap() > 100, "{control}: {} probed: {source}", f["from"]);
        }
    }
    assert_eq!(pause["summary"]["lossless_drops"], 0);
}

#[test]
fn fecn_on_the_datapath_reaches_every_source_and_loses_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    println!("{}", pfcswitch_scenario(&["run", "fecn-converge", "--fecn", "hyperbolic"], dir.path()));
    let fecn = results(dir.path());
    assert_eq!(fecn["summary"]["lossless_drops"], 0);
    for f in fecn["flows"].as_array().unwrap() {
        let source = &f["sender"]["fecn"];
        assert!(source["probes_returned"].as_u64().unwrap() > 50, "{} heard back from its probes: {source}", f["from"]);
        assert_eq!(source["bottleneck"], fecn["switches"][0]["snapshot"]["ports"][5]["mac"], "sw1:p6 set the rate");
    }
    for (jain, _) in fairness(&fecn) {
        assert!(jain > 0.95, "a fair split in every phase: {jain}");
    }
}
