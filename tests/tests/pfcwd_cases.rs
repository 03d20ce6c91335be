//! The PFC watchdog's known failure cases from SONiC's bug reports, each on the datapath with
//! the storm source (`pfcswitch traffic storm`, pfc_gen's options): star3, the watchdog on
//! `drop` (detection and restoration 200 ms), h2 sending to h1 on priority 3 at 20 Mbit/s,
//! h1 storming. docs/pfc-watchdog.md, "Failure cases", says how each was checked to fail.

use pfcswitch_switch::report::{PriorityReport, Snapshot};
use pfcswitch_tests::topology::{Topology, binary, serial, star3_config};
use pfcswitch_tests::wait_until;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const WATCHDOG: &str =
    "\n[pfcwd]\nenabled = true\naction = \"drop\"\ndetection_time = \"200ms\"\nrestoration_time = \"200ms\"\n";

/// star3 with the watchdog, `lossless` priorities, and h2 sending to h1 on each of them.
struct Bed {
    topology: Topology,
    senders: Vec<Child>,
    _dir: tempfile::TempDir,
}

impl Bed {
    fn up(lossless: &[u8]) -> Bed {
        Bed::with(lossless, "")
    }

    /// With `extra` appended to the configuration.
    fn with(lossless: &[u8], extra: &str) -> Bed {
        let dir = tempfile::tempdir().unwrap();
        let list = lossless.iter().map(u8::to_string).collect::<Vec<_>>().join(", ");
        let config = star3_config(dir.path(), |config| {
            config.replace("lossless = [3]", &format!("lossless = [{list}]")) + WATCHDOG + extra
        });
        let topology = Topology::up("star3", Some(&config));
        let senders = lossless
            .iter()
            .map(|p| {
                topology
                    .command("h2", binary("pfcswitch"))
                    .args(["traffic", "send", "--iface", "eth0", "--speed", "100Mbps", "--rate", "20Mbps"])
                    .args(["--dst", "02:00:00:00:00:01", "--pcp", &p.to_string(), "--size", "1000"])
                    .args(["--flow", &p.to_string(), "--duration", "20s"])
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("pfcswitch traffic send")
            })
            .collect();
        let bed = Bed { topology, senders, _dir: dir };
        for &p in lossless {
            wait_until("h2's frames reach h1", Duration::from_secs(5), || bed.queue(0, p).tx_frames > 20);
        }
        bed
    }

    fn snapshot(&self) -> Snapshot {
        self.topology.snapshot("sw1")
    }

    /// Port `port` (0 = p1, h1's) and priority `p`.
    fn queue(&self, port: usize, p: u8) -> PriorityReport {
        self.snapshot().ports[port].priorities[usize::from(p)].clone()
    }

    /// A storm from h1 with pfc_gen's options, running until stopped or done.
    fn storm(&self, args: &[&str]) -> Storm {
        let child = self
            .topology
            .command("h1", binary("pfcswitch"))
            .args(["traffic", "storm", "-i", "eth0", "--speed", "100Mbps"])
            .args(args)
            .stdout(Stdio::null())
            .spawn()
            .expect("pfcswitch traffic storm");
        Storm(Some(child))
    }

    fn wait_stormed(&self, p: u8) -> Instant {
        wait_until("the watchdog detects the storm", Duration::from_secs(3), || self.queue(0, p).pfcwd.stormed);
        Instant::now()
    }
}

impl Drop for Bed {
    fn drop(&mut self) {
        for sender in &mut self.senders {
            let _ = sender.kill();
            let _ = sender.wait();
        }
    }
}

/// A storm that a failing test does not leave running (it would outlive its namespace).
struct Storm(Option<Child>);

impl Storm {
    fn running(&mut self) -> bool {
        self.0.as_mut().is_some_and(|child| child.try_wait().unwrap().is_none())
    }
}

impl Drop for Storm {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn stop(mut storm: Storm) {
    let mut child = storm.0.take().expect("a storm");
    // SAFETY: signalling our own child; the storm stops and reports on SIGTERM.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    assert!(child.wait().unwrap().success());
}

/// sonic-swss #4581: the peer turns its XOFF storm into XON frames. Resume frames are not
/// pauses: the queue is restored the restoration time after the last XOFF, while the XONs
/// still arrive.
#[test]
fn a_storm_turned_into_xon_frames_is_restored_while_they_still_arrive() {
    let _serial = serial();
    let bed = Bed::up(&[3]);
    let storm = bed.storm(&["-p", "8", "-t", "65535"]);
    bed.wait_stormed(3);
    stop(storm);
    let xoff_ended = Instant::now();
    // pfc_gen's `-t 0`: resume frames, every 100 µs for 2 s.
    let mut xon = bed.storm(&["-p", "8", "-t", "0", "-n", "20000"]);
    // The last XOFF's 65535 quanta (335 ms) still run, then nothing pauses the queue.
    wait_until("the queue is restored", Duration::from_secs(1), || !bed.queue(0, 3).pfcwd.stormed);
    let restored_after = xoff_ended.elapsed();
    assert!(xon.running(), "restored while the XON frames still arrive");
    assert!(restored_after < Duration::from_millis(600), "restored {restored_after:?} after the last XOFF");
    drop(xon);
    let counters = bed.queue(0, 3).pfcwd.counters;
    assert_eq!((counters.storms_detected, counters.storms_restored), (1, 1));
}

/// sonic-buildimage #29203: every priority stormed at once (bitmap 255). Each lossless queue is
/// detected and each is restored when the storm ends.
#[test]
fn every_priority_stormed_at_once_is_detected_and_restored_per_queue() {
    let _serial = serial();
    let bed = Bed::up(&[3, 4]);
    let storm = bed.storm(&["-p", "255", "-t", "65535"]);
    bed.wait_stormed(3);
    bed.wait_stormed(4);
    stop(storm);
    for p in [3, 4] {
        wait_until("each queue is restored", Duration::from_secs(2), || !bed.queue(0, p).pfcwd.stormed);
        let counters = bed.queue(0, p).pfcwd.counters;
        assert_eq!((counters.storms_detected, counters.storms_restored), (1, 1), "priority {p}");
    }
    for p in [0, 1, 2, 5, 6, 7] {
        assert_eq!(bed.queue(0, p).pfcwd.counters.storms_detected, 0, "priority {p} is not watched");
    }
    let flowing = bed.queue(0, 3).tx_frames;
    wait_until("priority 3 flows to h1 again", Duration::from_secs(2), || bed.queue(0, 3).tx_frames > flowing + 20);
}

/// sonic-mgmt #14205: a storm, then h1's link flaps. The queue comes back restored and
/// carrying traffic; the flap is not a second storm.
#[test]
fn a_storm_followed_by_a_link_flap_ends_restored_and_forwarding() {
    let _serial = serial();
    let bed = Bed::up(&[3]);
    let storm = bed.storm(&["-p", "8", "-t", "65535"]);
    bed.wait_stormed(3);
    stop(storm);
    bed.topology.run("h1", "ip", &["link", "set", "eth0", "down"]);
    wait_until("sw1 sees p1 down", Duration::from_secs(2), || bed.snapshot().ports[0].link == "down");
    bed.topology.run("h1", "ip", &["link", "set", "eth0", "up"]);
    wait_until("sw1 sees p1 up", Duration::from_secs(2), || bed.snapshot().ports[0].link == "up");
    wait_until("the queue is restored", Duration::from_secs(2), || !bed.queue(0, 3).pfcwd.stormed);
    let flowing = bed.queue(0, 3).tx_frames;
    wait_until("priority 3 flows to h1 again", Duration::from_secs(3), || bed.queue(0, 3).tx_frames > flowing + 20);
    std::thread::sleep(Duration::from_millis(500));
    let counters = bed.queue(0, 3).pfcwd.counters;
    assert_eq!((counters.storms_detected, counters.storms_restored), (1, 1), "one storm, one restoration");
}

/// sonic-buildimage #6062: a "storm" on a port whose link is down. What arrives for the port
/// (h1's address is static on p1, so h2's frames keep heading there) is dropped as
/// `link_down`, nothing waits in its queue, and no storm is detected.
#[test]
fn no_storm_is_detected_on_a_port_that_is_down() {
    let _serial = serial();
    let bed = Bed::with(&[3], "\n[fdb]\nstatic = [{ mac = \"02:00:00:00:00:01\", port = \"p1\" }]\n");
    bed.topology.run("sw1", "ip", &["link", "set", "p1", "down"]);
    wait_until("sw1 sees p1 down", Duration::from_secs(2), || bed.snapshot().ports[0].link == "down");
    let storm = bed.storm(&["-p", "8", "-t", "65535"]);
    std::thread::sleep(Duration::from_millis(800));
    stop(storm);
    let queue = bed.queue(0, 3);
    assert!(queue.drops["link_down"] > 0, "h2's frames for the down port are dropped as link_down");
    assert_eq!(queue.egress_bytes, 0, "nothing waits for the down port");
    assert_eq!((queue.pfcwd.stormed, queue.pfcwd.counters.storms_detected), (false, 0), "{:?}", queue.pfcwd);
    bed.topology.run("sw1", "ip", &["link", "set", "p1", "up"]);
}

/// sonic-buildimage #19067 and #5821: under `drop`, the watchdog's drop counters are the
/// queue's drops, exactly, and not zero. #23444: no PAUSE goes upstream for the stormed
/// priority once the queue drops.
#[test]
fn under_drop_the_watchdogs_counters_are_the_queues_drops_and_no_pause_goes_upstream() {
    let _serial = serial();
    let bed = Bed::up(&[3]);
    let storm = bed.storm(&["-p", "8", "-t", "65535"]);
    bed.wait_stormed(3);
    std::thread::sleep(Duration::from_millis(100));
    let upstream = bed.queue(1, 3);
    std::thread::sleep(Duration::from_millis(600));
    let later = bed.queue(1, 3);
    assert_eq!(later.pfc_tx, upstream.pfc_tx, "no PFC frame to h2 while p1's queue is stormed");
    assert!(!later.pausing_peer, "p2 does not assert XOFF towards h2");
    stop(storm);
    wait_until("the queue is restored", Duration::from_secs(2), || !bed.queue(0, 3).pfcwd.stormed);
    let snapshot = bed.topology.assert_ledgers_balance("sw1");
    let stormed = &snapshot.ports[0].priorities[3];
    let counters = stormed.pfcwd.counters;
    assert!(counters.tx_dropped > 0, "h2's frames for the stormed queue were dropped");
    assert_eq!(
        stormed.drops["pfcwd"],
        counters.tx_dropped + counters.rx_dropped,
        "the watchdog's drops are the queue's pfcwd drops: {counters:?}"
    );
    let lossless_drops: u64 = stormed.drops.values().sum();
    assert_eq!(lossless_drops, stormed.drops["pfcwd"], "and its only drops: {:?}", stormed.drops);
}
