//! Topologies (`topologies/*.toml`, built by `pfcswitch_lab::netns`) with live pfcswitchd
//! daemons, as RAII guards: the topology comes down (daemons stopped, namespaces deleted)
//! when the guard drops, panics included. Prefixes are unique per test run (`pt<pid>x<n>-`),
//! so runs never collide, and what a run killed by a signal left is removed by the next.

use pfcswitch_lab::netns::{self, Scheduling, UpOptions};
use pfcswitch_switch::report::{ControlRequest, ControlResponse, Snapshot};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

static COUNTER: AtomicUsize = AtomicUsize::new(0);
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs daemon tests one at a time, and CPU-bound simulations not beside them: a datapath's
/// timing needs the cores (the machine has two), and its tests' margins assume them.
pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is in the repository").to_path_buf()
}

/// star3's switch config (configs/default.toml) as `edit` rewrites it, written to
/// `dir/sw1.toml`; returns the file for [`Topology::up`].
pub fn star3_config(dir: &Path, edit: impl FnOnce(String) -> String) -> PathBuf {
    let file = std::fs::read_to_string(repo().join("configs/default.toml")).expect("configs/default.toml");
    let config = dir.join("sw1.toml");
    std::fs::write(&config, edit(file)).expect("a writable test directory");
    config
}

/// A release binary of this workspace. The namespace tests run the datapath as users do:
/// optimised (a debug build is CPU-bound at 100 Mbit/s). scripts/test.sh builds it first;
/// after a change, `cargo build --release --workspace --bins` before `cargo test`.
pub fn binary(name: &str) -> PathBuf {
    let dir = std::env::var_os("PFCSWITCH_BIN_DIR").map_or_else(|| repo().join("target/release"), PathBuf::from);
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release --workspace --bins` (scripts/test.sh does)",
        path.display()
    );
    path
}

/// A namespace prefix of its own for each topology of a test run: `pt<pid>x<n>-`
/// (`PFCSWITCH_TEST_PREFIX` replaces `pt` where several people share a machine). The first
/// call removes what runs killed by a signal left (their pid is dead), daemons first.
pub fn unique_prefix() -> String {
    crate::require_root();
    let base = std::env::var("PFCSWITCH_TEST_PREFIX").unwrap_or_else(|_| "pt".into());
    static REAPED: std::sync::Once = std::sync::Once::new();
    REAPED.call_once(|| {
        for orphan in netns::reap_orphans(&base).expect("list namespaces") {
            eprintln!("removed namespace {orphan} of a test run that no longer exists");
        }
    });
    format!("{base}{}x{}-", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

#[derive(Debug)]
pub struct Topology {
    description: pfcswitch_topology::Topology,
    prefix: String,
}

impl Topology {
    /// Brings up topology `name` (star3, ofc-fig1) with `configs` (a file for one switch or
    /// a directory of swK.toml; None for the topology's default).
    pub fn up(name: &str, configs: Option<&Path>) -> Topology {
        Self::bring_up(name, configs, true)
    }

    /// The namespaces and links only; start daemons with [`Topology::start_daemon`].
    pub fn without_daemons(name: &str) -> Topology {
        Self::bring_up(name, None, false)
    }

    fn bring_up(name: &str, configs: Option<&Path>, daemons: bool) -> Topology {
        let prefix = unique_prefix();
        let dir = repo().join("topologies");
        let description = pfcswitch_topology::Topology::find(name, &dir).unwrap_or_else(|e| panic!("{e}"));
        let options = UpOptions {
            prefix: prefix.clone(),
            configs: configs.map(Path::to_path_buf),
            daemon: daemons.then(|| binary("pfcswitchd")),
            scheduling: Scheduling::default(),
            taps: Vec::new(),
            machine: None,
        };
        if let Err(error) = netns::up(&description, &options) {
            panic!("topology up {name} failed: {error:#}");
        }
        Topology { description, prefix }
    }

    /// Deletes the veth pair at `end` (`sw1:p2`) and creates it again as `up` did: a cable,
    /// or a NIC with its driver, replaced.
    pub fn relink(&self, end: &str) {
        if let Err(error) = netns::relink(&self.description, &self.prefix, None, end) {
            panic!("relink {end} failed: {error:#}");
        }
    }

    /// The namespace of node `node` (`sw1`, `h2`).
    pub fn ns(&self, node: &str) -> String {
        format!("{}{node}", self.prefix)
    }

    pub fn socket(&self, switch: &str) -> PathBuf {
        netns::socket_path(&self.ns(switch))
    }

    pub fn log(&self, switch: &str) -> String {
        std::fs::read_to_string(netns::log_path(&self.ns(switch))).unwrap_or_default()
    }

    pub fn pid(&self, switch: &str) -> u32 {
        std::fs::read_to_string(format!("/run/pfcswitch/{}.pid", self.ns(switch)))
            .expect("pid file")
            .trim()
            .parse()
            .expect("pid")
    }

    /// A command to run inside `node`'s namespace.
    pub fn command(&self, node: &str, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", &self.ns(node)]).arg(program);
        command
    }

    /// Runs `program args` in `node` and returns its output, failing the test on error.
    pub fn run(&self, node: &str, program: impl AsRef<std::ffi::OsStr>, args: &[&str]) -> Output {
        let output = self.command(node, &program).args(args).output().expect("spawn");
        assert!(
            output.status.success(),
            "{:?} {args:?} in {node} failed: {}{}",
            program.as_ref(),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        output
    }

    /// `pfcswitch -s SOCKET args` for `switch`.
    pub fn cli(&self, switch: &str, args: &[&str]) -> Output {
        let output = Command::new(binary("pfcswitch"))
            .arg("-s")
            .arg(self.socket(switch))
            .args(args)
            .output()
            .expect("spawn pfcswitch");
        assert!(output.status.success(), "pfcswitch {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        output
    }

    /// The switch's state, straight from its control socket.
    pub fn snapshot(&self, switch: &str) -> Snapshot {
        let mut stream = UnixStream::connect(self.socket(switch)).expect("connect to the control socket");
        serde_json::to_writer(&mut stream, &ControlRequest::Snapshot).unwrap();
        stream.write_all(b"\n").unwrap();
        let mut line = String::new();
        BufReader::new(stream).read_line(&mut line).unwrap();
        match serde_json::from_str(&line).expect("a JSON answer") {
            ControlResponse::Snapshot(snapshot) => *snapshot,
            other => panic!("unexpected answer {other:?}"),
        }
    }

    /// Asserts that `switch` accounts for every frame it took in: each (port, priority)'s
    /// ledger balances on both sides (`pfcswitch ledger`). Returns the snapshot.
    pub fn assert_ledgers_balance(&self, switch: &str) -> Snapshot {
        let snapshot = self.snapshot(switch);
        for port in &snapshot.ports {
            for priority in &port.priorities {
                assert!(
                    priority.ledger.balanced(),
                    "{switch} port {} priority {}: {:?}",
                    port.name,
                    priority.priority,
                    priority.ledger
                );
            }
        }
        snapshot
    }

    /// Starts `pfcswitchd --config config` in `switch`'s namespace as `up` would (control
    /// socket where `up` puts it, its scheduling), with `env` added; it is stopped when the
    /// guard drops.
    pub fn start_daemon(&self, switch: &str, config: &Path, env: &[(&str, &str)]) -> Daemon {
        let mut command = self.command(switch, binary("pfcswitchd"));
        command.arg("--config").arg(config).args(Scheduling::default().args());
        command.arg("--control-socket").arg(self.socket(switch));
        command.envs(env.iter().copied()).stdout(Stdio::null()).stderr(Stdio::piped());
        Daemon { child: Some(command.spawn().expect("spawn pfcswitchd")) }
    }

    /// Waits until `switch`'s forwarding loop answers on its control socket (it opens the
    /// socket before it takes its scheduling and starts).
    pub fn wait_ready(&self, switch: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while !pfcswitch_lab::control::forwarding_loop_answers(&self.socket(switch)) {
            assert!(
                std::time::Instant::now() < deadline,
                "pfcswitchd in {switch} did not answer on its control socket"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Whether any interface of `node`'s namespace carries an XDP program.
    pub fn has_xdp(&self, node: &str) -> bool {
        String::from_utf8_lossy(&self.run(node, "ip", &["-d", "link", "show"]).stdout).contains("prog/xdp")
    }

    /// The Prometheus exposition of `switch` in text format 0.0.4 (curl's default `Accept`),
    /// fetched over HTTP inside its namespace.
    pub fn metrics(&self, switch: &str) -> String {
        self.scrape(switch, "*/*").1
    }

    /// The exposition `switch` serves to a client that sends `Accept: accept`: its Content-Type
    /// and its body.
    pub fn scrape(&self, switch: &str, accept: &str) -> (String, String) {
        let header = format!("Accept: {accept}");
        let args = ["-sf", "-H", &header, "-w", "\n%{content_type}", "http://127.0.0.1:9464/metrics"];
        let output = String::from_utf8(self.run(switch, "curl", &args).stdout).expect("UTF-8 metrics");
        let (body, content_type) = output.rsplit_once('\n').expect("curl wrote the content type");
        (content_type.to_string(), body.to_string())
    }
}

/// A pfcswitchd started by a test; SIGTERM and reaped on drop.
#[derive(Debug)]
pub struct Daemon {
    child: Option<Child>,
}

impl Daemon {
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.pid() as i32, signal) };
    }

    /// Waits for the daemon to exit (killing it after 10 s) and returns its status and stderr.
    pub fn wait(mut self) -> (std::process::ExitStatus, String) {
        let mut child = self.child.take().expect("running");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
        }
        (status, stderr)
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let _ = child.wait();
        }
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        if let Err(error) = netns::down(&self.description, &self.prefix, None) {
            eprintln!("warning: topology down {} {}: {error:#}", self.description.name, self.prefix);
        }
        // `down` keeps daemon logs for users; a test run leaves none behind.
        for switch in &self.description.switches {
            let _ = std::fs::remove_file(netns::log_path(&self.ns(switch)));
        }
    }
}

/// A 2:1 incast on star3: h1 and h2 each send `frames` 1500-byte frames on priority 3 (or
/// another, [`Incast::on_priority`]) at line rate (obeying PFC) to h3, which counts them.
/// Its processes are killed if the test ends before [`Incast::assert_lossless`] reaps them.
#[derive(Debug)]
pub struct Incast {
    receiver: Option<Child>,
    senders: Vec<Child>,
    frames: u64,
}

impl Incast {
    /// At 100 Mbit/s, star3's default port speed.
    pub fn start(topology: &Topology, frames: u64) -> Incast {
        Self::at_speed(topology, frames, "100Mbps")
    }

    pub fn at_speed(topology: &Topology, frames: u64, speed: &str) -> Incast {
        Self::on_priority(topology, frames, speed, 3)
    }

    /// The same on priority `pcp` (lossy unless the switch's config makes it lossless).
    pub fn on_priority(topology: &Topology, frames: u64, speed: &str, pcp: u8) -> Incast {
        let receiver = topology
            .command("h3", binary("pfcswitch"))
            .args(["-j", "traffic", "recv", "--iface", "eth0", "--duration", "60s", "--idle", "2s"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let senders = [("h1", "1"), ("h2", "2")]
            .iter()
            .map(|(host, flow)| {
                topology
                    .command(host, binary("pfcswitch"))
                    .args(["traffic", "send", "--iface", "eth0", "--speed", speed, "--dst", "02:00:00:00:00:03"])
                    .args(["--pcp", &pcp.to_string(), "--frames", &frames.to_string(), "--flow", flow])
                    .args(["--linger", "500ms"])
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect();
        Incast { receiver: Some(receiver), senders, frames }
    }

    /// Frames sw1 has sent to h3 on priority 3 so far.
    pub fn forwarded(topology: &Topology) -> u64 {
        topology.snapshot("sw1").port("p3").expect("star3 has p3").priorities[3].tx_frames
    }

    /// Returns once the incast is under way (1000 frames reached h3), however late the senders
    /// got the CPU.
    pub fn wait_under_way(topology: &Topology) {
        crate::wait_until("the incast reaches h3", Duration::from_secs(20), || Self::forwarded(topology) >= 1000);
    }

    /// Waits for the senders and the receiver; returns the frames each flow lost (sequence
    /// gaps and missing tail), having asserted the receiver kept up and saw both flows.
    pub fn lost(mut self) -> Vec<u64> {
        for mut sender in std::mem::take(&mut self.senders) {
            assert!(sender.wait().unwrap().success());
        }
        let output = self.receiver.take().expect("reaped once").wait_with_output().unwrap();
        let received: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(received["receiver_drops"], 0, "the measuring receiver kept up");
        let flows = received["flows"].as_array().unwrap();
        assert_eq!(flows.len(), 2, "both senders' flows arrived: {received}");
        flows.iter().map(|flow| self.frames - flow["frames"].as_u64().unwrap()).collect()
    }

    /// Waits for the senders and the receiver; asserts nothing was lost (a failure shows
    /// sw1's drops and how late its datapath woke up).
    pub fn assert_lossless(self, topology: &Topology) {
        let lost = self.lost();
        if lost != [0, 0] {
            let snapshot = topology.snapshot("sw1");
            let drops: Vec<_> = snapshot.ports.iter().map(|p| (&p.name, &p.priorities[3].drops)).collect();
            panic!("frames lost per flow {lost:?}; sw1 drops {drops:?}; datapath {:?}", snapshot.datapath);
        }
    }
}

impl Drop for Incast {
    fn drop(&mut self) {
        for child in self.senders.iter_mut().chain(self.receiver.as_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
