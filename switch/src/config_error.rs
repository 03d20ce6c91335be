//! [`ConfigError`]: a rejected configuration, the key and why.
//!
//! A module of its own rather than part of `config`: the sections defined beside what they
//! configure (`ecn`, `fecn`, `qcn`) return it from their `validate`, and `config` holds those
//! sections in [`SwitchConfig`](crate::config::SwitchConfig), so neither may import the other.

/// A rejected configuration: the key and why.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct ConfigError {
    pub key: String,
    pub reason: String,
}

/// The [`ConfigError`] for `key`.
pub(crate) fn error(key: impl Into<String>, reason: impl Into<String>) -> ConfigError {
    ConfigError { key: key.into(), reason: reason.into() }
}
