//! What both engines do before a run: load the scenario, check it against its topology (or
//! generate its fabric), resolve its storms and write the switch configs into the run's
//! directory; and the same as a check that runs nothing ([`check`], before a sweep).

use super::args::{Modes, RunArgs, run_dir};
use super::configs::{InForce, write_configs};
use super::fabric::FABRIC;
use super::faults::{Fault, resolve as resolve_faults};
use super::hpcc_nodes::HpccNodes;
use super::namespaces::find;
use super::plan::{RateLaw, Scenario, TransportSpec, load_with};
use super::policy::{RunPolicy, parse_policy, split_transport};
use super::schemes::{CcMode, DcqcnMode};
use crate::repository::workloads_dir;
use crate::workload::{self, PlanContext, Storm};
use anyhow::{Context, Result, bail};
use pfcswitch_link::time::Instant;
use pfcswitch_sim::fabric::Fabric;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_topology::Topology;
use std::path::{Path, PathBuf};

/// A scenario ready to run: its policy, output directory (with the switch configs written
/// into `configs/`), the switches' configs, topology and storming hosts.
pub(super) struct Prepared {
    pub scenario: Scenario,
    pub policy: RunPolicy,
    /// The schemes the switches run, and what they ask of the hosts.
    pub in_force: InForce,
    pub out: PathBuf,
    pub configs: Vec<SwitchConfig>,
    pub topology: Topology,
    /// The generated fabric of a `topology = "fabric"` scenario.
    pub fabric: Option<Fabric>,
    /// Each of the scenario's storms: its host (index into the hosts) and what its NIC sends.
    pub storms: Vec<(usize, Storm)>,
    /// What the workload's plan needs besides the classes.
    pub workload: PlanContext,
    /// The scenario's faults, in time order.
    pub faults: Vec<Fault>,
    /// How HPCC's files number the run's nodes.
    pub hpcc_nodes: HpccNodes,
}

/// Makes `cc` the hosts' only congestion control: the scenario's settings for it if it has
/// them, else the law's defaults, and the framing it runs over.
fn apply_cc(transport: &mut TransportSpec, cc: CcMode) -> Result<()> {
    let (dctcp, dcqcn, hpcc, timely, swift) = (
        transport.dctcp.take(),
        transport.dcqcn.take(),
        transport.hpcc.take(),
        transport.timely.take(),
        transport.swift.take(),
    );
    let rocev2 = || Some(transport.rocev2.unwrap_or_default());
    match cc {
        CcMode::None => {}
        CcMode::Dctcp => {
            // DCTCP's echo rides the traffic header's acknowledgements, not RC's.
            transport.dctcp = Some(dctcp.unwrap_or_default());
            transport.rocev2 = None;
        }
        CcMode::Dcqcn | CcMode::DcqcnW => {
            transport.rocev2 = rocev2();
            transport.dcqcn = Some(windowed(dcqcn.unwrap_or_default(), cc)?);
        }
        CcMode::Hpcc => {
            transport.rocev2 = rocev2();
            transport.hpcc = Some(hpcc.context(
                "HPCC needs the fabric's base RTT: add transport.hpcc = { base_rtt = \"...\" } to the scenario \
                 or --set transport.hpcc.base_rtt=8us",
            )?);
        }
        CcMode::Timely | CcMode::TimelyW => {
            transport.rocev2 = rocev2();
            transport.timely = Some(windowed(timely.unwrap_or_default(), cc)?);
        }
        CcMode::Swift => transport.swift = Some(swift.unwrap_or_default()),
    }
    Ok(())
}

/// A rate-based law for `cc`: with its window for the `-w` variant, which needs the base RTT
/// the scenario gives it, without for the plain one.
fn windowed<P>(law: RateLaw<P>, cc: CcMode) -> Result<RateLaw<P>> {
    let base_rtt = match cc {
        CcMode::DcqcnW | CcMode::TimelyW => Some(law.base_rtt.with_context(|| {
            let key = cc.name().trim_end_matches("-w");
            format!("{} needs the base RTT its window is sized for: --set transport.{key}.base_rtt=8us", cc.name())
        })?),
        _ => None,
    };
    Ok(RateLaw { base_rtt, ..law })
}

/// Creates `dirs` under the run's directory `out`.
pub(super) fn create_dirs(out: &Path, dirs: &[&str]) -> Result<()> {
    for dir in dirs {
        std::fs::create_dir_all(out.join(dir)).with_context(|| format!("cannot create {}", out.join(dir).display()))?;
    }
    Ok(())
}

/// The run-directory suffix of a simulated run.
pub(super) const SIMULATED: &str = "-sim";

/// Loads the scenario, checks it against its topology and writes the switch configs;
/// `suffix` tells a simulated run's directory from a real one's.
pub(super) fn prepare(args: &RunArgs, suffix: &str) -> Result<Prepared> {
    let (mut scenario, file) = load_with(&args.scenario, &args.set)?;
    let (policy_name, with_cc) = args.policy.as_deref().map_or((None, None), |name| {
        let (policy, cc) = split_transport(name);
        (Some(policy), cc)
    });
    let modes = Modes { cc: args.modes.cc.or(with_cc), ..args.modes };
    match modes.dcqcn {
        Some(DcqcnMode::Off) => scenario.transport.dcqcn = None,
        Some(DcqcnMode::On) => apply_cc(&mut scenario.transport, CcMode::Dcqcn)?,
        None => {}
    }
    if let Some(cc) = modes.cc.or(scenario.transport.cc) {
        apply_cc(&mut scenario.transport, cc).with_context(|| format!("{}: --cc {}", file.display(), cc.name()))?;
    }
    let policy = policy_name.map(parse_policy).transpose()?.unwrap_or(scenario.policy);
    let out = args.out.clone().unwrap_or_else(|| {
        let parent = PathBuf::from("results").join(&scenario.name);
        run_dir(&parent, &policy, &modes, args.seed, suffix)
    });
    create_dirs(&out, &["configs"])?;
    let mut hpcc_nodes = None;
    let (topology, fabric) = match (&scenario.fabric, scenario.topology == FABRIC) {
        (Some(spec), true) => {
            let base = file.parent().unwrap_or(Path::new("."));
            let built =
                spec.build(scenario.speed, scenario.cable, base).with_context(|| format!("{}", file.display()))?;
            hpcc_nodes = built.hpcc_nodes;
            let fabric = built.fabric;
            if !scenario.switches.is_empty() {
                bail!("{}: a fabric's switches are generated; drop `[switches]`", file.display());
            }
            let file = out.join("topology.toml");
            let generated =
                super::fabric::write_description(&fabric, &spec.label(), scenario.mtu, &out.join("configs"), &file)?;
            (generated, Some(fabric))
        }
        (None, false) => (find(&scenario.topology)?, None),
        (Some(_), false) => bail!("{}: `[fabric]` needs topology = \"{FABRIC}\"", file.display()),
        (None, true) => bail!("{}: topology = \"{FABRIC}\" needs a `[fabric]` table", file.display()),
    };
    if topology.hosts.is_empty() {
        bail!("topology {} has no hosts", scenario.topology);
    }
    let configured: Vec<_> = scenario.switches.keys().cloned().collect();
    if fabric.is_none() && configured != topology.switches {
        let known = &topology.switches;
        bail!("{}: `switches` names {configured:?}, topology {} has {known:?}", file.display(), scenario.topology);
    }
    let storms = (scenario.storms.iter())
        .map(|storm| storm.resolve(&topology.hosts, scenario.speed))
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{}", file.display()))?;
    if let Some(spec) = &scenario.qcn {
        spec.reaction.validate().map_err(|e| anyhow::anyhow!("{}: qcn.reaction: {e}", file.display()))?;
    }
    let transport = &scenario.transport;
    let floors = [
        ("dcqcn", transport.dcqcn.map(|d| d.params.min_rate)),
        ("hpcc", transport.hpcc.map(|h| h.params.min_rate)),
        ("timely", transport.timely.map(|t| t.params.min_rate)),
    ];
    for (law, min_rate) in floors.into_iter().filter_map(|(law, rate)| Some((law, rate?))) {
        if min_rate.bps() >= scenario.speed.bps() {
            eprintln!(
                "warning: {}: transport.{law}.min_rate {min_rate} is not below the hosts' {}: the law cannot slow \
                 a flow (its defaults are for 40-100 Gbit/s; docs/congestion-control.md scales them)",
                file.display(),
                scenario.speed
            );
        }
    }
    let datapath = suffix != SIMULATED;
    scenario
        .transport
        .validate(scenario.mtu, scenario.speed, datapath)
        .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    // A switch-config key of a `--set` is only checked here, in the merged configs.
    let with_sets = |e: anyhow::Error| {
        if scenario.sets.is_empty() { e } else { e.context(format!("with --set {}", scenario.sets.join(" --set "))) }
    };
    // The simulator's cables have the scenario's delay; veths have none worth counting.
    let cable = (suffix == SIMULATED).then_some(scenario.cable);
    write_configs(&scenario, &file, &policy, &modes, fabric.as_ref(), cable, &out.join("configs"))
        .map_err(with_sets)?;
    let mut configs = Vec::new();
    for switch in &topology.switches {
        let path = out.join("configs").join(format!("{switch}.toml"));
        let (config, _) = pfcswitchd::config::load(&path).map_err(|e| with_sets(e.into()))?;
        configs.push(config);
    }
    crate::netns::check_flooding(&topology, &configs).map_err(with_sets)?;
    let in_force = InForce::of(&scenario, &configs);
    if in_force.qcn_reaction.is_some() && scenario.transport.dcqcn.is_some() {
        bail!(
            "{}: QCN's reaction points and transport.dcqcn would both set the senders' rates: run one (--qcn off)",
            file.display()
        );
    }
    let workload = PlanContext {
        speed: scenario.speed,
        scenario_dir: file.parent().map(Path::to_path_buf).unwrap_or_default(),
        builtin_dir: workloads_dir(),
        hpcc_hosts: hpcc_nodes.as_ref().map(|nodes| nodes.hosts.clone()),
    };
    let hpcc_nodes =
        hpcc_nodes.unwrap_or_else(|| HpccNodes::hosts_first(topology.hosts.len(), topology.switches.len()));
    let faults = resolve_faults(&scenario.faults, &topology).with_context(|| format!("{}", file.display()))?;
    Ok(Prepared { scenario, policy, in_force, out, configs, topology, fabric, storms, workload, faults, hpcc_nodes })
}

/// Checks that `args` would run, running nothing: the scenario loads with its `--set`s, its
/// topology or fabric is built, its switch configs (written into a scratch directory,
/// removed afterwards) are valid and its workload plans from the seed. Returns the scenario.
pub(super) fn check(args: &RunArgs) -> Result<Scenario> {
    let scratch = Scratch::new()?;
    let args = RunArgs { out: Some(scratch.0.clone()), ..args.clone() };
    let Prepared { scenario, topology, workload: context, .. } = prepare(&args, "")?;
    workload::plan(&scenario.classes, &topology.hosts, args.seed, Instant::ZERO, scenario.duration, &context)?;
    Ok(scenario)
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("pfcswitch-check-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        // Best effort: a leftover directory in /tmp harms nothing.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
