//! Packet captures with tcpdump inside a test namespace, stopped and flushed on demand.

use crate::netns::Netns;
use crate::topology::Topology;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `tcpdump -w`; `stop` ends it and returns the capture file.
#[derive(Debug)]
pub struct Capture {
    child: Child,
    path: PathBuf,
    /// Kept open so that tcpdump's closing statistics do not meet a closed pipe.
    _stderr: BufReader<ChildStderr>,
}

impl Capture {
    /// Captures on `iface` of `node` into `path`, with a BPF `filter` ("" for everything).
    /// Returns once tcpdump says it is listening (its socket and filter are in place), however
    /// long a busy machine took to start it.
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
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tcpdump (scripts/setup.sh installs it)");
        let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
        let mut said = String::new();
        while !said.contains("listening on") {
            let mut line = String::new();
            if stderr.read_line(&mut line).expect("tcpdump's stderr") == 0 {
                let _ = child.kill();
                panic!("tcpdump on {iface} exited before listening: {said}");
            }
            said.push_str(&line);
        }
        Capture { child, path: path.to_path_buf(), _stderr: stderr }
    }

    /// Once the file has stopped growing (tcpdump -U writes each frame as it reads it), stops
    /// tcpdump (SIGINT flushes the file) and returns the file's path. Call it after the traffic.
    pub fn stop(mut self) -> PathBuf {
        let size = || std::fs::metadata(&self.path).map_or(0, |m| m.len());
        let (deadline, mut last, mut stable_since) = (Instant::now() + Duration::from_secs(10), size(), Instant::now());
        while stable_since.elapsed() < Duration::from_millis(300) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
            if size() != last {
                (last, stable_since) = (size(), Instant::now());
            }
        }
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
