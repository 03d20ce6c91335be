//! Captures from `scenario run` and `scenario simulate` (`--capture h1` on `incast`) decode
//! in tshark with the project's Lua dissector loaded, without an expert message, and hold the
//! PFC frames sw1 sent h1 at the times sw1 counted them: at every queue sample of the run, the
//! PFC frames captured so far are the rise of sw1:p1's `pfc_tx` counter so far (exactly on
//! virtual time; within a few frames on the datapath, whose sampler reads the counters over
//! the control socket while the tap stamps frames in another namespace).

use pfcswitch_tests::oracle::tshark_fields_with_dissector;
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::serial;
use serde_json::Value;
use std::path::Path;

/// (seconds from the workload's start, PFC frames counted so far) of sw1:p1, priority 3.
fn counted(results: &Value) -> Vec<(f64, u64)> {
    (results["queue_samples"].as_array().unwrap().iter())
        .filter(|s| s["switch"] == "sw1" && s["port"] == "p1" && s["priority"] == 3)
        .map(|s| (s["seconds"].as_f64().unwrap(), s["pfc_tx"].as_u64().unwrap()))
        .collect()
}

/// Returns the largest gap between captured and counted frames at any sample.
fn check(dir: &Path, engine: &str) -> u64 {
    let results = results(dir);
    let pcap = dir.join("captures/sw1.p1-h1.pcap");
    let port = &results["switches"][0]["snapshot"]["ports"][0];
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
    assert!(total > 10, "{engine}: the incast paused h1 ({total} PFC frames)");
    assert_eq!(pfc.len() as u64, total, "{engine}: every PFC frame sw1 counted on p1 is in the capture");
    let samples = counted(&results);
    let (first_seconds, first_count) = samples[0];
    let mut worst = 0;
    for &(seconds, count) in &samples {
        // PFC frames are microseconds apart at least: 100 ns tells the sides of a sample apart.
        let captured = pfc.iter().filter(|&&t| t > first_seconds + 1e-7 && t <= seconds + 1e-7).count() as u64;
        worst = worst.max(captured.abs_diff(count - first_count));
    }
    println!("{engine}: {total} PFC frames; captured and counted differ by at most {worst} at a sample");
    worst
}

#[test]
fn captures_from_run_and_simulate_hold_the_pfc_frames_when_the_switch_counted_them() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let (run_dir, sim_dir) = (dir.path().join("run"), dir.path().join("sim"));
    pfcswitch_scenario(&["run", "incast", "--capture", "h1"], &run_dir);
    pfcswitch_scenario(&["simulate", "incast", "--capture", "h1"], &sim_dir);
    assert_eq!(check(&sim_dir, "simulator"), 0, "on virtual time a frame's stamp is when it was counted");
    let gap = check(&run_dir, "datapath");
    assert!(gap <= 5, "on the datapath the capture follows the counter within 5 frames: {gap}");
}
