//! `traffic storm`: keeps a link paused as a broken NIC does (core's `Storm`).

use super::args::StormArgs;
use super::iface::{iface_mac, iface_speed};
use crate::workload::Storm;
use anyhow::{Context, Result};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{PAUSE_MULTICAST, build_mac_control_frame};
use pfcswitchd::packet::RawSocket;
use pfcswitchd::signals::{self, SignalFd};
use pfcswitchd::timer::{self, Clock};
use serde_json::json;
use std::time::Duration;

pub(super) fn storm(args: &StormArgs, json: bool) -> Result<()> {
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
    let (mut next, mut sent) = (start, 0u64);
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
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, None);
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
