//! Packet captures with tcpdump inside a test namespace, stopped and flushed on demand.

use crate::netns::Netns;
use crate::topology::Topology;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `tcpdump -w`; `stop` ends it and returns the capture file.
#[derive(Debug)]
pub struct Capture {
    child: Child,
    path: PathBuf,
}

impl Capture {
    /// Captures on `iface` of `node` into `path`, with a BPF `filter` ("" for everything).
    pub fn start(topology: &Topology, node: &str, iface: &str, filter: &str, path: &Path) -> Capture {
        Self::spawn(topology.command(node, "tcpdump"), iface, filter, path)
    }

    /// Captures on `iface` of the namespace `netns`.
    pub fn start_in(netns: &Netns, iface: &str, filter: &str, path: &Path) -> Capture {
        let mut command = Command::new("ip");
        command.args(["netns", "exec", netns.name(), "tcpdump"]);
        Self::spawn(command, iface, filter, path)
    }

    /// `command` runs tcpdump where the capture is to be made.
    fn spawn(mut command: Command, iface: &str, filter: &str, path: &Path) -> Capture {
        command.args(["-i", iface, "-U", "-w"]).arg(path).args(["--immediate-mode"]);
        if !filter.is_empty() {
            command.args(filter.split_whitespace());
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("tcpdump (scripts/setup.sh installs it)");
        // tcpdump opens its socket within tens of milliseconds; leave it ample time.
        std::thread::sleep(Duration::from_millis(700));
        Capture { child, path: path.to_path_buf() }
    }

    /// Stops tcpdump (SIGINT flushes the file) and returns the file's path.
    pub fn stop(mut self) -> PathBuf {
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: signalling our own child process.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        let _ = self.child.wait();
        self.path.clone()
    }
}

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
