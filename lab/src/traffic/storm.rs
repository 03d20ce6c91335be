//! `traffic storm`: keeps links paused as a broken NIC does (core's `Storm`), and stands in
//! for SONiC's `pfc_gen.py` with its options, without the gaps a Python loop leaves.

use super::args::StormArgs;
use super::iface::{iface_mac, iface_speed};
use crate::workload::Storm;
use anyhow::{Context, Result};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{MacControlRepr, PAUSE_MULTICAST, Pcp, PfcRepr, build_mac_control_frame};
use pfcswitchd::packet::RawSocket;
use pfcswitchd::signals::{self, SignalFd};
use pfcswitchd::timer::{self, Clock};
use serde_json::json;
use std::time::Duration;

/// One interface of the storm: its socket and the frame with its own source address.
struct Target {
    socket: RawSocket,
    frame: [u8; 64],
    len: usize,
}

fn storm_of(args: &StormArgs, speed: BitRate) -> Result<Storm> {
    Ok(match (args.class, args.priority) {
        (Some(class), _) => Storm::new(class.value(), args.quanta, speed)?,
        (None, Some(bitmap)) => {
            let classes = Pcp::ALL.into_iter().filter(|class| bitmap & class.mask() != 0);
            let pfc = classes.fold(PfcRepr::default(), |pfc, class| pfc.with_class(class, args.quanta));
            Storm::of_frame(MacControlRepr::Pfc(pfc), speed)
        }
        (None, None) => Storm::of_frame(MacControlRepr::Pause { quanta: args.quanta }, speed),
    })
}

pub(super) fn storm(args: &StormArgs, json: bool) -> Result<()> {
    let speed = args.speed.or_else(|| iface_speed(&args.ifaces[0])).unwrap_or(BitRate::gbps(100));
    let storm = storm_of(args, speed)?;
    signals::block_signals().context("cannot block signals")?;
    let signal_fd = SignalFd::new().context("cannot open a signalfd")?;
    let mut targets = Vec::with_capacity(args.ifaces.len());
    for iface in &args.ifaces {
        let socket = RawSocket::open(iface).with_context(|| format!("cannot open a raw socket on `{iface}`"))?;
        let mut frame = [0u8; 64];
        let len = build_mac_control_frame(&mut frame, iface_mac(iface)?, PAUSE_MULTICAST, &storm.frame());
        targets.push(Target { socket, frame, len });
    }
    timer::tighten_timer_slack();
    if args.realtime > 0
        && let Err(error) = timer::run_realtime(args.realtime)
    {
        eprintln!("pfcswitch: storm under the ordinary scheduler (SCHED_FIFO: {error}): load can leave gaps");
    }
    let clock = Clock::system();
    let start = args.at.map_or_else(|| clock.now(), Instant::from_nanos);
    let end = args.duration.map(|d| start + d);
    let (mut next, mut sent, mut unsent) = (start, 0u64, 0u64);
    // The longest time between two frames on one interface: the storm's gap.
    let (mut last, mut largest_gap) = (None::<Instant>, Duration::ZERO);
    while args.num.is_none_or(|num| sent < num) {
        let now = clock.now();
        if end.is_some_and(|end| now >= end) {
            break;
        }
        if now >= next {
            for (target, iface) in targets.iter().zip(&args.ifaces) {
                // A link that is down refuses the frame: the storm goes on, as a broken NIC's
                // does across a flap, and counts what it could not send.
                if let Err(error) = target.socket.send(&target.frame[..target.len]) {
                    if unsent == 0 {
                        eprintln!("pfcswitch: storm: cannot send on `{iface}` ({error}); counting and going on");
                    }
                    unsent += 1;
                }
            }
            let sent_at = clock.now();
            largest_gap = largest_gap.max(last.map_or(Duration::ZERO, |last| sent_at.saturating_duration_since(last)));
            last = Some(sent_at);
            sent += 1;
            next = storm.next_after(start, now + Duration::from_nanos(1));
            continue;
        }
        let deadline = end.map_or(next, |end| next.min(end));
        let mut fds = [timer::readable(signal_fd.raw())];
        timer::wait(&clock, Some(deadline), Duration::ZERO, &mut fds, || false, None);
        if fds[0].revents != 0 && signal_fd.read().is_some() {
            break;
        }
    }
    let seconds = clock.now().saturating_duration_since(start).as_secs_f64();
    let ifaces = args.ifaces.join(",");
    let (kind, enable) = match storm.frame() {
        MacControlRepr::Pause { .. } => ("PAUSE", None),
        MacControlRepr::Pfc(pfc) => ("PFC", Some(pfc.enable)),
    };
    if sent > 1 && largest_gap >= storm.pause() {
        eprintln!(
            "pfcswitch: the storm left a gap of {:.3} ms, longer than the {:.3} ms pause: the port could resume",
            largest_gap.as_secs_f64() * 1e3,
            storm.pause().as_secs_f64() * 1e3
        );
    }
    if json {
        println!(
            "{}",
            json!({
                "iface": ifaces, "kind": kind, "priority": args.class.map(|c| c.value()), "enable": enable,
                "quanta": args.quanta, "speed": speed, "interval_seconds": storm.interval().as_secs_f64(),
                "pause_seconds": storm.pause().as_secs_f64(), "largest_gap_seconds": largest_gap.as_secs_f64(),
                "frames": sent, "unsent": unsent, "seconds": seconds,
            })
        );
    } else {
        println!(
            "storm on {ifaces}: sent {sent} {kind} frames each in {seconds:.3} s ({} quanta = {:.3} ms at {speed}, one every {:.3} ms); largest gap {:.3} ms; {unsent} refused by a link that was down",
            args.quanta,
            storm.pause().as_secs_f64() * 1e3,
            storm.interval().as_secs_f64() * 1e3,
            largest_gap.as_secs_f64() * 1e3,
        );
    }
    Ok(())
}
