//! Empirical flow-size distributions: the published workloads flow-control papers draw flow
//! sizes from (the files of `workloads/`: WebSearch from DCTCP, Data Mining from VL2, Facebook
//! Hadoop, HPCC's Storage; `workloads/README.md` gives each one's source) or a file of the
//! user's own in the same format.
//!
//! A distribution is a CDF, one point per line, `SIZE_BYTES CUMULATIVE_PROBABILITY`,
//! whitespace-separated; `#` starts a comment and blank lines are ignored. Sizes are
//! non-negative and non-decreasing; probabilities are in [0, 1], non-decreasing, and the last
//! is exactly 1. A file whose last probability is exactly 100 is read as percent, every
//! probability divided by 100, so HPCC's `traffic_gen` files load as they are.
//!
//! Sizes are drawn by inverse transform with linear interpolation between consecutive points,
//! as HPCC's `traffic_gen/custom_rand.py` and ns-2's `EmpiricalRandomVariable` do: for `u`
//! uniform in (0, 1], the first point whose probability is at least `u`, and the size at `u`
//! on the line from the point before it. Sizes are thus uniform between two points; a size
//! repeated puts the difference of its probabilities on exactly that size (half of the Data
//! Mining flows are one packet). HPCC requires the first probability to be 0; a first
//! probability above 0 is that share of flows at exactly the first size, as in ns-2.

use pfcswitch_link::rng::Rng;
use std::path::{Component, Path, PathBuf};

const EXTENSION: &str = "cdf";

/// Built-in distributions' names: the `*.cdf` files of the given folder, sorted.
pub fn builtin_names(builtin_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(builtin_dir) else { return Vec::new() };
    let mut names: Vec<String> = entries
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|e| e == EXTENSION) && path.is_file())
        .filter_map(|path| path.file_stem()?.to_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// An empirical flow-size distribution (see the [module](self) for the file format and the
/// sampling).
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizes {
    name: String,
    /// (size in bytes, cumulative probability), both non-decreasing, the last probability 1.
    points: Vec<(f64, f64)>,
}

// The io errors are part of the message, not `source()`: a chain (anyhow's `{:#}`) would
// print them twice.
#[derive(Debug, thiserror::Error)]
pub enum FlowSizesError {
    #[error("cannot read {}: {error}", file.display())]
    Unreadable { file: PathBuf, error: std::io::Error },
    #[error("`{name}` is not a built-in flow-size distribution ({builtins}) nor a file ({}: {error})", file.display())]
    Unknown { name: String, builtins: String, file: PathBuf, error: std::io::Error },
    #[error("{}: no points (a CDF is lines of `SIZE_BYTES CUMULATIVE_PROBABILITY`)", file.display())]
    Empty { file: PathBuf },
    #[error("{}:{line}: expected two numbers, `SIZE_BYTES CUMULATIVE_PROBABILITY`, not `{text}`", file.display())]
    NotTwoNumbers { file: PathBuf, line: usize, text: String },
    #[error("{}:{line}: size {size} is negative", file.display())]
    NegativeSize { file: PathBuf, line: usize, size: f64 },
    #[error("{}:{line}: cumulative probability {probability} is outside [0, {top}]", file.display())]
    OutOfRange { file: PathBuf, line: usize, probability: f64, top: f64 },
    #[error("{}:{line}: sizes must not decrease ({size} after {previous})", file.display())]
    SizeDecreases { file: PathBuf, line: usize, size: f64, previous: f64 },
    #[error("{}:{line}: cumulative probabilities must not decrease ({probability} after {previous})", file.display())]
    ProbabilityDecreases { file: PathBuf, line: usize, probability: f64, previous: f64 },
    #[error(
        "{}:{line}: the last cumulative probability is {last}; a CDF must end at 1 (or at 100, in percent)",
        file.display()
    )]
    DoesNotEndAtOne { file: PathBuf, line: usize, last: f64 },
}

impl FlowSizes {
    /// A built-in name (e.g. "websearch": builtin_dir/websearch.cdf) or else a path, relative
    /// paths against `base` (the scenario file's folder).
    pub fn load(spec: &str, base: &Path, builtin_dir: &Path) -> Result<FlowSizes, FlowSizesError> {
        // Only a bare name can be a built-in: "../x" must not reach out of the folder.
        let mut components = Path::new(spec).components();
        let bare = matches!((components.next(), components.next()), (Some(Component::Normal(_)), None));
        let builtin = builtin_dir.join(format!("{spec}.{EXTENSION}"));
        let file = if bare && builtin.is_file() { builtin } else { base.join(spec) };
        match std::fs::read_to_string(&file) {
            Ok(text) => FlowSizes::parse(&text, &file),
            // A bare name that is no file was most likely meant as a built-in: list them.
            Err(error) if bare && error.kind() == std::io::ErrorKind::NotFound => Err(FlowSizesError::Unknown {
                name: spec.to_owned(),
                builtins: builtin_names(builtin_dir).join(", "),
                file,
                error,
            }),
            Err(error) => Err(FlowSizesError::Unreadable { file, error }),
        }
    }

    /// Parses the text of `file` (the path is only for error messages).
    pub fn parse(text: &str, file: &Path) -> Result<FlowSizes, FlowSizesError> {
        let path = || file.to_path_buf();
        let mut rows = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let content = raw.split('#').next().unwrap_or_default().trim();
            if content.is_empty() {
                continue;
            }
            // "nan" and "inf" parse as f64 but are no size or probability.
            let numbers: Option<Vec<f64>> =
                content.split_whitespace().map(|word| word.parse().ok().filter(|v: &f64| v.is_finite())).collect();
            match numbers.as_deref() {
                Some(&[size, probability]) => rows.push((index + 1, size, probability)),
                _ => return Err(FlowSizesError::NotTwoNumbers { file: path(), line: index + 1, text: content.into() }),
            }
        }
        let &(last_line, _, last) = rows.last().ok_or_else(|| FlowSizesError::Empty { file: path() })?;
        // HPCC's traffic_gen files are in percent.
        let top = if last == 100.0 { 100.0 } else { 1.0 };
        if last != top {
            return Err(FlowSizesError::DoesNotEndAtOne { file: path(), line: last_line, last });
        }
        let mut previous: Option<(f64, f64)> = None;
        for &(line, size, probability) in &rows {
            if size < 0.0 {
                return Err(FlowSizesError::NegativeSize { file: path(), line, size });
            }
            if !(0.0..=top).contains(&probability) {
                return Err(FlowSizesError::OutOfRange { file: path(), line, probability, top });
            }
            if let Some((previous_size, previous_probability)) = previous {
                if size < previous_size {
                    return Err(FlowSizesError::SizeDecreases { file: path(), line, size, previous: previous_size });
                }
                if probability < previous_probability {
                    let previous = previous_probability;
                    return Err(FlowSizesError::ProbabilityDecreases { file: path(), line, probability, previous });
                }
            }
            previous = Some((size, probability));
        }
        let name = file.file_stem().map(|stem| stem.to_string_lossy().into_owned()).unwrap_or_default();
        Ok(FlowSizes { name, points: rows.iter().map(|&(_, size, probability)| (size, probability / top)).collect() })
    }

    /// The file's stem ("websearch").
    pub fn name(&self) -> &str {
        &self.name
    }

    /// One size in bytes, at least 1, by inverse transform with linear interpolation. Rounded
    /// to the nearest byte (HPCC truncates): the samples' mean stays within a byte of
    /// [`mean`](Self::mean).
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        let u = rng.fraction();
        // The last probability is 1 ≥ u, so some point qualifies.
        let i = self.points.partition_point(|&(_, p)| p < u);
        let (x1, p1) = self.points[i];
        let bytes = match i {
            0 => x1,
            _ => {
                // p0 < u ≤ p1: the segment has width.
                let (x0, p0) = self.points[i - 1];
                x0 + (x1 - x0) * (u - p0) / (p1 - p0)
            }
        };
        (bytes.round() as u64).max(1)
    }

    /// The distribution's exact mean in bytes under that interpolation (what the target load
    /// divides by): the first point's share at its size, then each segment's share at its
    /// midpoint, as HPCC's `getAvg` computes it.
    pub fn mean(&self) -> f64 {
        let (x0, p0) = self.points[0];
        x0 * p0 + self.points.windows(2).map(|w| (w[0].0 + w[1].0) / 2.0 * (w[1].1 - w[0].1)).sum::<f64>()
    }

    /// The CDF at `bytes` under the same interpolation: P(size ≤ bytes).
    pub fn cdf(&self, bytes: f64) -> f64 {
        self.below(bytes, false)
    }

    /// P(size ≤ bytes), or P(size < bytes) when `strict`: they differ where sizes repeat.
    fn below(&self, bytes: f64, strict: bool) -> f64 {
        let k = self.points.partition_point(|&(size, _)| if strict { size < bytes } else { size <= bytes });
        if k == 0 {
            return 0.0;
        }
        if k == self.points.len() {
            return 1.0;
        }
        // x0 ≤ bytes < x1 (strict: x0 < bytes ≤ x1), so x1 > x0.
        let ((x0, p0), (x1, p1)) = (self.points[k - 1], self.points[k]);
        p0 + (p1 - p0) * (bytes - x0) / (x1 - x0)
    }

    /// Kolmogorov–Smirnov distance between samples and this CDF (sorts `samples`): the largest
    /// gap between their empirical CDF and [`cdf`](Self::cdf), on either side of each sample;
    /// 0 for no samples.
    pub fn ks_distance(&self, samples: &mut [f64]) -> f64 {
        samples.sort_by(f64::total_cmp);
        let n = samples.len() as f64;
        let mut distance: f64 = 0.0;
        let mut i = 0;
        while i < samples.len() {
            // Equal samples make one step of the empirical CDF; where the CDF jumps too (a
            // repeated size), the step is compared with the jump from both sides.
            let x = samples[i];
            let j = i + samples[i..].iter().take_while(|&&s| s == x).count();
            distance = distance.max(j as f64 / n - self.cdf(x)).max(self.below(x, true) - i as f64 / n);
            i = j;
        }
        distance
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn builtin_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../workloads")
    }

    fn builtin(name: &str) -> FlowSizes {
        FlowSizes::load(name, Path::new("/nonexistent"), &builtin_dir()).unwrap()
    }

    /// The variance under the interpolation: the first point's share at its size, each
    /// segment uniform (E[X²] = (a² + ab + b²)/3).
    fn variance(sizes: &FlowSizes) -> f64 {
        let (x0, p0) = sizes.points[0];
        let second = x0 * x0 * p0
            + sizes
                .points
                .windows(2)
                .map(|w| (w[0].0.powi(2) + w[0].0 * w[1].0 + w[1].0.powi(2)) / 3.0 * (w[1].1 - w[0].1))
                .sum::<f64>();
        second - sizes.mean().powi(2)
    }

    fn draw(sizes: &FlowSizes, n: usize) -> Vec<f64> {
        let mut rng = Rng::new(27);
        (0..n).map(|_| sizes.sample(&mut rng) as f64).collect()
    }

    fn refused(text: &str) -> String {
        FlowSizes::parse(text, Path::new("workloads/bad.cdf")).unwrap_err().to_string()
    }

    #[test]
    fn websearch_samples_follow_the_cdf() {
        let websearch = builtin("websearch");
        let n = 100_000;
        let mut samples = draw(&websearch, n);
        // The mean first: ks_distance sorts the samples.
        let sample_mean = samples.iter().sum::<f64>() / n as f64;
        let critical = 1.95 / (n as f64).sqrt(); // the KS test's 99.9 % critical value
        let distance = websearch.ks_distance(&mut samples);
        println!(
            "{n} WebSearch sizes: KS distance {distance:.5} (99.9 % bound {critical:.5}), mean {sample_mean:.0} B against {:.0} B",
            websearch.mean()
        );
        assert!(distance < critical, "KS distance {distance} ≥ {critical}");
        // Sizes are bounded (30 MB), so the variance is finite and the sample mean is normal
        // for n = 100,000 despite the heavy tail: σ = 3.97 MB, a standard error of 12.5 kB
        // (0.73 % of the mean). Five standard errors (3.7 %) fail a correct sampler with
        // probability 6e-7, yet catch a segment drawn wrong.
        let standard_error = (variance(&websearch) / n as f64).sqrt();
        assert!((standard_error - 12_543.0).abs() < 1.0, "standard error {standard_error}");
        let error = (sample_mean - websearch.mean()).abs();
        assert!(error < 5.0 * standard_error, "sample mean {sample_mean}, mean {}", websearch.mean());
    }

    #[test]
    fn every_builtin_follows_its_cdf() {
        // Rounding to whole bytes shifts the empirical CDF by at most half the steepest
        // slope per byte (Hadoop's: 10 % over 50 bytes, 0.001), well below the critical value.
        let n = 100_000;
        for name in builtin_names(&builtin_dir()) {
            let sizes = builtin(&name);
            let distance = sizes.ks_distance(&mut draw(&sizes, n));
            assert!(distance < 1.95 / (n as f64).sqrt(), "{name}: KS distance {distance}");
        }
        // Data Mining's repeated first size: half of the flows are exactly one packet.
        let one_packet = draw(&builtin("datamining"), n).iter().filter(|&&s| s == 1460.0).count();
        assert!((one_packet as f64 / n as f64 - 0.5).abs() < 0.005, "{one_packet}");
    }

    #[test]
    fn builtins_load_with_the_means_of_their_sources() {
        let names = builtin_names(&builtin_dir());
        assert_eq!(names, ["datamining", "hadoop", "storage", "websearch"]);
        // Computed from the sources' points (HPCC's getAvg gives the same; YAPS prints
        // 5116.6 packets of 1460 bytes for Data Mining). The folklore "1.6 MB" of WebSearch is
        // pFabric's packet-valued table; HPCC's byte-valued one gives 1.71 MB.
        let means =
            [("datamining", 7_470_236.0), ("hadoop", 120_420.75), ("storage", 40_869.8), ("websearch", 1_711_250.0)];
        for (name, mean) in means {
            let sizes = builtin(name);
            assert_eq!(sizes.name(), name);
            assert!((sizes.mean() - mean).abs() < 1e-6 * mean, "{name}: mean {}", sizes.mean());
        }
    }

    #[test]
    fn percent_files_read_as_hpccs_own() {
        // HPCC's AliStorage2019.txt as it is, in percent.
        let hpcc = "0 0\n4000 22.93\n8000 69.21\n16000 80.61\n32000 90.47\n64000 93.53\n128000 96.77\n256000 97.53\n2000000 100\n";
        let percent = FlowSizes::parse(hpcc, Path::new("AliStorage2019.txt")).unwrap();
        let storage = builtin("storage");
        assert_eq!(percent.points.len(), storage.points.len());
        for (a, b) in percent.points.iter().zip(&storage.points) {
            assert_eq!(a.0, b.0);
            assert!((a.1 - b.1).abs() < 1e-12, "{a:?} against {b:?}");
        }
        assert_eq!(percent.name(), "AliStorage2019");
    }

    #[test]
    fn cdf_is_zero_below_the_first_point_and_one_from_the_last() {
        for name in builtin_names(&builtin_dir()) {
            let sizes = builtin(&name);
            let (first, last) = (sizes.points[0].0, sizes.points[sizes.points.len() - 1].0);
            assert_eq!(sizes.cdf(first - 1.0), 0.0, "{name}");
            assert_eq!(sizes.cdf(-1.0), 0.0, "{name}");
            assert_eq!(sizes.cdf(last), 1.0, "{name}");
            assert_eq!(sizes.cdf(last * 2.0), 1.0, "{name}");
            // Every sample lies where the CDF rises, and the CDF never falls.
            let mut samples = draw(&sizes, 1_000);
            samples.sort_by(f64::total_cmp);
            let values: Vec<f64> = samples.iter().map(|&s| sizes.cdf(s)).collect();
            assert!(values.iter().all(|v| (0.0..=1.0).contains(v)), "{name}");
            assert!(values.windows(2).all(|w| w[0] <= w[1]), "{name}");
        }
        let websearch = builtin("websearch");
        assert_eq!(websearch.cdf(10_000.0), 0.15);
        assert!((websearch.cdf(15_000.0) - 0.175).abs() < 1e-12);
        // A repeated size: the CDF jumps there, and is the higher probability at it.
        let datamining = builtin("datamining");
        assert_eq!(datamining.cdf(1459.0), 0.0);
        assert_eq!(datamining.cdf(1460.0), 0.5);
    }

    #[test]
    fn a_first_probability_above_zero_is_the_share_at_the_first_size() {
        let sizes = FlowSizes::parse(
            "# half at 1000 B, half uniform up to 2000 B\n\n1000 0.5\n2000 1 # end\n",
            Path::new("my.cdf"),
        )
        .unwrap();
        assert_eq!(sizes.mean(), 1250.0);
        assert_eq!((sizes.cdf(999.0), sizes.cdf(1000.0), sizes.cdf(1500.0)), (0.0, 0.5, 0.75));
        let samples = draw(&sizes, 10_000);
        let at_first = samples.iter().filter(|&&s| s == 1000.0).count() as f64 / 1e4;
        assert!((at_first - 0.5).abs() < 0.02, "{at_first}");
        assert!(samples.iter().all(|&s| (1000.0..=2000.0).contains(&s)));
        assert!(sizes.ks_distance(&mut samples.clone()) < 1.95 / 100.0);
        // Sizes below half a byte are still one byte.
        let tiny = FlowSizes::parse("0 0\n0.4 1\n", Path::new("tiny.cdf")).unwrap();
        assert_eq!(tiny.sample(&mut Rng::new(1)), 1);
    }

    #[test]
    fn bad_files_are_refused_with_file_line_and_reason() {
        assert_eq!(
            refused("# sizes\n0 0\n5000 0.5\n3000 0.6\n6000 1\n"),
            "workloads/bad.cdf:4: sizes must not decrease (3000 after 5000)"
        );
        assert_eq!(
            refused("0 0\n5000 0.5\n6000 0.4\n7000 1\n"),
            "workloads/bad.cdf:3: cumulative probabilities must not decrease (0.4 after 0.5)"
        );
        assert_eq!(
            refused("0 0\n5000 0.5\n\n6000 0.9\n"),
            "workloads/bad.cdf:4: the last cumulative probability is 0.9; a CDF must end at 1 (or at 100, in percent)"
        );
        assert_eq!(refused("0 0\n-5 0.5\n6000 1\n"), "workloads/bad.cdf:2: size -5 is negative");
        assert_eq!(
            refused("0 0\n5 1.5\n6000 1\n"),
            "workloads/bad.cdf:2: cumulative probability 1.5 is outside [0, 1]"
        );
        assert_eq!(refused("0 -1\n6000 100\n"), "workloads/bad.cdf:1: cumulative probability -1 is outside [0, 100]");
        assert_eq!(
            refused("0 0\n5000, 0.5\n6000 1\n"),
            "workloads/bad.cdf:2: expected two numbers, `SIZE_BYTES CUMULATIVE_PROBABILITY`, not `5000, 0.5`"
        );
        // YAPS's three columns, and numbers that are not finite.
        assert!(refused("1 1 0\n1 1 1\n").starts_with("workloads/bad.cdf:1: expected two numbers"));
        assert!(refused("0 0\nnan 1\n").starts_with("workloads/bad.cdf:2: expected two numbers"));
        assert_eq!(
            refused("# only a comment\n\n"),
            "workloads/bad.cdf: no points (a CDF is lines of `SIZE_BYTES CUMULATIVE_PROBABILITY`)"
        );
    }

    #[test]
    fn specs_are_builtins_or_paths_against_the_base() {
        let base = tempfile::tempdir().unwrap();
        std::fs::write(base.path().join("my.cdf"), "100 0\n300 1\n").unwrap();
        let mine = FlowSizes::load("my.cdf", base.path(), &builtin_dir()).unwrap();
        assert_eq!((mine.name(), mine.mean()), ("my", 200.0));
        let absolute = base.path().join("my.cdf");
        assert_eq!(FlowSizes::load(absolute.to_str().unwrap(), Path::new("/elsewhere"), &builtin_dir()).unwrap(), mine);

        let unknown = FlowSizes::load("websarch", base.path(), &builtin_dir()).unwrap_err().to_string();
        assert!(
            unknown.starts_with("`websarch` is not a built-in flow-size distribution (datamining, hadoop, storage, websearch) nor a file"),
            "{unknown}"
        );
        assert!(unknown.contains(&base.path().join("websarch").display().to_string()), "{unknown}");
        // A path is never a built-in's name.
        let missing = FlowSizes::load("sizes/websearch", base.path(), &builtin_dir()).unwrap_err();
        assert!(matches!(missing, FlowSizesError::Unreadable { .. }), "{missing}");
        assert!(
            missing
                .to_string()
                .starts_with(&format!("cannot read {}: ", base.path().join("sizes/websearch").display()))
        );
    }
}
