//! What is wrong with a workload: the class (or storm) and why.

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    #[error("class `{class}`: unknown host `{host}` (hosts: {known})")]
    UnknownHost { class: String, host: String, known: String },
    /// `kind` as the class's `Pattern` prints.
    #[error("class `{class}`: `{key}` is required for kind {kind}")]
    Missing { class: String, key: &'static str, kind: String },
    #[error("class `{class}`: {reason}")]
    Invalid { class: String, reason: String },
    /// The flow-size distribution cannot be read (the reason names the file and line).
    #[error("class `{class}`: `sizes`: {reason}")]
    Sizes { class: String, reason: String },
    #[error("storm of host `{host}`: {reason}")]
    Storm { host: String, reason: String },
}
