//! The control socket: a Unix stream socket (mode 0600) speaking one JSON request per line,
//! answered with one JSON response per line, any number per connection, clients served
//! concurrently. The datapath thread owns the switch; requests
//! reach it through a channel and an eventfd that wakes it.
//!
//! Bounded: at most [`MAX_CLIENTS`] clients (a thread each; one more is told so and closed),
//! lines of at most [`MAX_LINE`] bytes, and a client silent for [`IDLE_TIMEOUT`] is dropped.
//! A line that is not a request, or is too long, gets `{"result":"error",...}` and the
//! connection goes on.

use crate::signals::EventFd;
use pfcswitch_switch::report::{ControlRequest, ControlResponse};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::Duration;

/// Clients served at once.
pub const MAX_CLIENTS: usize = 64;
/// Longest request line, newline excluded. Requests are small JSON objects.
pub const MAX_LINE: usize = 64 * 1024;
/// A client that sends nothing for this long is disconnected.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

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
        let clients = Arc::new(AtomicUsize::new(0));
        for stream in listener.incoming().flatten() {
            if clients.fetch_add(1, Ordering::AcqRel) >= MAX_CLIENTS {
                clients.fetch_sub(1, Ordering::AcqRel);
                let busy = format!("too many control clients (at most {MAX_CLIENTS})");
                let _ = send(&mut &stream, &ControlResponse::Error { message: busy });
                continue;
            }
            let (handle, client) = (handle.clone(), Client(clients.clone()));
            let spawned = std::thread::Builder::new().name("control-client".into()).spawn(move || {
                if let Err(error) = answer(stream, &handle) {
                    log::debug!("control client: {error}");
                }
                drop(client);
            });
            if let Err(error) = spawned {
                log::warn!("control: cannot start a client thread: {error}");
            }
        }
    })?;
    Ok(())
}

/// One client's place among [`MAX_CLIENTS`], given back when its thread ends (or fails to start).
struct Client(Arc<AtomicUsize>);

impl Drop for Client {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One line read by [`read_line`].
#[derive(Debug, PartialEq, Eq)]
enum Line {
    /// A line of at most [`MAX_LINE`] bytes, in the buffer (a last line may lack its newline).
    Complete,
    /// A longer line of this many bytes, read and discarded.
    TooLong(usize),
    End,
}

/// Reads the next line into `line` (newline removed), holding at most `limit` bytes of it.
fn read_line(reader: &mut impl BufRead, line: &mut Vec<u8>, limit: usize) -> io::Result<Line> {
    line.clear();
    let mut length = 0;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            return Ok(match length {
                0 => Line::End,
                n if n > limit => Line::TooLong(n),
                _ => Line::Complete,
            });
        }
        let newline = available.iter().position(|&b| b == b'\n');
        let chunk = &available[..newline.unwrap_or(available.len())];
        if length + chunk.len() <= limit {
            line.extend_from_slice(chunk);
        } else {
            line.clear();
        }
        length += chunk.len();
        let used = chunk.len() + usize::from(newline.is_some());
        reader.consume(used);
        if newline.is_some() {
            return Ok(if length > limit { Line::TooLong(length) } else { Line::Complete });
        }
    }
}

/// One response per write: serde_json writes token by token, and a syscall per token cost
/// the datapath's cores a fifth of one while a scenario sampled queues.
fn send(writer: &mut impl Write, response: &ControlResponse) -> io::Result<()> {
    let mut bytes = serde_json::to_vec(response)?;
    bytes.push(b'\n');
    writer.write_all(&bytes)
}

/// What a line asks for, or why it is not a request (quoting at most its first 100 bytes).
fn parse(line: &[u8]) -> Result<ControlRequest, ControlResponse> {
    serde_json::from_slice(line).map_err(|error| {
        let text = String::from_utf8_lossy(&line[..line.len().min(100)]);
        let more = if line.len() > 100 { "…" } else { "" };
        ControlResponse::Error { message: format!("bad request `{text}{more}`: {error}") }
    })
}

fn answer(stream: UnixStream, handle: &DatapathHandle) -> io::Result<()> {
    stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        let response = match read_line(&mut reader, &mut line, MAX_LINE)? {
            Line::End => return Ok(()),
            Line::TooLong(length) => ControlResponse::Error {
                message: format!("request line of {length} bytes is longer than the limit of {MAX_LINE}"),
            },
            Line::Complete if line.trim_ascii().is_empty() => continue,
            Line::Complete => parse(&line).map_or_else(|error| error, |request| handle.call(request)),
        };
        send(&mut writer, &response)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_longer_than_the_limit_are_skipped_whole_and_reading_goes_on() {
        let input = b"short\n0123456789abcdef\n\xff\xfe binary\nlast";
        let mut reader = BufReader::with_capacity(4, &input[..]);
        let mut line = Vec::new();
        let mut lines = Vec::new();
        loop {
            match read_line(&mut reader, &mut line, 10).unwrap() {
                Line::End => break,
                other => lines.push((other, String::from_utf8_lossy(&line).into_owned())),
            }
        }
        let expected = [
            (Line::Complete, "short"),
            (Line::TooLong(16), ""),
            (Line::Complete, "\u{fffd}\u{fffd} binary"),
            (Line::Complete, "last"),
        ];
        assert_eq!(lines, expected.map(|(l, s)| (l, s.to_string())));
    }

    #[test]
    fn garbage_and_oversized_lines_get_errors_and_the_client_is_still_served() {
        let (wake, calls) = DatapathHandle::new(Arc::new(EventFd::new().unwrap()));
        // The datapath's side of the channel: answers every call it gets.
        std::thread::spawn(move || {
            for call in calls {
                let _ = call.reply.send(ControlResponse::Done { message: format!("{:?}", call.request) });
            }
        });
        let (client, server) = UnixStream::pair().unwrap();
        std::thread::spawn(move || answer(server, &wake));
        let mut writer = client.try_clone().unwrap();
        let mut lines = BufReader::new(client).lines();
        let mut ask = |bytes: &[u8]| -> serde_json::Value {
            writer.write_all(bytes).unwrap();
            serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap()
        };
        let mut huge = vec![b'{'; MAX_LINE + 1];
        huge.push(b'\n');
        for (bytes, result) in [
            (&b"GET / HTTP/1.1\n"[..], "error"),
            (b"\x00\xff\xfe\n", "error"),
            (b"{\"command\":\"nonsense\"}\n", "error"),
            (&huge, "error"),
            (b"{\"command\":\"queues\"}\n", "done"),
        ] {
            let answer = ask(bytes);
            assert_eq!(answer["result"], result, "{answer}");
            assert!(answer.to_string().len() < 1000, "errors quote little of the line: {answer}");
        }
    }
}
