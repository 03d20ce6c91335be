//! `scenario simulate --capture`: the simulator's frames are real bytes, so a captured link
//! gets a pcap as a tap on a wire would: every frame both ways, without FCS, stamped in
//! nanoseconds with the virtual time its first bit went on the wire (the instant the sending
//! switch or host counted it sent). The links are named as `run --capture` names them.

use super::capture::pcap_path;
use anyhow::{Context, Result};
use pcap_file::DataLink;
use pcap_file::TsResolution;
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pfcswitch_link::time::Instant;
use pfcswitch_sim::{Endpoint, Network};
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

type Pcap = PcapWriter<BufWriter<File>>;

/// The pcaps being written, and the first error writing them.
struct Files {
    pcaps: Vec<Pcap>,
    error: Option<String>,
}

/// Captures in progress on a simulated network.
pub(super) struct SimCaptures {
    files: Arc<Mutex<Files>>,
    paths: Vec<PathBuf>,
}

impl SimCaptures {
    /// Taps `net` at both ends of each of `links` (name, ends), writing [`pcap_path`] in `dir`.
    pub(super) fn start(net: &mut Network, links: &[(String, [Endpoint; 2])], dir: &Path) -> Result<SimCaptures> {
        let mut pcaps = Vec::new();
        let mut paths = Vec::new();
        let mut by_end = HashMap::new();
        if !links.is_empty() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        for (index, (name, ends)) in links.iter().enumerate() {
            let path = pcap_path(dir, name);
            let file = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
            let header = PcapHeader {
                datalink: DataLink::ETHERNET,
                ts_resolution: TsResolution::NanoSecond,
                ..PcapHeader::default()
            };
            pcaps.push(PcapWriter::with_header(BufWriter::new(file), header)?);
            paths.push(path);
            by_end.extend(ends.iter().map(|&end| (end, index)));
        }
        let files = Arc::new(Mutex::new(Files { pcaps, error: None }));
        if !links.is_empty() {
            let shared = Arc::clone(&files);
            let ends = by_end.keys().copied().collect();
            net.tap(
                ends,
                Box::new(move |at: Instant, from: Endpoint, frame: &[u8]| {
                    let mut files = shared.lock().expect("a tap that panicked stops the run");
                    let pcap = &mut files.pcaps[by_end[&from]];
                    let packet =
                        PcapPacket::new(std::time::Duration::from_nanos(at.as_nanos()), frame.len() as u32, frame);
                    if let Err(e) = pcap.write_packet(&packet) {
                        files.error.get_or_insert(e.to_string());
                    }
                }),
            );
        }
        Ok(SimCaptures { files, paths })
    }

    /// Ends the captures, flushing every file; returns them.
    pub(super) fn stop(self, net: &mut Network) -> Result<Vec<PathBuf>> {
        net.untap();
        let files =
            Arc::try_unwrap(self.files).ok().expect("the tap is gone").into_inner().expect("the tap did not panic");
        if let Some(error) = files.error {
            anyhow::bail!("writing a capture: {error}");
        }
        for (pcap, path) in files.pcaps.into_iter().zip(&self.paths) {
            pcap.into_writer().flush().with_context(|| format!("cannot write {}", path.display()))?;
        }
        Ok(self.paths)
    }
}
