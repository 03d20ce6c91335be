//! `pfcswitch buffer import`: the buffer tables of a SONiC `config_db.json` (`BUFFER_POOL`,
//! `BUFFER_PROFILE`, `BUFFER_PG`, `BUFFER_QUEUE`, with `PORT`, `PORT_QOS_MAP`, `CABLE_LENGTH`
//! and `DEVICE_METADATA`) as a switch configuration in buffer mode "pools".
//!
//! What SONiC says and pfcswitch cannot hold is refused with the SONiC `TABLE|key` and field,
//! never approximated; `docs/buffer-import.md` lists the mapping and the refusals.

use anyhow::{Context, Result, anyhow, bail, ensure};
use pfcswitch_link::units::{self, BitRate, ByteSize};
use pfcswitch_switch::config::{
    BufferConfig, BufferMode, DYNAMIC_TH_RANGE, MAX_PORTS, PoolConfig, PoolMode, PoolType, ProfileConfig, SwitchConfig,
};
use pfcswitchd::config::MAX_MTU;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Display;
use std::str::FromStr;
use std::time::Duration;

/// Signal propagation in fibre and copper: about 2/3 of c, 5 ns per metre.
const NS_PER_CABLE_METRE: u64 = 5;
/// SONiC's MTU for a `PORT` entry without one.
const SONIC_DEFAULT_MTU: u32 = 9100;
/// `[switch] name` when `DEVICE_METADATA` has no hostname.
const DEFAULT_NAME: &str = "sonic";

/// A SONiC configuration converted: the switch configuration, validated.
#[derive(Debug)]
pub struct Imported {
    pub config: SwitchConfig,
    /// What pfcswitch takes differently from SONiC, then validation's warnings.
    pub warnings: Vec<String>,
    /// The longest `CABLE_LENGTH` of the imported ports in metres, when there is one.
    pub longest_cable: Option<u64>,
}

/// Converts a parsed `config_db.json`; `name` overrides the hostname as `[switch] name`.
pub fn convert(db: &Value, name: Option<&str>) -> Result<Imported> {
    let db = db.as_object().context("not a config_db.json: expected a JSON object of SONiC tables")?;
    for table in ["BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"] {
        if let Some(entry) = entries(db, table)?.first() {
            return Err(entry.refuse(
                "profile_list: per-port pool limits are not modelled (pfcswitch limits PGs and queues, not \
                 ports); remove the table to import without them",
            ));
        }
    }
    let pools = pools(db)?;
    let profiles = profiles(db, &pools)?;
    let port_table = entries(db, "PORT")?;
    let mut used = BTreeSet::new();
    let pg = priority_table(db, "BUFFER_PG", &profiles, &port_table, &mut used)?;
    let queue = priority_table(db, "BUFFER_QUEUE", &profiles, &port_table, &mut used)?;
    if used.len() > MAX_PORTS {
        bail!("BUFFER_PG and BUFFER_QUEUE name {} ports; pfcswitch takes at most {MAX_PORTS}", used.len());
    }
    let mut port_entries: Vec<&Entry> = port_table.iter().filter(|entry| used.contains(entry.key)).collect();
    port_entries.sort_by_key(|entry| natural_key(entry.key));
    let ports = port_entries.into_iter().map(port).collect::<Result<Vec<_>>>()?;
    let lossless = lossless(db, &ports)?;
    let mut warnings = priority_maps(db, &ports, &lossless)?;
    let longest_cable = longest_cable(db, &ports)?;

    let name = match name {
        Some(name) => name.to_string(),
        None => hostname(db)?,
    };
    // Every port's name, speed and MTU are set below; the rest keep pfcswitch's defaults.
    let mut config = SwitchConfig::with_ports(&name, ports.len(), BitRate::gbps(1));
    for (port, sonic) in config.ports.iter_mut().zip(&ports) {
        port.name = sonic.name.clone();
        port.speed = sonic.speed;
        port.mtu = sonic.mtu;
    }
    config.pfc.lossless = lossless;
    if let Some(metres) = longest_cable {
        config.pfc.cable_delay = Duration::from_nanos(metres * NS_PER_CABLE_METRE);
    }
    config.buffer = BufferConfig { mode: BufferMode::Pools, pools, profiles, pg, queue, ..BufferConfig::default() };
    let validated = config.validate().map_err(|e| anyhow!("the imported configuration is refused: {e}"))?;

    let jumbo: Vec<&str> =
        ports.iter().filter(|port| u64::from(port.mtu) > MAX_MTU).map(|port| port.name.as_str()).collect();
    if !jumbo.is_empty() {
        warnings.push(format!(
            "PORT: the MTU of {} is above the {MAX_MTU} bytes pfcswitchd's datapath carries (one 4 KiB UMEM \
             chunk per frame): lower `mtu` to run pfcswitchd on this file (scenarios set every port's MTU and \
             speed to their own)",
            jumbo.join(", ")
        ));
    }
    warnings.extend(validated.iter().map(ToString::to_string));
    Ok(Imported { config, warnings, longest_cable })
}

/// The TOML file: a header saying where it came from and what to add, then the configuration;
/// checked to read back as exactly the imported configuration.
pub fn render(imported: &Imported, source: &str) -> Result<String> {
    let config = &imported.config;
    let file = ImportedFile {
        switch: SwitchName { name: &config.switch.name },
        port: config.ports.iter().map(|p| PortFile { name: &p.name, speed: p.speed, mtu: p.mtu }).collect(),
        pfc: PfcFile {
            lossless: &config.pfc.lossless,
            cable_delay: config.pfc.cable_delay,
            response_time: config.pfc.response_time,
        },
        buffer: BufferFile {
            mode: config.buffer.mode,
            pools: config.buffer.pools.iter().map(|(name, pool)| (name.as_str(), PoolFile::from(pool))).collect(),
            profiles: config.buffer.profiles.iter().map(|(name, p)| (name.as_str(), ProfileFile::from(p))).collect(),
            pg: &config.buffer.pg,
            queue: &config.buffer.queue,
        },
    };
    let cable = match imported.longest_cable {
        Some(metres) => format!("the longest CABLE_LENGTH ({metres}m) at {NS_PER_CABLE_METRE} ns/m"),
        None => "no CABLE_LENGTH for these ports: pfcswitch's default".to_string(),
    };
    let header = format!(
        "# Imported from {source} by `pfcswitch buffer import` (docs/buffer-import.md).\n\
         # The ports keep SONiC's names and have no `iface`: pfcswitchd attaches each to the\n\
         # interface of its name unless you add `iface = \"...\"` (at most 15 bytes) to its [[port]].\n\
         # [pfc] lossless is PORT_QOS_MAP's pfc_enable; cable_delay is {cable}.\n\
         # Sections not written take pfcswitch's defaults (policy \"pfc\").\n\n"
    );
    let text = header + &toml::to_string(&file).context("writing the imported configuration as TOML")?;
    let read_back: SwitchConfig = toml::from_str(&text).context("the TOML written does not parse back")?;
    ensure!(read_back == *config, "the TOML written does not read back as the imported configuration (a bug)");
    Ok(text)
}

/// What the import sets, in the order a person writes it; everything else is left to defaults.
#[derive(Serialize)]
struct ImportedFile<'a> {
    switch: SwitchName<'a>,
    port: Vec<PortFile<'a>>,
    pfc: PfcFile<'a>,
    buffer: BufferFile<'a>,
}

#[derive(Serialize)]
struct SwitchName<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct PortFile<'a> {
    name: &'a str,
    speed: BitRate,
    mtu: u32,
}

#[derive(Serialize)]
struct PfcFile<'a> {
    lossless: &'a [u8],
    #[serde(with = "units::duration")]
    cable_delay: Duration,
    #[serde(with = "units::duration")]
    response_time: Duration,
}

/// `[buffer]` with pool and profile sizes in bytes, as SONiC writes them (`ByteSize` would
/// show 332800 as "325KiB").
#[derive(Serialize)]
struct BufferFile<'a> {
    mode: BufferMode,
    pools: BTreeMap<&'a str, PoolFile>,
    profiles: BTreeMap<&'a str, ProfileFile<'a>>,
    pg: &'a BTreeMap<String, String>,
    queue: &'a BTreeMap<String, String>,
}

#[derive(Serialize)]
struct PoolFile {
    #[serde(rename = "type")]
    kind: PoolType,
    mode: PoolMode,
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    xoff: Option<u64>,
}

impl From<&PoolConfig> for PoolFile {
    fn from(pool: &PoolConfig) -> Self {
        PoolFile { kind: pool.kind, mode: pool.mode, size: pool.size.bytes(), xoff: pool.xoff.map(ByteSize::bytes) }
    }
}

#[derive(Serialize)]
struct ProfileFile<'a> {
    pool: &'a str,
    size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    dynamic_th: Option<i8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    static_th: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    xoff: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    xon: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    xon_offset: Option<u64>,
}

impl<'a> From<&'a ProfileConfig> for ProfileFile<'a> {
    fn from(profile: &'a ProfileConfig) -> Self {
        let bytes = |size: Option<ByteSize>| size.map(ByteSize::bytes);
        ProfileFile {
            pool: &profile.pool,
            size: profile.size.bytes(),
            dynamic_th: profile.dynamic_th,
            static_th: bytes(profile.static_th),
            xoff: bytes(profile.xoff),
            xon: bytes(profile.xon),
            xon_offset: bytes(profile.xon_offset),
        }
    }
}

/// One entry of a SONiC table (`TABLE|key`) and its fields; errors name it.
#[derive(Debug)]
struct Entry<'a> {
    table: &'static str,
    key: &'a str,
    fields: &'a Map<String, Value>,
}

impl Entry<'_> {
    fn refuse(&self, reason: impl Display) -> anyhow::Error {
        anyhow!("{}|{}: {reason}", self.table, self.key)
    }

    /// A field's text: SONiC writes every value as a string; a JSON number is taken as well.
    fn text(&self, field: &str) -> Result<Option<String>> {
        match self.fields.get(field) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(Value::Number(number)) => Ok(Some(number.to_string())),
            Some(other) => Err(self.refuse(format!("{field} is {other}, not a string"))),
        }
    }

    fn required(&self, field: &str) -> Result<String> {
        self.text(field)?.ok_or_else(|| self.refuse(format!("{field} is missing")))
    }

    fn number<T: FromStr>(&self, field: &str, what: &str) -> Result<Option<T>> {
        let Some(text) = self.text(field)? else { return Ok(None) };
        text.trim().parse().map(Some).map_err(|_| self.refuse(format!("{field} \"{text}\" is not {what}")))
    }

    fn bytes(&self, field: &str) -> Result<Option<ByteSize>> {
        Ok(self.number(field, "a number of bytes")?.map(ByteSize))
    }

    /// A reference to an entry of `table`: its name, or the older `[TABLE|name]`.
    fn reference(&self, field: &str, table: &str) -> Result<Option<String>> {
        let Some(text) = self.text(field)? else { return Ok(None) };
        let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) else { return Ok(Some(text)) };
        match inner.split_once('|') {
            Some((target, name)) if target == table => Ok(Some(name.to_string())),
            _ => Err(self.refuse(format!("{field} \"{text}\" does not refer to {table}"))),
        }
    }

    /// Refuses a field pfcswitch has no place for rather than dropping it.
    fn only(&self, known: &[&str]) -> Result<()> {
        match self.fields.keys().find(|field| !known.contains(&field.as_str())) {
            Some(field) => Err(self.refuse(format!("{field} is not modelled by pfcswitch's buffer mode \"pools\""))),
            None => Ok(()),
        }
    }
}

/// The entries of `table`; none when the file has no such table.
fn entries<'a>(db: &'a Map<String, Value>, table: &'static str) -> Result<Vec<Entry<'a>>> {
    let Some(value) = db.get(table) else { return Ok(Vec::new()) };
    let rows = value.as_object().ok_or_else(|| anyhow!("{table}: expected an object of entries"))?;
    rows.iter()
        .map(|(key, fields)| {
            let fields = fields.as_object().ok_or_else(|| anyhow!("{table}|{key}: expected an object of fields"))?;
            Ok(Entry { table, key, fields })
        })
        .collect()
}

fn find<'e, 'a>(entries: &'e [Entry<'a>], key: &str) -> Option<&'e Entry<'a>> {
    entries.iter().find(|entry| entry.key == key)
}

fn pools(db: &Map<String, Value>) -> Result<BTreeMap<String, PoolConfig>> {
    entries(db, "BUFFER_POOL")?
        .iter()
        .map(|entry| {
            if entry.fields.contains_key("percentage") {
                return Err(entry.refuse(
                    "percentage: SONiC's dynamic buffer model sizes this pool at run time; pfcswitch needs size in bytes",
                ));
            }
            entry.only(&["type", "mode", "size", "xoff"])?;
            let kind = match entry.required("type")?.as_str() {
                "ingress" => PoolType::Ingress,
                "egress" => PoolType::Egress,
                other => {
                    return Err(entry.refuse(format!(
                        "type \"{other}\": pfcswitch accounts a pool at ingress (PGs) or at egress (queues), not both"
                    )));
                }
            };
            let mode = match entry.required("mode")?.as_str() {
                "dynamic" => PoolMode::Dynamic,
                "static" => PoolMode::Static,
                other => return Err(entry.refuse(format!("mode \"{other}\" is neither dynamic nor static"))),
            };
            let size = entry.bytes("size")?.ok_or_else(|| {
                entry.refuse("size is missing: SONiC's dynamic buffer model computes it at run time; pfcswitch needs it")
            })?;
            // "0", YANG's default, is no shared headroom pool.
            let xoff = entry.bytes("xoff")?.filter(|xoff| xoff.bytes() > 0);
            Ok((entry.key.to_string(), PoolConfig { kind, mode, size, xoff }))
        })
        .collect()
}

fn profiles(db: &Map<String, Value>, pools: &BTreeMap<String, PoolConfig>) -> Result<BTreeMap<String, ProfileConfig>> {
    entries(db, "BUFFER_PROFILE")?
        .iter()
        .map(|entry| {
            entry.only(&[
                "pool",
                "size",
                "dynamic_th",
                "static_th",
                "xon",
                "xoff",
                "xon_offset",
                "headroom_type",
                "packet_discard_action",
            ])?;
            if let Some(kind) = entry.text("headroom_type")?.filter(|kind| kind != "static") {
                return Err(entry.refuse(format!(
                    "headroom_type \"{kind}\": SONiC's buffer manager derives this profile's size, xon and xoff per \
                     port at run time; import the profiles it generated, or give size and leave xoff out to have \
                     pfcswitch compute the headroom from the link"
                )));
            }
            if let Some(action) = entry.text("packet_discard_action")?.filter(|action| action != "drop") {
                return Err(entry.refuse(format!(
                    "packet_discard_action \"{action}\": pfcswitch drops what it cannot admit; it does not trim"
                )));
            }
            let pool = entry.reference("pool", "BUFFER_POOL")?.ok_or_else(|| entry.refuse("pool is missing"))?;
            if !pools.contains_key(&pool) {
                return Err(entry.refuse(format!("pool \"{pool}\" is not in BUFFER_POOL")));
            }
            let size = entry.bytes("size")?.ok_or_else(|| entry.refuse("size (the reserve) is missing"))?;
            let dynamic_th = match entry.number::<i64>("dynamic_th", "an integer")? {
                Some(k) => Some(i8::try_from(k).ok().filter(|k| DYNAMIC_TH_RANGE.contains(k)).ok_or_else(|| {
                    entry.refuse(format!(
                        "dynamic_th \"{k}\" is outside {}..={} (alpha = 2^dynamic_th)",
                        DYNAMIC_TH_RANGE.start(),
                        DYNAMIC_TH_RANGE.end()
                    ))
                })?),
                None => None,
            };
            let profile = ProfileConfig {
                pool,
                size,
                dynamic_th,
                static_th: entry.bytes("static_th")?,
                xoff: entry.bytes("xoff")?,
                xon: entry.bytes("xon")?,
                xon_offset: entry.bytes("xon_offset")?,
            };
            Ok((entry.key.to_string(), profile))
        })
        .collect()
}

/// `BUFFER_PG` or `BUFFER_QUEUE`: `"PORTS|PRIORITIES" = profile`, keys kept as SONiC writes them
/// (pfcswitch reads the same syntax); the ports they name are added to `used`.
fn priority_table<'a>(
    db: &'a Map<String, Value>,
    table: &'static str,
    profiles: &BTreeMap<String, ProfileConfig>,
    port_table: &[Entry<'a>],
    used: &mut BTreeSet<&'a str>,
) -> Result<BTreeMap<String, String>> {
    entries(db, table)?
        .iter()
        .map(|entry| {
            entry.only(&["profile"])?;
            let profile = entry.reference("profile", "BUFFER_PROFILE")?.ok_or_else(|| {
                entry.refuse(
                    "profile is missing: SONiC's dynamic buffer model assigns it at run time; pfcswitch needs it",
                )
            })?;
            if !profiles.contains_key(&profile) {
                return Err(entry.refuse(format!("profile \"{profile}\" is not in BUFFER_PROFILE")));
            }
            let (names, _) = entry
                .key
                .split_once('|')
                .ok_or_else(|| entry.refuse("the key is not PORTS|PRIORITIES such as Ethernet0|3-4"))?;
            for name in names.split(',').map(str::trim) {
                let port = find(port_table, name).ok_or_else(|| entry.refuse(format!("port {name} is not in PORT")))?;
                used.insert(port.key);
            }
            Ok((entry.key.to_string(), profile))
        })
        .collect()
}

/// Orders names as SONiC numbers ports: the text, then the trailing number by value
/// (Ethernet4 before Ethernet12).
fn natural_key(name: &str) -> (&str, u64, &str) {
    let prefix = name.trim_end_matches(|c: char| c.is_ascii_digit());
    (prefix, name[prefix.len()..].parse().unwrap_or(u64::MAX), name)
}

#[derive(Debug)]
struct SonicPort {
    name: String,
    speed: BitRate,
    mtu: u32,
}

fn port(entry: &Entry) -> Result<SonicPort> {
    let mbps: u64 = entry.number("speed", "a speed in Mb/s")?.ok_or_else(|| entry.refuse("speed is missing"))?;
    let speed = mbps
        .checked_mul(1_000_000)
        .and_then(BitRate::from_bps)
        .ok_or_else(|| entry.refuse(format!("speed \"{mbps}\" is not a speed in Mb/s")))?;
    let mtu = entry.number("mtu", "an MTU in bytes")?.unwrap_or(SONIC_DEFAULT_MTU);
    Ok(SonicPort { name: entry.key.to_string(), speed, mtu })
}

/// `[pfc] lossless`: `PORT_QOS_MAP`'s `pfc_enable`, which must be the same on every imported
/// port (a port without it has none lossless): pfcswitch's lossless set is switch-wide.
fn lossless(db: &Map<String, Value>, ports: &[SonicPort]) -> Result<Vec<u8>> {
    let qos = entries(db, "PORT_QOS_MAP")?;
    let mut first: Option<(&str, Vec<u8>)> = None;
    for port in ports {
        let refuse = |reason: String| anyhow!("PORT_QOS_MAP|{}: {reason}", port.name);
        let text = match find(&qos, &port.name) {
            Some(entry) => entry.text("pfc_enable")?,
            None => None,
        };
        let mut priorities = text
            .iter()
            .flat_map(|text| text.split(',').map(str::trim).filter(|p| !p.is_empty()))
            .map(|p| {
                p.parse::<u8>()
                    .ok()
                    .filter(|&p| p < 8)
                    .ok_or_else(|| refuse(format!("pfc_enable: `{p}` is not a priority 0-7")))
            })
            .collect::<Result<Vec<u8>>>()?;
        priorities.sort_unstable();
        priorities.dedup();
        match &first {
            None => first = Some((port.name.as_str(), priorities)),
            Some((other, expected)) if *expected != priorities => {
                let shown = |set: &[u8]| {
                    if set.is_empty() {
                        "none".to_string()
                    } else {
                        set.iter().map(u8::to_string).collect::<Vec<_>>().join(",")
                    }
                };
                return Err(refuse(format!(
                    "pfc_enable is {} here and {} on {other}: pfcswitch's lossless set ([pfc] lossless) is \
                     switch-wide",
                    shown(&priorities),
                    shown(expected)
                )));
            }
            Some(_) => {}
        }
    }
    Ok(first.map(|(_, priorities)| priorities).unwrap_or_default())
}

/// `PORT_QOS_MAP` fields that say which PG or queue a priority uses: pfcswitch has one PG and
/// one queue per priority, numbered as the priority.
const PRIORITY_MAPS: [(&str, &str, &str); 4] = [
    ("tc_to_pg_map", "TC_TO_PRIORITY_GROUP_MAP", "PG"),
    ("pfc_to_pg_map", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PG"),
    ("tc_to_queue_map", "TC_TO_QUEUE_MAP", "queue"),
    ("pfc_to_queue_map", "MAP_PFC_PRIORITY_TO_QUEUE", "queue"),
];

/// Refuses a map that moves a lossless priority to another PG or queue; warns about one that
/// gathers lossy priorities (SONiC's AZURE map puts 0-2, 5 and 6 in PG 0): pfcswitch applies
/// BUFFER_PG's and BUFFER_QUEUE's entries by priority number, each priority on its own.
fn priority_maps(db: &Map<String, Value>, ports: &[SonicPort], lossless: &[u8]) -> Result<Vec<String>> {
    let qos = entries(db, "PORT_QOS_MAP")?;
    let mut checked = BTreeSet::new();
    let mut warnings = Vec::new();
    for entry in ports.iter().filter_map(|port| find(&qos, &port.name)) {
        for (field, table, target) in PRIORITY_MAPS {
            let Some(name) = entry.reference(field, table)? else { continue };
            if !checked.insert((table, name.clone())) {
                continue;
            }
            let maps = entries(db, table)?;
            let map =
                find(&maps, &name).ok_or_else(|| entry.refuse(format!("{field} \"{name}\" is not in {table}")))?;
            let mut moved = Vec::new();
            for from in map.fields.keys() {
                let priority = |text: &str| {
                    text.trim()
                        .parse::<u8>()
                        .ok()
                        .filter(|&p| p < 8)
                        .ok_or_else(|| map.refuse(format!("`{text}` is not a priority 0-7")))
                };
                let (from, to) = (priority(from)?, priority(&map.required(from)?)?);
                if from == to {
                    continue;
                }
                if let Some(p) = [from, to].into_iter().find(|p| lossless.contains(p)) {
                    return Err(map.refuse(format!(
                        "{from}: maps priority {from} to {target} {to}, and priority {p} is lossless (pfc_enable): \
                         pfcswitch keeps each lossless priority in the {target} of its own number"
                    )));
                }
                moved.push(format!("{from} to {target} {to}"));
            }
            if !moved.is_empty() {
                warnings.push(format!(
                    "{table}|{name} maps {}: pfcswitch has one PG and one queue per priority, so each BUFFER_PG \
                     and BUFFER_QUEUE entry applies to the priorities of its key only; a PG without an entry has \
                     no ingress limit",
                    moved.join(", ")
                ));
            }
        }
    }
    Ok(warnings)
}

/// The longest `CABLE_LENGTH` ("5m") of the imported ports, in metres.
fn longest_cable(db: &Map<String, Value>, ports: &[SonicPort]) -> Result<Option<u64>> {
    let mut longest = None;
    for entry in entries(db, "CABLE_LENGTH")? {
        for port in ports {
            let Some(text) = entry.text(&port.name)? else { continue };
            let metres = text
                .trim()
                .strip_suffix('m')
                .and_then(|metres| metres.parse::<u64>().ok())
                .filter(|metres| metres.checked_mul(NS_PER_CABLE_METRE).is_some())
                .ok_or_else(|| {
                    entry.refuse(format!("{} \"{text}\" is not a length in whole metres such as \"5m\"", port.name))
                })?;
            longest = longest.max(Some(metres));
        }
    }
    Ok(longest)
}

/// `DEVICE_METADATA|localhost`'s hostname, reduced to what `[switch] name` takes.
fn hostname(db: &Map<String, Value>) -> Result<String> {
    let metadata = entries(db, "DEVICE_METADATA")?;
    let hostname = match find(&metadata, "localhost") {
        Some(entry) => entry.text("hostname")?.unwrap_or_default(),
        None => String::new(),
    };
    let name: String = hostname
        .trim()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') { c } else { '-' })
        .collect();
    Ok(if name.is_empty() { DEFAULT_NAME.to_string() } else { name })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_switch::config::{BufferLimits, Threshold};
    use serde_json::json;

    const EXAMPLE: &str = include_str!("../../../docs/examples/sonic-config_db.json");
    const LOSSLESS: &str = "pg_lossless_100000_5m_profile";

    fn example() -> Value {
        serde_json::from_str(EXAMPLE).expect("the example is JSON")
    }

    fn imported(db: &Value) -> Imported {
        convert(db, None).unwrap_or_else(|e| panic!("{e:#}"))
    }

    /// The example changed by `change`, refused: the error's text.
    fn refused(change: impl FnOnce(&mut Value)) -> String {
        let mut db = example();
        change(&mut db);
        format!("{:#}", convert(&db, None).expect_err("should be refused"))
    }

    #[test]
    fn the_example_imports_validates_and_resolves_per_port() {
        let Imported { config, warnings, longest_cable } = imported(&example());
        let names: Vec<&str> = config.ports.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["Ethernet0", "Ethernet4", "Ethernet8", "Ethernet12"], "PORT's order, by number");
        assert!(config.ports.iter().all(|p| p.speed == BitRate::gbps(100) && p.mtu == 9100 && p.iface.is_none()));
        assert_eq!(config.switch.name, "sonic-leaf1");
        assert_eq!(config.pfc.lossless, [3, 4]);
        assert_eq!((longest_cable, config.pfc.cable_delay), (Some(5), Duration::from_nanos(25)));
        assert_eq!(config.buffer.pools["ingress_lossless_pool"].xoff, Some(ByteSize(332_800)));
        assert!(
            warnings.iter().any(|w| w.starts_with("TC_TO_PRIORITY_GROUP_MAP|AZURE maps 1 to PG 0")),
            "{warnings:?}"
        );
        assert!(warnings.iter().any(|w| w.starts_with("PORT: the MTU of Ethernet0, Ethernet4")), "{warnings:?}");
        assert_eq!(warnings.len(), 2, "validation warns of nothing: {warnings:?}");

        let BufferLimits::Pools(layout) = config.buffer_limits().unwrap() else { panic!("mode pools") };
        let profile = |index: u16| layout.profiles[usize::from(index)].as_str();
        for port in 0..4 {
            let pg = |p: usize| layout.pg[port][p].map(|pg| profile(pg.name));
            assert_eq!(
                [pg(0), pg(1), pg(3), pg(4)],
                [Some("ingress_lossy_profile"), None, Some(LOSSLESS), Some(LOSSLESS)]
            );
            let lossless = layout.pg[port][3].unwrap();
            assert_eq!(lossless.threshold, Threshold::Dynamic(-3));
            assert_eq!(
                (lossless.reserved, lossless.headroom, lossless.xon, lossless.xon_offset),
                (1248, 41_600, 2288, 2288)
            );
            let queue = |p: usize| layout.queue[port][p].map(|q| profile(q.name));
            let lossy = Some("egress_lossy_profile");
            assert_eq!(
                (0..8).map(queue).collect::<Vec<_>>(),
                [
                    lossy,
                    lossy,
                    lossy,
                    Some("egress_lossless_profile"),
                    Some("egress_lossless_profile"),
                    lossy,
                    lossy,
                    lossy
                ]
            );
        }
        assert_eq!(layout.queue[2][4].unwrap().threshold, Threshold::Static(4_718_592));
    }

    #[test]
    fn every_refusal_names_its_table_key_and_field() {
        type Change = Box<dyn FnOnce(&mut Value)>;
        // Sets (or adds) the value at a JSON pointer.
        let set = |pointer: &'static str, value: Value| -> Change {
            Box::new(move |db: &mut Value| {
                let (parent, key) = pointer.rsplit_once('/').expect(pointer);
                db.pointer_mut(parent).expect(parent)[key] = value;
            })
        };
        let cases: Vec<(Change, &str)> = vec![
            (
                set("/BUFFER_PROFILE/pg_lossless_100000_5m_profile/dynamic_th", json!("-9")),
                "BUFFER_PROFILE|pg_lossless_100000_5m_profile: dynamic_th \"-9\" is outside -7..=7 (alpha = 2^dynamic_th)",
            ),
            (
                set("/BUFFER_PROFILE/egress_lossy_profile/dynamic_th", json!("x")),
                "BUFFER_PROFILE|egress_lossy_profile: dynamic_th \"x\" is not an integer",
            ),
            (set("/BUFFER_POOL/egress_lossy_pool/type", json!("both")), "BUFFER_POOL|egress_lossy_pool: type \"both\""),
            (
                set("/BUFFER_POOL/egress_lossy_pool/mode", json!("shared")),
                "BUFFER_POOL|egress_lossy_pool: mode \"shared\"",
            ),
            (
                set("/BUFFER_POOL/egress_lossy_pool/percentage", json!("40")),
                "BUFFER_POOL|egress_lossy_pool: percentage",
            ),
            (
                set("/BUFFER_POOL/egress_lossy_pool/size", json!("3MB")),
                "BUFFER_POOL|egress_lossy_pool: size \"3MB\" is not a number of bytes",
            ),
            (
                set("/BUFFER_PROFILE/egress_lossy_profile/pool", json!("nowhere")),
                "BUFFER_PROFILE|egress_lossy_profile: pool \"nowhere\" is not in BUFFER_POOL",
            ),
            (
                set("/BUFFER_PROFILE/pg_lossless_100000_5m_profile/headroom_type", json!("dynamic")),
                "BUFFER_PROFILE|pg_lossless_100000_5m_profile: headroom_type \"dynamic\"",
            ),
            (
                set("/BUFFER_PROFILE/egress_lossy_profile/packet_discard_action", json!("trim")),
                "BUFFER_PROFILE|egress_lossy_profile: packet_discard_action \"trim\"",
            ),
            (
                set("/BUFFER_PROFILE/egress_lossy_profile/mystery", json!("1")),
                "BUFFER_PROFILE|egress_lossy_profile: mystery is not modelled",
            ),
            (
                set(
                    "/BUFFER_PORT_INGRESS_PROFILE_LIST",
                    json!({"Ethernet0": {"profile_list": "ingress_lossless_profile"}}),
                ),
                "BUFFER_PORT_INGRESS_PROFILE_LIST|Ethernet0: profile_list: per-port pool limits are not modelled",
            ),
            (
                set(
                    "/BUFFER_PORT_EGRESS_PROFILE_LIST",
                    json!({"Ethernet4": {"profile_list": "egress_lossless_profile"}}),
                ),
                "BUFFER_PORT_EGRESS_PROFILE_LIST|Ethernet4: profile_list",
            ),
            (set("/BUFFER_PG/Ethernet8|0", json!({})), "BUFFER_PG|Ethernet8|0: profile is missing"),
            (
                set("/BUFFER_PG/Ethernet8|0/profile", json!("NULL")),
                "BUFFER_PG|Ethernet8|0: profile \"NULL\" is not in BUFFER_PROFILE",
            ),
            (
                set("/BUFFER_QUEUE/Ethernet8|7/profile", json!("[BUFFER_POOL|egress_lossy_pool]")),
                "BUFFER_QUEUE|Ethernet8|7: profile \"[BUFFER_POOL|egress_lossy_pool]\" does not refer to BUFFER_PROFILE",
            ),
            (
                set("/BUFFER_QUEUE/Ethernet8|7", json!({"profile": "egress_lossy_profile", "dynamic_th": "1"})),
                "BUFFER_QUEUE|Ethernet8|7: dynamic_th is not modelled",
            ),
            (
                set("/BUFFER_QUEUE/Ethernet99|7", json!({"profile": "egress_lossy_profile"})),
                "BUFFER_QUEUE|Ethernet99|7: port Ethernet99 is not in PORT",
            ),
            (set("/PORT/Ethernet4/speed", json!("fast")), "PORT|Ethernet4: speed \"fast\" is not a speed in Mb/s"),
            (set("/PORT/Ethernet4/speed", json!("0")), "PORT|Ethernet4: speed \"0\" is not a speed in Mb/s"),
            (
                set("/PORT_QOS_MAP/Ethernet8/pfc_enable", json!("3")),
                "PORT_QOS_MAP|Ethernet8: pfc_enable is 3 here and 3,4 on Ethernet0: pfcswitch's lossless set ([pfc] lossless) is switch-wide",
            ),
            (
                set("/PORT_QOS_MAP/Ethernet12/pfc_enable", json!("3,9")),
                "PORT_QOS_MAP|Ethernet12: pfc_enable: `9` is not a priority 0-7",
            ),
            (
                set("/PORT_QOS_MAP/Ethernet0/tc_to_pg_map", json!("OTHER")),
                "PORT_QOS_MAP|Ethernet0: tc_to_pg_map \"OTHER\" is not in TC_TO_PRIORITY_GROUP_MAP",
            ),
            (
                set("/TC_TO_QUEUE_MAP/AZURE/3", json!("1")),
                "TC_TO_QUEUE_MAP|AZURE: 3: maps priority 3 to queue 1, and priority 3 is lossless (pfc_enable)",
            ),
            (
                set("/CABLE_LENGTH/AZURE/Ethernet8", json!("5 metres")),
                "CABLE_LENGTH|AZURE: Ethernet8 \"5 metres\" is not a length in whole metres",
            ),
            (
                set("/BUFFER_PROFILE/pg_lossless_100000_5m_profile/xoff", json!("20000")),
                "the imported configuration is refused: buffer.profiles.pg_lossless_100000_5m_profile.xoff: headroom xoff = 20000 B is below the 40635 B",
            ),
        ];
        for (change, expected) in cases {
            let error = refused(change);
            assert!(error.contains(expected), "expected `{expected}` in `{error}`");
        }
    }

    #[test]
    fn a_lossy_queue_left_unmapped_imports_with_a_warning() {
        let mut db = example();
        db["BUFFER_QUEUE"].as_object_mut().unwrap().remove("Ethernet4|7");
        let Imported { warnings, .. } = imported(&db);
        assert!(warnings.iter().any(|w| w.contains("no entry maps port `Ethernet4` priorities [7]")), "{warnings:?}");
    }

    #[test]
    fn more_than_64_ports_are_refused() {
        let error = refused(|db| {
            for i in 0..65 {
                db["PORT"][format!("Ethernet{}", 100 + i)] = json!({"speed": "100000"});
                db["BUFFER_QUEUE"][format!("Ethernet{}|0-7", 100 + i)] = json!({"profile": "egress_lossy_profile"});
            }
        });
        assert!(error.contains("BUFFER_PG and BUFFER_QUEUE name 69 ports; pfcswitch takes at most 64"), "{error}");
    }

    #[test]
    fn bracketed_and_plain_references_import_alike() {
        let mut db = example();
        let bracket = |value: &mut Value, table: &str| {
            let name = value.as_str().unwrap().to_string();
            *value = json!(format!("[{table}|{name}]"));
        };
        for profile in db["BUFFER_PROFILE"].as_object_mut().unwrap().values_mut() {
            bracket(&mut profile["pool"], "BUFFER_POOL");
        }
        for table in ["BUFFER_PG", "BUFFER_QUEUE"] {
            for entry in db[table].as_object_mut().unwrap().values_mut() {
                bracket(&mut entry["profile"], "BUFFER_PROFILE");
            }
        }
        bracket(&mut db["PORT_QOS_MAP"]["Ethernet0"]["tc_to_pg_map"], "TC_TO_PRIORITY_GROUP_MAP");
        assert_ne!(db, example());
        assert_eq!(imported(&db).config, imported(&example()).config);
    }

    #[test]
    fn numbers_are_read_from_strings_and_from_json_numbers() {
        let mut db = example();
        db["BUFFER_PROFILE"][LOSSLESS]["dynamic_th"] = json!(-3);
        db["BUFFER_PROFILE"][LOSSLESS]["xoff"] = json!(41_600);
        db["BUFFER_POOL"]["egress_lossy_pool"]["size"] = json!(" 3145728");
        db["PORT"]["Ethernet8"]["speed"] = json!(100_000);
        assert_eq!(imported(&db).config, imported(&example()).config);

        db["BUFFER_POOL"]["ingress_lossless_pool"]["xoff"] = json!("0");
        assert_eq!(imported(&db).config.buffer.pools["ingress_lossless_pool"].xoff, None, "0: no shared headroom pool");
    }

    #[test]
    fn the_name_comes_from_the_hostname_sanitized_or_from_the_option() {
        let mut db = example();
        db["DEVICE_METADATA"]["localhost"]["hostname"] = json!("leaf 7/rack#2");
        assert_eq!(imported(&db).config.switch.name, "leaf-7-rack-2");
        assert_eq!(convert(&db, Some("sw9")).unwrap().config.switch.name, "sw9");
        db.as_object_mut().unwrap().remove("DEVICE_METADATA");
        assert_eq!(imported(&db).config.switch.name, DEFAULT_NAME);
    }

    #[test]
    fn the_cable_delay_is_the_longest_cable_at_5_ns_per_metre() {
        let mut db = example();
        db["CABLE_LENGTH"]["AZURE"]["Ethernet8"] = json!("40m");
        db["CABLE_LENGTH"]["AZURE"]["Ethernet200"] = json!("300m");
        // 40 m needs more headroom than the example's xoff: have it computed from the link.
        db["BUFFER_PROFILE"][LOSSLESS].as_object_mut().unwrap().remove("xoff");
        let Imported { config, longest_cable, .. } = imported(&db);
        assert_eq!(
            (longest_cable, config.pfc.cable_delay),
            (Some(40), Duration::from_nanos(200)),
            "Ethernet200 is not imported"
        );
        db.as_object_mut().unwrap().remove("CABLE_LENGTH");
        let Imported { config, longest_cable, .. } = imported(&db);
        assert_eq!(
            (longest_cable, config.pfc.cable_delay),
            (None, SwitchConfig::with_ports("d", 1, BitRate::gbps(1)).pfc.cable_delay)
        );
    }

    #[test]
    fn the_written_toml_reads_back_as_the_imported_configuration() {
        let imported = imported(&example());
        let text = render(&imported, "sonic-config_db.json").unwrap();
        assert!(text.starts_with("# Imported from sonic-config_db.json"), "{text}");
        assert!(text.contains("the longest CABLE_LENGTH (5m) at 5 ns/m"), "{text}");
        assert_eq!(toml::from_str::<SwitchConfig>(&text).unwrap(), imported.config);
        for absent in ["iface", "[policy]", "xoff = \"50KB\"", "default_priority"] {
            assert!(!text.lines().any(|line| line.starts_with(absent)), "`{absent}` in\n{text}");
        }
        assert!(text.contains("\"Ethernet0|3-4\" = \"pg_lossless_100000_5m_profile\""), "{text}");
        assert!(
            text.contains("xoff = 332800\n") && text.contains("xoff = 41600\n"),
            "SONiC's bytes as written: {text}"
        );
    }
}
