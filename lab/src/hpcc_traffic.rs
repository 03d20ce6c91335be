//! HPCC's `traffic_gen.py` with a size distribution of ours (`flow_sizes`), and the Fig. 11
//! incast on top: the flow file `pfcswitch hpcc traffic-gen` writes and the Fig. 11 recipe
//! runs.

use crate::flow_sizes::FlowSizes;
use anyhow::Result;
use pfcswitch_hpcc::flows::FlowFile;
use pfcswitch_hpcc::generate::{self, IncastSpec, PoissonSpec};
use pfcswitch_link::rng::Rng;

/// What to generate: `traffic_gen.py`'s Poisson flows on `hosts` at `load`, for `duration_ns`
/// after 2 s, and the incast if given.
#[derive(Clone, Debug)]
pub struct TrafficSpec<'a> {
    pub sizes: &'a FlowSizes,
    pub hosts: Vec<u32>,
    pub load: f64,
    pub host_bps: u64,
    pub duration_ns: u64,
    pub incast: Option<IncastSpec>,
    pub seed: u64,
}

/// The flow file and how many of its flows are `traffic_gen.py`'s (the rest the incast's).
pub fn generate(spec: &TrafficSpec) -> Result<(FlowFile, usize)> {
    let poisson = PoissonSpec {
        hosts: spec.hosts.clone(),
        load: spec.load,
        host_bps: spec.host_bps,
        duration_ns: spec.duration_ns,
        mean_size: spec.sizes.mean(),
    };
    let mut rng = Rng::new(spec.seed);
    let mut flows = generate::poisson(&poisson, &mut rng, |rng| spec.sizes.sample(rng)).map_err(anyhow::Error::msg)?;
    let normal = flows.len();
    if let Some(incast) = &spec.incast {
        let events = generate::incast(&spec.hosts, spec.host_bps, spec.duration_ns, incast, &mut rng)
            .map_err(anyhow::Error::msg)?;
        flows = generate::merge(flows, events);
    }
    Ok((FlowFile::new(flows), normal))
}
