//! A sweep's points and where each writes. The points are numbered in one fixed order: every
//! combination of the keys' values (the first key's varying slowest, each key's values in the
//! order given), within it every policy in order, within that every seed in order (fastest).
//! A shard I/N runs the points whose number ≡ I − 1 (mod N): consecutive seeds go to
//! different shards, which evens out their work.

use super::spec::{Axis, Manifest};
use std::path::{Path, PathBuf};

/// One run of a sweep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Point {
    /// Its number in the sweep's order, from 0.
    pub index: usize,
    /// One value per key, in the keys' order.
    pub values: Vec<String>,
    pub policy: String,
    pub seed: u64,
}

/// Every combination of the keys' values, the first key's varying slowest.
pub fn combinations(keys: &[Axis]) -> Vec<Vec<String>> {
    keys.iter().fold(vec![Vec::new()], |combinations, axis| {
        let extend = |prefix: &Vec<String>| {
            axis.values
                .iter()
                .map(|v| prefix.iter().cloned().chain([v.clone()]).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        };
        combinations.iter().flat_map(extend).collect()
    })
}

/// Every point of the sweep, in its order (see the module's documentation).
pub fn points(manifest: &Manifest) -> Vec<Point> {
    let mut points = Vec::new();
    for values in combinations(&manifest.keys) {
        for policy in &manifest.policies {
            for &seed in &manifest.seeds {
                let index = points.len();
                points.push(Point { index, values: values.clone(), policy: policy.clone(), seed });
            }
        }
    }
    points
}

/// `KEY=VALUE` for each key of a combination.
pub fn sets(keys: &[Axis], values: &[String]) -> Vec<String> {
    keys.iter().zip(values).map(|(axis, value)| format!("{}={value}", axis.key)).collect()
}

impl Point {
    /// Its `--set`s.
    pub fn sets(&self, keys: &[Axis]) -> Vec<String> {
        sets(keys, &self.values)
    }

    /// `ROOT/points/KEY=V[,KEY=V]/POLICY-seedS[-sim]`, with `%` and `/` written as `%25` and
    /// `%2F`, so that every point has a directory of its own.
    pub fn dir(&self, root: &Path, manifest: &Manifest) -> PathBuf {
        let combination = self.sets(&manifest.keys).join(",").replace('%', "%25").replace('/', "%2F");
        let run = format!("{}-seed{}{}", self.policy, self.seed, manifest.engine.suffix());
        root.join("points").join(combination).join(run)
    }

    /// How progress lines and errors name it: `KEY=V … POLICY seed S`.
    pub fn label(&self, keys: &[Axis]) -> String {
        format!("{} {} seed {}", self.sets(keys).join(" "), self.policy, self.seed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::spec::{Engine, Shard};
    use super::*;

    fn manifest(keys: &[(&str, &[&str])], policies: &[&str], seeds: &[u64]) -> Manifest {
        Manifest {
            scenario: "incast".into(),
            keys: (keys.iter())
                .map(|(key, values)| Axis {
                    key: key.to_string(),
                    values: values.iter().map(|v| v.to_string()).collect(),
                })
                .collect(),
            policies: policies.iter().map(|p| p.to_string()).collect(),
            seeds: seeds.to_vec(),
            engine: Engine::Sim,
            shard: None,
        }
    }

    #[test]
    fn points_follow_the_documented_order() {
        let m = manifest(&[("load", &["0.3", "0.5"]), ("sizes", &["a", "b", "c"])], &["pfc", "ofc"], &[1, 2]);
        let points = points(&m);
        assert_eq!(points.len(), 2 * 3 * 2 * 2);
        assert!(points.iter().enumerate().all(|(i, p)| p.index == i));
        let show = |p: &Point| format!("{} {} {}", p.values.join(" "), p.policy, p.seed);
        let shown: Vec<String> = points.iter().take(6).map(show).collect();
        assert_eq!(shown, ["0.3 a pfc 1", "0.3 a pfc 2", "0.3 a ofc 1", "0.3 a ofc 2", "0.3 b pfc 1", "0.3 b pfc 2"]);
        assert_eq!(show(&points[23]), "0.5 c ofc 2");
    }

    #[test]
    fn directories_are_one_per_point_and_escape_slashes() {
        let m = manifest(&[("load", &["0.5"]), ("class.q.sizes", &["a/b", "a%2Fb"])], &["pfc"], &[3]);
        let dirs: Vec<PathBuf> = points(&m).iter().map(|p| p.dir(Path::new("out"), &m)).collect();
        assert_eq!(dirs[0], Path::new("out/points/load=0.5,class.q.sizes=a%2Fb/pfc-seed3-sim"));
        assert_eq!(dirs[1], Path::new("out/points/load=0.5,class.q.sizes=a%252Fb/pfc-seed3-sim"));
        assert_eq!(points(&m)[0].label(&m.keys), "load=0.5 class.q.sizes=a/b pfc seed 3");
    }

    #[test]
    fn shards_partition_the_points() {
        let m = manifest(&[("load", &["0.1", "0.2", "0.3"])], &["pfc", "ofc"], &[1, 2, 3, 4, 5]);
        let all = points(&m);
        for count in 1..=7 {
            let mut seen = vec![0; all.len()];
            for index in 1..=count {
                let shard = Shard { index, count };
                for p in all.iter().filter(|p| shard.holds(p.index)) {
                    seen[p.index] += 1;
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{count} shards: {seen:?}");
        }
        let first: Vec<usize> =
            all.iter().filter(|p| Shard { index: 1, count: 4 }.holds(p.index)).map(|p| p.index).collect();
        assert_eq!(first, [0, 4, 8, 12, 16, 20, 24, 28]);
    }
}
