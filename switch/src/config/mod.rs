//! The switch configuration: what a TOML file says, checked before anything is built.
//!
//! Types deserialize with `deny_unknown_fields`, so a misspelt key is an error, not a
//! silently ignored setting. [`SwitchConfig::validate`] then checks the values and returns
//! the first error with the key it concerns (`pfc.xon`, `port[2].speed`), plus warnings
//! that do not stop the switch but that a user must see (a headroom below the PFC bound).
//!
//! One file per section's types; `switch_config` puts them together, `validate` checks them
//! and `resolve` derives the settings the switch is built from. The error type is
//! [`ConfigError`](crate::config_error::ConfigError), outside this module because the
//! `[ecn]`, `[fecn]` and `[qcn]` sections, defined with their features, return it too.

mod buffer;
mod fdb;
mod pfc;
mod pfcwd;
mod pipeline;
mod policy;
mod pools;
mod ports;
mod resolve;
mod scheduler;
mod switch_config;
mod validate;

#[cfg(test)]
mod pools_tests;
#[cfg(test)]
mod tests;

pub use buffer::{BufferConfig, BufferLimits, BufferMode, DEFAULT_LOSSY_FRAMES, MIN_FRAME_CHARGE, MIN_LOSSY_FRAMES};
pub use fdb::{FdbConfig, StaticEntry, StaticPorts};
pub use pfc::{L2_HEADER_MAX, PFC_WIRE_BYTES, PfcConfig, ShortFrames, headroom_bound, headroom_terms};
pub use pfcwd::{PfcwdAction, PfcwdConfig};
pub use pipeline::{EgressFull, PipelineConfig};
pub use policy::{CapfcAlgorithm, PolicyConfig, PolicyKind};
pub use pools::{
    DYNAMIC_TH_RANGE, LinkTerms, PoolConfig, PoolLayout, PoolLimits, PoolMode, PoolType, Profile, ProfileConfig,
    Threshold,
};
pub use ports::{MAX_PORTS, PortConfig, Trust};
pub use scheduler::SchedulerConfig;
pub use switch_config::{DEFAULT_SHAPER_BURST, SwitchConfig, SwitchSection};
pub use validate::ConfigWarning;
