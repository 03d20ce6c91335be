//! A long simulated run says how far it is and, told to stop (SIGINT), stops and writes what
//! it has: a user can watch a paper-scale run and cut it short without losing it.

use pfcswitch_tests::topology::binary;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

#[test]
fn a_long_simulation_reports_progress_and_writes_partial_results_on_sigint() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // Minutes of wall time: long enough to report, cut short after it does.
    let mut child = Command::new(binary("pfcswitch"))
        .args(["scenario", "simulate", "websearch-fat-tree", "--set", "duration=300ms", "--out"])
        .arg(&out)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn pfcswitch");
    let stdout = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || std::io::read_to_string(stdout).unwrap());
    let mut stderr = BufReader::new(child.stderr.take().unwrap()).lines().map(Result::unwrap);
    let progress = stderr.find(|line| line.starts_with("simulated ")).expect("a progress line before the run ends");
    assert!(progress.contains(" of 300.000 ms, ") && progress.contains(" M events/s, "), "{progress}");
    assert!(progress.contains(" to the workload's end"), "an estimated finish: {progress}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let rest: Vec<String> = stderr.collect();
    let status = child.wait().unwrap();
    let stdout = stdout.join().unwrap();
    assert!(!status.success(), "an interrupted run says so in its exit status");
    let said = rest.iter().find(|l| l.contains("interrupted at ")).unwrap_or_else(|| panic!("{rest:?}"));
    assert!(said.contains(&out.display().to_string()), "{said}");
    assert!(stdout.contains("(INTERRUPTED: partial results)"), "{stdout}");
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("results.json")).unwrap()).unwrap();
    assert_eq!(results["interrupted"], true);
    let seconds = results["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0 && seconds < 0.3, "stopped before the workload's end: {seconds} s");
    let finished = std::fs::read_to_string(out.join("fct.txt")).unwrap().lines().count();
    assert!(finished > 100, "the flows that finished are written: {finished}");
}
