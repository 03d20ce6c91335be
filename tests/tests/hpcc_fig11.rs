//! HPCC's Fig. 11 recipe (`pfcswitch hpcc fig11`) on a short window: every control's run is
//! run.py's preset imported and simulated on HPCC's fat-tree, and the table it prints is what
//! HPCC's own `fct_analysis.py` (ported, `tests/oracles/fct_analysis.py`) reads from each
//! run's fct.txt; its PFC row counts each run's pfc.txt. No root needed.

use pfcswitch_tests::oracle::fct_analysis;
use pfcswitch_tests::topology::binary;
use std::process::Command;

#[test]
fn the_recipes_table_is_what_hpccs_analysis_reads_from_each_run() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fig11");
    let args =
        ["hpcc", "fig11", "-o", out.to_str().unwrap(), "--time", "20us", "--drain", "1ms", "--cc", "hpcc,dcqcn-w"];
    let output = Command::new(binary("pfcswitch")).args(args).output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let table = std::fs::read_to_string(out.join("fig11.txt")).unwrap();
    let lines: Vec<Vec<&str>> =
        table.lines().map(|l| l.split("  ").map(str::trim).filter(|c| !c.is_empty()).collect()).collect();
    assert_eq!(lines[0], ["FLOWS UP TO (B)", "HPCC P95", "DCQCN-W P95"]);
    assert_eq!(lines.len(), 1 + 20 + 4, "a header, 20 bins of 5 %, PFC, events, flows, wall time:\n{table}");
    for (column, cc) in ["hpcc", "dcqcn-w"].iter().enumerate() {
        let run = out.join(cc).join("run");
        let theirs = fct_analysis(&["-s", "5", run.join("fct.txt").to_str().unwrap()]);
        let rows: Vec<Vec<&str>> = theirs.lines().map(|l| l.split(['\t', ' ']).collect()).collect();
        assert_eq!(rows.len(), 20, "{theirs}");
        for (bin, row) in rows.iter().enumerate() {
            // The script's line: start, largest size, then p50 p95 p99.
            assert_eq!(lines[1 + bin][0], row[1], "bin {bin}'s largest size");
            assert_eq!(lines[1 + bin][1 + column], row[3], "{cc}: bin {bin}'s p95");
        }
        let events = std::fs::read_to_string(run.join("pfc.txt")).unwrap().lines().count();
        assert_eq!(lines[22][1 + column], events.to_string(), "{cc}: pfc.txt's lines");
        let flows = std::fs::read_to_string(run.join("fct.txt")).unwrap().lines().count();
        assert_eq!(lines[23][1 + column], flows.to_string(), "{cc}: fct.txt's lines");
    }
    assert!(out.join("fig11-p95.svg").exists());

    let nothing = dir.path().join("none");
    let args = ["hpcc", "fig11", "-o", nothing.to_str().unwrap(), "--cc", "hpcc,none"];
    let refused = Command::new(binary("pfcswitch")).args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&refused.stderr);
    let said = stderr.contains("--cc none: Fig. 11 compares congestion controls");
    assert!(!refused.status.success() && said, "{stderr}");
    assert!(!nothing.exists(), "refused before anything is written");
}
