//! The RoCEv2 endpoints: `send --rocev2` runs one connection of the hosts' go-back-N
//! [`Transport`] as RC SENDs to UDP port 4791, optionally with a DCQCN reaction point;
//! `recv --rocev2` runs a transport with no connection of its own that acknowledges what
//! arrives (RC ACKs and NAKs) and sends CNPs for CE-marked segments.

use super::args::{RecvArgs, SendArgs};
use super::host::{Host, Turn};
use super::iface::{iface_ipv4, iface_mac, iface_mtu};
use crate::scenario::endpoint::EndpointResult;
use crate::scenario::{DcqcnSpec, TransportSpec};
use anyhow::{Context, Result, anyhow, bail};
use pfcswitch_hosts::{Arrivals, ConnectionSpec, DcqcnParams, HostNic, MessageSpec, Transport, TransportConfig};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};
use pfcswitchd::packet::RawSocket;
use pfcswitchd::timer::{self, Clock};
use serde_json::{Value, json};
use std::time::Duration;

/// The path MTUs RoCE NICs offer (IBTA's 256–4096 byte IB MTUs).
const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];
/// What a RoCEv2 packet carries besides its payload: IPv4, UDP, BTH and ICRC.
const IP_OVERHEAD: u32 = 20 + 8 + 12 + 4;
/// Connection ids `--flow` may take: a receiver keeps its state per id, densely.
const MAX_FLOW: u32 = 0xFFFF;
/// The most messages `--message` with `--duration` queues.
const MAX_MESSAGES: u64 = 1_000_000;
/// Without `--message`, `--frames` goes as messages of at most this many bytes.
const MAX_MESSAGE: u64 = 1 << 30;
/// A userspace sender wakes tens of microseconds late; credit it so it keeps its rate.
const JITTER_CREDIT: Duration = Duration::from_micros(200);
/// `--linger`'s default: long enough for the ACKs of a full window at 10 Mbit/s.
const DEFAULT_LINGER: Duration = Duration::from_millis(200);

/// The path MTU in force on `iface` (IP MTU `mtu`): `pmtu`, or the largest that fits.
fn path_mtu(iface: &str, pmtu: Option<u32>, mtu: u32) -> Result<u32> {
    let fits = |pmtu: u32| pmtu + IP_OVERHEAD <= mtu;
    match pmtu {
        Some(pmtu) if !PMTUS.contains(&pmtu) => {
            bail!("--pmtu {pmtu}: a RoCE path MTU is one of 256, 512, 1024, 2048 or 4096")
        }
        Some(pmtu) if !fits(pmtu) => bail!(
            "--pmtu {pmtu} does not fit `{iface}`, whose MTU is {mtu}: its packets are {} bytes of IP (IPv4 20 + UDP \
             8 + BTH 12 + {pmtu} + ICRC 4); choose a smaller --pmtu or raise the MTU",
            pmtu + IP_OVERHEAD
        ),
        Some(pmtu) => Ok(pmtu),
        None => PMTUS.into_iter().rev().find(|&p| fits(p)).with_context(|| {
            format!("`{iface}`'s MTU of {mtu} holds no RoCE path MTU (256 needs {})", 256 + IP_OVERHEAD)
        }),
    }
}

/// DCQCN's parameters from `--dcqcn-params` (TOML keys), checked against the NIC's speed.
fn dcqcn_params(text: Option<&str>, speed: BitRate) -> Result<DcqcnParams> {
    #[derive(serde::Deserialize)]
    struct Keys {
        dcqcn: DcqcnParams,
    }
    let params = match text {
        None => DcqcnParams::default(),
        Some(text) => {
            let keys: Keys =
                toml::from_str(&format!("dcqcn = {{ {text} }}")).map_err(|e| anyhow!("--dcqcn-params: {e}"))?;
            keys.dcqcn
        }
    };
    params.validate_for(speed).map_err(|e| anyhow!("--dcqcn-params: {e}"))?;
    if params.min_rate >= speed {
        eprintln!(
            "warning: DCQCN's min_rate {} is not below --speed {speed}: CNPs cannot lower the rate \
             (--dcqcn-params 'min_rate = \"...\"')",
            params.min_rate
        );
    }
    Ok(params)
}

/// The host's transport settings: the scenario runner's for a RoCEv2 transport of path MTU
/// `pmtu`, so that a hand-run pair frames, acknowledges and marks as an experiment's hosts.
struct Setup {
    iface: String,
    mac: EthernetAddress,
    ip: Ipv4Addr,
    mtu: u32,
    speed: BitRate,
    pmtu: u32,
}

impl Setup {
    fn new(iface: &str, pmtu: Option<u32>, speed: BitRate) -> Result<Setup> {
        let (mac, ip, mtu) = (iface_mac(iface)?, iface_ipv4(iface), iface_mtu(iface)?);
        let pmtu = path_mtu(iface, pmtu, mtu)?;
        Ok(Setup { iface: iface.to_string(), mac, ip, mtu, speed, pmtu })
    }

    fn config(
        &self,
        epoch: Instant,
        end: Option<Instant>,
        dcqcn: Option<DcqcnParams>,
        cnp: Option<(Duration, Option<Pcp>)>,
    ) -> Result<TransportConfig> {
        let dcqcn = dcqcn.map(|params| DcqcnSpec { base_rtt: None, params });
        let mut spec = TransportSpec { dcqcn, ..TransportSpec::default() };
        let mut rocev2 = spec.rocev2.unwrap_or_default();
        rocev2.pmtu = Some(self.pmtu);
        if let Some((interval, priority)) = cnp {
            (rocev2.cnp_interval, rocev2.cnp_priority) = (interval, priority.map(Pcp::value));
        }
        spec.rocev2 = Some(rocev2);
        spec.validate(self.mtu, self.speed, false).with_context(|| format!("RoCEv2 on `{}`", self.iface))?;
        let end = end.unwrap_or(Instant::from_nanos(u64::MAX));
        Ok(spec.config(self.mac, self.ip, self.mtu, self.speed, epoch, end))
    }

    /// A host on the interface: a raw socket with a receive buffer of `buffer` bytes, a NIC
    /// at the emulated speed and `transport`.
    fn host(&self, buffer: usize, mut transport: Transport, ofc_per_flow: bool, clock: Clock) -> Result<Host> {
        let socket =
            RawSocket::open(&self.iface).with_context(|| format!("cannot open a raw socket on `{}`", self.iface))?;
        socket.set_receive_buffer(buffer).context("cannot grow the receive buffer")?;
        socket.take_drops()?;
        let mut nic = HostNic::new(self.speed, 0xFF);
        if ofc_per_flow {
            nic.obey_ofc_per_flow(self.mac);
        }
        nic.set_burst(JITTER_CREDIT);
        transport.set_pacer_burst(JITTER_CREDIT);
        Host::new(socket, clock, nic, transport).context("cannot ask for VLAN tags (PACKET_AUXDATA)")
    }
}

/// The messages `send --rocev2` queues, all arriving at `start` so that they go back to
/// back: one long-lived message for `--duration`; or `--frames` full segments as messages of
/// at most 1 GiB; or `--message` bytes each, as many as carry `--frames` segments (rounded
/// up to a whole message) or as a line-rate sender would start within `--duration`.
fn messages(args: &SendArgs, payload: usize, start: Instant) -> Result<Vec<MessageSpec>> {
    let payload = payload as u64;
    let sized = |sizes: &mut dyn Iterator<Item = u64>| {
        sizes.enumerate().map(|(id, size)| MessageSpec { id: id as u32, size: Some(size as u32), start }).collect()
    };
    Ok(match (args.message.map(|m| m.bytes()), args.frames, args.duration) {
        (Some(size), ..) if size == 0 || size > u64::from(u32::MAX) => {
            bail!("--message {size}: a message is 1 byte to 4 GiB")
        }
        (Some(size), Some(frames), _) => {
            let count = frames.div_ceil(size.div_ceil(payload));
            sized(&mut std::iter::repeat_n(size, count as usize))
        }
        (Some(size), None, Some(duration)) => {
            let count = (duration.as_secs_f64() * args.speed.bps() as f64 / (size * 8) as f64).ceil() as u64 + 1;
            sized(&mut std::iter::repeat_n(size, count.min(MAX_MESSAGES) as usize))
        }
        (None, Some(frames), _) => {
            let mut left = frames.checked_mul(payload).context("--frames: too many")?;
            let chunk = MAX_MESSAGE / payload * payload;
            sized(&mut std::iter::from_fn(|| {
                let size = left.min(chunk);
                left -= size;
                (size > 0).then_some(size)
            }))
        }
        (None, None, Some(_)) => vec![MessageSpec { id: 0, size: None, start }],
        (_, None, None) => bail!("--rocev2 needs --frames or --duration"),
    })
}

/// The message bytes that `segments` acknowledged segments carried: a message's last
/// segment carries what is left of it, a long-lived one's are all full.
fn acked_bytes(messages: &[MessageSpec], mut segments: u64, payload: u64) -> u64 {
    let mut bytes = 0;
    for message in messages {
        let Some(size) = message.size.map(u64::from) else { return bytes + segments * payload };
        let whole = size.div_ceil(payload).max(1);
        if segments < whole {
            return bytes + segments * payload;
        }
        (bytes, segments) = (bytes + size, segments - whole);
    }
    bytes
}

pub(super) fn send(args: &SendArgs, json: bool) -> Result<()> {
    if args.flow > MAX_FLOW {
        bail!("--flow {}: a RoCEv2 connection id is 0-{MAX_FLOW}", args.flow);
    }
    let setup = Setup::new(&args.iface, args.roce.pmtu, args.speed)?;
    let dcqcn = args.dcqcn.then(|| dcqcn_params(args.dcqcn_params.as_deref(), args.speed)).transpose()?;
    timer::tighten_timer_slack();
    let clock = Clock::system();
    let started = clock.now();
    let end = args.duration.map(|d| started + d);
    let config = setup.config(started, end, dcqcn, None)?;
    let mut transport = Transport::new(config);
    let spec = ConnectionSpec {
        id: args.flow,
        dst: args.dst,
        dst_ip: args.dst_ip,
        priority: args.pcp,
        vid: args.vid,
        rate: args.rate,
        arrivals: Arrivals::Constant,
        until: None,
    };
    let queued = messages(args, config.payload_len(), started)?;
    let sized = queued.iter().filter(|m| m.size.is_some()).count();
    transport.add_connection(spec, queued.clone());
    let mut host = setup.host(4 << 20, transport, args.ofc_per_flow, clock)?;
    // `is_done` counts a long-lived message as done: only sized messages end the run early.
    let long_lived = sized == 0;
    host.run(true, |host, now| {
        let done = !long_lived && host.transport.is_done();
        if done || end.is_some_and(|end| now >= end) { Turn::Stop } else { Turn::WakeBy(end) }
    })?;
    let stopped = host.clock.now();
    // The reaction point as sending stopped: its timers run on while the sender lingers.
    let dcqcn = host.transport.dcqcn_points().next().map(|(_, rp, trace)| {
        json!({
            "rate_bps": rp.rate().bps(), "target_bps": rp.target().bps(), "alpha": rp.alpha(),
            "lowest_rate_bps": host.lowest_dcqcn_rate.map(BitRate::bps), "rate_mbps": trace.mean_rates_mbps(stopped),
        })
    });
    // Sending is over: what is in flight is acknowledged now, and the switch's last XON comes.
    let quiet_until = stopped + args.linger.unwrap_or(DEFAULT_LINGER);
    host.run(false, |_, now| if now >= quiet_until { Turn::Stop } else { Turn::WakeBy(Some(quiet_until)) })?;

    let now = host.clock.now();
    let result = EndpointResult::of("", &host.transport, &host.nic, now);
    let (_, stats) = host.transport.sender_stats().next().expect("one connection");
    // The transport counts whole segments; a message's last one may carry less.
    let payload = config.payload_len() as u64;
    let bytes_acked = acked_bytes(&queued, stats.bytes_acked / payload, payload);
    let completed: Vec<Duration> = host.transport.messages().filter_map(|m| m.fct()).collect();
    let mean_fct = (!completed.is_empty()).then(|| completed.iter().sum::<Duration>() / completed.len() as u32);
    let receive_drops = host.socket.take_drops()?;
    let seconds = (stopped - started).as_secs_f64();
    let summary = json!({
        "flow": args.flow, "pmtu": setup.pmtu, "frame_len": config.frame_len, "frames": stats.segments,
        "retransmitted": stats.retransmitted, "naks": stats.naks, "timeouts": stats.timeouts,
        "bytes_acked": bytes_acked, "cnps": stats.cnps, "messages": sized, "messages_completed": completed.len(),
        "mean_fct_seconds": mean_fct.map(|d| d.as_secs_f64()), "seconds": seconds,
        "pfc_rx": result.pfc_rx, "pause_rx": result.pause_rx,
        "paused_seconds": result.paused_seconds[usize::from(args.pcp.value())],
        "receive_drops": receive_drops, "foreign_frames": host.foreign, "dcqcn": dcqcn,
    });
    if json {
        println!("{summary}");
        return Ok(());
    }
    if receive_drops > 0 {
        println!(
            "warning: this sender's socket dropped {receive_drops} incoming frames; it may have missed ACKs or PFC"
        );
    }
    let s = &summary;
    println!(
        "flow {} (RoCEv2, path MTU {} B): sent {} frames in {seconds:.3} s, {} bytes acknowledged ({:.1} Mbit/s); \
         {} retransmitted, {} NAKs, {} timeouts; {} CNPs received",
        args.flow,
        setup.pmtu,
        stats.segments,
        bytes_acked,
        bytes_acked as f64 * 8.0 / seconds.max(1e-9) / 1e6,
        stats.retransmitted,
        stats.naks,
        stats.timeouts,
        stats.cnps
    );
    if sized > 0 {
        let mean = mean_fct.map_or("-".to_string(), |d| format!("{:.3} ms", d.as_secs_f64() * 1e3));
        println!("messages: {} of {sized} completed, mean FCT {mean}", completed.len());
    }
    if let Some(d) = &s["dcqcn"].as_object() {
        let mbps = |key: &str| d[key].as_u64().map_or("-".to_string(), |bps| format!("{:.2} Mbit/s", bps as f64 / 1e6));
        println!(
            "DCQCN: rate {} (target {}, lowest {}), alpha {:.4}",
            mbps("rate_bps"),
            mbps("target_bps"),
            mbps("lowest_rate_bps"),
            d["alpha"].as_f64().unwrap_or(0.0)
        );
    }
    println!(
        "received {} PFC and {} PAUSE frames; priority {} paused {:.3} s",
        result.pfc_rx,
        result.pause_rx,
        args.pcp,
        s["paused_seconds"].as_f64().unwrap_or(0.0)
    );
    Ok(())
}

pub(super) fn recv(args: &RecvArgs, json: bool) -> Result<()> {
    let setup = Setup::new(&args.iface, args.roce.pmtu, BitRate::gbps(100))?;
    let clock = Clock::system();
    let started = clock.now();
    let end = started + args.duration;
    let config = setup.config(started, None, None, Some((args.cnp_interval, args.cnp_priority)))?;
    // The receive buffer: see the raw receiver's.
    let mut host = setup.host(8 << 20, Transport::new(config), false, clock)?;
    host.run(true, |host, now| {
        let idle_end = args.idle.zip(host.last_arrival).map(|(idle, last)| last + idle);
        let stop = idle_end.map_or(end, |idle| idle.min(end));
        if now >= stop { Turn::Stop } else { Turn::WakeBy(Some(stop)) }
    })?;
    let now = host.clock.now();
    let result = EndpointResult::of("", &host.transport, &host.nic, now);
    let flows: Vec<Value> = result
        .receivers
        .iter()
        .map(|r| {
            let span = r.last_rx_ns.zip(r.first_rx_ns).map_or(0, |(last, first)| last - first) as f64 / 1e9;
            let mut flow = serde_json::to_value(r).expect("plain data");
            flow["flow"] = r.connection.into();
            flow["seconds"] = span.into();
            flow["throughput_bps"] = (if span > 0.0 { r.bytes as f64 * 8.0 / span } else { 0.0 }).into();
            flow
        })
        .collect();
    let receiver_drops = host.socket.take_drops()?;
    if json {
        println!(
            "{}",
            json!({
                "flows": flows, "pmtu": setup.pmtu, "receiver_drops": receiver_drops, "foreign_frames": host.foreign,
                "pfc_rx": result.pfc_rx, "pause_rx": result.pause_rx,
            })
        );
        return Ok(());
    }
    if receiver_drops > 0 {
        println!(
            "warning: this receiver's socket dropped {receiver_drops} frames (CPU starved); the sender retransmits them"
        );
    }
    for (f, r) in flows.iter().zip(&result.receivers) {
        println!(
            "flow {} (RoCEv2): {} segments, {} bytes in order, {} out of order, {} duplicates, {} messages; \
             {} CNPs sent; {:.1} Mbit/s over {:.3} s",
            r.connection,
            r.segments,
            r.bytes,
            r.out_of_order,
            r.duplicates,
            r.messages,
            r.cnps_sent,
            f["throughput_bps"].as_f64().unwrap_or(0.0) / 1e6,
            f["seconds"].as_f64().unwrap_or(0.0)
        );
    }
    Ok(())
}
