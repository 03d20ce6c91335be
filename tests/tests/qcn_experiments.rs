//! The QCN-at-inputs paper's experiments through `pfcswitch scenario`: `qcn-fanin` (Fig. 2)
//! and `qcn-victim` (Fig. 3). What only the algorithms decide (fairness per phase, which flow
//! the CNMs reach) is asserted on virtual time; the datapath run asserts what must hold on
//! any machine: CNMs reach every sender's reaction point through real endpoints, and the
//! lossless priority loses nothing. The datapath figures are in docs/qcn.md.

use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::{repo, serial};
use serde_json::Value;

/// `scenario simulate NAME --qcn MODE`'s results.
fn simulate(scenario: &str, qcn: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    pfcswitch_scenario(&["simulate", scenario, "--qcn", qcn], dir.path());
    results(dir.path())
}

fn phases(results: &Value) -> &Vec<Value> {
    results["summary"]["phases"].as_array().unwrap()
}

/// Jain's index of the flows into h6 in each phase.
fn fairness(results: &Value) -> Vec<f64> {
    phases(results).iter().map(|p| p["fairness"][0]["jain"].as_f64().unwrap()).collect()
}

fn flow<'a>(results: &'a Value, label: &str) -> &'a Value {
    let name = |f: &Value, key: &str| f[key].as_str().unwrap().to_string();
    let found = (results["flows"].as_array().unwrap().iter())
        .find(|f| format!("{} {}→{}", name(f, "class"), name(f, "from"), name(f, "to")) == label);
    found.unwrap_or_else(|| panic!("no flow {label}"))
}

fn cnms(results: &Value, label: &str) -> u64 {
    flow(results, label)["sender"]["qcn"]["cnms"].as_u64().unwrap()
}

#[test]
fn qcn_at_inputs_is_fairer_than_at_the_output_in_every_phase() {
    let _serial = serial();
    let (pause, output, input) =
        (simulate("qcn-fanin", "off"), simulate("qcn-fanin", "output"), simulate("qcn-fanin", "input"));
    let (at_output, at_inputs) = (fairness(&output), fairness(&input));
    println!("Jain per phase: output {at_output:?}, inputs {at_inputs:?}");
    assert_eq!(at_inputs.len(), 3, "f5 joins for the middle third");
    for (phase, (o, i)) in at_output.iter().zip(&at_inputs).enumerate() {
        assert!(i > o, "phase {phase}: inputs {i:.3}, output {o:.3}");
        assert!(*i > 0.98, "phase {phase}: a CP per input shares the link evenly: {i:.3}");
    }
    for run in [&pause, &output, &input] {
        assert_eq!(run["summary"]["lossless_drops"], 0, "{}: lossless", run["qcn"]);
    }
    // QCN takes over from PAUSE: the senders hear from the CPs and PAUSE rarely acts.
    for run in [&output, &input] {
        for f in run["flows"].as_array().unwrap() {
            assert!(f["sender"]["qcn"]["cnms"].as_u64().unwrap() > 0, "{}: {} got CNMs", run["qcn"], f["from"]);
        }
        let pfc = |r: &Value| r["summary"]["pfc_frames"].as_u64().unwrap();
        assert!(pfc(run) * 5 < pfc(&pause), "{}: {} PFC frames, PAUSE only {}", run["qcn"], pfc(run), pfc(&pause));
    }
}

#[test]
fn occupancy_sampling_spares_the_victim_flow_that_arrival_sampling_throttles() {
    let _serial = serial();
    let runs: Vec<(&str, Value)> = ["input-arrival", "input-occupancy-deterministic", "input-occupancy-random"]
        .into_iter()
        .map(|mode| (mode, simulate("qcn-victim", mode)))
        .collect();
    // f6 offers 70 % of the link; `link_use` counts its frames on the wire as the pacer does.
    let link_use = |r: &Value, label: &str| flow(r, label)["link_use"].as_f64().unwrap();
    let goodput = |r: &Value, label: &str| flow(r, label)["goodput_mbps"].as_f64().unwrap();
    for (mode, run) in &runs {
        println!(
            "{mode}: f6 {:.1} Mbit/s ({} CNMs), f1 {:.1} Mbit/s ({} CNMs)",
            goodput(run, "f6 h1→h7"),
            cnms(run, "f6 h1→h7"),
            goodput(run, "f1 h1→h6"),
            cnms(run, "f1 h1→h6")
        );
        assert_eq!(run["summary"]["lossless_drops"], 0, "{mode}: lossless");
    }
    let arrival = &runs[0].1;
    assert!(link_use(arrival, "f6 h1→h7") < 0.3, "arrival sampling throttles f6 (70 % offered)");
    assert!(goodput(arrival, "f6 h1→h7") < goodput(arrival, "f1 h1→h6"), "f6 falls to f1's rate and below");
    for (mode, run) in &runs[1..] {
        assert!(link_use(run, "f6 h1→h7") >= 0.9 * 0.7, "{mode}: f6 keeps 90 % of its 70 %");
        assert!(cnms(run, "f6 h1→h7") * 20 < cnms(run, "f1 h1→h6"), "{mode}: the backlogged f1 gets the CNMs");
    }
    assert_eq!(cnms(&runs[1].1, "f6 h1→h7"), 0, "deterministic occupancy never picks f6");
}

/// A shorter `qcn-fanin` (8 s, f5 from 3 to 6 s) on the datapath: endpoints tag their frames,
/// the switch's CPs send CNMs, the endpoints' reaction points receive them.
fn short_fanin(dir: &std::path::Path) -> String {
    let text = std::fs::read_to_string(repo().join("scenarios/qcn-fanin.toml")).unwrap();
    let text = text
        .replace("duration = \"30s\"", "duration = \"8s\"")
        .replace("start = \"10s\"\nstop = \"20s\"", "start = \"3s\"\nstop = \"6s\"")
        .replace("../configs/", &format!("{}/", repo().join("configs").display()));
    assert!(text.contains("\"8s\"") && text.contains("\"3s\""), "qcn-fanin changed: update this test");
    let path = dir.join("qcn-fanin-short.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn qcn_on_the_datapath_reaches_every_reaction_point_and_loses_nothing() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let scenario = short_fanin(dir.path());
    let run = |qcn: &str| {
        let out = dir.path().join(qcn);
        println!("{}", pfcswitch_scenario(&["run", &scenario, "--qcn", qcn], &out));
        results(&out)
    };
    let (pause, input) = (run("off"), run("input"));
    assert_eq!(pause["summary"]["lossless_drops"], 0);
    assert_eq!(input["summary"]["lossless_drops"], 0);
    let sent = input["summary"]["cnms_sent"].as_u64().unwrap();
    let received: u64 =
        input["flows"].as_array().unwrap().iter().map(|f| f["sender"]["qcn"]["cnms"].as_u64().unwrap()).sum();
    for f in input["flows"].as_array().unwrap() {
        assert!(f["sender"]["qcn"]["cnms"].as_u64().unwrap() > 0, "{} heard from its input's CP", f["from"]);
        assert!(f["goodput_mbps"].as_f64().unwrap() > 5.0, "{} kept sending: {}", f["from"], f["goodput_mbps"]);
    }
    // CNMs travel on priority 6, which is not lossless: the ones that arrive are CNMs the switch sent.
    assert!(received > 0 && received <= sent, "{received} CNMs received of {sent} sent");
    let pfc = |r: &Value| r["summary"]["pfc_frames"].as_u64().unwrap();
    assert!(
        pfc(&input) * 3 < pfc(&pause),
        "QCN takes over from PAUSE: {} PFC frames, PAUSE only {}",
        pfc(&input),
        pfc(&pause)
    );
    let rates = flow(&input, "f1-f4 h1→h6")["sender"]["qcn"]["rate_mbps"].as_array().unwrap().len();
    assert!(rates >= 79, "the rate limit over the run, in 100 ms bins: {rates}");
}
