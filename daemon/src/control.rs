//! The control socket: a Unix stream socket (mode 0600) speaking one JSON request per line,
//! answered with one JSON response per line, any number per connection, clients served
//! concurrently. The datapath thread owns the switch; requests
//! reach it through a channel and an eventfd that wakes it.

use crate::signals::EventFd;
use pfcswitch_core::report::{ControlRequest, ControlResponse};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

/// A request in flight to the datapath, with where to send the answer.
#[derive(Debug)]
pub struct Call {
    pub request: ControlRequest,
    pub reply: Sender<ControlResponse>,
}

/// How other threads reach the datapath.
#[derive(Clone, Debug)]
pub struct DatapathHandle {
    calls: Sender<Call>,
    wake: Arc<EventFd>,
}

impl DatapathHandle {
    /// A handle and the receiving end the datapath polls.
    pub fn new(wake: Arc<EventFd>) -> (DatapathHandle, Receiver<Call>) {
        let (calls, receiver) = mpsc::channel();
        (DatapathHandle { calls, wake }, receiver)
    }

    pub fn call(&self, request: ControlRequest) -> ControlResponse {
        let (reply, answer) = mpsc::channel();
        if self.calls.send(Call { request, reply }).is_err() {
            return ControlResponse::Error { message: "the datapath has stopped".into() };
        }
        self.wake.notify();
        answer
            .recv_timeout(Duration::from_secs(5))
            .unwrap_or_else(|_| ControlResponse::Error { message: "the datapath did not answer within 5 s".into() })
    }
}

/// The default control socket of switch `name`.
pub fn default_socket_path(name: &str) -> PathBuf {
    PathBuf::from(format!("/run/pfcswitch/{name}.sock"))
}

/// Binds `path` (refusing one another daemon listens on, replacing a stale one), restricts
/// it to its owner and serves it on a thread.
pub fn serve(path: &Path, handle: DatapathHandle) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    if path.exists() {
        if UnixStream::connect(path).is_ok() {
            return Err(io::Error::new(
                io::ErrorKind::AddrInUse,
                format!("another pfcswitchd listens on {}", path.display()),
            ));
        }
        std::fs::remove_file(path)?;
    }
    let listener = UnixListener::bind(path)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    std::thread::Builder::new().name("control".into()).spawn(move || {
        // A thread per client: one that keeps its connection (a scenario's queue sampler) or
        // goes quiet must not hold up the others. Each request still goes through the one
        // channel to the datapath.
        for stream in listener.incoming().flatten() {
            let handle = handle.clone();
            let spawned = std::thread::Builder::new().name("control-client".into()).spawn(move || {
                if let Err(error) = answer(stream, &handle) {
                    log::debug!("control client: {error}");
                }
            });
            if let Err(error) = spawned {
                log::warn!("control: cannot start a client thread: {error}");
            }
        }
    })?;
    Ok(())
}

fn answer(stream: UnixStream, handle: &DatapathHandle) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut writer = stream.try_clone()?;
    for line in BufReader::new(stream).lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let response = match serde_json::from_str::<ControlRequest>(&line) {
            Ok(request) => handle.call(request),
            Err(error) => ControlResponse::Error { message: format!("bad request `{line}`: {error}") },
        };
        // One write per response: serde_json writes token by token, and a syscall per token
        // cost the datapath's cores a fifth of one while a scenario sampled queues.
        let mut bytes = serde_json::to_vec(&response)?;
        bytes.push(b'\n');
        writer.write_all(&bytes)?;
    }
    Ok(())
}
