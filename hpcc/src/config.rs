//! HPCC's `config.txt`: one setting a line, `KEY value…`, read by its `scratch/third.cc`
//! key by key. Every key that program reads is known here with the values it takes; an
//! unknown key (which ns-3 would skip, reading its values as keys), a key set twice, a
//! missing or malformed value are refused with the file, the line and the reason. What each
//! key becomes in a pfcswitch run is the importer's business ([HPCC's ns-3 files](../../docs/hpcc.md)).
//!
//! [`preset`] writes the configuration HPCC's `run.py` writes for a congestion control and
//! a host link rate, with its scaling of ECN thresholds, increase steps and buffer size.

use crate::error::{FileError, token_lines};
use crate::units::{parse_rate, parse_time};
use std::collections::BTreeMap;
use std::path::Path;

/// What a key's values are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// 0 or 1.
    Flag,
    Count,
    Number,
    /// An ns-3 rate string.
    Rate,
    /// An ns-3 time string.
    Time,
    File,
    /// `after_us a b`: take the link between nodes a and b down 2 s + `after_us` µs into the
    /// run; `0 0 0` for none.
    LinkDown,
    /// `n rate value …`: n pairs of a link rate (bit/s) and a value.
    RateMap,
}

/// Every key `third.cc` reads.
const KEYS: &[(&str, Kind)] = &[
    ("ENABLE_QCN", Kind::Flag),
    ("USE_DYNAMIC_PFC_THRESHOLD", Kind::Flag),
    ("CLAMP_TARGET_RATE", Kind::Flag),
    ("PAUSE_TIME", Kind::Number),
    ("DATA_RATE", Kind::Rate),
    ("LINK_DELAY", Kind::Time),
    ("PACKET_PAYLOAD_SIZE", Kind::Count),
    ("L2_CHUNK_SIZE", Kind::Count),
    ("L2_ACK_INTERVAL", Kind::Count),
    ("L2_BACK_TO_ZERO", Kind::Flag),
    ("TOPOLOGY_FILE", Kind::File),
    ("FLOW_FILE", Kind::File),
    ("TRACE_FILE", Kind::File),
    ("TRACE_OUTPUT_FILE", Kind::File),
    ("SIMULATOR_STOP_TIME", Kind::Number),
    ("ALPHA_RESUME_INTERVAL", Kind::Number),
    ("RP_TIMER", Kind::Number),
    ("EWMA_GAIN", Kind::Number),
    ("FAST_RECOVERY_TIMES", Kind::Count),
    ("RATE_AI", Kind::Rate),
    ("RATE_HAI", Kind::Rate),
    ("ERROR_RATE_PER_LINK", Kind::Number),
    ("CC_MODE", Kind::Count),
    ("RATE_DECREASE_INTERVAL", Kind::Number),
    ("MIN_RATE", Kind::Rate),
    ("FCT_OUTPUT_FILE", Kind::File),
    ("HAS_WIN", Kind::Flag),
    ("GLOBAL_T", Kind::Flag),
    ("MI_THRESH", Kind::Count),
    ("VAR_WIN", Kind::Flag),
    ("FAST_REACT", Kind::Flag),
    ("U_TARGET", Kind::Number),
    ("INT_MULTI", Kind::Count),
    ("RATE_BOUND", Kind::Flag),
    ("ACK_HIGH_PRIO", Kind::Flag),
    ("DCTCP_RATE_AI", Kind::Rate),
    ("PFC_OUTPUT_FILE", Kind::File),
    ("LINK_DOWN", Kind::LinkDown),
    ("ENABLE_TRACE", Kind::Flag),
    ("KMAX_MAP", Kind::RateMap),
    ("KMIN_MAP", Kind::RateMap),
    ("PMAX_MAP", Kind::RateMap),
    ("BUFFER_SIZE", Kind::Count),
    ("QLEN_MON_FILE", Kind::File),
    ("QLEN_MON_START", Kind::Count),
    ("QLEN_MON_END", Kind::Count),
    ("MULTI_RATE", Kind::Flag),
    ("SAMPLE_FEEDBACK", Kind::Flag),
    ("PINT_LOG_BASE", Kind::Number),
    ("PINT_PROB", Kind::Number),
];

/// A key's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Flag(bool),
    Count(u64),
    Number(f64),
    /// Bit/s.
    Rate(u64),
    /// Nanoseconds.
    Time(u64),
    File(String),
    LinkDown(Option<LinkDown>),
    /// Link rate in bit/s → value, in the file's order.
    RateMap(Vec<(u64, f64)>),
}

/// `LINK_DOWN`: the link between nodes `a` and `b` goes down `after_us` µs after 2 s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkDown {
    pub after_us: u64,
    pub a: u32,
    pub b: u32,
}

/// A `config.txt`: each key set, with its line.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Config {
    pub values: BTreeMap<&'static str, (usize, Value)>,
}

impl Config {
    /// Reads `text`, the contents of `file` (named in errors).
    pub fn parse(text: &str, file: &Path) -> Result<Config, FileError> {
        let mut config = Config::default();
        for (line, tokens) in token_lines(text) {
            let at = |reason: String| FileError::at(file, line, reason);
            let (key, values) = tokens.split_first().expect("token_lines gives non-empty lines");
            let Some(&(name, kind)) = KEYS.iter().find(|(name, _)| name == key) else {
                return Err(at(format!("unknown key `{key}`: HPCC's third.cc reads no such key")));
            };
            if let Some((first, _)) = config.values.get(name) {
                return Err(at(format!("{name} is set twice (first on line {first})")));
            }
            let value = value(kind, values).map_err(|reason| at(format!("{name}: {reason}")))?;
            config.values.insert(name, (line, value));
        }
        Ok(config)
    }

    /// Reads `file`.
    pub fn read(file: &Path) -> Result<Config, FileError> {
        let text = std::fs::read_to_string(file).map_err(|e| FileError::at(file, 0, e.to_string()))?;
        Config::parse(&text, file)
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key).map(|(_, value)| value)
    }
}

fn value(kind: Kind, values: &[&str]) -> Result<Value, String> {
    let one = || match values {
        [value] => Ok(*value),
        _ => Err(format!("takes one value, found {}", values.len())),
    };
    let number =
        |text: &str| text.parse::<f64>().ok().filter(|n| n.is_finite()).ok_or(format!("`{text}` is not a number"));
    let count = |text: &str| text.parse::<u64>().map_err(|_| format!("`{text}` is not a whole number"));
    Ok(match kind {
        Kind::Flag => match one()? {
            "0" => Value::Flag(false),
            "1" => Value::Flag(true),
            other => return Err(format!("`{other}` is not 0 or 1")),
        },
        Kind::Count => Value::Count(count(one()?)?),
        Kind::Number => Value::Number(number(one()?)?),
        Kind::Rate => Value::Rate(parse_rate(one()?)?),
        Kind::Time => Value::Time(parse_time(one()?)?),
        Kind::File => Value::File(one()?.to_string()),
        Kind::LinkDown => match values {
            [after, a, b] => {
                let down = LinkDown { after_us: count(after)?, a: count(a)? as u32, b: count(b)? as u32 };
                Value::LinkDown((down != LinkDown { after_us: 0, a: 0, b: 0 }).then_some(down))
            }
            _ => return Err(format!("takes `time_us node node`, found {} values", values.len())),
        },
        Kind::RateMap => {
            let (n, pairs) = values.split_first().ok_or("takes a count and that many `rate value` pairs")?;
            let n = count(n)? as usize;
            if pairs.len() != 2 * n {
                return Err(format!("says {n} pairs, has {} values after the count", pairs.len()));
            }
            let map =
                pairs.chunks(2).map(|pair| Ok((count(pair[0])?, number(pair[1])?))).collect::<Result<_, String>>()?;
            Value::RateMap(map)
        }
    })
}

/// HPCC's names of its `CC_MODE` values.
pub fn cc_mode_name(mode: u64) -> &'static str {
    match mode {
        1 => "DCQCN",
        3 => "HPCC",
        7 => "TIMELY",
        8 => "DCTCP",
        10 => "HPCC-PINT",
        _ => "not a mode HPCC's simulator has",
    }
}

/// HPCC's `run.py` presets: `--cc` names.
pub const PRESETS: &[&str] =
    &["dcqcn", "dcqcn_paper", "dcqcn_vwin", "dcqcn_paper_vwin", "hp", "dctcp", "timely", "timely_vwin", "hpccPint"];

/// The `config.txt` HPCC's `run.py` writes for `--cc cc --bw bw_gbps` (its defaults for the
/// rest: `--utgt 95 --mi 0 --hpai 0 --pint_log_base 1.01 --pint_prob 1.0 --down "0 0 0"`),
/// naming its files after `topo` and `trace` as it does; `None` for an unknown preset.
/// Python 2's integer division is kept where `run.py` divides integers.
pub fn preset(cc: &str, bw_gbps: u64, topo: &str, trace: &str) -> Option<String> {
    let bw = bw_gbps;
    let g = 1_000_000_000;
    let ecn = |kmin: u64, kmax: u64, pmax: f64| {
        (
            format!("2 {} {} {} {}", bw * g, kmin * bw / 25, bw * 4 * g, kmin * bw * 4 / 25),
            format!("2 {} {} {} {}", bw * g, kmax * bw / 25, bw * 4 * g, kmax * bw * 4 / 25),
            format!("2 {} {pmax:.2} {} {pmax:.2}", bw * g, bw * 4 * g),
        )
    };
    let (kmin_map, kmax_map, pmax_map) = ecn(100, 400, 0.2);
    // (mode, t_alpha, t_dec, t_inc, g, ai, hai, dctcp_ai, has_win, vwin, us, int_multi, ack_prio, name)
    let dcqcn = |t: (u64, u64, u64), win: u64, ack| {
        (1, t.0, t.1, t.2, "0.00390625", 5 * bw / 25, 50 * bw / 25, 1000, win, win, 0, 1, ack)
    };
    let hpcc = |mode| (mode, 1, 4, 300, "0.00390625", 10 * bw / 25, 10 * bw / 25, 1000, 1, 1, 1, bw / 25, 0);
    let timely = |win| (7, 1, 4, 300, "0.00390625", 10 * bw / 10, 50 * bw / 10, 1000, win, win, 0, 1, 1);
    let (settings, name, maps) = match cc {
        "dcqcn" => (dcqcn((1, 4, 300), 0, 1), cc.to_string(), (kmin_map, kmax_map, pmax_map)),
        "dcqcn_paper" => (dcqcn((50, 50, 55), 0, 1), cc.to_string(), (kmin_map, kmax_map, pmax_map)),
        "dcqcn_vwin" => (dcqcn((1, 4, 300), 1, 0), cc.to_string(), (kmin_map, kmax_map, pmax_map)),
        "dcqcn_paper_vwin" => (dcqcn((50, 50, 55), 1, 0), cc.to_string(), (kmin_map, kmax_map, pmax_map)),
        "hp" => (hpcc(3), "hp95".to_string(), (kmin_map, kmax_map, pmax_map)),
        "hpccPint" => (hpcc(10), "hpccPint95log1.010p1.000".to_string(), (kmin_map, kmax_map, pmax_map)),
        "timely" => (timely(0), cc.to_string(), (kmin_map, kmax_map, pmax_map)),
        "timely_vwin" => (timely(1), cc.to_string(), (kmin_map, kmax_map, pmax_map)),
        "dctcp" => {
            // DCTCP marks at one threshold, 30 KB per 10 Gbit/s of the link, always (PMAX 1).
            let k = format!("2 {} {} {} {}", bw * g, 30 * bw / 10, bw * 4 * g, 30 * bw * 4 / 10);
            let maps = (k.clone(), k, format!("2 {} 1.00 {} 1.00", bw * g, bw * 4 * g));
            ((8, 1, 4, 300, "0.0625", 10, 10, 615, 1, 1, 0, 1, 0), cc.to_string(), maps)
        }
        _ => return None,
    };
    let (mode, t_alpha, t_dec, t_inc, gain, ai, hai, dctcp_ai, has_win, vwin, us, int_multi, ack_prio) = settings;
    let (kmin_map, kmax_map, pmax_map) = maps;
    let buffer_size = 16 * bw / 50;
    Some(format!(
        "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\n\nPACKET_PAYLOAD_SIZE 1000\n\n\
         TOPOLOGY_FILE mix/{topo}.txt\nFLOW_FILE mix/{trace}.txt\nTRACE_FILE mix/trace.txt\n\
         TRACE_OUTPUT_FILE mix/mix_{topo}_{trace}_{name}.tr\nFCT_OUTPUT_FILE mix/fct_{topo}_{trace}_{name}.txt\n\
         PFC_OUTPUT_FILE mix/pfc_{topo}_{trace}_{name}.txt\n\nSIMULATOR_STOP_TIME 4.00\n\n\
         CC_MODE {mode}\nALPHA_RESUME_INTERVAL {t_alpha}\nRATE_DECREASE_INTERVAL {t_dec}\nCLAMP_TARGET_RATE 0\n\
         RP_TIMER {t_inc}\nEWMA_GAIN {gain}\nFAST_RECOVERY_TIMES 1\nRATE_AI {ai}Mb/s\nRATE_HAI {hai}Mb/s\n\
         MIN_RATE 1000Mb/s\nDCTCP_RATE_AI {dctcp_ai}Mb/s\n\nERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\n\
         L2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\nHAS_WIN {has_win}\nGLOBAL_T 1\nVAR_WIN {vwin}\nFAST_REACT {us}\n\
         U_TARGET 0.95\nMI_THRESH 0\nINT_MULTI {int_multi}\nMULTI_RATE 0\nSAMPLE_FEEDBACK 0\nPINT_LOG_BASE 1.01\n\
         PINT_PROB 1.0\n\nRATE_BOUND 1\n\nACK_HIGH_PRIO {ack_prio}\n\nLINK_DOWN 0 0 0\n\nENABLE_TRACE 0\n\n\
         KMAX_MAP {kmax_map}\nKMIN_MAP {kmin_map}\nPMAX_MAP {pmax_map}\nBUFFER_SIZE {buffer_size}\n\
         QLEN_MON_FILE mix/qlen_{topo}_{trace}_{name}.txt\nQLEN_MON_START 2000000000\nQLEN_MON_END 3000000000\n"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, FileError> {
        Config::parse(text, Path::new("config.txt"))
    }

    /// HPCC's own `mix/config.txt` (at commit 9f4be2a), as it is.
    const HPCC_CONFIG: &str = "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\n\nPACKET_PAYLOAD_SIZE 1000\n\n\
        TOPOLOGY_FILE mix/topology.txt\nFLOW_FILE mix/flow.txt\nTRACE_FILE mix/trace.txt\nTRACE_OUTPUT_FILE mix/mix.tr\n\
        FCT_OUTPUT_FILE mix/fct.txt\nPFC_OUTPUT_FILE mix/pfc.txt\n\nSIMULATOR_STOP_TIME 4.00\n\nCC_MODE 3\n\
        ALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 900 \nEWMA_GAIN 0.00390625\n\
        FAST_RECOVERY_TIMES 1\nRATE_AI 50Mb/s\nRATE_HAI 100Mb/s\nMIN_RATE 100Mb/s\nDCTCP_RATE_AI 1000Mb/s\n\n\
        ERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\nHAS_WIN 1\nGLOBAL_T 1\n\
        VAR_WIN 1\nFAST_REACT 1\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\nMULTI_RATE 0\nSAMPLE_FEEDBACK 0\n\
        PINT_LOG_BASE 1.05\nPINT_PROB 1.0\n\nRATE_BOUND 1\n\nACK_HIGH_PRIO 0\n\nLINK_DOWN 0 0 0\n\nENABLE_TRACE 1\n\n\
        KMAX_MAP 3 25000000000 400 50000000000 800 100000000000 1600\n\
        KMIN_MAP 3 25000000000 100 50000000000 200 100000000000 400\n\
        PMAX_MAP 3 25000000000 0.2 50000000000 0.2 100000000000 0.2\nBUFFER_SIZE 32\nQLEN_MON_FILE mix/qlen.txt\n\
        QLEN_MON_START 2000000000\nQLEN_MON_END 2010000000\n";

    #[test]
    fn hpccs_own_config_reads_with_every_value_typed() {
        let config = parse(HPCC_CONFIG).unwrap();
        assert_eq!(config.values.len(), 47);
        assert_eq!(config.get("CC_MODE"), Some(&Value::Count(3)));
        assert_eq!(config.get("RATE_AI"), Some(&Value::Rate(50_000_000)));
        assert_eq!(config.get("ENABLE_QCN"), Some(&Value::Flag(true)));
        assert_eq!(config.get("LINK_DOWN"), Some(&Value::LinkDown(None)));
        let kmin = vec![(25_000_000_000, 100.0), (50_000_000_000, 200.0), (100_000_000_000, 400.0)];
        assert_eq!(config.get("KMIN_MAP"), Some(&Value::RateMap(kmin)));
        assert_eq!(config.values["BUFFER_SIZE"], (55, Value::Count(32)));
    }

    #[test]
    fn every_preset_of_run_py_reads_back() {
        for cc in PRESETS {
            let text = preset(cc, 100, "fat", "flow").unwrap();
            let config = parse(&text).unwrap_or_else(|e| panic!("{cc}: {e}"));
            assert_eq!(config.values.len(), 47, "{cc}");
        }
        let hp = parse(&preset("hp", 100, "fat", "flow").unwrap()).unwrap();
        // run.py at 100 Gbit/s: AI 10 × 100 / 25 = 40 Mbit/s, INT_MULTI 4, buffer 32 MB,
        // ECN 400 KB / 1600 KB at 100 Gbit/s and 4× at 400 Gbit/s.
        assert_eq!(hp.get("RATE_AI"), Some(&Value::Rate(40_000_000)));
        assert_eq!(hp.get("INT_MULTI"), Some(&Value::Count(4)));
        assert_eq!(hp.get("BUFFER_SIZE"), Some(&Value::Count(32)));
        let kmax = vec![(100_000_000_000, 1600.0), (400_000_000_000, 6400.0)];
        assert_eq!(hp.get("KMAX_MAP"), Some(&Value::RateMap(kmax)));
        let dctcp = parse(&preset("dctcp", 100, "fat", "flow").unwrap()).unwrap();
        let k = vec![(100_000_000_000, 300.0), (400_000_000_000, 1200.0)];
        assert_eq!(dctcp.get("KMIN_MAP"), Some(&Value::RateMap(k.clone())));
        assert_eq!(dctcp.get("KMAX_MAP"), Some(&Value::RateMap(k)));
        assert_eq!(dctcp.get("DCTCP_RATE_AI"), Some(&Value::Rate(615_000_000)));
        let dcqcn = parse(&preset("dcqcn", 25, "fat", "flow").unwrap()).unwrap();
        assert_eq!(
            (dcqcn.get("RATE_AI"), dcqcn.get("HAS_WIN")),
            (Some(&Value::Rate(5_000_000)), Some(&Value::Flag(false)))
        );
        assert_eq!(preset("cubic", 100, "fat", "flow"), None);
    }

    #[test]
    fn bad_settings_are_refused_with_the_line_and_the_reason() {
        let refused = |text: &str| parse(text).unwrap_err().to_string();
        assert_eq!(
            refused("CC_MODE 3\nCCMODE 1\n"),
            "config.txt:2: unknown key `CCMODE`: HPCC's third.cc reads no such key"
        );
        assert_eq!(refused("CC_MODE 3\n\nCC_MODE 1\n"), "config.txt:3: CC_MODE is set twice (first on line 1)");
        assert_eq!(refused("HAS_WIN 2\n"), "config.txt:1: HAS_WIN: `2` is not 0 or 1");
        assert_eq!(
            refused("RATE_AI 50Mb\n"),
            "config.txt:1: RATE_AI: `50Mb`: unknown rate unit `Mb` (ns-3 knows bps, Kbps, Mbps, Gbps, b/s, B/s, Kib/s, …)"
        );
        assert_eq!(refused("BUFFER_SIZE\n"), "config.txt:1: BUFFER_SIZE: takes one value, found 0");
        assert_eq!(refused("LINK_DOWN 0 0\n"), "config.txt:1: LINK_DOWN: takes `time_us node node`, found 2 values");
        assert_eq!(
            refused("KMAX_MAP 2 25000000000 400\n"),
            "config.txt:1: KMAX_MAP: says 2 pairs, has 2 values after the count"
        );
        assert_eq!(refused("U_TARGET x\n"), "config.txt:1: U_TARGET: `x` is not a number");
    }
}
