//! The options of `pfcswitch traffic send`, `recv` and `storm`.

use clap::Args;
use pfcswitch_link::units::{BitRate, ByteSize};
use pfcswitch_wire::{EthernetAddress, Ipv4Addr, Pcp};
use std::time::Duration;

#[derive(Debug, Args)]
pub struct SendArgs {
    /// The host interface to send on.
    #[arg(long)]
    pub(super) iface: String,
    /// Destination MAC address.
    #[arg(long)]
    pub(super) dst: EthernetAddress,
    #[arg(long, default_value = "10.0.0.254")]
    pub(super) dst_ip: Ipv4Addr,
    /// 802.1Q priority of the flow.
    #[arg(long, value_parser = parse_pcp)]
    pub(super) pcp: Pcp,
    #[arg(long, default_value_t = 1)]
    pub(super) vid: u16,
    /// The emulated NIC speed.
    #[arg(long, default_value = "1Gbps")]
    pub(super) speed: BitRate,
    /// Offered rate on the wire (default: as fast as the NIC and pauses allow).
    #[arg(long)]
    pub(super) rate: Option<BitRate>,
    /// Frame length without FCS (with --rocev2 the path MTU sets it: --pmtu).
    #[arg(long, default_value_t = 1500, conflicts_with = "rocev2")]
    pub(super) size: usize,
    /// Frames to send (with --rocev2: full segments, sent as messages that end when
    /// acknowledged).
    #[arg(long, conflicts_with = "duration")]
    pub(super) frames: Option<u64>,
    /// Send for this long (with --rocev2 and no --message: one long-lived message).
    #[arg(long, value_parser = parse_duration)]
    pub(super) duration: Option<Duration>,
    /// The flow (with --rocev2: the connection, i.e. the destination QP less 0x100).
    #[arg(long, default_value_t = 1)]
    pub(super) flow: u32,
    /// After the last frame, keep receiving (and counting PAUSE/PFC, and with --rocev2
    /// ACKs) for this long, so the switch's final XON is not lost on an endpoint that already
    /// left. Default: 0s, 200ms with --rocev2 (the ACKs of what is still in flight).
    #[arg(long, value_parser = parse_duration)]
    pub(super) linger: Option<Duration>,
    /// Obey OFC PAUSE frames per flow, as an OFC-aware NIC would (default: as the PFC pause
    /// of the priority, as a RoCE NIC does).
    #[arg(long)]
    pub(super) ofc_per_flow: bool,
    /// Send RoCEv2 RC SENDs (UDP 4791) over the go-back-N transport of the scenario
    /// endpoints, acknowledged by `traffic recv --rocev2`, instead of the raw sequenced flow.
    #[arg(long)]
    pub(super) rocev2: bool,
    #[command(flatten)]
    pub(super) roce: RoceArgs,
    /// React to the receiver's CNPs with a DCQCN reaction point (data goes out ECT(0)).
    #[arg(long, requires = "rocev2")]
    pub(super) dcqcn: bool,
    /// DCQCN's parameters as TOML keys, as a scenario's `[transport.dcqcn]` takes them
    /// (default: Zhu et al.'s), e.g. 'min_rate = "10Mbps", rate_increase_period = "1ms"'.
    #[arg(long, requires = "dcqcn", value_name = "TOML")]
    pub(super) dcqcn_params: Option<String>,
    /// Send back-to-back messages of this size instead of one (--rocev2).
    #[arg(long, requires = "rocev2", value_name = "BYTES")]
    pub(super) message: Option<ByteSize>,
}

/// What both RoCEv2 ends are set up with.
#[derive(Debug, Args)]
pub struct RoceArgs {
    /// The RoCE path MTU (--rocev2): 256, 512, 1024, 2048 or 4096; a full frame is this
    /// plus 62 bytes (tagged, no FCS). Default: the largest the interface's MTU holds.
    /// Give both ends the same.
    #[arg(long, requires = "rocev2")]
    pub(super) pmtu: Option<u32>,
}

#[derive(Debug, Args)]
pub struct RecvArgs {
    /// The host interface to receive on.
    #[arg(long)]
    pub(super) iface: String,
    /// Stop after this long.
    #[arg(long, value_parser = parse_duration, default_value = "10s")]
    pub(super) duration: Duration,
    /// Stop earlier, once frames have arrived and none came for this long.
    #[arg(long, value_parser = parse_duration)]
    pub(super) idle: Option<Duration>,
    /// Receive RoCEv2 RC SENDs from `traffic send --rocev2`: acknowledge them (RC ACKs and
    /// NAKs) and send CNPs for the CE-marked ones.
    #[arg(long)]
    pub(super) rocev2: bool,
    #[command(flatten)]
    pub(super) roce: RoceArgs,
    /// At most one CNP per connection in this interval (DCQCN's N) (--rocev2).
    #[arg(long, value_parser = parse_duration, default_value = "50us", requires = "rocev2")]
    pub(super) cnp_interval: Duration,
    /// The priority CNPs go on (default: the data's) (--rocev2).
    #[arg(long, value_parser = parse_pcp, requires = "rocev2")]
    pub(super) cnp_priority: Option<Pcp>,
}

/// The storm's options are a superset of SONiC's `pfc_gen.py` (sonic-mgmt), so a test bed's
/// fanout can call it in its place: `-i`, `-p`, `-t`, `-n`, `-g`, `-r` as pfc_gen reads them.
#[derive(Debug, Args)]
#[command(group = clap::ArgGroup::new("frame").required(true).args(["class", "priority", "global"]))]
pub struct StormArgs {
    /// The host interfaces whose links to keep paused, separated by commas (pfc_gen's -i):
    /// each gets every frame, in turn.
    #[arg(short = 'i', long = "iface", visible_alias = "interface", value_delimiter = ',', required = true)]
    pub(super) ifaces: Vec<String>,
    /// The priority (PFC class) to pause.
    #[arg(long, value_parser = parse_pcp)]
    pub(super) class: Option<Pcp>,
    /// The PFC class-enable bitmap, 0-255 (pfc_gen's -p): every class set gets the pause time.
    #[arg(short = 'p', long)]
    pub(super) priority: Option<u8>,
    /// 802.3x PAUSE frames for all traffic instead of PFC (pfc_gen's -g).
    #[arg(short = 'g', long)]
    pub(super) global: bool,
    /// Storm this long (default: until SIGINT or SIGTERM, or --num frames).
    #[arg(long, value_parser = parse_duration)]
    pub(super) duration: Option<Duration>,
    /// Stop after this many frames on each interface (pfc_gen's -n).
    #[arg(short = 'n', long)]
    pub(super) num: Option<u64>,
    /// Pause time of each frame, 0-65535 (pfc_gen's -t; 0, an XON, only with -p or -g, as
    /// pfc_gen sends resume frames: a `--class` storm never resumes).
    #[arg(short = 't', long, visible_alias = "time", default_value_t = u16::MAX)]
    pub(super) quanta: u16,
    /// Send under SCHED_FIFO at this priority (1-99; 0: the ordinary scheduler). A storm
    /// sleeps between frames, so it costs the machine little; under load, an ordinary task can
    /// wait milliseconds for the CPU, longer than a pause at 10 Gbit/s (3.4 ms), and the port
    /// resumes in the gap.
    #[arg(long, value_name = "PRIORITY", default_value_t = 1, value_parser = clap::value_parser!(u8).range(0..=99))]
    pub(super) realtime: u8,
    /// pfc_gen's syslog server (-r): accepted for its callers; the storm reports on stdout.
    #[arg(short = 'r', long = "rsyslog-server", hide = true)]
    pub(super) rsyslog_server: Option<String>,
    /// pfc_gen's one process per interface (-m): accepted; one paced loop serves them all.
    #[arg(short = 'm', long = "multiprocess", hide = true)]
    pub(super) multiprocess: bool,
    /// The link's speed: a quantum is 512 bit times at it, and XOFF is re-sent every quarter
    /// of the pause. Default: the interface's speed in sysfs, else 100Gbps (the shortest period).
    #[arg(long)]
    pub(super) speed: Option<BitRate>,
    /// Start at this CLOCK_MONOTONIC instant in nanoseconds, the clock every namespace shares
    /// (how the scenario runner starts a storm on time), instead of now.
    #[arg(long, value_name = "NANOSECONDS")]
    pub(super) at: Option<u64>,
}

fn parse_pcp(text: &str) -> Result<Pcp, String> {
    text.parse::<u8>().ok().and_then(Pcp::new).ok_or_else(|| format!("`{text}` is not a priority 0-7"))
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    pfcswitch_link::units::parse_duration(text).map_err(|e| e.to_string())
}
