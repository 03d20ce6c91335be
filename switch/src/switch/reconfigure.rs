//! Applying a new configuration to a running switch without losing a frame, and what a
//! freshly built OFC engine must learn from the frames already queued.

use super::Switch;
use crate::config::{ConfigWarning, PolicyKind, PortConfig, SwitchConfig};
use crate::config_error::ConfigError;
use crate::ecn::EcnMarker;
use crate::fecn::Fecn;
use crate::int::IntStamper;
use crate::policy::{EgressEvent, PolicyActions, PolicyEngine, ofc_frame_lens, ofc_thresholds};
use crate::qcn::Qcn;
use crate::sched::Scheduler;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::Pcp;

impl Switch {
    /// Applies `new` to the running switch without losing a frame: PFC thresholds and
    /// lossless set, policy, pipeline, scheduler, buffer limits, classification, FDB aging
    /// and static entries. Ports (name, interface, speed, MTU) and `buffer.frames` size the
    /// datapath and need a restart.
    pub fn reconfigure(
        &mut self,
        now: Instant,
        old: &SwitchConfig,
        new: &SwitchConfig,
    ) -> Result<Vec<ConfigWarning>, ConfigError> {
        if new.buffer.frames.is_some_and(|frames| frames != self.frames) {
            return Err(ConfigError {
                key: "buffer.frames".into(),
                reason: "changed; restart pfcswitchd to apply".into(),
            });
        }
        // The descriptors are those of the running switch: the new limits must fit them.
        let mut pinned = new.clone();
        pinned.buffer.frames = Some(self.frames);
        let new = &pinned;
        let warnings = new.validate()?;
        let same_port = |(a, b): (&crate::config::PortConfig, &crate::config::PortConfig)| {
            a.name == b.name && a.iface == b.iface && a.speed == b.speed && a.mtu == b.mtu
        };
        if old.ports.len() != new.ports.len() || !old.ports.iter().zip(&new.ports).all(same_port) {
            return Err(ConfigError {
                key: "port".into(),
                reason: "ports changed; restart pfcswitchd to apply".into(),
            });
        }
        let keep_ofc = match &self.policy {
            // The tables are per lossless priority: a new lossless set needs a new engine.
            PolicyEngine::Ofc(ofc) if new.policy.kind == PolicyKind::Ofc && new.lossless_mask() == self.lossless => {
                if ofc.capacity() != new.policy.flow_table_capacity as usize {
                    return Err(ConfigError {
                        key: "policy.flow_table_capacity".into(),
                        reason: "changed; the OFC tables are sized at start, restart pfcswitchd to apply".into(),
                    });
                }
                true
            }
            _ => false,
        };
        let weights = new.scheduler_weights()?;
        let egress_full = new.egress_full()?;
        self.buffers.set_limits(
            new.buffer_limits()?,
            new.static_pg(),
            new.unbounded_egress_mask(),
            new.nested_egress_mask(),
            self.frames,
        );
        self.lossy_frame_limit = new.lossy_frame_limit();
        self.learning = new.port_mask(|port| port.learning);
        self.flooding = new.port_mask(|port| port.flooding);
        self.fdb.set_default_route(new.fdb_default_route()?);
        for (index, (port, config)) in self.ports.iter_mut().zip(&new.ports).enumerate() {
            port.default_priority = Pcp::from_low_bits(config.default_priority);
            port.dscp_map = (config.trust == crate::config::Trust::Dscp).then(|| new.dscp_map(index)).transpose()?;
            port.rx_memo = None;
            port.scheduler = Scheduler::new(weights, config.mtu + crate::config::L2_HEADER_MAX as u32);
        }
        let mut statics = new.static_fdb_entries()?;
        statics.retain(|&(_, ports)| ports & !self.all_ports() == 0);
        self.fdb.reconfigure(new.fdb.aging, &statics);
        self.lossless = new.lossless_mask();
        self.pad_short_frames = new.pfc.short_frames == crate::config::ShortFrames::Pad;
        let mut restored = Vec::new();
        self.pfcwd.reconfigure(self.lossless, &new.pfcwd, &mut restored);
        let speeds: Vec<BitRate> = new.ports.iter().map(|p| p.speed).collect();
        self.xoff.set_quanta(&speeds, new.pfc.quanta);
        match &mut self.policy {
            PolicyEngine::Ofc(ofc) if keep_ofc => {
                ofc.set_thresholds(ofc_thresholds(new));
                ofc.set_frame_lens(&ofc_frame_lens(new));
            }
            _ => {
                self.policy = PolicyEngine::from_config(new);
                self.count_queued_flows(now);
            }
        }
        // Re-decide every pause under the new thresholds; release what is no longer lossless.
        for port in 0..self.ports.len() {
            for priority in Pcp::ALL {
                let mut actions = PolicyActions::new(now, &mut self.xoff);
                if self.lossless & priority.mask() == 0 || matches!(self.policy, PolicyEngine::None) {
                    actions.set_xoff(port, priority, false);
                } else {
                    self.policy.adopt(port, priority, actions.is_asserted(port, priority));
                    self.policy.on_ingress(
                        port,
                        priority,
                        self.buffers.ingress_level(port, priority.index()),
                        &mut actions,
                    );
                }
            }
        }
        if new.qcn != old.qcn {
            // Fresh CPs and culprit records: frames held now are never blamed (see `Qcn`).
            self.qcn = Qcn::new(&new.qcn, self.ports.len());
        }
        if new.ecn != old.ecn || new.ports.iter().zip(&old.ports).any(|(new, old)| new.speed != old.speed) {
            self.ecn = EcnMarker::new(&new.ecn, &speeds);
        }
        let ports_changed = |a: &PortConfig, b: &PortConfig| a.speed != b.speed || a.mtu != b.mtu;
        if new.int != old.int || new.ports.iter().zip(&old.ports).any(|(a, b)| ports_changed(a, b)) {
            let stamper = IntStamper::new(&new.int, &new.switch.name, &new.ports);
            self.int = stamper.map(|stamper| stamper.continuing(self.int.as_ref()));
        }
        if new.fecn != old.fecn {
            let speeds: Vec<BitRate> = self.ports.iter().map(|p| p.shaper.speed()).collect();
            self.fecn = Fecn::new(&new.fecn, &speeds);
        }
        self.pipeline.interval = new.pipeline.rate.map(|rate| rate.interval());
        self.pipeline.egress_full = egress_full;
        self.pipeline.blocked = None;
        if self.preallocated {
            self.preallocate();
        }
        self.run_pipeline(now);
        Ok(warnings)
    }

    /// A new OFC engine learns the flows already queued (Algorithm 2 line 12 for each).
    pub(super) fn count_queued_flows(&mut self, now: Instant) {
        let PolicyEngine::Ofc(ofc) = &mut self.policy else { return };
        let mut actions = PolicyActions::new(now, &mut self.xoff);
        for port in 0..self.ports.len() {
            for priority in Pcp::ALL.into_iter().filter(|p| self.lossless & p.mask() != 0) {
                for index in self.buffers.nested(port, priority.index()).frames() {
                    let frame = self.arena.get(index);
                    let event = EgressEvent {
                        ingress: usize::from(frame.ingress),
                        egress: port,
                        priority,
                        len: frame.len,
                        flow: frame.flow,
                        queue_bytes: 0,
                        enqueued: true,
                    };
                    crate::policy::Policy::on_egress(ofc.as_mut(), &event, &mut actions);
                }
            }
        }
    }
}
