//! `pfcswitch frame`: craft PAUSE, PFC, CNM, data and RoCEv2 frames into pcap files, and
//! decode captures with the same code the switch uses.

use crate::capture::{read_capture, write_pcap};
use crate::decode::decode;
use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{
    AETH_INVALID_CREDITS, AethRepr, AethSyndrome, BTH_LEN, BthRepr, CNM_MAX_ENCAPSULATED, CNP_PAYLOAD_LEN, CnTagRepr,
    CnmRepr, DEFAULT_PKEY, DataFrameSpec, EthernetAddress, FecnProbeRepr, FecnSubtype, FlowKey, Framing, ICRC_LEN,
    Ipv4Addr, L2Repr, MacControlRepr, NakCode, OfcHeader, OfcOp, Opcode, PAUSE_MULTICAST, Pcp, PfcRepr, RoceRepr,
    TRAFFIC_UDP_PORT, TrafficKind, TrafficRepr, VlanRepr, build_cnm_frame, build_data_frame, build_fecn_probe_frame,
    build_mac_control_frame, build_ofc_frame, build_roce_frame, ofc_entries_per_frame, ofc_frame_len,
};
use std::path::PathBuf;

#[derive(Debug, Subcommand)]
pub enum FrameCommand {
    /// An 802.1Qbb PFC frame.
    Pfc {
        #[command(flatten)]
        mac: MacControlArgs,
        /// A class and its pause time in quanta, e.g. `3=65535`; `N=0` resumes class N. Repeatable.
        #[arg(long = "class", value_name = "PRIO=QUANTA", value_parser = parse_class, required = true)]
        classes: Vec<(Pcp, u16)>,
    },
    /// An 802.3x PAUSE frame (all priorities).
    Pause {
        #[command(flatten)]
        mac: MacControlArgs,
        /// Pause time in quanta of 512 bit times (0 resumes).
        #[arg(long)]
        quanta: u16,
    },
    /// An OFC PAUSE or RESUME: a PFC frame for the priority with the OFC TLV naming flows
    /// (split over several frames, MORE set, when the list exceeds one frame of --frame-len).
    Ofc(OfcArgs),
    /// An 802.1Qau congestion notification message.
    Cnm(CnmArgs),
    /// A FECN rate discovery probe (EtherType 0x88B5; see docs/frames.md). With --count,
    /// consecutive sequence numbers.
    Fecn(FecnArgs),
    /// A traffic endpoint's frame: 802.1Q + IPv4 + UDP + pfcswitch traffic header.
    Data(DataArgs),
    /// A RoCEv2 RC SEND, ACK or NAK (IPv4 + UDP port 4791 + BTH [+ AETH] + ICRC). With
    /// --count, consecutive PSNs.
    Roce(RoceArgs),
    /// A RoCEv2 congestion notification packet (BTH opcode 0x81, A17.9.3), which a
    /// receiver sends the sender of CE-marked packets.
    Cnp(CnpArgs),
    /// Send every frame of a pcap or pcapng file out of an interface, byte for byte.
    Send {
        /// Interface to send on (in the current network namespace).
        #[arg(long)]
        iface: String,
        file: PathBuf,
        /// Send the file this many times.
        #[arg(long, default_value_t = 1)]
        repeat: u32,
    },
    /// Print what pfcswitch reads in each frame of a pcap or pcapng file.
    Decode {
        file: PathBuf,
        /// Also show pause times as durations at this link speed, e.g. `1Gbps`.
        #[arg(long)]
        speed: Option<BitRate>,
    },
}

/// `--src` of PAUSE and PFC frames when none is given (see its help).
const DEFAULT_MAC_CONTROL_SRC: EthernetAddress = EthernetAddress([0x02, 0, 0, 0, 0, 0x01]);

#[derive(Debug, Args)]
pub struct MacControlArgs {
    /// Source MAC address, the sending port's. The default is the first locally administered
    /// unicast address (no vendor's): receivers obey PAUSE and PFC whatever the source, which
    /// only names the sender in captures. Pass the port's own address to name it.
    #[arg(long, default_value_t = DEFAULT_MAC_CONTROL_SRC)]
    src: EthernetAddress,
    /// Destination MAC address.
    #[arg(long, default_value_t = PAUSE_MULTICAST)]
    dst: EthernetAddress,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct OutputArgs {
    /// Output pcap file.
    #[arg(short, long)]
    output: PathBuf,
    /// Number of copies to write (data frames get consecutive sequence numbers; an OFC list
    /// split over frames is written whole each time).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    count: u32,
}

#[derive(Debug, Args)]
pub struct OfcArgs {
    #[arg(long, value_parser = parse_ofc_op)]
    op: OfcOp,
    #[arg(long, value_parser = parse_pcp)]
    priority: Pcp,
    /// PAUSE time in quanta (a RESUME is always 0).
    #[arg(long, default_value_t = u16::MAX)]
    quanta: u16,
    /// PAUSE: every flow of the priority is paused, the listed ones are those recorded.
    #[arg(long)]
    coarse: bool,
    /// A flow as SRC_MAC>DST_MAC. Repeatable.
    #[arg(long = "flow", value_name = "SRC>DST", value_parser = parse_flow)]
    flows: Vec<FlowKey>,
    /// The longest frame in bytes (no FCS): 60, a standard MAC Control frame, carries one
    /// flow; longer is non-standard (as `[policy] ofc_frame_len`).
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(60..=9230))]
    frame_len: u32,
    #[command(flatten)]
    mac: MacControlArgs,
}

#[derive(Debug, Args)]
pub struct FecnArgs {
    /// The flow's source (the reaction point).
    #[arg(long)]
    src: EthernetAddress,
    /// The flow's destination, which reflects the probe.
    #[arg(long)]
    dst: EthernetAddress,
    /// The flow's priority: probes travel through the queues they measure.
    #[arg(long, default_value = "3", value_parser = parse_pcp)]
    pcp: Pcp,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(0..4095))]
    vid: u16,
    /// A reflected probe (destination to source) instead of a forward one.
    #[arg(long)]
    reflected: bool,
    #[arg(long, default_value_t = 0)]
    flow_id: u16,
    /// The first probe's sequence number.
    #[arg(long, default_value_t = 0)]
    sequence: u32,
    /// The rate field, e.g. `10Gbps` (a source writes its line rate).
    #[arg(long)]
    rate: BitRate,
    #[arg(long, default_value_t = 0)]
    hops: u8,
    /// The port that set the rate.
    #[arg(long, default_value = "00:00:00:00:00:00")]
    bottleneck: EthernetAddress,
    #[arg(long, default_value_t = 0)]
    timestamp_ns: u64,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Args)]
pub struct CnmArgs {
    /// The congestion point's MAC address.
    #[arg(long)]
    src: EthernetAddress,
    /// The source address of the sampled frame (the reaction point).
    #[arg(long)]
    dst: EthernetAddress,
    /// Priority of the CNM's own VLAN tag.
    #[arg(long, default_value = "6", value_parser = parse_pcp)]
    pcp: Pcp,
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..4095))]
    vid: u16,
    /// Flow id of the sampled frame's CN-TAG, copied into the CNM's CN-TAG.
    #[arg(long)]
    flow_id: Option<u16>,
    /// Congestion point identifier.
    #[arg(long, default_value_t = 0, value_parser = parse_u64)]
    cpid: u64,
    /// Quantized feedback |Fb|, 0–63.
    #[arg(long = "fb", value_parser = clap::value_parser!(u8).range(0..64))]
    quantized_feedback: u8,
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    qoffset: i16,
    #[arg(long, allow_negative_numbers = true, default_value_t = 0)]
    qdelta: i16,
    /// Priority of the sampled frame.
    #[arg(long, value_parser = parse_pcp)]
    encap_priority: Pcp,
    /// Destination address of the sampled frame.
    #[arg(long)]
    encap_dst: EthernetAddress,
    /// First bytes of the sampled frame's MSDU, in hex (at most 64 bytes).
    #[arg(long, default_value = "", value_parser = parse_hex)]
    msdu: HexBytes,
    /// Length of the sampled MSDU (defaults to the number of --msdu bytes).
    #[arg(long)]
    msdu_len: Option<u16>,
    #[command(flatten)]
    output: OutputArgs,
}

/// The tag and IPv4 header fields of a data or RoCEv2 frame.
#[derive(Debug, Args)]
pub struct IpArgs {
    /// 802.1Q priority; the frame is untagged without --pcp.
    #[arg(long, value_parser = parse_pcp)]
    pcp: Option<Pcp>,
    #[arg(long, default_value_t = 0, requires = "pcp", value_parser = clap::value_parser!(u16).range(0..4095))]
    vid: u16,
    #[arg(long, default_value = "10.0.0.1")]
    src_ip: Ipv4Addr,
    #[arg(long, default_value = "10.0.0.2")]
    dst_ip: Ipv4Addr,
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..64))]
    dscp: u8,
}

impl IpArgs {
    fn vlan(&self) -> Option<VlanRepr> {
        self.pcp.map(|pcp| VlanRepr { pcp, dei: false, vid: self.vid })
    }
}

#[derive(Debug, Args)]
pub struct DataArgs {
    #[arg(long)]
    src: EthernetAddress,
    #[arg(long)]
    dst: EthernetAddress,
    #[command(flatten)]
    ip: IpArgs,
    /// The IP header's ECN field: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..4))]
    ecn: u8,
    #[arg(long, default_value_t = TRAFFIC_UDP_PORT)]
    sport: u16,
    #[arg(long, default_value_t = TRAFFIC_UDP_PORT)]
    dport: u16,
    #[arg(long, default_value_t = 1)]
    flow: u32,
    /// Sequence number of the first frame.
    #[arg(long, default_value_t = 0)]
    seq: u32,
    #[arg(long, default_value_t = 0)]
    message: u32,
    /// Frame length in bytes without FCS (raised to the headers' size if smaller).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(60..=9000))]
    size: u16,
    #[command(flatten)]
    output: OutputArgs,
}

/// The addresses and tags of a RoCEv2 frame. The MACs default to h1 (02:00:00:00:00:01) →
/// h2 (02:00:00:00:00:02) and the IP addresses to theirs, as the other frame commands'.
#[derive(Debug, Args)]
pub struct RoceAddressArgs {
    #[arg(long, default_value = "02:00:00:00:00:01")]
    src: EthernetAddress,
    #[arg(long, default_value = "02:00:00:00:00:02")]
    dst: EthernetAddress,
    #[command(flatten)]
    ip: IpArgs,
    /// UDP source port (a RoCEv2 NIC picks one per QP for ECMP); the destination is 4791.
    #[arg(long, default_value_t = 49152)]
    sport: u16,
    /// The BTH destination QP, as on the wire: 24 bits, decimal or 0x-hex (pfcswitch's
    /// endpoints use flow id + 0x100).
    #[arg(long, value_parser = parse_u24)]
    qp: u32,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RoceOpcode {
    SendFirst,
    SendMiddle,
    SendLast,
    SendOnly,
    Ack,
    Nak,
}

#[derive(Debug, Args)]
pub struct RoceArgs {
    #[arg(long, value_enum)]
    opcode: RoceOpcode,
    /// PSN of the first frame (24 bits). An ACK names the last PSN received, a NAK the one
    /// expected.
    #[arg(long, default_value = "0", value_parser = parse_u24)]
    psn: u32,
    /// Message sequence number of an ACK or NAK's AETH (24 bits).
    #[arg(long, default_value = "0", value_parser = parse_u24)]
    msn: u32,
    /// The IP header's ECN field: 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..4))]
    ecn: u8,
    /// Frame length in bytes without FCS, for a SEND (its zero payload is padded to a multiple
    /// of 4, so the frame may be up to 3 bytes longer); ACKs and NAKs have their fixed length.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u16).range(60..=9000))]
    size: u16,
    #[command(flatten)]
    addresses: RoceAddressArgs,
}

#[derive(Debug, Args)]
pub struct CnpArgs {
    #[command(flatten)]
    addresses: RoceAddressArgs,
}

pub fn run(command: FrameCommand, json: bool) -> Result<()> {
    match command {
        FrameCommand::Pfc { mac, classes } => {
            let pfc = classes.iter().fold(PfcRepr::default(), |pfc, &(class, quanta)| pfc.with_class(class, quanta));
            write_mac_control(&mac, &MacControlRepr::Pfc(pfc))
        }
        FrameCommand::Pause { mac, quanta } => write_mac_control(&mac, &MacControlRepr::Pause { quanta }),
        FrameCommand::Ofc(args) => write_ofc(&args),
        FrameCommand::Cnm(args) => write_cnm(&args),
        FrameCommand::Fecn(args) => write_fecn(&args),
        FrameCommand::Data(args) => write_data(&args),
        FrameCommand::Roce(args) => write_roce(&args),
        FrameCommand::Cnp(args) => write_cnp(&args),
        FrameCommand::Send { iface, file, repeat } => {
            let frames = read_capture(&file)?;
            let socket = pfcswitchd::packet::RawSocket::open(&iface)
                .with_context(|| format!("cannot open a raw socket on `{iface}`"))?;
            for _ in 0..repeat {
                for captured in &frames {
                    socket.send(&captured.data).with_context(|| format!("cannot send on `{iface}`"))?;
                }
            }
            eprintln!("sent {} frame(s) on {iface}", frames.len() * repeat as usize);
            Ok(())
        }
        FrameCommand::Decode { file, speed } => {
            for (index, captured) in read_capture(&file)?.iter().enumerate() {
                let decoded = decode(&captured.data, speed);
                if json {
                    let mut value = decoded.json;
                    value["index"] = (index + 1).into();
                    value["time"] = captured.timestamp.as_secs_f64().into();
                    println!("{value}");
                } else {
                    println!("{:>4} {:>4}B  {}", index + 1, captured.data.len(), decoded.text);
                }
            }
            Ok(())
        }
    }
}

fn write_mac_control(args: &MacControlArgs, repr: &MacControlRepr) -> Result<()> {
    let mut frame = vec![0u8; 60];
    let len = build_mac_control_frame(&mut frame, args.src, args.dst, repr);
    frame.truncate(len);
    write_copies(&args.output, |_| frame.clone())
}

fn write_ofc(args: &OfcArgs) -> Result<()> {
    if args.coarse && args.op == OfcOp::Resume {
        bail!("--coarse is for a PAUSE only");
    }
    let per_frame = ofc_entries_per_frame(args.frame_len as usize);
    let chunks: Vec<&[FlowKey]> =
        if args.flows.is_empty() { vec![&[]] } else { args.flows.chunks(per_frame).collect() };
    let frames: Vec<Vec<u8>> = (chunks.iter().enumerate())
        .map(|(n, flows)| {
            let header =
                OfcHeader { op: args.op, priority: args.priority, coarse: args.coarse, more: n + 1 < chunks.len() };
            let mut frame = vec![0u8; ofc_frame_len(flows.len())];
            build_ofc_frame(&mut frame, args.mac.src, header, args.quanta, flows.iter().copied());
            frame
        })
        .collect();
    // --count copies of the whole list.
    write_frames(&args.mac.output, (0..args.mac.output.count).flat_map(|_| frames.iter().cloned()).collect())
}

fn write_cnm(args: &CnmArgs) -> Result<()> {
    if args.msdu.0.len() > CNM_MAX_ENCAPSULATED {
        bail!("--msdu has {} bytes; a CNM carries at most {CNM_MAX_ENCAPSULATED}", args.msdu.0.len());
    }
    let msdu_len = args.msdu_len.unwrap_or(args.msdu.0.len() as u16);
    if usize::from(msdu_len).min(CNM_MAX_ENCAPSULATED) != args.msdu.0.len() {
        bail!(
            "--msdu-len {msdu_len} needs exactly min({msdu_len}, {CNM_MAX_ENCAPSULATED}) bytes of --msdu, got {}",
            args.msdu.0.len()
        );
    }
    let cnm = CnmRepr {
        quantized_feedback: args.quantized_feedback,
        cpid: args.cpid,
        q_offset: args.qoffset,
        q_delta: args.qdelta,
        encapsulated_priority: args.encap_priority,
        encapsulated_dst: args.encap_dst,
        msdu_len,
        msdu: &args.msdu.0,
    };
    let l2 = L2Repr {
        dst: args.dst,
        src: args.src,
        vlan: Some(VlanRepr { pcp: args.pcp, dei: false, vid: args.vid }),
        cn_tag: args.flow_id.map(|flow_id| CnTagRepr { flow_id }),
        ethertype: 0,
    };
    let mut frame = vec![0u8; 128];
    let len = build_cnm_frame(&mut frame, &l2, &cnm);
    frame.truncate(len);
    write_copies(&args.output, |_| frame.clone())
}

fn write_fecn(args: &FecnArgs) -> Result<()> {
    let rate_kbps = u32::try_from(args.rate.bps() / 1000)
        .map_err(|_| anyhow::anyhow!("--rate {} does not fit the probe's 32-bit kbit/s field", args.rate))?;
    let l2 = L2Repr {
        dst: args.dst,
        src: args.src,
        vlan: Some(VlanRepr { pcp: args.pcp, dei: false, vid: args.vid }),
        cn_tag: None,
        ethertype: 0,
    };
    write_copies(&args.output, |index| {
        let probe = FecnProbeRepr {
            subtype: if args.reflected { FecnSubtype::Reflected } else { FecnSubtype::Probe },
            hops: args.hops,
            flow_id: args.flow_id,
            sequence: args.sequence.wrapping_add(index),
            rate_kbps,
            bottleneck: args.bottleneck,
            timestamp_ns: args.timestamp_ns,
        };
        let mut frame = vec![0u8; 64];
        let len = build_fecn_probe_frame(&mut frame, &l2, &probe);
        frame.truncate(len);
        frame
    })
}

fn write_data(args: &DataArgs) -> Result<()> {
    let spec = |index: u32| DataFrameSpec {
        src_mac: args.src,
        dst_mac: args.dst,
        vlan: args.ip.vlan(),
        cn_tag: None,
        src_ip: args.ip.src_ip,
        dst_ip: args.ip.dst_ip,
        dscp: args.ip.dscp,
        ecn: args.ecn,
        src_port: args.sport,
        dst_port: args.dport,
        traffic: TrafficRepr {
            kind: TrafficKind::Data,
            flow_id: args.flow,
            sequence: args.seq.wrapping_add(index),
            message_id: args.message,
            message_len: 0,
            offset: 0,
            timestamp_ns: 0,
            ack_req: false,
        },
        frame_len: usize::from(args.size),
        framing: Framing::Traffic,
    };
    write_copies(&args.output, |index| {
        let spec = spec(index);
        let mut frame = vec![0u8; spec.len()];
        build_data_frame(&mut frame, &spec);
        frame
    })
}

/// The frame fields a RoCEv2 frame takes from a [`DataFrameSpec`].
fn roce_spec(args: &RoceAddressArgs, ecn: u8) -> DataFrameSpec {
    DataFrameSpec {
        src_ip: args.ip.src_ip,
        dst_ip: args.ip.dst_ip,
        dscp: args.ip.dscp,
        ecn,
        src_port: args.sport,
        framing: Framing::Rocev2,
        ..DataFrameSpec::between(args.src, args.dst, args.ip.vlan(), 0)
    }
}

fn write_roce_frames(args: &RoceAddressArgs, ecn: u8, roce: impl Fn(u32) -> RoceRepr) -> Result<()> {
    let spec = roce_spec(args, ecn);
    write_copies(&args.output, |index| {
        let roce = roce(index);
        let mut frame = vec![0u8; 9216];
        let len = build_roce_frame(&mut frame, &spec, &roce, &[]);
        frame.truncate(len);
        frame
    })
}

fn write_roce(args: &RoceArgs) -> Result<()> {
    let opcode = match args.opcode {
        RoceOpcode::SendFirst => Opcode::RcSendFirst,
        RoceOpcode::SendMiddle => Opcode::RcSendMiddle,
        RoceOpcode::SendLast => Opcode::RcSendLast,
        RoceOpcode::SendOnly => Opcode::RcSendOnly,
        RoceOpcode::Ack | RoceOpcode::Nak => Opcode::RcAcknowledge,
    };
    let syndrome = match args.opcode {
        RoceOpcode::Ack => Some(AethSyndrome::Ack { credits: AETH_INVALID_CREDITS }),
        RoceOpcode::Nak => Some(AethSyndrome::Nak(NakCode::PsnSequenceError)),
        _ => None,
    };
    // Ethernet, 802.1Q, IPv4, UDP, BTH, ICRC.
    let headers = 14 + if args.addresses.ip.pcp.is_some() { 4 } else { 0 } + 20 + 8 + BTH_LEN + ICRC_LEN;
    let payload_len = if opcode.is_send() { usize::from(args.size).saturating_sub(headers) } else { 0 };
    write_roce_frames(&args.addresses, args.ecn, |index| {
        let bth = BthRepr {
            opcode,
            solicited: false,
            pad_count: 0,
            pkey: DEFAULT_PKEY,
            dest_qp: args.addresses.qp,
            ack_req: matches!(opcode, Opcode::RcSendLast | Opcode::RcSendOnly),
            psn: args.psn.wrapping_add(index) & 0xFF_FFFF,
        };
        RoceRepr::new(bth, syndrome.map(|syndrome| AethRepr { syndrome, msn: args.msn }), payload_len)
    })
}

fn write_cnp(args: &CnpArgs) -> Result<()> {
    let bth = BthRepr {
        opcode: Opcode::Cnp,
        solicited: false,
        pad_count: 0,
        pkey: DEFAULT_PKEY,
        dest_qp: args.addresses.qp,
        ack_req: false,
        psn: 0,
    };
    write_roce_frames(&args.addresses, 0, |_| RoceRepr::new(bth, None, CNP_PAYLOAD_LEN))
}

fn write_copies(output: &OutputArgs, frame: impl Fn(u32) -> Vec<u8>) -> Result<()> {
    write_frames(output, (0..output.count).map(frame).collect())
}

fn write_frames(output: &OutputArgs, frames: Vec<Vec<u8>>) -> Result<()> {
    write_pcap(&output.output, &frames)?;
    eprintln!("wrote {} frame(s) to {}", frames.len(), output.output.display());
    Ok(())
}

fn parse_pcp(text: &str) -> Result<Pcp, String> {
    text.parse::<u8>().ok().and_then(Pcp::new).ok_or_else(|| format!("`{text}` is not a priority 0-7"))
}

fn parse_ofc_op(text: &str) -> Result<OfcOp, String> {
    match text {
        "pause" => Ok(OfcOp::Pause),
        "resume" => Ok(OfcOp::Resume),
        _ => Err(format!("`{text}` is not pause or resume")),
    }
}

fn parse_flow(text: &str) -> Result<FlowKey, String> {
    let (src, dst) = text.split_once('>').ok_or_else(|| format!("`{text}` is not SRC_MAC>DST_MAC"))?;
    Ok(FlowKey { src: src.parse().map_err(|e| format!("{e}"))?, dst: dst.parse().map_err(|e| format!("{e}"))? })
}

fn parse_class(text: &str) -> Result<(Pcp, u16), String> {
    let (class, quanta) = text.split_once('=').ok_or_else(|| format!("`{text}` is not PRIO=QUANTA"))?;
    let quanta = quanta.parse::<u16>().map_err(|_| format!("`{quanta}` is not a pause time 0-65535 (quanta)"))?;
    Ok((parse_pcp(class)?, quanta))
}

fn parse_u64(text: &str) -> Result<u64, String> {
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    parsed.map_err(|_| format!("`{text}` is not a 64-bit number (decimal or 0x-hex)"))
}

fn parse_u24(text: &str) -> Result<u32, String> {
    parse_u64(text)
        .ok()
        .filter(|&value| value < 1 << 24)
        .map(|value| value as u32)
        .ok_or_else(|| format!("`{text}` is not a 24-bit number (decimal or 0x-hex)"))
}

/// Bytes given in hex on the command line.
#[derive(Debug, Clone)]
pub struct HexBytes(Vec<u8>);

fn parse_hex(text: &str) -> Result<HexBytes, String> {
    let digits: String = text.chars().filter(|c| !matches!(c, ':' | ' ')).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("`{text}` has an odd number of hex digits"));
    }
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).map_err(|_| format!("`{text}` is not hex")))
        .collect::<Result<_, _>>()
        .map(HexBytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_arguments() {
        assert_eq!(parse_class("3=65535").unwrap(), (Pcp::new(3).unwrap(), 65535));
        assert!(parse_class("8=1").is_err());
        assert!(parse_class("3=65536").is_err());
        assert!(parse_class("3").is_err());
        assert_eq!(parse_hex("de:ad be").unwrap().0, vec![0xDE, 0xAD, 0xBE]);
        assert!(parse_hex("abc").is_err());
        assert_eq!(parse_u64("0x10").unwrap(), 16);
        assert_eq!(parse_u24("0x107").unwrap(), 263);
        assert!(parse_u24("0x1000000").is_err());
    }
}
