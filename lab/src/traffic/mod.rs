//! `pfcswitch traffic`: endpoints for a host namespace. `send` emits one sequence-numbered
//! flow at an emulated NIC speed and obeys PFC and PAUSE like a RoCE NIC (core's
//! `HostNic`); `recv` counts what arrives per flow, with loss and reordering; `storm` keeps
//! the link paused as a broken NIC does (core's `Storm`). Frames go through AF_PACKET on the
//! host's interface.

use crate::workload::Storm;
use anyhow::{Context, Result};
use clap::Args;
use pfcswitch_hosts::{FlowReceiver, FlowSender, FlowSpec, HostNic};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, FrameView, Ipv4Addr, PAUSE_MULTICAST, Pcp, build_mac_control_frame};
use pfcswitchd::packet::RawSocket;
use pfcswitchd::signals::{self, SignalFd};
use pfcswitchd::timer::{self, Clock, Lateness};
use serde_json::json;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct SendArgs {
    /// The host interface to send on.
    #[arg(long)]
    iface: String,
    /// Destination MAC address.
    #[arg(long)]
    dst: EthernetAddress,
    #[arg(long, default_value = "10.0.0.254")]
    dst_ip: Ipv4Addr,
    /// 802.1Q priority of the flow.
    #[arg(long, value_parser = parse_pcp)]
    pcp: Pcp,
    #[arg(long, default_value_t = 1)]
    vid: u16,
    /// The emulated NIC speed.
    #[arg(long, default_value = "1Gbps")]
    speed: BitRate,
    /// Offered rate on the wire (default: as fast as the NIC and pauses allow).
    #[arg(long)]
    rate: Option<BitRate>,
    /// Frame length without FCS.
    #[arg(long, default_value_t = 1500)]
    size: usize,
    /// Frames to send.
    #[arg(long, conflicts_with = "duration")]
    frames: Option<u64>,
    /// Send for this long.
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    #[arg(long, default_value_t = 1)]
    flow: u32,
    /// After the last frame, keep receiving (and counting PAUSE/PFC) for this long, so the
    /// switch's final XON is not lost on an endpoint that already left.
    #[arg(long, value_parser = parse_duration, default_value = "0s")]
    linger: Duration,
    /// Obey OFC PAUSE frames per flow, as an OFC-aware NIC would (default: as the PFC pause
    /// of the priority, as a RoCE NIC does).
    #[arg(long)]
    ofc_per_flow: bool,
}

#[derive(Debug, Args)]
pub struct RecvArgs {
    /// The host interface to receive on.
    #[arg(long)]
    iface: String,
    /// Stop after this long.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    duration: Duration,
    /// Stop earlier, once frames have arrived and none came for this long.
    #[arg(long, value_parser = parse_duration)]
    idle: Option<Duration>,
}

#[derive(Debug, Args)]
pub struct StormArgs {
    /// The host interface whose link to keep paused.
    #[arg(long)]
    iface: String,
    /// The priority (PFC class) to pause.
    #[arg(long, value_parser = parse_pcp)]
    class: Pcp,
    /// Storm this long (default: until SIGINT or SIGTERM).
    #[arg(long, value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Pause time of each XOFF frame, 1-65535.
    #[arg(long, default_value_t = u16::MAX)]
    quanta: u16,
    /// The link's speed: a quantum is 512 bit times at it, and XOFF is re-sent every quarter
    /// of the pause. Default: the interface's speed in sysfs, else 100Gbps (the shortest period).
    #[arg(long)]
    speed: Option<BitRate>,
    /// Start at this CLOCK_MONOTONIC instant in nanoseconds, the clock every namespace shares
    /// (how the scenario runner starts a storm on time), instead of now.
    #[arg(long, value_name = "NANOSECONDS")]
    at: Option<u64>,
}

fn parse_pcp(text: &str) -> Result<Pcp, String> {
    text.parse::<u8>().ok().and_then(Pcp::new).ok_or_else(|| format!("`{text}` is not a priority 0-7"))
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    pfcswitch_link::units::parse_duration(text).map_err(|e| e.to_string())
}

fn iface_mac(iface: &str) -> Result<EthernetAddress> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{iface}/address"))
        .with_context(|| format!("interface `{iface}` not found in this network namespace"))?;
    Ok(text.trim().parse()?)
}

/// The speed the kernel reports for `iface` (veth reports 10 Gbit/s), if any.
fn iface_speed(iface: &str) -> Option<BitRate> {
    let text = std::fs::read_to_string(format!("/sys/class/net/{iface}/speed")).ok()?;
    text.trim().parse::<u64>().ok().filter(|&mbps| mbps > 0 && mbps < 1 << 40).map(BitRate::mbps)
}

/// The first IPv4 address of `iface`, or 0.0.0.0 (the switch forwards on MAC addresses).
fn iface_ipv4(iface: &str) -> Ipv4Addr {
    let mut found = Ipv4Addr::UNSPECIFIED;
    // SAFETY: getifaddrs/freeifaddrs pair; every pointer is checked before use.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) != 0 {
            return found;
        }
        let mut entry = list;
        while !entry.is_null() {
            let e = &*entry;
            if !e.ifa_addr.is_null()
                && i32::from((*e.ifa_addr).sa_family) == libc::AF_INET
                && std::ffi::CStr::from_ptr(e.ifa_name).to_bytes() == iface.as_bytes()
            {
                let address = &*(e.ifa_addr as *const libc::sockaddr_in);
                found = Ipv4Addr::from(u32::from_be(address.sin_addr.s_addr));
                break;
            }
            entry = e.ifa_next;
        }
        libc::freeifaddrs(list);
    }
    found
}

pub fn send(args: &SendArgs, json: bool) -> Result<()> {
    let socket =
        RawSocket::open(&args.iface).with_context(|| format!("cannot open a raw socket on `{}`", args.iface))?;
    socket.set_receive_buffer(4 << 20).context("cannot grow the receive buffer")?;
    socket.take_drops()?;
    let (mac, ip) = (iface_mac(&args.iface)?, iface_ipv4(&args.iface));
    timer::tighten_timer_slack();
    let clock = Clock::new();
    let mut nic = HostNic::new(args.speed, 0xFF);
    if args.ofc_per_flow {
        nic.obey_ofc_per_flow(mac);
    }
    // A userspace sender wakes tens of microseconds late; credit it so it keeps its rate.
    let jitter_credit = Duration::from_micros(200);
    nic.set_burst(jitter_credit);
    let frames = args.frames.unwrap_or(u64::MAX);
    let end = args.duration.map(|d| clock.now() + d);
    let spec = FlowSpec {
        id: args.flow,
        dst: args.dst,
        dst_ip: args.dst_ip,
        priority: args.pcp,
        vid: args.vid,
        frame_len: args.size,
        frames,
        start: clock.now(),
        rate: args.rate,
    };
    let mut flow = FlowSender::new(spec);
    flow.set_burst(jitter_credit);
    let (mut frame, mut incoming) = (vec![0u8; 9216], vec![0u8; 9216]);
    let mut lateness = Lateness::new();
    let started = clock.now();
    loop {
        let now = clock.now();
        while let Some(received) = socket.try_recv(&mut incoming)? {
            nic.handle_rx(now, received);
        }
        if flow.is_done() || end.is_some_and(|end| now >= end) {
            let quiet_until = clock.now() + args.linger;
            while clock.now() < quiet_until {
                let mut fds = [timer::readable(socket.fd())];
                timer::wait(&clock, Some(quiet_until), Duration::ZERO, &mut fds, || false, &mut lateness);
                while let Some(received) = socket.try_recv(&mut incoming)? {
                    nic.handle_rx(clock.now(), received);
                }
            }
            break;
        }
        if nic.can_send_to(now, args.pcp, args.dst) && flow.ready_at() <= now {
            let len = flow.next_frame(now, mac, ip, &mut frame);
            socket.send(&frame[..len])?;
            nic.sent(now, len);
            continue;
        }
        let next = nic.ready_at_to(args.pcp, args.dst).max(flow.ready_at());
        let deadline = end.map_or(next, |end| next.min(end));
        let mut fds = [timer::readable(socket.fd())];
        // No spinning: the NIC's burst credit absorbs late wake-ups, and the switch needs the CPU.
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, &mut lateness);
    }
    let now = clock.now();
    let seconds = (now - started).as_secs_f64();
    let (pfc_rx, pause_rx) = nic.control_frames_rx();
    let paused = nic.paused_time(now, args.pcp).as_secs_f64();
    // Frames this endpoint's socket could not keep up with: PFC frames among them were missed.
    let receive_drops = socket.take_drops()?;
    if json {
        println!(
            "{}",
            json!({
                "flow": args.flow, "frames": flow.sent(), "bytes": flow.sent() * args.size as u64, "seconds": seconds,
                "pfc_rx": pfc_rx, "pause_rx": pause_rx, "paused_seconds": paused, "receive_drops": receive_drops,
            })
        );
    } else {
        if receive_drops > 0 {
            println!(
                "warning: this sender's socket dropped {receive_drops} incoming frames; it may have missed PFC frames"
            );
        }
        println!(
            "flow {}: sent {} frames of {} B in {seconds:.3} s; received {pfc_rx} PFC and {pause_rx} PAUSE frames; priority {} paused {paused:.3} s",
            args.flow,
            flow.sent(),
            args.size,
            args.pcp
        );
    }
    Ok(())
}

pub fn recv(args: &RecvArgs, json: bool) -> Result<()> {
    let socket =
        RawSocket::open(&args.iface).with_context(|| format!("cannot open a raw socket on `{}`", args.iface))?;
    // The default ~200 KiB holds 17 ms at 100 Mbit/s; a receiver sharing two cores with a
    // switch and senders can be off the CPU longer than that.
    socket.set_receive_buffer(8 << 20).context("cannot grow the receive buffer")?;
    socket.take_drops()?;
    let mac = iface_mac(&args.iface)?;
    let clock = Clock::new();
    let end = clock.now() + args.duration;
    let mut receiver = FlowReceiver::default();
    let mut buffer = vec![0u8; 9216];
    let mut last_arrival = None;
    let mut lateness = Lateness::new();
    loop {
        let now = clock.now();
        loop {
            let frame = match socket.try_recv(&mut buffer) {
                Ok(Some(frame)) => frame,
                Ok(None) => break,
                // The interface went down (a link flap): keep counting once it is back.
                Err(error) if error.raw_os_error() == Some(libc::ENETDOWN) => break,
                Err(error) => return Err(error.into()),
            };
            if let Ok(view) = FrameView::parse(frame)
                && view.l2.dst == mac
                && receiver.handle(now, &view, frame.len())
            {
                last_arrival = Some(now);
            }
        }
        let idle_end = args.idle.zip(last_arrival).map(|(idle, last)| last + idle);
        let deadline = idle_end.map_or(end, |idle| idle.min(end));
        if now >= deadline {
            break;
        }
        let mut fds = [timer::readable(socket.fd())];
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, &mut lateness);
    }
    let flows: Vec<_> = receiver
        .flows()
        .map(|(id, s)| {
            let span = s.last_rx.zip(s.first_rx).map_or(0.0, |(last, first)| (last - first).as_secs_f64());
            json!({
                "flow": id, "frames": s.frames, "bytes": s.bytes, "lost": s.lost, "reordered": s.reordered,
                "highest_sequence": s.next_sequence().saturating_sub(1),
                "seconds": span, "throughput_bps": if span > 0.0 { s.bytes as f64 * 8.0 / span } else { 0.0 },
            })
        })
        .collect();
    // Frames the receiver itself could not keep up with: not the network's loss.
    let receiver_drops = socket.take_drops()?;
    if json {
        println!("{}", json!({ "flows": flows, "receiver_drops": receiver_drops }));
    } else {
        if receiver_drops > 0 {
            println!(
                "warning: this receiver's socket dropped {receiver_drops} frames (CPU starved); losses below may be ours"
            );
        }
        for f in &flows {
            println!(
                "flow {}: {} frames, {} bytes, {} lost, {} reordered, {:.1} Mbit/s over {:.3} s",
                f["flow"],
                f["frames"],
                f["bytes"],
                f["lost"],
                f["reordered"],
                f["throughput_bps"].as_f64().unwrap_or(0.0) / 1e6,
                f["seconds"].as_f64().unwrap_or(0.0)
            );
        }
    }
    Ok(())
}

pub fn storm(args: &StormArgs, json: bool) -> Result<()> {
    let speed = args.speed.or_else(|| iface_speed(&args.iface)).unwrap_or(BitRate::gbps(100));
    let storm = Storm::new(args.class.value(), args.quanta, speed)?;
    signals::block_signals().context("cannot block signals")?;
    let signal_fd = SignalFd::new().context("cannot open a signalfd")?;
    let socket =
        RawSocket::open(&args.iface).with_context(|| format!("cannot open a raw socket on `{}`", args.iface))?;
    let mut frame = [0u8; 64];
    let len = build_mac_control_frame(&mut frame, iface_mac(&args.iface)?, PAUSE_MULTICAST, &storm.frame());
    timer::tighten_timer_slack();
    let clock = Clock::system();
    let start = args.at.map_or_else(|| clock.now(), Instant::from_nanos);
    let end = args.duration.map(|d| start + d);
    let (mut next, mut sent, mut lateness) = (start, 0u64, Lateness::new());
    loop {
        let now = clock.now();
        if end.is_some_and(|end| now >= end) {
            break;
        }
        if now >= next {
            socket.send(&frame[..len]).with_context(|| format!("cannot send on `{}`", args.iface))?;
            sent += 1;
            next = storm.next_after(start, now + Duration::from_nanos(1));
        }
        let deadline = end.map_or(next, |end| next.min(end));
        let mut fds = [timer::readable(signal_fd.raw())];
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, &mut lateness);
        if fds[0].revents != 0 && signal_fd.read().is_some() {
            break;
        }
    }
    let seconds = clock.now().saturating_duration_since(start).as_secs_f64();
    let pause = speed.pause_duration(args.quanta);
    if json {
        println!(
            "{}",
            json!({
                "iface": args.iface, "priority": args.class.value(), "quanta": args.quanta, "speed": speed,
                "interval_seconds": storm.interval().as_secs_f64(), "frames": sent, "seconds": seconds,
            })
        );
    } else {
        println!(
            "storm on {}: sent {sent} PFC frames in {seconds:.3} s (priority {} XOFF for {} quanta = {:.3} ms at {speed}, one every {:.3} ms)",
            args.iface,
            args.class,
            args.quanta,
            pause.as_secs_f64() * 1e3,
            storm.interval().as_secs_f64() * 1e3,
        );
    }
    Ok(())
}
