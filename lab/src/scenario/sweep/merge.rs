//! `pfcswitch scenario merge`: the shards of one sweep (their directories, e.g. a job array's)
//! put together: each point's results from whichever directory holds them, summarised as an
//! unsharded sweep summarises.

use super::execute::read_results;
use super::metrics::read_all;
use super::points::points;
use super::spec::{Manifest, MergeArgs};
use super::summary::summarise;
use anyhow::{Context, Result, bail};

/// The most missing points an error lists.
const LISTED: usize = 20;

/// Summarises the shards in `args.dirs` as one sweep.
pub fn merge(args: &MergeArgs) -> Result<()> {
    let manifests = args.dirs.iter().map(|dir| Manifest::read(dir)).collect::<Result<Vec<_>>>()?;
    let (first, first_dir) = (&manifests[0], &args.dirs[0]);
    for (manifest, dir) in manifests.iter().zip(&args.dirs).skip(1) {
        let differences = first.differences(manifest);
        if !differences.is_empty() {
            bail!(
                "{} and {} are not shards of one sweep: {}",
                first_dir.display(),
                dir.display(),
                differences.join("; ")
            );
        }
    }
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for point in points(first) {
        let found = manifests.iter().zip(&args.dirs).find_map(|(m, dir)| read_results(&point.dir(dir, m)).ok());
        match found {
            Some(results) => values.push(read_all(&results)),
            None => missing.push(point.label(&first.keys)),
        }
    }
    if !missing.is_empty() {
        let more = missing.len().saturating_sub(LISTED);
        let more = if more > 0 { format!("\n  … and {more} more") } else { String::new() };
        bail!(
            "{} of {} points have no results in {}; run their shards (again) first:\n  {}{more}",
            missing.len(),
            values.len() + missing.len(),
            args.dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", "),
            missing[..missing.len().min(LISTED)].join("\n  ")
        );
    }
    let out = args.out.as_ref().unwrap_or(first_dir);
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    summarise(first, &values, out, args.metric)
}
