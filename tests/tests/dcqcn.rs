//! DCQCN over RoCEv2 end to end: a datapath `dcqcn-incast` run whose captured traffic
//! (SENDs, ACKs, CNPs) Wireshark reads as RoCE without complaint and scapy with every ICRC
//! valid; and the experiments' claims on virtual time (`--sim`, deterministic): an order of
//! magnitude fewer PFC frames at equal throughput, and fair shares.

use pfcswitch_tests::oracle::{roce_check, tshark_expert_messages, tshark_fields};
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn simulate(scenario: &str, dcqcn: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    pfcswitch_scenario(&["simulate", scenario, "--dcqcn", dcqcn], dir.path());
    results(dir.path())
}

/// The BTH opcodes of a capture's RoCEv2 frames, counted, as tshark reads them.
fn opcodes(pcap: &Path) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for row in tshark_fields(pcap, &["infiniband.bth.opcode", "_ws.malformed"], &[]) {
        assert!(row.get(1).is_none_or(String::is_empty), "malformed: {row:?}");
        if let Some(opcode) = row.first().filter(|o| !o.is_empty()) {
            *counts.entry(opcode.clone()).or_default() += 1;
        }
    }
    counts
}

#[test]
fn a_datapath_dcqcn_incast_carries_rocev2_that_tshark_and_scapy_read_without_fault() {
    let _serial = serial();
    let out = tempfile::tempdir().unwrap();
    let args = ["run", "dcqcn-incast", "--dcqcn", "on", "--set", "duration=2s", "--capture", "h1"];
    println!("{}", pfcswitch_scenario(&args, out.path()));
    let results = results(out.path());
    assert_eq!(results["summary"]["lossless_drops"], 0, "lossless");
    let cnps: u64 =
        (results["flows"].as_array().unwrap().iter()).filter_map(|f| f["sender"]["dcqcn"]["cnps"].as_u64()).sum();
    assert!(cnps > 0, "the marks drew CNPs and the reaction points took them");

    let pcap = out.path().join("captures/sw1.p1-h1.pcap");
    let seen = opcodes(&pcap);
    // h1's SENDs (FIRST, then MIDDLE: a long-lived flow), h8's ACKs and CNPs back to h1.
    for opcode in ["0", "1", "17", "129"] {
        assert!(seen.get(opcode).is_some_and(|&n| n > 0), "opcode {opcode} missing: {seen:?}");
    }
    for (index, message) in tshark_expert_messages(&pcap).iter().enumerate() {
        assert!(message.is_empty(), "frame {}: expert message {message}", index + 1);
    }
    let checked: Vec<Value> = roce_check(&pcap).into_iter().filter(|f| f["roce"] == true).collect();
    assert_eq!(checked.len(), seen.values().sum::<usize>(), "scapy and tshark see the same RoCEv2 frames");
    let bad: Vec<&Value> = checked.iter().filter(|f| f["icrc_ok"] != true).collect();
    assert!(bad.is_empty(), "{} of {} ICRCs wrong, e.g. {}", bad.len(), checked.len(), bad[0]);
    assert!(checked.iter().any(|f| f["opcode"] == 129), "scapy reads the CNPs too");
}

#[test]
fn dcqcn_cuts_pfc_frames_by_an_order_of_magnitude_at_equal_throughput_on_virtual_time() {
    let (alone, with_dcqcn) = (simulate("dcqcn-incast", "off"), simulate("dcqcn-incast", "on"));
    let pfc = |r: &Value| r["summary"]["pfc_frames"].as_u64().unwrap();
    let used = |r: &Value| r["summary"]["busiest_output"]["utilisation"].as_f64().unwrap();
    println!(
        "PFC frames {} -> {}, utilisation {:.3} -> {:.3}",
        pfc(&alone),
        pfc(&with_dcqcn),
        used(&alone),
        used(&with_dcqcn)
    );
    assert!(pfc(&with_dcqcn) * 10 <= pfc(&alone), "{} vs {}", pfc(&with_dcqcn), pfc(&alone));
    assert!(used(&with_dcqcn) >= 0.95 * used(&alone), "{} vs {}", used(&with_dcqcn), used(&alone));
    for r in [&alone, &with_dcqcn] {
        assert_eq!(r["summary"]["lossless_drops"], 0);
    }
}

#[test]
fn flows_joining_a_dcqcn_bottleneck_converge_to_fair_shares_on_virtual_time() {
    let results = simulate("dcqcn-fairness", "on");
    let last = results["summary"]["phases"].as_array().unwrap().last().unwrap();
    let fairness = &last["fairness"][0];
    assert_eq!(fairness["flows"], 4, "{last}");
    let jain = fairness["jain"].as_f64().unwrap();
    assert!(jain >= 0.99, "Jain's index {jain} with all four flows");
}
