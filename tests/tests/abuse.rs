//! The metrics endpoint and the control socket under abuse while real traffic crosses the
//! switch (star3, configs/default.toml): idle and slowloris connections, garbage HTTP and
//! binary junk on the endpoint, garbage and 1 MiB lines on the control socket. Forwarding
//! keeps its rate, and scrapes and `pfcswitch status` keep answering promptly. A server that
//! serves one connection at a time fails here: an idle connection holds it and the scrapes
//! time out.

use pfcswitch_tests::netns;
use pfcswitch_tests::topology::{Topology, binary, serial};
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::net::UnixStream;
use std::process::{Child, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long each rate is measured.
const WINDOW: Duration = Duration::from_secs(8);
const IDLE_CONNECTIONS: usize = 200;
const SLOWLORIS_CONNECTIONS: usize = 100;
/// Every scrape and `pfcswitch status` must answer within this, abuse or not.
const PROMPT: Duration = Duration::from_secs(2);
/// The endpoint drops a connection whose request head is not complete after 5 s
/// (pfcswitchd's HEAD_TIMEOUT); allow for a busy machine and this test's 100 ms polling.
const DROPPED_WITHIN: Duration = Duration::from_secs(8);
/// Offered load: a fixed UDP rate at half the ports' 100 Mbit/s.
const OFFERED: &str = "50M";

fn endpoint() -> SocketAddr {
    "127.0.0.1:9464".parse().unwrap()
}

/// Bytes `host`'s eth0 has received: what the switch delivered to it.
fn rx_bytes(topology: &Topology, host: &str) -> u64 {
    let output = topology.run(host, "ip", &["-j", "-s", "link", "show", "dev", "eth0"]);
    let links: serde_json::Value = serde_json::from_slice(&output.stdout).expect("ip -j");
    links[0]["stats64"]["rx"]["bytes"].as_u64().expect("rx bytes in ip -j -s")
}

/// The rate (bit/s) at which the switch delivers to `host` over the next [`WINDOW`].
fn delivered_rate(topology: &Topology, host: &str) -> f64 {
    let (before, started) = (rx_bytes(topology, host), Instant::now());
    std::thread::sleep(WINDOW);
    let after = rx_bytes(topology, host);
    (after - before) as f64 * 8.0 / started.elapsed().as_secs_f64()
}

/// A connection to the endpoint, from a thread inside sw1's namespace.
fn connect() -> std::io::Result<TcpStream> {
    let stream = TcpStream::connect_timeout(&endpoint(), PROMPT)?;
    stream.set_read_timeout(Some(PROMPT))?;
    Ok(stream)
}

/// Sends `request` on `stream` and reads the answer until the server closes (it closes after
/// each response). What arrived before a reset counts: a server that refuses a request it has
/// not read to the end resets the connection.
fn exchange(mut stream: TcpStream, request: &[u8]) -> std::io::Result<String> {
    let written = stream.write_all(request);
    let mut answer = Vec::new();
    let read = stream.read_to_end(&mut answer);
    if answer.is_empty() {
        written?;
        read?;
    }
    Ok(String::from_utf8_lossy(&answer).into_owned())
}

/// A normal scrape: how long it took, or why it failed.
fn scrape(ns: &str) -> Result<Duration, String> {
    let started = Instant::now();
    let stream = netns::enter(ns, connect).map_err(|e| format!("scrape: connect: {e}"))?;
    let answer = exchange(stream, b"GET /metrics HTTP/1.1\r\nHost: sw1\r\n\r\n").map_err(|e| format!("scrape: {e}"))?;
    if !answer.starts_with("HTTP/1.1 200") || !answer.contains("\npfcswitch_rx_frames_total{") {
        return Err(format!("scrape answered {:?}", &answer[..answer.len().min(200)]));
    }
    Ok(started.elapsed())
}

/// `pfcswitch status`: how long it took (killed after 10 s, so a blocked socket fails the test
/// instead of hanging it).
fn status(topology: &Topology) -> Result<Duration, String> {
    let started = Instant::now();
    let mut child = std::process::Command::new(binary("pfcswitch"))
        .arg("-s")
        .arg(topology.socket("sw1"))
        .arg("status")
        .stdout(Stdio::null())
        .spawn()
        .expect("spawn pfcswitch");
    loop {
        if let Some(exit) = child.try_wait().expect("try_wait") {
            return if exit.success() { Ok(started.elapsed()) } else { Err(format!("pfcswitch status: {exit}")) };
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            let _ = child.wait();
            return Err("pfcswitch status hung for 10 s".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Connections an abuser holds open, with when each was opened.
struct Held {
    streams: Vec<(TcpStream, Instant)>,
    /// Ages at which the server closed a connection.
    closed_after: Vec<Duration>,
}

impl Held {
    fn open(count: usize, first_bytes: &[u8]) -> Held {
        let streams = (0..count).map(|_| Held::connect(first_bytes)).collect();
        Held { streams, closed_after: Vec::new() }
    }

    fn connect(first_bytes: &[u8]) -> (TcpStream, Instant) {
        let mut stream = connect().expect("the endpoint accepts connections under abuse");
        stream.set_nonblocking(true).unwrap();
        stream.set_nodelay(true).unwrap();
        let _ = stream.write_all(first_bytes);
        (stream, Instant::now())
    }

    /// Reopens every connection the server closed (it reads as end of stream or an error),
    /// writing `bytes` on the others.
    fn tend(&mut self, first_bytes: &[u8], bytes: &[u8]) {
        for index in 0..self.streams.len() {
            let (stream, opened) = &mut self.streams[index];
            let mut buffer = [0u8; 512];
            let closed = match stream.read(&mut buffer) {
                Ok(_) => true,
                Err(e) if e.kind() == ErrorKind::WouldBlock => !bytes.is_empty() && stream.write_all(bytes).is_err(),
                Err(_) => true,
            };
            if closed {
                self.closed_after.push(opened.elapsed());
                self.streams[index] = Held::connect(first_bytes);
            }
        }
    }
}

/// What the abusers saw.
#[derive(Debug, Default)]
struct Seen {
    idle_closed: Vec<Duration>,
    slow_closed: Vec<Duration>,
    /// The status line of each garbage request's answer.
    garbage_answers: Vec<String>,
    control_errors: usize,
    control_served: usize,
}

fn hold_idle(ns: &str, stop: &AtomicBool, seen: &Mutex<Seen>) {
    netns::move_current_thread(ns);
    let mut held = Held::open(IDLE_CONNECTIONS, b"");
    while !stop.load(Ordering::Relaxed) {
        held.tend(b"", b"");
        std::thread::sleep(Duration::from_millis(100));
    }
    seen.lock().unwrap().idle_closed = held.closed_after;
}

/// Slowloris: a request head that never ends, one more header line a second.
fn slowloris(ns: &str, stop: &AtomicBool, seen: &Mutex<Seen>) {
    netns::move_current_thread(ns);
    let start = b"GET /metrics HTTP/1.1\r\nHost: sw1\r\n";
    let mut held = Held::open(SLOWLORIS_CONNECTIONS, start);
    let mut last_drip = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let drip = last_drip.elapsed() >= Duration::from_secs(1);
        held.tend(start, if drip { b"X-Slow: y\r\n" } else { b"" });
        if drip {
            last_drip = Instant::now();
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    seen.lock().unwrap().slow_closed = held.closed_after;
}

/// Garbage HTTP, binary junk, an oversized head and a POST, each on a new connection.
fn garbage(ns: &str, stop: &AtomicBool, seen: &Mutex<Seen>) {
    netns::move_current_thread(ns);
    let mut junk = vec![0u8; 4096];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    for byte in &mut junk {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        *byte = state as u8;
    }
    junk[0] = 0x16; // a TLS record's first byte: a client speaking TLS to a plain port
    let oversized = format!("GET /metrics HTTP/1.1\r\nHost: sw1\r\nX-Big: {}\r\n\r\n", "a".repeat(20_000));
    let requests: [&[u8]; 4] =
        [b"HELLO THERE\r\n\r\n", &junk, oversized.as_bytes(), b"GET /metrics HTTP/1.1\r\nHost: \x01\x02\r\n\r\n"];
    while !stop.load(Ordering::Relaxed) {
        for request in requests {
            let answer = connect().and_then(|stream| exchange(stream, request));
            let answer = answer.unwrap_or_else(|e| format!("no answer: {e}"));
            let status = answer.lines().next().unwrap_or("closed without an answer").to_string();
            seen.lock().unwrap().garbage_answers.push(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Garbage, binary and 1 MiB lines on one control connection, each followed by a real
/// request on the same connection; beside it, a few clients that connect and say nothing.
fn control_abuse(topology: &Topology, stop: &AtomicBool, seen: &Mutex<Seen>) {
    let _quiet: Vec<UnixStream> = (0..8).map(|_| UnixStream::connect(topology.socket("sw1")).unwrap()).collect();
    let stream = UnixStream::connect(topology.socket("sw1")).expect("control socket");
    stream.set_read_timeout(Some(PROMPT)).unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let mut huge = vec![b'x'; 1 << 20];
    huge.push(b'\n');
    let lines: [&[u8]; 4] = [b"hello\n", b"\x00\xff\xfe\x16\x03\n", &huge, b"{\"command\": \"nonsense\"}\n"];
    while !stop.load(Ordering::Relaxed) {
        for (line, expected) in
            lines.iter().map(|l| (*l, "error")).chain([(&b"{\"command\":\"queues\"}\n"[..], "queues")])
        {
            writer.write_all(line).expect("the control socket reads on");
            let mut answer = String::new();
            reader.read_line(&mut answer).expect("the control socket answers within 2 s");
            let answer: serde_json::Value = serde_json::from_str(&answer).expect("a JSON answer");
            assert_eq!(answer["result"], expected, "control socket answered {answer}");
            let mut seen = seen.lock().unwrap();
            if expected == "error" { seen.control_errors += 1 } else { seen.control_served += 1 }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// UDP at a fixed rate h1 → h2 through the switch, for `seconds`.
fn udp_flow(topology: &Topology, seconds: u64) -> (Child, Child) {
    let server = topology.command("h2", "iperf3").args(["-s", "-1"]).stdout(Stdio::null()).spawn().expect("iperf3 -s");
    std::thread::sleep(Duration::from_millis(500));
    let client = topology
        .command("h1", "iperf3")
        .args(["-c", "10.0.0.2", "-u", "-b", OFFERED, "-l", "1400", "-t", &seconds.to_string()])
        .stdout(Stdio::null())
        .spawn()
        .expect("iperf3 -c");
    (server, client)
}

#[test]
fn abuse_of_the_metrics_endpoint_and_control_socket_does_not_hurt_forwarding_or_scrapes() {
    let _serial = serial();
    let topology = Topology::up("star3", None);
    let ns = topology.ns("sw1");
    let (mut server, mut client) = udp_flow(&topology, 2 * WINDOW.as_secs() + 8);
    std::thread::sleep(Duration::from_secs(2));
    let quiet = delivered_rate(&topology, "h2");
    assert!(quiet > 40e6, "the {OFFERED} flow crosses the switch without abuse: {:.1} Mbit/s", quiet / 1e6);

    let stop = AtomicBool::new(false);
    let seen = Mutex::new(Seen::default());
    let (abused, scrapes, statuses) = std::thread::scope(|scope| {
        let abusers = [
            scope.spawn(|| hold_idle(&ns, &stop, &seen)),
            scope.spawn(|| slowloris(&ns, &stop, &seen)),
            scope.spawn(|| garbage(&ns, &stop, &seen)),
            scope.spawn(|| control_abuse(&topology, &stop, &seen)),
        ];
        std::thread::sleep(Duration::from_secs(1));
        let measured = scope.spawn(|| delivered_rate(&topology, "h2"));
        let (mut scrapes, mut statuses) = (Vec::new(), Vec::new());
        let started = Instant::now();
        while started.elapsed() < WINDOW {
            scrapes.push(scrape(&ns));
            if scrapes.len() % 4 == 0 {
                statuses.push(status(&topology));
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        let abused = measured.join().unwrap();
        stop.store(true, Ordering::Relaxed);
        for abuser in abusers {
            abuser.join().expect("an abuser's expectation failed");
        }
        (abused, scrapes, statuses)
    });
    assert!(client.wait().unwrap().success(), "iperf3 client");
    let _ = server.kill();
    let _ = server.wait();

    let seen = seen.into_inner().unwrap();
    let slowest = |results: &[Result<Duration, String>]| -> Duration {
        results.iter().map(|r| *r.as_ref().unwrap_or_else(|e| panic!("{e}"))).max().unwrap_or_default()
    };
    let (scrape_max, status_max) = (slowest(&scrapes), slowest(&statuses));
    println!(
        "forwarding h1 → h2 ({OFFERED} UDP offered): {:.2} Mbit/s without abuse, {:.2} Mbit/s during abuse ({:.1} %)",
        quiet / 1e6,
        abused / 1e6,
        100.0 * abused / quiet
    );
    println!(
        "during abuse: {} scrapes (slowest {scrape_max:?}), {} `pfcswitch status` (slowest {status_max:?}); \
         {IDLE_CONNECTIONS} idle + {SLOWLORIS_CONNECTIONS} slowloris connections held, dropped by the endpoint \
         {} + {} times (oldest at {:?} / {:?}); {} garbage requests; control: {} bad lines answered with errors, \
         {} requests served after them",
        scrapes.len(),
        statuses.len(),
        seen.idle_closed.len(),
        seen.slow_closed.len(),
        seen.idle_closed.iter().max().copied().unwrap_or_default(),
        seen.slow_closed.iter().max().copied().unwrap_or_default(),
        seen.garbage_answers.len(),
        seen.control_errors,
        seen.control_served,
    );
    assert!(scrape_max < PROMPT && status_max < PROMPT, "scrapes and status answer within {PROMPT:?}");
    assert!(
        scrapes.len() >= 10 && statuses.len() >= 3,
        "scrapes {} and status calls {} ran",
        scrapes.len(),
        statuses.len()
    );
    assert!(
        abused >= 0.9 * quiet,
        "forwarding kept 90 % of its rate: {:.2} of {:.2} Mbit/s",
        abused / 1e6,
        quiet / 1e6
    );
    for (what, closed, held) in
        [("idle", &seen.idle_closed, IDLE_CONNECTIONS), ("slowloris", &seen.slow_closed, SLOWLORIS_CONNECTIONS)]
    {
        assert!(
            closed.len() >= held,
            "the endpoint dropped every {what} connection it had held for 5 s: {}",
            closed.len()
        );
        let oldest = closed.iter().max().unwrap();
        assert!(
            *oldest < DROPPED_WITHIN,
            "{what} connections are dropped within {DROPPED_WITHIN:?}: one lasted {oldest:?}"
        );
    }
    assert!(!seen.garbage_answers.is_empty());
    for answer in &seen.garbage_answers {
        assert!(
            answer.starts_with("HTTP/1.1 400") || answer.starts_with("HTTP/1.1 431"),
            "garbage is answered with 400 (or 431 for an oversized head): {answer}"
        );
    }
    assert!(seen.control_errors >= 4 && seen.control_served >= 1, "{seen:?}");
}
