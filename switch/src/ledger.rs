//! The frame ledger of a (port, priority): every frame the switch takes in is accounted
//! for, on each side of the pipeline.
//!
//! - **Ingress** (frames received on the port): `received = dropped + forwarded + waiting`,
//!   where `dropped` counts the frames refused before admission (any reason, each also
//!   counted under its reason), `forwarded` those the pipeline passed to their egress ports,
//!   and `waiting` those admitted and still in the pipeline.
//! - **Egress** (copies of frames sent to the port: a flooded frame makes one per port):
//!   `assigned = sent + dropped + queued`, where `dropped` counts the copies dropped at this
//!   egress (`link_down`, `pfcwd`, `egress_full`: on the way in or from the queue).
//!
//! A port's drops by reason add up to the two sides' `dropped`. After `counters --reset`,
//! the frames held at that moment are `carried` in (so the ledger still balances).
//! Frames handed to the kernel are `sent`; what the kernel then drops (a veth whose peer
//! went down) is in the interface's own counters.

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IngressLedger {
    pub received: u64,
    pub carried: u64,
    pub dropped: u64,
    pub forwarded: u64,
    pub waiting: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressLedger {
    pub assigned: u64,
    pub carried: u64,
    pub sent: u64,
    pub dropped: u64,
    pub queued: u64,
}

/// Both sides of a (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ledger {
    pub ingress: IngressLedger,
    pub egress: EgressLedger,
}

impl IngressLedger {
    /// Frames in minus frames accounted for: zero when every frame is accounted for.
    pub fn unaccounted(&self) -> i128 {
        i128::from(self.received + self.carried) - i128::from(self.dropped + self.forwarded + self.waiting)
    }
}

impl EgressLedger {
    /// Copies in minus copies accounted for: zero when every copy is accounted for.
    pub fn unaccounted(&self) -> i128 {
        i128::from(self.assigned + self.carried) - i128::from(self.sent + self.dropped + self.queued)
    }
}

impl Ledger {
    /// Whether both sides balance.
    pub fn balanced(&self) -> bool {
        self.ingress.unaccounted() == 0 && self.egress.unaccounted() == 0
    }
}
