//! The raw endpoints: `send` emits one sequence-numbered flow with core's `FlowSender`,
//! `recv` counts what arrives per flow, with loss and reordering.

use super::args::{RecvArgs, SendArgs};
use super::iface::{iface_ipv4, iface_mac};
use anyhow::{Context, Result};
use pfcswitch_hosts::{FlowReceiver, FlowSender, FlowSpec, HostNic};
use pfcswitch_wire::FrameView;
use pfcswitchd::packet::RawSocket;
use pfcswitchd::timer::{self, Clock};
use serde_json::json;
use std::time::Duration;

pub(super) fn send(args: &SendArgs, json: bool) -> Result<()> {
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
    let started = clock.now();
    loop {
        let now = clock.now();
        while let Some(received) = socket.try_recv(&mut incoming)? {
            nic.handle_rx(now, received);
        }
        if flow.is_done() || end.is_some_and(|end| now >= end) {
            let quiet_until = clock.now() + args.linger.unwrap_or_default();
            while clock.now() < quiet_until {
                let mut fds = [timer::readable(socket.fd())];
                timer::wait(&clock, Some(quiet_until), Duration::ZERO, &mut fds, || false, None);
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
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, None);
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

pub(super) fn recv(args: &RecvArgs, json: bool) -> Result<()> {
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
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, None);
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
