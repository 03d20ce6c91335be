//! Unit tests of buffer mode "pools": the SONiC-shaped tables, what they resolve to and
//! every refusal, each with its key.

use super::*;
use pfcswitch_link::units::{BitRate, ByteSize};

/// Three 1 Gbit/s ports, lossless priority 3, a lossless ingress pool and a lossy egress pool.
const TABLES: &str = r#"
[switch]
name = "sw1"
[[port]]
name = "p0"
speed = "1Gbps"
[[port]]
name = "p1"
speed = "1Gbps"
[[port]]
name = "p2"
speed = "1Gbps"
[buffer]
mode = "pools"
[buffer.pools.ingress_lossless_pool]
type = "ingress"
size = "1MB"
[buffer.pools.egress_lossy_pool]
type = "egress"
size = "1MB"
[buffer.profiles.pg_lossless]
pool = "ingress_lossless_pool"
dynamic_th = -2
xon_offset = 3000
[buffer.profiles.pg_lossy]
pool = "ingress_lossless_pool"
dynamic_th = 3
[buffer.profiles.q_lossy]
pool = "egress_lossy_pool"
size = 1518
dynamic_th = 1
[buffer.pg]
"*|3" = "pg_lossless"
"p0,p1|0" = "pg_lossy"
[buffer.queue]
"*|0-2,4-7" = "q_lossy"
"#;

fn tables() -> SwitchConfig {
    toml::from_str(TABLES).unwrap()
}

fn rejects(config: &SwitchConfig, key: &str) -> String {
    let err = config.validate().expect_err("config should be rejected");
    assert_eq!(err.key, key, "{err}");
    err.reason
}

fn layout(config: &SwitchConfig) -> std::sync::Arc<PoolLayout> {
    match config.buffer_limits().unwrap() {
        BufferLimits::Pools(layout) => layout,
        other => panic!("{other:?}"),
    }
}

#[test]
fn tables_resolve_per_port_and_priority_with_headroom_from_the_link() {
    let config = tables();
    assert_eq!(config.validate().unwrap(), vec![]);
    let layout = layout(&config);
    let pg = layout.pg[1][3].unwrap();
    assert_eq!(pg.threshold, Threshold::Dynamic(-2));
    assert_eq!((pg.reserved, pg.xon, pg.xon_offset), (0, 0, 3000));
    // 1 Gbit/s × (2 × 100 ns + 1 µs) = 150 B, + 3 × 1542 + 84.
    assert_eq!(pg.headroom, 4860);
    assert_eq!(pg.headroom, headroom_bound(BitRate::gbps(1), 1500, config.pfc.cable_delay, config.pfc.response_time));
    assert!(layout.pg[0][0].is_some() && layout.pg[2][0].is_none(), "p2's PG 0 is unmapped: no ingress limit");
    assert_eq!(layout.pg[0][0].unwrap().headroom, 0, "a lossy PG has no headroom");
    let queue = layout.queue[2][7].unwrap();
    assert_eq!((queue.reserved, queue.threshold), (1518, Threshold::Dynamic(1)));
    assert!(layout.queue[2][3].is_none(), "lossless queues under pfc are bounded by ingress only");
    // Lossless PGs: three ports' headroom and the whole ingress pool.
    assert_eq!(config.lossless_frames_bound(), (3 * 4860 + 1_000_000) / 60);
}

#[test]
fn a_faster_port_gets_a_larger_headroom() {
    let mut config = tables();
    config.ports[2].speed = BitRate::gbps(400);
    config.ports[2].mtu = 9100;
    let pg = layout(&config).pg[2][3].unwrap();
    assert_eq!(pg.headroom, headroom_bound(BitRate::gbps(400), 9100, config.pfc.cable_delay, config.pfc.response_time));
    assert!(pg.headroom > 80_000, "{}", pg.headroom);
}

#[test]
fn ports_are_selected_by_speed() {
    let mut config: SwitchConfig = toml::from_str(&TABLES.replace(
        "\"*|3\" = \"pg_lossless\"",
        "\"speed=1Gbps|3\" = \"pg_lossless\"\n\"speed=400Gbps|3\" = \"pg_uplink\"",
    ))
    .unwrap();
    config.buffer.profiles.insert(
        "pg_uplink".into(),
        ProfileConfig { pool: "ingress_lossless_pool".into(), dynamic_th: Some(-1), ..ProfileConfig::default() },
    );
    config.ports[2].speed = BitRate::gbps(400);
    config.validate().unwrap();
    let layout = layout(&config);
    let thresholds: Vec<_> = layout.pg.iter().map(|pgs| pgs[3].unwrap().threshold).collect();
    assert_eq!(thresholds, [Threshold::Dynamic(-2), Threshold::Dynamic(-2), Threshold::Dynamic(-1)]);
    let key = "\"speed=fast|3\" = \"pg_lossless\"";
    let bad: SwitchConfig = toml::from_str(&TABLES.replace("\"*|3\" = \"pg_lossless\"", key)).unwrap();
    assert!(rejects(&bad, "buffer.pg.\"speed=fast|3\"").starts_with("`speed=fast`:"));
}

#[test]
fn bad_tables_are_refused_with_the_key_and_the_reason() {
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "[buffer.pg]\n\"*|3\" = \"pg_lossless\"",
            "[buffer.pg]\n\"*|3\" = \"nope\"",
            "buffer.pg.\"*|3\"",
            "no [buffer.profiles.nope]",
        ),
        ("\"p0,p1|0\" = \"pg_lossy\"", "\"p0,p9|0\" = \"pg_lossy\"", "buffer.pg.\"p0,p9|0\"", "no port named `p9`"),
        ("\"p0,p1|0\" = \"pg_lossy\"", "\"p0|0-9\" = \"pg_lossy\"", "buffer.pg.\"p0|0-9\"", "not a priority 0-7"),
        ("\"p0,p1|0\" = \"pg_lossy\"", "\"p0\" = \"pg_lossy\"", "buffer.pg.\"p0\"", "PORTS|PRIORITIES"),
        ("\"p0,p1|0\" = \"pg_lossy\"", "\"p0|3\" = \"pg_lossy\"", "buffer.pg.\"p0|3\"", "already mapped"),
        ("\"*|3\" = \"pg_lossless\"\n", "", "buffer.pg", "priority 3 is lossless but no entry maps port `p0`"),
        ("dynamic_th = -2", "dynamic_th = 9", "buffer.profiles.pg_lossless.dynamic_th", "outside -7..=7"),
        ("dynamic_th = -2", "", "buffer.profiles.pg_lossless.dynamic_th", "missing: a profile sets dynamic_th"),
        ("dynamic_th = -2", "dynamic_th = -2\nstatic_th = 5000", "buffer.profiles.pg_lossless.static_th", "not both"),
        (
            "pool = \"egress_lossy_pool\"\nsize = 1518",
            "pool = \"ingress_lossless_pool\"\nsize = 1518",
            "buffer.profiles.q_lossy.pool",
            "not an egress pool",
        ),
        (
            "pool = \"egress_lossy_pool\"\nsize = 1518",
            "pool = \"nowhere\"\nsize = 1518",
            "buffer.profiles.q_lossy.pool",
            "no [buffer.pools.nowhere]",
        ),
        (
            "dynamic_th = 3\n",
            "dynamic_th = 3\nxoff = 9000\n",
            "buffer.profiles.pg_lossy.xoff",
            "priority 0, which is not lossless",
        ),
        (
            "size = 1518\ndynamic_th = 1",
            "size = 1518\ndynamic_th = 1\nxon = 100",
            "buffer.profiles.q_lossy.xon",
            "egress queues have no PFC thresholds",
        ),
        (
            "xon_offset = 3000",
            "xon_offset = 3000\nxoff = 4000",
            "buffer.profiles.pg_lossless.xoff",
            "below the 4860 B that port[0] `p0` priority 3 needs",
        ),
        (
            "type = \"egress\"\nsize = \"1MB\"",
            "type = \"egress\"\nsize = \"1MB\"\nxoff = 100",
            "buffer.pools.egress_lossy_pool.xoff",
            "ingress pools only",
        ),
        (
            "mode = \"pools\"",
            "mode = \"pools\"\nqueue_cap = 100",
            "buffer.queue_cap",
            "does not apply to mode = \"pools\"",
        ),
        ("mode = \"pools\"", "mode = \"shared\"", "buffer.pools", "only applies to mode = \"pools\""),
        ("[buffer]", "[pfc]\nxoff = 55000\n[buffer]", "pfc.xoff", "takes XOFF, XON and headroom from the profiles"),
        ("[buffer]", "[policy]\nkind = \"ofc\"\n[buffer]", "buffer.mode", "X^c_OFF"),
    ];
    for &(from, to, key, reason) in cases {
        assert!(TABLES.contains(from), "{from}");
        let text = TABLES.replacen(from, to, 1);
        let config: SwitchConfig = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        let got = rejects(&config, key);
        assert!(got.contains(reason), "{key}: {got}");
    }
}

#[test]
fn the_mode_keeps_serialising_as_it_was_written() {
    let config = tables();
    let text = toml::to_string(&config).unwrap();
    assert_eq!(toml::from_str::<SwitchConfig>(&text).unwrap(), config, "{text}");
    assert_eq!(config.buffer.profiles["q_lossy"].size, ByteSize(1518));
}

#[test]
fn a_profile_may_take_the_other_threshold_mode_and_unmapped_queues_are_a_warning() {
    let text =
        TABLES.replacen("dynamic_th = 3\n", "static_th = \"20KB\"\n", 1).replacen("\"*|0-2,4-7\"", "\"*|0-2,4-6\"", 1);
    let config: SwitchConfig = toml::from_str(&text).unwrap();
    let warnings = config.validate().unwrap();
    assert_eq!(layout(&config).pg[0][0].unwrap().threshold, Threshold::Static(20_000), "static_th in a dynamic pool");
    assert_eq!(warnings.len(), 3, "one per port: {warnings:?}");
    assert!(
        warnings[0].key == "buffer.queue" && warnings[0].message.contains("port `p0` priorities [7]"),
        "{warnings:?}"
    );
    assert_eq!(layout(&config).queue_bytes_bound(7), u64::MAX, "unmapped: only the descriptors bound it");
}
