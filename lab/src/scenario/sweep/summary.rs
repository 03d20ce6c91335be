//! A sweep's summary: per point (the keys' values × policy) and metric, the mean over the
//! seeds with its 95 % confidence interval and n, the seeds that had the metric; printed as a
//! table, written to `summary.json`, and one metric plotted against the first key.
//! `summary.json` holds nothing about where or when the points ran, so a sweep run in one go
//! and the same sweep run in shards and merged write the same bytes.

use super::metrics::{METRICS, Metric};
use super::points::{combinations, sets};
use super::spec::Manifest;
use super::stats::{CONFIDENCE, Estimate, estimate};
use crate::plot::{self, Interval, IntervalChart, IntervalSeries, XValues};
use crate::table::Table;
use anyhow::{Context, Result};
use serde_json::json;
use std::path::Path;

/// One combination of the keys' values under one policy: per metric of [`METRICS`], each
/// seed's value and the estimate over those that have one.
struct Row {
    values: Vec<String>,
    policy: String,
    metrics: Vec<(Vec<Option<f64>>, Option<Estimate>)>,
}

/// Summarises a sweep into `out`: `values` holds each point's metrics ([`METRICS`]'
/// order), the points in the sweep's order; `metric` is plotted.
pub fn summarise(manifest: &Manifest, values: &[Vec<Option<f64>>], out: &Path, metric: Metric) -> Result<()> {
    let rows = rows(manifest, values);
    print(manifest, &rows);
    let path = out.join("summary.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&to_json(manifest, &rows))?)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("\nsummary: {}", path.display());
    let [svg, png] = plot(manifest, &rows, metric, &out.join(format!("sweep-{}", metric.name)))?;
    println!("plot:    {} and {}", svg.display(), png.display());
    Ok(())
}

/// The rows in the sweep's order: a point's seeds are consecutive.
fn rows(manifest: &Manifest, values: &[Vec<Option<f64>>]) -> Vec<Row> {
    let mut per_seed = values.chunks(manifest.seeds.len().max(1));
    let mut rows = Vec::new();
    for combination in combinations(&manifest.keys) {
        for policy in &manifest.policies {
            let seeds = per_seed.next().expect("a value per point");
            let metrics = (0..METRICS.len())
                .map(|m| {
                    let values: Vec<Option<f64>> = seeds.iter().map(|v| v[m]).collect();
                    let present: Vec<f64> = values.iter().flatten().copied().collect();
                    (values, estimate(&present))
                })
                .collect();
            rows.push(Row { values: combination.clone(), policy: policy.clone(), metrics });
        }
    }
    rows
}

fn to_json(manifest: &Manifest, rows: &[Row]) -> serde_json::Value {
    let points: Vec<_> = (rows.iter())
        .map(|row| {
            let metrics: Vec<_> = (METRICS.iter().zip(&row.metrics))
                .map(|(metric, (per_seed, e))| {
                    let half = e.and_then(|e| e.half_width);
                    json!({
                        "metric": metric.name, "mean": e.map(|e| e.mean), "half_width": half,
                        "ci": e.zip(half).map(|(e, h)| [e.mean - h, e.mean + h]),
                        "n": e.map_or(0, |e| e.n), "per_seed": per_seed,
                    })
                })
                .collect();
            json!({ "set": sets(&manifest.keys, &row.values), "policy": row.policy, "metrics": metrics })
        })
        .collect();
    json!({
        "scenario": manifest.scenario, "engine": manifest.engine, "keys": manifest.keys,
        "policies": manifest.policies, "seeds": manifest.seeds, "confidence": CONFIDENCE,
        "metrics": METRICS.iter().map(|m| json!({ "name": m.name, "pointer": m.pointer })).collect::<Vec<_>>(),
        "points": points,
    })
}

/// One row per point, one column per metric that has a value somewhere.
fn print(manifest: &Manifest, rows: &[Row]) {
    let shown: Vec<usize> = (0..METRICS.len()).filter(|&m| rows.iter().any(|row| row.metrics[m].1.is_some())).collect();
    println!(
        "sweep {}: mean ± half-width of the {:.0} % confidence interval over seeds {:?} (Student's t); \
         (n=k): only k seeds had the metric",
        manifest.scenario,
        CONFIDENCE * 100.0,
        manifest.seeds
    );
    let mut headers: Vec<&str> = manifest.keys.iter().map(|axis| axis.key.as_str()).collect();
    headers.push("POLICY");
    headers.extend(shown.iter().map(|&m| METRICS[m].name));
    let mut table = Table::new(&headers);
    for row in rows {
        let mut cells = row.values.clone();
        cells.push(row.policy.clone());
        cells.extend(shown.iter().map(|&m| cell(row.metrics[m].1, manifest.seeds.len())));
        table.row(cells);
    }
    table.print();
    let blank: Vec<&str> = (0..METRICS.len()).filter(|m| !shown.contains(m)).map(|m| METRICS[m].name).collect();
    if !blank.is_empty() {
        println!("no value in any point: {}", blank.join(", "));
    }
}

fn cell(estimate: Option<Estimate>, seeds: usize) -> String {
    let Some(e) = estimate else { return "-".into() };
    let mut text = number(e.mean);
    if let Some(half) = e.half_width {
        text += &format!(" ± {}", number(half));
    }
    if e.n < seeds {
        text += &format!(" (n={})", e.n);
    }
    text
}

/// Four significant digits, no exponent for the sizes metrics reach.
fn number(v: f64) -> String {
    let magnitude = if v == 0.0 { 0 } else { v.abs().log10().floor() as i32 };
    format!("{v:.*}", (3 - magnitude).clamp(0, 6) as usize)
}

/// `metric` against the first key: one line per policy and combination of the other keys'
/// values, each mean with its interval as an error bar. The x axis is numeric if every value
/// of the first key is a number, else the values in the order given.
fn plot(manifest: &Manifest, rows: &[Row], metric: Metric, stem: &Path) -> Result<[std::path::PathBuf; 2]> {
    let m = METRICS.iter().position(|x| *x == metric).expect("a metric of the registry");
    let (first, rest) = manifest.keys.split_first().expect("a sweep has a key");
    let others = combinations(rest);
    let policies = manifest.policies.len();
    let mut series = Vec::new();
    for (j, other) in others.iter().enumerate() {
        for (p, policy) in manifest.policies.iter().enumerate() {
            let label = [policy.clone()].into_iter().chain(sets(rest, other)).collect::<Vec<_>>().join(", ");
            let points = (0..first.values.len())
                .map(|i| {
                    let e = rows[(i * others.len() + j) * policies + p].metrics[m].1?;
                    let half = e.half_width.unwrap_or(0.0);
                    Some(Interval { mean: e.mean, low: e.mean - half, high: e.mean + half })
                })
                .collect();
            series.push(IntervalSeries { label, points });
        }
    }
    let numbers: Option<Vec<f64>> = first.values.iter().map(|v| v.parse::<f64>().ok()).collect();
    let x = match &numbers {
        Some(numbers) => XValues::Numbers(numbers),
        None => XValues::Categories(&first.values),
    };
    let title = format!(
        "{}: {}, mean and {:.0} % CI over {} seeds",
        manifest.scenario,
        metric.name,
        CONFIDENCE * 100.0,
        manifest.seeds.len()
    );
    let chart = IntervalChart { title: &title, x_label: &first.key, y_label: metric.name, x, series: &series };
    plot::draw_intervals(&chart, stem)
}

#[cfg(test)]
mod tests {
    use super::super::spec::{Axis, Engine};
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            scenario: "incast".into(),
            keys: vec![
                Axis { key: "load".into(), values: vec!["0.3".into(), "0.5".into()] },
                Axis { key: "sizes".into(), values: vec!["a".into()] },
            ],
            policies: vec!["pfc".into(), "ofc".into()],
            seeds: vec![1, 2, 3],
            engine: Engine::Sim,
            shard: None,
        }
    }

    /// Each point's metrics: the first metric is the point's number, the others none, but
    /// for point 4 whose first metric is missing.
    fn values() -> Vec<Vec<Option<f64>>> {
        (0..12)
            .map(|i| {
                let mut v = vec![None; METRICS.len()];
                v[0] = (i != 4).then_some(i as f64);
                v
            })
            .collect()
    }

    #[test]
    fn rows_group_the_seeds_of_a_point() {
        let rows = rows(&manifest(), &values());
        let shown: Vec<String> = rows.iter().map(|r| format!("{} {}", r.values.join(","), r.policy)).collect();
        assert_eq!(shown, ["0.3,a pfc", "0.3,a ofc", "0.5,a pfc", "0.5,a ofc"]);
        assert_eq!(rows[0].metrics[0].1.map(|e| (e.mean, e.n)), Some((1.0, 3)));
        // Point 4 (0.3 ofc, seed 2) left its seed out.
        assert_eq!(rows[1].metrics[0].0, [Some(3.0), None, Some(5.0)]);
        assert_eq!(rows[1].metrics[0].1.map(|e| (e.mean, e.n)), Some((4.0, 2)));
        assert_eq!(rows[3].metrics[1].1, None);
        // s = √2, so the half-width is t(1) = 12.706.
        assert_eq!(cell(rows[1].metrics[0].1, 3), "4.000 ± 12.71 (n=2)");
        assert_eq!(cell(rows[0].metrics[0].1, 3), "1.000 ± 2.484");
    }

    #[test]
    fn json_has_every_metric_and_no_paths() {
        let m = manifest();
        let json = to_json(&m, &rows(&m, &values()));
        assert_eq!(json["points"].as_array().unwrap().len(), 4);
        assert_eq!(json["points"][1]["set"], json!(["load=0.3", "sizes=a"]));
        assert_eq!(json["points"][1]["metrics"].as_array().unwrap().len(), METRICS.len());
        assert_eq!(json["points"][1]["metrics"][0]["n"], 2);
        assert_eq!(json["points"][1]["metrics"][1]["mean"], serde_json::Value::Null);
        assert!(json.get("shard").is_none());
    }

    #[test]
    fn numbers_keep_four_significant_digits() {
        assert_eq!(number(3.0), "3.000");
        assert_eq!(number(1234.4), "1234");
        assert_eq!(number(0.012346), "0.01235");
        assert_eq!(number(0.0), "0.000");
        assert_eq!(number(2_500_000.0), "2500000");
    }
}
