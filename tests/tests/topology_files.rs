//! `pfcswitch topology`: the eight topologies that were bash functions are files now and
//! describe the same nodes and links; every built-in comes up wired as it describes; a user's
//! own file (docs/examples/two-racks) carries traffic; bad descriptions and a failure half-way
//! leave nothing behind; and what a killed run left is reaped.

use pfcswitch_tests::topology::{binary, repo, serial, unique_prefix};
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

fn pfcswitch(args: &[&str]) -> Output {
    Command::new(binary("pfcswitch")).args(args).env("PFCSWITCHD", binary("pfcswitchd")).output().unwrap()
}

fn succeed(args: &[&str]) -> String {
    let output = pfcswitch(args);
    assert!(output.status.success(), "pfcswitch {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn namespaces_with(prefix: &str) -> Vec<String> {
    let output = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    text.lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|ns| ns.starts_with(prefix))
        .map(String::from)
        .collect()
}

/// Whether `pid` runs: a zombie does not (this machine's init may never reap a daemon whose
/// parent, `topology up`, has exited).
fn running(pid: i32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
}

/// Takes a topology down with the CLI when dropped, panics included.
struct Up<'a> {
    topology: &'a str,
    prefix: String,
}

impl Drop for Up<'_> {
    fn drop(&mut self) {
        pfcswitch(&["topology", "down", self.topology, "--prefix", &self.prefix]);
        let switches = pfcswitch_topology::Topology::find(self.topology, &repo().join("topologies"))
            .map(|description| description.switches)
            .unwrap_or_default();
        for switch in switches {
            let _ = std::fs::remove_file(pfcswitch_lab::netns::log_path(&format!("{}{switch}", self.prefix)));
        }
    }
}

/// `ip -j link show` of `interface` in `namespace`: (ifindex, the peer's ifindex, MAC).
fn veth(namespace: &str, interface: &str) -> (u64, u64, String) {
    let output = Command::new("ip").args(["-j", "-n", namespace, "link", "show", "dev", interface]).output().unwrap();
    assert!(output.status.success(), "{interface} in {namespace}: {}", String::from_utf8_lossy(&output.stderr));
    let link: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let link = &link[0];
    (link["ifindex"].as_u64().unwrap(), link["link_index"].as_u64().unwrap(), link["address"].as_str().unwrap().into())
}

#[test]
fn the_built_ins_describe_the_nodes_and_links_topology_sh_built() {
    let fixture = std::fs::read_to_string(repo().join("tests/fixtures/topology-sh-describe.txt")).unwrap();
    let mut expected: HashMap<&str, Vec<&str>> = HashMap::new();
    let mut current = None;
    for line in fixture.lines().filter(|l| !l.starts_with('#')) {
        match line.strip_prefix("topology ") {
            Some(name) => current = Some(name),
            None => expected.entry(current.unwrap()).or_default().push(line),
        }
    }
    let listed: Vec<String> = serde_json::from_str(&succeed(&["-j", "topology", "list"])).unwrap();
    // The eight topologies topology.sh built are still built in (later ones join them).
    let missing: Vec<&str> = expected.keys().copied().filter(|name| !listed.iter().any(|l| l == name)).collect();
    assert!(missing.is_empty(), "former topologies no longer built in: {missing:?} (listed: {listed:?})");
    for (name, lines) in &expected {
        let described = succeed(&["topology", "describe", name]);
        let first: Vec<&str> = described.lines().take(3).collect();
        assert_eq!(&first, lines, "{name}");
    }
}

#[test]
fn every_built_in_comes_up_wired_as_it_describes_and_down_leaves_nothing() {
    let dir = repo().join("topologies");
    for name in pfcswitch_topology::builtins(&dir) {
        let description = pfcswitch_topology::Topology::find(&name, &dir).unwrap();
        let prefix = unique_prefix();
        let up = Up { topology: &name, prefix: prefix.clone() };
        succeed(&["topology", "up", &name, "--prefix", &prefix, "--no-daemon"]);
        let nodes = description.switches.len() + description.hosts.len();
        assert_eq!(namespaces_with(&prefix).len(), nodes, "{name}: a namespace per node");
        for link in &description.links {
            let a = veth(&format!("{prefix}{}", link.a.node()), link.a.interface());
            let b = veth(&format!("{prefix}{}", link.b.node()), link.b.interface());
            assert_eq!((a.1, b.1), (b.0, a.0), "{name}: {} is one veth pair", link.name());
        }
        for host in &description.hosts {
            let (_, _, mac) = veth(&format!("{prefix}{host}"), "eth0");
            assert_eq!(mac, description.host_addresses(host).unwrap().mac.to_string(), "{name}: {host}'s MAC");
        }
        drop(up);
        assert_eq!(namespaces_with(&prefix), Vec::<String>::new(), "{name}: down leaves nothing");
    }
}

#[test]
fn a_users_own_file_comes_up_carries_traffic_and_goes_down_leaving_nothing() {
    let _serial = serial();
    let file = repo().join("docs/examples/two-racks/topology.toml");
    let file = file.to_str().unwrap();
    let prefix = unique_prefix();
    let up = Up { topology: file, prefix: prefix.clone() };
    succeed(&["topology", "up", file, "--prefix", &prefix]);
    for (from, to) in [("web1", "10.0.0.3"), ("web2", "10.0.0.3"), ("web1", "10.0.0.2")] {
        let ping = Command::new("ip")
            .args(["netns", "exec", &format!("{prefix}{from}"), "ping", "-c", "3", "-i", "0.2", "-W", "2", to])
            .output()
            .unwrap();
        assert!(ping.status.success(), "{from} -> {to}: {}", String::from_utf8_lossy(&ping.stdout));
    }
    let socket = format!("/run/pfcswitch/{prefix}tor2.sock");
    let ports: serde_json::Value = serde_json::from_str(&succeed(&["-j", "-s", &socket, "ports"])).unwrap();
    let uplink = ports.as_array().unwrap().iter().find(|p| p["port"] == "uplink").expect("tor2 has its uplink");
    assert!(uplink["rx_frames"].as_u64().unwrap() >= 6, "the pings crossed the uplink: {uplink}");
    let pid: i32 = std::fs::read_to_string(format!("/run/pfcswitch/{prefix}tor1.pid")).unwrap().trim().parse().unwrap();
    drop(up);
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new());
    assert!(!running(pid), "tor1's pfcswitchd stopped");
    assert!(!Path::new(&socket).exists(), "its control socket removed");
}

/// `topology up` of docs/examples/two-racks with tor2's config from `tor2` (edited from the
/// example's); returns its stderr, after checking that it failed and left nothing.
fn up_with_tor2(tor2: impl FnOnce(String) -> String) -> String {
    let dir = tempfile::tempdir().unwrap();
    let example = repo().join("docs/examples/two-racks");
    std::fs::copy(example.join("tor1.toml"), dir.path().join("tor1.toml")).unwrap();
    let config = tor2(std::fs::read_to_string(example.join("tor2.toml")).unwrap());
    std::fs::write(dir.path().join("tor2.toml"), config).unwrap();
    let file = example.join("topology.toml");
    let prefix = unique_prefix();
    let _up = Up { topology: file.to_str().unwrap(), prefix: prefix.clone() };
    let config_dir = dir.path().to_str().unwrap();
    let output =
        pfcswitch(&["topology", "up", file.to_str().unwrap(), "--prefix", &prefix, "--config-dir", config_dir]);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(!output.status.success(), "tor2's config is refused: {stderr}");
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new(), "tor1's daemon and every namespace removed");
    let alive = Command::new("pgrep").args(["-f", &format!("{prefix}tor1.sock")]).output().unwrap();
    assert!(!alive.status.success(), "no pfcswitchd of this topology runs");
    stderr
}

#[test]
fn a_failure_half_way_and_a_bad_description_leave_nothing_behind() {
    let _serial = serial();
    // A config pfcswitchd's check refuses: refused before anything is built.
    let stderr = up_with_tor2(|config| config.replace("xon = \"20KB\"", "xon = \"40KB\""));
    assert!(stderr.contains("tor2.toml") && stderr.contains("pfc.xon"), "the file and the key: {stderr}");
    // A valid config whose daemon fails at start (no such interface): tor1's daemon was
    // already running, and is stopped with everything else.
    let stderr = up_with_tor2(|config| config.replace("name = \"eth1\"", "name = \"eth1\"\niface = \"nosuch0\""));
    assert!(stderr.contains("pfcswitchd in") && stderr.contains("nosuch0"), "the daemon's reason: {stderr}");

    let dir = tempfile::tempdir().unwrap();
    let prefix = unique_prefix();

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "switches = [\"sw1\"]\nhosts = [\"h1\", \"h2\"]\nlinks = [\n  \"sw1:p1 h1\",\n  \"sw1:p1 h2\",\n]\n[defaults]\nspeed = \"1Gbps\"\n").unwrap();
    let output = pfcswitch(&["topology", "up", bad.to_str().unwrap(), "--prefix", &prefix, "--no-daemon"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("bad.toml:5: port sw1:p1 is already on the link of line 4"), "{stderr}");
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new(), "refused before anything was created");

    // 255 hosts: a valid description (the simulator takes up to 65,534), but namespaces share
    // one /24.
    let many = dir.path().join("many.toml");
    let hosts: Vec<String> = (1..=255).map(|h| format!("\"h{h}\"")).collect();
    let mut links: Vec<String> =
        (1..=255).map(|h| format!("\"sw{}:p{} h{h}\"", (h - 1) / 60 + 1, (h - 1) % 60 + 1)).collect();
    links.extend((1..5).map(|s| format!("\"sw{s}:p62 sw{}:p61\"", s + 1)));
    let text = format!(
        "switches = [\"sw1\", \"sw2\", \"sw3\", \"sw4\", \"sw5\"]\nhosts = [{}]\nlinks = [{}]\n[defaults]\nspeed = \"1Gbps\"\n",
        hosts.join(", "),
        links.join(", ")
    );
    std::fs::write(&many, text).unwrap();
    let output = pfcswitch(&["topology", "up", many.to_str().unwrap(), "--prefix", &prefix, "--no-daemon"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("255 hosts; on namespaces hosts share 10.0.0.0/24 (at most 254)"), "{stderr}");
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new(), "refused before anything was created");

    // leaf-spine-2s with sw1 flooding on both uplinks: broadcasts would go round sw1, sw3,
    // sw2, sw4 for ever.
    let configs = dir.path().join("flooding");
    std::fs::create_dir(&configs).unwrap();
    for switch in ["sw1", "sw2", "sw3", "sw4"] {
        let config = std::fs::read_to_string(repo().join(format!("configs/leaf-spine-2s/{switch}.toml"))).unwrap();
        let config = if switch == "sw1" { config.replace("flooding = false\n", "") } else { config };
        std::fs::write(configs.join(format!("{switch}.toml")), config).unwrap();
    }
    let output =
        pfcswitch(&["topology", "up", "leaf-spine-2s", "--prefix", &prefix, "--config-dir", configs.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("leaf-spine-2s.toml:11: frames flooded by sw3 come back to it"), "{stderr}");
    assert!(stderr.contains("sw1:p4 → sw4:p1"), "the loop's hops: {stderr}");
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new(), "refused before anything was created");
}

#[test]
fn namespaces_and_processes_of_a_killed_run_are_reaped() {
    let base = format!("{}reap", unique_prefix().trim_end_matches('-'));
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let orphan = format!("{base}{}x0-sw1", gone.id());
    let live = format!("{base}{}x0-sw1", std::process::id());
    for namespace in [&orphan, &live] {
        assert!(Command::new("ip").args(["netns", "add", namespace]).status().unwrap().success());
    }
    let mut sleeper = Command::new("ip").args(["netns", "exec", &orphan, "sleep", "300"]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let removed = pfcswitch_lab::netns::reap_orphans(&base).unwrap();
    // The reaper collects it (it is this process's child): /proc tells whether it still runs.
    let sleeper_ended = !running(sleeper.id() as i32);
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let left = namespaces_with(&base);
    let _ = Command::new("ip").args(["netns", "del", &live]).status();
    assert_eq!(removed, [orphan], "only the namespace of the dead pid");
    assert_eq!(left, [live], "the live run's namespace stays");
    assert!(sleeper_ended, "the process inside the orphan was stopped");
}

/// A topology file's per-link delay and loss reach both engines: the query link to h3 gets
/// 2 ms each way and loses 1 % of its frames, so the FCTs grow by the round trips and
/// go-back-N recovers every loss, in the simulator and on the datapath (pfcswitchd's
/// emulated cable) alike.
#[test]
fn a_files_link_delay_and_loss_reach_the_simulator_and_the_datapath() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let star3 = std::fs::read_to_string(repo().join("topologies/star3.toml")).unwrap();
    let slow = star3
        .replace(
            "configs = \"../configs/default.toml\"",
            &format!("configs = \"{}\"", repo().join("configs/default.toml").display()),
        )
        .replace("\"sw1:p3 h3\"", "{ a = \"sw1:p3\", b = \"h3\", delay = \"2ms\", loss = 0.01 }");
    std::fs::write(dir.path().join("slow.toml"), &slow).unwrap();
    let scenario = std::fs::read_to_string(repo().join("scenarios/incast.toml"))
        .unwrap()
        .replace("topology = \"star3\"", "topology = \"slow.toml\"")
        .replace("../configs/default.toml", &repo().join("configs/default.toml").display().to_string());
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, scenario).unwrap();
    for (engine, out) in [("simulate", "sim"), ("run", "dp")] {
        let output = Command::new(binary("pfcswitch"))
            .args(["scenario", engine, file.to_str().unwrap(), "--out"])
            .arg(dir.path().join(out))
            .env("PFCSWITCHD", binary("pfcswitchd"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{engine}: {}", String::from_utf8_lossy(&output.stderr));
        let results = pfcswitch_tests::scenario::results(&dir.path().join(out));
        let query = &results["summary"]["classes"][0];
        assert_eq!(query["class"], "query");
        assert_eq!(query["finished"], query["messages"], "{engine}: go-back-N recovers every loss");
        let p50 = query["fct_p50_ms"].as_f64().unwrap();
        assert!(p50 > 8.0, "{engine}: a 64 KB answer takes at least two 4 ms round trips: p50 {p50} ms");
        if engine == "simulate" {
            let lost = results["simulator"]["lost_on_cables"].as_u64().unwrap();
            assert!(lost > 10, "1 % of h3's link's frames lost: {lost}");
        }
    }
}

/// pfcswitchd's emulated cables, as `topology up` builds them from a file: 5 ms on h1's link
/// delays both ways (a ping's round trip crosses it twice), and every frame h2's lossy link
/// (20 %) loses on its way in is counted at p2: what the receiver misses, no more than the
/// few the hosts' kernels sent besides.
#[test]
fn an_emulated_cable_delays_both_ways_and_counts_every_frame_it_loses() {
    let _serial = serial();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cables.toml");
    let description = format!(
        "configs = \"{}\"\nswitches = [\"sw1\"]\nhosts = [\"h1\", \"h2\", \"h3\"]\nlinks = [\n  \
         {{ a = \"sw1:p1\", b = \"h1\", delay = \"5ms\" }},\n  {{ a = \"sw1:p2\", b = \"h2\", loss = 0.2 }},\n  \
         \"sw1:p3 h3\",\n]\n[defaults]\nspeed = \"100Mbps\"\n",
        repo().join("configs/default.toml").display()
    );
    std::fs::write(&file, description).unwrap();
    let file = file.to_str().unwrap();
    let prefix = unique_prefix();
    let _up = Up { topology: file, prefix: prefix.clone() };
    let up = pfcswitch(&["topology", "up", file, "--prefix", &prefix]);
    let stderr = String::from_utf8_lossy(&up.stderr);
    assert!(up.status.success(), "{stderr}");
    // configs/default.toml computes its headroom for 100 ns cables.
    assert!(
        stderr.contains("warning: link sw1:p1-h1 has a delay of 5ms") && stderr.contains("pfc.cable_delay = 100ns"),
        "{stderr}"
    );
    let in_ns = |host: &str, program: &str, args: &[&str]| {
        Command::new("ip").args(["netns", "exec", &format!("{prefix}{host}"), program]).args(args).output().unwrap()
    };
    let min_rtt = |from: &str, to: &str| {
        let ping = in_ns(from, "ping", &["-c", "5", "-i", "0.2", "-W", "2", to]);
        let text = String::from_utf8_lossy(&ping.stdout).into_owned();
        let stats = text.lines().find(|l| l.starts_with("rtt")).unwrap_or_else(|| panic!("{from} -> {to}: {text}"));
        stats.split('=').nth(1).unwrap().trim().split('/').next().unwrap().parse::<f64>().unwrap()
    };
    let (long, short) = (min_rtt("h1", "10.0.0.3"), min_rtt("h3", "10.0.0.1"));
    assert!((10.0..30.0).contains(&long) && (10.0..30.0).contains(&short), "h1's round trips: {long} ms, {short} ms");
    let direct = min_rtt("h2", "10.0.0.3").min(min_rtt("h3", "10.0.0.2"));
    assert!(direct < 5.0, "h2 to h3 crosses no delay: {direct} ms");

    let socket = format!("/run/pfcswitch/{prefix}sw1.sock");
    let lost_in = || {
        let ports: serde_json::Value = serde_json::from_str(&succeed(&["-j", "-s", &socket, "ports"])).unwrap();
        let p2 = ports.as_array().unwrap().iter().find(|p| p["port"] == "p2").unwrap().clone();
        assert_eq!((p2["cable"]["loss"].as_f64(), p2["cable"]["both_ways"].as_bool()), (Some(0.2), Some(true)));
        p2["cable"]["lost_in"].as_u64().unwrap()
    };
    let before = lost_in();
    let receiver = Command::new("ip")
        .args(["netns", "exec", &format!("{prefix}h3")])
        .arg(binary("pfcswitch"))
        .args(["-j", "traffic", "recv", "--iface", "eth0", "--duration", "30s", "--idle", "2s"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let send = ["traffic", "send", "--iface", "eth0", "--speed", "10Mbps", "--pcp", "0", "--dst", "02:00:00:00:00:03"];
    let sent =
        in_ns("h2", binary("pfcswitch").to_str().unwrap(), &[&send[..], &["--frames", "2000", "--flow", "7"]].concat());
    assert!(sent.status.success(), "{}", String::from_utf8_lossy(&sent.stderr));
    let received = receiver.wait_with_output().unwrap();
    let report: serde_json::Value = serde_json::from_slice(&received.stdout).unwrap();
    let flow = report["flows"].as_array().unwrap().iter().find(|f| f["flow"] == 7).expect("flow 7 arrived").clone();
    let missing = 2000 - flow["frames"].as_u64().unwrap();
    let counted = lost_in() - before;
    assert!((250..=550).contains(&missing), "about 20 % of 2000 frames lost: {missing}");
    assert!(
        (missing..=missing + 10).contains(&counted),
        "p2 counted {counted} frames lost on its cable; the receiver missed {missing}"
    );
    println!(
        "round trips over h1's 5 ms cable {long}/{short} ms, without {direct} ms; h2's 20 % cable: {missing} of 2000 missed, {counted} counted"
    );
}

/// Removes a namespace standing for a container, and the interface the test made outside it,
/// when dropped (panics included).
struct Container {
    namespace: String,
    outside: String,
}

impl Drop for Container {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.outside]).output();
        let _ = Command::new("ip").args(["netns", "del", &self.namespace]).output();
    }
}

/// `[interfaces]`: a switch port on an interface the user made, here the outer end of a veth
/// pair into a namespace standing for a container. `up` moves it into sw1's namespace as p4,
/// the container reaches h1 through the switch, and `down` moves it back under its own name,
/// its pair (the container's cable) intact.
#[test]
fn an_existing_interface_becomes_a_switch_port_and_goes_back_on_down() {
    let _serial = serial();
    let prefix = unique_prefix();
    let container =
        Container { namespace: format!("{prefix}ctr"), outside: format!("{}o", prefix.trim_end_matches('-')) };
    let ip = |args: &[&str]| {
        let output = Command::new("ip").args(args).output().unwrap();
        assert!(output.status.success(), "ip {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    };
    let (ctr, outside) = (container.namespace.as_str(), container.outside.as_str());
    ip(&["netns", "add", ctr]);
    ip(&["link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", ctr]);
    ip(&["-n", ctr, "link", "set", "eth0", "address", "02:00:00:00:00:09", "up"]);
    ip(&["-n", ctr, "addr", "add", "10.0.0.9/24", "dev", "eth0"]);

    let dir = tempfile::tempdir().unwrap();
    let config = std::fs::read_to_string(repo().join("configs/default.toml"))
        .unwrap()
        .replace("[pfc]", "[[port]]\nname = \"p4\"\nspeed = \"100Mbps\"\n\n[pfc]");
    std::fs::write(dir.path().join("sw1.toml"), config).unwrap();
    let star3 = std::fs::read_to_string(repo().join("topologies/star3.toml")).unwrap();
    let file = dir.path().join("with-container.toml");
    let description = star3.replace("configs = \"../configs/default.toml\"", "configs = \"sw1.toml\"");
    std::fs::write(&file, format!("{description}\n[interfaces]\n\"sw1:p4\" = \"{outside}\"\n")).unwrap();
    let file = file.to_str().unwrap();
    let up = Up { topology: file, prefix: prefix.clone() };
    succeed(&["topology", "up", file, "--prefix", &prefix]);
    assert!(!Path::new("/sys/class/net").join(outside).exists(), "moved out of this namespace");
    let sw1 = format!("{prefix}sw1");
    ip(&["-n", &sw1, "link", "show", "dev", "p4"]);
    let ping_args = ["netns", "exec", ctr, "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.1"];
    let ping = Command::new("ip").args(ping_args).output().unwrap();
    assert!(ping.status.success(), "container -> h1 through sw1:p4: {}", String::from_utf8_lossy(&ping.stdout));
    let socket = format!("/run/pfcswitch/{sw1}.sock");
    let ports: serde_json::Value = serde_json::from_str(&succeed(&["-j", "-s", &socket, "ports"])).unwrap();
    let p4 = ports.as_array().unwrap().iter().find(|p| p["port"] == "p4").expect("p4").clone();
    assert!(p4["rx_frames"].as_u64().unwrap() >= 3, "the pings entered at p4: {p4}");
    drop(up);
    assert!(Path::new("/sys/class/net").join(outside).exists(), "back under its own name");
    ip(&["-n", ctr, "link", "show", "dev", "eth0"]);
}

/// Each machine's part of a fabric over machines, taken down with the CLI when dropped
/// (panics included), before the namespaces standing for the machines go.
struct Parts<'a> {
    file: &'a str,
    /// (the machine's namespace, its name in the file, the prefix of its part)
    parts: Vec<(String, &'a str, String)>,
}

impl Parts<'_> {
    /// `pfcswitch ARGS --machine NAME --prefix PREFIX` in the network namespace of `part`
    /// only, as on that machine: `ip netns exec` would give it a mount namespace of its own,
    /// where the namespaces `topology up` names are not seen from outside.
    fn on(&self, part: usize, args: &[&str]) -> Output {
        let (netns, machine, prefix) = &self.parts[part];
        Command::new("nsenter")
            .arg(format!("--net=/run/netns/{netns}"))
            .arg(binary("pfcswitch"))
            .args(args)
            .args([self.file, "--machine", machine, "--prefix", prefix])
            .env("PFCSWITCHD", binary("pfcswitchd"))
            .output()
            .unwrap()
    }
}

impl Drop for Parts<'_> {
    fn drop(&mut self) {
        for (part, (_, _, prefix)) in self.parts.iter().enumerate() {
            self.on(part, &["topology", "down"]);
            for switch in ["tor1", "tor2"] {
                let _ = std::fs::remove_file(pfcswitch_lab::netns::log_path(&format!("{prefix}{switch}")));
            }
        }
    }
}

/// `[machines]`: docs/examples/two-racks/two-machines.toml, each rack on a machine of its
/// own (two namespaces joined by a veth pair stand for the machines and their network). The
/// uplink is a VXLAN tunnel: web1 on rack1 reaches db1 on rack2 through it, the frames on the
/// machines' network are VXLAN with the uplink's VNI around the hosts' own, and each
/// machine's `down` removes its part only.
#[test]
fn a_fabric_over_two_machines_joins_them_with_a_vxlan_tunnel() {
    use pfcswitch_tests::{capture::Capture, netns::Netns, oracle::tshark_fields};
    let _serial = serial();
    let file = repo().join("docs/examples/two-racks/two-machines.toml");
    let file = file.to_str().unwrap();
    let (rack1, rack2) = (Netns::new("rack1"), Netns::new("rack2"));
    let (under1, under2) = ("under1", "under2");
    rack1.ip(&["link", "add", under1, "type", "veth", "peer", "name", under2, "netns", rack2.name()]);
    for (machine, iface, address) in [(&rack1, under1, "192.0.2.1/24"), (&rack2, under2, "192.0.2.2/24")] {
        machine.ip(&["addr", "add", address, "dev", iface]);
        machine.ip(&["link", "set", iface, "mtu", "1550", "up"]);
    }
    let prefix = unique_prefix();
    let parts = Parts {
        file,
        parts: vec![
            (rack1.name().into(), "rack1", format!("{prefix}a")),
            (rack2.name().into(), "rack2", format!("{prefix}b")),
        ],
    };
    let elsewhere = pfcswitch(&["topology", "up", file, "--machine", "rack1", "--prefix", &prefix]);
    let said = String::from_utf8_lossy(&elsewhere.stderr);
    assert!(said.contains("its address 192.0.2.1 (line 22) is not on this machine"), "{said}");
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new(), "refused before anything was built");

    for part in 0..2 {
        let up = parts.on(part, &["topology", "up"]);
        assert!(up.status.success(), "up {part}: {}", String::from_utf8_lossy(&up.stderr));
    }
    let mut built = namespaces_with(&prefix);
    built.sort();
    let expected: Vec<_> =
        ["ator1", "aweb1", "aweb2", "bdb1", "btor2"].iter().map(|n| format!("{prefix}{n}")).collect();
    assert_eq!(built, expected, "each machine built its own nodes");
    let tor1 = format!("{prefix}ator1");
    let tunnel = Command::new("ip").args(["-d", "-n", &tor1, "link", "show", "dev", "uplink"]).output().unwrap();
    let tunnel = String::from_utf8_lossy(&tunnel.stdout);
    assert!(tunnel.contains("vxlan id 4099 remote 192.0.2.2 local 192.0.2.1"), "{tunnel}");

    let dir = tempfile::tempdir().unwrap();
    let capture = Capture::start_in(&rack1, under1, "udp port 4789", &dir.path().join("underlay.pcap"));
    let ping_args = ["netns", "exec", &format!("{prefix}aweb1"), "ping", "-c", "3", "-i", "0.2", "-W", "2", "10.0.0.3"];
    let ping = Command::new("ip").args(ping_args).output().unwrap();
    assert!(ping.status.success(), "web1 -> db1 across the machines: {}", String::from_utf8_lossy(&ping.stdout));
    let pcap = capture.stop();
    let fields = tshark_fields(&pcap, &["vxlan.vni", "ip.src", "icmp.type"], &[]);
    let echoes = |src: &str, kind: &str| {
        fields.iter().filter(|f| f[0] == "4099" && f[1] == format!("192.0.2.1,{src}") && f[2] == kind).count()
    };
    assert!(echoes("10.0.0.1", "8") >= 3, "web1's echo requests in VNI 4099 from rack1: {fields:?}");
    let replies = fields.iter().filter(|f| f[0] == "4099" && f[1] == "192.0.2.2,10.0.0.3" && f[2] == "0").count();
    assert!(replies >= 3, "db1's replies in VNI 4099 from rack2: {fields:?}");

    let down = parts.on(0, &["topology", "down"]);
    assert!(down.status.success(), "down rack1: {}", String::from_utf8_lossy(&down.stderr));
    let mut left = namespaces_with(&prefix);
    left.sort();
    assert_eq!(left, [format!("{prefix}bdb1"), format!("{prefix}btor2")], "rack2's part stays");
    drop(parts);
    assert_eq!(namespaces_with(&prefix), Vec::<String>::new());
}
