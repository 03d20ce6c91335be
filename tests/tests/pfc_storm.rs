//! PFC storms: `pfcswitch traffic storm` on the wire, and the `pfc-storm` scenario under each
//! PFC watchdog mode, on virtual time and on the datapath.

use pfcswitch_tests::capture::Capture;
use pfcswitch_tests::netns::Netns;
use pfcswitch_tests::oracle::tshark_fields;
use pfcswitch_tests::scenario::{pfcswitch_scenario, results};
use pfcswitch_tests::topology::{binary, serial};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// 65535 quanta at 100 Mbit/s, and the storm's period: a quarter of it.
const PAUSE_100M: f64 = 65535.0 * 512.0 / 100e6;

fn storm(netns: &Netns, args: &[&str]) -> Command {
    let mut command = Command::new("ip");
    command.args(["netns", "exec", netns.name()]).arg(binary("pfcswitch")).args(["-j", "traffic", "storm"]).args(args);
    command
}

fn report(output: &Output) -> Value {
    assert!(output.status.success(), "storm failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("storm -j prints JSON")
}

/// The storm on the wire, decoded by tshark: only PFC XOFF frames for its class with the
/// full pause, one every quarter pause, as many as it says, never an XON; it stops at the
/// end of --duration or on SIGTERM, and refuses an XON storm.
#[test]
fn a_storm_repeats_xoff_for_its_class_and_never_resumes() {
    let _serial = serial();
    pfcswitch_tests::require_root();
    let netns = Netns::new("stm-tool");
    netns.veth_pair("stma", "stmb");
    let mac = String::from_utf8(netns.run("cat", &["/sys/class/net/stma/address"]).stdout).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let capture = Capture::start_in(&netns, "stmb", "", &dir.path().join("storm.pcap"));
    let args = ["--iface", "stma", "--class", "3", "--duration", "1s", "--speed", "100Mbps"];
    let timed = report(&storm(&netns, &args).output().unwrap());
    let pcap = capture.stop();

    let fields = ["frame.time_epoch", "eth.src", "eth.dst", "macc.opcode", "macc.cbfc.enbv", "macc.cbfc.pause_time.c3"];
    let rows = tshark_fields(&pcap, &fields, &[]);
    // 1 s / 83.9 ms: frames at 0, 1, ..., 11 periods.
    assert_eq!(timed["frames"], 12, "{timed}");
    assert_eq!(rows.len(), 12, "every frame the storm counted is on the wire, and nothing else: {rows:?}");
    for row in &rows {
        assert_eq!(row[1..], [mac.trim(), "01:80:c2:00:00:01", "0x0101", "0x0008", "65535"], "{row:?}");
    }
    let times: Vec<f64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    let period = PAUSE_100M / 4.0;
    for gap in times.windows(2).map(|w| w[1] - w[0]) {
        // A late wake-up delays one frame, never the pause: the next is due at its own time.
        assert!(
            gap > period - 0.02 && gap < period + 0.02,
            "frames {:.1} ms apart, period {:.1} ms",
            gap * 1e3,
            period * 1e3
        );
    }
    assert!((timed["interval_seconds"].as_f64().unwrap() - period).abs() < 1e-6);

    let endless =
        storm(&netns, &["--iface", "stma", "--class", "5", "--quanta", "1000"]).stdout(Stdio::piped()).spawn();
    let endless = endless.unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(endless.id() as i32, libc::SIGTERM) };
    let stopped = report(&endless.wait_with_output().unwrap());
    // Without --speed, veth's 10 Gbit/s: 1000 quanta = 51.2 µs, so the 100 µs floor applies.
    assert_eq!(stopped["interval_seconds"], 0.0001, "{stopped}");
    let frames = stopped["frames"].as_u64().unwrap();
    assert!((100..=3100).contains(&frames), "SIGTERM ended it after ~300 ms: {stopped}");

    let xon = storm(&netns, &["--iface", "stma", "--class", "3", "--quanta", "0"]).output().unwrap();
    assert!(!xon.status.success());
    let message = String::from_utf8_lossy(&xon.stderr);
    assert!(message.contains("quanta must be at least 1"), "{message}");
}

/// The goodput windows of the flows of one class.
fn windows<'a>(results: &'a Value, class: &str) -> Vec<&'a Value> {
    let flows = results["summary"]["storm"]["flows"].as_array().expect("storm windows in results.json");
    let found: Vec<&Value> = flows.iter().filter(|f| f["class"] == class).collect();
    assert!(!found.is_empty(), "no flow of class {class}");
    found
}

fn rate(flow: &Value, window: &str) -> f64 {
    flow[format!("{window}_mbps")].as_f64().unwrap_or_else(|| panic!("{window} rate of {flow}"))
}

const INNOCENT: [&str; 2] = ["innocent-same-path", "innocent-upstream"];

/// Each innocent flow's goodput during the storm over its goodput before it.
fn innocent_shares(results: &Value) -> Vec<f64> {
    INNOCENT.iter().flat_map(|c| windows(results, c)).map(|f| rate(f, "storm") / rate(f, "before")).collect()
}

fn run_results(parent: &Path, mode: &str, suffix: &str) -> Value {
    results(&parent.join(format!("pfc-pfcwd-{mode}-seed1{suffix}")))
}

/// `pfc-storm` on virtual time under each watchdog mode (issue 10): without the watchdog (and
/// with `alert`) the pause spreads and the innocent flows stall, losslessly; `drop` isolates
/// the stormed queue, the innocent flows keep ≥ 90 % of their rate and traffic to the storming
/// host resumes after the storm; `forward` keeps the innocent flows going and sends to the
/// storming host anyway.
#[test]
fn pfc_storm_on_virtual_time_under_each_watchdog_mode() {
    let dir = tempfile::tempdir().unwrap();
    let table = pfcswitch_scenario(&["compare", "pfc-storm", "--pfcwd", "off,alert,drop,forward", "--sim"], dir.path());
    println!("{table}");
    for header in ["PFCWD OFF", "PFCWD ALERT", "PFCWD DROP", "PFCWD FORWARD"] {
        assert!(table.contains(header), "the table names the watchdog mode: {header}");
    }
    let [off, alert, drop, forward] = ["off", "alert", "drop", "forward"].map(|m| run_results(dir.path(), m, "-sim"));
    for (mode, results) in [("off", &off), ("alert", &alert), ("drop", &drop), ("forward", &forward)] {
        assert_eq!(results["pfcwd"], mode);
        assert!(results["summary"]["storm_frames"].as_u64().unwrap() >= 30, "h9 stormed: {}", results["storms"]);
        for flow in INNOCENT.iter().flat_map(|c| windows(results, c)) {
            assert!(rate(flow, "before") > 20.0, "{mode}: 25 Mbit/s on the wire before the storm: {flow}");
        }
    }
    for (mode, results) in [("off", &off), ("alert", &alert)] {
        for share in innocent_shares(results) {
            assert!(share < 0.1, "{mode}: the pause spread upstream and stalled the innocent flows ({share:.2})");
        }
        assert_eq!(results["summary"]["lossless_drops"], 0, "{mode}: lossless");
        let to_storming = windows(results, "to-storming-host")[0];
        assert!(rate(to_storming, "storm") < 1.0, "{mode}: nothing reaches the storming host: {to_storming}");
    }
    let (off_shares, drop_shares) = (innocent_shares(&off), innocent_shares(&drop));
    for (share, off_share) in drop_shares.iter().zip(&off_shares) {
        assert!(share >= &0.9, "drop: the innocent flows keep ≥ 90 % of their rate ({share:.3})");
        assert!(share > off_share, "drop beats off: {share:.3} vs {off_share:.3}");
    }
    assert!(drop["summary"]["lossless_drops"].as_u64().unwrap() > 0, "drop: the stormed queue's frames are dropped");
    let to_storming = windows(&drop, "to-storming-host")[0];
    assert!(
        rate(to_storming, "after") > 0.5 * rate(to_storming, "before"),
        "drop: the queue is restored after the storm and h1 -> h9 resumes: {to_storming}"
    );
    for share in innocent_shares(&forward) {
        assert!(share >= 0.9, "forward: the innocent flows keep going ({share:.3})");
    }
    let to_storming = windows(&forward, "to-storming-host")[0];
    assert!(
        rate(to_storming, "storm") > 0.5 * rate(to_storming, "before"),
        "forward: the switch sends to the storming host anyway: {to_storming}"
    );
}

/// `pfc-storm` on the datapath under `off` and `drop`: the same contrast, with margins for a
/// busy two-core machine (the ≥ 90 % figure is the README table's, not asserted here).
#[test]
fn pfc_storm_on_the_datapath_without_and_with_the_watchdog() {
    let _serial = serial();
    pfcswitch_tests::require_root();
    let dir = tempfile::tempdir().unwrap();
    let table = pfcswitch_scenario(&["compare", "pfc-storm", "--pfcwd", "off,drop"], dir.path());
    println!("{table}");
    let [off, drop] = ["off", "drop"].map(|m| run_results(dir.path(), m, ""));
    for results in [&off, &drop] {
        assert!(results["summary"]["storm_frames"].as_u64().unwrap() >= 30, "h9 stormed: {}", results["storms"]);
    }
    for share in innocent_shares(&off) {
        assert!(share < 0.25, "off: the innocent flows stalled during the storm ({share:.2})");
    }
    assert_eq!(off["summary"]["lossless_drops"], 0, "off: lossless");
    for (share, off_share) in innocent_shares(&drop).iter().zip(innocent_shares(&off)) {
        assert!(*share > 0.6 && *share > 3.0 * off_share, "drop isolates the storm: {share:.2} vs off {off_share:.2}");
    }
    let to_storming = windows(&drop, "to-storming-host")[0];
    assert!(
        rate(to_storming, "after") > 0.3 * rate(to_storming, "before"),
        "drop: h1 -> h9 resumes after the storm: {to_storming}"
    );
}
