//! `pfcswitch traffic endpoint`: one host of an experiment. It runs core's [`Transport`]
//! (messages over go-back-N connections) and [`HostNic`] (line rate, PFC/PAUSE obedience)
//! on the host's interface over AF_XDP, from a plan the scenario runner wrote, and writes
//! what happened as JSON when it is told to stop (SIGTERM/SIGINT).
//!
//! Protocol with the runner, on stdout: `ready` once the port is open and the host has
//! announced itself (one broadcast frame, so switches learn its address before the
//! workload starts); `done` once the workload's time is over and every sized message this
//! host sends is acknowledged. The host keeps receiving and acknowledging until stopped.

use super::plan::TransportSpec;
use anyhow::{Context, Result};
use clap::Args;
use pfcswitch_hosts::{
    Arrivals, ConnectionSpec, FecnReaction, HostNic, MessageSpec, QcnReaction, Transport, TransportConfig,
};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp, build_announcement_frame};
use pfcswitchd::host_port::HostPort;
use pfcswitchd::signals::{self, SignalFd};
use pfcswitchd::timer::{self, Clock, Lateness};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Args)]
pub struct EndpointArgs {
    /// The host's interface.
    #[arg(long, default_value = "eth0")]
    iface: String,
    /// The plan (JSON) the scenario runner wrote for this host.
    #[arg(long)]
    plan: PathBuf,
    /// Where to write the results (JSON).
    #[arg(long)]
    out: PathBuf,
}

/// What one host does in a run. Times are CLOCK_MONOTONIC nanoseconds, shared by every
/// namespace of the machine.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EndpointPlan {
    pub host: String,
    pub mac: String,
    pub ip: String,
    pub speed: BitRate,
    pub mtu: u32,
    pub transport: TransportSpec,
    /// QCN reaction points on every connection, when the switches send CNMs.
    pub qcn: Option<QcnReaction>,
    /// FECN sources on every connection, when the switches run FECN.
    #[serde(default)]
    pub fecn: Option<FecnReaction>,
    pub epoch_ns: u64,
    pub end_ns: u64,
    pub connections: Vec<PlanConnection>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PlanConnection {
    pub id: u32,
    pub dst_mac: String,
    pub dst_ip: String,
    pub priority: u8,
    pub vid: u16,
    pub rate: Option<BitRate>,
    pub arrivals: Arrivals,
    /// The seed of its random arrivals (`arrivals` serialises without it).
    pub arrivals_seed: u64,
    /// When its long-lived flow stops, if before the workload's end.
    pub until_ns: Option<u64>,
    /// (message id, size in bytes or null for long-lived, start in ns).
    pub messages: Vec<(u32, Option<u32>, u64)>,
}

/// What one host reports.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EndpointResult {
    pub host: String,
    pub messages: Vec<MessageResult>,
    pub senders: Vec<SenderResult>,
    pub receivers: Vec<ReceiverResult>,
    pub pfc_rx: u64,
    pub pause_rx: u64,
    /// Seconds each priority was paused by the switch.
    pub paused_seconds: [f64; 8],
    /// Frames that were neither ours nor PAUSE/PFC: flooded before the switch learned, and
    /// other hosts' announcements.
    pub foreign_frames: u64,
    /// Frames the AF_XDP socket dropped (the endpoint fell behind): not the network's loss.
    pub socket_drops: u64,
    /// Frames that came without the endpoint program's arrival instant, whose RTT samples
    /// (if ACKs) ended when the endpoint read them instead.
    #[serde(default)]
    pub unstamped_frames: u64,
    /// How long stamped frames waited between their arrival on the interface and the
    /// endpoint's read, p50 and p99 in µs: what the arrival instant takes out of each RTT
    /// sample.
    #[serde(default)]
    pub read_wait_p50_us: u64,
    #[serde(default)]
    pub read_wait_p99_us: u64,
    /// FECN probes this host could not reflect: its reflection queue was full.
    #[serde(default)]
    pub reflections_dropped: u64,
    /// Datagrams to the endpoints' port that did not parse (a bad ICRC, an unknown opcode,
    /// a truncated BTH...), by `layer: reason`.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub malformed: std::collections::BTreeMap<String, u64>,
    pub timer_late_p99_us: u64,
}

/// One message this host sent; times in CLOCK_MONOTONIC nanoseconds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub struct MessageResult {
    pub connection: u32,
    pub id: u32,
    /// `None` for a long-lived flow.
    pub size: Option<u32>,
    pub start_ns: u64,
    pub finish_ns: Option<u64>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SenderResult {
    pub connection: u32,
    pub segments: u64,
    pub retransmitted: u64,
    pub naks: u64,
    pub timeouts: u64,
    /// RTT samples the sender took (an ACK covering new data, Karn's rule), and their mean:
    /// what TIMELY and Swift see, the endpoints' and switches' scheduling delays included.
    #[serde(default)]
    pub rtt_samples: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_mean_us: Option<f64>,
    /// QCN: the flow's reaction point over time, when the switches ran QCN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub qcn: Option<SenderQcn>,
    /// FECN: the flow's source over time, when the switches ran FECN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fecn: Option<SenderFecn>,
    /// DCQCN: the queue pair's reaction point over time, when the transport ran DCQCN.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<SenderDcqcn>,
}

/// A queue pair's DCQCN reaction point over time, in the transport's goodput bins.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SenderDcqcn {
    /// CNPs received.
    pub cnps: u64,
    /// Its rate limit (RC; the line rate while released), the mean per bin.
    pub rate_mbps: Vec<f64>,
    /// CNPs received per bin.
    pub cnp_bins: Vec<u32>,
    /// α when the run ended.
    pub alpha: f64,
}

/// A flow's FECN source: its rate over time, in the transport's goodput bins from the epoch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SenderFecn {
    pub probes_sent: u64,
    pub probes_returned: u64,
    /// The round trip of the last probe that came back.
    pub last_rtt_us: Option<f64>,
    /// The egress port that set the last rate applied.
    pub bottleneck: Option<String>,
    /// Its rate (the line rate until a reflected probe lowers it), the mean per bin.
    pub rate_mbps: Vec<f64>,
}

/// A flow's QCN reaction point over time, in the transport's goodput bins from the epoch.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SenderQcn {
    /// CNMs received.
    pub cnms: u64,
    /// Its rate limit (the RP's current rate; the line rate while released), the mean per bin.
    pub rate_mbps: Vec<f64>,
    /// CNMs received per bin.
    pub cnm_bins: Vec<u32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ReceiverResult {
    pub connection: u32,
    pub segments: u64,
    pub bytes: u64,
    pub frame_bytes: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
    pub messages: u64,
    /// CNPs this receiver sent for the connection (RoCEv2's notification point).
    #[serde(default)]
    pub cnps_sent: u64,
    pub first_rx_ns: Option<u64>,
    pub last_rx_ns: Option<u64>,
    pub goodput_bins: Vec<u64>,
}

impl EndpointResult {
    /// What a host's transport and NIC did up to `now` (the I/O counters are the caller's).
    pub fn of(host: &str, transport: &Transport, nic: &HostNic, now: Instant) -> EndpointResult {
        let (pfc_rx, pause_rx) = nic.control_frames_rx();
        let qcn = first_by_id(transport.reaction_points().map(|(id, rp, trace)| (id, (rp, trace))));
        let dcqcn = first_by_id(transport.dcqcn_points().map(|(id, rp, trace)| (id, (rp, trace))));
        let fecn = first_by_id(transport.fecn_sources());
        EndpointResult {
            host: host.to_string(),
            messages: transport
                .messages()
                .map(|m| MessageResult {
                    connection: m.connection,
                    id: m.spec.id,
                    size: m.spec.size,
                    start_ns: m.spec.start.as_nanos(),
                    finish_ns: m.finish.map(Instant::as_nanos),
                })
                .collect(),
            senders: transport
                .sender_stats()
                .map(|(spec, s)| SenderResult {
                    connection: spec.id,
                    segments: s.segments,
                    retransmitted: s.retransmitted,
                    naks: s.naks,
                    timeouts: s.timeouts,
                    rtt_samples: s.rtt_samples,
                    rtt_mean_us: (s.rtt_samples > 0).then(|| s.rtt_total.as_secs_f64() * 1e6 / s.rtt_samples as f64),
                    qcn: qcn.get(&spec.id).map(|(rp, trace)| SenderQcn {
                        cnms: rp.cnms(),
                        rate_mbps: trace.mean_rates_mbps(now),
                        cnm_bins: trace.cnms().to_vec(),
                    }),
                    dcqcn: dcqcn.get(&spec.id).map(|(rp, trace)| SenderDcqcn {
                        cnps: rp.cnps(),
                        rate_mbps: trace.mean_rates_mbps(now),
                        cnp_bins: trace.cnms().to_vec(),
                        alpha: rp.alpha(),
                    }),
                    fecn: fecn.get(&spec.id).map(|source| {
                        let stats = source.stats();
                        SenderFecn {
                            probes_sent: stats.probes_sent,
                            probes_returned: stats.probes_returned,
                            last_rtt_us: stats.last_rtt.map(|d| d.as_secs_f64() * 1e6),
                            bottleneck: stats.bottleneck.map(|mac| mac.to_string()),
                            rate_mbps: source.trace().mean_rates_mbps(now),
                        }
                    }),
                })
                .collect(),
            receivers: transport
                .receiver_stats()
                .map(|(id, s)| ReceiverResult {
                    connection: id,
                    segments: s.segments,
                    bytes: s.bytes,
                    frame_bytes: s.frame_bytes,
                    out_of_order: s.out_of_order,
                    duplicates: s.duplicates,
                    messages: s.messages,
                    cnps_sent: s.cnps_sent,
                    first_rx_ns: s.first_rx.map(Instant::as_nanos),
                    last_rx_ns: s.last_rx.map(Instant::as_nanos),
                    goodput_bins: s.goodput_bins.clone(),
                })
                .collect(),
            pfc_rx,
            pause_rx,
            paused_seconds: std::array::from_fn(|p| {
                nic.paused_time(now, Pcp::new(p as u8).expect("0..8")).as_secs_f64()
            }),
            foreign_frames: 0,
            socket_drops: 0,
            unstamped_frames: 0,
            read_wait_p50_us: 0,
            read_wait_p99_us: 0,
            reflections_dropped: transport.reflections_dropped(),
            malformed: transport.malformed().collect(),
            timer_late_p99_us: 0,
        }
    }
}

/// By connection id, the first of each id's items, as a search from the front finds them
/// (a search per sender was quadratic in a host's flows, 5,186 on HPCC's fat-tree).
pub(super) fn first_by_id<T>(items: impl Iterator<Item = (u32, T)>) -> HashMap<u32, T> {
    let mut by_id = HashMap::new();
    for (id, item) in items {
        by_id.entry(id).or_insert(item);
    }
    by_id
}

fn transport_for(plan: &EndpointPlan) -> Result<(Transport, EthernetAddress)> {
    let mac: EthernetAddress = plan.mac.parse().map_err(|e| anyhow::anyhow!("plan: mac `{}`: {e:?}", plan.mac))?;
    let ip: Ipv4Addr = plan.ip.parse().map_err(|e| anyhow::anyhow!("plan: ip `{}`: {e:?}", plan.ip))?;
    let (epoch, end) = (Instant::from_nanos(plan.epoch_ns), Instant::from_nanos(plan.end_ns));
    let mut transport = Transport::new(TransportConfig {
        qcn: plan.qcn,
        fecn: plan.fecn,
        ..plan.transport.config(mac, ip, plan.mtu, plan.speed, epoch, end)
    });
    for c in &plan.connections {
        let spec = ConnectionSpec {
            id: c.id,
            dst: c.dst_mac.parse().map_err(|e| anyhow::anyhow!("plan: dst_mac `{}`: {e:?}", c.dst_mac))?,
            dst_ip: c.dst_ip.parse().map_err(|e| anyhow::anyhow!("plan: dst_ip `{}`: {e:?}", c.dst_ip))?,
            priority: Pcp::new(c.priority).context("plan: priority")?,
            vid: c.vid,
            rate: c.rate,
            arrivals: c.arrivals.with_seed(c.arrivals_seed),
            until: c.until_ns.map(Instant::from_nanos),
        };
        let messages = c
            .messages
            .iter()
            .map(|&(id, size, start)| MessageSpec { id, size, start: Instant::from_nanos(start) })
            .collect();
        transport.add_connection(spec, messages);
    }
    Ok((transport, mac))
}

pub fn run(args: &EndpointArgs) -> Result<()> {
    let text = std::fs::read_to_string(&args.plan).with_context(|| format!("cannot read {}", args.plan.display()))?;
    let plan: EndpointPlan =
        serde_json::from_str(&text).with_context(|| format!("{}: not an endpoint plan", args.plan.display()))?;
    let (mut transport, mac) = transport_for(&plan)?;
    signals::block_signals().context("cannot block signals")?;
    let signal_fd = SignalFd::new().context("cannot open a signalfd")?;
    let mut port = HostPort::open(&args.iface)?;
    timer::tighten_timer_slack();
    let clock = Clock::system();
    let mut nic = HostNic::new(plan.speed, 0xFF);
    if plan.transport.ofc_per_flow {
        nic.obey_ofc_per_flow(mac);
    }
    // A userspace sender wakes late when the CPU is busy; credit it so it keeps its rate.
    let jitter_credit = pfcswitchd::datapath::BURST_CREDIT;
    nic.set_burst(jitter_credit);
    transport.set_pacer_burst(jitter_credit);
    let mut buffer = vec![0u8; 9216];
    let len = build_announcement_frame(&mut buffer, mac);
    while !port.send(&buffer[..len])? {
        port.flush();
    }
    port.flush();
    println!("ready");
    std::io::stdout().flush()?;

    let end = Instant::from_nanos(plan.end_ns);
    let (mut foreign, mut unstamped, mut done_said, mut lateness) = (0u64, 0u64, false, Lateness::new());
    let mut read_wait = Lateness::new();
    // A frame the transport built that the TX ring had no room for yet.
    let mut unsent: Option<usize> = None;
    let mut next_signal_check = Instant::ZERO;
    // What the last wait was for: a message due then was ready no earlier, so the NIC's
    // catch-up credit starts there, not at the poll before the wait.
    let mut woke_for: Option<Instant> = None;
    loop {
        let now = clock.now();
        if let Some(due) = woke_for {
            nic.rest(due.min(now));
        }
        port.recv(|frame, arrived| {
            // The RTT samples end when the interface received the ACK, not when this thread
            // woke to read it (a frame without the stamp counts from now).
            let arrived = match arrived {
                Some(arrived) => {
                    read_wait.record(now.saturating_duration_since(arrived));
                    arrived
                }
                None => {
                    unstamped += 1;
                    now
                }
            };
            if !nic.handle_rx(now, frame) && !transport.handle_rx_arrived(now, arrived, frame) {
                foreign += 1;
            }
        });
        transport.handle_timeout(now);
        loop {
            let len = match unsent.take() {
                Some(len) => len,
                None => match transport.poll_transmit(now, &mut nic, &mut buffer) {
                    Some(len) => len,
                    None => break,
                },
            };
            if !port.send(&buffer[..len])? {
                unsent = Some(len);
                break;
            }
        }
        port.flush();
        if !done_said && now >= end && transport.is_done() {
            done_said = true;
            println!("done");
            std::io::stdout().flush()?;
        }
        let deadline =
            if unsent.is_some() { Some(now + Duration::from_micros(20)) } else { transport.poll_timeout(&nic) };
        // Before the end of the workload, wake at its end to report; after it only an ACK (the
        // fd) or a timer (the deadline) can finish the run, so sleep until one comes.
        let deadline = if now < end { Some(deadline.map_or(end, |d| d.min(end))) } else { deadline };
        let mut fds = [timer::readable(port.fd()), timer::readable(signal_fd.raw())];
        timer::wait(&clock, deadline, Duration::ZERO, &mut fds, || false, Some(&mut lateness));
        woke_for = deadline;
        // The signalfd is read when it woke us, and every 10 ms in case a busy loop never
        // polled: a frame's wake-up costs no extra syscall.
        if (fds[1].revents != 0 || now >= next_signal_check) && signal_fd.read().is_some() {
            break;
        }
        if now >= next_signal_check {
            next_signal_check = now + Duration::from_millis(10);
        }
    }
    let now = clock.now();
    let drops = port.drops();
    let result = EndpointResult {
        foreign_frames: foreign,
        unstamped_frames: unstamped,
        read_wait_p50_us: read_wait.quantile_us(0.5) as u64,
        read_wait_p99_us: read_wait.quantile_us(0.99) as u64,
        socket_drops: drops.frames(),
        timer_late_p99_us: lateness.quantile_us(0.99) as u64,
        ..EndpointResult::of(&plan.host, &transport, &nic, now)
    };
    std::fs::write(&args.out, serde_json::to_vec(&result)?)
        .with_context(|| format!("cannot write {}", args.out.display()))?;
    Ok(())
}
