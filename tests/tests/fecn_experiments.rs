//! FECN's `fecn-converge` through `pfcswitch scenario`: flows join and leave a fan-in to h6.
//! On virtual time, where only the algorithm decides: every phase with several flows is
//! within 5 % of fair within a quarter second, nothing is lost, PAUSE all but stops acting
//! and the queue stays below PAUSE's. On the datapath, what must hold on any machine:
//! probes come back to every source through real endpoints, nothing is lost, the split is
//! fair. `fecn-gamma` at the paper's 10 Gbit/s, on virtual time: the direction of the
//! paper's Tables I and II. The figures are in docs/fecn.md.

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

/// `scenario` on virtual time with FECN `mode`: its results.json.
fn simulate(scenario: &str, mode: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    pfcswitch_scenario(&["simulate", scenario, "--fecn", mode], dir.path());
    results(dir.path())
}

#[test]
fn fecn_converges_on_each_join_and_leave_and_pause_backs_it_up() {
    let _serial = serial();
    let pause = simulate("fecn-converge", "off");
    for control in ["hyperbolic", "multistage"] {
        let fecn = simulate("fecn-converge", control);
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
    // The port that set a flow's last applied rate is sw1:p6, or none when the last probe came
    // back unmarked: on a link the busy VM's senders left partly idle, r/ρ with ρ < 1 climbs
    // to the capacity, which is what the probe already carries, so no switch lowers it. f4
    // leaves while four flows share p6, so at least its last rate is p6's.
    let p6 = &fecn["switches"][0]["snapshot"]["ports"][5]["mac"];
    let mut named_p6 = 0;
    for f in fecn["flows"].as_array().unwrap() {
        let source = &f["sender"]["fecn"];
        assert!(source["probes_returned"].as_u64().unwrap() > 50, "{} heard back from its probes: {source}", f["from"]);
        assert!(source["bottleneck"] == *p6 || source["bottleneck"].is_null(), "only sw1:p6 sets rates: {source}");
        named_p6 += usize::from(source["bottleneck"] == *p6);
    }
    assert!(named_p6 > 0, "sw1:p6 set the rate of some flow");
    for (jain, _) in fairness(&fecn) {
        assert!(jain > 0.95, "a fair split in every phase: {jain}");
    }
}

#[test]
fn fecn_gamma_keeps_the_direction_of_the_paper_s_tables_i_and_ii() {
    let _serial = serial();
    let throughput = |fecn: &str| {
        let results = simulate("fecn-gamma", fecn);
        let busiest = &results["summary"]["busiest_output"];
        // The 32 flows cross the trunk (sw1:p33) and the receiver's port (sw2:p1) in tandem:
        // both carry the same bytes to within a few control frames, so either is the busiest.
        let at = (busiest["switch"].as_str(), busiest["port"].as_str());
        assert!(matches!(at, (Some("sw1"), Some("p33")) | (Some("sw2"), Some("p1"))), "the bottleneck: {at:?}");
        assert_eq!(results["summary"]["lossless_drops"], 0, "{fecn}: lossless");
        busiest["tx_mbps"].as_f64().unwrap()
    };
    let [g98, g99, g100, n2, n3] =
        ["hyperbolic-g0.98", "hyperbolic", "hyperbolic-g1", "multistage-n2", "multistage-n3"].map(throughput);
    println!(
        "Table I: gamma 0.98 {g98:.0}, 0.99 {g99:.0}, 1.00 {g100:.0} Mbit/s; Table II: single {g99:.0}, n=2 {n2:.0}, n=3 {n3:.0}"
    );
    assert!(g99 > g98 && g99 > g100, "Table I: 0.99 ahead");
    assert!(n2 >= g99 && n3 >= g99, "Table II: multistage at least as good as single stage");
    assert!(g98 > 9000.0, "every setting keeps the link over 90 % busy: {g98}");
}
