//! `[[fault]]` on both engines: `ecmp-failover` takes the leaves' links to spine sw4 of
//! leaf-spine-2s down from 3 s to 6 s. On the datapath (interfaces set down in the
//! namespaces) and in the simulator alike, the leaves' ECMP moves every flow onto sw3 and
//! back: sw1:p4 falls silent while p3 carries on, every flow keeps arriving through the
//! fault, the faults are in results.json at their times and the `ports` plot is drawn.

use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;

/// Priority-3 bytes `switch:port` sent between the samples at `from` and `to` seconds.
fn sent_between(results: &Value, switch: &str, port: &str, from: f64, to: f64) -> u64 {
    let samples: Vec<(f64, u64)> = (results["queue_samples"].as_array().unwrap().iter())
        .filter(|s| s["switch"] == switch && s["port"] == port && s["priority"] == 3)
        .map(|s| (s["seconds"].as_f64().unwrap(), s["tx_bytes"].as_u64().unwrap()))
        .collect();
    let at = |t: f64| samples.iter().rev().find(|(s, _)| *s <= t).map_or(0, |&(_, bytes)| bytes);
    at(to).saturating_sub(at(from))
}

/// Bytes each flow delivered between `from` and `to` seconds (10 ms goodput bins).
fn delivered_between(results: &Value, from: f64, to: f64) -> Vec<u64> {
    (results["flows"].as_array().unwrap().iter())
        .map(|flow| {
            let bins = flow["receiver"]["goodput_bins"].as_array().unwrap();
            let range = (from * 100.0) as usize..(to * 100.0) as usize;
            bins.iter().enumerate().filter(|(i, _)| range.contains(i)).map(|(_, b)| b.as_u64().unwrap()).sum()
        })
        .collect()
}

fn check(results: &Value, engine: &str) {
    let faults: Vec<(f64, &str)> = (results["faults"].as_array().unwrap().iter())
        .map(|f| (f["seconds"].as_f64().unwrap(), f["what"].as_str().unwrap()))
        .collect();
    let what: Vec<&str> = faults.iter().map(|f| f.1).collect();
    assert_eq!(what, ["down sw1:p4", "down sw2:p4", "up sw1:p4", "up sw2:p4"], "{engine}");
    assert!(
        faults.iter().zip([3.0, 3.0, 6.0, 6.0]).all(|(f, at)| (at..at + 0.5).contains(&f.0)),
        "{engine}: {faults:?}"
    );
    let mbps = |bytes: u64, seconds: f64| bytes as f64 * 8.0 / seconds / 1e6;
    // Before, during (after the switch-over) and after the fault.
    for (from, to, p4_busy) in [(1.0, 2.8, true), (3.5, 5.8, false), (6.5, 8.5, true)] {
        let (p3, p4) = (sent_between(results, "sw1", "p3", from, to), sent_between(results, "sw1", "p4", from, to));
        let (p3, p4) = (mbps(p3, to - from), mbps(p4, to - from));
        println!("{engine} {from}-{to} s: sw1:p3 {p3:.1} Mbit/s, sw1:p4 {p4:.1} Mbit/s");
        assert!(p3 > 20.0, "{engine} {from}-{to} s: sw3 carries traffic ({p3:.1} Mbit/s)");
        match p4_busy {
            true => assert!(p4 > 20.0, "{engine} {from}-{to} s: ECMP uses sw4 ({p4:.1} Mbit/s)"),
            false => assert!(p4 < 0.5, "{engine} {from}-{to} s: nothing leaves sw1:p4 while it is down ({p4:.1})"),
        }
        let flows = delivered_between(results, from, to);
        assert!(
            flows.iter().all(|&bytes| mbps(bytes, to - from) > 5.0),
            "{engine} {from}-{to} s: every flow arrives: {flows:?}"
        );
    }
    let link_down: u64 = (results["switches"].as_array().unwrap().iter())
        .flat_map(|s| s["snapshot"]["ports"].as_array().unwrap())
        .map(|p| p["priorities"][3]["drops"]["link_down"].as_u64().unwrap())
        .sum();
    let lossless_drops = results["summary"]["lossless_drops"].as_u64().unwrap();
    println!("{engine}: {lossless_drops} lossless drops, {link_down} of them link_down");
    // On virtual time nothing but the dead ports drops. On the datapath a busy machine can
    // also overrun a headroom while four flows crowd onto one spine: counted, and shown.
    if engine == "simulator" {
        assert_eq!(lossless_drops, link_down, "{engine}: every lossless drop is a dead port's");
    }
}

#[test]
fn ecmp_moves_the_flows_off_a_failed_spine_and_back_on_the_datapath_and_in_the_simulator() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run_dir, sim_dir) = (dir.path().join("run"), dir.path().join("sim"));
    pfcswitch_scenario(&["run", "ecmp-failover"], &run_dir);
    pfcswitch_scenario(&["simulate", "ecmp-failover"], &sim_dir);
    for (dir, engine) in [(&run_dir, "datapath"), (&sim_dir, "simulator")] {
        check(&results(dir), engine);
        assert!(dir.join("ports.svg").is_file(), "{engine}: the ports plot with the faults");
    }
}
