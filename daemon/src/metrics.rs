//! The Prometheus endpoint. Counters live in the core as plain integers owned by the datapath
//! thread; a scrape asks the datapath for a snapshot and renders it here, so the per-frame
//! path never touches a shared counter.

use crate::control::DatapathHandle;
use pfcswitch_core::report::{
    CapfcInputReport, CapfcReport, ControlRequest, ControlResponse, PriorityReport, Snapshot,
};
use std::fmt::Write as _;
use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

/// Text exposition format 0.0.4, one HELP/TYPE block per family.
struct Exposition {
    text: String,
}

impl Exposition {
    fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}\n# TYPE {name} {kind}");
    }

    fn sample(&mut self, name: &str, labels: &[(&str, &str)], value: f64) {
        self.text.push_str(name);
        if !labels.is_empty() {
            self.text.push('{');
            for (i, (key, val)) in labels.iter().enumerate() {
                let sep = if i == 0 { "" } else { "," };
                let escaped = val.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
                let _ = write!(self.text, "{sep}{key}=\"{escaped}\"");
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {value}");
    }

    /// A family with one sample per (port, priority).
    fn per_priority(
        &mut self,
        snapshot: &Snapshot,
        name: &str,
        kind: &str,
        help: &str,
        value: impl Fn(&PriorityReport) -> f64,
    ) {
        self.family(name, kind, help);
        for port in &snapshot.ports {
            for p in &port.priorities {
                let priority = p.priority.to_string();
                self.sample(name, &[("port", &port.name), ("priority", &priority)], value(p));
            }
        }
    }
}

fn flag(value: bool) -> f64 {
    if value { 1.0 } else { 0.0 }
}

/// CaPFC's state (§II): D and I per input, E per (input, egress), C and WARN activations per
/// egress queue; lossless priorities only.
fn render_capfc(out: &mut Exposition, capfc: &CapfcReport) {
    let input_flag = |out: &mut Exposition, name: &str, help: &str, value: fn(&CapfcInputReport) -> bool| {
        out.family(name, "gauge", help);
        for input in &capfc.inputs {
            let priority = input.priority.to_string();
            out.sample(name, &[("port", &input.port), ("priority", &priority)], flag(value(input)));
        }
    };
    input_flag(out, "pfcswitch_capfc_paused", "CaPFC D(i,p): 1 while the input asks its peer to pause.", |i| i.paused);
    input_flag(out, "pfcswitch_capfc_ingress_congested", "CaPFC I(i,p): the ingress queue is above XOFF.", |i| {
        i.ingress_congested
    });
    out.family(
        "pfcswitch_capfc_egress_signal",
        "gauge",
        "CaPFC E(i,o,p): 1 while egress queue `egress` holds input `port` responsible for its congestion.",
    );
    for queue in &capfc.queues {
        let priority = queue.priority.to_string();
        for input in queue.arrivals.keys() {
            let value = flag(queue.signalled.contains(input));
            let labels = [("port", input.as_str()), ("egress", queue.port.as_str()), ("priority", &priority)];
            out.sample("pfcswitch_capfc_egress_signal", &labels, value);
        }
    }
    out.family("pfcswitch_capfc_arrivals", "gauge", "CaPFC C(i,o,p): frames counted from input `port` since WARN.");
    for queue in &capfc.queues {
        let priority = queue.priority.to_string();
        for (input, &count) in &queue.arrivals {
            let labels = [("port", input.as_str()), ("egress", queue.port.as_str()), ("priority", &priority)];
            out.sample("pfcswitch_capfc_arrivals", &labels, f64::from(count));
        }
    }
    out.family("pfcswitch_capfc_warn_activations_total", "counter", "Times the egress queue crossed WARN.");
    for queue in &capfc.queues {
        let labels = [("port", queue.port.as_str()), ("priority", &queue.priority.to_string())];
        out.sample("pfcswitch_capfc_warn_activations_total", &labels, queue.warn_activations as f64);
    }
}

/// Renders every metric family of a snapshot.
pub fn render(snapshot: &Snapshot) -> String {
    let mut out = Exposition { text: String::with_capacity(64 * 1024) };
    out.family("pfcswitch_info", "gauge", "Switch identity; the value is always 1.");
    out.sample(
        "pfcswitch_info",
        &[("switch", &snapshot.switch), ("version", &snapshot.version), ("policy", &snapshot.policy)],
        1.0,
    );
    out.family("pfcswitch_uptime_seconds", "gauge", "Seconds since pfcswitchd started.");
    out.sample("pfcswitch_uptime_seconds", &[], snapshot.uptime_seconds);
    out.family("pfcswitch_frames_held", "gauge", "Frames the switch holds in its pipeline and egress queues.");
    out.sample("pfcswitch_frames_held", &[], snapshot.frames_held as f64);

    out.per_priority(snapshot, "pfcswitch_rx_frames_total", "counter", "Data frames received.", |p| p.rx_frames as f64);
    out.per_priority(snapshot, "pfcswitch_tx_frames_total", "counter", "Data frames sent.", |p| p.tx_frames as f64);
    out.per_priority(
        snapshot,
        "pfcswitch_rx_bytes_total",
        "counter",
        "Bytes of data frames received (without FCS).",
        |p| p.rx_bytes as f64,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_tx_bytes_total",
        "counter",
        "Bytes of data frames sent (without FCS).",
        |p| p.tx_bytes as f64,
    );
    out.family("pfcswitch_drops_total", "counter", "Frames (or flooded copies) dropped, by reason.");
    for port in &snapshot.ports {
        for p in &port.priorities {
            let priority = p.priority.to_string();
            for (reason, &count) in &p.drops {
                out.sample(
                    "pfcswitch_drops_total",
                    &[("port", &port.name), ("priority", &priority), ("reason", reason)],
                    count as f64,
                );
            }
        }
    }
    out.per_priority(
        snapshot,
        "pfcswitch_pfc_tx_frames_total",
        "counter",
        "PFC frames sent with this class enabled.",
        |p| p.pfc_tx as f64,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_pfc_rx_frames_total",
        "counter",
        "PFC frames received with this class enabled.",
        |p| p.pfc_rx as f64,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_xoff_to_xon_total",
        "counter",
        "Transitions of this ingress from XOFF to XON.",
        |p| p.xoff_to_xon as f64,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_ingress_bytes",
        "gauge",
        "Ingress accounting: bytes received and not yet sent.",
        |p| p.ingress_bytes as f64,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_ingress_high_water_bytes",
        "gauge",
        "Highest ingress accounting since the last reset.",
        |p| p.ingress_high_water as f64,
    );
    out.per_priority(snapshot, "pfcswitch_egress_queue_bytes", "gauge", "Bytes in the egress queue.", |p| {
        p.egress_bytes as f64
    });
    out.per_priority(
        snapshot,
        "pfcswitch_egress_high_water_bytes",
        "gauge",
        "Highest egress queue since the last reset.",
        |p| p.egress_high_water as f64,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_peer_paused",
        "gauge",
        "1 while the peer pauses our egress on this priority.",
        |p| flag(p.peer_paused),
    );
    out.per_priority(snapshot, "pfcswitch_pausing_peer", "gauge", "1 while we assert XOFF towards the peer.", |p| {
        flag(p.pausing_peer)
    });
    out.per_priority(
        snapshot,
        "pfcswitch_paused_seconds_total",
        "counter",
        "Time our egress was paused by the peer.",
        |p| p.paused_seconds,
    );
    out.per_priority(
        snapshot,
        "pfcswitch_pausing_seconds_total",
        "counter",
        "Time we asserted XOFF towards the peer.",
        |p| p.pausing_seconds,
    );

    if let Some(capfc) = &snapshot.capfc {
        render_capfc(&mut out, capfc);
    }
    out.family("pfcswitch_pause_rx_frames_total", "counter", "802.3x PAUSE frames received.");
    for port in &snapshot.ports {
        out.sample("pfcswitch_pause_rx_frames_total", &[("port", &port.name)], port.pause_rx as f64);
    }
    out.family("pfcswitch_malformed_frames_total", "counter", "Frames that failed to parse, by layer and reason.");
    for port in &snapshot.ports {
        for (reason, &count) in &port.malformed {
            out.sample("pfcswitch_malformed_frames_total", &[("port", &port.name), ("reason", reason)], count as f64);
        }
    }
    out.family(
        "pfcswitch_xdp_rx_frames_total",
        "counter",
        "Frames the XDP classifier saw, by the priority it assigned.",
    );
    for port in &snapshot.ports {
        for (priority, &frames) in port.xdp.iter().flat_map(|x| x.rx_frames.iter().enumerate()) {
            out.sample(
                "pfcswitch_xdp_rx_frames_total",
                &[("port", &port.name), ("priority", &priority.to_string())],
                frames as f64,
            );
        }
    }
    out.family("pfcswitch_xdp_drops_total", "counter", "Frames the XDP classifier dropped, by reason.");
    for port in &snapshot.ports {
        for (reason, &count) in port.xdp.iter().flat_map(|x| x.drops.iter()) {
            out.sample("pfcswitch_xdp_drops_total", &[("port", &port.name), ("reason", reason)], count as f64);
        }
    }
    if let Some(datapath) = &snapshot.datapath {
        out.family("pfcswitch_umem_frames_free", "gauge", "UMEM frames on the free list.");
        out.sample("pfcswitch_umem_frames_free", &[], datapath.umem_frames_free as f64);
        out.family("pfcswitch_umem_frames", "gauge", "UMEM frames in all.");
        out.sample("pfcswitch_umem_frames", &[], datapath.umem_frames as f64);
        out.family(
            "pfcswitch_xsk_rx_dropped_total",
            "counter",
            "Frames the kernel could not deliver to the AF_XDP sockets.",
        );
        out.sample("pfcswitch_xsk_rx_dropped_total", &[], datapath.xsk_rx_dropped as f64);
        out.family(
            "pfcswitch_xdp_meta_missing_total",
            "counter",
            "Received frames without the classifier's metadata block.",
        );
        out.sample("pfcswitch_xdp_meta_missing_total", &[], datapath.meta_missing as f64);
        out.family("pfcswitch_timer_lateness_seconds", "summary", "How late the datapath woke for its deadlines.");
        for (quantile, micros) in [("0.5", datapath.timer_late_p50_us), ("0.99", datapath.timer_late_p99_us)] {
            out.sample("pfcswitch_timer_lateness_seconds", &[("quantile", quantile)], micros / 1e6);
        }
        out.sample("pfcswitch_timer_lateness_seconds_sum", &[], datapath.timer_late_sum_seconds);
        out.sample("pfcswitch_timer_lateness_seconds_count", &[], datapath.timer_wakeups as f64);
        out.family("pfcswitch_resident_memory_bytes", "gauge", "Resident memory of pfcswitchd.");
        out.sample("pfcswitch_resident_memory_bytes", &[], datapath.resident_bytes as f64);
    }
    out.text
}

/// Serves `GET /metrics` on `address` from a thread.
pub fn serve(address: &str, handle: DatapathHandle) -> io::Result<()> {
    let listener = TcpListener::bind(address)?;
    std::thread::Builder::new().name("metrics".into()).spawn(move || {
        for stream in listener.incoming().flatten() {
            if let Err(error) = respond(stream, &handle) {
                log::debug!("metrics client: {error}");
            }
        }
    })?;
    Ok(())
}

fn respond(mut stream: TcpStream, handle: &DatapathHandle) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut request = Vec::new();
    let mut buffer = [0u8; 1024];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 16 * 1024 {
        let n = stream.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        request.extend_from_slice(&buffer[..n]);
    }
    let line = String::from_utf8_lossy(&request);
    let target = line.split_whitespace().nth(1).unwrap_or("");
    let (status, content_type, body) = match (line.starts_with("GET "), target) {
        (true, "/metrics") => match handle.call(ControlRequest::Snapshot) {
            ControlResponse::Snapshot(snapshot) => {
                ("200 OK", "text/plain; version=0.0.4; charset=utf-8", render(&snapshot))
            }
            other => ("503 Service Unavailable", "text/plain", format!("{other:?}\n")),
        },
        (true, "/") => ("200 OK", "text/html", "<a href=\"/metrics\">metrics</a>\n".into()),
        _ => ("404 Not Found", "text/plain", "try /metrics\n".into()),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}
