//! `pfcswitch scenario sweep`: checks every point before any runs, records the manifest, runs
//! the points (those of its shard) and, unsharded, summarises them.

use super::execute::{self, read_results};
use super::metrics::read_all;
use super::points::{Point, combinations, points, sets};
use super::spec::{Engine, Manifest, SweepArgs, repeated};
use super::summary::summarise;
use crate::scenario::args::{Modes, RunArgs};
use crate::scenario::plan::load;
use crate::scenario::policy::{parse_policy, split_transport};
use crate::scenario::prepare::check;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};

/// Runs the sweep `args` describes (see the module's documentation).
pub fn sweep(args: &SweepArgs) -> Result<()> {
    let (scenario, _) = load(&args.scenario)?;
    let names = if args.policies.is_empty() { vec![scenario.policy.name().to_string()] } else { args.policies.clone() };
    // Canonical names, so that `capfc` and `capfc-max` are one directory.
    // Canonical names (`capfc` is `capfc-max`), keeping a `+CC` suffix.
    let policies: Vec<String> = (names.iter())
        .map(|n| {
            let (policy, cc) = split_transport(n);
            Ok(format!(
                "{}{}",
                parse_policy(policy)?.name(),
                cc.map(|cc| format!("+{}", cc.name())).unwrap_or_default()
            ))
        })
        .collect::<Result<_>>()?;
    if let Some(twice) = repeated(&policies) {
        bail!("policy {twice} is given twice in --policies");
    }
    if let Some(twice) = repeated(&args.axes.iter().map(|a| &a.key).collect::<Vec<_>>()) {
        bail!("--set {twice}=… is given twice: give every value of a key in one --set");
    }
    let manifest = Manifest {
        scenario: args.scenario.clone(),
        keys: args.axes.clone(),
        policies,
        seeds: args.seeds.0.clone(),
        engine: if args.sim { Engine::Sim } else { Engine::Datapath },
        shard: args.shard,
    };
    check_points(&manifest)?;
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&scenario.name).join("sweep"));
    manifest.write_or_check(&out)?;
    let all = points(&manifest);
    let mine: Vec<Point> = all.iter().filter(|p| args.shard.is_none_or(|s| s.holds(p.index))).cloned().collect();
    let shard =
        args.shard.map_or(String::new(), |s| format!(", shard {}/{}: {} of them", s.index, s.count, mine.len()));
    eprintln!(
        "sweep {}: {} points ({} combinations × {} policies × {} seeds){shard}, on the {}, into {}",
        manifest.scenario,
        all.len(),
        all.len() / (manifest.policies.len() * manifest.seeds.len()),
        manifest.policies.len(),
        manifest.seeds.len(),
        if args.sim { "simulator" } else { "datapath" },
        out.display()
    );
    // Namespaces share the machine: the datapath runs one point at a time.
    let jobs = match (manifest.engine, args.jobs) {
        (Engine::Datapath, _) => 1,
        (Engine::Sim, Some(jobs)) => jobs.get(),
        (Engine::Sim, None) => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let failed = execute::run(&manifest, &out, &mine, jobs)?;
    if !failed.is_empty() {
        bail!(
            "{} of {} points failed (each point's log.txt says why):\n  {}",
            failed.len(),
            mine.len(),
            failed.join("\n  ")
        );
    }
    match args.shard {
        Some(s) => println!(
            "shard {}/{} done; once every shard is, summarise them with `pfcswitch scenario merge DIR...` (one DIR per shard)",
            s.index, s.count
        ),
        None => summarise(&manifest, &metric_values(&manifest, &all, &out)?, &out, args.metric)?,
    }
    Ok(())
}

/// Every combination of values under every policy, checked as a run would be prepared (the
/// first seed's workload planned), before any point runs: a bad key or value fails here, and
/// so does a generated fabric on the datapath.
fn check_points(manifest: &Manifest) -> Result<()> {
    for values in combinations(&manifest.keys) {
        let set = sets(&manifest.keys, &values);
        for policy in &manifest.policies {
            let args = RunArgs {
                scenario: manifest.scenario.clone(),
                policy: Some(policy.clone()),
                modes: Modes::default(),
                seed: manifest.seeds[0],
                set: set.clone(),
                capture: Vec::new(),
                threads: 1,
                out: None,
            };
            let context = || format!("sweep point --set {} under {policy}", set.join(" --set "));
            let scenario = check(&args).with_context(context)?;
            // As `run` refuses it, but before any point runs.
            if manifest.engine == Engine::Datapath && scenario.fabric.is_some() {
                bail!("{}: a generated fabric is for the simulator: sweep it with --sim", context());
            }
        }
    }
    Ok(())
}

/// Each point's metrics, read from its results in `root`.
fn metric_values(manifest: &Manifest, points: &[Point], root: &Path) -> Result<Vec<Vec<Option<f64>>>> {
    points.iter().map(|p| read_results(&p.dir(root, manifest)).map(|results| read_all(&results))).collect()
}
