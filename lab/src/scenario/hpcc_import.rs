//! An HPCC `config.txt` as a scenario: `pfcswitch hpcc import` reads the config, its
//! `TOPOLOGY_FILE` and `FLOW_FILE`, and writes a scenario and the switches' config that run
//! the same experiment in the simulator. Every key `third.cc` reads is either given its
//! equivalent here, or accepted because ns-3 itself does not use it in that run (said in the
//! notes), or refused with its line and the reason; the mapping is in docs/hpcc.md.
//!
//! Files named in the config are read relative to the current directory, as ns-3 opens them
//! from where it runs.

use anyhow::{Result, anyhow, bail};
use pfcswitch_hpcc::config::{Config, Value};
use pfcswitch_hpcc::flows::FlowFile;
use pfcswitch_hpcc::topology::Topology;
use pfcswitch_hpcc::units::format_rate;
use pfcswitch_wire::Framing;
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// HPCC's switch MMU: each port reserves this much per queue outside the shared buffer, and a
/// paused queue resumes this far below its threshold (`switch-mmu.cc`).
const RESERVE: u64 = 4 * 1024;
const RESUME_OFFSET: u64 = 3 * 1024;
/// The flows start 2 s into an ns-3 run (`traffic_gen.py`), and `LINK_DOWN` counts from there.
const BASE_S: f64 = 2.0;

/// A scenario and its switches' config, as files' contents, and what the reader should know.
#[derive(Debug)]
pub struct Imported {
    pub scenario: String,
    pub switch: String,
    pub notes: Vec<String>,
}

/// Imports `config_file`; the scenario names its switches' config `switch.toml` beside it.
pub fn import(config_file: &Path) -> Result<Imported> {
    let config = Config::read(config_file)?;
    Importer { config: &config, file: config_file, notes: Vec::new() }.import()
}

/// What a data frame keeps free for HPCC's INT: the header and five 24-byte records.
const HPCC_INT_RESERVE: usize = 16 + 5 * 24;

struct Importer<'a> {
    config: &'a Config,
    file: &'a Path,
    notes: Vec<String>,
}

/// What third.cc does without the key, where that is usable.
fn default(key: &str) -> Option<Value> {
    Some(match key {
        "CC_MODE" => Value::Count(1),
        "ENABLE_QCN" | "RATE_BOUND" | "HAS_WIN" | "GLOBAL_T" | "USE_DYNAMIC_PFC_THRESHOLD" => Value::Flag(true),
        "CLAMP_TARGET_RATE" | "L2_BACK_TO_ZERO" | "VAR_WIN" | "ACK_HIGH_PRIO" => Value::Flag(false),
        "PACKET_PAYLOAD_SIZE" => Value::Count(1000),
        "L2_CHUNK_SIZE" => Value::Count(0),
        "PAUSE_TIME" => Value::Number(5.0),
        "SIMULATOR_STOP_TIME" => Value::Number(3.01),
        "ALPHA_RESUME_INTERVAL" => Value::Number(55.0),
        "RATE_DECREASE_INTERVAL" => Value::Number(4.0),
        "FAST_RECOVERY_TIMES" => Value::Count(5),
        "MIN_RATE" => Value::Rate(100_000_000),
        "U_TARGET" => Value::Number(0.95),
        "MI_THRESH" => Value::Count(5),
        "FAST_REACT" | "MULTI_RATE" => Value::Flag(true),
        "SAMPLE_FEEDBACK" => Value::Flag(false),
        "ERROR_RATE_PER_LINK" => Value::Number(0.0),
        "BUFFER_SIZE" => Value::Count(16),
        "LINK_DOWN" => Value::LinkDown(None),
        "QLEN_MON_START" => Value::Count(2_000_000_000),
        "QLEN_MON_END" => Value::Count(2_100_000_000),
        _ => return None,
    })
}

impl Importer<'_> {
    /// `key`'s value, or third.cc's default; a key without a usable default must be set.
    fn value(&self, key: &str) -> Result<Value> {
        match self.config.get(key).cloned().or_else(|| default(key)) {
            Some(value) => Ok(value),
            None => {
                bail!("{}: {key} is not set, and HPCC's third.cc has no usable default for it", self.file.display())
            }
        }
    }

    /// A refusal naming `key`'s line.
    fn refuse(&self, key: &str, reason: impl std::fmt::Display) -> anyhow::Error {
        let line = self.config.values.get(key).map_or(0, |(line, _)| *line);
        anyhow!("{}:{line}: {key}: {reason}", self.file.display())
    }

    fn flag(&self, key: &str) -> Result<bool> {
        match self.value(key)? {
            Value::Flag(on) => Ok(on),
            other => unreachable!("{key} is read as a flag, not {other:?}"),
        }
    }

    fn count(&self, key: &str) -> Result<u64> {
        match self.value(key)? {
            Value::Count(n) => Ok(n),
            other => unreachable!("{key} is read as a count, not {other:?}"),
        }
    }

    fn number(&self, key: &str) -> Result<f64> {
        match self.value(key)? {
            Value::Number(x) => Ok(x),
            other => unreachable!("{key} is read as a number, not {other:?}"),
        }
    }

    fn rate(&self, key: &str) -> Result<u64> {
        match self.value(key)? {
            Value::Rate(bps) => Ok(bps),
            other => unreachable!("{key} is read as a rate, not {other:?}"),
        }
    }

    fn file(&self, key: &str) -> Result<PathBuf> {
        match self.value(key)? {
            Value::File(name) => {
                let path = PathBuf::from(&name);
                std::path::absolute(&path).map_err(|e| self.refuse(key, format!("{name}: {e}")))
            }
            other => unreachable!("{key} is read as a file, not {other:?}"),
        }
    }

    /// A rate map's value for every rate in `rates`, as third.cc asserts there is one.
    fn rate_map(&self, key: &str, rates: &BTreeSet<u64>) -> Result<Vec<(u64, f64)>> {
        let Value::RateMap(map) = self.value(key)? else { unreachable!("{key} is read as a rate map") };
        rates
            .iter()
            .map(|&rate| {
                let value = map.iter().find(|&&(r, _)| r == rate).map(|&(_, v)| v);
                value.map(|v| (rate, v)).ok_or_else(|| {
                    self.refuse(key, format!("no value for the {} links of the topology", format_rate(rate)))
                })
            })
            .collect()
    }

    /// Microseconds as a duration string.
    fn micros(&self, key: &str) -> Result<String> {
        let us = self.number(key)?;
        if us <= 0.0 {
            return Err(self.refuse(key, format!("{us} µs must be above 0")));
        }
        Ok(format!("{}ns", (us * 1000.0).round() as u64))
    }

    fn import(mut self) -> Result<Imported> {
        // The config's own refusals come before any file is opened, but for CC_MODE's.
        let payload = self.count("PACKET_PAYLOAD_SIZE")?;
        self.refuse_unmodelled()?;
        self.refuse_cc_mode()?;
        let topology_file = self.file("TOPOLOGY_FILE")?;
        let flow_file = self.file("FLOW_FILE")?;
        let topology = Topology::read(&topology_file)?;
        // HPCC's T is the topology's; the other modes' refusals come after the file too.
        let transport = self.transport(payload, &topology)?;
        let flows = FlowFile::read(&flow_file)?;
        flows.check_hosts(&topology, &flow_file)?;
        let hosts = topology.hosts();
        let host_link = topology.links.iter().find(|l| hosts.contains(&l.a) || hosts.contains(&l.b));
        let nic_rate = host_link.ok_or_else(|| anyhow!("{}: no host has a link", topology_file.display()))?.rate_bps;
        let cable_ns = topology.links[0].delay_ns;
        let switch_rates: BTreeSet<u64> = (topology.links.iter())
            .filter(|l| topology.is_switch(l.a) || topology.is_switch(l.b))
            .map(|l| l.rate_bps)
            .collect();
        let pgs: BTreeSet<u8> = flows.flows.iter().map(|f| f.pg).collect();
        let pg = match pgs.iter().collect::<Vec<_>>()[..] {
            [&pg] => pg,
            _ => bail!("{}: flows on priorities {pgs:?}; a run here has one lossless class", flow_file.display()),
        };

        let stop_s = self.number("SIMULATOR_STOP_TIME")?;
        if stop_s <= BASE_S {
            return Err(self.refuse("SIMULATOR_STOP_TIME", format!("{stop_s} s: the flows start at 2 s")));
        }
        let duration_ns = ((stop_s - BASE_S) * 1e9).round() as u64;
        let window_and_acks = self.window_and_acks(&topology, payload)?;
        self.note_unused();

        let mut scenario = String::new();
        let name = self.file.file_stem().map_or("hpcc".into(), |s| s.to_string_lossy().into_owned());
        writeln!(scenario, "# Imported from {} by `pfcswitch hpcc import`.", self.file.display())?;
        for note in &self.notes {
            writeln!(scenario, "# - {note}")?;
        }
        writeln!(scenario, "name = {}", quoted(&name))?;
        writeln!(scenario, "description = {}", quoted(&format!("HPCC's {} in the simulator", self.file.display())))?;
        writeln!(scenario, "topology = \"fabric\"\npolicy = \"pfc\"")?;
        writeln!(scenario, "speed = \"{}\"", format_rate(nic_rate))?;
        writeln!(scenario, "cable = \"{cable_ns}ns\"")?;
        writeln!(scenario, "duration = \"{duration_ns}ns\"  # SIMULATOR_STOP_TIME {stop_s} less the 2 s")?;
        writeln!(scenario, "drain = \"0s\"  # ns-3 stops at SIMULATOR_STOP_TIME")?;
        if self.config.get("QLEN_MON_FILE").is_some() {
            let base_ns = (BASE_S * 1e9) as u64;
            let (start, end) = (self.count("QLEN_MON_START")?, self.count("QLEN_MON_END")?);
            if start < base_ns {
                return Err(self.refuse(
                    "QLEN_MON_START",
                    format!("{start} ns is before the flows' 2 s, where a run here starts"),
                ));
            }
            writeln!(scenario, "qlen_interval = \"100ns\"  # QLEN_MON_FILE: third.cc samples every 100 ns")?;
            writeln!(scenario, "qlen_start = \"{}ns\"  # QLEN_MON_START {start}", start - base_ns)?;
            writeln!(scenario, "qlen_end = \"{}ns\"  # QLEN_MON_END {end}", end.saturating_sub(base_ns))?;
        }
        writeln!(scenario, "\n[fabric]\nkind = \"hpcc\"\nfile = {}", quoted(&topology_file.to_string_lossy()))?;
        writeln!(scenario, "switch = \"switch.toml\"")?;
        writeln!(scenario, "\n[transport]\n{window_and_acks}{transport}")?;
        writeln!(scenario, "[[class]]\nname = \"flows\"\nkind = \"flows\"\npriority = {pg}")?;
        writeln!(scenario, "file = {}", quoted(&flow_file.to_string_lossy()))?;
        if let Value::LinkDown(Some(down)) = self.value("LINK_DOWN")? {
            let end = link_end(&topology, down.a, down.b)
                .ok_or_else(|| self.refuse("LINK_DOWN", format!("no link between nodes {} and {}", down.a, down.b)))?;
            writeln!(scenario, "\n[[fault]]\nat = \"{}us\"\ndown = \"{end}\"", down.after_us)?;
        }
        let switch = self.switch(&topology, nic_rate, &switch_rates, pg)?;
        Ok(Imported { scenario, switch, notes: self.notes })
    }

    /// `[transport]`'s congestion control: CC_MODE and its keys.
    fn transport(&mut self, payload: u64, topology: &Topology) -> Result<String> {
        match self.count("CC_MODE")? {
            3 => self.hpcc(payload, topology),
            7 => self.timely(payload, topology),
            1 => {
                let window = self.rate_window(payload, topology)?;
                let g = fraction(self.number("EWMA_GAIN")?).ok_or_else(|| {
                    self.refuse("EWMA_GAIN", "not a fraction with a power of two below it, such as 1/256")
                })?;
                Ok(format!(
                    "frame_len = {}  # PACKET_PAYLOAD_SIZE {payload} and RoCEv2's headers\n\
                     rocev2 = {{ cnp_interval = \"0ns\" }}  # a CNP per marked segment, as ns-3's ACKs carry the mark\n\
                     dcqcn = {{ model = \"hpcc\", g = \"{}/{}\", alpha_update_period = \"{}\", rate_decrease_period = \"{}\", \
                     clamp_target_rate = {}, rate_increase_period = \"{}\", fast_recovery_threshold = {}, \
                     additive_increase = \"{}\", hyper_increase = \"{}\", min_rate = \"{}\"{window} }}\n",
                    payload as usize + Framing::Rocev2.overhead(),
                    g.0,
                    g.1,
                    self.micros("ALPHA_RESUME_INTERVAL")?,
                    self.micros("RATE_DECREASE_INTERVAL")?,
                    self.flag("CLAMP_TARGET_RATE")?,
                    self.micros("RP_TIMER")?,
                    self.count("FAST_RECOVERY_TIMES")?,
                    format_rate(self.rate("RATE_AI")?),
                    format_rate(self.rate("RATE_HAI")?),
                    format_rate(self.rate("MIN_RATE")?),
                ))
            }
            8 => {
                let g = fraction(self.number("EWMA_GAIN")?).filter(|g| g.0 == 1 && g.1.is_power_of_two());
                let g =
                    g.ok_or_else(|| self.refuse("EWMA_GAIN", "DCTCP's g must be 1/2^k here (Linux's dctcp_shift_g)"))?;
                let window = self.rate_window(payload, topology)?;
                self.notes.push(
                    "CC_MODE 8: DCTCP as HPCC's NIC runs it (model = \"hpcc\": a rate from line rate, cut by α/2 and raised by DCTCP_RATE_AI); model = \"window\" is DCTCP's window as its paper and Linux run it".into(),
                );
                Ok(format!(
                    "frame_len = {}  # PACKET_PAYLOAD_SIZE {payload} and the headers\n\
                     dctcp = {{ model = \"hpcc\", shift_g = {}, additive_increase = \"{}\", min_rate = \"{}\"{window} }}\n",
                    payload as usize + Framing::Traffic.overhead(),
                    g.1.trailing_zeros(),
                    format_rate(self.rate("DCTCP_RATE_AI")?),
                    format_rate(self.rate("MIN_RATE")?),
                ))
            }
            _ => Err(self.refuse_cc_mode().expect_err("checked before the files")),
        }
    }

    /// CC_MODE 10 (PINT) and modes HPCC's simulator does not have, refused before any file
    /// is read.
    fn refuse_cc_mode(&self) -> Result<()> {
        match self.count("CC_MODE")? {
            1 | 3 | 7 | 8 => Ok(()),
            10 => Err(self.refuse("CC_MODE", "10 (HPCC-PINT) is not imported yet; 1, 3, 7 and 8 are")),
            mode => Err(self.refuse("CC_MODE", format!("{mode} is none of HPCC's modes 1, 3, 7, 8, 10"))),
        }
    }

    /// CC_MODE 7: TIMELY as HPCC's simulator runs it (`model = "hpcc"`: once per RTT), its
    /// thresholds the simulator's built-in ones (the law's defaults), RATE_AI and RATE_HAI its
    /// steps; with VAR_WIN 1, TIMELY+w.
    fn timely(&mut self, payload: u64, topology: &Topology) -> Result<String> {
        let window = self.rate_window(payload, topology)?;
        Ok(format!(
            "frame_len = {}  # PACKET_PAYLOAD_SIZE {payload} and RoCEv2's headers\n\
             rocev2 = {{}}\n\
             timely = {{ model = \"hpcc\", additive_increase = \"{}\", hyper_increase = \"{}\", min_rate = \"{}\"{window} }}\n",
            payload as usize + Framing::Rocev2.overhead(),
            format_rate(self.rate("RATE_AI")?),
            format_rate(self.rate("RATE_HAI")?),
            format_rate(self.rate("MIN_RATE")?),
        ))
    }

    /// DCQCN+w's and TIMELY+w's `base_rtt` key (HAS_WIN 1 and VAR_WIN 1): the fabric's
    /// largest RTT, which sizes the window at line rate.
    fn rate_window(&self, payload: u64, topology: &Topology) -> Result<String> {
        Ok(match self.flag("HAS_WIN")? && self.flag("VAR_WIN")? {
            true => format!(", base_rtt = \"{}ns\"", topology.max_rtt_bdp(payload).0),
            false => String::new(),
        })
    }

    /// CC_MODE 3: HPCC with INT, T the fabric's largest base RTT (`GLOBAL_T 1`, checked with
    /// the window), one rate for the path.
    fn hpcc(&mut self, payload: u64, topology: &Topology) -> Result<String> {
        if self.flag("MULTI_RATE")? {
            return Err(self.refuse("MULTI_RATE", "1 (a rate per hop): HPCC here keeps one rate for the path"));
        }
        if self.flag("SAMPLE_FEEDBACK")? {
            return Err(self.refuse("SAMPLE_FEEDBACK", "1 (react to queued hops only): not modelled"));
        }
        if !self.flag("HAS_WIN")? {
            return Err(self.refuse("HAS_WIN", "0: HPCC's window is half of its law (HPCC §3.2)"));
        }
        let (rtt, _) = topology.max_rtt_bdp(payload);
        self.notes.push(
            "CC_MODE 3: INT records of 24 bytes a hop (P4.org INT v2.1) where ns-3's are 8, in 136 bytes each data frame keeps free".into(),
        );
        Ok(format!(
            "frame_len = {}  # PACKET_PAYLOAD_SIZE {payload}, RoCEv2's headers, room for five INT records\n\
             rocev2 = {{}}\n\
             hpcc = {{ base_rtt = \"{rtt}ns\", target_utilization = {}, max_stage = {}, rate_ai = \"{}\", \
             fast_react = {}, min_rate = \"{}\", variable_window = {} }}\n",
            payload as usize + Framing::Rocev2.overhead() + HPCC_INT_RESERVE,
            self.number("U_TARGET")?,
            self.count("MI_THRESH")?,
            format_rate(self.rate("RATE_AI")?),
            self.flag("FAST_REACT")?,
            format_rate(self.rate("MIN_RATE")?),
            self.flag("VAR_WIN")?,
        ))
    }

    /// `window` from HAS_WIN, GLOBAL_T and VAR_WIN; `ack_every` from L2_ACK_INTERVAL.
    fn window_and_acks(&mut self, topology: &Topology, payload: u64) -> Result<String> {
        let mut out = String::new();
        if self.flag("HAS_WIN")? {
            if !self.flag("GLOBAL_T")? {
                return Err(
                    self.refuse("GLOBAL_T", "0 gives every pair its own BDP window; here one window holds for all")
                );
            }
            let (rtt, bdp) = topology.max_rtt_bdp(payload);
            writeln!(out, "window = {}  # HAS_WIN 1: the largest BDP, {bdp} B (RTT {rtt} ns)", bdp.div_ceil(payload))?;
        } else {
            writeln!(out, "window = {}  # HAS_WIN 0: no window", u32::MAX)?;
        }
        let interval = self.count("L2_ACK_INTERVAL")?;
        let chunk = self.count("L2_CHUNK_SIZE")?;
        if interval == 0 {
            return Err(self.refuse("L2_ACK_INTERVAL", "0: third.cc's receivers then never acknowledge"));
        }
        if chunk > 0 && chunk < interval {
            return Err(
                self.refuse("L2_CHUNK_SIZE", "ACKs at chunk boundaries between ACK_INTERVAL's are not modelled")
            );
        }
        writeln!(out, "ack_every = {}  # L2_ACK_INTERVAL {interval} B", interval.div_ceil(payload))?;
        Ok(out)
    }

    /// Keys whose values ask for what the simulator does not do.
    fn refuse_unmodelled(&self) -> Result<()> {
        if self.flag("L2_BACK_TO_ZERO")? {
            return Err(self.refuse("L2_BACK_TO_ZERO", "1 (go back to the chunk's start): senders here go back N"));
        }
        if !self.flag("RATE_BOUND")? {
            return Err(self.refuse("RATE_BOUND", "0 (senders not paced): senders here always pace at their rate"));
        }
        if self.number("ERROR_RATE_PER_LINK")? > 0.0 {
            return Err(self.refuse("ERROR_RATE_PER_LINK", "above 0: the simulator's fabrics have no lossy links"));
        }
        if self.number("PAUSE_TIME")? <= 0.0 {
            return Err(self.refuse("PAUSE_TIME", "0 makes every PAUSE a resume"));
        }
        Ok(())
    }

    /// Keys ns-3 reads and, in this run, does not use, and equivalences worth saying.
    fn note_unused(&mut self) {
        let set = |key: &str| self.config.get(key).is_some();
        let mut unused: Vec<&str> =
            ["DATA_RATE", "LINK_DELAY", "USE_DYNAMIC_PFC_THRESHOLD"].into_iter().filter(|&k| set(k)).collect();
        let hpcc = self.config.get("CC_MODE") == Some(&Value::Count(3));
        let hpcc_keys = ["U_TARGET", "MI_THRESH", "MULTI_RATE", "SAMPLE_FEEDBACK", "FAST_REACT"];
        let hpcc_keys = hpcc_keys.into_iter().filter(|_| !hpcc);
        // INT_MULTI scales ns-3's quantised INT fields; records here are exact.
        unused.extend(hpcc_keys.chain(["INT_MULTI", "PINT_LOG_BASE", "PINT_PROB"]).filter(|&k| set(k)));
        // Under CC_MODE 8 ns-3 uses it; that mode's own note says what differs.
        if set("DCTCP_RATE_AI") && self.config.get("CC_MODE") != Some(&Value::Count(8)) {
            unused.push("DCTCP_RATE_AI");
        }
        if !unused.is_empty() {
            self.notes.push(format!("read and not used, by ns-3 either in this mode: {}", unused.join(", ")));
        }
        if set("PAUSE_TIME") {
            self.notes
                .push("PAUSE_TIME: ns-3's NICs pause until resumed whatever its value; so do the switches here".into());
        }
        if set("ACK_HIGH_PRIO") {
            self.notes.push("ACK_HIGH_PRIO: ACKs and CNPs go on the data's priority here".into());
        }
        let outputs = ["FCT_OUTPUT_FILE", "PFC_OUTPUT_FILE", "QLEN_MON_FILE", "TRACE_FILE", "TRACE_OUTPUT_FILE"];
        if outputs.into_iter().any(set) {
            self.notes.push(
                "outputs go to the run's directory (fct.txt, pfc.txt, qlen.txt); packet traces are --capture".into(),
            );
        }
    }

    /// The switches' config: HPCC's MMU as buffer pools, its ECN maps, PFC on `pg`.
    fn switch(&self, topology: &Topology, nic_rate: u64, rates: &BTreeSet<u64>, pg: u8) -> Result<String> {
        let buffer = self.count("BUFFER_SIZE")? * 1024 * 1024;
        let headroom = |rate: u64, delay: u64| rate * delay / 8 / 1_000_000_000 * 3;
        // The shared pool is what the buffer keeps beyond every port's headroom and reserve
        // (switch-mmu.cc); one config serves every switch, so the switch that keeps least.
        let pool = (topology.switches.iter())
            .map(|&s| {
                let ports = topology.interfaces(s);
                let kept: u64 =
                    ports.iter().map(|&(l, _)| headroom(topology.links[l].rate_bps, topology.links[l].delay_ns)).sum();
                buffer.saturating_sub(kept + RESERVE * ports.len() as u64)
            })
            .min()
            .unwrap_or(buffer);
        let (kmin, kmax, pmax) =
            (self.rate_map("KMIN_MAP", rates)?, self.rate_map("KMAX_MAP", rates)?, self.rate_map("PMAX_MAP", rates)?);
        let mut out = String::new();
        writeln!(out, "# HPCC's switches for {}, imported by `pfcswitch hpcc import`.", self.file.display())?;
        writeln!(
            out,
            "[switch]\nname = \"fabric\"\n\n[[port]]\nname = \"template\"\nspeed = \"{}\"",
            format_rate(nic_rate)
        )?;
        writeln!(out, "\n[pfc]\nlossless = [{pg}]\n")?;
        writeln!(out, "[buffer]\nmode = \"pools\"")?;
        writeln!(
            out,
            "\n[buffer.pools.ingress]\ntype = \"ingress\"\nsize = {pool}  # BUFFER_SIZE less headrooms and reserves"
        )?;
        writeln!(out, "\n[buffer.pools.egress]\ntype = \"egress\"\nsize = {buffer}")?;
        writeln!(
            out,
            "\n[buffer.profiles.queue]\npool = \"egress\"\nstatic_th = {buffer}  # ns-3's egress admits all"
        )?;
        let mut pgs = String::new();
        for &rate in rates {
            // α halves per doubling of the link rate over the NICs', from 1/8 (third.cc).
            let (mut shift, mut r) = (3, rate);
            while r > nic_rate && shift > 0 {
                shift -= 1;
                r /= 2;
            }
            let name = format!("pg_{}", format_rate(rate));
            // The headroom is computed from the link (xoff left out): HPCC's 3 × rate × delay
            // is below what arrives after XOFF here (a 1 µs response and three frames).
            writeln!(
                out,
                "\n[buffer.profiles.{name}]\npool = \"ingress\"\nsize = {RESERVE}\ndynamic_th = -{shift}\nxon_offset = {RESUME_OFFSET}",
            )?;
            writeln!(pgs, "\"speed={}|{pg}\" = \"{name}\"", format_rate(rate))?;
        }
        writeln!(out, "\n[buffer.pg]\n{pgs}\n[buffer.queue]\n\"*|0-7\" = \"queue\"")?;
        if self.flag("ENABLE_QCN")? {
            // Every rate has a value in each map (`rate_map`), the NICs' included.
            let profile = |rate: u64| {
                let at = |map: &[(u64, f64)]| map.iter().find(|&&(r, _)| r == rate).map_or(0.0, |&(_, v)| v);
                format!(
                    "min = {}\nmax = {}\nprobability = {:?}",
                    at(&kmin) as u64 * 1000,
                    at(&kmax) as u64 * 1000,
                    at(&pmax)
                )
            };
            writeln!(
                out,
                "\n[ecn]\npriorities = [{pg}]\nmark_at = \"dequeue\"  # as SwitchNotifyDequeue\n{}",
                profile(nic_rate)
            )?;
            for &rate in rates.iter().filter(|&&r| r != nic_rate) {
                writeln!(out, "\n[[ecn.by_speed]]\nspeed = \"{}\"\n{}", format_rate(rate), profile(rate))?;
            }
        }
        Ok(out)
    }
}

/// The switch end of the link between nodes `a` and `b`, as the fabric names it.
fn link_end(topology: &Topology, a: u32, b: u32) -> Option<String> {
    let (switch, peer) = if topology.is_switch(a) { (a, b) } else { (b, a) };
    let index = topology.switches.iter().position(|&s| s == switch)?;
    let port = topology.interfaces(switch).iter().position(|&(_, p)| p == peer)?;
    Some(format!("sw{}:p{}", index + 1, port + 1))
}

/// `x` as p/q with q a power of two up to 2^20, if it is one exactly.
fn fraction(x: f64) -> Option<(u32, u32)> {
    (0..=20).map(|k| 1u32 << k).find_map(|q| {
        let p = x * f64::from(q);
        (p.fract() == 0.0 && p > 0.0 && p <= f64::from(q)).then_some((p as u32, q))
    })
}

fn quoted(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pfcswitch_hpcc::config::preset;

    /// HPCC's fat-tree and two flows in `dir`, and `preset` naming them.
    fn experiment(dir: &Path, preset_text: &str) -> PathBuf {
        let (fat, flows) = (dir.join("fat.txt"), dir.join("flow.txt"));
        std::fs::write(&fat, Topology::hpcc_fat_tree().emit()).unwrap();
        std::fs::write(&flows, "2\n0 17 3 100 10000 2.0\n1 300 3 100 20000 2.0001\n").unwrap();
        let text =
            preset_text.replace("mix/fat.txt", fat.to_str().unwrap()).replace("mix/flow.txt", flows.to_str().unwrap());
        let config = dir.join("config.txt");
        std::fs::write(&config, text).unwrap();
        config
    }

    fn imported(cc: &str, edit: impl Fn(String) -> String) -> Result<(toml::Table, toml::Table, Vec<String>)> {
        let dir = tempfile::tempdir().unwrap();
        let config = experiment(dir.path(), &edit(preset(cc, 100, "fat", "flow").unwrap()));
        let Imported { scenario, switch, notes } = import(&config)?;
        Ok((toml::from_str(&scenario).unwrap(), toml::from_str(&switch).unwrap(), notes))
    }

    #[test]
    fn run_pys_dcqcn_becomes_dcqcn_with_its_parameters_on_hpccs_switches() {
        let (scenario, switch, notes) = imported("dcqcn", |text| text).unwrap();
        assert_eq!(scenario["speed"].as_str(), Some("100Gbps"));
        assert_eq!((scenario["cable"].as_str(), scenario["duration"].as_str()), (Some("1000ns"), Some("2000000000ns")));
        let transport = &scenario["transport"];
        assert_eq!(transport["window"].as_integer(), Some(i64::from(u32::MAX)), "HAS_WIN 0");
        assert_eq!(transport["ack_every"].as_integer(), Some(1));
        let window = (scenario["qlen_start"].as_str(), scenario["qlen_end"].as_str());
        assert_eq!(window, (Some("0ns"), Some("1000000000ns")), "run.py's QLEN_MON_START/END, 2 s and 3 s");
        assert_eq!(transport["rocev2"]["cnp_interval"].as_str(), Some("0ns"));
        let dcqcn = &transport["dcqcn"];
        let got: Vec<&str> = [
            "model",
            "g",
            "alpha_update_period",
            "rate_decrease_period",
            "rate_increase_period",
            "additive_increase",
            "hyper_increase",
            "min_rate",
        ]
        .iter()
        .map(|k| dcqcn[k].as_str().unwrap())
        .collect();
        assert_eq!(got, ["hpcc", "1/256", "1000ns", "4000ns", "300000ns", "20Mbps", "200Mbps", "1Gbps"]);
        assert_eq!(dcqcn["fast_recovery_threshold"].as_integer(), Some(1));
        assert_eq!(dcqcn["clamp_target_rate"].as_bool(), Some(false));
        assert!(notes.iter().any(|n| n.starts_with("ACK_HIGH_PRIO")), "{notes:?}");

        // ECN by link rate; α 1/8 at the NICs' rate and 1/2 at 400 Gbit/s; the pool is 32 MiB
        // less what a ToR keeps (16 host ports and 4 up-links, 3 × rate × delay each).
        let ecn = &switch["ecn"];
        assert_eq!((ecn["min"].as_integer(), ecn["max"].as_integer()), (Some(400_000), Some(1_600_000)));
        assert_eq!(ecn["mark_at"].as_str(), Some("dequeue"), "ns-3 marks as a frame leaves");
        let fast = &ecn["by_speed"][0];
        assert_eq!((fast["speed"].as_str(), fast["min"].as_integer()), (Some("400Gbps"), Some(1_600_000)));
        let profiles = &switch["buffer"]["profiles"];
        let pg = |name: &str| {
            (profiles[name]["dynamic_th"].as_integer(), profiles[name].get("xoff").and_then(toml::Value::as_integer))
        };
        assert_eq!(
            (pg("pg_100Gbps"), pg("pg_400Gbps")),
            ((Some(-3), None), (Some(-1), None)),
            "headroom from the link"
        );
        let pool = switch["buffer"]["pools"]["ingress"]["size"].as_integer().unwrap();
        assert_eq!(pool, 32 * 1024 * 1024 - 16 * (37_500 + 4096) - 4 * (150_000 + 4096));
        let parsed: pfcswitch_switch::config::SwitchConfig =
            toml::from_str(&toml::to_string(&switch).unwrap()).unwrap();
        parsed.validate().unwrap();
    }

    #[test]
    fn run_pys_hp_becomes_hpcc_with_the_fabrics_largest_rtt_and_int_on_the_switches() {
        let (scenario, _, notes) = imported("hp", |text| text).unwrap();
        let hpcc = &scenario["transport"]["hpcc"];
        // run.py --cc hp at 100 Gbit/s: AI 40 Mbit/s, U_TARGET 0.95, MI_THRESH 0, VAR_WIN 1.
        assert_eq!(hpcc["base_rtt"].as_str(), Some("12240ns"), "the fat-tree's largest RTT");
        assert_eq!(hpcc["rate_ai"].as_str(), Some("40Mbps"));
        assert_eq!((hpcc["target_utilization"].as_float(), hpcc["max_stage"].as_integer()), (Some(0.95), Some(0)));
        assert_eq!(hpcc["variable_window"].as_bool(), Some(true));
        assert!(scenario["transport"]["rocev2"].is_table());
        let frame_len = 1000 + Framing::Rocev2.overhead() + 136;
        assert_eq!(scenario["transport"]["frame_len"].as_integer(), Some(frame_len as i64), "room for five records");
        assert!(notes.iter().any(|n| n.starts_with("CC_MODE 3: INT records of 24 bytes")), "{notes:?}");
        let unused = notes.iter().find(|n| n.starts_with("read and not used")).unwrap();
        assert!(!unused.contains("U_TARGET") && unused.contains("INT_MULTI"), "{unused}");
    }

    #[test]
    fn run_pys_timely_becomes_timely_once_per_rtt_and_the_vwin_modes_add_the_window() {
        let (scenario, _, _) = imported("timely", |text| text).unwrap();
        let timely = &scenario["transport"]["timely"];
        // run.py --cc timely at 100 Gbit/s: AI 10 × 100 / 10 = 100 Mbit/s, HAI 500 Mbit/s.
        assert_eq!(timely["model"].as_str(), Some("hpcc"));
        assert_eq!(
            (timely["additive_increase"].as_str(), timely["hyper_increase"].as_str()),
            (Some("100Mbps"), Some("500Mbps"))
        );
        assert!(timely.get("base_rtt").is_none(), "HAS_WIN 0: TIMELY alone");
        let (scenario, _, _) = imported("timely_vwin", |text| text).unwrap();
        assert_eq!(scenario["transport"]["timely"]["base_rtt"].as_str(), Some("12240ns"), "TIMELY+w");
        let (scenario, _, _) = imported("dcqcn_vwin", |text| text).unwrap();
        assert_eq!(scenario["transport"]["dcqcn"]["base_rtt"].as_str(), Some("12240ns"), "DCQCN+w");
        let (scenario, _, _) = imported("dcqcn", |text| text).unwrap();
        assert!(scenario["transport"]["dcqcn"].get("base_rtt").is_none(), "HAS_WIN 1, VAR_WIN 0: DCQCN alone");
    }

    #[test]
    fn run_pys_dctcp_becomes_hpccs_rate_based_dctcp_under_its_bdp_window() {
        let (scenario, switch, notes) = imported("dctcp", |text| text).unwrap();
        let unused = notes.iter().find(|n| n.starts_with("read and not used")).unwrap();
        assert!(!unused.contains("DCTCP_RATE_AI"), "DCTCP uses it in ns-3: {unused}");
        assert!(notes.iter().any(|n| n.starts_with("CC_MODE 8") && n.contains("DCTCP_RATE_AI")), "{notes:?}");
        let transport = &scenario["transport"];
        let dctcp = &transport["dctcp"];
        assert_eq!(dctcp["model"].as_str(), Some("hpcc"));
        assert_eq!(dctcp["shift_g"].as_integer(), Some(4), "EWMA_GAIN 0.0625");
        assert_eq!(dctcp["additive_increase"].as_str(), Some("615Mbps"), "DCTCP_RATE_AI 615Mb/s");
        assert_eq!(dctcp["base_rtt"].as_str(), Some("12240ns"), "HAS_WIN 1, VAR_WIN 1");
        // The fat-tree's largest RTT, 12,240 ns, at 100 Gbit/s: 153,000 B of 1000-byte segments.
        assert_eq!(transport["window"].as_integer(), Some(153));
        let ecn = &switch["ecn"];
        assert_eq!((ecn["min"].as_integer(), ecn["probability"].as_float()), (Some(300_000), Some(1.0)));
    }

    #[test]
    fn what_does_not_map_is_refused_with_the_key_its_line_and_why() {
        let refused = |cc: &str, edit: &dyn Fn(String) -> String| imported(cc, edit).unwrap_err().to_string();
        let same = |text: String| text;
        let message = refused("hpccPint", &same);
        assert!(
            message.contains("config.txt:") && message.contains(": CC_MODE: 10 (HPCC-PINT) is not imported yet"),
            "{message}"
        );
        let multi = |text: String| text.replace("MULTI_RATE 0", "MULTI_RATE 1");
        assert!(refused("hp", &multi).contains("MULTI_RATE: 1 (a rate per hop)"));
        let no_400 = |text: String| {
            text.replace("KMAX_MAP 2 100000000000 1600 400000000000 6400", "KMAX_MAP 1 100000000000 1600")
        };
        assert!(refused("dcqcn", &no_400).contains("KMAX_MAP: no value for the 400Gbps links of the topology"));
        let per_pair = |text: String| text.replace("GLOBAL_T 1", "GLOBAL_T 0");
        assert!(refused("dctcp", &per_pair).contains("GLOBAL_T: 0 gives every pair its own BDP window"));
        let back_to_zero = |text: String| text.replace("L2_BACK_TO_ZERO 0", "L2_BACK_TO_ZERO 1");
        assert!(refused("dcqcn", &back_to_zero).contains("L2_BACK_TO_ZERO: 1"));
        let far = |text: String| text.replace("LINK_DOWN 0 0 0", "LINK_DOWN 100 0 330");
        assert!(refused("dcqcn", &far).contains("LINK_DOWN: no link between nodes 0 and 330"));
        let early = |text: String| text.replace("SIMULATOR_STOP_TIME 4.00", "SIMULATOR_STOP_TIME 1.5");
        assert!(refused("dcqcn", &early).contains("SIMULATOR_STOP_TIME: 1.5 s: the flows start at 2 s"));
    }

    #[test]
    fn a_link_down_is_a_fault_at_the_switch_end_of_the_link() {
        // Node 320 is the first ToR (sw1); host 0 is its first link.
        let (scenario, _, _) =
            imported("dcqcn", |text| text.replace("LINK_DOWN 0 0 0", "LINK_DOWN 1500 0 320")).unwrap();
        let fault = &scenario["fault"][0];
        assert_eq!((fault["at"].as_str(), fault["down"].as_str()), (Some("1500us"), Some("sw1:p1")));
    }
}
