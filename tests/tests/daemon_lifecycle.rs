//! pfcswitchd's lifecycle: clean stop, SIGKILL and restart, startup errors, systemd
//! readiness, configuration reload, and the operational interfaces (metrics, unit file).

use pfcswitch_tests::topology::{Incast, Topology, binary, repo, serial};
use pfcswitch_tests::wait_until;
use pfcswitchd::classifier::{Classifier, PortClassification};
use std::os::unix::net::UnixDatagram;
use std::process::{Command, Stdio};
use std::time::Duration;

fn default_config() -> std::path::PathBuf {
    repo().join("configs/default.toml")
}

/// How long the kernel may take to release a BPF link after its last fd closed, on a busy
/// machine.
const DETACH: Duration = Duration::from_secs(10);

#[test]
fn sigterm_stops_cleanly_and_leaves_no_xdp_program() {
    let _serial = serial();
    let topology = Topology::without_daemons("star3");
    let daemon = topology.start_daemon("sw1", &default_config(), &[]);
    topology.wait_ready("sw1");
    assert!(topology.has_xdp("sw1"), "the classifier is attached while running");
    topology.run("h1", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.3"]);
    daemon.signal(libc::SIGTERM);
    let (status, stderr) = daemon.wait();
    assert!(status.success(), "clean exit: {status}\n{stderr}");
    assert!(stderr.contains("detaching XDP"), "{stderr}");
    wait_until("no XDP program remains", DETACH, || !topology.has_xdp("sw1"));
    assert!(!topology.socket("sw1").exists(), "the control socket is removed");
}

#[test]
fn after_kill_9_a_restart_forwards_again() {
    let _serial = serial();
    let topology = Topology::without_daemons("star3");
    let first = topology.start_daemon("sw1", &default_config(), &[]);
    topology.wait_ready("sw1");
    topology.run("h1", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.2"]);
    first.signal(libc::SIGKILL);
    let (status, _) = first.wait();
    assert!(!status.success());
    // The kernel releases the BPF link of a killed process by itself.
    wait_until("the killed daemon's XDP program is gone", DETACH, || !topology.has_xdp("sw1"));
    let second = topology.start_daemon("sw1", &default_config(), &[]);
    topology.wait_ready("sw1");
    topology.run("h1", "ping", &["-c", "3", "-i", "0.2", "-W", "2", "10.0.0.2"]);
    topology.run("h2", "ping", &["-6", "-c", "2", "-i", "0.2", "-W", "2", "fd00::3"]);
    drop(second);
    wait_until("XDP is detached after the restarted daemon stops", DETACH, || !topology.has_xdp("sw1"));
}

/// Starts a daemon expected to fail (under `wrapper`, with `args`) and returns its stderr.
fn failing_start(topology: &Topology, config: &std::path::Path, wrapper: &[&str], args: &[&str]) -> String {
    let mut command = topology.command("sw1", wrapper.first().copied().unwrap_or("env"));
    command.args(wrapper.iter().skip(1)).arg(binary("pfcswitchd")).arg("--config").arg(config);
    command.arg("--control-socket").arg(topology.socket("sw1")).args(args);
    let output = command.stdout(Stdio::null()).output().expect("spawn");
    assert!(!output.status.success(), "pfcswitchd should fail");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn startup_errors_say_what_is_wrong() {
    let _serial = serial();
    let topology = Topology::without_daemons("star3");
    let dir = tempfile::tempdir().unwrap();

    let missing = dir.path().join("missing.toml");
    std::fs::write(
        &missing,
        std::fs::read_to_string(default_config()).unwrap().replace("name = \"p3\"", "name = \"nosuch0\""),
    )
    .unwrap();
    let stderr = failing_start(&topology, &missing, &[], &[]);
    assert!(stderr.contains("interface `nosuch0` does not exist in this network namespace"), "{stderr}");

    let stderr = failing_start(
        &topology,
        &default_config(),
        &["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all", "--bounding-set=-all"],
        &[],
    );
    assert!(stderr.contains("are you root, or do you have CAP_BPF and CAP_NET_ADMIN"), "{stderr}");

    // Another XDP program on p1: pfcswitchd must refuse to take the slot, and say so.
    let netns = format!("/run/netns/{}", topology.ns("sw1"));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let file = std::fs::File::open(&netns).unwrap();
        // SAFETY: entering the test's own namespace on this thread only.
        assert_eq!(unsafe { libc::setns(std::os::fd::AsRawFd::as_raw_fd(&file), libc::CLONE_NEWNET) }, 0);
        let mut foreign = Classifier::load().unwrap();
        let port = PortClassification {
            port_index: 0,
            default_priority: pfcswitch_wire::Pcp::default(),
            dscp_map: None,
            lossless: 0,
        };
        foreign.attach("p1", &port).unwrap();
        ready_tx.send(()).unwrap();
        done_rx.recv().unwrap();
    });
    ready_rx.recv().unwrap();
    let stderr = failing_start(&topology, &default_config(), &[], &[]);
    done_tx.send(()).unwrap();
    holder.join().unwrap();
    assert!(stderr.contains("cannot attach XDP to `p1`: another XDP program occupies the slot"), "{stderr}");
    assert!(stderr.contains("ip link set dev p1 xdp off"), "{stderr}");
    wait_until("no XDP program remains", DETACH, || !topology.has_xdp("sw1"));

    // Realtime asked for and not allowed (no CAP_SYS_NICE, RLIMIT_RTPRIO 0): it says so and
    // leaves nothing attached, rather than forwarding with a response time nobody planned.
    let no_sys_nice = ["setpriv", "--bounding-set=-sys_nice", "--inh-caps=-sys_nice"];
    let stderr = failing_start(&topology, &default_config(), &no_sys_nice, &["--realtime", "10"]);
    assert!(stderr.contains("--realtime 10: sched_setscheduler(SCHED_FIFO, 10): Operation not permitted"), "{stderr}");
    assert!(!topology.socket("sw1").exists(), "the control socket is removed");
    wait_until("no XDP program remains", DETACH, || !topology.has_xdp("sw1"));
}

/// (scheduling policy, nice value) of thread `tid` of process `pid`: proc(5)'s stat fields
/// 41 and 19. None if the thread has exited since it was listed (a control connection's
/// thread ends with its connection).
fn scheduling_of(pid: u32, tid: &str) -> Option<(u32, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/stat")).ok()?;
    let fields: Vec<&str> = stat.rsplit_once(") ").unwrap().1.split_whitespace().collect();
    // `fields[0]` is field 3 (state).
    Some((fields[41 - 3].parse().unwrap(), fields[19 - 3].parse().unwrap()))
}

#[test]
fn topology_up_runs_the_forwarding_loop_at_nice_minus_20_and_the_control_threads_at_0() {
    let _serial = serial();
    let topology = Topology::up("star3", None);
    let pid = topology.pid("sw1");
    let threads: Vec<(String, (u32, i32))> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .map(|task| task.unwrap().file_name().into_string().unwrap())
        .filter_map(|tid| {
            let scheduling = scheduling_of(pid, &tid)?;
            Some((tid, scheduling))
        })
        .collect();
    let ordinary = libc::SCHED_OTHER as u32;
    let main = threads.iter().find(|(tid, _)| *tid == pid.to_string()).expect("the main thread");
    assert_eq!(main.1, (ordinary, -20), "the forwarding loop: {threads:?}");
    let others: Vec<_> = threads.iter().filter(|(tid, _)| *tid != pid.to_string()).collect();
    assert!(!others.is_empty(), "the control socket and metrics run in threads of their own");
    assert!(others.iter().all(|(_, s)| *s == (ordinary, 0)), "the others keep nice 0: {threads:?}");
    topology.run("h1", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.2"]);
}

#[test]
fn check_rejects_bad_configs_with_file_line_key_and_reason() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    let text = std::fs::read_to_string(default_config()).unwrap();
    std::fs::write(&bad, text.replace("xon = \"20KB\"", "xon = \"40KB\"")).unwrap();
    let output = Command::new(binary("pfcswitchd")).arg("--config").arg(&bad).arg("--check").output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let line = text.lines().position(|l| l.starts_with("xon")).unwrap() + 1;
    let expected = format!("{}:{line}: key `pfc.xon`: xon (40KB) must be below xoff (30KB)", bad.display());
    assert!(stderr.contains(&expected), "{stderr}");

    std::fs::write(&bad, text.replace("[policy]", "[policy]\ncolour = \"blue\"")).unwrap();
    let output = Command::new(binary("pfcswitchd")).arg("--config").arg(&bad).arg("--check").output().unwrap();
    assert!(String::from_utf8_lossy(&output.stderr).contains("key `policy.colour`: unknown field `colour`"));

    let output =
        Command::new(binary("pfcswitchd")).arg("--config").arg(default_config()).arg("--check").output().unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}

/// The sd_notify protocol as systemd's Type=notify sees it: READY=1 once forwarding,
/// RELOADING=1 then READY=1 around a SIGHUP, STOPPING=1 on SIGTERM.
#[test]
fn notifies_systemd_of_readiness_reload_and_stop() {
    let _serial = serial();
    let topology = Topology::without_daemons("star3");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notify.sock");
    let socket = UnixDatagram::bind(&path).unwrap();
    socket.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let receive = || {
        let mut buffer = [0u8; 512];
        let n = socket.recv(&mut buffer).expect("a notification within 10 s");
        String::from_utf8_lossy(&buffer[..n]).into_owned()
    };
    let daemon = topology.start_daemon("sw1", &default_config(), &[("NOTIFY_SOCKET", path.to_str().unwrap())]);
    assert_eq!(receive(), "READY=1");
    topology.run("h1", "ping", &["-c", "1", "-W", "2", "10.0.0.2"]);
    daemon.signal(libc::SIGHUP);
    assert!(receive().starts_with("RELOADING=1\nMONOTONIC_USEC="));
    assert_eq!(receive(), "READY=1");
    daemon.signal(libc::SIGTERM);
    assert_eq!(receive(), "STOPPING=1");
    assert!(daemon.wait().0.success());
}

/// SIGHUP applies new thresholds in the middle of a lossless incast without losing a frame.
#[test]
fn sighup_reloads_thresholds_without_losing_frames() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("sw1.toml");
    let text = std::fs::read_to_string(default_config()).unwrap();
    std::fs::write(&config, &text).unwrap();
    let topology = Topology::up("star3", Some(&config));
    let incast = Incast::start(&topology, 8000);
    Incast::wait_under_way(&topology);
    std::fs::write(
        &config,
        text.replace("xoff = \"30KB\"", "xoff = \"20KB\"").replace("xon = \"20KB\"", "xon = \"10KB\""),
    )
    .unwrap();
    // SAFETY: signalling the daemon `topology up` started.
    unsafe { libc::kill(topology.pid("sw1") as i32, libc::SIGHUP) };
    let before_reload = Incast::forwarded(&topology);
    incast.assert_lossless(&topology);
    assert!(before_reload <= 14_000, "the reload came mid-incast: {before_reload} of 16000 frames were out before it");
    let snapshot = topology.snapshot("sw1");
    assert_eq!((snapshot.pfc.xoff_bytes, snapshot.pfc.xon_bytes), (20_000, 10_000), "the new thresholds are in force");
    assert!(snapshot.ports.iter().all(|p| p.priorities[3].drops.values().sum::<u64>() == 0));
    assert!(topology.log("sw1").contains("reloaded"), "{}", topology.log("sw1"));
    let high_water = snapshot.port("p1").unwrap().priorities[3].ingress_high_water;
    println!("reloaded xoff 30KB → 20KB mid-incast: 16000 frames, 0 lost, p1 ingress high water {high_water} B");
}

#[test]
fn metrics_pass_promtool_and_the_unit_passes_systemd_analyze() {
    let _serial = serial();
    let topology = Topology::up("star3", None);
    topology.run("h1", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.2"]);
    let metrics = topology.metrics("sw1");
    for family in [
        "pfcswitch_rx_frames_total",
        "pfcswitch_tx_frames_total",
        "pfcswitch_rx_bytes_total",
        "pfcswitch_tx_bytes_total",
        "pfcswitch_drops_total",
        "pfcswitch_pfc_tx_frames_total",
        "pfcswitch_pfc_rx_frames_total",
        "pfcswitch_ingress_bytes",
        "pfcswitch_egress_queue_bytes",
        "pfcswitch_peer_paused",
        "pfcswitch_pausing_peer",
        "pfcswitch_paused_seconds_total",
    ] {
        assert!(metrics.contains(&format!("# TYPE {family} ")), "{family} is exported");
    }
    assert!(metrics.contains("pfcswitch_rx_frames_total{port=\"p1\",priority=\"0\"}"));
    assert!(metrics.contains("# TYPE pfcswitch_lossless_drops_total counter"));
    pfcswitch_tests::oracle::assert_promtool_clean(&metrics);
    let (content_type, _) = topology.scrape("sw1", "text/plain");
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    // What Prometheus asks for: OpenMetrics, which a strict parser must accept.
    let prometheus = "application/openmetrics-text;version=1.0.0;q=0.5,text/plain;version=0.0.4;q=0.3,*/*;q=0.2";
    let (content_type, openmetrics) = topology.scrape("sw1", prometheus);
    assert_eq!(content_type, "application/openmetrics-text; version=1.0.0; charset=utf-8");
    assert!(openmetrics.ends_with("# EOF\n") && openmetrics.contains("# TYPE pfcswitch_rx_frames counter\n"));
    let families = pfcswitch_tests::oracle::assert_openmetrics_parses(&openmetrics);
    println!("text 0.0.4 passes promtool; OpenMetrics: {families} families parsed by python3-prometheus-client");

    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo().join("configs/pfcswitchd@.service"), dir.path().join("pfcswitchd@.service")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("pfcswitchd@.service"), dir.path().join("pfcswitchd@sw1.service"))
        .unwrap();
    assert!(
        std::path::Path::new("/usr/local/bin/pfcswitchd").exists(),
        "scripts/setup.sh installs /usr/local/bin/pfcswitchd"
    );
    let output =
        Command::new("systemd-analyze").arg("verify").arg(dir.path().join("pfcswitchd@sw1.service")).output().unwrap();
    let complaints = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && complaints.trim().is_empty(), "systemd-analyze verify: {complaints}");
}

/// The OFC paper's Fig. 1: traffic crosses three switches, each learning every address.
#[test]
fn ofc_fig1_carries_traffic_across_three_switches() {
    let _serial = serial();
    let topology = Topology::up("ofc-fig1", None);
    topology.run("h1", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.9"]);
    topology.run("h2", "ping", &["-c", "2", "-i", "0.2", "-W", "2", "10.0.0.10"]);
    topology.run("h3", "ping", &["-6", "-c", "2", "-i", "0.2", "-W", "2", "fd00::8"]);
    for switch in ["sw1", "sw2", "sw3"] {
        let fdb = topology.snapshot(switch).fdb;
        assert!(fdb.iter().any(|e| e.mac == "02:00:00:00:00:01"), "{switch} learned h1: {fdb:?}");
    }
}
