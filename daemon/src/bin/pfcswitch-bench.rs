//! pfcswitch-bench: the moving parts of `scripts/bench-datapath.sh`, which measures how many
//! frames per second pfcswitchd forwards next to the forwarders it is compared with.
//!
//! - `flood`: the generator, an AF_XDP TX flood of one prebuilt frame (copy mode on veth).
//! - `overload`: a generator inside the kernel (ebpf/bench_generator.c run with
//!   BPF_PROG_RUN on live frames), many times faster than `flood`, which obeys PFC.
//! - `xsk-forward`: the bare AF_XDP forwarder: pfcswitchd's UMEM, sockets and classifier,
//!   no switch core; every frame received on one port leaves on the other by its address.
//! - `xdp-redirect`: the kernel forwarder, XDP_REDIRECT through a DEVMAP (ebpf/bench_redirect.c).
//! - `probe`: a latency probe, frames stamped as they leave by an XDP program run from
//!   userspace at a steady rate; the sink measures their one-way latency.
//! - `sink`: counts delivered frames with an XDP program that drops them (ebpf/bench_sink.c),
//!   and gives the probe's latency percentiles over its window.
//!
//! `flood`, `overload`, `probe` and `sink` print one JSON object on stdout. The forwarders print `ready` on stderr
//! once attached and run until SIGTERM or SIGINT; their XDP programs leave with them.

use aya::maps::{Array, DevMap, MapData, PerCpuArray};
use aya::programs::{Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader, Pod};
use clap::{Parser, Subcommand};
use pfcswitch_hosts::{FlowSender, FlowSpec};
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};
use pfcswitchd::classifier::{Classifier, PortClassification, if_index};
use pfcswitchd::signals::{self, SignalFd};
use pfcswitchd::umem::{FramePool, UmemArea};
use pfcswitchd::xsk::{Owner, QueueSocket, RING_SIZE, Sockets, rx_queue_count, tx_desc};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Descriptors moved per ring per loop iteration, as in pfcswitchd.
const BATCH: u32 = 64;
/// Fill-ring depth per socket, as in pfcswitchd.
const FILL_TARGET: u32 = RING_SIZE / 2;

#[derive(Debug, Parser)]
#[command(name = "pfcswitch-bench", version, about = "Datapath benchmark helpers (see scripts/bench-datapath.sh)")]
struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Send one prebuilt 802.1Q-tagged frame as fast as AF_XDP allows; print the rate as JSON.
    Flood(FloodArgs),
    /// Send one prebuilt frame from inside the kernel (XDP_TX of live frames), far faster than
    /// any AF_XDP forwarder takes, obeying PFC; print the rates and totals as JSON.
    Overload(OverloadArgs),
    /// Send stamped frames of the latency probe's flow at a steady rate from inside the kernel
    /// (XDP_TX of live frames, one per call); print how many as JSON.
    Probe(ProbeArgs),
    /// Bare AF_XDP forwarder (pfcswitchd's sockets and classifier, no switch core).
    XskForward(Ports),
    /// Kernel forwarder: XDP_REDIRECT from each port to the other through a DEVMAP.
    XdpRedirect(Ports),
    /// Count frames arriving on an interface (and drop them); print the rate as JSON.
    Sink(SinkArgs),
}

#[derive(Debug, clap::Args)]
struct Window {
    /// Seconds before the measured window (for `sink`: after the first frame arrives).
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Length of the measured window in seconds.
    #[arg(long, default_value_t = 5.0)]
    window: f64,
}

/// The one frame a generator sends.
#[derive(Debug, clap::Args)]
struct FrameArgs {
    /// Interface to send on.
    #[arg(long)]
    iface: String,
    /// Frame length without FCS (60 for a 64 B frame on the wire).
    #[arg(long, default_value_t = 60)]
    size: usize,
    #[arg(long)]
    src: EthernetAddress,
    #[arg(long)]
    dst: EthernetAddress,
    /// 802.1Q priority code point of the frames.
    #[arg(long, default_value_t = 3)]
    pcp: u8,
    /// Frames without an 802.1Q tag (priority 0 at a switch port that trusts PCP: the lossy
    /// path most traffic takes), of the same length on the wire.
    #[arg(long, conflicts_with = "pcp")]
    untagged: bool,
}

/// A generator's frame and how long it sends.
#[derive(Debug, clap::Args)]
struct FloodArgs {
    #[command(flatten)]
    frame: FrameArgs,
    #[command(flatten)]
    window: Window,
    /// Seconds the generator goes on after the window, so the sink's window is covered too.
    #[arg(long, default_value_t = 1.0)]
    tail: f64,
}

#[derive(Debug, clap::Args)]
struct OverloadArgs {
    #[command(flatten)]
    generator: FloodArgs,
    /// Obey PFC for the frames' priority as a NIC on a link of this speed would (the pause
    /// time of a quantum is 512 bit times); without it, PFC frames are counted and ignored.
    #[arg(long)]
    pfc_speed: Option<BitRate>,
}

#[derive(Debug, clap::Args)]
struct ProbeArgs {
    #[command(flatten)]
    sender: FloodArgs,
    /// Probe frames per second.
    #[arg(long, default_value_t = 2000.0)]
    rate: f64,
}

#[derive(Debug, clap::Args)]
struct Ports {
    #[arg(long)]
    port_a: String,
    #[arg(long)]
    port_b: String,
}

#[derive(Debug, clap::Args)]
struct SinkArgs {
    /// Interface whose received frames are counted.
    #[arg(long)]
    iface: String,
    #[command(flatten)]
    window: Window,
    /// Give up when no frame arrives within this many seconds.
    #[arg(long, default_value_t = 10.0)]
    first_frame_timeout: f64,
    /// After the window, go on counting until no frame has arrived for this many seconds,
    /// and print every frame counted since the start as `total_frames` (0: stop at the
    /// window's end).
    #[arg(long, default_value_t = 0.0)]
    drain: f64,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let result = match &args.command {
        Command::Flood(flood_args) => flood(flood_args),
        Command::Overload(overload_args) => overload(overload_args),
        Command::Probe(probe_args) => probe(probe_args),
        Command::XskForward(ports) => xsk_forward(ports),
        Command::XdpRedirect(ports) => xdp_redirect(ports),
        Command::Sink(sink_args) => sink(sink_args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("pfcswitch-bench: {message}");
            ExitCode::FAILURE
        }
    }
}

fn text(error: impl std::fmt::Display) -> String {
    error.to_string()
}

fn seconds(value: f64) -> Duration {
    Duration::from_secs_f64(value.max(0.0))
}

// ---- flood ----

/// Frames the kernel took from the TX ring, and frames the veth peer refused, at an instant.
#[derive(Clone, Copy, Debug)]
struct FloodSample {
    at: Instant,
    completed: u64,
    peer_dropped: u64,
}

fn tx_dropped(iface: &str) -> u64 {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/statistics/tx_dropped"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Lets one sendto transmit the whole TX ring (XDP_MAX_TX_SKB_BUDGET, Linux 6.17+) instead of
/// 32 descriptors, and lets the whole ring be in flight as skbs (SO_SNDBUFFORCE: copy mode
/// charges every skb to the socket's send buffer). Returns the per-call budget in force.
fn tune_generator_socket(fd: RawFd) -> u32 {
    const XDP_MAX_TX_SKB_BUDGET: libc::c_int = 9;
    let set = |level, name, value: libc::c_int| {
        let size = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: passes a pointer to a local of the size given.
        unsafe { libc::setsockopt(fd, level, name, (&raw const value).cast(), size) == 0 }
    };
    set(libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 64 << 20);
    if set(libc::SOL_XDP, XDP_MAX_TX_SKB_BUDGET, RING_SIZE as libc::c_int) { RING_SIZE } else { 32 }
}

/// The generators' flow; the sink counts every frame but the probe's.
const GENERATOR_FLOW_ID: u32 = 1;
/// `PROBE_FLOW_ID` of ebpf/bench_sink.c.
const PROBE_FLOW_ID: u32 = 2;

/// Writes the generators' frame (a traffic-header frame of `flow`) into `frame`; returns its
/// length.
fn build_frame(args: &FrameArgs, flow: u32, frame: &mut [u8]) -> Result<usize, String> {
    let priority = Pcp::new(args.pcp).ok_or("--pcp must be 0-7")?;
    let spec = FlowSpec {
        id: flow,
        dst: args.dst,
        dst_ip: Ipv4Addr::new(10, 0, 0, 2),
        priority,
        vid: 0,
        // An untagged frame is built tagged, 4 bytes longer, and loses its tag below.
        frame_len: args.size + if args.untagged { 4 } else { 0 },
        frames: u64::MAX,
        start: pfcswitch_link::time::Instant::ZERO,
        rate: None,
    };
    let mut len = FlowSender::new(spec).next_frame(spec.start, args.src, Ipv4Addr::new(10, 0, 0, 1), frame);
    if args.untagged {
        // The 802.1Q tag sits after the two addresses (bytes 12..16).
        frame.copy_within(16..len, 12);
        len -= 4;
    }
    Ok(len)
}

/// The generator. In copy mode every `sendto` turns a budget of TX descriptors into skbs and
/// hands them to the veth; a completion means the frame left (or the peer dropped it, which
/// the veth counts as tx_dropped). Every descriptor points at the same prebuilt frame.
fn flood(args: &FloodArgs) -> Result<(), String> {
    let mut area = UmemArea::new(1).map_err(text)?;
    let len = build_frame(&args.frame, GENERATOR_FLOW_ID, area.chunk_mut(0))?;
    let desc = tx_desc(0, len as u32);
    let mut sockets = Sockets::open(&area, std::slice::from_ref(&args.frame.iface), Owner::FirstPort).map_err(text)?;
    let queue = &mut sockets.queues[0];
    let budget = tune_generator_socket(queue.fd());

    let (mut completed, mut in_flight) = (0u64, 0u32);
    let sample = |completed| FloodSample { at: Instant::now(), completed, peer_dropped: tx_dropped(&args.frame.iface) };
    let start = Instant::now();
    let window_start = start + seconds(args.window.warmup);
    let window_end = window_start + seconds(args.window.window);
    let stop = window_end + seconds(args.tail);
    let (mut first, mut last) = (None, None);
    loop {
        let mut done = 0;
        queue.reap_completions(|_| done += 1);
        in_flight -= done;
        completed += u64::from(done);
        let mut writer = queue.tx.transmit(RING_SIZE - in_flight);
        in_flight += writer.insert(std::iter::repeat(desc));
        writer.commit();
        drop(writer);
        queue.flush_tx();

        let now = Instant::now();
        if first.is_none() && now >= window_start {
            first = Some(sample(completed));
        } else if last.is_none() && now >= window_end {
            last = Some(sample(completed));
        } else if now >= stop {
            break;
        }
    }
    let (first, last) = (first.expect("window started"), last.expect("window ended"));
    let secs = (last.at - first.at).as_secs_f64();
    let frames = last.completed - first.completed;
    let json = serde_json::json!({
        "iface": args.frame.iface,
        "frame_len": len,
        "frames": frames,
        "seconds": secs,
        "fps": frames as f64 / secs,
        "peer_dropped": last.peer_dropped - first.peer_dropped,
        "peer_dropped_fps": (last.peer_dropped - first.peer_dropped) as f64 / secs,
        "frames_per_sendto": budget,
    });
    println!("{json}");
    Ok(())
}

// ---- overload ----

/// `struct generator_config` of ebpf/bench_generator.c.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct GeneratorConfig {
    priority: u32,
    obey_pfc: u32,
    picos_per_quantum: u64,
}

// SAFETY: two u32 and a u64, no padding.
unsafe impl Pod for GeneratorConfig {}

/// `enum generator_count` of ebpf/bench_generator.c, in its order.
const GENERATOR_COUNTS: [&str; 4] = ["sent", "held", "pfc_rx", "other_rx"];

/// `struct xdp_md` as BPF_PROG_RUN takes it: the frame's bounds and where it "arrived".
#[repr(C)]
#[derive(Debug, Default)]
struct XdpMd {
    data: u32,
    data_end: u32,
    data_meta: u32,
    ingress_ifindex: u32,
    rx_queue_index: u32,
    egress_ifindex: u32,
}

/// The `test` member of `union bpf_attr` (BPF_PROG_TEST_RUN), padded to 8 bytes.
#[repr(C)]
#[derive(Debug, Default)]
struct TestRunAttr {
    prog_fd: u32,
    retval: u32,
    data_size_in: u32,
    data_size_out: u32,
    data_in: u64,
    data_out: u64,
    repeat: u32,
    duration: u32,
    ctx_size_in: u32,
    ctx_size_out: u32,
    ctx_in: u64,
    ctx_out: u64,
    flags: u32,
    cpu: u32,
    batch_size: u32,
    pad: u32,
}

const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;
/// How long one BPF_PROG_RUN call of the generator lasts. Each call with `repeat > 1`
/// registers the program with the kernel's XDP dispatcher and unregisters it after
/// (`bpf_prog_change_xdp`), each an RCU grace period in which nothing is sent: about 10 ms
/// each on the test VMs. Calls of 65,536 frames (20 ms) left the generator silent half of
/// the time, so it offered its load in bursts and the forwarders idled between them. Calls
/// of a second lost 2 %, and more where a call's rate rose and it ended early: a second
/// caller now keeps the program registered (`overload`).
const CALL_TIME: Duration = Duration::from_secs(1);
/// The first call's frames, before the rate is known; and the least a call sends.
const FIRST_CALL_FRAMES: u32 = 1 << 16;
/// The most a call sends: about 20 s at the 3.5 Mpps the generator reaches on the test VMs.
const MAX_CALL_FRAMES: u32 = 1 << 26;

/// Frames for the next call: `CALL_TIME` at the rate the last call ran (`frames` in
/// `elapsed`), shortened to end at `next_edge` (the window's start or end, or the stop) when
/// that is sooner, so that the window's edges stay within a short call.
fn call_frames(frames: u32, elapsed: Duration, next_edge: Duration) -> u32 {
    let per_second = f64::from(frames) / elapsed.as_secs_f64().max(1e-6);
    let span = CALL_TIME.min(next_edge).as_secs_f64();
    ((per_second * span) as u32).clamp(FIRST_CALL_FRAMES, MAX_CALL_FRAMES)
}

/// Calls `program` on live copies of `frame` until `stop`, each call `CALL_TIME` long at
/// the rate of the last, shortened to end at the next of `edges` or at `stop`. `at_end` runs
/// after each call, with the instant it ended.
fn call_until(
    program: RawFd,
    frame: &[u8],
    ifindex: u32,
    edges: &[Instant],
    stop: Instant,
    mut at_end: impl FnMut(Instant) -> Result<(), String>,
) -> Result<(), String> {
    let mut frames = FIRST_CALL_FRAMES;
    loop {
        let call = Instant::now();
        run_live(program, frame, ifindex, frames)?;
        let now = Instant::now();
        at_end(now)?;
        if now >= stop {
            return Ok(());
        }
        let next_edge = edges.iter().copied().find(|&edge| edge > now).unwrap_or(stop);
        frames = call_frames(frames, now - call, next_edge - now);
    }
}

/// Runs `program` over `repeat` live copies of `frame`, as if each had arrived on `ifindex`:
/// XDP_TX sends them out of it.
fn run_live(program: RawFd, frame: &[u8], ifindex: u32, repeat: u32) -> Result<(), String> {
    let ctx = XdpMd { data_end: frame.len() as u32, ingress_ifindex: ifindex, ..XdpMd::default() };
    let mut attr = TestRunAttr {
        prog_fd: program as u32,
        data_size_in: frame.len() as u32,
        data_in: frame.as_ptr() as u64,
        repeat,
        ctx_size_in: std::mem::size_of::<XdpMd>() as u32,
        ctx_in: (&raw const ctx) as u64,
        flags: BPF_F_TEST_XDP_LIVE_FRAMES,
        ..TestRunAttr::default()
    };
    // SAFETY: `attr` points at the frame and the context, which outlive the call; the
    // kernel writes only into `attr`, whose size is given.
    let result =
        unsafe { libc::syscall(libc::SYS_bpf, BPF_PROG_TEST_RUN, &raw mut attr, std::mem::size_of::<TestRunAttr>()) };
    match result {
        0 => Ok(()),
        _ => match std::io::Error::last_os_error() {
            error if error.raw_os_error() == Some(libc::EINTR) => Ok(()),
            error => Err(format!("BPF_PROG_RUN on live frames: {error}")),
        },
    }
}

/// The generator's counters (`GENERATOR_COUNTS`), summed over CPUs.
fn generator_counts(map: &PerCpuArray<&MapData, u64>) -> Result<[u64; 4], String> {
    let mut counts = [0; 4];
    for (index, count) in (0u32..).zip(counts.iter_mut()) {
        *count = map.get(&index, 0).map_err(text)?.iter().sum();
    }
    Ok(counts)
}

/// The in-kernel generator: BPF_PROG_RUN on live frames, XDP_TX on the generator's veth,
/// with its PFC listener attached there. Prints the window's rates and the run's totals.
fn overload(args: &OverloadArgs) -> Result<(), String> {
    let OverloadArgs { generator: FloodArgs { frame: frame_args, window, tail }, pfc_speed } = args;
    let mut frame = vec![0; pfcswitchd::umem::FRAME_SIZE as usize];
    let len = build_frame(frame_args, GENERATOR_FLOW_ID, &mut frame)?;
    frame.truncate(len);
    let ifindex = if_index(&frame_args.iface).map_err(text)?;
    let mut ebpf = load_generator()?;
    let priority = if frame_args.untagged { 0 } else { u32::from(frame_args.pcp) };
    let config = GeneratorConfig {
        priority,
        obey_pfc: u32::from(pfc_speed.is_some()),
        picos_per_quantum: pfc_speed.map_or(0, |speed| 512 * 1_000_000_000_000 / speed.bps()),
    };
    let mut config_map: Array<&mut MapData, GeneratorConfig> =
        ebpf.map_mut("config").ok_or("no map `config`")?.try_into().map_err(text)?;
    config_map.set(0, config, 0).map_err(text)?;
    attach(xdp_program(&mut ebpf, "bench_pfc_listener")?, &frame_args.iface)?;
    let generator = xdp_program(&mut ebpf, "bench_generate")?;
    let program = generator.fd().map_err(text)?.as_fd().as_raw_fd();
    let counts_map: PerCpuArray<&MapData, u64> =
        ebpf.map("counts").ok_or("no map `counts`")?.try_into().map_err(text)?;

    let start = Instant::now();
    let window_start = start + seconds(window.warmup);
    let window_end = window_start + seconds(window.window);
    let stop = window_end + seconds(*tail);
    let (mut first, mut last) = (None, None);
    // Two callers on this CPU, each in a call of its own most of the time: while one is in
    // a call, the program stays in the kernel's XDP dispatcher, so the other's calls start
    // and end without the grace periods (two a call, 6-16 ms each) that left the wire
    // silent, more often in the rounds of a forwarder whose shedding made calls end early.
    // The counters sum both, and the edges are sampled by this thread alone.
    std::thread::scope(|scope| -> Result<(), String> {
        let second = scope.spawn(|| call_until(program, &frame, ifindex, &[], stop, |_| Ok(())));
        call_until(program, &frame, ifindex, &[window_start, window_end], stop, |now| {
            let sample = || generator_counts(&counts_map).map(|counts| (now, counts, tx_dropped(&frame_args.iface)));
            if first.is_none() && now >= window_start {
                first = Some(sample()?);
            } else if last.is_none() && now >= window_end {
                last = Some(sample()?);
            }
            Ok(())
        })?;
        second.join().map_err(|_| "the second caller panicked".to_string())?
    })?;
    let totals = generator_counts(&counts_map)?;
    let ((t0, first, dropped0), (t1, last, dropped1)) = (first.expect("window started"), last.expect("window ended"));
    let secs = (t1 - t0).as_secs_f64();
    // The veth counts the frames its peer's full ring refused as its own tx_dropped.
    let mut json = serde_json::json!({
        "iface": frame_args.iface,
        "frame_len": len,
        "seconds": secs,
        "fps": (last[0] - first[0]) as f64 / secs,
        "held_fps": (last[1] - first[1]) as f64 / secs,
        "peer_dropped_fps": (dropped1 - dropped0) as f64 / secs,
    });
    for (name, total) in GENERATOR_COUNTS.iter().zip(totals) {
        json[format!("total_{name}")] = total.into();
    }
    println!("{json}");
    Ok(())
}

fn load_generator() -> Result<Ebpf, String> {
    Ebpf::load(aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/bench_generator.o"))).map_err(text)
}

// ---- probe ----

/// Frame length (no FCS) that holds 802.1Q, IPv4, UDP and the traffic header with its stamp.
const PROBE_MIN_LEN: usize = 78;

/// The latency probe: one stamped frame per BPF_PROG_RUN (bench_probe), `rate` times a
/// second from the start to the tail's end. Prints the frames sent.
fn probe(args: &ProbeArgs) -> Result<(), String> {
    let ProbeArgs { sender: FloodArgs { frame: frame_args, window, tail }, rate } = args;
    if frame_args.untagged || frame_args.size < PROBE_MIN_LEN {
        return Err(format!("the probe's frames are tagged and at least {PROBE_MIN_LEN} B long (--size)"));
    }
    if !(*rate > 0.0 && *rate <= 1e6) {
        return Err(format!("--rate {rate}: frames per second above 0 and at most 1000000"));
    }
    let mut frame = vec![0; frame_args.size];
    let len = build_frame(frame_args, PROBE_FLOW_ID, &mut frame)?;
    let ifindex = if_index(&frame_args.iface).map_err(text)?;
    let mut ebpf = load_generator()?;
    let program = xdp_program(&mut ebpf, "bench_probe")?.fd().map_err(text)?.as_fd().as_raw_fd();
    let interval = seconds(1.0 / rate);
    let start = Instant::now();
    let stop = start + seconds(window.warmup + window.window + tail);
    let (mut next, mut sent) = (start, 0u64);
    while next < stop {
        run_live(program, &frame[..len], ifindex, 1)?;
        sent += 1;
        next += interval;
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
    println!("{}", serde_json::json!({ "iface": frame_args.iface, "frame_len": len, "sent": sent, "rate": rate }));
    Ok(())
}

// ---- xsk-forward ----

fn pair_mut<T>(items: &mut [T], a: usize, b: usize) -> (&mut T, &mut T) {
    assert_ne!(a, b, "a frame leaves on another port");
    if a < b {
        let (left, right) = items.split_at_mut(b);
        (&mut left[a], &mut right[0])
    } else {
        let (left, right) = items.split_at_mut(a);
        (&mut right[0], &mut left[b])
    }
}

/// One pass over every RX ring: each frame goes out of the other port's TX ring by its UMEM
/// address. Frames wait in the RX ring while that TX ring is full, so userspace never drops:
/// when overloaded, the kernel does, at the RX ring. Returns whether there is work left.
fn forward(queues: &mut [QueueSocket], tx_queue: [usize; 2]) -> bool {
    let mut any = false;
    for index in 0..queues.len() {
        let out = tx_queue[1 - queues[index].port];
        let (input, output) = pair_mut(queues, index, out);
        let mut writer = output.tx.transmit(BATCH);
        let mut reader = input.rx.receive(writer.capacity());
        let mut sent = 0;
        while let Some(desc) = reader.read() {
            writer.insert_once(tx_desc(desc.addr, desc.len));
            sent += 1;
        }
        reader.release();
        writer.commit();
        drop((reader, writer));
        let pending = output.flush_tx();
        any |= sent > 0 || pending;
    }
    any
}

/// Takes back transmitted frames and tops every fill ring up to [`FILL_TARGET`].
fn recycle(queues: &mut [QueueSocket], pool: &mut FramePool) {
    for queue in queues {
        queue.reap_completions(|addr| pool.release(addr));
        queue.refill(pool, FILL_TARGET, 0);
    }
}

fn xsk_forward(ports: &Ports) -> Result<(), String> {
    signals::block_signals().map_err(text)?;
    let stop = SignalFd::new().map_err(text)?;
    let ifaces = [ports.port_a.clone(), ports.port_b.clone()];
    // Declaration order is drop order reversed: sockets close, then the UMEM goes, then XDP.
    let mut classifier = Classifier::load().map_err(text)?;
    let queues: u32 = ifaces.iter().map(|iface| rx_queue_count(iface)).sum();
    let frames = queues * 2 * RING_SIZE;
    let area = UmemArea::new(frames).map_err(text)?;
    let mut sockets = Sockets::open(&area, &ifaces, Owner::FirstPort).map_err(text)?;
    let mut pool = FramePool::new(frames);
    for socket in &sockets.queues {
        classifier.register_socket(socket.port as u32, socket.queue, socket.fd()).map_err(text)?;
    }
    for (index, iface) in ifaces.iter().enumerate() {
        let port = PortClassification {
            port_index: index as u32,
            default_priority: Pcp::from_low_bits(0),
            dscp_map: None,
            lossless: 0,
        };
        classifier.attach(iface, &port).map_err(text)?;
    }
    let queue_0 = |port| sockets.queues.iter().position(|q| q.port == port && q.queue == 0).expect("queue 0 exists");
    let tx_queue = [queue_0(0), queue_0(1)];
    eprintln!("pfcswitch-bench: xsk-forward ready on {} <-> {}", ifaces[0], ifaces[1]);

    let mut housekeeping = Instant::now();
    loop {
        let busy = forward(&mut sockets.queues, tx_queue);
        recycle(&mut sockets.queues, &mut pool);
        let now = Instant::now();
        if now >= housekeeping {
            housekeeping = now + Duration::from_millis(1);
            if stop.read().is_some() {
                break;
            }
        }
        if !busy {
            // Idle: sleep until a frame or a signal arrives, as pfcswitchd does.
            let mut fds: Vec<libc::pollfd> =
                sockets.queues.iter().map(|q| q.fd()).chain([stop.raw()]).map(pfcswitchd::timer::readable).collect();
            // SAFETY: a valid array of pollfd.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 100) };
            housekeeping = now;
        }
    }
    Ok(())
}

// ---- xdp-redirect ----

/// Blocks until SIGTERM or SIGINT.
fn wait_for_stop() -> Result<(), String> {
    signals::block_signals().map_err(text)?;
    let stop = SignalFd::new().map_err(text)?;
    let mut fds = [pfcswitchd::timer::readable(stop.raw())];
    while stop.read().is_none() {
        // SAFETY: a valid array of one pollfd.
        unsafe { libc::poll(fds.as_mut_ptr(), 1, -1) };
    }
    Ok(())
}

fn xdp_program<'a>(ebpf: &'a mut Ebpf, name: &str) -> Result<&'a mut Xdp, String> {
    let program = ebpf.program_mut(name).ok_or_else(|| format!("the object has no program `{name}`"))?;
    let program: &mut Xdp = program.try_into().map_err(text)?;
    program.load().map_err(text)?;
    Ok(program)
}

fn attach(program: &mut Xdp, iface: &str) -> Result<(), String> {
    program.attach(iface, XdpMode::Driver).map(drop).map_err(|e| format!("cannot attach XDP to `{iface}`: {e}"))
}

fn xdp_redirect(ports: &Ports) -> Result<(), String> {
    let port_a = if_index(&ports.port_a).map_err(text)?;
    let port_b = if_index(&ports.port_b).map_err(text)?;
    let object = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/bench_redirect.o"));
    let mut ebpf = EbpfLoader::new().override_global("port_a_ifindex", &port_a, true).load(object).map_err(text)?;
    let mut out_port: DevMap<&mut MapData> =
        ebpf.map_mut("out_port").ok_or("no map `out_port`")?.try_into().map_err(text)?;
    out_port.set(0, port_b, None, 0).map_err(text)?;
    out_port.set(1, port_a, None, 0).map_err(text)?;
    let program = xdp_program(&mut ebpf, "bench_redirect")?;
    attach(program, &ports.port_a)?;
    attach(program, &ports.port_b)?;
    eprintln!("pfcswitch-bench: xdp-redirect ready on {} <-> {}", ports.port_a, ports.port_b);
    wait_for_stop()
    // Dropping `ebpf` detaches the program from both ports.
}

// ---- sink ----

/// `struct bench_count` of ebpf/bench_sink.c.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct Count {
    frames: u64,
    bytes: u64,
    probes: u64,
}

// SAFETY: three u64, no padding.
unsafe impl Pod for Count {}

/// `struct probe_control` of ebpf/bench_sink.c.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct ProbeControl {
    recording: u64,
    recorded: u64,
}

// SAFETY: two u64, no padding.
unsafe impl Pod for ProbeControl {}

/// The one-way latencies the sink recorded in its window, in nanoseconds, sorted.
fn probe_latencies(ebpf: &Ebpf, control: &Array<MapData, ProbeControl>) -> Result<Vec<u64>, String> {
    let latencies: Array<&MapData, u64> =
        ebpf.map("probe_latency_ns").ok_or("no map `probe_latency_ns`")?.try_into().map_err(text)?;
    let recorded = control.get(&0, 0).map_err(text)?.recorded.min(u64::from(latencies.len()));
    let mut sorted =
        (0..recorded as u32).map(|slot| latencies.get(&slot, 0).map_err(text)).collect::<Result<Vec<_>, _>>()?;
    sorted.sort_unstable();
    Ok(sorted)
}

/// The nearest-rank percentile `p` (0-100) of sorted values.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0 * sorted.len() as f64).ceil() as usize).max(1);
    sorted[rank - 1]
}

fn sink(args: &SinkArgs) -> Result<(), String> {
    let object = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/bench_sink.o"));
    let mut ebpf = Ebpf::load(object).map_err(text)?;
    attach(xdp_program(&mut ebpf, "bench_sink")?, &args.iface)?;
    let mut control: Array<MapData, ProbeControl> =
        ebpf.take_map("probe_control").ok_or("no map `probe_control`")?.try_into().map_err(text)?;
    let mut record_probes = |recording: bool| -> Result<(), String> {
        let now = control.get(&0, 0).map_err(text)?;
        control.set(0, ProbeControl { recording: recording.into(), ..now }, 0).map_err(text)
    };
    let counts: PerCpuArray<&MapData, Count> = ebpf.map("counts").ok_or("no map `counts`")?.try_into().map_err(text)?;
    let total = || -> Result<(Instant, Count), String> {
        let per_cpu = counts.get(&0, 0).map_err(text)?;
        let sum = per_cpu.iter().fold(Count::default(), |sum, c| Count {
            frames: sum.frames + c.frames,
            bytes: sum.bytes + c.bytes,
            probes: sum.probes + c.probes,
        });
        Ok((Instant::now(), sum))
    };
    eprintln!("pfcswitch-bench: sink ready on {}", args.iface);
    let deadline = Instant::now() + seconds(args.first_frame_timeout);
    while total().map(|(_, count)| count.frames + count.probes)? == 0 {
        if Instant::now() > deadline {
            return Err(format!("no frame reached `{}` within {} s", args.iface, args.first_frame_timeout));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(seconds(args.window.warmup));
    record_probes(true)?;
    let (start, first) = total()?;
    std::thread::sleep(seconds(args.window.window));
    let (end, last) = total()?;
    record_probes(false)?;
    let secs = (end - start).as_secs_f64();
    let frames = last.frames - first.frames;
    let mut json = serde_json::json!({
        "iface": args.iface,
        "frames": frames,
        "bytes": last.bytes - first.bytes,
        "seconds": secs,
        "fps": frames as f64 / secs,
    });
    let latencies = probe_latencies(&ebpf, &control)?;
    if !latencies.is_empty() {
        json["probe_frames"] = latencies.len().into();
        json["probe_p50_ns"] = percentile(&latencies, 50.0).into();
        json["probe_p99_ns"] = percentile(&latencies, 99.0).into();
        json["probe_max_ns"] = percentile(&latencies, 100.0).into();
    }
    if args.drain > 0.0 {
        let (mut seen, mut quiet_since) = (last.frames, Instant::now());
        while quiet_since.elapsed() < seconds(args.drain) {
            std::thread::sleep(Duration::from_millis(20));
            let (at, now) = total()?;
            if now.frames != seen {
                (seen, quiet_since) = (now.frames, at);
            }
        }
        json["total_frames"] = seen.into();
    }
    println!("{json}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{FIRST_CALL_FRAMES, MAX_CALL_FRAMES, call_frames, percentile};
    use std::time::Duration;

    #[test]
    fn generator_calls_last_a_second_and_end_at_the_next_edge() {
        let ms = Duration::from_millis;
        // 65,536 frames in 20 ms: 3.3 Mpps, so a second is 3.3 million frames.
        assert_eq!(call_frames(1 << 16, ms(20), ms(5000)), 3_276_800);
        assert_eq!(call_frames(1 << 16, ms(20), ms(100)), 327_680, "ends at the window's edge");
        assert_eq!(call_frames(1 << 16, ms(20), ms(0)), FIRST_CALL_FRAMES, "never a call too short to send");
        assert_eq!(call_frames(u32::MAX, ms(1), ms(5000)), MAX_CALL_FRAMES);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<u64> = (1..=200).collect();
        assert_eq!(percentile(&sorted, 50.0), 100);
        assert_eq!(percentile(&sorted, 99.0), 198);
        assert_eq!(percentile(&sorted, 100.0), 200);
        assert_eq!(percentile(&[7], 99.0), 7, "one sample is every percentile");
    }
}
