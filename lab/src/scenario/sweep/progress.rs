//! A sweep's progress on stderr: points done of the total, the percentage, and an ETA from the
//! mean time of the points run so far. On a terminal one line is redrawn (`\r`); otherwise
//! (a log, a batch job) each finished point prints a line of its own.

use std::io::{IsTerminal, Write};
use std::time::Duration;

#[derive(Debug)]
pub struct Progress {
    total: usize,
    /// Finished, failed or skipped.
    done: usize,
    failed: usize,
    /// Points run (not skipped) and the time they took together.
    ran: u32,
    busy: Duration,
    /// Points that run at once.
    jobs: usize,
    tty: bool,
}

impl Progress {
    /// `skipped` of the `total` points are done already.
    pub fn new(total: usize, skipped: usize, jobs: usize) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let progress = Progress { total, done: skipped, failed: 0, ran: 0, busy: Duration::ZERO, jobs, tty };
        if tty {
            progress.draw("");
        }
        progress
    }

    /// A point finished after `took`, or failed (`ok` false).
    pub fn finished(&mut self, label: &str, ok: bool, took: Duration) {
        self.done += 1;
        self.ran += 1;
        self.busy += took;
        if !ok {
            self.failed += 1;
        }
        let outcome = if ok { "done" } else { "FAILED" };
        self.draw(&format!("{label}: {outcome} in {:.1} s", took.as_secs_f64()));
    }

    /// Prints `text` (a failed point's log) on lines of its own, above the redrawn line.
    pub fn note(&self, text: &str) {
        if self.tty {
            eprint!("\r\x1b[K");
        }
        eprintln!("{text}");
    }

    /// Ends the redrawn line.
    pub fn end(&self) {
        if self.tty {
            eprintln!();
        }
    }

    fn draw(&self, last: &str) {
        let percent = (100 * self.done).checked_div(self.total).unwrap_or(100);
        let failed = if self.failed > 0 { format!(", {} failed", self.failed) } else { String::new() };
        let eta = self.eta().map_or("-".into(), format_duration);
        let last = if last.is_empty() { String::new() } else { format!(" · {last}") };
        let line = format!("[{}/{} {percent} %{failed}, ETA {eta}]{last}", self.done, self.total);
        if self.tty {
            eprint!("\r{line}\x1b[K");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }

    /// The points left, `jobs` at a time, at the mean time of those run so far.
    fn eta(&self) -> Option<Duration> {
        let left = self.total - self.done;
        if left == 0 {
            return Some(Duration::ZERO);
        }
        let mean = self.busy.checked_div(self.ran)?;
        Some(mean * left.div_ceil(self.jobs.max(1)) as u32)
    }
}

/// `42 s`, `3 min 05 s`, `2 h 07 min`.
fn format_duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {:02} s", s / 60, s % 60),
        _ => format!("{} h {:02} min", s / 3600, s / 60 % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eta_is_the_mean_point_time_times_the_rounds_left() {
        let mut p = Progress { total: 10, done: 2, failed: 0, ran: 0, busy: Duration::ZERO, jobs: 2, tty: false };
        assert_eq!(p.eta(), None);
        p.finished("a", true, Duration::from_secs(4));
        p.finished("b", false, Duration::from_secs(6));
        // 6 left, 2 at a time, 5 s each.
        assert_eq!(p.eta(), Some(Duration::from_secs(15)));
        assert_eq!((p.done, p.failed), (4, 1));
        assert_eq!(format_duration(Duration::from_secs(185)), "3 min 05 s");
        assert_eq!(format_duration(Duration::from_secs(7620)), "2 h 07 min");
    }
}
