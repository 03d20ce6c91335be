//! The real clock, and waiting for the core's next deadline precisely.
//!
//! ppoll() alone oversleeps a short timeout by tens of microseconds even with a 1 ns timer
//! slack (DESIGN.md, "Stack facts"). So the datapath sleeps in ppoll until `spin` before the
//! deadline and spins the rest, checking its RX rings; the egress shapers carry a burst
//! credit, so wake-up jitter never costs long-run rate. Every timer's wake-up lateness is
//! recorded, and reported as p50/p99/max. The datapath's back-off on a TX ring the kernel
//! left full is no timer: it sleeps without spinning and is not recorded.

use pfcswitch_link::time::Instant;
use std::os::fd::RawFd;
use std::time::Duration;

/// CLOCK_MONOTONIC as core [`Instant`]s since the daemon started.
#[derive(Debug)]
pub struct Clock {
    /// CLOCK_MONOTONIC at this clock's zero.
    origin: Duration,
}

impl Clock {
    /// A clock that starts at zero now.
    pub fn new() -> Clock {
        Clock { origin: monotonic() }
    }

    /// CLOCK_MONOTONIC itself: the same instants in every process and network namespace of
    /// the machine, so endpoints can start a workload at one agreed time.
    pub fn system() -> Clock {
        Clock { origin: Duration::ZERO }
    }

    pub fn now(&self) -> Instant {
        Instant::from_nanos(u64::try_from((monotonic() - self.origin).as_nanos()).unwrap_or(u64::MAX))
    }
}

fn monotonic() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we own (vDSO, no syscall).
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

/// Sets this thread's timer slack to 1 ns (the default 50 µs would blur every timeout).
pub fn tighten_timer_slack() {
    // SAFETY: prctl with an integer argument.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0u64, 0u64, 0u64) };
}

/// Puts this thread under SCHED_FIFO at `priority` (1–99): it then runs whenever it is
/// runnable, ahead of every ordinary task, so its reaction time (PFC's response time) no
/// longer depends on what else the machine runs. Threads it starts later inherit it.
pub fn run_realtime(priority: u8) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: i32::from(priority) };
    // SAFETY: pid 0 is the calling thread; `param` is a valid sched_param.
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Sets this thread's nice value (Linux applies it per thread): a lower value weighs more
/// with the ordinary scheduler, so the thread waits less for the CPU among busy tasks.
pub fn set_nice(nice: i8) -> std::io::Result<()> {
    // SAFETY: setpriority with who = 0, the calling thread on Linux.
    if unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, i32::from(nice)) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Lateness of timed wake-ups in 1 µs buckets up to 10 ms.
#[derive(Debug)]
pub struct Lateness {
    buckets: Vec<u64>,
    count: u64,
    sum: Duration,
    max: Duration,
}

impl Lateness {
    const BUCKETS: usize = 10_001;

    pub fn new() -> Lateness {
        Lateness { buckets: vec![0; Self::BUCKETS], count: 0, sum: Duration::ZERO, max: Duration::ZERO }
    }

    pub fn record(&mut self, late: Duration) {
        let micros = (late.as_micros() as usize).min(Self::BUCKETS - 1);
        self.buckets[micros] += 1;
        self.count += 1;
        self.sum += late;
        self.max = self.max.max(late);
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn sum(&self) -> Duration {
        self.sum
    }

    pub fn max(&self) -> Duration {
        self.max
    }

    /// The `q` quantile (0–1) in microseconds, at bucket resolution.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (micros, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return micros as f64;
            }
        }
        (Self::BUCKETS - 1) as f64
    }
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness::new()
    }
}

/// Waits until `deadline` or until one of `fds` is readable (or `has_work()` while
/// spinning). Records the lateness of deadline wake-ups in `lateness`, if given: a back-off
/// is no timer whose lateness anyone was promised.
pub fn wait(
    clock: &Clock,
    deadline: Option<Instant>,
    spin: Duration,
    fds: &mut [libc::pollfd],
    has_work: impl Fn() -> bool,
    lateness: Option<&mut Lateness>,
) {
    let sleep = deadline.map(|d| d.saturating_duration_since(clock.now()).saturating_sub(spin));
    if sleep.is_none_or(|s| !s.is_zero()) && ppoll(fds, sleep) {
        return;
    }
    let Some(deadline) = deadline else { return };
    loop {
        let now = clock.now();
        if now >= deadline {
            if let Some(lateness) = lateness {
                lateness.record(now - deadline);
            }
            return;
        }
        if has_work() {
            return;
        }
        std::hint::spin_loop();
    }
}

/// Blocks until a descriptor is readable (true) or `timeout` passes (false).
fn ppoll(fds: &mut [libc::pollfd], timeout: Option<Duration>) -> bool {
    let spec = timeout
        .map(|t| libc::timespec { tv_sec: t.as_secs() as libc::time_t, tv_nsec: t.subsec_nanos() as libc::c_long });
    let spec_ptr = spec.as_ref().map_or(std::ptr::null(), |s| s as *const libc::timespec);
    // SAFETY: `fds` is a valid array of pollfd; the timespec outlives the call.
    let ready = unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, spec_ptr, std::ptr::null()) };
    ready > 0
}

/// A pollfd waiting for input on `fd`.
pub fn readable(fd: RawFd) -> libc::pollfd {
    libc::pollfd { fd, events: libc::POLLIN, revents: 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_at_microsecond_resolution() {
        let mut lateness = Lateness::new();
        for micros in 1..=100 {
            lateness.record(Duration::from_micros(micros));
        }
        assert_eq!(lateness.quantile_us(0.5), 50.0);
        assert_eq!(lateness.quantile_us(0.99), 99.0);
        assert_eq!(lateness.max(), Duration::from_micros(100));
        lateness.record(Duration::from_secs(1));
        assert_eq!(lateness.quantile_us(1.0), 10_000.0, "overflow bucket");
    }

    #[test]
    fn waits_for_the_deadline_with_microsecond_accuracy() {
        tighten_timer_slack();
        let clock = Clock::new();
        let mut lateness = Lateness::new();
        for _ in 0..50 {
            let deadline = clock.now() + Duration::from_micros(300);
            wait(&clock, Some(deadline), Duration::from_micros(100), &mut [], || false, Some(&mut lateness));
            assert!(clock.now() >= deadline, "returned before the deadline");
        }
        assert_eq!(lateness.count(), 50, "every wake-up was a deadline's");
        // Spinning makes the wake-up exact to the clock read; allow scheduling noise.
        assert!(lateness.quantile_us(0.5) <= 5.0, "p50 {} µs", lateness.quantile_us(0.5));
    }
}
