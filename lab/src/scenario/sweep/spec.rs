//! What a sweep is: its options ([`SweepArgs`], [`MergeArgs`]), the keys it varies with their
//! values ([`Axis`]), its seeds, its shard, and the manifest (`sweep.json`) recording them.

use super::metrics::{Metric, parse_metric};
use anyhow::{Context, Result, bail};
use clap::Args;
use serde::{Deserialize, Serialize};
use std::num::NonZeroUsize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// A built-in scenario (`pfcswitch scenario list`) or a scenario file.
    pub scenario: String,
    /// KEY=V1,V2,...: a key as `run --set` takes it and the values to sweep it over;
    /// repeatable (every combination runs). Commas inside quotes, [] or {} do not split.
    #[arg(long = "set", value_name = "KEY=V1,V2,...", value_parser = parse_axis, required = true)]
    pub axes: Vec<Axis>,
    /// Comma-separated policies, each run at every point (default: the scenario's); NAME+CC
    /// runs NAME with the hosts on congestion control CC (as `run --cc CC`), e.g.
    /// pfc+dcqcn,pfc+hpcc,pfc+timely.
    #[arg(long, value_delimiter = ',')]
    pub policies: Vec<String>,
    /// Seeds: A..B (inclusive) or a comma-separated list.
    #[arg(long, value_parser = parse_seeds, default_value = "1")]
    pub seeds: Seeds,
    /// Run the points on the simulator (in parallel) instead of the datapath (one at a time).
    #[arg(long)]
    pub sim: bool,
    /// Points simulated at once (default: the available cores).
    #[arg(long, requires = "sim")]
    pub jobs: Option<NonZeroUsize>,
    /// I/N: run only the points whose index is I−1 modulo N (a job array's task I of N); merge
    /// the shards' directories with `pfcswitch scenario merge`.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Output directory (default: results/NAME/sweep).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The metric plotted against the first key.
    #[arg(long, value_parser = parse_metric, default_value = "slowdown-p99")]
    pub metric: Metric,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// The sweep directories to merge (each with its sweep.json), e.g. every shard's.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where the summary goes (default: the first directory).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The metric plotted against the first key.
    #[arg(long, value_parser = parse_metric, default_value = "slowdown-p99")]
    pub metric: Metric,
}

/// One swept key and its values, as given.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Axis {
    pub key: String,
    pub values: Vec<String>,
}

/// `KEY=V1,V2,...`: commas split values except inside quotes, brackets and braces (a TOML
/// array or inline table is one value).
pub fn parse_axis(text: &str) -> Result<Axis, String> {
    let (key, list) = text.split_once('=').ok_or_else(|| format!("`{text}`: expected KEY=V1,V2,..."))?;
    let key = key.trim();
    if key.is_empty() {
        return Err(format!("`{text}`: the key is empty"));
    }
    if key == "policy" {
        return Err("policies are swept with --policies, not --set policy".into());
    }
    let (mut values, mut current, mut depth, mut quote) = (Vec::new(), String::new(), 0i32, None);
    for c in list.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '[' | '{') => depth += 1,
            (None, ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                values.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    values.push(current);
    let values: Vec<String> = values.iter().map(|v| v.trim().to_string()).collect();
    if let Some(empty) = values.iter().position(String::is_empty) {
        return Err(format!("`{text}`: value {} is empty", empty + 1));
    }
    if let Some(twice) = repeated(&values) {
        return Err(format!("`{text}`: `{twice}` is given twice"));
    }
    Ok(Axis { key: key.to_string(), values })
}

/// The first item of `items` that an earlier one equals: a value, seed, policy or key given
/// twice would be two points in one directory.
pub fn repeated<T: PartialEq>(items: &[T]) -> Option<&T> {
    items.iter().enumerate().find_map(|(i, item)| items[..i].contains(item).then_some(item))
}

/// The seeds of a sweep, in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Seeds(pub Vec<u64>);

/// `A..B` (both included) or `A,B,...`.
pub fn parse_seeds(text: &str) -> Result<Seeds, String> {
    let number = |s: &str| s.trim().parse::<u64>().map_err(|_| format!("`{s}` is not a seed (an integer ≥ 0)"));
    let seeds: Vec<u64> = match text.split_once("..") {
        Some((first, last)) => {
            let (first, last) = (number(first)?, number(last)?);
            if first > last {
                return Err(format!("`{text}`: A..B needs A ≤ B"));
            }
            (first..=last).collect()
        }
        None => text.split(',').map(number).collect::<Result<_, _>>()?,
    };
    if let Some(twice) = repeated(&seeds) {
        return Err(format!("`{text}`: seed {twice} is given twice"));
    }
    Ok(Seeds(seeds))
}

/// `--shard I/N`: task I (from 1) of N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    /// Whether this shard runs the point numbered `point` (from 0).
    pub fn holds(&self, point: usize) -> bool {
        point % self.count == self.index - 1
    }
}

pub fn parse_shard(text: &str) -> Result<Shard, String> {
    let usage = "expected I/N with 1 ≤ I ≤ N, e.g. 2/3 for the second of three shards";
    let (index, count) = text.split_once('/').ok_or_else(|| format!("`{text}`: {usage}"))?;
    let parse = |s: &str| s.trim().parse::<usize>().map_err(|_| format!("`{text}`: `{s}` is not a number; {usage}"));
    let (index, count) = (parse(index)?, parse(count)?);
    match (index, count) {
        (_, 0) => Err(format!("`{text}`: N is the number of shards, at least 1; {usage}")),
        (0, _) => Err(format!("`{text}`: I counts from 1; {usage}")),
        (i, n) if i > n => Err(format!("`{text}`: shard {i} of {n} does not exist; {usage}")),
        _ => Ok(Shard { index, count }),
    }
}

/// Where the points run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Engine {
    Sim,
    Datapath,
}

impl Engine {
    /// The `pfcswitch scenario` subcommand that runs a point.
    pub fn command(self) -> &'static str {
        match self {
            Engine::Sim => "simulate",
            Engine::Datapath => "run",
        }
    }

    /// Ends a point's directory name, as it ends a run's.
    pub fn suffix(self) -> &'static str {
        match self {
            Engine::Sim => "-sim",
            Engine::Datapath => "",
        }
    }
}

/// `sweep.json`: what a sweep (or one shard of it) runs. A sweep run again into the same
/// directory must have the same manifest; shards merge if theirs differ only in the index.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// As given: a built-in name or a file.
    pub scenario: String,
    pub keys: Vec<Axis>,
    pub policies: Vec<String>,
    pub seeds: Vec<u64>,
    pub engine: Engine,
    pub shard: Option<Shard>,
}

impl Manifest {
    const FILE: &'static str = "sweep.json";

    pub fn read(dir: &Path) -> Result<Manifest> {
        let path = dir.join(Manifest::FILE);
        let text = std::fs::read(&path).with_context(|| format!("cannot read {} (is it a sweep?)", path.display()))?;
        serde_json::from_slice(&text).with_context(|| format!("{} is not a sweep manifest", path.display()))
    }

    /// Writes it into `dir`, or checks that the one there is the same (a resumed sweep).
    pub fn write_or_check(&self, dir: &Path) -> Result<()> {
        let path = dir.join(Manifest::FILE);
        if path.exists() {
            let there = Manifest::read(dir)?;
            let mut differences = self.differences(&there);
            if self.shard != there.shard {
                let shard = |m: &Manifest| m.shard.map_or("none".into(), |s| format!("{}/{}", s.index, s.count));
                differences.push(format!("shard: {} vs {}", shard(self), shard(&there)));
            }
            if !differences.is_empty() {
                bail!(
                    "{} holds another sweep (this one's vs that one's: {}); give another --out, or remove it",
                    dir.display(),
                    differences.join("; ")
                );
            }
            return Ok(());
        }
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&path, serde_json::to_vec_pretty(self)?)
            .with_context(|| format!("cannot write {}", path.display()))
    }

    /// What differs from `other` but a shard's index: the names of the fields, with both
    /// values where they are short.
    pub fn differences(&self, other: &Manifest) -> Vec<String> {
        let mut differences = Vec::new();
        let mut compare = |name: &str, a: String, b: String| {
            if a != b {
                differences.push(format!("{name}: {a} vs {b}"));
            }
        };
        let keys = |m: &Manifest| serde_json::to_string(&m.keys).unwrap_or_default();
        compare("scenario", self.scenario.clone(), other.scenario.clone());
        compare("keys and values", keys(self), keys(other));
        compare("policies", self.policies.join(","), other.policies.join(","));
        compare("seeds", format!("{:?}", self.seeds), format!("{:?}", other.seeds));
        compare("engine", format!("{:?}", self.engine), format!("{:?}", other.engine));
        let count = |m: &Manifest| m.shard.map_or(1, |s| s.count).to_string();
        compare("shard count", count(self), count(other));
        differences
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axes_split_on_commas_outside_values() {
        let axis = parse_axis("load=0.3, 0.5,0.7").unwrap();
        assert_eq!(axis, Axis { key: "load".into(), values: vec!["0.3".into(), "0.5".into(), "0.7".into()] });
        let axis = parse_axis("class.q.senders=[\"h1\",\"h2\"],[\"h1\"]").unwrap();
        assert_eq!(axis.values, ["[\"h1\",\"h2\"]", "[\"h1\"]"]);
        let axis = parse_axis("name=\"a,b\",c").unwrap();
        assert_eq!(axis.values, ["\"a,b\"", "c"]);
        assert_eq!(parse_axis("pfc.xoff=100KB").unwrap().values, ["100KB"]);
        assert!(parse_axis("load").unwrap_err().contains("KEY=V1,V2"));
        assert!(parse_axis("=1").unwrap_err().contains("key is empty"));
        assert!(parse_axis("load=0.3,,0.5").unwrap_err().contains("value 2 is empty"));
        assert!(parse_axis("load=0.3,0.3").unwrap_err().contains("given twice"));
        assert!(parse_axis("policy=pfc,ofc").unwrap_err().contains("--policies"));
    }

    #[test]
    fn seeds_are_a_range_or_a_list() {
        assert_eq!(parse_seeds("1..5").unwrap(), Seeds(vec![1, 2, 3, 4, 5]));
        assert_eq!(parse_seeds("7..7").unwrap(), Seeds(vec![7]));
        assert_eq!(parse_seeds("3,1,2").unwrap(), Seeds(vec![3, 1, 2]));
        assert_eq!(parse_seeds("4").unwrap(), Seeds(vec![4]));
        assert!(parse_seeds("5..1").unwrap_err().contains("A ≤ B"));
        assert!(parse_seeds("1,x").unwrap_err().contains("`x` is not a seed"));
        assert!(parse_seeds("1..").unwrap_err().contains("is not a seed"));
        assert!(parse_seeds("-1").unwrap_err().contains("is not a seed"));
        assert!(parse_seeds("1,2,1").unwrap_err().contains("seed 1 is given twice"));
    }

    #[test]
    fn bad_shard_specs_are_refused_with_the_rule() {
        assert_eq!(parse_shard("2/3").unwrap(), Shard { index: 2, count: 3 });
        assert_eq!(parse_shard("1/1").unwrap(), Shard { index: 1, count: 1 });
        for (text, says) in [
            ("0/3", "I counts from 1"),
            ("4/3", "shard 4 of 3 does not exist"),
            ("a/b", "`a` is not a number"),
            ("1/0", "at least 1"),
            ("3", "expected I/N"),
        ] {
            let error = parse_shard(text).unwrap_err();
            assert!(error.contains(says) && error.contains("1 ≤ I ≤ N"), "{text}: {error}");
        }
    }

    #[test]
    fn manifests_of_shards_differ_only_in_the_index() {
        let manifest = |index, count, seeds: Vec<u64>| Manifest {
            scenario: "incast".into(),
            keys: vec![Axis { key: "load".into(), values: vec!["0.5".into()] }],
            policies: vec!["pfc".into()],
            seeds,
            engine: Engine::Sim,
            shard: Some(Shard { index, count }),
        };
        assert!(manifest(1, 3, vec![1, 2]).differences(&manifest(3, 3, vec![1, 2])).is_empty());
        let differences = manifest(1, 3, vec![1, 2]).differences(&manifest(2, 2, vec![1]));
        assert_eq!(differences, ["seeds: [1, 2] vs [1]", "shard count: 3 vs 2"]);
    }
}
