//! Reading and writing captures: pcap for what we write (every tool reads it), pcap and
//! pcapng for what we read (tcpdump writes the first, tshark and dumpcap the second).

use anyhow::{Context, Result, bail};
use pcap_file::DataLink;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapReader, PcapWriter};
use pcap_file::pcapng::{Block, PcapNgReader};
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::Duration;

/// Writes `frames` to a new pcap file, one microsecond apart from time zero so that the
/// same command always produces the same file.
pub fn write_pcap(path: &Path, frames: &[Vec<u8>]) -> Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let header = PcapHeader { datalink: DataLink::ETHERNET, ..PcapHeader::default() };
    let mut writer = PcapWriter::with_header(BufWriter::new(file), header)?;
    for (index, frame) in frames.iter().enumerate() {
        let timestamp = Duration::from_micros(index as u64);
        writer.write_packet(&PcapPacket::new(timestamp, frame.len() as u32, frame))?;
    }
    writer
        .into_writer()
        .into_inner()
        .map_err(|e| e.into_error())
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(())
}

/// A captured frame with its capture timestamp.
pub struct Captured {
    pub timestamp: Duration,
    pub data: Vec<u8>,
}

/// Reads every Ethernet frame of a pcap or pcapng file.
pub fn read_capture(path: &Path) -> Result<Vec<Captured>> {
    let mut file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut magic = [0u8; 4];
    file.read_exact(&mut magic).with_context(|| format!("{} is not a capture file (too short)", path.display()))?;
    file.seek(SeekFrom::Start(0))?;
    let reader = BufReader::new(file);
    let context = || format!("cannot read {}", path.display());
    if magic == [0x0A, 0x0D, 0x0D, 0x0A] {
        read_pcapng(reader).with_context(context)
    } else {
        read_pcap(reader).with_context(context)
    }
}

fn read_pcap(reader: BufReader<File>) -> Result<Vec<Captured>> {
    let mut pcap = PcapReader::new(reader)?;
    if pcap.header().datalink != DataLink::ETHERNET {
        bail!("link type {:?} is not Ethernet", pcap.header().datalink);
    }
    let mut frames = Vec::new();
    while let Some(packet) = pcap.next_packet() {
        let packet = packet?;
        frames.push(Captured { timestamp: packet.timestamp, data: packet.data.into_owned() });
    }
    Ok(frames)
}

fn read_pcapng(reader: BufReader<File>) -> Result<Vec<Captured>> {
    let mut pcapng = PcapNgReader::new(reader)?;
    let mut frames = Vec::new();
    while let Some(block) = pcapng.next_block() {
        let (interface_id, timestamp, data) = match block? {
            Block::EnhancedPacket(packet) => (packet.interface_id, packet.timestamp, packet.data.into_owned()),
            Block::SimplePacket(packet) => (0, Duration::ZERO, packet.data.into_owned()),
            _ => continue,
        };
        let linktype = pcapng.interfaces().get(interface_id as usize).map(|interface| interface.linktype);
        if linktype != Some(DataLink::ETHERNET) {
            bail!("interface {interface_id} has link type {linktype:?}, not Ethernet");
        }
        frames.push(Captured { timestamp, data });
    }
    Ok(frames)
}
