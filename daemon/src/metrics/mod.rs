//! The Prometheus endpoint: `GET /metrics` in OpenMetrics 1.0.0 or text format 0.0.4, chosen by
//! the request's `Accept` header.
//!
//! Counters live in the core as plain integers owned by the datapath thread. A scrape asks the
//! datapath for a [`Snapshot`] (at most one per [`MIN_SNAPSHOT_INTERVAL`]; scrapes closer
//! together share it) and encodes it with the `prometheus-client` crate through a collector
//! built for that scrape, so the per-frame path never touches a shared counter.
//!
//! `prometheus-client` writes OpenMetrics only; [`text_004`] derives the 0.0.4 form from it.
//! It has no summary type either: the one summary family is written by `write_summary`.
//!
//! HTTP is `hyper` (HTTP/1 only) on a single-threaded tokio runtime. `tiny_http`, the smaller
//! candidate, has no per-connection read timeout and gives each connection a thread from an
//! unbounded pool: idle or slowloris clients pin threads without limit. Here a connection costs
//! a socket and a small buffer, and the endpoint's resources are bounded:
//! - at most [`MAX_CONNECTIONS`] connections; beyond that a client gets `503` and is closed;
//! - the request head must arrive within [`HEAD_TIMEOUT`] of connecting (idle and slowloris
//!   clients are dropped) and fit in [`MAX_REQUEST_HEAD`] bytes (else `431`);
//! - a connection lives at most [`CONNECTION_DEADLINE`] (slow readers of a response);
//! - one request per connection (`Connection: close`); garbage gets `400` and is closed;
//! - two threads in all: the runtime and one blocking thread that asks the datapath.

mod buffer;
mod family;
mod fecn;
mod int;
mod ofc;
mod qcn;

use crate::control::DatapathHandle;
use family::{Labels, counter, family, flag, gauge, port_priority, single};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{ACCEPT, ALLOW, CONTENT_TYPE, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use pfcswitch_switch::report::{CapfcReport, ControlRequest, ControlResponse, PriorityReport, Snapshot};
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::TypedMetric;
use prometheus_client::registry::Registry;
use std::convert::Infallible;
use std::fmt::{self, Write as _};
use std::io;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 512;
/// Time from accepting a connection to the end of its request head.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest request head (request line and headers); hyper's minimum buffer.
pub const MAX_REQUEST_HEAD: usize = 8192;
/// Longest a connection is kept, response included.
pub const CONNECTION_DEADLINE: Duration = Duration::from_secs(15);
/// Scrapes closer together than this share one snapshot: a flood of scrapes costs the
/// datapath at most ten snapshots a second.
pub const MIN_SNAPSHOT_INTERVAL: Duration = Duration::from_millis(100);

pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The exposition formats the endpoint speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Text004,
}

impl Format {
    /// OpenMetrics when the client accepts it (q > 0) at least as much as plain text (as
    /// Prometheus asks), text 0.0.4 otherwise (curl, browsers, no header).
    pub fn negotiate(accept: Option<&str>) -> Format {
        let (mut openmetrics, mut text) = (0.0f32, 0.0f32);
        for range in accept.unwrap_or("").split(',') {
            let mut parts = range.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let q = parts
                .filter_map(|p| p.split_once('='))
                .find(|(key, _)| key.trim().eq_ignore_ascii_case("q"))
                .map_or(1.0, |(_, value)| value.trim().parse().unwrap_or(0.0));
            match media.as_str() {
                "application/openmetrics-text" => openmetrics = openmetrics.max(q),
                "text/plain" | "text/*" | "*/*" => text = text.max(q),
                _ => {}
            }
        }
        if openmetrics > 0.0 && openmetrics >= text { Format::OpenMetrics } else { Format::Text004 }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            Format::Text004 => TEXT_CONTENT_TYPE,
        }
    }
}

/// One snapshot as prometheus-client families, encoded when the registry is.
#[derive(Debug)]
struct SnapshotCollector(Arc<Snapshot>);

impl SnapshotCollector {
    /// A family with one sample per (port, priority).
    fn per_priority<M: EncodeMetric + TypedMetric>(
        &self,
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        value: impl Fn(&PriorityReport) -> M,
    ) -> fmt::Result {
        self.per_priority_where(encoder, name, help, |_| true, value)
    }

    /// A family with one sample per (port, priority) of the priorities `which` selects.
    fn per_priority_where<M: EncodeMetric + TypedMetric>(
        &self,
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        which: fn(&PriorityReport) -> bool,
        value: impl Fn(&PriorityReport) -> M,
    ) -> fmt::Result {
        let samples = self.0.ports.iter().flat_map(|port| {
            port.priorities.iter().filter(|p| which(p)).map(|p| (port_priority(&port.name, p.priority), value(p)))
        });
        family(encoder, name, help, samples.collect::<Vec<_>>())
    }

    /// The PFC watchdog's families, per port and lossless priority.
    fn pfcwd(&self, e: &mut DescriptorEncoder) -> fmt::Result {
        let lossless = |p: &PriorityReport| p.lossless;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_stormed",
            "1 while the PFC watchdog holds the egress queue as stormed.",
            lossless,
            |p| flag(p.pfcwd.stormed),
        )?;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_storms_detected_total",
            "PFC storms the watchdog detected on the egress queue.",
            lossless,
            |p| counter(p.pfcwd.counters.storms_detected),
        )?;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_storms_restored_total",
            "Stormed egress queues the watchdog restored.",
            lossless,
            |p| counter(p.pfcwd.counters.storms_restored),
        )?;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_tx_dropped_frames_total",
            "Frames the watchdog's drop action discarded from or for the stormed egress queue.",
            lossless,
            |p| counter(p.pfcwd.counters.tx_dropped),
        )?;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_rx_dropped_frames_total",
            "Frames the watchdog's drop action discarded as they arrived on the stormed port and priority.",
            lossless,
            |p| counter(p.pfcwd.counters.rx_dropped),
        )?;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_pausing_peer_seconds",
            "Seconds this port has asserted XOFF towards its peer without a break (0 when it does not).",
            lossless,
            |p| gauge(p.pausing_peer_continuous_seconds),
        )?;
        self.per_priority_where(
            e,
            "pfcswitch_pfcwd_long_pausing_total",
            "Times this port asserted XOFF towards its peer longer than pfcwd.pausing_peer_limit.",
            lossless,
            |p| counter(p.pfcwd.counters.long_pausing),
        )
    }

    /// Drops by reason per (port, priority), of the priorities `which` selects.
    fn drops(
        &self,
        encoder: &mut DescriptorEncoder,
        name: &str,
        help: &str,
        which: fn(&PriorityReport) -> bool,
    ) -> fmt::Result {
        let mut samples = Vec::new();
        for port in &self.0.ports {
            for p in port.priorities.iter().filter(|p| which(p)) {
                for (reason, &count) in &p.drops {
                    let mut labels = port_priority(&port.name, p.priority);
                    labels.push(("reason", reason.clone()));
                    samples.push((labels, counter(count)));
                }
            }
        }
        family(encoder, name, help, samples)
    }
}

/// CaPFC's state (§II): D and I per input, E per (input, egress), C and WARN activations per
/// egress queue; lossless priorities only.
fn encode_capfc(encoder: &mut DescriptorEncoder, capfc: &CapfcReport) -> fmt::Result {
    let inputs = |value: fn(&pfcswitch_switch::report::CapfcInputReport) -> bool| {
        capfc.inputs.iter().map(move |i| (port_priority(&i.port, i.priority), flag(value(i)))).collect::<Vec<_>>()
    };
    family(
        encoder,
        "pfcswitch_capfc_paused",
        "CaPFC D(i,p): 1 while the input asks its peer to pause.",
        inputs(|i| i.paused),
    )?;
    family(
        encoder,
        "pfcswitch_capfc_ingress_congested",
        "CaPFC I(i,p): the ingress queue is above XOFF.",
        inputs(|i| i.ingress_congested),
    )?;
    let per_input = |input: &str, egress: &str, priority: u8| -> Labels {
        vec![("port", input.to_string()), ("egress", egress.to_string()), ("priority", priority.to_string())]
    };
    let signals = capfc.queues.iter().flat_map(|q| {
        q.arrivals.keys().map(move |input| (per_input(input, &q.port, q.priority), flag(q.signalled.contains(input))))
    });
    family(
        encoder,
        "pfcswitch_capfc_egress_signal",
        "CaPFC E(i,o,p): 1 while egress queue `egress` holds input `port` responsible for its congestion.",
        signals.collect::<Vec<_>>(),
    )?;
    let arrivals = capfc.queues.iter().flat_map(|q| {
        q.arrivals.iter().map(move |(input, &count)| (per_input(input, &q.port, q.priority), gauge(i64::from(count))))
    });
    family(
        encoder,
        "pfcswitch_capfc_arrivals",
        "CaPFC C(i,o,p): frames counted from input `port` since WARN.",
        arrivals.collect::<Vec<_>>(),
    )?;
    let warns = capfc.queues.iter().map(|q| (port_priority(&q.port, q.priority), counter(q.warn_activations)));
    family(
        encoder,
        "pfcswitch_capfc_warn_activations_total",
        "Times the egress queue crossed WARN.",
        warns.collect::<Vec<_>>(),
    )
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let s = &*self.0;
        let e = &mut encoder;
        let identity = vec![("switch", s.switch.clone()), ("version", s.version.clone()), ("policy", s.policy.clone())];
        family(e, "pfcswitch_info", "Switch identity; the value is always 1.", [(identity, gauge(1i64))])?;
        single(e, "pfcswitch_uptime_seconds", "Seconds since pfcswitchd started.", gauge(s.uptime_seconds))?;
        single(
            e,
            "pfcswitch_frames_held",
            "Frames the switch holds in its pipeline and egress queues.",
            gauge(s.frames_held as u64),
        )?;

        self.per_priority(e, "pfcswitch_rx_frames_total", "Data frames received.", |p| counter(p.rx_frames))?;
        self.per_priority(e, "pfcswitch_tx_frames_total", "Data frames sent.", |p| counter(p.tx_frames))?;
        self.per_priority(e, "pfcswitch_rx_bytes_total", "Bytes of data frames received (without FCS).", |p| {
            counter(p.rx_bytes)
        })?;
        self.per_priority(e, "pfcswitch_tx_bytes_total", "Bytes of data frames sent (without FCS).", |p| {
            counter(p.tx_bytes)
        })?;
        self.drops(e, "pfcswitch_drops_total", "Frames (or flooded copies) dropped, by reason.", |_| true)?;
        self.drops(
            e,
            "pfcswitch_lossless_drops_total",
            "Frames (or flooded copies) dropped on lossless priorities, by reason; lossless priorities only.",
            |p| p.lossless,
        )?;
        self.per_priority(e, "pfcswitch_pfc_tx_frames_total", "PFC frames sent with this class enabled.", |p| {
            counter(p.pfc_tx)
        })?;
        self.per_priority(e, "pfcswitch_pfc_rx_frames_total", "PFC frames received with this class enabled.", |p| {
            counter(p.pfc_rx)
        })?;
        self.per_priority(e, "pfcswitch_ecn_marked_frames_total", "Frames this egress queue marked CE.", |p| {
            counter(p.ecn_marked)
        })?;
        self.per_priority(e, "pfcswitch_xoff_to_xon_total", "Transitions of this ingress from XOFF to XON.", |p| {
            counter(p.xoff_to_xon)
        })?;
        self.per_priority(e, "pfcswitch_ingress_bytes", "Ingress accounting: bytes received and not yet sent.", |p| {
            gauge(p.ingress_bytes)
        })?;
        self.per_priority(
            e,
            "pfcswitch_ingress_high_water_bytes",
            "Highest ingress accounting since the last reset.",
            |p| gauge(p.ingress_high_water),
        )?;
        self.per_priority(e, "pfcswitch_egress_queue_bytes", "Bytes in the egress queue.", |p| gauge(p.egress_bytes))?;
        self.per_priority(e, "pfcswitch_egress_high_water_bytes", "Highest egress queue since the last reset.", |p| {
            gauge(p.egress_high_water)
        })?;
        self.per_priority(e, "pfcswitch_peer_paused", "1 while the peer pauses our egress on this priority.", |p| {
            flag(p.peer_paused)
        })?;
        self.per_priority(e, "pfcswitch_pausing_peer", "1 while we assert XOFF towards the peer.", |p| {
            flag(p.pausing_peer)
        })?;
        self.per_priority(e, "pfcswitch_paused_seconds_total", "Time our egress was paused by the peer.", |p| {
            counter(p.paused_seconds)
        })?;
        self.per_priority(e, "pfcswitch_pausing_seconds_total", "Time we asserted XOFF towards the peer.", |p| {
            counter(p.pausing_seconds)
        })?;
        self.pfcwd(e)?;
        if let Some(capfc) = &s.capfc {
            encode_capfc(e, capfc)?;
        }
        if let Some(report) = &s.qcn {
            qcn::encode(e, report)?;
        }
        if let Some(report) = &s.fecn {
            fecn::encode(e, report)?;
        }
        if let Some(report) = &s.ofc {
            ofc::encode(e, report)?;
        }
        if let Some(report) = &s.buffer {
            buffer::encode(e, report)?;
        }
        if let Some(report) = &s.int {
            int::encode(e, report, &s.ports)?;
        }

        let per_port = s.ports.iter().map(|p| (vec![("port", p.name.clone())], counter(p.pause_rx)));
        family(e, "pfcswitch_pause_rx_frames_total", "802.3x PAUSE frames received.", per_port.collect::<Vec<_>>())?;
        let per_port = s.ports.iter().map(|p| (vec![("port", p.name.clone())], counter(p.short_mac_control)));
        family(
            e,
            "pfcswitch_short_mac_control_frames_total",
            "PAUSE and PFC frames received shorter than 60 bytes (padded and obeyed, or dropped as runts).",
            per_port.collect::<Vec<_>>(),
        )?;
        let oper_up = s.ports.iter().map(|p| (vec![("port", p.name.clone())], flag(p.link == "up")));
        family(
            e,
            "pfcswitch_port_oper_up",
            "1 while the port's link is up (carrier), 0 when down or absent.",
            oper_up.collect::<Vec<_>>(),
        )?;
        let transitions = s.ports.iter().map(|p| (vec![("port", p.name.clone())], counter(p.link_transitions)));
        family(
            e,
            "pfcswitch_port_oper_transitions_total",
            "Changes of the port's link state (up, down, absent) since the daemon started.",
            transitions.collect::<Vec<_>>(),
        )?;
        let by_reason = |port: &str, reason: &str| vec![("port", port.to_string()), ("reason", reason.to_string())];
        let malformed =
            s.ports.iter().flat_map(|p| p.malformed.iter().map(|(r, &n)| (by_reason(&p.name, r), counter(n))));
        family(
            e,
            "pfcswitch_malformed_frames_total",
            "Frames that failed to parse, by layer and reason.",
            malformed.collect::<Vec<_>>(),
        )?;
        let xdp_rx = s.ports.iter().flat_map(|port| {
            let frames = port.xdp.iter().flat_map(|x| x.rx_frames.iter().enumerate());
            frames.map(|(priority, &n)| (port_priority(&port.name, priority as u8), counter(n)))
        });
        family(
            e,
            "pfcswitch_xdp_rx_frames_total",
            "Frames the XDP classifier saw, by the priority it assigned.",
            xdp_rx.collect::<Vec<_>>(),
        )?;
        let modes = s.ports.iter().filter_map(|port| {
            let xdp = port.xdp.as_ref().filter(|x| !x.attach.is_empty())?;
            let labels =
                vec![("port", port.name.clone()), ("attach", xdp.attach.clone()), ("socket", xdp.socket.clone())];
            Some((labels, gauge(1i64)))
        });
        family(
            e,
            "pfcswitch_port_xdp_info",
            "A port's XDP attach mode (native, generic) and AF_XDP socket mode (zero-copy, copy); the value is always 1.",
            modes.collect::<Vec<_>>(),
        )?;
        let xdp_drops = s.ports.iter().flat_map(|port| {
            port.xdp.iter().flat_map(|x| x.drops.iter()).map(|(r, &n)| (by_reason(&port.name, r), counter(n)))
        });
        family(
            e,
            "pfcswitch_xdp_drops_total",
            "Frames the XDP classifier dropped, by reason.",
            xdp_drops.collect::<Vec<_>>(),
        )?;
        let shed = s.ports.iter().flat_map(|port| {
            let frames = port.xdp.iter().flat_map(|x| x.shed_frames.iter().enumerate());
            frames.map(|(priority, &n)| (port_priority(&port.name, priority as u8), counter(n)))
        });
        family(
            e,
            "pfcswitch_xdp_shed_frames_total",
            "Data frames of lossy priorities the XDP classifier dropped while the port's receive rings backed up.",
            shed.collect::<Vec<_>>(),
        )?;
        let socket_dropped = s.ports.iter().filter_map(|port| {
            port.xdp.as_ref().map(|x| (vec![("port", port.name.clone())], counter(x.socket_dropped)))
        });
        family(
            e,
            "pfcswitch_port_xsk_rx_dropped_total",
            "Frames the kernel could not put into the port's AF_XDP sockets (no fill buffer, RX ring full), \
             dropped before the switch saw them.",
            socket_dropped.collect::<Vec<_>>(),
        )?;
        let cable_lost = s.ports.iter().flat_map(|port| {
            let by_direction =
                |direction: &str| vec![("port", port.name.clone()), ("direction", direction.to_string())];
            port.cable.iter().flat_map(move |c| {
                [(by_direction("out"), counter(c.lost_out)), (by_direction("in"), counter(c.lost_in))]
            })
        });
        family(
            e,
            "pfcswitch_cable_lost_frames_total",
            "Frames lost on a port's emulated cable (--cable), by direction.",
            cable_lost.collect::<Vec<_>>(),
        )?;
        if let Some(d) = &s.datapath {
            single(e, "pfcswitch_umem_frames_free", "UMEM frames on the free list.", gauge(d.umem_frames_free))?;
            single(e, "pfcswitch_umem_frames", "UMEM frames in all.", gauge(d.umem_frames))?;
            single(
                e,
                "pfcswitch_xsk_rx_dropped_total",
                "Frames the kernel could not deliver to the AF_XDP sockets.",
                counter(d.xsk_rx_dropped),
            )?;
            single(
                e,
                "pfcswitch_xdp_meta_missing_total",
                "Received frames without the classifier's metadata block.",
                counter(d.meta_missing),
            )?;
            single(e, "pfcswitch_resident_memory_bytes", "Resident memory of pfcswitchd.", gauge(d.resident_bytes))?;
        }
        Ok(())
    }
}

/// The timer-lateness summary, valid in both formats. prometheus-client has no summary type
/// (its `MetricType` lists it as not yet supported), so these few lines are written here.
fn write_summary(out: &mut String, snapshot: &Snapshot) -> fmt::Result {
    let Some(d) = &snapshot.datapath else { return Ok(()) };
    let name = "pfcswitch_timer_lateness_seconds";
    writeln!(out, "# HELP {name} How late the datapath woke for its deadlines.\n# TYPE {name} summary")?;
    for (quantile, micros) in [("0.5", d.timer_late_p50_us), ("0.99", d.timer_late_p99_us)] {
        writeln!(out, "{name}{{quantile=\"{quantile}\"}} {}", micros / 1e6)?;
    }
    writeln!(out, "{name}_sum {}\n{name}_count {}", d.timer_late_sum_seconds, d.timer_wakeups)
}

/// Every metric family of a snapshot, in `format`.
pub fn render(snapshot: Arc<Snapshot>, format: Format) -> String {
    let mut registry = Registry::default();
    registry.register_collector(Box::new(SnapshotCollector(snapshot.clone())));
    let mut out = String::with_capacity(64 * 1024);
    prometheus_client::encoding::text::encode_registry(&mut out, &registry)
        .and_then(|()| write_summary(&mut out, &snapshot))
        .and_then(|()| prometheus_client::encoding::text::encode_eof(&mut out))
        .expect("writing to a String cannot fail");
    match format {
        Format::OpenMetrics => out,
        Format::Text004 => text_004(&out),
    }
}

/// Text format 0.0.4 from OpenMetrics text, for the subset prometheus-client writes (counter,
/// gauge, summary, histogram). The formats differ in:
/// - a counter family is named without `_total` in OpenMetrics, with it in 0.0.4;
/// - OpenMetrics has `# UNIT` lines, `<counter>_created` samples and the `# EOF` terminator,
///   which 0.0.4 has not.
///
/// Samples, labels, escaping and values are written alike in both.
pub fn text_004(openmetrics: &str) -> String {
    let mut out = String::with_capacity(openmetrics.len());
    // HELP comes before TYPE: hold it until TYPE says whether the family is a counter.
    let mut help: Option<&str> = None;
    let mut counter: Option<&str> = None;
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if line.starts_with("# HELP ") {
            help = Some(line);
            continue;
        }
        if let Some(descriptor) = line.strip_prefix("# TYPE ") {
            let (name, kind) = descriptor.split_once(' ').unwrap_or((descriptor, ""));
            counter = (kind == "counter").then_some(name);
            let help_text = help.take().and_then(|h| h.strip_prefix("# HELP ")?.strip_prefix(name)?.strip_prefix(' '));
            let suffix = if counter.is_some() { "_total" } else { "" };
            if let Some(text) = help_text {
                let _ = writeln!(out, "# HELP {name}{suffix} {text}");
            }
            let _ = writeln!(out, "# TYPE {name}{suffix} {kind}");
            continue;
        }
        let sample = line.split(['{', ' ']).next().unwrap_or("");
        if counter.is_some_and(|family| sample.strip_prefix(family) == Some("_created")) {
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The datapath's snapshots, shared by scrapes less than [`MIN_SNAPSHOT_INTERVAL`] apart.
#[derive(Debug)]
struct Snapshots {
    handle: DatapathHandle,
    last: Mutex<Option<(Instant, Arc<Snapshot>)>>,
}

impl Snapshots {
    fn get(&self) -> Result<Arc<Snapshot>, String> {
        let mut last = self.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some((taken, snapshot)) = &*last
            && taken.elapsed() < MIN_SNAPSHOT_INTERVAL
        {
            return Ok(snapshot.clone());
        }
        match self.handle.call(ControlRequest::Snapshot) {
            ControlResponse::Snapshot(snapshot) => {
                let snapshot: Arc<Snapshot> = Arc::from(snapshot);
                *last = Some((Instant::now(), snapshot.clone()));
                Ok(snapshot)
            }
            ControlResponse::Error { message } => Err(message),
            other => Err(format!("unexpected answer {other:?}")),
        }
    }
}

/// Serves `GET /metrics` on `address` from a thread.
pub fn serve(address: &str, handle: DatapathHandle) -> io::Result<()> {
    let listener = std::net::TcpListener::bind(address)?;
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_blocking_threads(1)
        .thread_name("metrics-scrape")
        .build()?;
    let snapshots = Arc::new(Snapshots { handle, last: Mutex::new(None) });
    std::thread::Builder::new().name("metrics".into()).spawn(move || {
        if let Err(error) = runtime.block_on(accept(listener, snapshots)) {
            log::error!("metrics endpoint stopped: {error}");
        }
    })?;
    Ok(())
}

const BUSY: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

async fn accept(listener: std::net::TcpListener, snapshots: Arc<Snapshots>) -> io::Result<()> {
    let listener = tokio::net::TcpListener::from_std(listener)?;
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors (EMFILE) and the like: wait for connections to close
                // rather than spin on the error.
                log::warn!("metrics: accept: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            let _ = stream.try_write(BUSY);
            continue;
        };
        let snapshots = snapshots.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| respond(request, snapshots.clone()));
            let connection = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_REQUEST_HEAD)
                .keep_alive(false)
                .serve_connection(TokioIo::new(stream), service);
            match tokio::time::timeout(CONNECTION_DEADLINE, connection).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => log::debug!("metrics client: {error}"),
                Err(_) => log::debug!("metrics client: closed after {CONNECTION_DEADLINE:?}"),
            }
            drop(slot);
        });
    }
}

fn reply(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn respond(
    request: Request<hyper::body::Incoming>,
    snapshots: Arc<Snapshots>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    if request.method() != Method::GET && request.method() != Method::HEAD {
        let mut response = reply(StatusCode::METHOD_NOT_ALLOWED, "text/plain", "GET /metrics\n");
        response.headers_mut().insert(ALLOW, HeaderValue::from_static("GET, HEAD"));
        return Ok(response);
    }
    Ok(match request.uri().path() {
        "/metrics" => {
            let format = Format::negotiate(request.headers().get(ACCEPT).and_then(|v| v.to_str().ok()));
            let scraped = tokio::task::spawn_blocking(move || snapshots.get().map(|s| render(s, format))).await;
            match scraped {
                Ok(Ok(body)) => reply(StatusCode::OK, format.content_type(), body),
                Ok(Err(message)) => reply(StatusCode::SERVICE_UNAVAILABLE, "text/plain", format!("{message}\n")),
                Err(error) => reply(StatusCode::INTERNAL_SERVER_ERROR, "text/plain", format!("{error}\n")),
            }
        }
        "/" => reply(StatusCode::OK, "text/html", "<a href=\"/metrics\">metrics</a>\n"),
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "try /metrics\n"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_gets_openmetrics_and_everyone_else_text() {
        let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
        assert_eq!(Format::negotiate(Some(prometheus)), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("application/openmetrics-text")), Format::OpenMetrics);
        assert_eq!(Format::negotiate(Some("Application/OpenMetrics-Text; version=1.0.0")), Format::OpenMetrics);
        assert_eq!(Format::negotiate(None), Format::Text004);
        assert_eq!(Format::negotiate(Some("*/*")), Format::Text004, "curl");
        assert_eq!(Format::negotiate(Some("text/plain;version=0.0.4")), Format::Text004);
        assert_eq!(Format::negotiate(Some("application/openmetrics-text;q=0, */*")), Format::Text004);
        assert_eq!(Format::negotiate(Some("text/plain, application/openmetrics-text;q=0.5")), Format::Text004);
        assert_eq!(Format::negotiate(Some("garbage;;q=x,,")), Format::Text004);
    }

    #[test]
    fn text_004_renames_counters_and_drops_what_it_lacks() {
        // What prometheus-client writes for a counter with a unit and a created timestamp.
        let openmetrics = "# HELP a_seconds Time.\n# TYPE a_seconds counter\n# UNIT a_seconds seconds\n\
                           a_seconds_total{port=\"p1\"} 1.5\na_seconds_created{port=\"p1\"} 1700000000.0\n\
                           # HELP b Bytes.\n# TYPE b gauge\nb 3\n# HELP c_created A gauge so named.\n\
                           # TYPE c_created gauge\nc_created 1\n# EOF\n";
        let expected = "# HELP a_seconds_total Time.\n# TYPE a_seconds_total counter\na_seconds_total{port=\"p1\"} 1.5\n\
                        # HELP b Bytes.\n# TYPE b gauge\nb 3\n# HELP c_created A gauge so named.\n\
                        # TYPE c_created gauge\nc_created 1\n";
        assert_eq!(text_004(openmetrics), expected);
    }

    fn snapshot() -> Snapshot {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/default.toml");
        let (config, _) = crate::config::load(&file).expect("the default config");
        let (switch, _) = pfcswitch_switch::switch::Switch::new(&config).expect("a switch");
        let mut snapshot = Snapshot::of(&switch, &config, pfcswitch_link::time::Instant::ZERO, 1.5);
        let p3 = &mut snapshot.ports[2].priorities;
        *p3[3].drops.values_mut().next().unwrap() = 7;
        *p3[0].drops.values_mut().next().unwrap() = 9;
        p3[0].rx_frames = 42;
        snapshot
    }

    #[test]
    fn both_formats_carry_the_contract_families_and_lossless_drops() {
        let snapshot = Arc::new(snapshot());
        let text = render(snapshot.clone(), Format::Text004);
        let openmetrics = render(snapshot, Format::OpenMetrics);
        for family in ["pfcswitch_rx_frames_total", "pfcswitch_paused_seconds_total", "pfcswitch_lossless_drops_total"]
        {
            assert!(text.contains(&format!("# TYPE {family} counter\n")), "{family}:\n{text}");
            let bare = family.strip_suffix("_total").unwrap();
            assert!(openmetrics.contains(&format!("# TYPE {bare} counter\n")), "{family}:\n{openmetrics}");
        }
        for rendered in [&text, &openmetrics] {
            assert!(rendered.contains("pfcswitch_rx_frames_total{port=\"p3\",priority=\"0\"} 42\n"));
            assert!(rendered.contains("# TYPE pfcswitch_ingress_bytes gauge\n"));
            assert!(rendered.contains("pfcswitch_info{switch=\"sw1\","));
        }
        assert!(openmetrics.ends_with("# EOF\n") && !text.contains("# EOF"));
        let lossless: Vec<&str> = text.lines().filter(|l| l.starts_with("pfcswitch_lossless_drops_total{")).collect();
        assert!(!lossless.is_empty() && lossless.iter().all(|l| l.contains("priority=\"3\"")), "{lossless:?}");
        assert!(
            lossless.iter().any(|l| l.starts_with("pfcswitch_lossless_drops_total{port=\"p3\"") && l.ends_with(" 7"))
        );
        assert!(
            text.lines()
                .any(|l| l.starts_with("pfcswitch_drops_total{port=\"p3\",priority=\"0\"") && l.ends_with(" 9"))
        );
    }

    /// The shipped alert rules query families the endpoint really exports, with the labels
    /// they group by: a renamed family would leave an alert that never fires.
    #[test]
    fn every_family_the_alert_rules_use_is_exported_per_port_or_per_port_and_priority() {
        let rules = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/pfcswitch-alerts.yml");
        let rules = std::fs::read_to_string(rules).expect("configs/pfcswitch-alerts.yml");
        let text = render(Arc::new(snapshot()), Format::Text004);
        let mut names: Vec<&str> = rules
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .filter(|word| word.starts_with("pfcswitch_"))
            .collect();
        names.sort_unstable();
        names.dedup();
        assert!(names.len() >= 4, "{names:?}");
        for name in names {
            let per_priority = format!("{name}{{port=\"p1\",priority=\"3\"");
            let per_port = format!("{name}{{port=\"p1\"}}");
            assert!(
                text.lines().any(|l| l.starts_with(&per_priority) || l.starts_with(&per_port)),
                "{per_priority} or {per_port} not exported:\n{text}"
            );
        }
    }

    /// The text exposition of configs/default.toml's switch, as `edit` changes it, freshly
    /// built; asserts it has each of `samples`, and returns it.
    fn default_switch_exports(
        edit: impl FnOnce(&mut pfcswitch_switch::config::SwitchConfig),
        samples: &[&str],
    ) -> String {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/default.toml");
        let (mut config, _) = crate::config::load(&file).expect("the default config");
        edit(&mut config);
        let (switch, _) = pfcswitch_switch::switch::Switch::new(&config).expect("a switch");
        let snapshot = Snapshot::of(&switch, &config, pfcswitch_link::time::Instant::ZERO, 1.5);
        let text = render(Arc::new(snapshot), Format::Text004);
        for sample in samples {
            assert!(text.lines().any(|l| l == *sample), "{sample} not exported:\n{text}");
        }
        text
    }

    #[test]
    fn ofc_families_are_exported_per_port_and_lossless_priority() {
        let text = default_switch_exports(
            |config| config.policy.kind = pfcswitch_switch::config::PolicyKind::Ofc,
            &[
                "pfcswitch_ofc_congested_flows{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_ofc_tx_frames_total{port=\"p1\",priority=\"3\",kind=\"pause\"} 0",
                "pfcswitch_ofc_decisions_total{port=\"p1\",priority=\"3\",congestion=\"original\"} 0",
                "pfcswitch_ofc_table_full_total{port=\"p1\",priority=\"3\",table=\"pause_frame_tab\"} 0",
                "pfcswitch_ofc_table_bytes{port=\"p1\",priority=\"3\",table=\"flow_in_port_tab\"} 0",
                "pfcswitch_ofc_rotations_total{port=\"p1\",priority=\"3\"} 0",
            ],
        );
        assert!(!text.contains("pfcswitch_ofc_congested_flows{port=\"p1\",priority=\"0\""), "lossless only");
    }

    #[test]
    fn buffer_families_are_exported_per_pool_and_per_lossless_pg() {
        let text = default_switch_exports(
            |config| {
                let tables: pfcswitch_switch::config::BufferConfig = toml::from_str(
                    "mode = \"pools\"\n\
                     [pools.ingress_lossless_pool]\ntype = \"ingress\"\nsize = 100000\nxoff = 50000\n\
                     [pools.egress_lossy_pool]\ntype = \"egress\"\nsize = 100000\n\
                     [profiles.pg_lossless]\npool = \"ingress_lossless_pool\"\ndynamic_th = 0\n\
                     [profiles.q_lossy]\npool = \"egress_lossy_pool\"\nsize = 1000\ndynamic_th = 1\n\
                     [pg]\n\"*|3\" = \"pg_lossless\"\n[queue]\n\"*|0-2,4-7\" = \"q_lossy\"\n",
                )
                .expect("tables");
                config.buffer = tables;
                let defaults = pfcswitch_switch::config::PfcConfig::default();
                (config.pfc.xoff, config.pfc.xon, config.pfc.max) = (defaults.xoff, defaults.xon, None);
            },
            &[
                "pfcswitch_buffer_pool_size_bytes{pool=\"ingress_lossless_pool\",kind=\"ingress\"} 100000",
                "pfcswitch_buffer_pool_used_bytes{pool=\"egress_lossy_pool\",kind=\"egress\"} 0",
                "pfcswitch_buffer_pool_headroom_watermark_bytes{pool=\"ingress_lossless_pool\",kind=\"ingress\"} 0",
                // An empty pool: alpha = 1 of 100000 free bytes.
                "pfcswitch_pg_xoff_threshold_bytes{port=\"p1\",priority=\"3\"} 100000",
                "pfcswitch_pg_headroom_watermark_bytes{port=\"p1\",priority=\"3\"} 0",
                // The reserve and alpha = 2 of 100000 free bytes, capped by nothing but the pool.
                "pfcswitch_queue_limit_bytes{port=\"p1\",priority=\"0\"} 201000",
            ],
        );
        assert!(!text.contains("pfcswitch_queue_limit_bytes{port=\"p1\",priority=\"3\"}"), "lossless: unbounded");
    }

    #[test]
    fn fecn_families_are_exported_per_rate_point() {
        let text = default_switch_exports(
            |config| config.fecn.priorities = vec![3],
            &[
                "pfcswitch_fecn_probes_total{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_fecn_probes_marked_total{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_fecn_intervals_total{port=\"p1\",priority=\"3\"} 0",
            ],
        );
        assert!(!text.contains("pfcswitch_fecn_probes_total{port=\"p1\",priority=\"0\""), "monitored priorities only");
        // Before the first interval: r0 = C / N0.
        let speed =
            crate::config::load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/default.toml"))
                .expect("the default config")
                .0
                .ports[1]
                .speed
                .bps() as f64;
        let advertised = format!("pfcswitch_fecn_advertised_rate_bps{{port=\"p1\",priority=\"3\"}} {:?}", speed / 10.0);
        assert!(text.lines().any(|l| l == advertised), "{advertised} not exported:\n{text}");
    }

    #[test]
    fn int_families_are_exported_per_stamping_port_and_outcome_with_int_on_only() {
        let text = default_switch_exports(
            |config| {
                config.int.priorities = vec![3];
                config.int.ports = vec!["p1".into(), "p2".into()];
                config.int.node_id = Some(7);
            },
            &[
                "pfcswitch_int_info{node_id=\"7\",queue=\"port\"} 1",
                "pfcswitch_int_frames_total{port=\"p1\",outcome=\"stamped\"} 0",
                "pfcswitch_int_frames_total{port=\"p1\",outcome=\"hop_limit\"} 0",
                "pfcswitch_int_frames_total{port=\"p1\",outcome=\"mtu\"} 0",
                "pfcswitch_int_frames_total{port=\"p2\",outcome=\"flooded\"} 0",
                "pfcswitch_int_frames_total{port=\"p2\",outcome=\"malformed\"} 0",
            ],
        );
        assert!(text.contains("# TYPE pfcswitch_int_frames_total counter\n"), "{text}");
        assert!(!text.contains("pfcswitch_int_frames_total{port=\"p3\""), "stamping ports only:\n{text}");
        // Every port stamps when `int.ports` is empty; the node ID defaults to the name's hash.
        let node_id = pfcswitch_switch::int::default_node_id("sw1");
        default_switch_exports(
            |config| config.int.priorities = vec![3],
            &[
                &format!("pfcswitch_int_info{{node_id=\"{node_id}\",queue=\"port\"}} 1"),
                "pfcswitch_int_frames_total{port=\"p3\",outcome=\"stamped\"} 0",
            ],
        );
        let off = default_switch_exports(|_| {}, &[]);
        assert!(!off.contains("pfcswitch_int_"), "INT off: no families:\n{off}");
    }

    /// A snapshot's INT counters reach the samples, each under its own outcome.
    #[test]
    fn int_counts_are_exported_under_their_outcome() {
        let mut snapshot = snapshot();
        snapshot.int = Some(pfcswitch_switch::report::IntReport {
            node_id: 1,
            settings: pfcswitch_switch::int::IntConfig { priorities: vec![3], ..Default::default() },
        });
        snapshot.ports[0].int =
            pfcswitch_switch::counters::IntCounters { stamped: 11, hop_limit: 12, mtu: 13, flooded: 14, malformed: 15 };
        let text = render(Arc::new(snapshot), Format::Text004);
        for (outcome, n) in [("stamped", 11), ("hop_limit", 12), ("mtu", 13), ("flooded", 14), ("malformed", 15)] {
            let sample = format!("pfcswitch_int_frames_total{{port=\"p1\",outcome=\"{outcome}\"}} {n}");
            assert!(text.lines().any(|l| l == sample), "{sample} not exported:\n{text}");
        }
    }

    #[test]
    fn qcn_families_are_exported_per_congestion_point() {
        let text = default_switch_exports(
            |config| config.qcn.priorities = vec![3],
            &[
                "pfcswitch_qcn_queue_bytes{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_qcn_samples_total{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_qcn_cnms_sent_total{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_qcn_cnms_dropped_total{port=\"p1\",priority=\"3\"} 0",
                "pfcswitch_qcn_cnm_feedback_total{port=\"p1\",priority=\"3\",qntzfb=\"56-63\"} 0",
            ],
        );
        assert!(!text.contains("pfcswitch_qcn_samples_total{port=\"p1\",priority=\"0\""), "monitored priorities only");
    }
}
