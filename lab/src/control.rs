//! The control client: requests to pfcswitchd's control socket (one JSON line each way) and
//! their answers. The scenario runner samples switches with it; the CLI prints what it says.

use anyhow::{Context, Result, bail};
use pfcswitch_switch::report::{ControlRequest, ControlResponse, QueueDepths, Snapshot};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};

/// Where daemons put their sockets by default.
const RUN_DIR: &str = "/run/pfcswitch";

/// The socket to use: the one given, or the only one in /run/pfcswitch.
pub fn resolve_socket(given: Option<PathBuf>) -> Result<PathBuf> {
    if let Some(path) = given {
        return Ok(path);
    }
    let mut sockets: Vec<PathBuf> = std::fs::read_dir(RUN_DIR)
        .map(|entries| {
            entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "sock")).collect()
        })
        .unwrap_or_default();
    sockets.sort();
    match sockets.len() {
        1 => Ok(sockets.remove(0)),
        0 => bail!("no pfcswitchd control socket in {RUN_DIR}; is pfcswitchd running? (or pass -s SOCKET)"),
        _ => bail!(
            "several switches run here; choose one with -s: {}",
            sockets.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// A connection to a daemon's control socket; it answers any number of requests, one line
/// each, so a sampler asks over one connection instead of connecting for every sample.
#[derive(Debug)]
pub struct Connection {
    reader: BufReader<UnixStream>,
    path: PathBuf,
}

impl Connection {
    pub fn open(socket: &Path) -> Result<Connection> {
        let stream = UnixStream::connect(socket).with_context(|| format!("cannot connect to {}", socket.display()))?;
        Ok(Connection { reader: BufReader::new(stream), path: socket.to_path_buf() })
    }

    /// Sends one request and returns the daemon's answer.
    pub fn request(&mut self, request: &ControlRequest) -> Result<ControlResponse> {
        let mut bytes = serde_json::to_vec(request)?;
        bytes.push(b'\n');
        self.reader.get_mut().write_all(&bytes)?;
        let mut line = String::new();
        let read = self.reader.read_line(&mut line);
        if !matches!(read, Ok(n) if n > 0) {
            bail!("no answer from {}", self.path.display());
        }
        serde_json::from_str(&line).with_context(|| format!("unreadable answer from {}", self.path.display()))
    }

    pub fn queue_depths(&mut self) -> Result<Vec<QueueDepths>> {
        match self.request(&ControlRequest::Queues)? {
            ControlResponse::Queues { ports } => Ok(ports),
            other => unexpected(other),
        }
    }
}

/// An answer that is not the one asked for, as an error.
pub fn unexpected<T>(response: ControlResponse) -> Result<T> {
    match response {
        ControlResponse::Error { message } => bail!("{message}"),
        other => bail!("unexpected answer {other:?}"),
    }
}

/// Sends one request over a fresh connection and returns the daemon's answer.
pub fn request(socket: &Path, request: &ControlRequest) -> Result<ControlResponse> {
    Connection::open(socket)?.request(request)
}

/// Whether the daemon behind `socket` is ready: its forwarding loop, which alone answers
/// `Queues`, runs (the socket exists earlier, before the loop has taken its scheduling).
pub fn forwarding_loop_answers(socket: &Path) -> bool {
    matches!(request(socket, &ControlRequest::Queues), Ok(ControlResponse::Queues { .. }))
}

pub fn snapshot(socket: &Path) -> Result<Snapshot> {
    match request(socket, &ControlRequest::Snapshot)? {
        ControlResponse::Snapshot(snapshot) => Ok(*snapshot),
        other => unexpected(other),
    }
}
