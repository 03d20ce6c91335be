//! Why PFC did or did not fire: per lossless priority group, the XOFF point in force and the
//! rule behind it, the peak against it, the headroom used against what the link needs, the
//! PFC frames each way with the time paused, the drops with the rule that caused them, and
//! one sentence of verdict (`pfcswitch pfc explain`, and `pfc_explain` in results.json).

use crate::report::{HeadroomReport, PgReport, PortReport, PriorityReport, Snapshot};
use pfcswitch_link::units::{BitRate, ByteSize, format_duration};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One lossless (port, priority) since the counters and watermarks were last cleared.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PgExplanation {
    pub port: String,
    pub priority: u8,
    /// The XOFF point in force now, on the priority group's bytes.
    pub xoff_bytes: u64,
    /// How it is computed: `[pfc] xoff` (static) or α × the pool's free space (dynamic).
    pub xoff_rule: String,
    /// The most the priority group held.
    pub peak_bytes: u64,
    /// Room above XOFF for what arrives after the PFC frame leaves.
    pub headroom_bytes: u64,
    pub headroom_peak_bytes: u64,
    /// What the link needs above XOFF: its round trip and response time at its speed, and
    /// the frames in flight (docs/buffers.md, "Headroom from the link").
    pub headroom_needed_bytes: u64,
    /// PFC frames this port sent for the priority, and how long it paused its peer.
    pub pfc_tx: u64,
    pub pausing_seconds: f64,
    /// PFC frames the peer sent for the priority, and how long it paused this port's egress.
    pub pfc_rx: u64,
    pub paused_seconds: f64,
    /// The drops of this port and priority, by reason (non-zero only).
    pub drops: BTreeMap<String, u64>,
    pub verdict: String,
}

/// Every lossless priority group of `snapshot`, ports in order.
pub fn explain(snapshot: &Snapshot) -> Vec<PgExplanation> {
    let Some(buffer) = &snapshot.buffer else { return Vec::new() };
    let lossless = buffer.priority_groups.iter().filter(|pg| pg.lossless);
    lossless
        .filter_map(|pg| {
            let port = snapshot.ports.iter().find(|p| p.name == pg.port)?;
            let priority = port.priorities.iter().find(|q| q.priority == pg.priority)?;
            let link = buffer.headroom.iter().find(|h| h.port == pg.port)?;
            Some(explain_pg(snapshot, pg, port, priority, link))
        })
        .collect()
}

fn explain_pg(
    snapshot: &Snapshot,
    pg: &PgReport,
    port: &PortReport,
    priority: &PriorityReport,
    link: &HeadroomReport,
) -> PgExplanation {
    let xoff = pg.xoff_threshold_bytes.unwrap_or(0);
    let xoff_rule = match pg.dynamic_th {
        Some(k) => format!("dynamic: α = 2^{k} ({}) × the free space of profile {}'s pool", alpha(k), pg.profile),
        None if pg.profile == "[pfc]" => format!("static: [pfc] xoff = {}", ByteSize(snapshot.pfc.xoff_bytes)),
        None => format!("static: profile {}", pg.profile),
    };
    let drops: BTreeMap<String, u64> =
        priority.drops.iter().filter(|&(_, &n)| n > 0).map(|(reason, &n)| (reason.clone(), n)).collect();
    let mut explanation = PgExplanation {
        port: port.name.clone(),
        priority: pg.priority,
        xoff_bytes: xoff,
        xoff_rule,
        peak_bytes: pg.watermark_bytes,
        headroom_bytes: pg.headroom_size_bytes,
        headroom_peak_bytes: pg.headroom_watermark_bytes,
        headroom_needed_bytes: link.headroom_bytes,
        pfc_tx: priority.pfc_tx,
        pausing_seconds: priority.pausing_seconds,
        pfc_rx: priority.pfc_rx,
        paused_seconds: priority.paused_seconds,
        drops,
        verdict: String::new(),
    };
    explanation.verdict = verdict(&explanation, link, snapshot);
    explanation
}

/// The sentence: drops first (the rule that caused the worst one), then whether XOFF was
/// reached, then what the peer did.
fn verdict(e: &PgExplanation, link: &HeadroomReport, snapshot: &Snapshot) -> String {
    let worst = e.drops.iter().max_by_key(|(_, n)| **n);
    // XOFF asserted: a PFC frame sent or due (still queued), or a peak at the threshold.
    let reached = e.pfc_tx > 0 || e.pausing_seconds > 0.0 || e.peak_bytes >= e.xoff_bytes;
    let mut sentence = match worst {
        Some((reason, n)) => format!("dropped {n} at {reason}: {}", drop_rule(reason, e, link, snapshot)),
        None if !reached => {
            format!("never reached XOFF: peak {} of {}", kb(e.peak_bytes), kb(e.xoff_bytes))
        }
        None => format!(
            "reached XOFF: {} PFC frames paused the peer for {:.3} s; headroom peak {} of {} (the link needs {}); no drop",
            e.pfc_tx,
            e.pausing_seconds,
            kb(e.headroom_peak_bytes),
            kb(e.headroom_bytes),
            kb(e.headroom_needed_bytes)
        ),
    };
    if e.drops.is_empty() && reached && e.headroom_bytes < e.headroom_needed_bytes {
        sentence += "; but the headroom is below the link's need: a slower peer would overrun it";
    }
    if e.pfc_rx > 0 {
        sentence +=
            &format!("; the peer paused this egress with {} PFC frames for {:.3} s", e.pfc_rx, e.paused_seconds);
    }
    sentence
}

fn drop_rule(reason: &str, e: &PgExplanation, link: &HeadroomReport, snapshot: &Snapshot) -> String {
    match reason {
        "ingress_max" => format!(
            "headroom {}, the link needs {} at {} with a {} response",
            kb(e.headroom_bytes),
            kb(e.headroom_needed_bytes),
            BitRate::from_bps(link.speed_bps).map_or_else(|| format!("{} bps", link.speed_bps), |r| r.to_string()),
            format_duration(Duration::from_nanos(link.response_time_ns))
        ),
        "egress_full" => {
            format!("its egress queue was full and policy {} drops there rather than pause", snapshot.policy)
        }
        "no_buffer" => "the shared buffer (or the switch's frame descriptors) had no room at ingress".into(),
        "pfcwd" => format!("the PFC watchdog's {} action on a stormed queue", snapshot.pfcwd.action.name()),
        "link_down" => "its link was down: what the port held and what arrived for it".into(),
        "filtered" => "the destination was learned on the port it came from".into(),
        "link_local" => "link-local destinations (01-80-C2-00-00-0x) are never forwarded".into(),
        other => format!("{other} (see docs/switch-core.md)"),
    }
}

fn alpha(k: i8) -> String {
    if k >= 0 { format!("{}", 1u64 << k) } else { format!("1/{}", 1u64 << -k) }
}

/// Bytes for a sentence: `950B`, `1.1KB`, `170KB`, `129.7KB`.
fn kb(bytes: u64) -> String {
    match bytes {
        b if b < 1000 => format!("{b}B"),
        b => format!("{:.1}KB", b as f64 / 1e3).replace(".0KB", "KB"),
    }
}
