//! `pfcswitch scenario sweep` and `merge` end to end, on the simulator: a sweep of `incast`
//! (shortened with `--set duration=…`) over two durations × two policies × two seeds, run
//! in one go, in three shards merged afterwards (the same summary, byte for byte), and again
//! (nothing runs); and the errors that stop a sweep before it runs anything.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::SystemTime;

const BIN: &str = env!("CARGO_BIN_EXE_pfcswitch");

/// The sweep's options but `--out`: 2 × 2 × 2 = 8 points.
const SWEEP: [&str; 13] = [
    "scenario",
    "sweep",
    "incast",
    "--set",
    "duration=200ms,300ms",
    "--policies",
    "pfc,pfc-wstop",
    "--seeds",
    "1..2",
    "--sim",
    "--jobs=2",
    "--metric",
    "fct-p99-ms",
];

fn pfcswitch(args: &[&str], extra: &[&str]) -> Output {
    let output = Command::new(BIN).args(args).args(extra).output().expect("run pfcswitch");
    eprintln!(
        "$ pfcswitch {} {}\n{}{}",
        args.join(" "),
        extra.join(" "),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn succeeds(args: &[&str], extra: &[&str]) -> Output {
    let output = pfcswitch(args, extra);
    assert!(output.status.success(), "pfcswitch {args:?} {extra:?} failed");
    output
}

/// Fails, and says `says` on stderr.
fn refuses(args: &[&str], says: &[&str]) {
    let output = pfcswitch(args, &[]);
    assert!(!output.status.success(), "pfcswitch {args:?} succeeded");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for text in says {
        assert!(stderr.contains(text), "pfcswitch {args:?}: stderr lacks {text:?}:\n{stderr}");
    }
}

/// Every point's results.json under a sweep directory, with its modification time.
fn results(dir: &Path) -> Vec<(PathBuf, SystemTime)> {
    let mut found = Vec::new();
    for combination in std::fs::read_dir(dir.join("points")).unwrap() {
        for run in std::fs::read_dir(combination.unwrap().path()).unwrap() {
            let path = run.unwrap().path().join("results.json");
            if let Ok(meta) = std::fs::metadata(&path) {
                found.push((path, meta.modified().unwrap()));
            }
        }
    }
    found.sort();
    found
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_sweep_in_one_go_equals_its_merged_shards_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let whole = tmp.path().join("whole");
    let out = |dir: &Path| ["--out".to_string(), dir.display().to_string()];
    let whole_out = out(&whole);
    let whole_out: Vec<&str> = whole_out.iter().map(String::as_str).collect();

    // (a) In one go: every point, then the summary.
    let output = succeeds(&SWEEP, &whole_out);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("fct-p99-ms") && stdout.contains("pfc-wstop"), "no summary table");
    let points = results(&whole);
    assert_eq!(points.len(), 8);
    let point = json(&whole.join("points/duration=300ms/pfc-wstop-seed2-sim/results.json"));
    assert_eq!(point["set"], serde_json::json!(["duration=300ms"]));
    assert_eq!((point["policy"].as_str(), point["seed"].as_u64()), (Some("pfc-wstop"), Some(2)));
    assert_eq!(point["duration_seconds"].as_f64(), Some(0.3));
    let summary = json(&whole.join("summary.json"));
    let rows = summary["points"].as_array().unwrap();
    assert_eq!(rows.len(), 4);
    for row in rows {
        let p99 = row["metrics"].as_array().unwrap().iter().find(|m| m["metric"] == "fct-p99-ms").unwrap();
        assert_eq!(p99["n"], 2, "{row}");
        assert!(p99["mean"].as_f64().unwrap() > 0.0);
    }
    for file in ["sweep.json", "sweep-fct-p99-ms.svg", "sweep-fct-p99-ms.png"] {
        assert!(whole.join(file).is_file(), "{file} missing");
    }

    // (b) Three shards into directories of their own, then merged: the same summary.
    let shards: Vec<PathBuf> = (1..=3).map(|i| tmp.path().join(format!("shard-{i}"))).collect();
    for (i, dir) in shards.iter().enumerate() {
        let spec = format!("{}/3", i + 1);
        let dir_out = out(dir);
        succeeds(&SWEEP, &["--shard", &spec, &dir_out[0], &dir_out[1]]);
        assert!(!dir.join("summary.json").exists(), "a shard summarised");
    }
    let sizes: Vec<usize> = shards.iter().map(|d| results(d).len()).collect();
    assert_eq!(sizes, [3, 3, 2]);
    let shard_dirs: Vec<String> = shards.iter().map(|d| d.display().to_string()).collect();
    refuses(
        &["scenario", "merge", &shard_dirs[0], &shard_dirs[2]],
        &["3 of 8 points have no results", "duration=200ms pfc seed 2"],
    );
    let merged = tmp.path().join("merged");
    let merged_str = merged.display().to_string();
    let mut merge = vec!["scenario", "merge"];
    merge.extend(shard_dirs.iter().map(String::as_str));
    succeeds(&merge, &["--out", &merged_str, "--metric", "fct-p99-ms"]);
    let (one_go, from_shards) =
        (std::fs::read(whole.join("summary.json")).unwrap(), std::fs::read(merged.join("summary.json")).unwrap());
    assert!(one_go == from_shards, "the merged summary differs from the one-go sweep's");

    // (c) Again: every point is done, nothing runs, the summary is the same.
    let output = succeeds(&SWEEP, &whole_out);
    assert!(String::from_utf8_lossy(&output.stderr).contains("8 of 8 points already done"));
    assert_eq!(results(&whole), points, "a done point ran again");
    assert!(std::fs::read(whole.join("summary.json")).unwrap() == one_go);
    // Another sweep into the same directory is refused.
    let mut other = SWEEP;
    other[4] = "duration=200ms";
    let mut args = other.to_vec();
    args.extend(&whole_out);
    refuses(&args, &["holds another sweep", "keys and values"]);
}

#[test]
fn bad_keys_and_shards_are_refused_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    let out_str = out.display().to_string();
    let sweep = |set: &'static str| ["scenario", "sweep", "incast", "--sim", "--set", set];
    let mut args = sweep("durration=1s,2s").to_vec();
    args.extend(["--out", &out_str]);
    refuses(&args, &["unknown key `durration`", "duration", "class.NAME.KEY", "query, background", "pfc.…"]);
    assert!(!out.exists(), "the sweep wrote before checking its points");
    let mut args = sweep("transport.windw=8,16").to_vec();
    args.extend(["--out", &out_str]);
    refuses(&args, &["--set transport.windw=8", "unknown field `windw`"]);
    for spec in ["0/3", "4/3", "a/b", "1/0"] {
        let mut args = sweep("duration=1s").to_vec();
        args.extend(["--shard", spec]);
        refuses(&args, &["--shard", spec, "1 ≤ I ≤ N"]);
    }
    refuses(&["scenario", "sweep", "incast", "--set", "duration=1s", "--metric", "p99"], &["unknown metric `p99`"]);
}

#[test]
fn a_failed_point_is_reported_with_its_log() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("sweep");
    // A file where the point's run wants its configs directory: the run fails at once.
    let point = out.join("points/duration=200ms/pfc-seed1-sim");
    std::fs::create_dir_all(&point).unwrap();
    std::fs::write(point.join("configs"), "").unwrap();
    let out_str = out.display().to_string();
    let args =
        ["scenario", "sweep", "incast", "--sim", "--set", "duration=200ms", "--policies", "pfc", "--out", &out_str];
    refuses(&args, &["point duration=200ms pfc seed 1 failed", "log.txt", "cannot create", "1 of 1 points failed"]);
}
