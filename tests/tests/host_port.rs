//! The endpoints' AF_XDP port (`pfcswitchd::host_port::HostPort`) on a veth pair between two
//! host namespaces: endpoint frames (traffic UDP, 802.1Q PCP 3, PFC, CNM, minimal frames)
//! arrive complete and in order, everything else reaches the kernel stack (ping works while
//! both ports are attached), dropping a port detaches its program, and a new endpoint starts
//! cleanly after the previous one was killed with SIGKILL.
//!
//! Namespaces are the tests' `Netns` guards (deleted when the test ends, panics included);
//! the veth ends are named `hp<pid><n><side>`, unique per run.

use pfcswitch_hosts::MINIMAL_FRAME_ETHERTYPE;
use pfcswitch_tests::netns::{Netns, run_checked};
use pfcswitch_tests::{require_root, wait_until};
use pfcswitch_wire::{
    CnmRepr, DataFrameSpec, EthernetAddress, Ipv4Addr, L2Repr, MacControlRepr, PAUSE_MULTICAST, Pcp, PfcRepr,
    TRAFFIC_UDP_PORT, VlanRepr, build_cnm_frame, build_mac_control_frame,
};
use pfcswitchd::host_port::{HostPort, HostPortDrops};
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

static COUNTER: AtomicUsize = AtomicUsize::new(0);

const MAC: [EthernetAddress; 2] =
    [EthernetAddress([2, 0x48, 0x50, 0, 0, 0xa]), EthernetAddress([2, 0x48, 0x50, 0, 0, 0xb])];
const IP: [Ipv4Addr; 2] = [Ipv4Addr::new(10, 77, 0, 1), Ipv4Addr::new(10, 77, 0, 2)];
const IP_TEXT: [&str; 2] = ["10.77.0.1", "10.77.0.2"];
/// Endpoint frames the sender may have ahead of the receiver: less than a fill ring, so the
/// check is about the port, not about who gets the CPU on a two-core machine.
const WINDOW: usize = 512;
const TIMEOUT: Duration = Duration::from_secs(30);

/// Two host namespaces, each holding one end of a veth pair, with MACs, IPv4 addresses and
/// VLAN/checksum offloads off as on topology hosts. Dropping it deletes both namespaces (and
/// with them the veth pair).
#[derive(Debug)]
struct Hosts {
    namespaces: [Netns; 2],
    ifaces: [String; 2],
}

impl Hosts {
    fn new() -> Hosts {
        require_root();
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let ifaces = ["a", "b"].map(|side| format!("hp{}{n}{side}", std::process::id()));
        let hosts = Hosts { namespaces: [Netns::new("hpa"), Netns::new("hpb")], ifaces };
        let [a, b] = [hosts.ns(0), hosts.ns(1)];
        let [a_if, b_if] = [hosts.iface(0), hosts.iface(1)];
        run_checked(
            Command::new("ip")
                .args(["link", "add", a_if, "netns", a, "type", "veth", "peer", "name", b_if, "netns", b]),
        );
        for side in 0..2 {
            let iface = hosts.iface(side);
            hosts.exec(side, "sysctl", &["-qw", &format!("net.ipv6.conf.{iface}.disable_ipv6=1")]);
            hosts.exec(side, "ip", &["link", "set", "dev", iface, "address", &MAC[side].to_string()]);
            hosts.exec(side, "ethtool", &["-K", iface, "txvlan", "off", "rxvlan", "off", "tx", "off"]);
            hosts.exec(side, "ip", &["addr", "add", &format!("{}/24", IP_TEXT[side]), "dev", iface]);
            hosts.exec(side, "ip", &["link", "set", "dev", iface, "up"]);
        }
        hosts
    }

    fn ns(&self, side: usize) -> &str {
        self.namespaces[side].name()
    }

    fn iface(&self, side: usize) -> &str {
        &self.ifaces[side]
    }

    /// Runs `program args` in the namespace of `side`, failing the test on error.
    fn exec(&self, side: usize, program: &str, args: &[&str]) -> Output {
        self.namespaces[side].run(program, args)
    }

    /// Whether an XDP program is attached to the interface of `side`.
    fn has_xdp(&self, side: usize) -> bool {
        let output = self.exec(side, "ip", &["-d", "link", "show", "dev", self.iface(side)]);
        String::from_utf8_lossy(&output.stdout).contains("prog/xdp")
    }

    /// Counter `name` of protocol `proto` in /proc/net/snmp of the namespace of `side`.
    fn snmp(&self, side: usize, proto: &str, name: &str) -> u64 {
        let output = self.exec(side, "cat", &["/proc/net/snmp"]);
        let text = String::from_utf8_lossy(&output.stdout);
        let prefix = format!("{proto}:");
        let mut lines = text.lines().filter(|line| line.starts_with(&prefix));
        let (names, values) = (lines.next().expect("header line"), lines.next().expect("value line"));
        let index = names.split_whitespace().position(|n| n == name).unwrap_or_else(|| panic!("no {proto} {name}"));
        values.split_whitespace().nth(index).unwrap().parse().unwrap()
    }

    /// Interface counters of both ends, for failure messages.
    fn stats(&self) -> String {
        (0..2)
            .map(|side| {
                let output = self.exec(side, "ip", &["-s", "-s", "link", "show", "dev", self.iface(side)]);
                String::from_utf8_lossy(&output.stdout).into_owned()
            })
            .collect()
    }

    /// Moves the calling thread into the namespace of `side`.
    fn enter(&self, side: usize) {
        self.namespaces[side].move_current_thread();
    }
}

fn traffic_frame(sequence: u32) -> Vec<u8> {
    let tagged = sequence.is_multiple_of(2);
    let vlan = tagged.then(|| VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 10 });
    let (min, max) = if tagged { (64, 1518) } else { (60, 1514) };
    let len = min + (sequence as usize * 7919) % (max - min + 1);
    let mut spec = DataFrameSpec::between(MAC[0], MAC[1], vlan, len);
    spec.src_ip = IP[0];
    spec.dst_ip = IP[1];
    spec.traffic.flow_id = 7;
    spec.traffic.sequence = sequence;
    spec.traffic.timestamp_ns = u64::from(sequence) * 1000;
    let frame = spec.to_bytes();
    assert_eq!(frame.len(), spec.len());
    frame
}

fn pfc_frame(time: u16) -> Vec<u8> {
    let mut frame = vec![0u8; 60];
    let pfc = MacControlRepr::Pfc(PfcRepr::default().with_class(Pcp::new(3).unwrap(), time));
    let len = build_mac_control_frame(&mut frame, MAC[0], PAUSE_MULTICAST, &pfc);
    frame.truncate(len);
    frame
}

fn cnm_frame(cpid: u64) -> Vec<u8> {
    let mut frame = vec![0u8; 128];
    let vlan = Some(VlanRepr { pcp: Pcp::new(6).unwrap(), dei: false, vid: 10 });
    let l2 = L2Repr { dst: MAC[1], src: MAC[0], vlan, cn_tag: None, ethertype: 0 };
    let msdu = [0x45u8; 20];
    let cnm = CnmRepr {
        quantized_feedback: 17,
        cpid,
        q_offset: -5,
        q_delta: 3,
        encapsulated_priority: Pcp::new(3).unwrap(),
        encapsulated_dst: MAC[1],
        msdu_len: 20,
        msdu: &msdu,
    };
    let len = build_cnm_frame(&mut frame, &l2, &cnm);
    frame.truncate(len);
    frame
}

/// A minimal test frame (EtherType 0x88B6, flow id and sequence after the tag), untagged on odd
/// sequences.
fn minimal_frame(sequence: u32) -> Vec<u8> {
    let vlan = sequence.is_multiple_of(2).then(|| VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 10 });
    let mut frame = vec![0u8; 60];
    let l2 = L2Repr { dst: MAC[1], src: MAC[0], vlan, cn_tag: None, ethertype: MINIMAL_FRAME_ETHERTYPE };
    let offset = l2.emit(&mut frame);
    frame[offset..offset + 4].copy_from_slice(&7u32.to_be_bytes());
    frame[offset + 4..offset + 8].copy_from_slice(&sequence.to_be_bytes());
    frame
}

/// Frames the endpoint program must leave to the kernel: UDP to another port (tagged and
/// not), and a fragment of a datagram to the traffic port.
fn kernel_frame(n: u32) -> Vec<u8> {
    let vlan = n.is_multiple_of(2).then(|| VlanRepr { pcp: Pcp::new(3).unwrap(), dei: false, vid: 10 });
    let mut spec = DataFrameSpec::between(MAC[0], MAC[1], vlan, 200);
    spec.src_ip = IP[0];
    spec.dst_ip = IP[1];
    if is_fragment(n) {
        // The first fragment of a datagram (more fragments, offset 0): the kernel reassembles.
        let mut frame = spec.to_bytes();
        let ip = &mut frame[if vlan.is_some() { 18 } else { 14 }..][..20];
        ip[6] = 0x20;
        ip[10..12].fill(0);
        let sum = ip.chunks(2).map(|word| u32::from(u16::from_be_bytes([word[0], word[1]]))).sum::<u32>();
        let folded = (sum & 0xFFFF) + (sum >> 16);
        ip[10..12].copy_from_slice(&(!(((folded & 0xFFFF) + (folded >> 16)) as u16)).to_be_bytes());
        frame
    } else {
        spec.dst_port = TRAFFIC_UDP_PORT + 1;
        spec.to_bytes()
    }
}

fn is_fragment(n: u32) -> bool {
    n.is_multiple_of(3)
}

/// Whether A's stream holds a kernel frame after traffic frame `sequence`.
fn has_kernel_frame(sequence: u32) -> bool {
    sequence % 997 == 11
}

/// What A sends, each frame with whether B's port must receive it.
fn stream(traffic: u32) -> Vec<(Vec<u8>, bool)> {
    let mut frames = Vec::new();
    for sequence in 0..traffic {
        frames.push((traffic_frame(sequence), true));
        if sequence % 1000 == 500 {
            frames.push((pfc_frame(sequence as u16), true));
        }
        if sequence % 2000 == 999 {
            frames.push((cnm_frame(u64::from(sequence)), true));
        }
        if sequence % 700 == 3 {
            frames.push((minimal_frame(sequence), true));
        }
        if has_kernel_frame(sequence) {
            frames.push((kernel_frame(sequence), false));
        }
    }
    frames
}

/// What B's port saw.
#[derive(Debug)]
struct Received {
    /// Endpoint frames received (in order and exact, unless `mismatch`).
    frames: usize,
    /// The first frame that differs from the expected one, described.
    mismatch: Option<String>,
    drops: HostPortDrops,
}

fn wait_readable(port: &HostPort, timeout_ms: i32) {
    let mut poll = libc::pollfd { fd: port.fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut poll, 1, timeout_ms) };
}

/// Sets a flag when dropped, panics included.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Compares what B's port hands over with what it should get, in order.
struct Checker<'a> {
    expected: &'a [&'a [u8]],
    count: usize,
    mismatch: Option<String>,
}

impl Checker<'_> {
    fn check(&mut self, frame: &[u8]) {
        let head = |bytes: &[u8]| format!("{} bytes {:02x?}…", bytes.len(), &bytes[..bytes.len().min(48)]);
        if self.mismatch.is_none() {
            self.mismatch = match self.expected.get(self.count) {
                Some(want) if *want == frame => None,
                Some(want) => Some(format!("frame {}: got {}, expected {}", self.count, head(frame), head(want))),
                None => Some(format!("an extra frame after the last: {}", head(frame))),
            };
        }
        self.count += 1;
    }

    fn settled(&self) -> bool {
        self.count >= self.expected.len() || self.mismatch.is_some()
    }
}

/// Opens a HostPort on each end, runs `while_attached` once both are up, then sends `frames`
/// from A to B (at most [`WINDOW`] endpoint frames ahead of B) and returns what B received
/// and A's drop counters. Both ports are dropped before it returns.
fn transfer(hosts: &Hosts, frames: &[(Vec<u8>, bool)], while_attached: impl FnOnce()) -> (Received, HostPortDrops) {
    let expected: Vec<&[u8]> = frames.iter().filter(|(_, wanted)| *wanted).map(|(f, _)| f.as_slice()).collect();
    let received = AtomicUsize::new(0);
    let (receiver_done, sender_gone) = (AtomicBool::new(false), AtomicBool::new(false));
    std::thread::scope(|scope| {
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let (go_b_tx, go_b) = mpsc::channel::<()>();
        let (go_a_tx, go_a) = mpsc::channel::<()>();
        let ready_b = ready_tx.clone();
        let (expected, received) = (&expected, &received);
        let (receiver_done, sender_gone) = (&receiver_done, &sender_gone);
        let b = scope.spawn(move || {
            let _done = SetOnDrop(receiver_done);
            hosts.enter(1);
            let mut port = HostPort::open(hosts.iface(1)).expect("open the HostPort on B");
            ready_b.send(()).unwrap();
            go_b.recv().ok()?;
            let started = Instant::now();
            let deadline = started + TIMEOUT;
            let mut checker = Checker { expected, count: 0, mismatch: None };
            // Until everything arrived (or the sender stopped), then a little longer to catch
            // frames that should not come.
            let mut linger = None;
            while linger.is_none_or(|until| Instant::now() < until) && Instant::now() < deadline {
                wait_readable(&port, 20);
                port.recv(|frame, _| checker.check(frame));
                received.store(checker.count, Ordering::Release);
                if linger.is_none() && (checker.settled() || sender_gone.load(Ordering::Acquire)) {
                    eprintln!("B: {} frames in {:?}", checker.count, started.elapsed());
                    receiver_done.store(true, Ordering::Release);
                    linger = Some(Instant::now() + Duration::from_millis(300));
                }
            }
            Some(Received { frames: checker.count, mismatch: checker.mismatch, drops: port.drops() })
        });
        let a = scope.spawn(move || {
            let _gone = SetOnDrop(sender_gone);
            hosts.enter(0);
            let mut port = HostPort::open(hosts.iface(0)).expect("open the HostPort on A");
            ready_tx.send(()).unwrap();
            go_a.recv().ok()?;
            let deadline = Instant::now() + TIMEOUT;
            let mut sent_expected = 0usize;
            for (index, (frame, wanted)) in frames.iter().enumerate() {
                loop {
                    if receiver_done.load(Ordering::Acquire) {
                        return Some(port.drops()); // B stopped early: its report tells why
                    }
                    assert!(Instant::now() < deadline, "A: timed out at frame {index}");
                    if *wanted && sent_expected.saturating_sub(received.load(Ordering::Acquire)) >= WINDOW {
                        port.flush();
                        std::thread::yield_now();
                        continue;
                    }
                    if port.send(frame).expect("a valid frame") {
                        break;
                    }
                    port.flush();
                }
                sent_expected += usize::from(*wanted);
                if index % 64 == 63 {
                    port.flush();
                }
            }
            // Keep kicking until B has everything (copy mode sends a batch per kick).
            while !receiver_done.load(Ordering::Acquire) && Instant::now() < deadline {
                port.flush();
                std::thread::sleep(Duration::from_millis(1));
            }
            Some(port.drops())
        });
        // A thread that failed to open its port has finished: the joins below report its panic.
        let (mut ready, deadline) = (0, Instant::now() + TIMEOUT);
        while ready < 2 && !a.is_finished() && !b.is_finished() && Instant::now() < deadline {
            ready += usize::from(ready_rx.recv_timeout(Duration::from_millis(50)).is_ok());
        }
        if ready == 2 && !a.is_finished() && !b.is_finished() {
            while_attached();
            go_b_tx.send(()).unwrap();
            go_a_tx.send(()).unwrap();
        }
        drop((go_a_tx, go_b_tx));
        let b = b.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        let a = a.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (b.expect("B ran"), a.expect("A ran"))
    })
}

fn assert_no_drops(who: &str, drops: HostPortDrops, hosts: &Hosts) {
    assert_eq!(drops, HostPortDrops::default(), "{who}'s AF_XDP socket dropped frames\n{}", hosts.stats());
}

#[test]
fn endpoint_frames_arrive_in_order_kernel_traffic_passes_and_drop_detaches() {
    let hosts = Hosts::new();
    let frames = stream(20_000);
    let wanted = frames.iter().filter(|(_, wanted)| *wanted).count();
    assert!(frames.iter().any(|(frame, _)| frame[12..14] == [0x88, 0x08]), "the stream carries PFC frames");
    let mut pinged = false;
    let (received, sender_drops) = transfer(&hosts, &frames, || {
        assert!(hosts.has_xdp(0) && hosts.has_xdp(1), "both ports attach the endpoint program");
        // ARP and ICMP go through the program to the kernel stack, both ways.
        hosts.exec(0, "ping", &["-c", "3", "-i", "0.2", "-W", "2", IP_TEXT[1]]);
        hosts.exec(1, "ping", &["-c", "3", "-i", "0.2", "-W", "2", IP_TEXT[0]]);
        pinged = true;
    });
    assert!(pinged, "ping ran while both ports were attached");
    assert_eq!(received.mismatch, None, "B received a wrong frame\n{}", hosts.stats());
    assert_eq!(received.frames, wanted, "B received every endpoint frame, and nothing else\n{}", hosts.stats());
    assert_no_drops("B", received.drops, &hosts);
    assert_no_drops("A", sender_drops, &hosts);
    // The kernel stack got the frames meant for it: untagged UDP to a closed port counts in
    // Udp NoPorts, the untagged first fragments in Ip ReasmReqds (tagged ones are dropped: no
    // 8021q module).
    let untagged: Vec<u32> = (0..20_000).filter(|&n| has_kernel_frame(n) && n % 2 == 1).collect();
    let fragments = untagged.iter().filter(|&&n| is_fragment(n)).count() as u64;
    let closed_port = untagged.len() as u64 - fragments;
    assert!(fragments > 0 && closed_port > 0, "the stream has both kinds of kernel frames");
    assert_eq!(hosts.snmp(1, "Udp", "NoPorts"), closed_port, "UDP to another port went to the kernel");
    assert_eq!(hosts.snmp(1, "Ip", "ReasmReqds"), fragments, "fragments went to the kernel");
    for side in 0..2 {
        assert!(!hosts.has_xdp(side), "dropping the HostPort detaches the program from side {side}");
    }
}

/// A probe process holding a HostPort, with a child of its own that outlives it (as a
/// scenario runner's iperf3 would); both are killed when the guard drops.
#[derive(Debug)]
struct Probe {
    child: Child,
    grandchild: libc::pid_t,
}

impl Probe {
    fn start(hosts: &Hosts, side: usize) -> Probe {
        let mut child = Command::new("ip")
            .args(["netns", "exec", hosts.ns(side), env!("CARGO_BIN_EXE_host_port_probe"), hosts.iface(side)])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn host_port_probe");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).expect("read the probe's stdout");
        let grandchild = line.trim().strip_prefix("ready ").and_then(|pid| pid.parse::<libc::pid_t>().ok());
        let Some(grandchild) = grandchild else {
            let mut stderr = String::new();
            child.stderr.take().unwrap().read_to_string(&mut stderr).ok();
            let _ = child.kill();
            let status = child.wait();
            panic!("host_port_probe did not open its port ({status:?}): {stderr}");
        };
        Probe { child, grandchild }
    }

    /// SIGKILL, then wait for the process to be gone.
    fn kill_9(&mut self) {
        let pid = libc::pid_t::try_from(self.child.id()).unwrap();
        // SAFETY: signalling our own child, which has not been reaped yet.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGKILL) }, 0);
        let status = self.child.wait().expect("wait for the probe");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "the probe died of SIGKILL: {status:?}");
    }
}

impl Drop for Probe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // SAFETY: plain kill(2); the pid was the probe's child, reparented when it died, and
        // `sleep 30` cannot have been reaped and reused in the test's few seconds.
        unsafe { libc::kill(self.grandchild, libc::SIGKILL) };
    }
}

#[test]
fn a_new_endpoint_starts_cleanly_after_the_previous_one_was_killed_with_sigkill() {
    let hosts = Hosts::new();
    let mut probe = Probe::start(&hosts, 1);
    assert!(hosts.has_xdp(1), "the probe attached the endpoint program");
    probe.kill_9();
    // No cleanup ran in the probe; the kernel released its BPF link (and AF_XDP socket) when
    // the process died, so its program leaves the interface by itself.
    eprintln!("endpoint program attached right after SIGKILL: {}", hosts.has_xdp(1));
    wait_until("the kernel detached the killed endpoint's program", Duration::from_secs(10), || !hosts.has_xdp(1));
    let frames = stream(2_000);
    let wanted = frames.iter().filter(|(_, wanted)| *wanted).count();
    let started = Instant::now();
    let (received, sender_drops) = transfer(&hosts, &frames, || {
        assert!(hosts.has_xdp(1), "the new port attached its program");
    });
    eprintln!("opened, transferred {wanted} frames and closed in {:?}", started.elapsed());
    assert_eq!(received.mismatch, None, "B received a wrong frame\n{}", hosts.stats());
    assert_eq!(received.frames, wanted, "the new port receives everything\n{}", hosts.stats());
    assert_no_drops("B", received.drops, &hosts);
    assert_no_drops("A", sender_drops, &hosts);
    assert!(!hosts.has_xdp(1), "and detaches on drop");
}

#[test]
fn errors_name_the_interface_and_a_busy_interface_keeps_its_endpoint() {
    let hosts = Hosts::new();
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                hosts.enter(1);
                let iface = hosts.iface(1);
                let mut first = HostPort::open(iface).expect("open the first port");
                let second = HostPort::open(iface).expect_err("a second port on the same queue");
                let message = second.to_string();
                assert!(message.contains(iface) && message.contains("busy"), "{message}");
                assert!(hosts.has_xdp(1), "the failed open left the first port's program attached");
                let missing = HostPort::open("hp-nosuch0").unwrap_err().to_string();
                assert_eq!(missing, "interface `hp-nosuch0` does not exist in this network namespace");
                for len in [0, 4097] {
                    let error = first.send(&vec![0; len]).unwrap_err().to_string();
                    assert!(error.contains(iface) && error.contains(&format!("{len}-byte")), "{error}");
                }
                assert!(first.send(&traffic_frame(1)).unwrap(), "the first port still sends");
                first.flush();
            })
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    });
    assert!(!hosts.has_xdp(1));
}

#[test]
fn a_frame_that_waited_in_the_ring_keeps_the_instant_it_arrived() {
    // B is slow to read: A's frames wait in B's RX ring for WAIT. Each still carries the
    // instant the interface received it, on the endpoints' clock (CLOCK_MONOTONIC): after A
    // began sending and well before B read it. That instant is where an endpoint's RTT
    // samples end (docs/congestion-control.md).
    const WAIT: Duration = Duration::from_millis(200);
    let hosts = Hosts::new();
    let clock = pfcswitchd::timer::Clock::system();
    let frames: Vec<Vec<u8>> = (0..8).map(traffic_frame).chain([pfc_frame(7), minimal_frame(1)]).collect();
    let (stamps, began, read) = std::thread::scope(|scope| {
        let (ready_tx, ready_rx) = mpsc::channel::<()>();
        let (sent_tx, sent_rx) = mpsc::channel();
        let (hosts, frames, clock) = (&hosts, &frames, &clock);
        let b = scope.spawn(move || {
            hosts.enter(1);
            let mut port = HostPort::open(hosts.iface(1)).expect("open the HostPort on B");
            ready_tx.send(()).unwrap();
            let began = sent_rx.recv().expect("A sent");
            std::thread::sleep(WAIT);
            let (mut stamps, deadline) = (Vec::new(), Instant::now() + TIMEOUT);
            let mut read = clock.now();
            while stamps.len() < frames.len() && Instant::now() < deadline {
                read = clock.now();
                port.recv(|_, arrived| stamps.push(arrived));
                wait_readable(&port, 20);
            }
            (stamps, began, read)
        });
        let a = scope.spawn(move || {
            hosts.enter(0);
            let mut port = HostPort::open(hosts.iface(0)).expect("open the HostPort on A");
            ready_rx.recv().expect("B is up");
            let began = clock.now();
            for frame in frames {
                assert!(port.send(frame).expect("a valid frame"), "room for ten frames");
            }
            port.flush();
            sent_tx.send(began).unwrap();
        });
        a.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        b.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    });
    assert_eq!(stamps.len(), frames.len(), "B received every frame\n{}", hosts.stats());
    for (index, stamp) in stamps.iter().enumerate() {
        let stamp = stamp.unwrap_or_else(|| panic!("frame {index} came without its arrival instant"));
        assert!(stamp >= began, "frame {index} arrived at {stamp}, before A began sending at {began}");
        let waited = read.saturating_duration_since(stamp);
        assert!(waited >= WAIT / 2, "frame {index} arrived at {stamp}, {waited:?} before B read it at {read}");
    }
}
