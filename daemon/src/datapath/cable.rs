//! Emulated cables (`pfcswitchd --cable PORT:DELAY:LOSS:out|both`): a port's frames wait out
//! a propagation delay and are lost with a probability, as a topology file's links say
//! (docs/topology.md). The cable sits where the wire does, after the core: a frame has left
//! the switch's queues when it enters, and PFC frames cross the same cable, so a pause
//! reaches the peer late by the delay, as on a long cable. netem cannot do this: AF_XDP
//! transmissions never pass the qdisc layer.
//!
//! A port facing a switch emulates what it sends (the other switch emulates the other way);
//! a port facing a host emulates both ways, as hosts send through the kernel unaided.
//! Losses are drawn from a generator seeded by the switch's and the port's names, so a run
//! loses the same frames of the same sequence each time, and each is counted per direction.

use pfcswitch_link::rng::Rng;
use pfcswitch_link::time::Instant;
use pfcswitch_link::units::{format_duration, parse_duration};
use std::collections::VecDeque;
use std::str::FromStr;
use std::time::Duration;
use xdpilone::xdp::XdpDesc;

/// One `--cable` argument.
#[derive(Clone, Debug, PartialEq)]
pub struct CableSpec {
    pub port: String,
    pub delay: Duration,
    /// Probability in [0, 1) that a frame is lost, per direction.
    pub loss: f64,
    /// Both directions (a port facing a host), else only what the port sends.
    pub both_ways: bool,
}

impl FromStr for CableSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<CableSpec, String> {
        let usage = || format!("`{text}`: expected PORT:DELAY:LOSS:out|both, as p1:2ms:0.01:both");
        let fields: Vec<&str> = text.split(':').collect();
        let [port, delay, loss, ways] = fields[..] else { return Err(usage()) };
        let delay = parse_duration(delay).map_err(|e| format!("`{text}`: delay: {e}"))?;
        let loss: f64 = loss.parse().map_err(|_| format!("`{text}`: loss `{loss}` is not a number"))?;
        if !(0.0..1.0).contains(&loss) {
            return Err(format!("`{text}`: loss {loss} is outside [0, 1)"));
        }
        if delay > Duration::from_secs(1) {
            return Err(format!("`{text}`: a delay above 1 s"));
        }
        let both_ways = match ways {
            "both" => true,
            "out" => false,
            _ => return Err(usage()),
        };
        Ok(CableSpec { port: port.to_string(), delay, loss, both_ways })
    }
}

impl std::fmt::Display for CableSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ways = if self.both_ways { "both" } else { "out" };
        write!(f, "{}:{}:{}:{ways}", self.port, format_duration(self.delay), self.loss)
    }
}

/// What a frame met on the cable.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// On the cable until its delay has passed.
    Carried,
    Lost,
}

/// One direction of a cable: the frames on it, each with when it comes off, and how many
/// it lost.
#[derive(Debug, Default)]
pub struct Line {
    frames: VecDeque<(Instant, XdpDesc)>,
    pub lost: u64,
}

impl Line {
    /// The next frame whose delay has passed by `now`.
    fn arrived(&mut self, now: Instant) -> Option<XdpDesc> {
        self.frames.front().is_some_and(|&(at, _)| at <= now).then(|| self.frames.pop_front().unwrap().1)
    }

    /// Counts what is on the line as lost and returns it.
    fn cut(&mut self) -> Vec<XdpDesc> {
        self.lost += self.frames.len() as u64;
        self.frames.drain(..).map(|(_, desc)| desc).collect()
    }
}

/// One port's cable: a line each way.
#[derive(Debug)]
pub struct Cable {
    pub spec: CableSpec,
    rng: Rng,
    /// What the switch sends.
    pub outgoing: Line,
    /// What the peer sends (only when [`Cable::delays_incoming`]).
    pub incoming: Line,
}

impl Cable {
    pub fn new(spec: CableSpec, switch: &str) -> Cable {
        // FNV-1a of "switch:port": a seed that depends on nothing but the names.
        let seed = format!("{switch}:{}", spec.port)
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3));
        Cable { spec, rng: Rng::new(seed), outgoing: Line::default(), incoming: Line::default() }
    }

    /// Puts a frame on the `outgoing` line or the incoming one at `now`, or loses it.
    fn carry(&mut self, outgoing: bool, now: Instant, desc: XdpDesc) -> Fate {
        let lost = self.spec.loss > 0.0 && self.rng.fraction() <= self.spec.loss;
        let line = if outgoing { &mut self.outgoing } else { &mut self.incoming };
        if lost {
            line.lost += 1;
            return Fate::Lost;
        }
        line.frames.push_back((now + self.spec.delay, desc));
        Fate::Carried
    }

    /// A frame the switch sends at `now`.
    pub fn send(&mut self, now: Instant, desc: XdpDesc) -> Fate {
        self.carry(true, now, desc)
    }

    /// Whether frames received on this port cross the cable first.
    pub fn delays_incoming(&self) -> bool {
        self.spec.both_ways
    }

    /// A frame the peer sent, received at `now` (only when [`Cable::delays_incoming`]).
    pub fn receive(&mut self, now: Instant, desc: XdpDesc) -> Fate {
        self.carry(false, now, desc)
    }

    /// The next outgoing frame whose delay has passed by `now`.
    pub fn arrived_out(&mut self, now: Instant) -> Option<XdpDesc> {
        self.outgoing.arrived(now)
    }

    /// The next incoming frame whose delay has passed by `now`.
    pub fn arrived_in(&mut self, now: Instant) -> Option<XdpDesc> {
        self.incoming.arrived(now)
    }

    /// When the next frame comes off the cable, either way.
    pub fn next_arrival(&self) -> Option<Instant> {
        self.outgoing.frames.front().into_iter().chain(self.incoming.frames.front()).map(|&(at, _)| at).min()
    }

    /// The link went down: what was on the cable is lost and counted. Returns the frames, to
    /// hand back: (outgoing, incoming).
    pub fn cut(&mut self) -> (Vec<XdpDesc>, Vec<XdpDesc>) {
        (self.outgoing.cut(), self.incoming.cut())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc(addr: u64) -> XdpDesc {
        XdpDesc { addr, len: 64, options: 0 }
    }

    #[test]
    fn specs_parse_print_and_refuse_with_the_reason() {
        let spec: CableSpec = "p1:2ms:0.01:both".parse().unwrap();
        assert_eq!(spec, CableSpec { port: "p1".into(), delay: Duration::from_millis(2), loss: 0.01, both_ways: true });
        assert_eq!(spec.to_string().parse::<CableSpec>().unwrap(), spec);
        assert!("p1:2ms:1:out".parse::<CableSpec>().unwrap_err().contains("outside [0, 1)"));
        assert!("p1:2ms:0:sideways".parse::<CableSpec>().unwrap_err().contains("PORT:DELAY:LOSS:out|both"));
        assert!("p1:soon:0:out".parse::<CableSpec>().unwrap_err().contains("delay"));
    }

    #[test]
    fn frames_come_off_after_the_delay_in_order_and_a_cut_counts_what_was_on_it() {
        let spec = CableSpec { port: "p1".into(), delay: Duration::from_millis(1), loss: 0.0, both_ways: true };
        let mut cable = Cable::new(spec, "sw1");
        let t0 = Instant::ZERO;
        assert_eq!(cable.send(t0, desc(1)), Fate::Carried);
        assert_eq!(cable.send(t0 + Duration::from_micros(10), desc(2)), Fate::Carried);
        assert_eq!(cable.receive(t0, desc(3)), Fate::Carried);
        assert_eq!(cable.next_arrival(), Some(t0 + Duration::from_millis(1)));
        assert!(cable.arrived_out(t0 + Duration::from_micros(999)).is_none());
        assert_eq!(cable.arrived_out(t0 + Duration::from_millis(1)).map(|d| d.addr), Some(1));
        assert!(cable.arrived_out(t0 + Duration::from_millis(1)).is_none(), "the second is 10 µs behind");
        assert_eq!(cable.arrived_in(t0 + Duration::from_millis(1)).map(|d| d.addr), Some(3));
        let (out, incoming) = cable.cut();
        assert_eq!((out[0].addr, incoming.len(), cable.outgoing.lost, cable.incoming.lost), (2, 0, 1, 0));
    }

    #[test]
    fn loss_is_near_its_probability_and_the_same_for_the_same_names() {
        let spec = CableSpec { port: "p2".into(), delay: Duration::ZERO, loss: 0.2, both_ways: false };
        let lost = |switch: &str| {
            let mut cable = Cable::new(spec.clone(), switch);
            (0..10_000).map(|i| cable.send(Instant::ZERO, desc(i))).filter(|&f| f == Fate::Lost).count()
        };
        assert_eq!(lost("sw1"), lost("sw1"), "seeded by the names");
        assert!((1_800..=2_200).contains(&lost("sw1")), "{}", lost("sw1"));
    }
}
