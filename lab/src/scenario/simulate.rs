//! `pfcswitch scenario simulate`: the same scenario, seed and switch configs in the core's
//! virtual-time harness instead of namespaces. Every decision is the same `Switch` and
//! `Transport` code the AF_XDP datapath and endpoints run; only time and wires are simulated
//! (the scenario's `cable` delay, 1 µs by default; exact line rate; no scheduling delays). The plan (every message and its
//! start) is the real run's for the same seed, so the two can be compared directly.

use super::args::RunArgs;
use super::capture::links_to_capture;
use super::configs::InForce;
use super::endpoint::EndpointResult;
use super::faults::Fault;
use super::ideal::IdealFct;
use super::prepare::{Prepared, prepare};
use super::progress::Progress;
use super::qlen::QlenMonitor;
use super::record::{AppliedFault, QueueSample, RunRecord, SimulatorSpeed, StormRun};
use super::report;
use super::sim_capture::SimCaptures;
use super::summary::Outcome;
use super::topology::{connection_spec, nth_host};
use crate::workload;
use anyhow::{Context, Result};
use pfcswitch_hosts::{Transport, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::{Endpoint, Network, SimHost, SimStats};
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_switch::report::{QueueDepths, Snapshot};
use pfcswitch_switch::switch::Switch;
use pfcswitch_topology::{Link, Topology};
use std::time::Duration;

/// Hosts announce themselves at 0; the workload starts once every switch has learned them.
const EPOCH: Instant = Instant::from_nanos(10_000_000);

/// `sw1:p3` → (switch index, port index) using the switches' configs.
fn switch_port(end: &str, names: &[String], configs: &[SwitchConfig]) -> Result<Endpoint> {
    let (switch, port) = end.split_once(':').with_context(|| format!("link end `{end}`"))?;
    let s = names.iter().position(|n| n == switch).with_context(|| format!("no switch `{switch}`"))?;
    let p = configs[s]
        .ports
        .iter()
        .position(|c| c.name == port)
        .with_context(|| format!("{switch} has no port `{port}`"))?;
    Ok(Endpoint::switch(s, p))
}

/// A host, or `sw1:p3`, as an endpoint of the network.
fn endpoint(end: &str, switches: &[String], hosts: &[String], configs: &[SwitchConfig]) -> Result<Endpoint> {
    match hosts.iter().position(|h| h == end) {
        Some(h) => Ok(Endpoint::host(h)),
        None => switch_port(end, switches, configs),
    }
}

/// Applies `fault` now: a link's ends down or up, a switch killed or started afresh from its
/// config.
fn apply_fault(
    net: &mut Network,
    fault: &Fault,
    switches: &[String],
    hosts: &[String],
    configs: &[SwitchConfig],
) -> Result<()> {
    match fault {
        Fault::Link { up, ends, .. } => {
            for end in ends {
                net.set_link(endpoint(end, switches, hosts, configs)?, *up);
            }
        }
        Fault::Switch { restart, switch, .. } => {
            let s = switches.iter().position(|n| n == switch).with_context(|| format!("no switch `{switch}`"))?;
            if *restart {
                let (fresh, _) = Switch::new(&configs[s]).map_err(|e| anyhow::anyhow!("{switch}: {e}"))?;
                net.restart_switch(s, fresh);
            } else {
                net.kill_switch(s);
            }
        }
    }
    Ok(())
}

/// `sw1:p3-h2` or `sw1:p6-sw3:p1` → its ends, at the scenario's speed.
fn cable(
    link: &Link,
    switches: &[String],
    hosts: &[String],
    configs: &[SwitchConfig],
    speed: BitRate,
) -> Result<(Endpoint, Endpoint, BitRate)> {
    let a = switch_port(&link.a.to_string(), switches, configs)?;
    let b = endpoint(&link.b.to_string(), switches, hosts, configs)?;
    Ok((a, b, speed))
}

pub fn simulate(args: &RunArgs) -> Result<Outcome> {
    let Prepared {
        scenario,
        policy,
        in_force,
        out,
        configs,
        topology,
        fabric,
        storms,
        workload: plan_context,
        faults,
        hpcc_nodes,
    } = prepare(args, super::prepare::SIMULATED)?;
    let InForce { pfcwd, ref qcn, ref fecn, .. } = in_force;
    let Topology { switches, hosts, links, .. } = topology;
    eprintln!(
        "scenario {} ({}), policy {}, pfcwd {pfcwd}, qcn {qcn}, fecn {fecn}, seed {}: simulated on virtual time",
        scenario.name,
        scenario.topology,
        policy.name(),
        args.seed
    );
    let mut net = Network::new();
    for (switch, config) in switches.iter().zip(&configs) {
        let (core, _) = Switch::new(config).map_err(|e| anyhow::anyhow!("{switch}: {e}"))?;
        net.add_switch(core);
    }
    let end = EPOCH + scenario.duration;
    let addresses = (0..hosts.len()).map(nth_host).collect::<Result<Vec<_>>>()?;
    for &(mac, ip) in &addresses {
        let mut sim_host = SimHost::new(mac, ip, scenario.speed);
        if scenario.transport.ofc_per_flow {
            sim_host.nic.obey_ofc_per_flow(mac);
        }
        sim_host.announce();
        let config = TransportConfig {
            qcn: in_force.qcn_reaction,
            fecn: in_force.fecn_reaction,
            ..scenario.transport.config(mac, ip, scenario.mtu, scenario.speed, EPOCH, end)
        };
        sim_host.transport = Some(Transport::new(config));
        net.add_host(sim_host);
    }
    // A link's own delay (from the topology file) wins over the scenario's `cable`.
    let delay = |own: Duration| if own.is_zero() { scenario.cable } else { own };
    let cables: Vec<_> = match &fabric {
        Some(fabric) => fabric.cables().map(|(a, b, speed)| (a, b, speed, scenario.cable)).collect(),
        None => (links.iter())
            .map(|link| {
                let (a, b, speed) = cable(link, &switches, &hosts, &configs, scenario.speed)?;
                Ok((a, b, speed, delay(link.delay)))
            })
            .collect::<Result<Vec<_>>>()?,
    };
    for &(a, b, speed, delay) in &cables {
        net.connect(a, b, speed, delay);
    }
    // A generated fabric's cables come in the generator's order and lose nothing.
    if fabric.is_none() {
        for (&(a, ..), link) in cables.iter().zip(&links).filter(|(_, link)| link.loss > 0.0) {
            net.set_loss(a, link.loss);
        }
    }
    let captured = (links_to_capture(&args.capture, &links)?.into_iter())
        .map(|link| {
            let (a, b, _) = cable(link, &switches, &hosts, &configs, scenario.speed)?;
            Ok((link.name(), [a, b]))
        })
        .collect::<Result<Vec<_>>>()?;
    let captures = SimCaptures::start(&mut net, &captured, &out.join("captures"))?;
    net.log_pause_arrivals();
    if args.threads > 1
        && let Err(why) = net.split()
    {
        eprintln!("simulating on one thread: {why}");
    }
    let (mac, ip) = addresses[0];
    let transport = TransportConfig {
        qcn: in_force.qcn_reaction,
        ..scenario.transport.config(mac, ip, scenario.mtu, scenario.speed, EPOCH, end)
    };
    let ideal = IdealFct::new(switches.len(), hosts.len(), cables, &transport);
    let connections = workload::plan(&scenario.classes, &hosts, args.seed, EPOCH, scenario.duration, &plan_context)?;
    // What is run, for another simulator to run the same (bench/ns3/).
    let flows = out.join("flows.txt");
    std::fs::write(&flows, workload::flow_list::flow_list(&connections, EPOCH))
        .with_context(|| format!("writing {}", flows.display()))?;
    let mut per_sender = vec![0; net.hosts.len()];
    for c in &connections {
        per_sender[c.sender] += 1;
    }
    for (host, &n) in net.hosts.iter_mut().zip(&per_sender) {
        host.transport.as_mut().expect("set above").reserve_connections(n);
    }
    for c in &connections {
        let spec = connection_spec(c)?;
        net.hosts[c.sender].transport.as_mut().expect("set above").add_connection(spec, c.messages.clone());
    }
    // A storming host's NIC sends the same frames `pfcswitch traffic storm` sends, on time.
    let mut storm_times = Vec::new();
    for (spec, (host, storm)) in scenario.storms.iter().zip(storms) {
        let times: Vec<Instant> = storm.times(EPOCH + spec.start, spec.duration).collect();
        net.hosts[host].inject_all(times.iter().map(|&at| (at, storm.frame())));
        storm_times.push(times);
    }
    let priorities = scenario.priorities();
    let give_up = end + scenario.drain;
    let mut samples = Vec::new();
    let seconds = |at: Instant| (at.as_nanos() as f64 - EPOCH.as_nanos() as f64) / 1e9;
    let wall = std::time::Instant::now();
    let mut pending = faults.iter().peekable();
    let mut applied = Vec::new();
    let mut qlen = scenario.qlen_interval.map(|interval| {
        QlenMonitor::new(&net, interval, EPOCH, scenario.qlen_start.unwrap_or_default(), scenario.qlen_end)
    });
    let mut progress = Progress::start(EPOCH, end);
    let mut run_until = |net: &mut Network, at: Instant| {
        let mut check = |now: Instant, stats: &SimStats| progress.check(now, stats);
        match &mut qlen {
            Some(monitor) => monitor.run_until(net, at, &hpcc_nodes, &mut check),
            None => net.run_until_or(at, &mut check),
        }
    };
    'run: loop {
        let next_sample = net.now() + scenario.sample;
        // A fault due before the next sample happens at its instant.
        while let Some(fault) = pending.next_if(|f| EPOCH + f.at() <= next_sample) {
            if !run_until(&mut net, EPOCH + fault.at()) {
                break 'run;
            }
            apply_fault(&mut net, fault, &switches, &hosts, &configs)?;
            applied.push(AppliedFault { seconds: fault.at().as_secs_f64(), what: fault.what() });
        }
        if !run_until(&mut net, next_sample) {
            break;
        }
        let now = net.now();
        for ((name, switch), config) in switches.iter().zip(&net.switches).zip(&configs) {
            let depths = QueueDepths::of(switch, config, now);
            samples.extend(QueueSample::of(seconds(now), name, &depths, &priorities));
        }
        let done = net.hosts.iter().all(|h| h.transport.as_ref().is_none_or(Transport::is_done));
        if (now >= end && done) || now >= give_up {
            break;
        }
    }
    if let Some(monitor) = qlen {
        let path = out.join("qlen.txt");
        std::fs::write(&path, monitor.finish(&hpcc_nodes))
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("qlen.txt: {} (HPCC's format)", path.display());
    }
    let pcaps = captures.stop(&mut net)?;
    let now = net.now();
    let speed = SimulatorSpeed::of(net.stats(), now - Instant::ZERO, wall.elapsed());
    let gave_up = now >= give_up;
    let interrupted = progress.interrupted();
    // Frames due after the run ended were never sent.
    let storm_frames: Vec<u64> =
        storm_times.iter().map(|times| times.iter().filter(|&&at| at <= now).count() as u64).collect();
    let endpoints: Vec<EndpointResult> = (hosts.iter().zip(&net.hosts))
        .map(|(name, host)| EndpointResult::of(name, host.transport.as_ref().expect("set above"), &host.nic, now))
        .collect();
    // What the report needs of the transports is in `endpoints` now: their flows' state
    // (gigabytes for 100 ms of HPCC's fabric) goes before the report is made.
    for host in &mut net.hosts {
        host.transport = None;
    }
    let snapshots: Vec<(String, Snapshot)> = (switches.iter().zip(&net.switches).zip(&configs))
        .map(|((name, switch), config)| (name.clone(), Snapshot::of(switch, config, now, now.as_nanos() as f64 / 1e9)))
        .collect();
    let link_names: Vec<String> = links.iter().map(Link::name).collect();
    let record = RunRecord {
        scenario: &scenario,
        policy: policy.name(),
        pfcwd,
        qcn,
        fecn,
        seed: args.seed,
        hosts: &hosts,
        links: &link_names,
        connections: &connections,
        storms: &StormRun::of(&scenario, &storm_frames),
        epoch: EPOCH,
        seconds: seconds(now),
        gave_up,
        interrupted,
        endpoints: &endpoints,
        samples: &samples,
        snapshots: &snapshots,
        simulator: Some(&speed),
        ideal: &ideal,
        hpcc_nodes: &hpcc_nodes,
        pause_arrivals: &net.pause_arrivals(),
        faults: &applied,
        capture_epoch_seconds: EPOCH.as_nanos() as f64 / 1e9,
    };
    let outcome = report::write(&record, &out)?;
    for pcap in pcaps {
        println!("capture: {}", pcap.display());
    }
    if interrupted {
        anyhow::bail!(
            "interrupted at {:.3} ms of simulated time; what happened until then is in {}",
            seconds(now) * 1e3,
            out.display()
        );
    }
    Ok(outcome)
}
