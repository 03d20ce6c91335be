//! Runs one scenario on the datapath: topology up, endpoints started at one agreed instant,
//! queues sampled, everything torn down by guards whatever happens (error, panic, Ctrl-C).

use super::args::RunArgs;
use super::capture::{Captures, links_to_capture};
use super::configs::InForce;
use super::endpoint::{EndpointPlan, EndpointResult, PlanConnection};
use super::faults::Fault;
use super::ideal::IdealFct;
use super::interrupt;
use super::namespaces::{FaultApplier, Topology};
use super::plan::Scenario;
use super::prepare::{Prepared, create_dirs, prepare};
use super::record::{AppliedFault, QueueSample, RunRecord, StormRun};
use super::report;
use super::summary::Outcome;
use super::topology::{connection_spec, host_addresses, nth_host};
use crate::control::Connection;
use crate::workload::{self, PlannedConnection, Storm};
use anyhow::{Context, Result, bail};
use pfcswitch_hosts::TransportConfig;
use pfcswitch_link::time::Instant;
use pfcswitch_switch::report::Snapshot;
use pfcswitch_topology::Link;
use pfcswitchd::timer::Clock;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

/// The namespace prefix of a run: `sc<PID>-`, so that a run killed by a signal can be told
/// from a live one.
const RUN_PREFIX: &str = "sc";

fn check_interrupt() -> Result<()> {
    if interrupt::requested() {
        bail!("interrupted; the topology was torn down");
    }
    Ok(())
}

/// Processes in the hosts (endpoints, storms); killed on drop if still running.
struct Children {
    what: &'static str,
    children: Vec<Child>,
}

impl Children {
    /// SIGTERM to each, then waits for every one to exit successfully.
    fn stop(&mut self) -> Result<()> {
        for child in &self.children {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        for child in &mut self.children {
            let status = child.wait()?;
            if !status.success() {
                bail!("{} failed ({status}); see its messages above", self.what);
            }
        }
        Ok(())
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn endpoint_plan(
    scenario: &Scenario,
    host: &str,
    hosts: &[String],
    connections: &[PlannedConnection],
    epoch: Instant,
    in_force: &InForce,
) -> Result<EndpointPlan> {
    let (mac, ip) = host_addresses(hosts, host)?;
    let mut plan_connections = Vec::new();
    for c in connections.iter().filter(|c| hosts[c.sender] == host) {
        let spec = connection_spec(c)?;
        plan_connections.push(PlanConnection {
            id: spec.id,
            dst_mac: spec.dst.to_string(),
            dst_ip: spec.dst_ip.to_string(),
            priority: c.priority,
            vid: spec.vid,
            rate: spec.rate,
            arrivals: spec.arrivals,
            arrivals_seed: spec.arrivals.seed(),
            until_ns: spec.until.map(Instant::as_nanos),
            messages: c.messages.iter().map(|m| (m.id, m.size, m.start.as_nanos())).collect(),
        });
    }
    Ok(EndpointPlan {
        host: host.into(),
        mac: mac.to_string(),
        ip: ip.to_string(),
        speed: scenario.speed,
        mtu: scenario.mtu,
        transport: scenario.transport.clone(),
        qcn: in_force.qcn_reaction,
        fecn: in_force.fecn_reaction,
        epoch_ns: epoch.as_nanos(),
        end_ns: (epoch + scenario.duration).as_nanos(),
        connections: plan_connections,
    })
}

/// Samples every switch's queues until told to stop.
fn sample_queues(
    sockets: Vec<(String, PathBuf)>,
    priorities: Vec<u8>,
    epoch: Instant,
    period: Duration,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Vec<QueueSample>> {
    std::thread::spawn(move || {
        let clock = Clock::system();
        let mut samples = Vec::new();
        let mut next = clock.now();
        // One connection per switch, reopened if it breaks.
        let mut connections: Vec<Option<Connection>> = sockets.iter().map(|_| None).collect();
        while !stop.load(Ordering::SeqCst) {
            let now = clock.now();
            if now < next {
                std::thread::sleep(next - now);
                continue;
            }
            next = next.max(now) + period;
            for ((switch, socket), connection) in sockets.iter().zip(&mut connections) {
                if connection.is_none() {
                    *connection = Connection::open(socket).ok();
                }
                let Some(ports) = connection.as_mut().and_then(|c| c.queue_depths().ok()) else {
                    *connection = None;
                    continue;
                };
                let at = now.as_nanos() as f64 / 1e9 - epoch.as_nanos() as f64 / 1e9;
                samples.extend(QueueSample::of(at, switch, &ports, &priorities));
            }
        }
        samples
    })
}

/// Applies each fault at its time after `epoch`, until `stop`; returns those applied, each
/// with the time it took effect.
fn apply_faults(
    applier: FaultApplier,
    faults: Vec<Fault>,
    epoch: Instant,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<Result<Vec<AppliedFault>>> {
    std::thread::spawn(move || {
        let clock = Clock::system();
        let mut applied = Vec::new();
        for fault in faults {
            let due = epoch + fault.at();
            while clock.now() < due {
                if stop.load(Ordering::SeqCst) {
                    return Ok(applied);
                }
                std::thread::sleep(Duration::from_nanos((due - clock.now()).as_nanos().min(20_000_000) as u64));
            }
            applier.apply(&fault).with_context(|| format!("fault `{}`", fault.what()))?;
            let seconds = (clock.now().as_nanos() - epoch.as_nanos()) as f64 / 1e9;
            eprintln!("  fault: {} at {seconds:.3} s", fault.what());
            applied.push(AppliedFault { seconds, what: fault.what() });
        }
        Ok(applied)
    })
}

/// Starts each storm of the scenario in its host's namespace, on the host's interface: the
/// storm waits for its start on the clock every namespace shares.
fn start_storms(
    scenario: &Scenario,
    topology: &Topology,
    hosts: &[String],
    resolved: &[(usize, Storm)],
    epoch: Instant,
) -> Result<Children> {
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let mut storms = Children { what: "a storm", children: Vec::new() };
    for (storm, &(host, _)) in scenario.storms.iter().zip(resolved) {
        let child = Command::new("ip")
            .args(["netns", "exec", &topology.namespace(&hosts[host])])
            .arg(&exe)
            .args(["-j", "traffic", "storm", "--iface", "eth0", "--class", &storm.priority.to_string()])
            .args(["--quanta", &storm.quanta.to_string(), "--speed", &scenario.speed.to_string()])
            .args(["--at", &(epoch + storm.start).as_nanos().to_string()])
            .args(["--duration", &pfcswitch_link::units::format_duration(storm.duration)])
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start the storm of {}", hosts[host]))?;
        storms.children.push(child);
    }
    Ok(storms)
}

/// What each stopped storm reported: the frames it sent.
fn storm_frames(storms: &mut Children) -> Result<Vec<u64>> {
    let mut frames = Vec::new();
    for child in &mut storms.children {
        let mut text = String::new();
        std::io::Read::read_to_string(child.stdout.as_mut().expect("piped"), &mut text)?;
        let report: serde_json::Value = serde_json::from_str(text.trim()).context("a storm's report is not JSON")?;
        frames.push(report["frames"].as_u64().context("a storm's report has no frame count")?);
    }
    Ok(frames)
}

pub fn run(args: &RunArgs) -> Result<Outcome> {
    let Prepared {
        scenario,
        policy,
        in_force,
        out,
        topology,
        storms: resolved,
        workload: plan_context,
        faults,
        hpcc_nodes,
        ..
    } = prepare(args, "")?;
    let InForce { pfcwd, ref qcn, ref fecn, .. } = in_force;
    let pfcswitch_topology::Topology { switches, hosts, links, .. } = topology;
    interrupt::catch();
    eprintln!(
        "scenario {} ({}), policy {}, pfcwd {pfcwd}, qcn {qcn}, fecn {fecn}, seed {}: {} switches, {} hosts, {} at {}",
        scenario.name,
        scenario.topology,
        policy.name(),
        args.seed,
        switches.len(),
        hosts.len(),
        pfcswitch_link::units::format_duration(scenario.duration),
        scenario.speed
    );
    let captured: Vec<String> = links_to_capture(&args.capture, &links)?.into_iter().map(Link::name).collect();
    create_dirs(&out, &["plans", "endpoints"])?;
    // Runs killed by a signal leave their namespaces behind: the next run removes them.
    for orphan in crate::netns::reap_orphans(RUN_PREFIX)? {
        eprintln!("removed namespace {orphan} of a run that no longer exists");
    }
    let prefix = format!("{RUN_PREFIX}{}-", std::process::id());
    // A generated fabric was written beside the run's configs (`prepare`).
    // Its links have the fabric's speeds; a named topology's all run at the scenario's.
    let (description, speed) = match scenario.fabric {
        Some(_) => (out.join("topology.toml").to_string_lossy().into_owned(), None),
        None => (scenario.topology.clone(), Some(scenario.speed)),
    };
    let topology = Topology::up(&description, &prefix, &out, speed, scenario.mtu, &captured)?;
    check_interrupt()?;
    let captures = Captures::start(&topology, &captured, &out.join("captures"))?;

    let clock = Clock::system();
    // Endpoints open their ports and announce themselves well before the workload starts.
    let epoch = clock.now() + Duration::from_secs(2);
    // tcpdump stamps with the wall clock: the epoch on it, to place captured frames in the run.
    let wall = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).context("the wall clock")?;
    let capture_epoch_seconds = wall.as_secs_f64() + (epoch.as_nanos() as f64 - clock.now().as_nanos() as f64) / 1e9;
    let connections = workload::plan(&scenario.classes, &hosts, args.seed, epoch, scenario.duration, &plan_context)?;
    let exe = std::env::current_exe().context("cannot find this executable")?;
    let (lines_tx, lines) = mpsc::channel::<(usize, String)>();
    let mut endpoints = Children { what: "an endpoint", children: Vec::new() };
    for (index, host) in hosts.iter().enumerate() {
        let plan = endpoint_plan(&scenario, host, &hosts, &connections, epoch, &in_force)?;
        let plan_file = out.join("plans").join(format!("{host}.json"));
        std::fs::write(&plan_file, serde_json::to_vec_pretty(&plan)?)?;
        let mut child = Command::new("ip")
            .args(["netns", "exec", &topology.namespace(host)])
            .arg(&exe)
            .args(["traffic", "endpoint", "--iface", "eth0", "--plan"])
            .arg(&plan_file)
            .arg("--out")
            .arg(out.join("endpoints").join(format!("{host}.json")))
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start the endpoint of {host}"))?;
        let stdout = child.stdout.take().expect("piped");
        let tx = lines_tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send((index, line));
            }
        });
        endpoints.children.push(child);
    }
    let (mut ready, mut done) = (vec![false; hosts.len()], vec![false; hosts.len()]);
    while !ready.iter().all(|&r| r) {
        check_interrupt()?;
        let Some(left) = epoch.as_nanos().checked_sub(clock.now().as_nanos() + 200_000_000) else {
            let late: Vec<_> = hosts.iter().zip(&ready).filter(|(_, r)| !**r).map(|(h, _)| h.as_str()).collect();
            bail!("endpoints of {late:?} did not start in time");
        };
        if let Ok((index, line)) = lines.recv_timeout(Duration::from_nanos(left)) {
            ready[index] |= line == "ready";
        }
    }
    let mut storms = start_storms(&scenario, &topology, &hosts, &resolved, epoch)?;

    let stop = Arc::new(AtomicBool::new(false));
    let priorities = scenario.priorities();
    let sockets = switches.iter().map(|s| (s.clone(), topology.socket(s))).collect();
    let sampler = sample_queues(sockets, priorities, epoch, scenario.sample, stop.clone());
    let faulter = apply_faults(topology.fault_applier(), faults, epoch, stop.clone());
    let give_up = epoch + scenario.duration + scenario.drain;
    let mut gave_up = false;
    // On a terminal one line rewritten in place; in a log, a line a second.
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut next_report = epoch;
    while !done.iter().all(|&d| d) {
        check_interrupt()?;
        if let Ok((index, line)) = lines.recv_timeout(Duration::from_millis(250)) {
            done[index] |= line == "done";
        }
        let now = clock.now();
        if terminal || now >= next_report {
            next_report = now + Duration::from_secs(1);
            let elapsed = now.as_nanos().saturating_sub(epoch.as_nanos()) as f64 / 1e9;
            let line = format!(
                "  {elapsed:6.2} s of {:.2} s; hosts finished {}/{}",
                scenario.duration.as_secs_f64(),
                done.iter().filter(|&&d| d).count(),
                hosts.len()
            );
            if terminal {
                eprint!("\r{line}   ")
            } else {
                eprintln!("{line}")
            }
            let _ = std::io::stderr().flush();
        }
        if now >= give_up {
            gave_up = true;
            break;
        }
    }
    if terminal {
        eprintln!();
    }
    let finished = clock.now();
    stop.store(true, Ordering::SeqCst);
    let samples = sampler.join().map_err(|_| anyhow::anyhow!("the queue sampler panicked"))?;
    let applied = faulter.join().map_err(|_| anyhow::anyhow!("the fault thread panicked"))??;
    let mut snapshots: Vec<(String, Snapshot)> = Vec::new();
    for switch in &switches {
        snapshots.push((switch.clone(), crate::control::snapshot(&topology.socket(switch))?));
    }
    storms.stop()?;
    endpoints.stop()?;
    let pcaps = captures.stop()?;
    drop(topology);
    let storms = StormRun::of(&scenario, &storm_frames(&mut storms)?);
    let mut results = Vec::new();
    for host in &hosts {
        let path = out.join("endpoints").join(format!("{host}.json"));
        let text = std::fs::read_to_string(&path).with_context(|| format!("endpoint {host} left no results"))?;
        results.push(serde_json::from_str::<EndpointResult>(&text)?);
    }
    let (mac, ip) = nth_host(0)?;
    let transport = TransportConfig {
        qcn: in_force.qcn_reaction,
        ..scenario.transport.config(mac, ip, scenario.mtu, scenario.speed, epoch, epoch + scenario.duration)
    };
    // veth pairs have no propagation delay.
    let ideal = IdealFct::of_links(&switches, &hosts, &links, scenario.speed, Duration::ZERO, &transport)?;
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
        storms: &storms,
        epoch,
        seconds: (finished.as_nanos() - epoch.as_nanos()) as f64 / 1e9,
        gave_up,
        interrupted: false,
        endpoints: &results,
        samples: &samples,
        snapshots: &snapshots,
        simulator: None,
        ideal: &ideal,
        hpcc_nodes: &hpcc_nodes,
        // The datapath's switches count PFC frames, not their arrival times.
        pause_arrivals: &[],
        faults: &applied,
        capture_epoch_seconds,
    };
    let outcome = report::write(&record, &out)?;
    for pcap in pcaps {
        println!("capture: {}", pcap.display());
    }
    Ok(outcome)
}
