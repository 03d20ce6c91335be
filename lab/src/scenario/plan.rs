//! A scenario file (TOML): its topology, the switches' configs, a policy, the hosts' NIC
//! speed and transport, and a workload (`[[class]]` tables, see `crate::workload`); where
//! built-in ones live and how one is read. What a run makes of it is the run files'.

use super::fabric::FabricSpec;
use super::policy::RunPolicy;
use super::schemes::{CcMode, FecnSpec, QcnSpec};
use super::sets::{Applied, apply, blame, struct_fields};
use crate::workload::{ClassSpec, StormSpec};
use anyhow::{Context, Result, bail};
use pfcswitch_hosts::{
    DcqcnParams, DctcpModel, DctcpParams, HpccParams, HpccTransport, SwiftParams, SwiftTransport, TimelyParams,
    TimelyTransport, TransportConfig,
};
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, duration};
use pfcswitch_wire::{EthernetAddress, Framing, Ipv4Addr, Pcp};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use crate::repository::root;
use std::time::Duration;

/// A `[[fault]]` table: `at` and one of `down`, `up` (a link end `sw1:p4` or a host, or a
/// link's name `sw1:p4-sw4:p1` for both ends), `kill`, `restart` (a switch).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultSpec {
    /// From the workload's start.
    #[serde(with = "duration")]
    pub at: Duration,
    pub down: Option<String>,
    pub up: Option<String>,
    pub kill: Option<String>,
    pub restart: Option<String>,
}

/// A scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// A built-in topology (`topologies/NAME.toml`), a topology file (relative to the
    /// scenario file), or `fabric`: the one `[fabric]` generates.
    pub topology: String,
    /// Switch name → config file, relative to the scenario file (not for a fabric).
    #[serde(default)]
    pub switches: BTreeMap<String, PathBuf>,
    #[serde(default)]
    pub fabric: Option<FabricSpec>,
    #[serde(default)]
    pub policy: RunPolicy,
    /// The hosts' emulated NIC speed.
    pub speed: BitRate,
    /// IP MTU of every link and switch port (default 1500). Larger frames cost the copy-mode
    /// datapath less per byte: the 1 Gbit/s scenarios use RoCE's 4096-class MTU of 3000.
    #[serde(default = "default_mtu")]
    pub mtu: u32,
    /// How long the workload generates traffic; long-lived flows stop at its end.
    #[serde(with = "duration")]
    pub duration: Duration,
    /// How long sized messages may take to finish after that before the run gives up.
    #[serde(with = "duration", default = "default_drain")]
    pub drain: Duration,
    /// Period of the queue-depth samples.
    #[serde(with = "duration", default = "default_sample")]
    pub sample: Duration,
    /// Simulated runs: every switch port's egress bytes (all priorities) sampled at this
    /// period into `qlen.txt`, HPCC's histograms of queue lengths (its 100 ns: `"100ns"`);
    /// off by default ([HPCC's ns-3 files](docs/hpcc.md)).
    #[serde(default, with = "crate::workload::spans::optional_duration")]
    pub qlen_interval: Option<Duration>,
    /// With `qlen_interval`: the first sample this long after the workload's start (HPCC's
    /// `QLEN_MON_START` less its 2 s; default 0), and no sample after the first one at or
    /// past `qlen_end` (its `QLEN_MON_END`; default: the run's end).
    #[serde(default, with = "crate::workload::spans::optional_duration")]
    pub qlen_start: Option<Duration>,
    #[serde(default, with = "crate::workload::spans::optional_duration")]
    pub qlen_end: Option<Duration>,
    /// One-way delay of every cable in the simulator (default 1 µs); namespaces have veths.
    #[serde(with = "duration", default = "default_cable")]
    pub cable: Duration,
    #[serde(default)]
    pub transport: TransportSpec,
    /// QCN in the switches and hosts, unless `--qcn off`.
    #[serde(default)]
    pub qcn: Option<QcnSpec>,
    /// FECN in the switches and hosts, unless `--fecn off`.
    #[serde(default)]
    pub fecn: Option<FecnSpec>,
    /// Merged into every switch's config (e.g. `pfc = { xoff = "100KB" }`); every port's
    /// `speed` and `mtu` are the scenario's.
    #[serde(default)]
    pub overrides: toml::Table,
    #[serde(rename = "class")]
    pub classes: Vec<ClassSpec>,
    /// Hosts that storm: PFC XOFF towards their switch for a while, as a broken NIC sends.
    #[serde(rename = "storm", default)]
    pub storms: Vec<StormSpec>,
    /// Links that go down and up, switches killed and restarted, at set times.
    #[serde(rename = "fault", default)]
    pub faults: Vec<FaultSpec>,
    /// The `--set KEY=VALUE`s applied to the file before it was read (see `sets`), for
    /// `results.json`.
    #[serde(skip)]
    pub sets: Vec<String>,
}

impl Scenario {
    /// Its topology as listings show it: a topology name or file, or the fabric's parameters.
    pub fn topology_label(&self) -> String {
        self.fabric.as_ref().map_or_else(|| self.topology.clone(), FabricSpec::label)
    }

    /// The priorities its classes use, each once, ascending: what the queue sampler records.
    pub fn priorities(&self) -> Vec<u8> {
        let set: std::collections::BTreeSet<u8> = self.classes.iter().map(|c| c.priority).collect();
        set.into_iter().collect()
    }
}

fn default_mtu() -> u32 {
    1500
}

fn default_drain() -> Duration {
    Duration::from_secs(20)
}

fn default_cable() -> Duration {
    Duration::from_micros(1)
}

fn default_sample() -> Duration {
    Duration::from_millis(10)
}

/// `[transport]`: the endpoints' go-back-N transport (defaults: `TransportConfig::new`). The
/// runner hands it to each endpoint in its plan; the simulator uses it directly.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TransportSpec {
    /// Frame length of a full segment, without FCS (default: the MTU plus a tagged header).
    pub frame_len: Option<usize>,
    pub window: u32,
    #[serde(with = "duration")]
    pub rto: Duration,
    pub ack_every: u32,
    /// Width of the goodput bins of the throughput plot.
    #[serde(with = "duration")]
    pub bin: Duration,
    /// The hosts' NICs obey OFC PAUSE frames per flow (OFC-aware NICs) instead of as the
    /// PFC pause of the priority (RoCE NICs, the default).
    pub ofc_per_flow: bool,
    /// DCTCP senders (`dctcp = {}` for the defaults: g = 1/16, 10 segments to start): data
    /// goes out ECT(0) and windows follow the switches' CE marks (`[ecn]` in `overrides`).
    /// `model = "hpcc"`: HPCC's simulator's DCTCP, a rate from line rate down, with
    /// `base_rtt` its window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dctcp: Option<DctcpSpec>,
    /// RoCEv2 framing (`rocev2 = {}` for the defaults): segments are RC SENDs of a path MTU,
    /// acknowledgements RC ACKs and NAKs, and receivers send CNPs for CE-marked segments.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rocev2: Option<Rocev2Spec>,
    /// DCQCN reaction points (`dcqcn = {}` for Zhu et al.'s parameters, docs/dcqcn.md), with
    /// `rocev2`: data goes out ECT(0) and the receivers' CNPs set each queue pair's rate.
    /// The switches mark with `[ecn]` (in `overrides`). With `base_rtt`, DCQCN+w.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcqcn: Option<DcqcnSpec>,
    /// HPCC's senders (`hpcc = { base_rtt = "8us" }`, docs/congestion-control.md), with
    /// `rocev2`: data carries INT-MD, every switch stamps the classes' priorities (`[int]`),
    /// receivers echo the records and senders set rate and window from them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hpcc: Option<HpccSpec>,
    /// Which control's table runs when there are several (`--cc` overrides it): `none`,
    /// `dctcp`, `dcqcn`, `dcqcn-w`, `hpcc`, `timely`, `timely-w`, `swift`. A scenario may keep every
    /// control's settings and compare them with `--cc`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcMode>,
    /// TIMELY's senders (`timely = {}`, docs/congestion-control.md): a rate from the RTT
    /// gradient each ACK measures at the sender; with `base_rtt`, TIMELY+w.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timely: Option<TimelySpec>,
    /// Swift's senders (`swift = {}`): a window from the RTT against a target delay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swift: Option<SwiftSpec>,
}

/// `[transport.hpcc]`: HPCC's law (its keys, `HpccParams`), the base RTT T its window and its
/// utilization are measured against (HPCC §3.2; the simulator's largest base RTT of the
/// fabric, `GLOBAL_T 1`), and the INT records a data frame has room for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccSpec {
    pub base_rtt: Duration,
    pub max_hops: u8,
    pub params: HpccParams,
}

/// HPCC's simulator's `IntHeader::maxHop`.
const HPCC_MAX_HOPS: u8 = 5;

/// `[transport.dcqcn]` and `[transport.timely]`: a rate-based law's keys (`P`), and with
/// `base_rtt` its windowed variant, DCQCN+w or TIMELY+w (HPCC's simulator's `HAS_WIN 1`,
/// `VAR_WIN 1`): a window of the BDP at `base_rtt` scaled by the rate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateLaw<P> {
    pub base_rtt: Option<Duration>,
    pub params: P,
}

pub type DcqcnSpec = RateLaw<DcqcnParams>;
pub type DctcpSpec = RateLaw<DctcpParams>;
pub type TimelySpec = RateLaw<TimelyParams>;

/// `[transport.swift]`: Swift's law (`SwiftParams`' keys) and the hops its target delay
/// scales with when no INT echo counts them (default 1: one switch, a star).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SwiftSpec {
    pub hops: u32,
    pub params: SwiftParams,
}

impl Default for SwiftSpec {
    fn default() -> Self {
        SwiftSpec { hops: 1, params: SwiftParams::default() }
    }
}

/// A congestion control's table: the transport's keys `extra` names, taken out, and the
/// law's own keys, which its params type reads (refusing unknown ones).
fn split_law<'de, D: serde::Deserializer<'de>, P: serde::de::DeserializeOwned>(
    deserializer: D,
    extra: &[&str],
) -> Result<(toml::Table, P), D::Error> {
    use serde::de::Error;
    let mut table = toml::Table::deserialize(deserializer)?;
    let extras = extra.iter().filter_map(|&key| table.remove(key).map(|value| (key.to_string(), value))).collect();
    let params = P::deserialize(toml::Value::Table(table)).map_err(D::Error::custom)?;
    Ok((extras, params))
}

/// The law's keys with the transport's `extras` beside them, as one table.
fn join_law<S: serde::Serializer, P: Serialize>(
    serializer: S,
    params: &P,
    extras: toml::Table,
) -> Result<S::Ok, S::Error> {
    use serde::ser::Error;
    let mut table = toml::Table::try_from(params).map_err(S::Error::custom)?;
    table.extend(extras);
    table.serialize(serializer)
}

fn duration_key(extras: &toml::Table, key: &str) -> Result<Option<Duration>, String> {
    match extras.get(key) {
        None => Ok(None),
        Some(toml::Value::String(text)) => {
            pfcswitch_link::units::parse_duration(text).map(Some).map_err(|e| format!("{key}: {e}"))
        }
        Some(other) => Err(format!("{key}: {other} is not a duration like \"8us\"")),
    }
}

fn integer_key<T: TryFrom<i64>>(extras: &toml::Table, key: &str, range: &str) -> Result<Option<T>, String> {
    match extras.get(key) {
        None => Ok(None),
        Some(toml::Value::Integer(n)) => T::try_from(*n).map(Some).map_err(|_| format!("{key}: {n} is not {range}")),
        Some(other) => Err(format!("{key}: {other} is not a number")),
    }
}

fn duration_value(duration: Duration) -> toml::Value {
    toml::Value::String(pfcswitch_link::units::format_duration(duration))
}

impl<'de> Deserialize<'de> for HpccSpec {
    /// `base_rtt` (required) and `max_hops` beside the law's own keys.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<HpccSpec, D::Error> {
        use serde::de::Error;
        let (extras, params) = split_law(deserializer, &["base_rtt", "max_hops"])?;
        let base_rtt = duration_key(&extras, "base_rtt").map_err(D::Error::custom)?.ok_or_else(|| {
            D::Error::custom(
                "base_rtt is required: the fabric's largest base RTT, which sizes HPCC's window (T in HPCC §3.2)",
            )
        })?;
        let max_hops = integer_key(&extras, "max_hops", "0-255").map_err(D::Error::custom)?.unwrap_or(HPCC_MAX_HOPS);
        Ok(HpccSpec { base_rtt, max_hops, params })
    }
}

impl Serialize for HpccSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let extras = toml::Table::from_iter([
            ("base_rtt".to_string(), duration_value(self.base_rtt)),
            ("max_hops".to_string(), toml::Value::Integer(self.max_hops.into())),
        ]);
        join_law(serializer, &self.params, extras)
    }
}

impl<'de, P: serde::de::DeserializeOwned> Deserialize<'de> for RateLaw<P> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<RateLaw<P>, D::Error> {
        use serde::de::Error;
        let (extras, params) = split_law(deserializer, &["base_rtt"])?;
        Ok(RateLaw { base_rtt: duration_key(&extras, "base_rtt").map_err(D::Error::custom)?, params })
    }
}

impl<P: Serialize> Serialize for RateLaw<P> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let extras = self.base_rtt.map(|rtt| ("base_rtt".to_string(), duration_value(rtt)));
        join_law(serializer, &self.params, extras.into_iter().collect())
    }
}

impl<'de> Deserialize<'de> for SwiftSpec {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<SwiftSpec, D::Error> {
        use serde::de::Error;
        let (extras, params) = split_law(deserializer, &["hops"])?;
        let hops = integer_key(&extras, "hops", "a hop count").map_err(D::Error::custom)?.unwrap_or(1);
        Ok(SwiftSpec { hops, params })
    }
}

impl Serialize for SwiftSpec {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let extras = toml::Table::from_iter([("hops".to_string(), toml::Value::Integer(self.hops.into()))]);
        join_law(serializer, &self.params, extras)
    }
}

impl HpccSpec {
    fn transport(&self) -> HpccTransport {
        HpccTransport { params: self.params, base_rtt: self.base_rtt, max_hops: self.max_hops }
    }
}

/// `[transport.rocev2]`: what a RoCE NIC's queue pairs are set up with.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Rocev2Spec {
    /// Path MTU, the RoCE payload of a full packet: 256, 512, 1024, 2048 or 4096 bytes, as
    /// RoCE NICs offer it. Default: the largest the link MTU holds (1024 on 1500-byte links,
    /// 2048 at 3000, 4096 on jumbo links).
    pub pmtu: Option<u32>,
    /// At most one CNP per queue pair in this interval (DCQCN's N, 50 µs).
    #[serde(with = "duration")]
    pub cnp_interval: Duration,
    /// The priority CNPs go on; default: the data's.
    pub cnp_priority: Option<u8>,
}

impl Default for Rocev2Spec {
    fn default() -> Self {
        Rocev2Spec { pmtu: None, cnp_interval: Duration::from_micros(50), cnp_priority: None }
    }
}

/// The path MTUs RoCE NICs offer (IBTA's 256–4096 byte IB MTUs).
const PMTUS: [u32; 5] = [256, 512, 1024, 2048, 4096];
/// What a RoCEv2 packet carries besides its payload: IPv4, UDP, BTH and ICRC.
const ROCEV2_IP_OVERHEAD: u32 = 20 + 8 + 12 + 4;
/// The largest frame (without FCS) the AF_XDP datapath carries: a UMEM chunk less the 256
/// bytes of XDP headroom the kernel keeps in front of a received frame.
const DATAPATH_MAX_FRAME: u32 = pfcswitchd::host_port::MAX_FRAME_LEN as u32 - 256;

impl Rocev2Spec {
    /// The path MTU in force on links of IP MTU `mtu`.
    pub fn pmtu(&self, mtu: u32) -> Result<u32> {
        let fits = |pmtu: u32| pmtu + ROCEV2_IP_OVERHEAD <= mtu;
        match self.pmtu {
            Some(pmtu) if !PMTUS.contains(&pmtu) => bail!("transport.rocev2.pmtu: {pmtu} is not one of {PMTUS:?}"),
            Some(pmtu) if !fits(pmtu) => bail!(
                "transport.rocev2.pmtu: {pmtu} needs an IP MTU of {}, the links have {mtu}",
                pmtu + ROCEV2_IP_OVERHEAD
            ),
            Some(pmtu) => Ok(pmtu),
            None => PMTUS.into_iter().rev().find(|&p| fits(p)).with_context(|| {
                format!(
                    "transport.rocev2: an IP MTU of {mtu} holds no RoCE path MTU (256 needs {})",
                    256 + ROCEV2_IP_OVERHEAD
                )
            }),
        }
    }
}

impl Default for TransportSpec {
    fn default() -> Self {
        let defaults = TransportConfig::new(EthernetAddress([2, 0, 0, 0, 0, 1]), Ipv4Addr::LOCALHOST, BitRate::gbps(1));
        TransportSpec {
            frame_len: None,
            window: defaults.window,
            rto: defaults.rto,
            ack_every: defaults.ack_every,
            bin: defaults.bin,
            ofc_per_flow: false,
            dctcp: None,
            rocev2: None,
            dcqcn: None,
            hpcc: None,
            cc: None,
            timely: None,
            swift: None,
        }
    }
}

impl TransportSpec {
    /// Refuses what cannot run on links of IP MTU `mtu` and NICs of `speed`, on the datapath
    /// if `datapath`.
    pub fn validate(&self, mtu: u32, speed: BitRate, datapath: bool) -> Result<()> {
        let controls = self.controls();
        if controls.len() > 1 {
            bail!(
                "transport: {} exclude each other: one congestion control at a time (say which runs with \
                 transport.cc or --cc)",
                controls.join(" and ")
            );
        }
        if let Some(timely) = &self.timely {
            timely.params.validate_for(speed).map_err(|e| anyhow::anyhow!("transport.timely: {e}"))?;
            if timely.base_rtt.is_some_and(|rtt| rtt.is_zero()) {
                bail!("transport.timely.base_rtt: must be above 0: it sizes TIMELY+w's window");
            }
        }
        if let Some(dctcp) = &self.dctcp {
            dctcp.params.validate_for(speed).map_err(|e| anyhow::anyhow!("transport.dctcp: {e}"))?;
            match dctcp.base_rtt {
                Some(_) if dctcp.params.model == DctcpModel::Window => bail!(
                    "transport.dctcp.base_rtt: only model = \"hpcc\" takes it (a window from the rate); the window \
                     model keeps its own congestion window"
                ),
                Some(rtt) if rtt.is_zero() => bail!("transport.dctcp.base_rtt: must be above 0: it sizes the window"),
                _ => {}
            }
        }
        if let Some(swift) = &self.swift {
            swift.params.validate().map_err(|e| anyhow::anyhow!("transport.swift: {e}"))?;
        }
        if let Some(dcqcn) = &self.dcqcn {
            dcqcn.params.validate_for(speed).map_err(|e| anyhow::anyhow!("transport.dcqcn: {e}"))?;
            if self.rocev2.is_none() {
                bail!("transport.dcqcn needs transport.rocev2: DCQCN reacts to RoCEv2's CNPs");
            }
        }
        if let Some(hpcc) = &self.hpcc {
            hpcc.params.validate_for(speed).map_err(|e| anyhow::anyhow!("transport.hpcc: {e}"))?;
            if self.rocev2.is_none() {
                bail!("transport.hpcc needs transport.rocev2: HPCC runs on RDMA NICs' queue pairs");
            }
            if hpcc.base_rtt.is_zero() {
                bail!("transport.hpcc.base_rtt: must be above 0: it sizes the window and weighs U");
            }
        }
        let Some(rocev2) = &self.rocev2 else { return Ok(()) };
        let reserve = self.int_reserve();
        let frame =
            rocev2.pmtu(mtu - reserve)? + ROCEV2_IP_OVERHEAD + reserve + pfcswitch_switch::config::L2_HEADER_MAX as u32;
        if datapath && frame > DATAPATH_MAX_FRAME {
            bail!(
                "transport.rocev2: a path MTU of {} makes {frame}-byte frames; the AF_XDP datapath carries at most \
                 {DATAPATH_MAX_FRAME} (4 KiB UMEM chunks, no multi-buffer): set pmtu = 2048 or run it with --sim",
                rocev2.pmtu(mtu)?
            );
        }
        if rocev2.cnp_priority.is_some_and(|p| p > 7) {
            bail!("transport.rocev2.cnp_priority: {} is not a priority (0-7)", rocev2.cnp_priority.unwrap_or(0));
        }
        if self.dctcp.is_some() {
            bail!("transport: dctcp and rocev2 exclude each other: RC acknowledgements carry no ECN echo");
        }
        Ok(())
    }

    /// The core transport's settings for one host of a run: a full segment is an MTU-sized
    /// IPv4 packet in a tagged frame (in RoCEv2, a path MTU's payload) unless `frame_len`
    /// says otherwise. `validate` has accepted it.
    pub fn config(
        &self,
        mac: EthernetAddress,
        ip: Ipv4Addr,
        mtu: u32,
        speed: BitRate,
        epoch: Instant,
        end: Instant,
    ) -> TransportConfig {
        let tagged = |ip: u32| ip as usize + pfcswitch_switch::config::L2_HEADER_MAX as usize;
        // Room for HPCC's INT records comes out of the MTU, as a NIC sizes its path MTU.
        let reserve = self.int_reserve();
        let rocev2_pmtu = self.rocev2.map(|r| r.pmtu(mtu - reserve).expect("validated"));
        let defaults = TransportConfig::new(mac, ip, speed);
        let full = |pmtu: u32| pmtu + ROCEV2_IP_OVERHEAD + reserve;
        TransportConfig {
            frame_len: self.frame_len.unwrap_or_else(|| tagged(rocev2_pmtu.map_or(mtu, full))),
            framing: if self.rocev2.is_some() { Framing::Rocev2 } else { Framing::Traffic },
            cnp_interval: self.rocev2.map_or(defaults.cnp_interval, |r| r.cnp_interval),
            cnp_priority: self.rocev2.and_then(|r| r.cnp_priority).and_then(Pcp::new),
            window: self.window,
            rto: self.rto,
            ack_every: self.ack_every,
            bin: self.bin,
            epoch,
            long_lived_until: end,
            dctcp: self.dctcp.map(|d| d.params),
            dcqcn: self.dcqcn.map(|d| d.params),
            hpcc: self.hpcc.map(|h| h.transport()),
            timely: self.timely.map(|t| TimelyTransport { params: t.params }),
            rate_window: (self.dcqcn.and_then(|d| d.base_rtt))
                .or(self.timely.and_then(|t| t.base_rtt))
                .or(self.dctcp.and_then(|d| d.base_rtt)),
            swift: self.swift.map(|s| SwiftTransport { params: s.params, hops: s.hops }),
            ..defaults
        }
    }

    /// The congestion controls the spec turns on, by key.
    pub fn controls(&self) -> Vec<&'static str> {
        let on = [
            ("dctcp", self.dctcp.is_some()),
            ("dcqcn", self.dcqcn.is_some()),
            ("hpcc", self.hpcc.is_some()),
            ("timely", self.timely.is_some()),
            ("swift", self.swift.is_some()),
        ];
        on.into_iter().filter_map(|(name, on)| on.then_some(name)).collect()
    }

    /// Bytes a data frame keeps free for INT records (HPCC), out of the MTU.
    fn int_reserve(&self) -> u32 {
        self.hpcc.map_or(0, |h| h.transport().int_reserve() as u32)
    }
}

fn builtin_dir() -> PathBuf {
    root().join("scenarios")
}

/// Reads a scenario by built-in name or path; returns it with its file.
pub fn load(name_or_file: &str) -> Result<(Scenario, PathBuf)> {
    load_with(name_or_file, &[])
}

/// Reads a scenario by built-in name or path with `sets` (`KEY=VALUE`, see `sets`) applied
/// to its table first; returns it with its file.
pub fn load_with(name_or_file: &str, sets: &[String]) -> Result<(Scenario, PathBuf)> {
    let builtin = builtin_dir().join(format!("{name_or_file}.toml"));
    let path = if builtin.is_file() { builtin } else { PathBuf::from(name_or_file) };
    if !path.is_file() {
        bail!("no scenario `{name_or_file}`: not a built-in one (see `pfcswitch scenario list`) nor a file");
    }
    let text = std::fs::read_to_string(&path).with_context(|| format!("cannot read {}", path.display()))?;
    let file = path.display();
    let mut scenario: Scenario = if sets.is_empty() {
        // From the text, so that an error points at its line.
        toml::from_str(&text).map_err(|e| anyhow::anyhow!("{file}: {e}"))?
    } else {
        let mut table: toml::Table = text.parse().map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
        let keys = struct_fields::<Scenario>();
        let applied: Vec<Applied> = sets.iter().map(|set| apply(&mut table, set, keys)).collect::<Result<_>>()?;
        serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
            let culprits = blame(&applied, &e.path().to_string()).join(" --set ");
            anyhow::anyhow!("{file} with --set {culprits}: {}: {}", e.path(), e.inner().message().trim())
        })?
    };
    scenario.sets = sets.to_vec();
    // A topology file is named relative to the scenario file, as its switches' configs are.
    if scenario.topology.contains('/') || scenario.topology.ends_with(".toml") {
        let base = path.parent().unwrap_or(Path::new("."));
        scenario.topology = base.join(&scenario.topology).to_string_lossy().into_owned();
    }
    Ok((scenario, path))
}

/// `pfcswitch scenario list`: the built-in scenarios as a table.
pub fn list() -> Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(builtin_dir())
        .with_context(|| format!("cannot list {}", builtin_dir().display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    entries.sort();
    let mut table = crate::table::Table::new(&["NAME", "TOPOLOGY", "POLICY", "DESCRIPTION"]);
    for path in entries {
        let (scenario, _) = load(&path.to_string_lossy())?;
        table.row(vec![
            scenario.name.clone(),
            scenario.topology_label(),
            scenario.policy.name().into(),
            scenario.description,
        ]);
    }
    table.print();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn sets_apply_to_the_file_before_it_is_read() {
        let sets =
            ["duration=50ms", "transport.window=32", "class.query.rate=10.0", "pfc.xoff=100KB"].map(String::from);
        let (scenario, file) = load_with("incast", &sets).unwrap();
        assert_eq!(scenario.duration, Duration::from_millis(50));
        assert_eq!(scenario.transport.window, 32);
        assert_eq!(scenario.classes[0].rate, Some(10.0));
        assert_eq!(scenario.overrides["pfc"]["xoff"].as_str(), Some("100KB"));
        assert_eq!(scenario.sets, sets);
        // Relative paths are still the file's.
        assert!(file.ends_with("scenarios/incast.toml"));
        assert_eq!(scenario.switches["sw1"], Path::new("../configs/default.toml"));
        assert!(load("incast").unwrap().0.sets.is_empty());
    }

    #[test]
    fn a_bad_nested_key_names_its_set() {
        let sets = ["duration=1s", "transport.windw=3"].map(String::from);
        let error = load_with("incast", &sets).unwrap_err().to_string();
        assert!(error.contains("with --set transport.windw=3: transport.windw: unknown field `windw`"), "{error}");
        assert!(!error.contains("duration=1s"), "{error}");
        let error = load_with("incast", &["duration=soon".into()]).unwrap_err().to_string();
        assert!(error.contains("with --set duration=soon: duration:"), "{error}");
    }

    #[test]
    fn sets_know_the_scenario_files_keys() {
        let keys = struct_fields::<Scenario>();
        for key in ["name", "duration", "transport", "overrides", "class", "storm"] {
            assert!(keys.contains(&key), "{key} missing from {keys:?}");
        }
        assert!(!keys.contains(&"sets") && !keys.contains(&"classes"));
    }

    #[test]
    fn rocev2_takes_the_largest_path_mtu_the_links_hold_and_refuses_what_cannot_run() {
        let spec = |rocev2: &str| -> TransportSpec { toml::from_str(&format!("rocev2 = {{ {rocev2} }}")).unwrap() };
        let mac = EthernetAddress([2, 0, 0, 0, 0, 1]);
        let config = |spec: &TransportSpec, mtu| {
            spec.validate(mtu, BitRate::gbps(1), true).unwrap();
            spec.config(mac, Ipv4Addr::LOCALHOST, mtu, BitRate::gbps(1), Instant::ZERO, Instant::ZERO)
        };
        // 1500: PMTU 1024, 18 + 20 + 8 + 12 + 1024 + 4 bytes a full frame, 1004 of them message.
        let on_1500 = config(&spec(""), 1500);
        assert_eq!((on_1500.framing, on_1500.frame_len, on_1500.payload_len()), (Framing::Rocev2, 1086, 1004));
        assert_eq!(on_1500.cnp_interval, Duration::from_micros(50));
        assert_eq!(config(&spec(""), 3000).frame_len, 18 + 44 + 2048);
        let chosen = config(&spec("pmtu = 512, cnp_interval = \"5ms\", cnp_priority = 6"), 1500);
        assert_eq!(
            (chosen.frame_len, chosen.cnp_interval, chosen.cnp_priority),
            (574, Duration::from_millis(5), Pcp::new(6))
        );
        let refused = |rocev2: &str, mtu, datapath| {
            spec(rocev2).validate(mtu, BitRate::gbps(1), datapath).unwrap_err().to_string()
        };
        assert!(refused("pmtu = 1000", 1500, false).contains("transport.rocev2.pmtu: 1000 is not one of"));
        assert!(refused("pmtu = 2048", 1500, false).contains("needs an IP MTU of 2092, the links have 1500"));
        assert!(refused("", 9000, true).contains("a path MTU of 4096 makes 4158-byte frames"));
        spec("").validate(9000, BitRate::gbps(1), false).expect("the simulator carries 4 KB path MTUs");
        assert!(refused("cnp_priority = 8", 1500, false).contains("transport.rocev2.cnp_priority: 8"));
        let refused = |transport: &str| {
            let spec: TransportSpec = toml::from_str(transport).unwrap();
            spec.validate(1500, BitRate::gbps(1), false).unwrap_err().to_string()
        };
        assert!(refused("rocev2 = {}\ndctcp = {}").contains("dctcp and rocev2 exclude each other"));
        let window_rtt = refused("dctcp = { base_rtt = \"8us\" }");
        assert!(window_rtt.contains("transport.dctcp.base_rtt: only model = \"hpcc\" takes it"), "{window_rtt}");
        let fast_ai = refused("dctcp = { model = \"hpcc\", additive_increase = \"400Gbps\" }");
        assert!(fast_ai.contains("transport.dctcp: additive_increase 400"), "{fast_ai}");
        let window: TransportSpec = toml::from_str("dctcp = { additive_increase = \"400Gbps\" }").unwrap();
        window.validate(1500, BitRate::mbps(100), false).expect("the window model has no rate to check");
        assert!(refused("dcqcn = {}").contains("transport.dcqcn needs transport.rocev2"));
        let bad_g = refused("rocev2 = {}\ndcqcn = { g = \"0/256\" }");
        assert!(bad_g.contains("transport.dcqcn: g 0/256 must be in (0, 1]"), "{bad_g}");
        let dcqcn = config(&TransportSpec { dcqcn: Some(DcqcnSpec::default()), ..spec("") }, 1500);
        assert_eq!(dcqcn.dcqcn, Some(DcqcnParams::default()));
    }

    #[test]
    fn the_congestion_controls_read_their_laws_keys_beside_the_transports_and_refuse_what_cannot_run() {
        let at_100g = |spec: &TransportSpec| {
            let (mac, ip) = (EthernetAddress([2, 0, 0, 0, 0, 1]), Ipv4Addr::LOCALHOST);
            spec.config(mac, ip, 1500, BitRate::gbps(100), Instant::ZERO, Instant::ZERO)
        };
        let parsed = |transport: &str| toml::from_str::<TransportSpec>(transport).map_err(|e| e.to_string());
        let hpcc = parsed("rocev2 = {}\nhpcc = { base_rtt = \"8us\", target_utilization = 0.9 }").unwrap();
        let spec = hpcc.hpcc.unwrap();
        assert_eq!((spec.base_rtt, spec.max_hops), (Duration::from_micros(8), 5));
        assert_eq!(spec.params.target_utilization, 0.9);
        hpcc.validate(1500, BitRate::gbps(100), false).unwrap();
        // Room for five 24-byte records and their header comes out of the MTU: 1024-byte
        // SENDs still fit 1500.
        let frame = at_100g(&hpcc);
        assert_eq!(frame.frame_len, 18 + 1024 + 44 + 136, "tagged Ethernet, the SEND, its headers, the room");
        let round_trip = toml::to_string(&hpcc).unwrap();
        assert_eq!(parsed(&round_trip).unwrap().hpcc, Some(spec), "{round_trip}");
        assert!(parsed("hpcc = {}").unwrap_err().contains("base_rtt is required"));
        assert!(parsed("hpcc = { base_rtt = \"8us\", eta = 0.9 }").unwrap_err().contains("unknown field `eta`"));
        assert!(parsed("hpcc = { base_rtt = 8 }").unwrap_err().contains("base_rtt: 8 is not a duration"));
        let refused = |transport: &str| {
            parsed(transport).unwrap().validate(1500, BitRate::gbps(100), false).unwrap_err().to_string()
        };
        assert!(refused("hpcc = { base_rtt = \"8us\" }").contains("transport.hpcc needs transport.rocev2"));
        let both = refused("rocev2 = {}\ndcqcn = {}\nhpcc = { base_rtt = \"8us\" }");
        assert!(both.contains("dcqcn and hpcc exclude each other: one congestion control at a time"), "{both}");
        let eta = refused("rocev2 = {}\nhpcc = { base_rtt = \"8us\", target_utilization = 1.5 }");
        assert!(eta.contains("transport.hpcc: target_utilization"), "{eta}");

        let timely = parsed("timely = { base_rtt = \"20us\", beta = 0.8 }").unwrap().timely.unwrap();
        assert_eq!(timely.base_rtt, Some(Duration::from_micros(20)), "TIMELY+w");
        assert!(parsed("timely = {}").unwrap().timely.unwrap().base_rtt.is_none(), "TIMELY alone");
        let dcqcn_w = parsed("rocev2 = {}\ndcqcn = { base_rtt = \"20us\", g = \"1/256\" }").unwrap();
        let frame = at_100g(&dcqcn_w);
        assert_eq!(frame.rate_window, Some(Duration::from_micros(20)), "DCQCN+w");
        assert_eq!(parsed(&toml::to_string(&dcqcn_w).unwrap()).unwrap().dcqcn, dcqcn_w.dcqcn);
        assert!(parsed("dcqcn = { base_rtt = \"20us\", gain = 1 }").unwrap_err().contains("unknown field `gain`"));
        assert_eq!(parsed("swift = { hops = 3 }").unwrap().swift.unwrap().hops, 3);
        assert!(refused("swift = { max_mdf = 1.0 }").contains("transport.swift: max_mdf"));
    }
}
