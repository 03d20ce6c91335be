//! Workloads: traffic classes as the papers describe them, turned into connections and
//! messages for [`Transport`](pfcswitch_hosts::Transport)s, reproducibly from a seed.
//!
//! A class is one `[[class]]` table of a scenario file:
//!
//! | `kind`     | what it generates                                                        |
//! |------------|--------------------------------------------------------------------------|
//! | `long`     | one long-lived flow per (sender, receiver) pair, sending until the end   |
//! | `constant` | the same, paced at `bandwidth` with `arrivals` (constant, bernoulli, pareto: [`Arrivals`]) |
//! | `poisson`  | messages of `size` (or drawn from the flow-size distribution `sizes`) with Poisson arrivals at `rate` per second per sender (or at the `load` that offers), each to a receiver drawn uniformly (or to the sender's partner in a random permutation: `destinations`) |
//! | `query`    | queries at `rate` per second (Poisson); each makes `fan_in` senders drawn uniformly (default: every sender) answer `size` bytes to a receiver drawn uniformly, at once (incast) |
//! | `burst`    | at each time in `at`, every sender sends `size` to every receiver         |
//! | `flows`    | the flows of HPCC's `flow.txt` (`file`), or `traffic_gen.py`'s from `sizes` at `load` (with `incast`, the Fig. 11 incast), each a connection of its own, at its start less `offset` ([`flow_file`]) |
//!
//! Every (class, sender, receiver) pair is one connection (a queue pair): its messages are
//! sent in arrival order. Each class and sender draws from its own stream derived from the
//! seed, so editing one class leaves the others' arrivals unchanged.
//!
//! **The literature's standard workload** (HPCC, DCQCN, pFabric, Homa) is a `poisson` class
//! with `sizes` (WebSearch, Data Mining, Hadoop, Storage or a CDF file: [`crate::flow_sizes`])
//! and `load`. Its flows are each a connection of their own, as in HPCC's simulator (a queue
//! pair per flow): two flows between the same hosts share the sender's NIC rather than wait
//! for each other. `load = 0.5` sets each sender's Poisson rate to
//! `0.5 × link rate ÷ (8 × mean flow size)`, the definition of HPCC's `traffic_gen.py`: the
//! flows' bytes (payload, without headers) offered per second, as a fraction of the sender's
//! NIC rate. On an oversubscribed fabric all-to-all traffic crosses the core in proportion to
//! the hosts outside the sender's pod or leaf, so a load `L` asks `L × oversubscription ×
//! (share of remote destinations)` of the up-links: above 1 the core, not the hosts, is the
//! bottleneck. A load above 1 is refused unless the class says `overload = true`.
//!
//! A `[[storm]]` ([`StormSpec`]) makes a host behave like a NIC stuck in a PFC storm: it keeps
//! its switch port paused on one priority for a while ([`Storm`]).

mod error;
pub mod flow_file;
pub mod flow_list;
mod host_list;
pub(crate) mod spans;
mod storm;

pub use error::WorkloadError;
pub use storm::{Storm, StormError, StormSpec};

use crate::flow_sizes::FlowSizes;
use crate::hpcc_traffic::TrafficSpec;
use pfcswitch_hosts::{Arrivals, MessageSpec};
use pfcswitch_hpcc::generate::IncastSpec;
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize, duration};
use serde::{Deserialize, Serialize};
use spans::{durations, optional_duration};
use std::path::PathBuf;
use std::time::Duration;

/// Where a `poisson` class's flows go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Destinations {
    /// Each flow to a receiver drawn uniformly among the others.
    #[default]
    AllToAll,
    /// Each sender to one partner for the whole run, drawn once from the seed as a random
    /// permutation with no host sending to itself: every receiver gets one sender's flows.
    Permutation,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Long,
    Constant,
    Poisson,
    Query,
    Burst,
    Flows,
}

/// One `[[class]]` of a scenario.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    pub name: String,
    pub kind: Pattern,
    /// 802.1Q priority (PCP) of its frames.
    pub priority: u8,
    /// Host names, `h1..h4` for a range (a list, or one string); omitted, every host of the
    /// topology (a fabric's 128 servers).
    #[serde(default, deserialize_with = "host_list::deserialize")]
    pub senders: Vec<String>,
    #[serde(default, deserialize_with = "host_list::deserialize")]
    pub receivers: Vec<String>,
    /// Message size (poisson, query: per sender's answer, burst). On `long` and `constant`
    /// it makes each flow one finite message, whose FCT is the flow's (OFC's Table I).
    #[serde(default)]
    pub size: Option<ByteSize>,
    /// Poisson: the flow-size distribution each message's size is drawn from, instead of
    /// `size`: a built-in (`websearch`, `datamining`, `hadoop`, `storage`) or a CDF file,
    /// relative to the scenario file ([`crate::flow_sizes`]).
    #[serde(default)]
    pub sizes: Option<String>,
    /// Poisson: the offered load per sender as a fraction of its link rate, instead of
    /// `rate` (see the module's documentation).
    #[serde(default)]
    pub load: Option<f64>,
    /// Allows a `load` above 1: the senders offer more than their links carry.
    #[serde(default)]
    pub overload: bool,
    /// Poisson: all-to-all (the default) or a permutation.
    #[serde(default)]
    pub destinations: Destinations,
    /// A label to aggregate FCTs over classes (e.g. OFC's "uncongested" and "congested").
    #[serde(default)]
    pub group: Option<String>,
    /// Arrivals per second (poisson: per sender; query: queries).
    #[serde(default)]
    pub rate: Option<f64>,
    /// Query: how many senders answer each query, drawn anew per query (CaPFC §IV-B: "randomly
    /// selected 40 source nodes"). Default: every sender but the aggregator.
    #[serde(default)]
    pub fan_in: Option<usize>,
    /// Pacing of `constant` flows: the mean rate, and how frames are spaced around it.
    #[serde(default)]
    pub bandwidth: Option<BitRate>,
    #[serde(default)]
    pub arrivals: Arrivals,
    /// Burst times.
    #[serde(default, with = "durations")]
    pub at: Vec<Duration>,
    /// When the class starts and stops generating, from the run's start; its long-lived
    /// flows stop sending at `stop`.
    #[serde(default, with = "duration")]
    pub start: Duration,
    #[serde(default, with = "optional_duration")]
    pub stop: Option<Duration>,
    /// Flows: HPCC's `flow.txt`, relative to the scenario file.
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Flows: taken from every start (default 2 s, where `traffic_gen.py`'s flows begin).
    #[serde(default, with = "optional_duration")]
    pub offset: Option<Duration>,
    /// Flows generated from `sizes` and `load`: add HPCC's Fig. 11 incast (2 % of the
    /// network's capacity, 60 senders of 500 KB to one receiver per event).
    #[serde(default)]
    pub incast: bool,
}

/// A connection of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedConnection {
    /// Unique in the plan, numbered from 0.
    pub id: u32,
    /// Index into the classes.
    pub class: usize,
    /// Indices into the hosts.
    pub sender: usize,
    pub receiver: usize,
    pub priority: u8,
    pub rate: Option<BitRate>,
    /// Drawing from the workload's seed, one stream per connection.
    pub arrivals: Arrivals,
    /// A long-lived flow of a class with a `stop` ends there.
    pub until: Option<Instant>,
    pub messages: Vec<MessageSpec>,
    /// The destination port HPCC's `flow.txt` gave the flow (`flows` classes), which the run's
    /// `fct.txt` keeps.
    pub dport: Option<u16>,
}

/// The stream of one class and sender of a seed. Each part goes through SplitMix64's mixing
/// in turn. (Until issue 27 the parts were XOR-ed together, so seed 2's sender 0 drew seed 3's
/// sender 1's stream: another seed only gave the senders each other's arrivals and sizes.)
fn stream(seed: u64, class: usize, sender: usize) -> Rng {
    let mix = |state: u64, part: u64| Rng::new(state ^ part).next_u64();
    Rng::new(mix(mix(mix(0, seed), class as u64), sender as u64))
}

/// What a plan needs besides its classes: the senders' link rate (what `load` is a fraction
/// of) and where flow-size distributions are found.
#[derive(Clone, Debug)]
pub struct PlanContext {
    pub speed: BitRate,
    /// The scenario file's folder: CDF files are relative to it.
    pub scenario_dir: PathBuf,
    /// The built-in distributions' folder (`workloads/`).
    pub builtin_dir: PathBuf,
    /// The hosts' node ids in HPCC's files, when the topology is HPCC's `topology.txt`;
    /// otherwise host n (from 0) is node n.
    pub hpcc_hosts: Option<Vec<u32>>,
}

/// The connections and messages of `classes` over `hosts` for a run of `length` starting at
/// `epoch`, drawn from `seed`.
pub fn plan(
    classes: &[ClassSpec],
    hosts: &[String],
    seed: u64,
    epoch: Instant,
    length: Duration,
    context: &PlanContext,
) -> Result<Vec<PlannedConnection>, WorkloadError> {
    let mut connections: Vec<PlannedConnection> = Vec::new();
    // (class, sender, receiver) → index into `connections`; a fabric has tens of thousands.
    let mut by_ends = std::collections::HashMap::new();
    for (c, class) in classes.iter().enumerate() {
        let index = |name: &String| {
            hosts.iter().position(|h| h == name).ok_or_else(|| WorkloadError::UnknownHost {
                class: class.name.clone(),
                host: name.clone(),
                known: hosts.join(", "),
            })
        };
        let named = |names: &[String]| -> Result<Vec<usize>, WorkloadError> {
            if names.is_empty() { Ok((0..hosts.len()).collect()) } else { names.iter().map(index).collect() }
        };
        let (senders, receivers) = (named(&class.senders)?, named(&class.receivers)?);
        validate(class, &senders, &receivers)?;
        let stop = class.stop.unwrap_or(length).min(length);
        let sizes = class.sizes.as_ref().map(|spec| load_sizes(class, spec, context)).transpose()?;
        // A flow of a distribution or a flow file is a connection of its own (the key's last
        // part tells it).
        let own_connections = sizes.is_some() || class.kind == Pattern::Flows;
        let mut add = |sender: usize, receiver: usize, message: MessageSpec| {
            let own = own_connections.then_some(connections.len());
            let k = *by_ends.entry((c, sender, receiver, own)).or_insert_with(|| {
                connections.push(PlannedConnection {
                    id: connections.len() as u32,
                    class: c,
                    sender,
                    receiver,
                    priority: class.priority,
                    rate: (class.kind == Pattern::Constant).then_some(class.bandwidth).flatten(),
                    arrivals: class.arrivals.with_seed(stream(seed, c, sender ^ (receiver << 16)).next_u64()),
                    until: class.stop.filter(|_| class.size.is_none()).map(|stop| epoch + stop.min(length)),
                    messages: Vec::new(),
                    dport: None,
                });
                connections.len() - 1
            });
            let messages = &mut connections[k].messages;
            messages.push(MessageSpec { id: messages.len() as u32, ..message });
            k
        };
        let mut dports = Vec::new();
        let size = class.size.map(|s| s.bytes() as u32);
        let at = |offset: Duration| epoch + offset;
        match class.kind {
            Pattern::Long | Pattern::Constant => {
                for &s in &senders {
                    for &r in receivers.iter().filter(|&&r| r != s) {
                        add(s, r, MessageSpec { id: 0, size, start: at(class.start) });
                    }
                }
            }
            Pattern::Poisson => {
                let mean = sizes.as_ref().map_or_else(|| f64::from(size.expect("validated")), FlowSizes::mean);
                let rate = match class.load {
                    Some(load) => load * context.speed.bps() as f64 / 8.0 / mean,
                    None => class.rate.expect("validated"),
                };
                let partners = match class.destinations {
                    Destinations::AllToAll => None,
                    Destinations::Permutation => Some(permutation(class, &senders, &receivers, seed, c)?),
                };
                for (i, &s) in senders.iter().enumerate() {
                    let mut rng = stream(seed, c, s);
                    let targets: Vec<usize> = receivers.iter().copied().filter(|&r| r != s).collect();
                    let mut t = class.start + rng.exponential(rate);
                    while t < stop {
                        let r = partners.as_ref().map_or_else(|| targets[rng.below(targets.len())], |p| p[i]);
                        let size = match &sizes {
                            Some(sizes) => Some(flow_size(class, sizes.sample(&mut rng))?),
                            None => size,
                        };
                        add(s, r, MessageSpec { id: 0, size, start: at(t) });
                        t += rng.exponential(rate);
                    }
                }
            }
            Pattern::Query => {
                let rate = class.rate.expect("validated");
                let mut rng = stream(seed, c, usize::MAX);
                let mut t = class.start + rng.exponential(rate);
                while t < stop {
                    let aggregator = receivers[rng.below(receivers.len())];
                    let mut answering: Vec<usize> = senders.iter().copied().filter(|&s| s != aggregator).collect();
                    if let Some(fan_in) = class.fan_in {
                        // A partial Fisher-Yates shuffle: the first `fan_in` are a uniform sample.
                        for i in 0..fan_in.min(answering.len()) {
                            let j = i + rng.below(answering.len() - i);
                            answering.swap(i, j);
                        }
                        answering.truncate(fan_in);
                        answering.sort_unstable();
                    }
                    for s in answering {
                        add(s, aggregator, MessageSpec { id: 0, size, start: at(t) });
                    }
                    t += rng.exponential(rate);
                }
            }
            Pattern::Flows => {
                let path = class.file.as_ref().map(|file| context.scenario_dir.join(file));
                let source = match (&path, &sizes) {
                    (Some(path), _) => flow_file::Source::File(path),
                    (None, Some(sizes)) => flow_file::Source::Generated(TrafficSpec {
                        sizes,
                        hosts: match &context.hpcc_hosts {
                            Some(ids) => ids.clone(),
                            None => (0..hosts.len() as u32).collect(),
                        },
                        load: class.load.expect("validated"),
                        host_bps: context.speed.bps(),
                        duration_ns: stop.as_nanos() as u64,
                        incast: class.incast.then(IncastSpec::default),
                        seed: stream(seed, c, usize::MAX).next_u64(),
                    }),
                    (None, None) => unreachable!("validated: a file or sizes"),
                };
                let flow_class = flow_file::FlowClass {
                    name: &class.name,
                    source,
                    offset: class.offset,
                    priority: class.priority,
                    hpcc_hosts: context.hpcc_hosts.as_deref(),
                };
                for flow in flow_file::flows(flow_class, hosts.len(), stop)? {
                    let message = MessageSpec { id: 0, size: Some(flow.size), start: at(flow.start) };
                    dports.push((add(flow.sender, flow.receiver, message), flow.dport));
                }
            }
            Pattern::Burst => {
                for &t in class.at.iter().filter(|&&t| t < stop) {
                    for &s in &senders {
                        for &r in receivers.iter().filter(|&&r| r != s) {
                            add(s, r, MessageSpec { id: 0, size, start: at(t) });
                        }
                    }
                }
            }
        }
        for (k, dport) in dports {
            connections[k].dport = Some(dport);
        }
    }
    Ok(connections)
}

fn load_sizes(class: &ClassSpec, spec: &str, context: &PlanContext) -> Result<FlowSizes, WorkloadError> {
    FlowSizes::load(spec, &context.scenario_dir, &context.builtin_dir)
        .map_err(|e| WorkloadError::Sizes { class: class.name.clone(), reason: e.to_string() })
}

/// A drawn size as a message's (which counts bytes in 32 bits).
fn flow_size(class: &ClassSpec, bytes: u64) -> Result<u32, WorkloadError> {
    u32::try_from(bytes).ok().filter(|&b| b < u32::MAX).ok_or_else(|| WorkloadError::Sizes {
        class: class.name.clone(),
        reason: format!("a flow of {bytes} bytes was drawn; a message must be smaller than 4 GiB"),
    })
}

/// Each sender's partner (by position in `senders`): a shuffle of the receivers, drawn again
/// until no sender is its own partner (a uniform draw among such permutations).
fn permutation(
    class: &ClassSpec,
    senders: &[usize],
    receivers: &[usize],
    seed: u64,
    c: usize,
) -> Result<Vec<usize>, WorkloadError> {
    let mut rng = stream(seed, c, usize::MAX);
    for _ in 0..10_000 {
        let mut shuffled = receivers.to_vec();
        for i in (1..shuffled.len()).rev() {
            shuffled.swap(i, rng.below(i + 1));
        }
        shuffled.truncate(senders.len());
        if senders.iter().zip(&shuffled).all(|(s, r)| s != r) {
            return Ok(shuffled);
        }
    }
    Err(WorkloadError::Invalid {
        class: class.name.clone(),
        reason: "no permutation sends every sender to a receiver other than itself".into(),
    })
}

fn validate(class: &ClassSpec, senders: &[usize], receivers: &[usize]) -> Result<(), WorkloadError> {
    let invalid = |reason: String| Err(WorkloadError::Invalid { class: class.name.clone(), reason });
    let missing =
        |key| Err(WorkloadError::Missing { class: class.name.clone(), key, kind: format!("{:?}", class.kind) });
    if class.priority > 7 {
        return invalid(format!("priority {} is not a PCP (0..=7)", class.priority));
    }
    if senders.is_empty() || receivers.is_empty() {
        return invalid("needs at least one sender and one receiver".into());
    }
    if receivers.iter().all(|r| senders == [*r]) {
        return invalid("its only sender is its only receiver".into());
    }
    // A Poisson sender draws each message's receiver among the others.
    if class.kind == Pattern::Poisson && senders.iter().any(|s| receivers.iter().all(|r| r == s)) {
        return invalid("a sender's only receiver is itself".into());
    }
    validate_flows(class)?;
    if class.kind != Pattern::Poisson {
        let generated = class.kind == Pattern::Flows;
        let poisson_only = [
            ("sizes", class.sizes.is_some() && !generated),
            ("load", class.load.is_some() && !generated),
            ("overload", class.overload),
            ("destinations", class.destinations != Destinations::AllToAll),
        ];
        if let Some((key, _)) = poisson_only.iter().find(|(_, set)| *set) {
            return invalid(format!("`{key}` applies to poisson classes only"));
        }
    }
    if class.size.is_some() && class.sizes.is_some() {
        return invalid("`size` and `sizes` exclude each other: one size, or a distribution".into());
    }
    if class.rate.is_some() && class.load.is_some() {
        return invalid("`rate` and `load` exclude each other: arrivals per second, or a load".into());
    }
    if let Some(load) = class.load {
        if !(load > 0.0 && load.is_finite()) {
            return invalid(format!("load {load} must be above 0 (a fraction of the link rate)"));
        }
        if load > 1.0 && !class.overload {
            return invalid(format!(
                "load {load} is above 1: the senders would offer more than their links carry (say `overload = true` to mean it)"
            ));
        }
    }
    if class.destinations == Destinations::Permutation && receivers.len() < senders.len() {
        return invalid(format!(
            "a permutation needs as many receivers as senders ({} for {})",
            receivers.len(),
            senders.len()
        ));
    }
    let needs_size = matches!(class.kind, Pattern::Query | Pattern::Burst)
        || (class.kind == Pattern::Poisson && class.sizes.is_none());
    if needs_size && class.size.is_none() {
        return missing("size");
    }
    if class.size.is_some_and(|s| s.bytes() >= u64::from(u32::MAX)) {
        return invalid("a message must be smaller than 4 GiB".into());
    }
    match class.kind {
        Pattern::Poisson if class.load.is_some() => {}
        Pattern::Poisson if class.rate.is_none() => {
            return invalid(
                "needs `rate` (arrivals per second per sender) or `load` (a fraction of the link rate)".into(),
            );
        }
        Pattern::Poisson | Pattern::Query => match class.rate {
            None => return missing("rate"),
            Some(rate) if !(rate > 0.0 && rate.is_finite()) => {
                return invalid(format!("rate {rate} must be a positive number of arrivals per second"));
            }
            Some(_) => {}
        },
        Pattern::Constant if class.bandwidth.is_none() => return missing("bandwidth"),
        _ if class.kind != Pattern::Constant && class.arrivals != Arrivals::Constant => {
            return invalid("`arrivals` applies to constant classes only".into());
        }
        Pattern::Burst if class.at.is_empty() => return missing("at"),
        _ => {}
    }
    if let Some(reason) = class.arrivals.invalid() {
        return invalid(format!("`arrivals`: {reason}"));
    }
    match class.fan_in {
        Some(_) if class.kind != Pattern::Query => return invalid("`fan_in` applies to query classes only".into()),
        Some(0) => return invalid("`fan_in` must be at least 1".into()),
        Some(n) if n > senders.len() => {
            return invalid(format!("`fan_in` {n} exceeds the {} senders", senders.len()));
        }
        _ => {}
    }
    Ok(())
}

/// Refuses `file`, `offset` and `incast` on other classes, and a `flows` class with neither
/// a file nor `sizes` and `load`, with both, or with keys that would mean nothing to it.
fn validate_flows(class: &ClassSpec) -> Result<(), WorkloadError> {
    let invalid = |reason: &str| Err(WorkloadError::Invalid { class: class.name.clone(), reason: reason.into() });
    if class.kind != Pattern::Flows {
        return match (&class.file, class.offset, class.incast) {
            (Some(_), ..) => invalid("`file` applies to flows classes only"),
            (_, Some(_), _) => invalid("`offset` applies to flows classes only"),
            (.., true) => invalid("`incast` applies to flows classes only"),
            _ => Ok(()),
        };
    }
    match (&class.file, class.sizes.is_some(), class.load.is_some()) {
        (Some(_), false, false) if class.incast => {
            return invalid("`incast` applies to generated flows (`sizes` and `load`), not to a file's");
        }
        (Some(_), false, false) | (None, true, true) => {}
        (Some(_), ..) => {
            return invalid("`file` and `sizes`/`load` exclude each other: a file's flows, or generated ones");
        }
        (None, false, false) => {
            return Err(WorkloadError::Missing { class: class.name.clone(), key: "file", kind: "Flows".into() });
        }
        (None, true, false) => return invalid("generated flows need `load` beside `sizes`"),
        (None, false, true) => return invalid("generated flows need `sizes` beside `load`"),
    }
    let set = [
        ("senders", !class.senders.is_empty()),
        ("receivers", !class.receivers.is_empty()),
        ("size", class.size.is_some()),
        ("rate", class.rate.is_some()),
        ("at", !class.at.is_empty()),
    ];
    match set.iter().find(|(_, set)| *set) {
        Some((key, _)) => invalid(&format!(
            "`{key}` means nothing to a flows class: the file names every flow's hosts, size and start"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<String> {
        (1..=9).map(|i| format!("h{i}")).collect()
    }

    fn context() -> PlanContext {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        PlanContext {
            speed: BitRate::gbps(10),
            scenario_dir: root.join("scenarios"),
            builtin_dir: root.join("workloads"),
            hpcc_hosts: None,
        }
    }

    fn class(text: &str) -> ClassSpec {
        toml::from_str(text).unwrap()
    }

    fn names(range: std::ops::RangeInclusive<u32>) -> String {
        range.map(|i| format!("\"h{i}\"")).collect::<Vec<_>>().join(", ")
    }

    #[test]
    fn a_sized_constant_flow_is_one_finite_message_with_its_group() {
        let f0 = class(
            "name = \"F0\"\nkind = \"constant\"\ngroup = \"uncongested\"\nbandwidth = \"40Mbps\"\nsize = \"10MB\"\npriority = 3\nsenders = [\"h1\"]\nreceivers = [\"h9\"]",
        );
        assert_eq!(f0.group.as_deref(), Some("uncongested"));
        let planned =
            plan(std::slice::from_ref(&f0), &hosts(), 1, Instant::ZERO, Duration::from_secs(3), &context()).unwrap();
        assert_eq!(planned.len(), 1);
        assert_eq!(planned[0].messages.len(), 1);
        assert_eq!(planned[0].messages[0].size, Some(10_000_000));
        assert_eq!(planned[0].rate, Some(pfcswitch_link::units::BitRate::mbps(40)));
    }

    #[test]
    fn random_arrivals_draw_a_stream_per_connection_from_the_seed() {
        let text = "name = \"cbr\"\nkind = \"constant\"\nbandwidth = \"625Mbps\"\npriority = 3\narrivals = { process = \"pareto\", shape = 1.5 }\nsenders = [\"h1\", \"h2\"]\nreceivers = [\"h9\"]";
        let run =
            |seed| plan(&[class(text)], &hosts(), seed, Instant::ZERO, Duration::from_secs(1), &context()).unwrap();
        let seeds = |planned: &[PlannedConnection]| planned.iter().map(|c| c.arrivals.seed()).collect::<Vec<_>>();
        let (one, again, two) = (run(1), run(1), run(2));
        assert!(
            matches!(one[0].arrivals, Arrivals::Pareto { on, off, .. } if on == off && on == Duration::from_millis(10))
        );
        assert_ne!(seeds(&one)[0], seeds(&one)[1], "each connection its own stream");
        assert_eq!(seeds(&one), seeds(&again), "reproducible");
        assert_ne!(seeds(&one), seeds(&two), "another seed, other arrivals");
        let long = class(
            "name = \"x\"\nkind = \"long\"\npriority = 0\narrivals = { process = \"bernoulli\" }\nsenders = [\"h1\"]\nreceivers = [\"h9\"]",
        );
        let error = plan(&[long], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert!(error.to_string().contains("`arrivals` applies to constant classes only"), "{error}");
    }

    #[test]
    fn poisson_arrivals_have_the_configured_rate_and_are_reproducible() {
        let short = class(&format!(
            "name = \"short\"\nkind = \"poisson\"\npriority = 5\nsize = \"64KB\"\nrate = 200.0\nsenders = [{}]\nreceivers = [{}]",
            names(1..=8),
            names(1..=8)
        ));
        let first = plan(std::slice::from_ref(&short), &hosts(), 7, Instant::ZERO, Duration::from_secs(10), &context())
            .unwrap();
        let again = plan(std::slice::from_ref(&short), &hosts(), 7, Instant::ZERO, Duration::from_secs(10), &context())
            .unwrap();
        let other = plan(std::slice::from_ref(&short), &hosts(), 8, Instant::ZERO, Duration::from_secs(10), &context())
            .unwrap();
        assert_eq!(first, again);
        assert_ne!(first, other);
        let messages: usize = first.iter().map(|c| c.messages.len()).sum();
        // 8 senders × 200/s × 10 s = 16000 expected; Poisson's σ is 126.
        assert!((15_500..16_500).contains(&messages), "{messages}");
        assert!(first.iter().all(|c| c.sender != c.receiver && c.priority == 5));
        assert!(first.iter().flat_map(|c| &c.messages).all(|m| m.size == Some(64_000)));
        for connection in &first {
            assert!(connection.messages.windows(2).all(|w| w[0].start <= w[1].start && w[1].id == w[0].id + 1));
        }
    }

    #[test]
    fn a_query_makes_every_other_sender_answer_at_once() {
        let query = class(&format!(
            "name = \"query\"\nkind = \"query\"\npriority = 3\nsize = \"16KB\"\nrate = 50.0\nsenders = [{}]\nreceivers = [\"h9\"]",
            names(1..=8)
        ));
        let connections = plan(&[query], &hosts(), 1, Instant::ZERO, Duration::from_secs(2), &context()).unwrap();
        assert_eq!(connections.len(), 8);
        let starts: Vec<Vec<Instant>> =
            connections.iter().map(|c| c.messages.iter().map(|m| m.start).collect()).collect();
        assert!(starts.windows(2).all(|w| w[0] == w[1]), "every responder answers every query");
        assert!((60..140).contains(&starts[0].len()), "{}", starts[0].len());
    }

    #[test]
    fn a_query_with_fan_in_draws_that_many_distinct_responders() {
        let text = format!(
            "name = \"query\"\nkind = \"query\"\npriority = 3\nsize = \"16KB\"\nrate = 50.0\nfan_in = 3\nsenders = [{}]\nreceivers = [\"h9\"]",
            names(1..=8)
        );
        let connections =
            plan(&[class(&text)], &hosts(), 1, Instant::ZERO, Duration::from_secs(2), &context()).unwrap();
        let mut per_query: std::collections::BTreeMap<Instant, Vec<usize>> = Default::default();
        for c in &connections {
            for m in &c.messages {
                per_query.entry(m.start).or_default().push(c.sender);
            }
        }
        assert!((60..140).contains(&per_query.len()), "{}", per_query.len());
        assert!(per_query.values().all(|s| s.len() == 3), "three distinct responders per query");
        assert_eq!(connections.len(), 8, "over many queries every sender gets picked");
        let too_many = text.replace("fan_in = 3", "fan_in = 9");
        let error =
            plan(&[class(&too_many)], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert_eq!(error.to_string(), "class `query`: `fan_in` 9 exceeds the 8 senders");
    }

    #[test]
    fn long_constant_and_burst_classes() {
        let classes = [
            class("name = \"bg\"\nkind = \"long\"\npriority = 0\nsenders = [\"h1\", \"h2\"]\nreceivers = [\"h3\"]"),
            class(
                "name = \"cbr\"\nkind = \"constant\"\npriority = 1\nbandwidth = \"30Mbps\"\nsenders = [\"h4\"]\nreceivers = [\"h3\"]",
            ),
            class(
                "name = \"b\"\nkind = \"burst\"\npriority = 3\nsize = \"1MB\"\nat = [\"100ms\", \"5s\"]\nsenders = [\"h5\", \"h6\"]\nreceivers = [\"h3\"]",
            ),
        ];
        let connections = plan(&classes, &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap();
        let summary: Vec<_> =
            connections.iter().map(|c| (c.class, c.sender, c.receiver, c.rate, c.messages.len())).collect();
        assert_eq!(
            summary,
            [
                (0, 0, 2, None, 1),
                (0, 1, 2, None, 1),
                (1, 3, 2, Some(BitRate::mbps(30)), 1),
                (2, 4, 2, None, 1),
                (2, 5, 2, None, 1)
            ]
        );
        assert_eq!(connections[0].messages[0].size, None);
        assert_eq!(connections[3].messages[0].start, Instant::ZERO + Duration::from_millis(100));
    }

    #[test]
    fn a_target_load_of_websearch_flows_is_what_the_senders_offer() {
        let web = class(&format!(
            "name = \"web\"\nkind = \"poisson\"\npriority = 3\nsizes = \"websearch\"\nload = 0.5\nsenders = [{}]\nreceivers = [{}]",
            names(1..=8),
            names(1..=9)
        ));
        let length = Duration::from_secs(20);
        let planned = plan(std::slice::from_ref(&web), &hosts(), 3, Instant::ZERO, length, &context()).unwrap();
        let flows: Vec<u64> =
            planned.iter().flat_map(|c| &c.messages).map(|m| u64::from(m.size.expect("sized"))).collect();
        // 8 senders × 20 s × 0.5 × 10 Gbit/s ÷ 8 ÷ 1.711 MB ≈ 58,400 flows. Their bytes are a
        // compound Poisson sum: relative σ = sqrt((1 + cv²) / flows) with WebSearch's cv of
        // 2.32, about 1 %, so 5 % is a margin of almost five σ.
        let offered = flows.iter().sum::<u64>() as f64 * 8.0 / (8.0 * 10e9 * length.as_secs_f64());
        println!("{} WebSearch flows offer {offered:.4} of the senders' links for a load of 0.5", flows.len());
        assert!((offered - 0.5).abs() < 0.025, "offered load {offered:.4} for 0.5 ({} flows)", flows.len());
        assert!(planned.iter().all(|c| c.messages.len() == 1), "every flow a connection of its own");
        assert!(flows.iter().any(|&f| f > 10_000_000) && flows.iter().any(|&f| f < 10_000), "the CDF's spread");
        let again = plan(std::slice::from_ref(&web), &hosts(), 3, Instant::ZERO, length, &context()).unwrap();
        assert_eq!(planned, again, "reproducible");
        // Another seed draws other flows, not the same ones handed to other senders.
        let total = |seed| -> u64 {
            let planned = plan(std::slice::from_ref(&web), &hosts(), seed, Instant::ZERO, length, &context()).unwrap();
            planned.iter().flat_map(|c| &c.messages).map(|m| u64::from(m.size.unwrap())).sum()
        };
        let totals: std::collections::BTreeSet<u64> = (1..=8).map(total).collect();
        assert_eq!(totals.len(), 8, "eight seeds, eight different totals: {totals:?}");
    }

    #[test]
    fn a_permutation_gives_every_sender_one_other_receiver_of_its_own() {
        let text = format!(
            "name = \"perm\"\nkind = \"poisson\"\npriority = 3\nsize = \"10KB\"\nrate = 100.0\ndestinations = \"permutation\"\nsenders = [{0}]\nreceivers = [{0}]",
            names(1..=9)
        );
        for seed in 1..=20 {
            let planned =
                plan(&[class(&text)], &hosts(), seed, Instant::ZERO, Duration::from_secs(1), &context()).unwrap();
            let pairs: std::collections::BTreeSet<(usize, usize)> =
                planned.iter().map(|c| (c.sender, c.receiver)).collect();
            let senders: std::collections::BTreeSet<usize> = pairs.iter().map(|p| p.0).collect();
            let receivers: std::collections::BTreeSet<usize> = pairs.iter().map(|p| p.1).collect();
            assert_eq!((pairs.len(), senders.len(), receivers.len()), (9, 9, 9), "seed {seed}: {pairs:?}");
            assert!(pairs.iter().all(|(s, r)| s != r));
        }
        let fewer = text.replace(&format!("receivers = [{}]", names(1..=9)), "receivers = [\"h1\", \"h2\"]");
        let error = plan(&[class(&fewer)], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert_eq!(error.to_string(), "class `perm`: a permutation needs as many receivers as senders (2 for 9)");
    }

    #[test]
    fn loads_and_distributions_are_checked() {
        let base =
            "name = \"w\"\nkind = \"poisson\"\npriority = 3\nsenders = [\"h1\", \"h2\"]\nreceivers = [\"h1\", \"h2\"]";
        let error = |extra: &str| {
            let spec = class(&format!("{base}\n{extra}"));
            plan(&[spec], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err().to_string()
        };
        assert_eq!(
            error("sizes = \"websearch\"\nload = 0.0"),
            "class `w`: load 0 must be above 0 (a fraction of the link rate)"
        );
        assert!(error("sizes = \"websearch\"\nload = 1.2").contains("load 1.2 is above 1"));
        assert!(
            error("sizes = \"websearch\"\nload = 0.5\nrate = 3.0").contains("`rate` and `load` exclude each other")
        );
        assert!(
            error("sizes = \"websearch\"\nsize = \"1KB\"\nload = 0.5")
                .contains("`size` and `sizes` exclude each other")
        );
        assert!(error("sizes = \"websearch\"").contains("needs `rate` (arrivals per second per sender) or `load`"));
        assert!(error("sizes = \"nosuch\"\nload = 0.5").starts_with("class `w`: `sizes`: `nosuch` is not a built-in"));
        let query = "name = \"q\"\nkind = \"query\"\npriority = 3\nsize = \"1KB\"\nrate = 1.0\nload = 0.5";
        let error = plan(&[class(query)], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert_eq!(error.to_string(), "class `q`: `load` applies to poisson classes only");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("mine.cdf"), "100 0\n50 0.5\n200 1\n").unwrap();
        let mine = class(&format!("{base}\nsizes = \"mine.cdf\"\nload = 0.5"));
        let context = PlanContext { scenario_dir: dir.path().to_path_buf(), ..context() };
        let error = plan(&[mine], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context).unwrap_err();
        assert!(error.to_string().ends_with("mine.cdf:2: sizes must not decrease (50 after 100)"), "{error}");
        let overload = class(&format!("{base}\nsizes = \"websearch\"\nload = 1.2\noverload = true"));
        let planned = plan(&[overload], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context).unwrap();
        assert!(!planned.is_empty());
    }

    #[test]
    fn mistakes_are_named() {
        let unknown = class("name = \"x\"\nkind = \"long\"\npriority = 0\nsenders = [\"h1\"]\nreceivers = [\"nope\"]");
        let error = plan(&[unknown], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert!(error.to_string().starts_with("class `x`: unknown host `nope` (hosts: h1, h2"), "{error}");
        let sizeless = class(
            "name = \"y\"\nkind = \"poisson\"\npriority = 0\nrate = 1.0\nsenders = [\"h1\"]\nreceivers = [\"h2\"]",
        );
        let error = plan(&[sizeless], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert_eq!(error.to_string(), "class `y`: `size` is required for kind Poisson");
        let lonely = class(
            "name = \"w\"\nkind = \"poisson\"\npriority = 0\nrate = 1.0\nsize = \"1KB\"\nsenders = [\"h1\", \"h2\"]\nreceivers = [\"h1\"]",
        );
        let error = plan(&[lonely], &hosts(), 1, Instant::ZERO, Duration::from_secs(1), &context()).unwrap_err();
        assert_eq!(error.to_string(), "class `w`: a sender's only receiver is itself");
        assert!(
            toml::from_str::<ClassSpec>(
                "name = \"z\"\nkind = \"long\"\npriority = 0\nsenders = []\nreceivers = []\ncolour = 1"
            )
            .is_err()
        );
    }
}
