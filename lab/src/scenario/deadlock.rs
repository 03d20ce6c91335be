//! `pfcswitch scenario deadlock`: OFC's deadlock experiment (§IV-A-2, Fig. 9) on the
//! simulator. For each policy and each total M, it runs the CBD scenario of
//! `pfcswitch_sim::deadlock` with M frames split at random over its four flows, many
//! times, and counts the runs that deadlock.

use super::args::DeadlockArgs;
use super::configs::merge_section;
use super::plan::root;
use super::policy::{RunPolicy, parse_policy};
use crate::plot::{self, Chart, Scale, Series};
use crate::table::Table;
use anyhow::{Context, Result};
use pfcswitch_link::rng::Rng;
use pfcswitch_sim::deadlock::{CbdScenario, Draw};
use pfcswitch_switch::config::PolicyKind;
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

pub fn deadlock(args: &DeadlockArgs) -> Result<()> {
    let config = args.config.clone().unwrap_or_else(|| root().join("configs/ofc-paper.toml"));
    let out = args.out.clone().unwrap_or_else(|| PathBuf::from("results/ofc-deadlock"));
    std::fs::create_dir_all(out.join("configs")).with_context(|| format!("cannot create {}", out.display()))?;
    let policies: Vec<RunPolicy> = args.policies.iter().map(|p| parse_policy(p)).collect::<Result<_>>()?;
    let text = std::fs::read_to_string(&config).with_context(|| format!("cannot read {}", config.display()))?;
    let base: toml::Table = text.parse().with_context(|| format!("{}", config.display()))?;
    let mut counts = Vec::new();
    let mut runs = Vec::new();
    for policy in &policies {
        let mut table = base.clone();
        merge_section(&mut table, "policy", policy.config_keys());
        let file = out.join("configs").join(format!("{}.toml", policy.name()));
        std::fs::write(&file, toml::to_string(&table)?)?;
        let (switch, _) = pfcswitchd::config::load(&file)?;
        let cable = args.cable.unwrap_or(switch.pfc.cable_delay);
        let scenario = CbdScenario::new(&switch, policy.kind == PolicyKind::Ofc, cable)
            .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
        for &total in &args.totals {
            let mut rng = Rng::new(args.seed ^ total);
            let mut deadlocks = 0u32;
            for iteration in 0..args.iterations {
                let draw = Draw::random(total, &mut rng);
                let run = scenario.run(&draw, Duration::from_secs(1))?;
                deadlocks += u32::from(run.cycle.is_some());
                runs.push(json!({
                    "policy": policy.name(), "total": total, "iteration": iteration, "split": draw.split,
                    "start_offsets_ns": draw.offsets.map(|o| o.as_nanos() as u64),
                    "deadlock": run.cycle.as_ref().map(|c| c.iter().map(|s| format!("sw{}", s + 1)).collect::<Vec<_>>()),
                    "delivered": run.delivered, "ended_seconds": run.ended.as_nanos() as f64 / 1e9,
                }));
            }
            eprintln!("{} M={total}: {deadlocks} deadlocks in {} runs", policy.name(), args.iterations);
            counts.push((policy.name(), total, deadlocks));
        }
    }
    let mut headers = vec!["POLICY".to_string()];
    headers.extend(args.totals.iter().map(|m| format!("M={m}")));
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&headers);
    for policy in &policies {
        let mut row = vec![policy.name().to_string()];
        row.extend(counts.iter().filter(|c| c.0 == policy.name()).map(|c| c.2.to_string()));
        table.row(row);
    }
    println!("deadlocks in {} runs per policy and M (seed {}):", args.iterations, args.seed);
    table.print();
    let series: Vec<Series> = (policies.iter())
        .map(|policy| Series {
            label: policy.name().into(),
            points: counts.iter().filter(|c| c.0 == policy.name()).map(|c| (c.1 as f64, f64::from(c.2))).collect(),
        })
        .collect();
    let title = format!("deadlocks in {} runs of the CBD scenario", args.iterations);
    let chart = Chart {
        title: &title,
        x_label: "frames over the four flows (M)",
        y_label: "deadlocks",
        x_scale: Scale::Linear,
        y_scale: Scale::Linear,
        series: &series,
        step: false,
    };
    let [svg, png] = plot::draw(&chart, &out.join("deadlocks"))?;
    let results = json!({
        "iterations": args.iterations, "seed": args.seed, "config": config,
        "cable_seconds": args.cable.map(|c| c.as_secs_f64()),
        "counts": counts.iter().map(|c| json!({ "policy": c.0, "total": c.1, "deadlocks": c.2 })).collect::<Vec<_>>(),
        "runs": runs,
    });
    let path = out.join("deadlocks.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&results)?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("\nresults: {}\nplot:    {} and {}", path.display(), svg.display(), png.display());
    Ok(())
}
