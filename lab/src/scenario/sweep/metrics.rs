//! The metrics a sweep summarises, each read from a point's `results.json` by JSON pointer.
//! A null or missing value leaves that seed out of the metric's mean.

use serde_json::Value;

/// A metric's name and where `results.json` holds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Metric {
    pub name: &'static str,
    pub pointer: &'static str,
}

/// Every metric, in the order summaries list them. The FCTs are over all classes (the
/// summary's group `all`); Jain's index is the first phase's, into its first receiver.
pub const METRICS: [Metric; 17] = [
    Metric { name: "slowdown-p50", pointer: "/summary/slowdown/p50" },
    Metric { name: "slowdown-p95", pointer: "/summary/slowdown/p95" },
    Metric { name: "slowdown-p99", pointer: "/summary/slowdown/p99" },
    Metric { name: "slowdown-mean", pointer: "/summary/slowdown/mean" },
    Metric { name: "offered-load", pointer: "/summary/offered_load/achieved" },
    Metric { name: "fct-avg-ms", pointer: "/summary/groups/0/fct_avg_ms" },
    Metric { name: "fct-p50-ms", pointer: "/summary/groups/0/fct_p50_ms" },
    Metric { name: "fct-p99-ms", pointer: "/summary/groups/0/fct_p99_ms" },
    Metric { name: "fct-max-ms", pointer: "/summary/groups/0/fct_max_ms" },
    Metric { name: "pfc-frames", pointer: "/summary/pfc_frames" },
    Metric { name: "drops", pointer: "/summary/drops" },
    Metric { name: "lossless-drops", pointer: "/summary/lossless_drops" },
    Metric { name: "avg-queue-bytes", pointer: "/summary/average_queue_bytes" },
    Metric { name: "max-queue-bytes", pointer: "/summary/max_egress_bytes" },
    Metric { name: "utilisation", pointer: "/summary/busiest_output/utilisation" },
    Metric { name: "queue-p99-bytes", pointer: "/summary/busiest_output/queue_p99_bytes" },
    // The first phase's first receiver: a sweep's scenario has one of each to be fair about.
    Metric { name: "jain", pointer: "/summary/phases/0/fairness/0/jain" },
];

impl Metric {
    /// Its value in a point's results, if it has one.
    pub fn read(&self, results: &Value) -> Option<f64> {
        results.pointer(self.pointer)?.as_f64()
    }
}

/// Every metric's value in a point's results, in [`METRICS`]' order.
pub fn read_all(results: &Value) -> Vec<Option<f64>> {
    METRICS.iter().map(|m| m.read(results)).collect()
}

/// A metric by name; an unknown one is refused with the list.
pub fn parse_metric(name: &str) -> Result<Metric, String> {
    METRICS.iter().find(|m| m.name == name).copied().ok_or_else(|| {
        let names: Vec<&str> = METRICS.iter().map(|m| m.name).collect();
        format!("unknown metric `{name}` (known: {})", names.join(", "))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn metrics_are_read_by_pointer_and_null_is_none() {
        let results = json!({ "summary": { "pfc_frames": 12, "slowdown": { "p99": null },
            "groups": [{ "group": "all", "fct_p99_ms": 4.5 }] } });
        let read = |name| parse_metric(name).unwrap().read(&results);
        assert_eq!(read("pfc-frames"), Some(12.0));
        assert_eq!(read("fct-p99-ms"), Some(4.5));
        assert_eq!(read("slowdown-p99"), None);
        assert_eq!(read("drops"), None);
        let error = parse_metric("p99").unwrap_err();
        assert!(error.contains("unknown metric `p99`") && error.contains("slowdown-p99, slowdown-mean"), "{error}");
    }
}
