//! Network namespaces named `pfct-<pid>-<n>-<label>` and removed on drop, panics included.
//! Namespaces left by a killed test run (their pid no longer exists) are swept on the next
//! run; nothing without our prefix is ever touched.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::{Command, Output};
use std::sync::Once;
use std::sync::atomic::{AtomicUsize, Ordering};

const PREFIX: &str = "pfct-";
static COUNTER: AtomicUsize = AtomicUsize::new(0);
static SWEEP: Once = Once::new();

/// A network namespace owned by the test; `ip netns del` on drop removes it and every
/// interface inside.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    pub fn new(label: &str) -> Netns {
        SWEEP.call_once(sweep_stale);
        let name = format!("{PREFIX}{}-{}-{label}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
        run_checked(Command::new("ip").args(["netns", "add", &name]));
        let netns = Netns { name };
        netns.ip(&["link", "set", "lo", "up"]);
        netns
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs a command inside the namespace and returns its output, failing on a non-zero exit.
    pub fn run(&self, program: &str, args: &[&str]) -> Output {
        run_checked(Command::new("ip").args(["netns", "exec", &self.name, program]).args(args))
    }

    /// `ip <args>` inside the namespace.
    pub fn ip(&self, args: &[&str]) -> Output {
        self.run("ip", args)
    }

    /// A veth pair with both ends in this namespace, up, IPv6 off (no autoconfiguration
    /// chatter in counters).
    pub fn veth_pair(&self, a: &str, b: &str) {
        self.ip(&["link", "add", a, "type", "veth", "peer", "name", b]);
        for end in [a, b] {
            self.run("sysctl", &["-qw", &format!("net.ipv6.conf.{end}.disable_ipv6=1")]);
            self.ip(&["link", "set", end, "up"]);
        }
    }

    /// Runs `f` on a thread that has entered this namespace, so sockets, interface lookups
    /// and XDP attachment happen inside it.
    pub fn enter<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        enter(&self.name, f)
    }

    /// Moves the calling thread into this namespace (for objects that must stay on the
    /// thread that made them; spawn a thread for it).
    pub fn move_current_thread(&self) {
        move_current_thread(&self.name)
    }
}

/// Runs `f` on a thread that has entered the named namespace. Sockets made there stay in it
/// wherever they are used afterwards.
pub fn enter<R: Send>(name: &str, f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                move_current_thread(name);
                f()
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

/// Moves the calling thread into the named namespace (`ip netns` names, under /run/netns).
pub fn move_current_thread(name: &str) {
    let path = format!("/run/netns/{name}");
    let file = File::open(&path).unwrap_or_else(|e| panic!("cannot open {path}: {e}"));
    // SAFETY: a valid namespace fd; setns only changes this thread's namespace.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    assert_eq!(rc, 0, "setns({path}): {}", std::io::Error::last_os_error());
}

impl Drop for Netns {
    fn drop(&mut self) {
        let status = Command::new("ip").args(["netns", "del", &self.name]).status();
        if !matches!(status, Ok(s) if s.success()) {
            eprintln!("warning: could not delete network namespace {}: {status:?}", self.name);
        }
    }
}

/// Runs a command and returns its output, failing the test on a non-zero exit.
pub fn run_checked(command: &mut Command) -> Output {
    let output = command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    output
}

/// Deletes `pfct-<pid>-...` namespaces whose pid is gone (a test run killed before its
/// guards ran).
fn sweep_stale() {
    let Ok(entries) = std::fs::read_dir("/run/netns") else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(PREFIX).and_then(|rest| rest.split('-').next()) else { continue };
        if pid.parse::<u32>().is_ok() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
    }
}
