//! Captures from `scenario run` and `scenario simulate` (`--capture h1,h2` on `incast`) decode
//! in tshark with the project's Lua dissector loaded, without an expert message, and hold the
//! PFC frames sw1 sent each sender at the times sw1 counted them: at every queue sample of the
//! run, the PFC frames captured so far are the rise of the port's `pfc_tx` counter so far
//! (exactly on virtual time; within a few frames on the datapath, whose sampler reads the
//! counters over the control socket while the tap stamps frames in another namespace). Which
//! sender the incast pauses more is the machine's timing: the two links together must hold
//! pauses.

use pfcswitch_tests::oracle::tshark_fields_with_dissector;
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;
use std::path::Path;

/// (seconds from the workload's start, PFC frames counted so far) of sw1's `port`, priority 3.
fn counted(results: &Value, port: &str) -> Vec<(f64, u64)> {
    (results["queue_samples"].as_array().unwrap().iter())
        .filter(|s| s["switch"] == "sw1" && s["port"] == port && s["priority"] == 3)
        .map(|s| (s["seconds"].as_f64().unwrap(), s["pfc_tx"].as_u64().unwrap()))
        .collect()
}

/// For sw1's port `index` (to host `host`): the PFC frames it sent, and the largest gap
/// between captured and counted frames at any sample.
fn check(dir: &Path, engine: &str, index: usize, host: &str) -> (u64, u64) {
    let results = results(dir);
    let port_name = format!("p{}", index + 1);
    let pcap = dir.join(format!("captures/sw1.{port_name}-{host}.pcap"));
    let port = &results["switches"][0]["snapshot"]["ports"][index];
    assert_eq!(port["name"], port_name.as_str());
    let (switch_mac, total) = (port["mac"].as_str().unwrap(), port["priorities"][3]["pfc_tx"].as_u64().unwrap());
    let rows =
        tshark_fields_with_dissector(&pcap, &["frame.time_epoch", "eth.src", "macc.opcode", "_ws.expert.message"]);
    assert!(rows.len() > 100, "{engine}: the capture holds the link's frames");
    for (index, row) in rows.iter().enumerate() {
        assert!(row.get(3).is_none_or(|m| m.is_empty()), "{engine}: frame {}: expert message {row:?}", index + 1);
    }
    let epoch = results["capture_epoch_seconds"].as_f64().unwrap();
    let pfc: Vec<f64> = (rows.iter())
        .filter(|r| r[1] == switch_mac && r[2] == "0x0101")
        .map(|r| r[0].parse::<f64>().unwrap() - epoch)
        .collect();
    assert_eq!(pfc.len() as u64, total, "{engine}: every PFC frame sw1 counted on {port_name} is in the capture");
    let samples = counted(&results, &port_name);
    let (first_seconds, first_count) = samples[0];
    let mut worst = 0;
    for &(seconds, count) in &samples {
        // PFC frames are microseconds apart at least: 100 ns tells the sides of a sample apart.
        let captured = pfc.iter().filter(|&&t| t > first_seconds + 1e-7 && t <= seconds + 1e-7).count() as u64;
        worst = worst.max(captured.abs_diff(count - first_count));
    }
    println!("{engine}, {host}: {total} PFC frames; captured and counted differ by at most {worst} at a sample");
    (total, worst)
}

#[test]
fn captures_from_run_and_simulate_hold_the_pfc_frames_when_the_switch_counted_them() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run_dir, sim_dir) = (dir.path().join("run"), dir.path().join("sim"));
    pfcswitch_scenario(&["run", "incast", "--capture", "h1,h2"], &run_dir);
    pfcswitch_scenario(&["simulate", "incast", "--capture", "h1,h2"], &sim_dir);
    for (dir, engine, slack) in [(&sim_dir, "simulator", 0), (&run_dir, "datapath", 5)] {
        let links = [check(dir, engine, 0, "h1"), check(dir, engine, 1, "h2")];
        let paused: u64 = links.iter().map(|(total, _)| total).sum();
        assert!(paused > 0, "{engine}: the incast paused its senders");
        for (total, worst) in links {
            // On virtual time a frame's stamp is when it was counted.
            assert!(
                worst <= slack,
                "{engine}: the capture follows the counter within {slack} frames ({worst} of {total})"
            );
        }
    }
}
