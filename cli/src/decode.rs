//! `pfcswitch frame decode`: what pfcswitch_wire reads in each frame, as text or JSON.

use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    AethSyndrome, ErrorKind, FrameView, L2Repr, Layer, MacControlRepr, OfcRepr, RoceFrame, ethertype, icrc,
};
use serde_json::{Map, Value, json};
use std::fmt::Write as _;
use std::time::Duration;

/// One decoded frame: a tcpdump-style line and the same content as JSON.
pub struct Decoded {
    pub text: String,
    pub json: Value,
}

/// Decodes `frame`; with `speed`, pause times are also given as durations at that speed.
pub fn decode(frame: &[u8], speed: Option<BitRate>) -> Decoded {
    let mut text = String::new();
    let mut json = Map::new();
    json.insert("length".into(), json!(frame.len()));
    match FrameView::parse(frame) {
        Ok(view) => {
            describe_l2(&view.l2, &mut text, &mut json);
            describe_payload(&view, speed, &mut text, &mut json);
        }
        Err(error) => malformed(&error, &mut text, &mut json),
    }
    Decoded { text, json: Value::Object(json) }
}

fn malformed(error: &pfcswitch_wire::Error, text: &mut String, json: &mut Map<String, Value>) {
    let _ = write!(text, "malformed: {error}");
    json.insert("kind".into(), json!("malformed"));
    json.insert("error".into(), json!({ "layer": error.layer.name(), "reason": error.kind.name() }));
}

fn describe_l2(l2: &L2Repr, text: &mut String, json: &mut Map<String, Value>) {
    let _ = write!(text, "{} > {}", l2.src, l2.dst);
    json.insert("src".into(), json!(l2.src.to_string()));
    json.insert("dst".into(), json!(l2.dst.to_string()));
    if let Some(vlan) = l2.vlan {
        let _ = write!(text, " vlan pcp={} dei={} vid={}", vlan.pcp, u8::from(vlan.dei), vlan.vid);
        json.insert("vlan".into(), json!({ "pcp": vlan.pcp.value(), "dei": vlan.dei, "vid": vlan.vid }));
    }
    if let Some(cn_tag) = l2.cn_tag {
        let _ = write!(text, " cn-tag flow={}", cn_tag.flow_id);
        json.insert("cn_tag".into(), json!({ "flow_id": cn_tag.flow_id }));
    }
    json.insert("ethertype".into(), json!(format!("0x{:04x}", l2.ethertype)));
}

fn describe_payload(view: &FrameView<'_>, speed: Option<BitRate>, text: &mut String, json: &mut Map<String, Value>) {
    let result = match view.l2.ethertype {
        ethertype::MAC_CONTROL => view.mac_control().and_then(|repr| {
            describe_mac_control(&repr, speed, text, json);
            view.ofc().map(|ofc| ofc.map(|ofc| describe_ofc(&ofc, text, json)).unwrap_or_default())
        }),
        ethertype::CNM => view.cnm().map(|cnm| {
            let _ = write!(
                text,
                " CNM cpid=0x{:016x} fb={} qoffset={} qdelta={} encap-prio={} encap-dst={} msdu-len={} ({} bytes encapsulated)",
                cnm.cpid,
                cnm.quantized_feedback,
                cnm.q_offset,
                cnm.q_delta,
                cnm.encapsulated_priority,
                cnm.encapsulated_dst,
                cnm.msdu_len,
                cnm.msdu.len()
            );
            json.insert("kind".into(), json!("cnm"));
            json.insert(
                "cnm".into(),
                json!({
                    "quantized_feedback": cnm.quantized_feedback, "cpid": cnm.cpid, "q_offset": cnm.q_offset,
                    "q_delta": cnm.q_delta, "encapsulated_priority": cnm.encapsulated_priority.value(),
                    "encapsulated_dst": cnm.encapsulated_dst.to_string(), "msdu_len": cnm.msdu_len,
                    "msdu": hex(cnm.msdu),
                }),
            );
        }),
        ethertype::LOCAL_EXPERIMENTAL_1 if view.payload.first().is_some_and(|b| b >> 4 == 0) => {
            let _ = write!(text, " host announcement");
            json.insert("kind".into(), json!("announcement"));
            Ok(())
        }
        ethertype::LOCAL_EXPERIMENTAL_1 => view.fecn_probe().map(|probe| {
            let _ = write!(
                text,
                " FECN {} flow={} seq={} rate={}kbps hops={} bottleneck={} ts={}ns",
                probe.subtype.name(),
                probe.flow_id,
                probe.sequence,
                probe.rate_kbps,
                probe.hops,
                probe.bottleneck,
                probe.timestamp_ns
            );
            json.insert("kind".into(), json!("fecn"));
            json.insert(
                "fecn".into(),
                json!({
                    "subtype": probe.subtype.name(), "flow_id": probe.flow_id, "sequence": probe.sequence,
                    "rate_kbps": probe.rate_kbps, "hops": probe.hops, "bottleneck": probe.bottleneck.to_string(),
                    "timestamp_ns": probe.timestamp_ns,
                }),
            );
        }),
        ethertype::IPV4 if is_roce(view) => view.roce().map(|roce| describe_roce(&roce, text, json)),
        ethertype::IPV4 if view.traffic().is_ok() => view.traffic().map(|(ip, udp, traffic)| {
            let _ = write!(
                text,
                " IPv4 {}:{} > {}:{} dscp={} {:?} flow={} seq={} msg={} msg-len={} offset={} ts={}ns",
                ip.src,
                udp.src_port,
                ip.dst,
                udp.dst_port,
                ip.dscp,
                traffic.kind,
                traffic.flow_id,
                traffic.sequence,
                traffic.message_id,
                traffic.message_len,
                traffic.offset,
                traffic.timestamp_ns
            );
            json.insert("kind".into(), json!("traffic"));
            json.insert("ipv4".into(), json!({ "src": ip.src.to_string(), "dst": ip.dst.to_string(), "dscp": ip.dscp }));
            json.insert("udp".into(), json!({ "src_port": udp.src_port, "dst_port": udp.dst_port }));
            json.insert(
                "traffic".into(),
                json!({
                    "kind": format!("{:?}", traffic.kind).to_lowercase(), "flow_id": traffic.flow_id,
                    "sequence": traffic.sequence, "message_id": traffic.message_id,
                    "message_len": traffic.message_len, "offset": traffic.offset, "timestamp_ns": traffic.timestamp_ns,
                }),
            );
        }),
        other => {
            let dscp = view.dscp().map(|d| format!(" dscp={d}")).unwrap_or_default();
            let _ = write!(text, " ethertype 0x{other:04x}{dscp} ({} bytes)", view.payload.len());
            json.insert("kind".into(), json!("other"));
            Ok(())
        }
    };
    if let Err(error) = result {
        text.push(' ');
        malformed(&error, text, json);
    }
}

/// A UDP datagram to port 4791, malformed or not.
fn is_roce(view: &FrameView<'_>) -> bool {
    match view.roce() {
        Ok(_) => true,
        Err(error) => error.layer == Layer::Roce && error.kind != ErrorKind::WrongEtherType,
    }
}

/// The BTH, AETH and ICRC of a RoCEv2 frame, and the endpoints' traffic repr it carries.
fn describe_roce(roce: &RoceFrame<'_>, text: &mut String, json: &mut Map<String, Value>) {
    let (ip, udp, bth) = (&roce.ip, &roce.udp, &roce.repr.bth);
    let header = roce.packet.bth();
    let flags = [
        (bth.solicited, " se"),
        (header.migreq(), " m"),
        (bth.ack_req, " a"),
        (header.fecn(), " fecn"),
        (header.becn(), " becn"),
    ]
    .iter()
    .filter(|f| f.0)
    .map(|f| f.1)
    .collect::<String>();
    let _ = write!(
        text,
        " IPv4 {}:{} > {}:{} dscp={} ecn={} RoCEv2 {} qp=0x{:06x} psn={} pkey=0x{:04x} pad={}{flags}",
        ip.src,
        udp.src_port,
        ip.dst,
        udp.dst_port,
        ip.dscp,
        ip.ecn,
        bth.opcode.name(),
        bth.dest_qp,
        bth.psn,
        bth.pkey,
        bth.pad_count
    );
    let mut fields = json!({
        "opcode": bth.opcode.value(), "opcode_name": bth.opcode.name(), "dest_qp": bth.dest_qp, "psn": bth.psn,
        "pkey": bth.pkey, "pad_count": bth.pad_count, "solicited": bth.solicited, "migreq": header.migreq(),
        "ack_req": bth.ack_req, "fecn": header.fecn(), "becn": header.becn(), "payload_len": roce.repr.payload_len,
    });
    if let Some(aeth) = roce.repr.aeth {
        let (kind, value) = match aeth.syndrome {
            AethSyndrome::Ack { credits } => ("ack", format!("credits={credits}")),
            AethSyndrome::RnrNak { timer } => ("rnr-nak", format!("timer={timer}")),
            AethSyndrome::Nak(code) => ("nak", format!("code={}", code.value())),
        };
        let _ = write!(text, " aeth={kind} {value} msn={}", aeth.msn);
        fields["aeth"] = json!({ "syndrome": aeth.syndrome.to_byte(), "kind": kind, "msn": aeth.msn });
    }
    let stored = roce.packet.icrc();
    let computed = icrc(&roce.ip_packet[..roce.ip_packet.len() - 4]);
    let status = if roce.icrc.is_ok() { "ok".to_string() } else { format!("BAD, expected 0x{computed:08x}") };
    let _ = write!(text, " payload={} icrc=0x{stored:08x} ({status})", roce.repr.payload_len);
    fields["icrc"] = json!({ "stored": stored, "computed": computed, "valid": roce.icrc.is_ok() });
    json.insert("kind".into(), json!("roce"));
    json.insert(
        "ipv4".into(),
        json!({ "src": ip.src.to_string(), "dst": ip.dst.to_string(), "dscp": ip.dscp, "ecn": ip.ecn }),
    );
    json.insert("udp".into(), json!({ "src_port": udp.src_port, "dst_port": udp.dst_port }));
    json.insert("roce".into(), fields);
}

fn describe_mac_control(
    repr: &MacControlRepr,
    speed: Option<BitRate>,
    text: &mut String,
    json: &mut Map<String, Value>,
) {
    let duration = |quanta: u16| {
        speed.map(|s| format!(" ({} at {s})", format_duration(s.pause_duration(quanta)))).unwrap_or_default()
    };
    match repr {
        MacControlRepr::Pause { quanta } => {
            let _ = write!(text, " PAUSE quanta={quanta}{}", duration(*quanta));
            json.insert("kind".into(), json!("pause"));
            json.insert("pause".into(), json!({ "quanta": quanta }));
        }
        MacControlRepr::Pfc(pfc) => {
            let _ = write!(text, " PFC enable=0x{:02x}", pfc.enable);
            let mut classes = Map::new();
            for (class, quanta) in pfc.classes() {
                let action = if quanta == 0 { "resume".to_string() } else { format!("pause{}", duration(quanta)) };
                let _ = write!(text, " c{class}={quanta} {action}");
                classes.insert(class.to_string(), json!(quanta));
            }
            json.insert("kind".into(), json!("pfc"));
            json.insert("pfc".into(), json!({ "enable": pfc.enable, "classes": classes, "quanta": pfc.quanta }));
        }
    }
}

/// The OFC TLV after the PFC fields: op, flags and the flows.
fn describe_ofc(ofc: &OfcRepr<'_>, text: &mut String, json: &mut Map<String, Value>) {
    let flows: Vec<String> = ofc.flows().map(|flow| flow.to_string()).collect();
    let flags = [(ofc.coarse, " coarse"), (ofc.more, " more")].iter().filter(|f| f.0).map(|f| f.1).collect::<String>();
    let _ =
        write!(text, " OFC {} prio={}{flags} flows={} [{}]", ofc.op.name(), ofc.priority, flows.len(), flows.join(" "));
    json.insert("kind".into(), json!("ofc"));
    json.insert(
        "ofc".into(),
        json!({
            "op": ofc.op.name().to_lowercase(), "priority": ofc.priority.value(), "coarse": ofc.coarse,
            "more": ofc.more, "flows": flows,
        }),
    );
}

/// `512ns`, `5.120µs`, `33.554ms`, `1.000s`.
pub fn format_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    match nanos {
        0..1_000 => format!("{nanos}ns"),
        1_000..1_000_000 => format!("{:.3}µs", nanos as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.3}ms", nanos as f64 / 1e6),
        _ => format!("{:.3}s", nanos as f64 / 1e9),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_wire::{EthernetAddress, PAUSE_MULTICAST, Pcp, PfcRepr, build_mac_control_frame};

    #[test]
    fn pfc_line_names_classes_and_durations() {
        let mut frame = [0u8; 60];
        let pfc = PfcRepr::default().with_class(Pcp::new(3).unwrap(), 65535).with_class(Pcp::new(4).unwrap(), 0);
        build_mac_control_frame(
            &mut frame,
            EthernetAddress([2, 0, 0, 0, 0, 1]),
            PAUSE_MULTICAST,
            &MacControlRepr::Pfc(pfc),
        );
        let decoded = decode(&frame, Some(BitRate::gbps(1)));
        assert_eq!(
            decoded.text,
            "02:00:00:00:00:01 > 01:80:c2:00:00:01 PFC enable=0x18 c3=65535 pause (33.554ms at 1Gbps) c4=0 resume"
        );
        assert_eq!(decoded.json["pfc"]["classes"]["3"], 65535);
    }

    #[test]
    fn malformed_frames_say_why() {
        let decoded = decode(&[0u8; 10], None);
        assert_eq!(decoded.text, "malformed: truncated ethernet header");
        assert_eq!(decoded.json["error"]["reason"], "truncated");
    }
}
