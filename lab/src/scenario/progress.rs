//! A long simulated run says how far it is: every [`PERIOD`] of wall time, one line on stderr
//! with the simulated time against the workload's end, events per second since the last line
//! and an estimated finish; and it stops, writing what it has, on SIGINT or SIGTERM.

use super::interrupt;
use pfcswitch_link::time::Instant;
use pfcswitch_sim::SimStats;
use std::ops::ControlFlow;
use std::time::Duration;

/// What [`pfcswitch_sim::Network::run_until_or`] asks whether to go on.
pub(super) type Check<'a> = dyn FnMut(Instant, &SimStats) -> ControlFlow<()> + 'a;

/// Wall time between two progress lines (and before the first: a short run prints none).
const PERIOD: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub(super) struct Progress {
    epoch: Instant,
    end: Instant,
    started: std::time::Instant,
    last: std::time::Instant,
    last_events: u64,
    interrupted: bool,
}

impl Progress {
    /// Catches SIGINT and SIGTERM from now on; the workload runs from `epoch` to `end`.
    pub(super) fn start(epoch: Instant, end: Instant) -> Progress {
        interrupt::catch();
        Progress::new(epoch, end)
    }

    fn new(epoch: Instant, end: Instant) -> Progress {
        let now = std::time::Instant::now();
        Progress { epoch, end, started: now, last: now, last_events: 0, interrupted: false }
    }

    /// Whether SIGINT or SIGTERM stopped the run.
    pub(super) fn interrupted(&self) -> bool {
        self.interrupted
    }

    /// The check for `run_until_or`: prints a line when one is due, breaks when interrupted.
    pub(super) fn check(&mut self, now: Instant, stats: &SimStats) -> ControlFlow<()> {
        if interrupt::requested() {
            self.interrupted = true;
            return ControlFlow::Break(());
        }
        let wall = std::time::Instant::now();
        if wall.duration_since(self.last) >= PERIOD {
            eprintln!("{}", self.line(now, stats.events, wall));
            self.last = wall;
            self.last_events = stats.events;
        }
        ControlFlow::Continue(())
    }

    fn line(&self, now: Instant, events: u64, wall: std::time::Instant) -> String {
        let ms = |at: Instant| at.as_nanos().saturating_sub(self.epoch.as_nanos()) as f64 / 1e6;
        let rate = (events - self.last_events) as f64 / wall.duration_since(self.last).as_secs_f64();
        let head = format!("simulated {:.3} of {:.3} ms, {:.2} M events/s", ms(now), ms(self.end), rate / 1e6);
        if now >= self.end {
            return format!("{head}, draining (unfinished messages run until the drain ends)");
        }
        // Simulated time advances at the average pace so far: the recent pace swings with bursts.
        let elapsed = wall.duration_since(self.started).as_secs_f64();
        let simulated = ms(now);
        if simulated <= 0.0 {
            return head;
        }
        let left = elapsed * (ms(self.end) - simulated) / simulated;
        format!("{head}, {elapsed:.0} s so far, about {} to the workload's end", minutes(left))
    }
}

/// `75` → "1 min 15 s".
fn minutes(seconds: f64) -> String {
    let seconds = seconds.round() as u64;
    match seconds / 60 {
        0 => format!("{seconds} s"),
        m => format!("{m} min {} s", seconds % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_estimate_scales_the_pace_so_far_to_what_is_left() {
        let epoch = Instant::from_nanos(10_000_000);
        let mut progress = Progress::new(epoch, epoch + Duration::from_millis(100));
        let now = std::time::Instant::now();
        progress.started = now - Duration::from_secs(30);
        progress.last = now - Duration::from_secs(10);
        progress.last_events = 5_000_000;
        let line = progress.line(epoch + Duration::from_millis(25), 25_000_000, now);
        assert!(line.starts_with("simulated 25.000 of 100.000 ms, 2.00 M events/s, 30 s so far"), "{line}");
        assert!(line.ends_with("about 1 min 30 s to the workload's end"), "{line}");
        let draining = progress.line(epoch + Duration::from_millis(120), 25_000_000, now);
        assert!(draining.contains("draining"), "{draining}");
    }
}
