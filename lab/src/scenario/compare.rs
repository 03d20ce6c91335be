//! `pfcswitch scenario compare`: one scenario under several policies (or scheme modes) and
//! seeds, each run as `run` or `simulate` runs it, then put side by side: a table per seed,
//! an FCT box plot per seed, and a summary over the seeds.

use super::args::{CompareArgs, Modes, RunArgs, run_dir};
use super::phases::Phase;
use super::plan::{Scenario, load_with};
use super::policy::{parse_policy, split_transport};
use super::report::{mbps, ms, print_phases};
use super::runner::run;
use super::simulate::simulate;
use super::slowdown::{self, SlowdownSummary};
use super::summary::{FctStats, Outcome, PortLoad};
use crate::plot::{self, BoxChart, BoxSeries, BoxStats};
use crate::stats::quantile;
use crate::table::Table;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

/// Runs the scenario under every policy and mode of `args`, seed by seed, and compares them.
pub fn compare(args: &CompareArgs) -> Result<()> {
    let (scenario, _) = load_with(&args.scenario, &args.set)?;
    let varied = !args.pfcwd.is_empty()
        || !args.qcn.is_empty()
        || !args.fecn.is_empty()
        || !args.dcqcn.is_empty()
        || !args.cc.is_empty();
    let names = match &args.policies {
        Some(names) => names.clone(),
        None if varied => vec![scenario.policy.name().to_string()],
        None => ["pfc-wdrop", "pfc-wstop", "capfc-max", "capfc-cal"].map(String::from).to_vec(),
    };
    // A misspelt policy fails now, not after the runs before it.
    let policies = names.iter().map(|p| parse_policy(split_transport(p).0)).collect::<Result<Vec<_>>>()?;
    let mut variants = Vec::new();
    for pfcwd in each(&args.pfcwd) {
        for qcn in each(&args.qcn) {
            for fecn in each(&args.fecn) {
                for dcqcn in each(&args.dcqcn) {
                    for cc in each(&args.cc) {
                        variants.push(Modes { pfcwd, qcn, fecn, dcqcn, cc });
                    }
                }
            }
        }
    }
    let parent = args.out.clone().unwrap_or_else(|| PathBuf::from("results").join(&scenario.name));
    let suffix = if args.sim { "-sim" } else { "" };
    let seeds = if args.seeds.is_empty() { vec![args.seed] } else { args.seeds.clone() };
    let mut per_seed = Vec::new();
    for &seed in &seeds {
        let mut outcomes = Vec::new();
        for (name, policy) in names.iter().zip(&policies) {
            for &modes in &variants {
                // `NAME+CC` (see `split_transport`) runs the policy with the hosts on CC.
                let modes = Modes { cc: split_transport(name).1.or(modes.cc), ..modes };
                let run_args = RunArgs {
                    scenario: args.scenario.clone(),
                    policy: Some(name.clone()),
                    modes,
                    seed,
                    set: args.set.clone(),
                    capture: Vec::new(),
                    threads: 1,
                    out: Some(run_dir(&parent, policy, &modes, seed, suffix)),
                };
                let outcome = if args.sim { simulate(&run_args)? } else { run(&run_args)? };
                // The label names what varies: the policy when several are compared.
                let mut label = Vec::new();
                if names.len() > 1 || !varied {
                    label.push(name.clone());
                }
                label.extend(modes.labels().into_iter().map(|(scheme, mode)| format!("{scheme} {mode}")));
                outcomes.push((label.join(" "), outcome));
            }
        }
        println!();
        print_comparison(&scenario, seed, &outcomes);
        let [svg, png] = plot_comparison(&scenario, &outcomes, &parent.join(format!("fct-box-seed{seed}{suffix}")))?;
        println!("\nFCT box plot: {} and {}", svg.display(), png.display());
        let slowdowns: Vec<(String, &SlowdownSummary)> =
            outcomes.iter().filter_map(|(label, o)| Some((label.clone(), o.slowdown.as_ref()?))).collect();
        if !slowdowns.is_empty() {
            let title = format!("{}: FCT slowdown by flow size (seed {seed})", scenario.name);
            let stem = parent.join(format!("slowdown-seed{seed}{suffix}"));
            let [svg, png] = slowdown::plot(&title, &slowdowns, &stem)?;
            println!("slowdown by size: {} and {}", svg.display(), png.display());
        }
        per_seed.push((seed, outcomes));
    }
    if per_seed.len() > 1 {
        let list = seeds.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        let file = parent.join(format!("seeds-{list}{suffix}.json"));
        println!();
        print_seeds(&scenario, &per_seed, &file)?;
    }
    Ok(())
}

/// Every mode of a `--MODE LIST`, or the scenario's own (`None`) when none is given.
fn each<T: Copy>(list: &[T]) -> Vec<Option<T>> {
    if list.is_empty() { vec![None] } else { list.iter().copied().map(Some).collect() }
}

/// The FCTs of every group under every compared policy as a box plot (OFC's Fig. 4), written
/// to `<stem>.svg` and `.png`.
fn plot_comparison(scenario: &Scenario, outcomes: &[(String, Outcome)], stem: &Path) -> Result<[PathBuf; 2]> {
    let categories: Vec<String> =
        outcomes.first().map(|(_, o)| o.groups.iter().map(|g| g.group.clone()).collect()).unwrap_or_default();
    let series: Vec<BoxSeries> = outcomes
        .iter()
        .map(|(label, outcome)| BoxSeries {
            label: label.clone(),
            boxes: outcome.groups.iter().map(|g| box_stats(&g.fct)).collect(),
        })
        .collect();
    let title = format!("{}: FCT per flow group", scenario.name);
    let chart =
        BoxChart { title: &title, x_label: "flows", y_label: "FCT (ms)", categories: &categories, series: &series };
    plot::draw_boxes(&chart, stem)
}

/// Several seeds' comparisons at once: per class and policy the median over the seeds of
/// the max FCT (with its range) and of the p99, printed and written to `file` with every
/// seed's figures.
fn print_seeds(scenario: &Scenario, per_seed: &[(u64, Vec<(String, Outcome)>)], file: &Path) -> Result<()> {
    let labels: Vec<&str> = per_seed[0].1.iter().map(|(label, _)| label.as_str()).collect();
    let seeds: Vec<u64> = per_seed.iter().map(|(seed, _)| *seed).collect();
    println!(
        "scenario {}, seeds {seeds:?}: FCT in ms, median over the seeds of max [lowest, highest] and of p99",
        scenario.name
    );
    let mut headers = vec!["CLASS".to_string()];
    headers.extend(labels.iter().map(|l| l.to_uppercase()));
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&headers);
    let mut rows = Vec::new();
    for (c, class) in scenario.classes.iter().enumerate() {
        let mut row = vec![class.name.clone()];
        for (l, label) in labels.iter().enumerate() {
            let stat = |pick: fn(&FctStats) -> Option<f64>| -> Vec<f64> {
                per_seed.iter().filter_map(|(_, outcomes)| pick(&outcomes[l].1.classes[c].fct)).collect()
            };
            let (max, p99) = (stat(|f| f.fct_max_ms), stat(|f| f.fct_p99_ms));
            let lowest = max.iter().copied().reduce(f64::min);
            let highest = max.iter().copied().reduce(f64::max);
            row.push(format!("{} [{}, {}] / {}", ms(median(&max)), ms(lowest), ms(highest), ms(median(&p99))));
            rows.push(json!({ "class": class.name, "policy": label, "max_ms": max, "p99_ms": p99,
                "max_median_ms": median(&max), "p99_median_ms": median(&p99) }));
        }
        table.row(row);
    }
    table.print();
    let runs: Vec<_> = per_seed
        .iter()
        .flat_map(|(seed, outcomes)| {
            outcomes.iter().map(move |(label, o)| {
                json!({ "seed": seed, "policy": label, "classes": o.classes, "pfc_frames": o.pfc_frames,
                    "lossless_drops": o.lossless_drops, "drops": o.drops })
            })
        })
        .collect();
    let summary = json!({ "scenario": scenario.name, "seeds": seeds, "classes": rows, "runs": runs });
    std::fs::write(file, serde_json::to_vec_pretty(&summary)?)
        .with_context(|| format!("cannot write {}", file.display()))?;
    println!("\nseeds summary: {}", file.display());
    Ok(())
}

/// Min, quartiles and max, if any message finished.
fn box_stats(fct: &FctStats) -> Option<BoxStats> {
    Some(BoxStats {
        min: fct.fct_min_ms?,
        p25: fct.fct_p25_ms?,
        median: fct.fct_p50_ms?,
        p75: fct.fct_p75_ms?,
        max: fct.fct_max_ms?,
    })
}

/// The median of `values` (nearest rank: the lower middle one of an even count).
fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    quantile(&sorted, 0.5)
}

/// One row per class, one column group per policy.
fn print_comparison(scenario: &Scenario, seed: u64, outcomes: &[(String, Outcome)]) {
    println!(
        "scenario {}, seed {}: FCT in ms (p50 / p99 / max, finished/messages); long-lived classes: goodput",
        scenario.name, seed
    );
    let mut headers = vec!["CLASS".to_string()];
    headers.extend(outcomes.iter().map(|(policy, _)| policy.to_uppercase()));
    let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut table = Table::new(&headers);
    for (c, class) in scenario.classes.iter().enumerate() {
        let mut row = vec![class.name.clone()];
        for (_, outcome) in outcomes {
            let s = &outcome.classes[c];
            let mut held_back = if s.senders_paused_ms > 0.0 {
                format!(", senders paused {:.0} ms", s.senders_paused_ms)
            } else {
                String::new()
            };
            if let Some(named) = s.ofc_pauses_naming {
                held_back += &format!(", named in {named} OFC PAUSEs");
            }
            let offered = s.offered_mbps.map_or(String::new(), |o| format!(" of {o:.0}"));
            row.push(if s.long_lived {
                format!("{:.1}{offered} Mbit/s goodput{held_back}", s.goodput_mbps)
            } else if s.offered_mbps.is_some() {
                format!("{} ms, {:.1}{offered} Mbit/s{held_back}", ms(s.fct.fct_max_ms), s.goodput_mbps)
            } else {
                format!(
                    "{} / {} / {} ({}/{})",
                    ms(s.fct.fct_p50_ms),
                    ms(s.fct.fct_p99_ms),
                    ms(s.fct.fct_max_ms),
                    s.fct.finished,
                    s.fct.messages
                )
            });
        }
        table.row(row);
    }
    // Storm scenarios: each flow's goodput before / during / after the storms.
    if let Some((_, first)) = outcomes.first()
        && let Some(windows) = &first.storm
    {
        for (i, f) in windows.flows.iter().enumerate() {
            let mut row = vec![format!("{} {}→{} (before / storm / after)", f.class, f.from, f.to)];
            for (_, outcome) in outcomes {
                row.push(outcome.storm.as_ref().and_then(|w| w.flows.get(i)).map_or("-".into(), |f| {
                    format!("{} / {} / {} Mbit/s", mbps(f.before_mbps), mbps(f.storm_mbps), mbps(f.after_mbps))
                }));
            }
            table.row(row);
        }
    }
    if let Some((_, first)) = outcomes.first() {
        for (g, group) in first.groups.iter().enumerate().filter(|(_, g)| g.group != "all" || first.groups.len() > 1) {
            let mut row = vec![format!("FCT p99 / max: {}", group.group)];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.groups.get(g).map_or("-".into(), |x| format!("{} / {}", ms(x.fct.fct_p99_ms), ms(x.fct.fct_max_ms)))
            }));
            table.row(row);
        }
        for (g, group) in first.groups.iter().enumerate() {
            let mut row = vec![format!("path queue avg (B) / paused (ms): {}", group.group)];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.groups
                    .get(g)
                    .map_or("-".into(), |x| format!("{:.0} / {:.1}", x.path.average_queue_bytes, x.path.paused_ms))
            }));
            table.row(row);
        }
        if outcomes.iter().any(|(_, o)| o.slowdown.is_some()) {
            let mut row = vec!["FCT slowdown p50 / p95 / p99".to_string()];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.slowdown
                    .as_ref()
                    .map_or("-".into(), |s| format!("{:.2} / {:.2} / {:.2}", s.all.p50, s.all.p95, s.all.p99))
            }));
            table.row(row);
        }
        let mut row = vec!["busiest output (Mbit/s sent)".to_string()];
        row.extend(outcomes.iter().map(|(_, o)| {
            o.busiest_output.as_ref().map_or("-".into(), |b| format!("{}:{} {:.1}", b.switch, b.port, b.tx_mbps))
        }));
        table.row(row);
        let mut row = vec!["busiest output's queue p50 / p99 (B)".to_string()];
        row.extend(outcomes.iter().map(|(_, o)| match o.busiest_output.as_ref() {
            Some(PortLoad { queue_p50_bytes: Some(p50), queue_p99_bytes: Some(p99), .. }) => format!("{p50} / {p99}"),
            _ => "-".into(),
        }));
        table.row(row);
        let mut row = vec!["average egress queue (B)".to_string()];
        row.extend(outcomes.iter().map(|(_, o)| format!("{:.0}", o.average_queue_bytes)));
        table.row(row);
        if outcomes.iter().any(|(_, o)| o.ofc_table_bytes.is_some()) {
            let mut row = vec!["OFC tables per port (B): flow_in_port / congested / pause_frame".to_string()];
            row.extend(outcomes.iter().map(|(_, o)| {
                o.ofc_table_bytes.map_or("-".into(), |b| format!("{:.1} / {:.1} / {:.1}", b[0], b[1], b[2]))
            }));
            table.row(row);
        }
    }
    for (label, value) in [
        ("PFC frames", (|o: &Outcome| o.pfc_frames) as fn(&Outcome) -> u64),
        ("CNMs sent", |o| o.cnms_sent),
        ("storm PFC frames", |o| o.storm_frames),
        ("switch drops", |o| o.drops),
        ("lossless drops", |o| o.lossless_drops),
        ("max egress queue (B)", |o| o.max_egress_bytes),
        ("out-of-order at receivers", |o| o.out_of_order_at_receivers),
    ] {
        let mut row = vec![label.to_string()];
        row.extend(outcomes.iter().map(|(_, o)| value(o).to_string()));
        table.row(row);
    }
    table.print();
    let phases: Vec<(String, &[Phase])> = outcomes.iter().map(|(label, o)| (label.clone(), &o.phases[..])).collect();
    if phases.iter().any(|(_, p)| p.len() > 1 || p.iter().any(|p| !p.fairness.is_empty())) {
        println!();
        print_phases(&phases);
    }
}
