//! One pfcswitchd per switch namespace: started detached (it outlives `topology up`), found
//! again by its pid file, stopped with SIGTERM and, after 5 s, SIGKILL.

use crate::control::forwarding_loop_answers;
use anyhow::{Context, Result, bail};
use pfcswitch_link::units::format_duration;
use pfcswitch_switch::config::SwitchConfig;
use pfcswitch_topology::Topology;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where daemons keep their sockets, logs and pid files.
pub const RUN_DIR: &str = "/run/pfcswitch";

/// The control socket of the daemon in `namespace`.
pub fn socket_path(namespace: &str) -> PathBuf {
    pfcswitchd::control::default_socket_path(namespace)
}

/// The log of the daemon in `namespace`; `down` leaves it for the user.
pub fn log_path(namespace: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{namespace}.log"))
}

fn pid_path(namespace: &str) -> PathBuf {
    Path::new(RUN_DIR).join(format!("{namespace}.pid"))
}

/// pfcswitchd's `--spin`, `--nice` and `--realtime` for the switches of a topology on one
/// machine.
///
/// No spin by default: the switches share the cores with each other and with the endpoints,
/// and spinning for timer precision would starve them. Nice −20 by default: a switch's PFC
/// response time must stay within its headroom, and at nice 0 a switch among busy endpoints
/// waits its turn for the CPU. Not SCHED_FIFO: a realtime loop that stays busy starves the
/// kernel's softirq thread on its CPU, which carries its own transmissions to the hosts'
/// veths, so PFC frames reach the senders late (measurements in docs/pfcswitchd.md).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Scheduling {
    pub spin: String,
    /// Nice value of each forwarding loop.
    pub nice: i8,
    /// SCHED_FIFO priority of each forwarding loop; `None` leaves it to the ordinary scheduler.
    pub realtime: Option<u8>,
}

impl Default for Scheduling {
    fn default() -> Scheduling {
        Scheduling { spin: "0us".into(), nice: -20, realtime: None }
    }
}

impl Scheduling {
    /// The daemon's flags.
    pub fn args(&self) -> Vec<String> {
        let mut args = vec!["--spin".to_string(), self.spin.clone(), format!("--nice={}", self.nice)];
        if let Some(priority) = self.realtime {
            args.extend(["--realtime".to_string(), priority.to_string()]);
        }
        args
    }
}

pub(super) fn start(
    namespace: &str,
    daemon: &Path,
    config: &Path,
    scheduling: &Scheduling,
    cables: &[String],
) -> Result<()> {
    let log_file = log_path(namespace);
    let log = std::fs::File::create(&log_file).with_context(|| format!("cannot create {}", log_file.display()))?;
    let socket = socket_path(namespace);
    let _ = std::fs::remove_file(&socket);
    let child = Command::new("ip")
        .args(["netns", "exec", namespace])
        .arg(daemon)
        .arg("--config")
        .arg(config)
        .args(scheduling.args())
        .args(cables)
        .arg("--control-socket")
        .arg(&socket)
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log)
        // Its own process group: a Ctrl-C meant for `topology up` does not reach it.
        .process_group(0)
        .spawn()
        .with_context(|| format!("cannot start {} in {namespace}", daemon.display()))?;
    // `ip netns exec` execs the daemon: the child's pid is the daemon's.
    std::fs::write(pid_path(namespace), child.id().to_string()).context("cannot write the pid file")?;
    Ok(())
}

/// Waits up to 10 s for the daemon's forwarding loop to answer on its control socket; fails
/// with its log if it exited. The socket alone is not enough: it opens before the loop takes
/// its `--nice`/`--realtime` and starts serving, and only the loop answers requests.
pub(super) fn wait_ready(namespace: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let pid = read_pid(namespace);
    while Instant::now() < deadline {
        let socket = socket_path(namespace);
        if socket.exists() && forwarding_loop_answers(&socket) {
            return Ok(());
        }
        if !pid.is_some_and(alive) {
            bail!("pfcswitchd in {namespace} exited:\n{}", log_tail(namespace));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    bail!("pfcswitchd in {namespace} did not answer on its control socket in 10 s:\n{}", log_tail(namespace))
}

/// Stops the daemon of `namespace` if its pid file names a live one; removes the pid file and
/// the socket.
pub(super) fn stop(namespace: &str) {
    if let Some(pid) = read_pid(namespace) {
        stop_pid(pid);
    }
    let _ = std::fs::remove_file(pid_path(namespace));
    let _ = std::fs::remove_file(socket_path(namespace));
}

/// SIGKILL to the daemon of `namespace`; returns once it is gone.
pub(super) fn kill(namespace: &str) -> Result<()> {
    let pid = read_pid(namespace).with_context(|| format!("no pid file for {namespace}'s pfcswitchd"))?;
    // SAFETY: kill(2) with a pid from our own pid file; no memory is shared.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() > deadline {
            bail!("pfcswitchd {pid} in {namespace} outlived SIGKILL for 5 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    reap(pid);
    Ok(())
}

/// SIGTERM, then SIGKILL after 5 s: the daemon detaches its XDP programs on SIGTERM.
pub(super) fn stop_pid(pid: i32) {
    // SAFETY: kill(2) with a pid read from our own pid file or namespace; no memory is shared.
    if unsafe { libc::kill(pid, libc::SIGTERM) } != 0 {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if alive(pid) {
        // SAFETY: as above.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    reap(pid);
}

/// Collects a daemon this process started, so that it does not linger as a zombie.
fn reap(pid: i32) {
    // SAFETY: waitpid on a pid; WNOHANG returns at once when it is not our child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) };
}

pub(super) fn alive(pid: i32) -> bool {
    // A zombie is dead for us: it holds no socket and no XDP program.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z')))
}

fn read_pid(namespace: &str) -> Option<i32> {
    std::fs::read_to_string(pid_path(namespace)).ok()?.trim().parse().ok()
}

fn log_tail(namespace: &str) -> String {
    let log = std::fs::read_to_string(log_path(namespace)).unwrap_or_default();
    let lines: Vec<_> = log.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

/// Warns when `config` (loaded from `file`) gives a port of `switch` a speed other than its
/// link's, or when a link's delay exceeds the `pfc.cable_delay` its lossless headroom is
/// computed from.
pub(super) fn warn_link_mismatch(topology: &Topology, switch: &str, file: &Path, config: &SwitchConfig) {
    for port in &config.ports {
        let Some((_, link)) = topology.ports_of(switch).find(|(name, _)| *name == port.name) else { continue };
        let (link_name, described) = (link.name(), topology.file.display());
        if port.speed != link.speed {
            eprintln!(
                "warning: {} sets {switch}'s port {} to {}; its link {link_name} is {} in {described}: the switch shapes at {}",
                file.display(),
                port.name,
                port.speed,
                link.speed,
                port.speed
            );
        }
        if !config.pfc.lossless.is_empty() && link.delay > config.pfc.cable_delay {
            eprintln!(
                "warning: link {link_name} has a delay of {} in {described}, but {} computes {switch}'s headroom from \
                 pfc.cable_delay = {}: set it to the link's delay, or lossless frames may overrun the headroom",
                format_duration(link.delay),
                file.display(),
                format_duration(config.pfc.cable_delay)
            );
        }
    }
}
