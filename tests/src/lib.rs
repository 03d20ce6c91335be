//! Shared machinery of pfcswitch's integration tests: network namespaces that clean up after
//! themselves, raw frames on veth interfaces, and the independent decoders (tshark, scapy)
//! used as oracles.
//!
//! Tests that need root call [`require_root`] and fail loudly without it: CI runs as root,
//! and a silently skipped test proves nothing.

pub mod capture;
pub mod netns;
pub mod oracle;
pub mod scenario;
pub mod topology;

/// xorshift64*: deterministic random frames without a dependency.
#[derive(Debug)]
pub struct Rng(pub u64);

impl Rng {
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A locally administered unicast address.
    pub fn mac(&mut self) -> pfcswitch_wire::EthernetAddress {
        let bytes = self.next().to_be_bytes();
        pfcswitch_wire::EthernetAddress([0x02, bytes[0], bytes[1], bytes[2], bytes[3], bytes[4]])
    }
}

/// Panics unless the process runs as root (network namespaces, XDP and AF_PACKET need it).
pub fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "this test needs root (network namespaces, XDP, raw sockets): run the README's test command as root"
    );
}

/// Polls `condition` every 20 ms until it holds, failing the test after `timeout`: for what
/// the kernel or another process does in its own time (detaching a program, starting traffic).
pub fn wait_until(what: &str, timeout: std::time::Duration, mut condition: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + timeout;
    while !condition() {
        assert!(std::time::Instant::now() < deadline, "timed out after {timeout:?} waiting until {what}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Reads `read` every 20 ms until its value has not changed for `quiet`, failing the test
/// after `timeout`; returns that value. For counters that settle once a process has worked
/// through what it was given. `quiet` must outlast the longest time the process can lose its
/// CPU on a busy VM (tens of milliseconds there), or a process that has not run yet looks
/// done.
pub fn wait_until_settled<T: PartialEq>(
    what: &str,
    timeout: std::time::Duration,
    quiet: std::time::Duration,
    mut read: impl FnMut() -> T,
) -> T {
    let deadline = std::time::Instant::now() + timeout;
    let (mut value, mut since) = (read(), std::time::Instant::now());
    loop {
        std::thread::sleep(std::time::Duration::from_millis(20));
        let now = read();
        if now != value {
            (value, since) = (now, std::time::Instant::now());
        } else if since.elapsed() >= quiet {
            return value;
        }
        assert!(std::time::Instant::now() < deadline, "timed out after {timeout:?} waiting until {what}");
    }
}
