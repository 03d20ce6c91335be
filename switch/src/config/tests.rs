//! Unit tests of the configuration: parsing, defaults and every check of `validate`.

use super::*;
use pfcswitch_link::units::{BitRate, ByteSize, PacketRate};
use std::collections::BTreeMap;
use std::time::Duration;

fn config() -> SwitchConfig {
    SwitchConfig::with_ports("sw1", 3, BitRate::gbps(1))
}

fn rejects(config: &SwitchConfig, key: &str) -> String {
    let err = config.validate().expect_err("config should be rejected");
    assert_eq!(err.key, key, "{err}");
    err.reason
}

#[test]
fn defaults_validate() {
    assert_eq!(config().validate().unwrap(), vec![]);
}

#[test]
fn the_shaper_burst_defaults_to_2_ms_parses_as_a_duration_and_is_bounded() {
    assert_eq!(config().switch.shaper_burst, Duration::from_millis(2));
    let parsed: SwitchConfig = toml::from_str("[switch]\nname = \"sw1\"\nshaper_burst = \"500us\"").unwrap();
    assert_eq!(parsed.switch.shaper_burst, Duration::from_micros(500));
    let mut c = config();
    c.switch.shaper_burst = Duration::from_secs(2);
    assert!(rejects(&c, "switch.shaper_burst").contains("more than 1s of line time"));
}

#[test]
fn threshold_order_is_enforced() {
    let mut c = config();
    c.pfc.xon = ByteSize(50_000);
    assert!(rejects(&c, "pfc.xon").contains("must be below xoff"));
    let mut c = config();
    (c.pfc.xoff, c.pfc.max) = (ByteSize(60_000), Some(ByteSize(60_000)));
    assert!(rejects(&c, "pfc.xoff").contains("must be below max"));
}

#[test]
fn headroom_below_the_bound_is_refused_under_pfc_and_a_warning_otherwise() {
    let mut c = config();
    c.ports[1].speed = BitRate::gbps(10);
    c.pfc.response_time = Duration::from_micros(10);
    c.pfc.max = Some(ByteSize(60_000));
    let reason = rejects(&c, "pfc.max");
    assert!(reason.contains("17460 B") && reason.contains("policy \"pfc\" keeps lossless"), "{reason}");
    c.policy.kind = PolicyKind::PfcWstop;
    let warnings = c.validate().unwrap();
    assert_eq!(warnings.len(), 1, "only the 10G port lacks headroom: {warnings:?}");
    let message = &warnings[0].message;
    // 10 Gbit/s × 10.2 µs = 12750 B, + 3 × 1542 + 84 = 17460 B.
    assert!(
        message.contains("10000 B") && message.contains("17460 B") && message.contains("port[1] `p1`"),
        "{message}"
    );
    assert_eq!(headroom_bound(BitRate::gbps(10), 1500, Duration::from_nanos(100), Duration::from_micros(10)), 17_460);
}

#[test]
fn buffer_keys_of_the_other_mode_are_errors() {
    let mut c = config();
    c.buffer.pool = Some(ByteSize(1));
    assert!(rejects(&c, "buffer.pool").contains("shared"));
    c.buffer.mode = BufferMode::Shared;
    c.buffer.pool = None;
    assert_eq!(
        c.buffer_limits().unwrap(),
        BufferLimits::Shared { reserve: 8_000, pool: 350_000, queue_cap: 80_000, port_cap: 100_000 }
    );
    c.buffer.egress_max = Some(ByteSize(1));
    assert!(rejects(&c, "buffer.egress_max").contains("dedicated"));
}

#[test]
fn egress_full_follows_the_policy() {
    let mut c = config();
    assert_eq!(c.egress_full().unwrap(), EgressFull::Drop);
    c.policy.kind = PolicyKind::PfcWstop;
    assert_eq!(c.egress_full().unwrap(), EgressFull::Stop);
    c.pipeline.egress_full = Some(EgressFull::Drop);
    assert!(rejects(&c, "pipeline.egress_full").contains("contradicts"));
    c.policy.kind = PolicyKind::Capfc;
    c.pipeline.egress_full = Some(EgressFull::Stop);
    assert!(rejects(&c, "pipeline.egress_full").contains("CaPFC never stalls"));
}

#[test]
fn capfc_thresholds_follow_section_iii() {
    let mut c = config();
    c.policy.kind = PolicyKind::Capfc;
    let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
    assert_eq!(keys, ["buffer.egress_max"], "Table II defaults: a full egress queue drops under CaPFC");
    c.policy.cut = 0.0;
    assert!(rejects(&c, "policy.cut").contains("not in (0, 1]"));
    c.policy.cut = 1.0;
    c.policy.egress_xon = ByteSize(25_000);
    assert!(rejects(&c, "policy.egress_xon").contains("below egress_xoff"));
    c.policy.egress_xon = ByteSize(20_000);
    c.policy.egress_warn = ByteSize(19_000);
    assert!(rejects(&c, "policy.egress_warn").contains("at least egress_xon"));
    c.policy.egress_warn = ByteSize(20_000);
    c.buffer.egress_max = Some(ByteSize(24_000));
    assert!(rejects(&c, "policy.egress_xoff").contains("capacity (24000 B)"));
    // Shared memory: a queue holds its reserve plus its share of the pool.
    c.buffer.egress_max = None;
    c.buffer.mode = BufferMode::Shared;
    c.buffer.reserve = Some(ByteSize(5_000));
    c.buffer.queue_cap = Some(ByteSize(15_000));
    assert!(rejects(&c, "policy.egress_xoff").contains("capacity (20000 B)"));
    c.buffer.queue_cap = Some(ByteSize(80_000));
    let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
    assert_eq!(keys, ["buffer.queue_cap"]);
}

/// configs/pfc-only.toml: three 20 Mbit/s ports and only the documented `[pfc]` keys.
fn three_ports_with_pfc_keys_only() -> SwitchConfig {
    toml::from_str(include_str!("../../../configs/pfc-only.toml")).unwrap()
}

#[test]
fn pfc_keeps_lossless_queues_unbounded_and_pfc_wdrop_warns_with_the_numbers() {
    let mut c = three_ports_with_pfc_keys_only();
    assert_eq!(c.validate().unwrap(), vec![], "pfc: admission at ingress only");
    assert_eq!(c.unbounded_egress_mask(), 1 << 3);
    assert_eq!(c.lossless_frames_bound(), 3 * (98_304 / 60));
    assert_eq!(c.lossy_frame_limit(), 4096);
    c.policy.kind = PolicyKind::PfcWdrop;
    assert_eq!(c.unbounded_egress_mask(), 0);
    let warnings = c.validate().unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].key, "buffer.egress_max");
    let message = &warnings[0].message;
    assert!(message.contains("2 ports × pfc.max 98304 B = 196608 B") && message.contains("holds 60000 B"), "{message}");
    c.buffer.egress_max = Some(ByteSize::kib(192));
    assert_eq!(c.validate().unwrap(), vec![], "queues that hold what ingress admits");
}

#[test]
fn ofc_checks_its_thresholds_as_section_3c_says() {
    let paper: SwitchConfig = toml::from_str(include_str!("../../../configs/ofc-paper.toml")).unwrap();
    assert_eq!(paper.validate().unwrap(), vec![], "§IV-A's parameters");
    assert_eq!(paper.ofc_xoff_c(), 67_500);
    assert_eq!(paper.nested_egress_mask(), 1 << 3);
    assert_eq!(paper.unbounded_egress_mask(), 1 << 3, "lossless like pfc");
    let mut c = paper.clone();
    c.policy.alpha = 0.6; // 45 KB = X_ON
    assert!(rejects(&c, "policy.alpha").contains("alpha in (0.600, 1)"));
    c.policy.alpha = 1.0;
    rejects(&c, "policy.alpha");
    c.policy.alpha = 0.8;
    c.policy.flow_table_capacity = 0;
    rejects(&c, "policy.flow_table_capacity");
    let mut other = paper;
    other.policy.kind = PolicyKind::Pfc;
    other.policy.alpha = 5.0;
    assert_eq!(other.validate().unwrap(), vec![], "alpha is OFC's only");
    assert_eq!(other.nested_egress_mask(), 0);
}

#[test]
fn ofc_frames_are_standard_size_unless_the_config_asks_and_the_mtu_allows() {
    let mut c = config();
    c.policy.kind = PolicyKind::Ofc;
    assert_eq!(c.policy.ofc_frame_len, 60, "a standard MAC Control frame by default");
    assert_eq!(crate::policy::ofc_frame_lens(&c), [60; 3]);
    c.policy.ofc_frame_len = 59;
    let reason = rejects(&c, "policy.ofc_frame_len");
    assert!(reason.contains("59 is outside 60..=1514") && reason.contains("non-standard"), "{reason}");
    c.policy.ofc_frame_len = 1515;
    rejects(&c, "policy.ofc_frame_len");
    c.policy.kind = PolicyKind::Pfc;
    rejects(&c, "policy.ofc_frame_len");
    // Longer frames where asked, capped at each port's MTU.
    c.policy.kind = PolicyKind::Ofc;
    c.ports[1].mtu = 1000;
    c.policy.ofc_frame_len = 1514;
    assert_eq!(c.validate().unwrap(), vec![]);
    assert_eq!(crate::policy::ofc_frame_lens(&c), [1514, 1014, 1514]);
    let toml = EXAMPLE.replace("[policy]", "[policy]\nofc_frame_len = 1514");
    let parsed: SwitchConfig = toml::from_str(&toml).unwrap();
    assert_eq!(parsed.policy.ofc_frame_len, 1514);
    let misspelt = EXAMPLE.replace("[policy]", "[policy]\nofc_frame_size = 1514");
    let error = toml::from_str::<SwitchConfig>(&misspelt).unwrap_err().to_string();
    assert!(error.contains("unknown field `ofc_frame_size`"), "{error}");
}

#[test]
fn descriptors_for_the_lossless_limits_are_required_under_pfc() {
    let mut c = three_ports_with_pfc_keys_only();
    assert_eq!(c.frames(), 3 * 1638 + 4096, "the default holds the lossless limits");
    c.buffer.frames = Some(3 * 1638 + 63);
    let reason = rejects(&c, "buffer.frames");
    assert!(
        reason.contains("3 ports × 1 lossless priorities × ⌊pfc.max 98304 B / 60 B⌋ = 4914 frames + 64"),
        "{reason}"
    );
    c.policy.kind = PolicyKind::PfcWdrop;
    c.buffer.frames = Some(3000);
    let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
    assert_eq!(keys, ["buffer.frames", "buffer.egress_max"]);
    c.buffer.mode = BufferMode::Shared;
    c.buffer.frames = None;
    let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
    assert_eq!(keys, ["buffer.queue_cap"], "the default pool holds 3 × 96 KiB");
    c.buffer.pool = Some(ByteSize(150_000));
    c.buffer.port_cap = Some(ByteSize(100_000));
    let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
    assert_eq!(keys, ["buffer.queue_cap", "buffer.pool"]);
    c.policy.kind = PolicyKind::None;
    let keys: Vec<_> = c.validate().unwrap().into_iter().map(|w| w.key).collect();
    assert_eq!(keys, ["policy.kind"]);
}

#[test]
fn dscp_maps_and_weights() {
    let mut c = config();
    c.ports[0].dscp_map = Some(BTreeMap::from([("5".to_string(), vec![46])]));
    assert!(rejects(&c, "port[0].dscp_map").contains("trust"));
    c.ports[0].trust = Trust::Dscp;
    let map = c.dscp_map(0).unwrap();
    assert_eq!((map[46].value(), map[26].value(), map[8].value()), (5, 3, 1));
    c.ports[0].dscp_map = Some(BTreeMap::from([("5".to_string(), vec![46]), ("6".to_string(), vec![46])]));
    assert!(rejects(&c, "port[0].dscp_map").contains("mapped twice"));

    let mut c = config();
    c.scheduler.strict = vec![7];
    c.scheduler.weights = BTreeMap::from([("0".to_string(), 4)]);
    assert_eq!(c.scheduler_weights().unwrap(), [4, 1, 1, 1, 1, 1, 1, 0]);
    c.scheduler.weights.insert("7".into(), 2);
    assert!(rejects(&c, "scheduler.weights.7").contains("strict"));
}

const EXAMPLE: &str = r#"
        [switch]
        name = "sw1"

        [[port]]
        name = "p1"
        speed = "1Gbps"

        [[port]]
        name = "p2"
        iface = "veth-p2"
        speed = "10Gbps"
        mtu = 9000
        trust = "dscp"
        dscp_map = { 3 = [24, 26], 5 = [46] }

        [pfc]
        lossless = [3, 4]
        xoff = "48KiB"
        xon = "32KiB"
        max = "96KiB"
        cable_delay = "500ns"

        [buffer]
        mode = "shared"
        pool = "1MiB"
        port_cap = "200KB"

        [pipeline]
        rate = "1Mpps"

        [scheduler]
        strict = [6]
        weights = { 0 = 1, 3 = 4 }

        [policy]
        kind = "pfc-wstop"
"#;

#[test]
fn a_toml_file_parses_with_units_and_defaults() {
    let config: SwitchConfig = toml::from_str(EXAMPLE).unwrap();
    assert_eq!(config.pfc.xoff, ByteSize::kib(48));
    assert_eq!(config.ports[1].speed, BitRate::gbps(10));
    assert_eq!(config.ports[0].mtu, 1500);
    assert_eq!(config.pfc.quanta, 65535);
    assert_eq!(config.pipeline.rate, PacketRate::from_pps(1_000_000));
    assert_eq!(config.egress_full().unwrap(), EgressFull::Stop);
    assert_eq!(config.dscp_map(1).unwrap()[26].value(), 3);
    assert_eq!(config.scheduler_weights().unwrap(), [1, 1, 1, 4, 1, 1, 0, 1]);
    assert!(config.validate().is_ok());
}

#[test]
fn unknown_keys_and_bad_units_are_rejected_by_name() {
    let misspelt = EXAMPLE.replace("xon = ", "x_on = ");
    let error = toml::from_str::<SwitchConfig>(&misspelt).unwrap_err().to_string();
    assert!(error.contains("unknown field `x_on`"), "{error}");
    let bad_unit = EXAMPLE.replace("\"10Gbps\"", "\"10GB\"");
    let error = toml::from_str::<SwitchConfig>(&bad_unit).unwrap_err().to_string();
    assert!(error.contains("unknown unit `GB` in `10GB`"), "{error}");
}

#[test]
fn ports_must_be_distinct() {
    let mut c = config();
    c.ports[2].name = "p0".into();
    assert!(rejects(&c, "port[2].name").contains("used by another port"));
    let mut c = config();
    c.ports[1].iface = Some("p0".into());
    assert!(rejects(&c, "port[1].iface").contains("used by another port"));
    let mut c = config();
    c.fdb.static_entries.push(StaticEntry { mac: "02:00:00:00:00:01".into(), port: "p9".into() });
    assert!(rejects(&c, "fdb.static[0].port").contains("no port named"));
    c.fdb.static_entries[0].port = StaticPorts::Group(vec!["p1".into(), "p2".into(), "p1".into()]);
    assert!(rejects(&c, "fdb.static[0].port").contains("`p1` is listed twice"));
    c.fdb.static_entries[0].port = StaticPorts::Group(vec![]);
    assert!(rejects(&c, "fdb.static[0].port").contains("empty list"));
    c.fdb.static_entries[0].port = StaticPorts::Group(vec!["p1".into(), "p2".into()]);
    assert_eq!(c.static_fdb_entries().unwrap(), vec![("02:00:00:00:00:01".parse().unwrap(), 0b110)]);
}

#[test]
fn without_pfc_max_the_headroom_comes_from_the_fastest_link() {
    let mut c = SwitchConfig::with_ports("sw400", 2, BitRate::gbps(400));
    let bound = headroom_bound(BitRate::gbps(400), 1500, c.pfc.cable_delay, c.pfc.response_time);
    assert_eq!(c.validate().unwrap(), vec![], "a config without [pfc] works at 400 Gbit/s");
    assert_eq!(c.pfc_max(), c.pfc.xoff.bytes() + bound);
    assert_eq!(config().pfc_max(), 60_000, "slow links keep the Table II default");
    c.pfc.max = Some(ByteSize(60_000));
    assert!(rejects(&c, "pfc.max").contains(&format!("{bound} B that port[0] `p0` needs at 400Gbps")));
}
