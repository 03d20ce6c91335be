//! Workloads: traffic classes as the papers describe them, turned into connections and
//! messages for [`Transport`](pfcswitch_hosts::Transport)s, reproducibly from a seed.
//!
//! A class is one `[[class]]` table of a scenario file:
//!
//! | `kind`     | what it generates                                                        |
//! |------------|--------------------------------------------------------------------------|
//! | `long`     | one long-lived flow per (sender, receiver) pair, sending until the end   |
//! | `constant` | the same, paced at `bandwidth` with `arrivals` (constant, bernoulli, pareto: [`Arrivals`]) |
//! | `poisson`  | messages of `size` with Poisson arrivals at `rate` per second per sender, each to a receiver drawn uniformly |
//! | `query`    | queries at `rate` per second (Poisson); each makes `fan_in` senders drawn uniformly (default: every sender) answer `size` bytes to a receiver drawn uniformly, at once (incast) |
//! | `burst`    | at each time in `at`, every sender sends `size` to every receiver         |
//!
//! Every (class, sender, receiver) pair is one connection (a queue pair): its messages are
//! sent in arrival order. Each class and sender draws from its own stream derived from the
//! seed, so editing one class leaves the others' arrivals unchanged.
//!
//! A `[[storm]]` ([`StormSpec`]) makes a host behave like a NIC stuck in a PFC storm: it keeps
//! its switch port paused on one priority for a while ([`Storm`]).

use pfcswitch_hosts::{Arrivals, MessageSpec};
use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{BitRate, ByteSize, duration};
use pfcswitch_wire::{MacControlRepr, Pcp, PfcRepr};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Pattern {
    Long,
    Constant,
    Poisson,
    Query,
    Burst,
}

/// One `[[class]]` of a scenario.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClassSpec {
    pub name: String,
    pub kind: Pattern,
    /// 802.1Q priority (PCP) of its frames.
    pub priority: u8,
    /// Host names; omitted, every host of the topology (a fabric's 128 servers).
    #[serde(default)]
    pub senders: Vec<String>,
    #[serde(default)]
    pub receivers: Vec<String>,
    /// Message size (poisson, query: per sender's answer, burst). On `long` and `constant`
    /// it makes each flow one finite message, whose FCT is the flow's (OFC's Table I).
    #[serde(default)]
    pub size: Option<ByteSize>,
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
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum WorkloadError {
    #[error("class `{class}`: unknown host `{host}` (hosts: {known})")]
    UnknownHost { class: String, host: String, known: String },
    #[error("class `{class}`: `{key}` is required for kind {kind:?}")]
    Missing { class: String, key: &'static str, kind: Pattern },
    #[error("class `{class}`: {reason}")]
    Invalid { class: String, reason: String },
    #[error("storm of host `{host}`: {reason}")]
    Storm { host: String, reason: String },
}

fn stream(seed: u64, class: usize, sender: usize) -> Rng {
    let mut mix = Rng::new(seed ^ ((class as u64) << 32) ^ sender as u64);
    Rng::new(mix.next_u64())
}

/// The connections and messages of `classes` over `hosts` for a run of `length` starting at
/// `epoch`, drawn from `seed`.
pub fn plan(
    classes: &[ClassSpec],
    hosts: &[String],
    seed: u64,
    epoch: Instant,
    length: Duration,
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
        let mut add = |sender: usize, receiver: usize, message: MessageSpec| {
            let k = *by_ends.entry((c, sender, receiver)).or_insert_with(|| {
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
                });
                connections.len() - 1
            });
            let messages = &mut connections[k].messages;
            messages.push(MessageSpec { id: messages.len() as u32, ..message });
        };
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
                let rate = class.rate.expect("validated");
                for &s in &senders {
                    let mut rng = stream(seed, c, s);
                    let targets: Vec<usize> = receivers.iter().copied().filter(|&r| r != s).collect();
                    let mut t = class.start + rng.exponential(rate);
                    while t < stop {
                        let r = targets[rng.below(targets.len())];
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
    }
    Ok(connections)
}

fn validate(class: &ClassSpec, senders: &[usize], receivers: &[usize]) -> Result<(), WorkloadError> {
    let invalid = |reason: String| Err(WorkloadError::Invalid { class: class.name.clone(), reason });
    let missing = |key| Err(WorkloadError::Missing { class: class.name.clone(), key, kind: class.kind });
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
    let needs_size = matches!(class.kind, Pattern::Poisson | Pattern::Query | Pattern::Burst);
    if needs_size && class.size.is_none() {
        return missing("size");
    }
    if class.size.is_some_and(|s| s.bytes() >= u64::from(u32::MAX)) {
        return invalid("a message must be smaller than 4 GiB".into());
    }
    match class.kind {
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

/// One `[[storm]]` of a scenario: from `start` (from the run's start) for `duration`, `host`
/// sends PFC XOFF frames for `priority` as a broken NIC does (see [`Storm`]).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StormSpec {
    pub host: String,
    pub priority: u8,
    #[serde(with = "duration")]
    pub start: Duration,
    #[serde(with = "duration")]
    pub duration: Duration,
    /// Pause time of each frame (default 65535, the most a frame can ask for).
    #[serde(default = "max_quanta")]
    pub quanta: u16,
}

fn max_quanta() -> u16 {
    u16::MAX
}

impl StormSpec {
    /// Checks the storm against the run's hosts and link speed; returns the host's index and
    /// the storm its NIC makes.
    pub fn resolve(&self, hosts: &[String], speed: BitRate) -> Result<(usize, Storm), WorkloadError> {
        let invalid = |reason: String| WorkloadError::Storm { host: self.host.clone(), reason };
        let index = hosts
            .iter()
            .position(|h| *h == self.host)
            .ok_or_else(|| invalid(format!("no such host (hosts: {})", hosts.join(", "))))?;
        let storm = Storm::new(self.priority, self.quanta, speed).map_err(|e| invalid(e.to_string()))?;
        if self.duration.is_zero() {
            return Err(invalid("`duration` must be greater than zero".into()));
        }
        Ok((index, storm))
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum StormError {
    #[error("priority {0} is not a PCP (0..=7)")]
    Priority(u8),
    #[error("quanta must be at least 1 (0 would be an XON, which a storm never sends)")]
    ZeroQuanta,
}

/// A PFC storm as a broken NIC makes one: XOFF for one priority, re-sent well before the
/// pause expires, never an XON. The peer's queue stays paused as long as the storm lasts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Storm {
    frame: PfcRepr,
    interval: Duration,
}

impl Storm {
    /// Frames are never closer than this: a storm must not cost its sender a core.
    pub const MIN_INTERVAL: Duration = Duration::from_micros(100);

    /// A storm of `quanta` on `priority` towards a link of `speed`: one frame every quarter of
    /// the pause it asks for, so a late or lost frame never lets the pause lapse.
    pub fn new(priority: u8, quanta: u16, speed: BitRate) -> Result<Storm, StormError> {
        let pcp = Pcp::new(priority).ok_or(StormError::Priority(priority))?;
        if quanta == 0 {
            return Err(StormError::ZeroQuanta);
        }
        let interval = (speed.pause_duration(quanta) / 4).max(Self::MIN_INTERVAL);
        Ok(Storm { frame: PfcRepr::default().with_class(pcp, quanta), interval })
    }

    /// The PFC frame the storm repeats.
    pub fn frame(&self) -> MacControlRepr {
        MacControlRepr::Pfc(self.frame)
    }

    pub fn interval(&self) -> Duration {
        self.interval
    }

    /// When the storm sends its frames if it starts at `start` and lasts `length`.
    pub fn times(&self, start: Instant, length: Duration) -> impl Iterator<Item = Instant> + use<> {
        let (interval, end) = (self.interval, start + length);
        (0u32..).map(move |k| start + interval * k).take_while(move |&at| at < end)
    }

    /// The first send time at or after `now` (a sender that woke late skips the frames it
    /// missed rather than bursting them).
    pub fn next_after(&self, start: Instant, now: Instant) -> Instant {
        let elapsed = now.saturating_duration_since(start).as_nanos();
        let interval = self.interval.as_nanos();
        start + Duration::from_nanos(u64::try_from(elapsed.div_ceil(interval) * interval).unwrap_or(u64::MAX))
    }
}

/// Serde for a list of spans ("100ms").
mod durations {
    use pfcswitch_link::units::parse_duration;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(spans: &[Duration], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(spans.iter().map(|d| pfcswitch_link::units::format_duration(*d)))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<Duration>, D::Error> {
        Vec::<String>::deserialize(deserializer)?.iter().map(|t| parse_duration(t).map_err(D::Error::custom)).collect()
    }
}

mod optional_duration {
    use pfcswitch_link::units::parse_duration;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(span: &Option<Duration>, serializer: S) -> Result<S::Ok, S::Error> {
        match span {
            Some(d) => serializer.serialize_str(&pfcswitch_link::units::format_duration(*d)),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
        Option::<String>::deserialize(deserializer)?.map(|t| parse_duration(&t).map_err(D::Error::custom)).transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<String> {
        (1..=9).map(|i| format!("h{i}")).collect()
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
        let planned = plan(std::slice::from_ref(&f0), &hosts(), 1, Instant::ZERO, Duration::from_secs(3)).unwrap();
        assert_eq!(planned.len(), 1);
        assert_eq!(planned[0].messages.len(), 1);
        assert_eq!(planned[0].messages[0].size, Some(10_000_000));
        assert_eq!(planned[0].rate, Some(pfcswitch_link::units::BitRate::mbps(40)));
    }

    #[test]
    fn random_arrivals_draw_a_stream_per_connection_from_the_seed() {
        let text = "name = \"cbr\"\nkind = \"constant\"\nbandwidth = \"625Mbps\"\npriority = 3\narrivals = { process = \"pareto\", shape = 1.5 }\nsenders = [\"h1\", \"h2\"]\nreceivers = [\"h9\"]";
        let run = |seed| plan(&[class(text)], &hosts(), seed, Instant::ZERO, Duration::from_secs(1)).unwrap();
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
        let error = plan(&[long], &hosts(), 1, Instant::ZERO, Duration::from_secs(1)).unwrap_err();
        assert!(error.to_string().contains("`arrivals` applies to constant classes only"), "{error}");
    }

    #[test]
    fn poisson_arrivals_have_the_configured_rate_and_are_reproducible() {
        let short = class(&format!(
            "name = \"short\"\nkind = \"poisson\"\npriority = 5\nsize = \"64KB\"\nrate = 200.0\nsenders = [{}]\nreceivers = [{}]",
            names(1..=8),
            names(1..=8)
        ));
        let first = plan(std::slice::from_ref(&short), &hosts(), 7, Instant::ZERO, Duration::from_secs(10)).unwrap();
        let again = plan(std::slice::from_ref(&short), &hosts(), 7, Instant::ZERO, Duration::from_secs(10)).unwrap();
        let other = plan(std::slice::from_ref(&short), &hosts(), 8, Instant::ZERO, Duration::from_secs(10)).unwrap();
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
        let connections = plan(&[query], &hosts(), 1, Instant::ZERO, Duration::from_secs(2)).unwrap();
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
        let connections = plan(&[class(&text)], &hosts(), 1, Instant::ZERO, Duration::from_secs(2)).unwrap();
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
        let error = plan(&[class(&too_many)], &hosts(), 1, Instant::ZERO, Duration::from_secs(1)).unwrap_err();
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
        let connections = plan(&classes, &hosts(), 1, Instant::ZERO, Duration::from_secs(1)).unwrap();
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
    fn a_storm_repeats_xoff_at_a_quarter_of_its_pause_and_never_resumes() {
        let storm = Storm::new(3, u16::MAX, BitRate::mbps(100)).unwrap();
        // 65535 quanta × 512 bit at 100 Mbit/s = 335.5 ms.
        assert_eq!(storm.interval(), BitRate::mbps(100).pause_duration(u16::MAX) / 4);
        let MacControlRepr::Pfc(frame) = storm.frame() else { panic!("a PFC frame") };
        assert_eq!(frame.classes().collect::<Vec<_>>(), [(Pcp::new(3).unwrap(), u16::MAX)]);
        let start = Instant::ZERO + Duration::from_secs(1);
        let times: Vec<Instant> = storm.times(start, Duration::from_secs(2)).collect();
        assert_eq!(times.len(), 24, "2 s / 83.9 ms");
        assert_eq!(times[0], start);
        assert!(times.windows(2).all(|w| w[1] - w[0] == storm.interval()));
        assert!(*times.last().unwrap() < start + Duration::from_secs(2));
        assert_eq!(storm.next_after(start, start), start);
        assert_eq!(storm.next_after(start, start + Duration::from_nanos(1)), times[1]);
        assert_eq!(storm.next_after(start, times[5]), times[5]);
        let fast = Storm::new(0, 1, BitRate::gbps(100)).unwrap();
        assert_eq!(fast.interval(), Storm::MIN_INTERVAL);
        assert_eq!(Storm::new(3, 0, BitRate::gbps(1)), Err(StormError::ZeroQuanta));
        assert_eq!(Storm::new(8, 1, BitRate::gbps(1)), Err(StormError::Priority(8)));
        let spec: StormSpec = toml::from_str("host = \"h4\"\npriority = 3\nstart = \"1s\"\nduration = \"2s\"").unwrap();
        assert_eq!(spec.quanta, u16::MAX);
        assert_eq!(spec.resolve(&hosts(), BitRate::mbps(100)), Ok((3, storm)));
        let error = |spec: StormSpec| spec.resolve(&hosts(), BitRate::mbps(100)).unwrap_err().to_string();
        let stranger = StormSpec { host: "h99".into(), ..spec.clone() };
        assert!(error(stranger).starts_with("storm of host `h99`: no such host"));
        assert!(error(StormSpec { quanta: 0, ..spec.clone() }).contains("quanta must be at least 1"));
        assert!(error(StormSpec { duration: Duration::ZERO, ..spec }).contains("`duration` must be greater than zero"));
    }

    #[test]
    fn mistakes_are_named() {
        let unknown = class("name = \"x\"\nkind = \"long\"\npriority = 0\nsenders = [\"h1\"]\nreceivers = [\"nope\"]");
        let error = plan(&[unknown], &hosts(), 1, Instant::ZERO, Duration::from_secs(1)).unwrap_err();
        assert!(error.to_string().starts_with("class `x`: unknown host `nope` (hosts: h1, h2"), "{error}");
        let sizeless = class(
            "name = \"y\"\nkind = \"poisson\"\npriority = 0\nrate = 1.0\nsenders = [\"h1\"]\nreceivers = [\"h2\"]",
        );
        let error = plan(&[sizeless], &hosts(), 1, Instant::ZERO, Duration::from_secs(1)).unwrap_err();
        assert_eq!(error.to_string(), "class `y`: `size` is required for kind Poisson");
        let lonely = class(
            "name = \"w\"\nkind = \"poisson\"\npriority = 0\nrate = 1.0\nsize = \"1KB\"\nsenders = [\"h1\", \"h2\"]\nreceivers = [\"h1\"]",
        );
        let error = plan(&[lonely], &hosts(), 1, Instant::ZERO, Duration::from_secs(1)).unwrap_err();
        assert_eq!(error.to_string(), "class `w`: a sender's only receiver is itself");
        assert!(
            toml::from_str::<ClassSpec>(
                "name = \"z\"\nkind = \"long\"\npriority = 0\nsenders = []\nreceivers = []\ncolour = 1"
            )
            .is_err()
        );
    }
}
