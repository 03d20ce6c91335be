//! Building blocks of the exposition: constant metrics and the families that hold them,
//! shared by the switch's families and each scheme's (`fecn`, `ofc`, `qcn`).

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use std::fmt;

pub(super) type Labels = Vec<(&'static str, String)>;

/// A family of constant metrics. Counter names are given with `_total`, as scrapers see them;
/// OpenMetrics names the family without it and the encoder appends it to the samples.
pub(super) fn family<M: EncodeMetric + TypedMetric>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    samples: impl IntoIterator<Item = (Labels, M)>,
) -> fmt::Result {
    let name = match M::TYPE {
        MetricType::Counter => name.strip_suffix("_total").expect("counter names end in _total"),
        _ => name,
    };
    let mut family = encoder.encode_descriptor(name, help, None, M::TYPE)?;
    for (labels, metric) in samples {
        metric.encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

/// A family of one sample without labels.
pub(super) fn single<M: EncodeMetric + TypedMetric>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    metric: M,
) -> fmt::Result {
    let name = match M::TYPE {
        MetricType::Counter => name.strip_suffix("_total").expect("counter names end in _total"),
        _ => name,
    };
    metric.encode(encoder.encode_descriptor(name, help, None, M::TYPE)?)
}

pub(super) fn counter<N>(value: N) -> ConstCounter<N> {
    ConstCounter::new(value)
}

pub(super) fn gauge<N>(value: N) -> ConstGauge<N> {
    ConstGauge::new(value)
}

pub(super) fn flag(value: bool) -> ConstGauge<i64> {
    ConstGauge::new(i64::from(value))
}

pub(super) fn port_priority(port: &str, priority: u8) -> Labels {
    vec![("port", port.to_string()), ("priority", priority.to_string())]
}
