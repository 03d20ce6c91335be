//! Running a sweep's points, each as a child process of this binary:
//! `pfcswitch scenario simulate|run NAME --policy P --seed S --set K=V … --out POINTDIR`,
//! its stdout and stderr into `POINTDIR/log.txt`. A point is done once
//! `POINTDIR/results.json` exists and parses, so a sweep run again skips what an interrupted
//! one finished. `jobs` points run at once; a failed point is reported with the end of its
//! log, and the others go on.

use super::points::Point;
use super::progress::Progress;
use super::spec::Manifest;
use anyhow::{Context, Result, bail};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

/// The lines of a failed point's log shown.
const LOG_TAIL: usize = 12;

/// A point's results (its `results.json`), if it is done.
pub fn read_results(dir: &Path) -> Result<Value> {
    let path = dir.join("results.json");
    let bytes = std::fs::read(&path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&bytes).with_context(|| format!("{} is not JSON", path.display()))
}

/// Runs those of `points` not done yet into their directories under `root`, `jobs` at a
/// time, with a progress line; returns the labels of the points that failed.
pub fn run(manifest: &Manifest, root: &Path, points: &[Point], jobs: usize) -> Result<Vec<String>> {
    let (done, todo): (Vec<&Point>, Vec<&Point>) =
        points.iter().partition(|p| read_results(&p.dir(root, manifest)).is_ok());
    if !done.is_empty() {
        eprintln!("{} of {} points already done (results.json present): skipped", done.len(), points.len());
    }
    if todo.is_empty() {
        return Ok(Vec::new());
    }
    eprintln!(
        "running {} points, {} at a time; each point's output is in its log.txt",
        todo.len(),
        jobs.min(todo.len())
    );
    let program = std::env::current_exe().context("cannot tell which program runs the points")?;
    let mut progress = Progress::new(points.len(), done.len(), jobs);
    let next = AtomicUsize::new(0);
    let (sender, finished) = mpsc::channel();
    let mut failed = Vec::new();
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(todo.len()) {
            let (sender, next, todo, program) = (sender.clone(), &next, &todo, &program);
            scope.spawn(move || {
                while let Some(&point) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let started = Instant::now();
                    let result = run_point(program, manifest, root, point);
                    if sender.send((point, result, started.elapsed())).is_err() {
                        break;
                    }
                }
            });
        }
        drop(sender);
        for (point, result, took) in finished {
            let label = point.label(&manifest.keys);
            progress.finished(&label, result.is_ok(), took);
            if let Err(error) = result {
                progress.note(&format!("point {label} failed: {error:#}"));
                failed.push(label);
            }
        }
    });
    progress.end();
    Ok(failed)
}

/// Runs one point as a child process and checks that it wrote its results.
fn run_point(program: &Path, manifest: &Manifest, root: &Path, point: &Point) -> Result<()> {
    let dir = point.dir(root, manifest);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let log_path = dir.join("log.txt");
    let log = std::fs::File::create(&log_path).with_context(|| format!("cannot create {}", log_path.display()))?;
    let mut command = Command::new(program);
    command.args(["scenario", manifest.engine.command(), &manifest.scenario]);
    command.args(["--policy", &point.policy, "--seed", &point.seed.to_string()]);
    // `--set=` keeps a value that starts with a dash a value.
    command.args(point.sets(&manifest.keys).iter().map(|set| format!("--set={set}")));
    command.arg("--out").arg(&dir);
    command.stdin(Stdio::null()).stdout(log.try_clone()?).stderr(log);
    let status = command.status().with_context(|| format!("cannot start {}", program.display()))?;
    let problem = if !status.success() {
        status.to_string()
    } else if read_results(&dir).is_err() {
        "it wrote no readable results.json".to_string()
    } else {
        return Ok(());
    };
    bail!("{problem}; the end of {}:\n{}", log_path.display(), tail(&log_path))
}

/// The last lines of `log`, indented.
fn tail(log: &Path) -> String {
    let text = std::fs::read(log).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let shown = &lines[lines.len().saturating_sub(LOG_TAIL)..];
    shown.iter().map(|line| format!("    {line}")).collect::<Vec<_>>().join("\n")
}
