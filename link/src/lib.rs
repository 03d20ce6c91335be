//! The Ethernet link as both of its ends see it, on virtual time: what a switch port and a
//! host NIC share. [`time::Instant`] is time passed in by the caller (never read from a
//! clock), [`units`] are speeds, sizes and exact PAUSE quanta, [`shaper`] serialises frames
//! at a port's speed with preamble, gap and FCS counted, [`pause`] is a peer's PAUSE/PFC
//! state as the paused end obeys it, and [`rng`] is the seeded generator every sans-IO crate
//! draws from, so runs replay from a seed.
//!
//! It holds no switch and no host logic: those are `pfcswitch-switch` and `pfcswitch-hosts`,
//! which both build on it.
#![forbid(unsafe_code)]

pub mod pause;
pub mod rng;
pub mod shaper;
pub mod time;
pub mod units;
