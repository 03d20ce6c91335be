//! The PFC watchdog, with the semantics of SONiC's pfcwd (detection time, restoration time,
//! action), on the caller's clock.
//!
//! Per (port, lossless priority): an egress queue that holds frames and stays paused by its
//! peer, without transmitting, for `detection_time` is *stormed*. Action `drop` discards its
//! frames and those that arrive for it or on it, and ignores the peer's PFC for the priority
//! (so the storm does not spread back upstream); `forward` ignores the peer's PFC and
//! transmits; `alert` only counts. A stormed queue is *restored* once the peer has sent no PFC
//! pausing the priority for `restoration_time`. The other direction: a port that asserts XOFF
//! towards its peer continuously for longer than `pausing_peer_limit` is reported.
//!
//! The switch tells the watchdog what happens (PFC received, frame queued or sent) and asks
//! it for its next deadline; every decision is made in [`Watchdog::handle_timeout`], so the
//! detection and restoration instants are exact on virtual time.

use crate::config::{PfcwdAction, PfcwdConfig};
use pfcswitch_link::time::Instant;
use std::time::Duration;

/// What the watchdog counted for one (port, priority).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PfcwdCounters {
    pub storms_detected: u64,
    pub storms_restored: u64,
    /// Frames discarded from or on their way to the stormed egress queue (`drop`).
    pub tx_dropped: u64,
    /// Frames received on the stormed port and priority and discarded (`drop`).
    pub rx_dropped: u64,
    /// Times the port asserted XOFF towards its peer longer than `pausing_peer_limit`.
    pub long_pausing: u64,
}

#[derive(Clone, Copy, Debug, Default)]
struct QueueWatch {
    /// Since when the queue has held frames, paused by its peer, without sending one.
    stalled_since: Option<Instant>,
    stormed: bool,
    /// The last PFC frame from the peer that paused this priority.
    last_pause_rx: Instant,
    /// The current XOFF episode has been reported as too long.
    long_pausing_reported: bool,
    counters: PfcwdCounters,
}

/// What a timeout decided for one queue, for the switch to carry out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcwdEvent {
    Stormed { port: usize, priority: usize, action: PfcwdAction },
    Restored { port: usize, priority: usize },
}

#[derive(Clone, Debug)]
pub struct Watchdog {
    config: PfcwdConfig,
    lossless: u8,
    queues: Vec<[QueueWatch; 8]>,
}

impl Watchdog {
    pub fn new(ports: usize, lossless: u8, config: &PfcwdConfig) -> Watchdog {
        Watchdog { config: config.clone(), lossless, queues: vec![[QueueWatch::default(); 8]; ports] }
    }

    /// Whether the watchdog watches `priority`'s queues at all (enabled, and the priority
    /// lossless): on any other queue its per-frame bookkeeping has nothing to do.
    pub fn watches(&self, priority: usize) -> bool {
        self.config.enabled && self.lossless & (1 << priority) != 0
    }

    /// A new `[pfcwd]` or lossless set (a reload). Returns the queues it restores: all of
    /// them when the watchdog is turned off, and those whose priority is no longer lossless.
    pub fn reconfigure(&mut self, lossless: u8, config: &PfcwdConfig, restored: &mut Vec<PfcwdEvent>) {
        self.config = config.clone();
        self.lossless = lossless;
        for (port, queues) in self.queues.iter_mut().enumerate() {
            for (priority, queue) in queues.iter_mut().enumerate() {
                let watched = config.enabled && lossless & (1 << priority) != 0;
                if queue.stormed && !watched {
                    queue.stormed = false;
                    queue.counters.storms_restored += 1;
                    restored.push(PfcwdEvent::Restored { port, priority });
                }
                if !watched {
                    queue.stalled_since = None;
                }
            }
        }
    }

    /// Whether the peer's PFC for (port, priority) is ignored (a stormed queue under `drop`
    /// or `forward`).
    pub fn ignores_pfc(&self, port: usize, priority: usize) -> bool {
        let queue = &self.queues[port][priority];
        queue.stormed && self.config.action != PfcwdAction::Alert
    }

    /// Whether frames for or from (port, priority) are discarded (a stormed queue under `drop`).
    pub fn drops(&self, port: usize, priority: usize) -> bool {
        // Only a watched queue storms: asking `watches` first spares the per-frame paths
        // (three calls a frame) the look at the queue.
        self.watches(priority) && self.config.action == PfcwdAction::Drop && self.queues[port][priority].stormed
    }

    pub fn is_stormed(&self, port: usize, priority: usize) -> bool {
        self.queues[port][priority].stormed
    }

    /// The peer sent PFC for `priority` with a pause time (`pausing`) or a resume.
    pub fn pfc_received(&mut self, now: Instant, port: usize, priority: usize, pausing: bool) {
        let queue = &mut self.queues[port][priority];
        if pausing {
            queue.last_pause_rx = now;
        } else {
            queue.stalled_since = None;
        }
    }

    /// The egress queue's state after an event: `stuck` when it holds frames and its peer
    /// pauses it. Starts the detection clock, or stops it.
    pub fn queue_state(&mut self, now: Instant, port: usize, priority: usize, stuck: bool) {
        if !self.watches(priority) {
            return;
        }
        let queue = &mut self.queues[port][priority];
        if !stuck {
            queue.stalled_since = None;
        } else if !queue.stormed && queue.stalled_since.is_none() {
            queue.stalled_since = Some(now);
        }
    }

    /// The queue sent a frame: it is not stuck.
    pub fn sent(&mut self, port: usize, priority: usize) {
        // Only a watched queue's clock runs (`queue_state`).
        if self.watches(priority) {
            self.queues[port][priority].stalled_since = None;
        }
    }

    pub fn count_tx_drop(&mut self, port: usize, priority: usize) {
        self.queues[port][priority].counters.tx_dropped += 1;
    }

    pub fn count_rx_drop(&mut self, port: usize, priority: usize) {
        self.queues[port][priority].counters.rx_dropped += 1;
    }

    /// The earliest detection, restoration or long-XOFF deadline. `asserting_since(port, p)`
    /// is when the port started asserting XOFF on p, if it does.
    pub fn next_timeout(&self, asserting_since: impl Fn(usize, usize) -> Option<Instant>) -> Option<Instant> {
        if !self.config.enabled {
            return None;
        }
        let mut next: Option<Instant> = None;
        for (port, queues) in self.queues.iter().enumerate() {
            for (priority, queue) in queues.iter().enumerate().filter(|&(p, _)| self.watches(p)) {
                let deadlines = [
                    queue.stalled_since.filter(|_| !queue.stormed).map(|t| t + self.config.detection_time),
                    queue.stormed.then(|| queue.last_pause_rx + self.config.restoration_time),
                    asserting_since(port, priority)
                        .filter(|_| !queue.long_pausing_reported)
                        .map(|t| t + self.config.pausing_peer_limit),
                ];
                for at in deadlines.into_iter().flatten() {
                    next = Some(next.map_or(at, |n| n.min(at)));
                }
            }
        }
        next
    }

    /// Decides what is due at `now`. `stuck(port, p)` re-checks a queue's state (frames held
    /// and paused by the peer) at `now`, as pause timers expire silently.
    pub fn handle_timeout(
        &mut self,
        now: Instant,
        stuck: impl Fn(usize, usize) -> bool,
        asserting_since: impl Fn(usize, usize) -> Option<Instant>,
        events: &mut impl Extend<PfcwdEvent>,
    ) {
        if !self.config.enabled {
            return;
        }
        let config = &self.config;
        for (port, queues) in self.queues.iter_mut().enumerate() {
            for (priority, queue) in queues.iter_mut().enumerate() {
                if self.lossless & (1 << priority) == 0 {
                    continue;
                }
                if let Some(since) = queue.stalled_since.filter(|_| !queue.stormed) {
                    if !stuck(port, priority) {
                        queue.stalled_since = None;
                    } else if now >= since + config.detection_time {
                        queue.stalled_since = None;
                        queue.stormed = true;
                        queue.counters.storms_detected += 1;
                        events.extend([PfcwdEvent::Stormed { port, priority, action: config.action }]);
                    }
                } else if queue.stormed && now >= queue.last_pause_rx + config.restoration_time {
                    queue.stormed = false;
                    queue.counters.storms_restored += 1;
                    queue.stalled_since = stuck(port, priority).then_some(now);
                    events.extend([PfcwdEvent::Restored { port, priority }]);
                }
                match asserting_since(port, priority) {
                    Some(since) if now >= since + config.pausing_peer_limit && !queue.long_pausing_reported => {
                        queue.long_pausing_reported = true;
                        queue.counters.long_pausing += 1;
                    }
                    None => queue.long_pausing_reported = false,
                    Some(_) => {}
                }
            }
        }
    }

    pub fn counters(&self, port: usize, priority: usize) -> PfcwdCounters {
        self.queues[port][priority].counters
    }

    pub fn config(&self) -> &PfcwdConfig {
        &self.config
    }

    pub fn reset_counters(&mut self) {
        for queue in self.queues.iter_mut().flatten() {
            queue.counters = PfcwdCounters::default();
        }
    }
}

/// How long (port, priority) has been asserting XOFF at `now` (zero when it does not).
pub fn pausing_for(now: Instant, since: Option<Instant>) -> Duration {
    since.map_or(Duration::ZERO, |since| now - since)
}
