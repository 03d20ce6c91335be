//! IEEE 802.1Qbb PFC as a policy: XOFF/XON hysteresis on ingress accounting, per (ingress
//! port, lossless priority). The classic scheme: egress queues play no part.

use crate::policy::interface::{Policy, PolicyActions, hysteresis};
use pfcswitch_wire::Pcp;

#[derive(Clone, Debug)]
pub struct Pfc {
    lossless: u8,
    xoff: u64,
    xon: u64,
}

impl Pfc {
    pub fn new(lossless: u8, xoff: u64, xon: u64) -> Pfc {
        Pfc { lossless, xoff, xon }
    }
}

impl Policy for Pfc {
    /// Asserts XOFF when the ingress reaches XOFF, releases it when it falls to XON.
    fn on_ingress(&mut self, port: usize, priority: Pcp, bytes: u64, actions: &mut PolicyActions<'_>) {
        if self.lossless & priority.mask() == 0 {
            return;
        }
        if let Some(xoff) = hysteresis(bytes, self.xoff, self.xon) {
            actions.set_xoff(port, priority, xoff);
        }
    }
}
