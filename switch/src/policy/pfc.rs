//! IEEE 802.1Qbb PFC as a policy: XOFF/XON hysteresis on ingress accounting, per (ingress
//! port, lossless priority). The classic scheme: egress queues play no part. The thresholds
//! come with each change (static, or dynamic in buffer mode "pools").

use crate::policy::interface::{IngressLevel, Policy, PolicyActions, hysteresis};
use pfcswitch_wire::Pcp;

#[derive(Clone, Debug)]
pub struct Pfc {
    lossless: u8,
}

impl Pfc {
    pub fn new(lossless: u8) -> Pfc {
        Pfc { lossless }
    }
}

impl Policy for Pfc {
    /// Asserts XOFF when the ingress reaches XOFF, releases it when it falls to XON.
    fn on_ingress(&mut self, port: usize, priority: Pcp, level: IngressLevel, actions: &mut PolicyActions<'_>) {
        if self.lossless & priority.mask() == 0 {
            return;
        }
        if let Some(xoff) = hysteresis(level.bytes, level.xoff, level.xon) {
            actions.set_xoff(port, priority, xoff);
        }
    }

    fn sees_egress(&self) -> bool {
        false
    }
}
