//! The Grafana dashboard, `contrib/grafana/pfcswitch.json` (issue 52), against a live switch:
//! Debian's Prometheus scrapes pfcswitchd on star3 through an incast on the lossless priority,
//! a PFC storm that the watchdog contains, malformed frames and a flapping link, and every
//! panel's query returns data through Prometheus's HTTP API, as do the template variables'
//! `label_values` queries; every `{{label}}` of a legend is a label of the series it names;
//! and the alerts whose thresholds the dashboard draws fire on the same data. Without root,
//! every family and label the dashboard names is one the endpoint exports.
//!
//! `PFCSWITCH_DASHBOARD_PNG=docs/images/dashboard.png` also renders the dashboard from that
//! Prometheus with `contrib/grafana/render.py` (needs python3-matplotlib), and
//! `PFCSWITCH_DASHBOARD_KEEP=DIR` keeps Prometheus's data in DIR (docs/dashboard.md).

use pfcswitch_tests::topology::{Topology, binary, repo, serial, star3_config};
use pfcswitch_tests::wait_until;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

const DASHBOARD: &str = "contrib/grafana/pfcswitch.json";

/// Where Prometheus listens inside the switch's namespace (the namespace is the test's own).
const PROMETHEUS: &str = "127.0.0.1:9090";

/// configs/default.toml made to export every family the dashboard draws: buffer mode `pools`
/// (the pool and priority-group families; an ingress pool with a shared headroom pool, for its
/// watermark) and the PFC watchdog (`drop`, so a storm is contained and counted). The response
/// time is tests/tests/buffers.rs's 25 ms: the senders share two cores with the whole suite.
fn config(default: String) -> String {
    let mut config: String = default
        .lines()
        .filter(|line| !["xoff = ", "xon = ", "max = ", "egress_max = "].iter().any(|key| line.starts_with(key)))
        .map(|line| if line.starts_with("response_time = ") { "response_time = \"25ms\"" } else { line })
        .flat_map(|line| [line, "\n"])
        .collect();
    assert!(
        config.contains("[buffer]\n") && !config.contains("xoff = \"30KB\""),
        "configs/default.toml changed shape: {config}"
    );
    config = config.replace("[buffer]\n", POOLS);
    config + PFCWD
}

const POOLS: &str = r#"[buffer]
mode = "pools"
[buffer.pools.ingress_lossless_pool]
type = "ingress"
size = "200KB"
xoff = "1MB"
[buffer.pools.egress_lossy_pool]
type = "egress"
size = "400KB"
[buffer.profiles.pg_lossless]
pool = "ingress_lossless_pool"
dynamic_th = -1
[buffer.profiles.q_lossy]
pool = "egress_lossy_pool"
dynamic_th = 0
[buffer.pg]
"*|3" = "pg_lossless"
[buffer.queue]
"*|0-2,4-7" = "q_lossy"
"#;

const PFCWD: &str = r#"
[pfcwd]
enabled = true
action = "drop"
detection_time = "200ms"
restoration_time = "200ms"
"#;

fn dashboard() -> Value {
    let text = std::fs::read_to_string(repo().join(DASHBOARD)).expect(DASHBOARD);
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{DASHBOARD} is not JSON: {e}"))
}

/// Every panel, those nested in (collapsed) rows included, in the dashboard's order.
fn panels(dashboard: &Value) -> Vec<&Value> {
    fn walk<'a>(panels: &'a Value, out: &mut Vec<&'a Value>) {
        for panel in panels.as_array().into_iter().flatten() {
            out.push(panel);
            walk(&panel["panels"], out);
        }
    }
    let mut out = Vec::new();
    walk(&dashboard["panels"], &mut out);
    out
}

/// (panel title, refId, expression, legend) of every query of every panel.
fn targets(dashboard: &Value) -> Vec<(String, String, String, String)> {
    let mut out = Vec::new();
    for panel in panels(dashboard) {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let text = |key: &str| target[key].as_str().unwrap_or_default().to_string();
            let title = panel["title"].as_str().unwrap_or("(untitled)").to_string();
            out.push((title, text("refId"), text("expr"), text("legendFormat")));
        }
    }
    out
}

/// The template variables of type `query`: (name, the selector of `label_values(SELECTOR,
/// LABEL)`, LABEL).
fn label_values_variables(dashboard: &Value) -> Vec<(String, String, String)> {
    let variables = dashboard["templating"]["list"].as_array().expect("templating.list");
    let queries: Vec<_> = variables.iter().filter(|v| v["type"] == "query").collect();
    queries
        .iter()
        .map(|v| {
            let name = v["name"].as_str().expect("a variable's name").to_string();
            let query = v["query"]["query"].as_str().or(v["query"].as_str()).expect("a query variable's query");
            let inner = query
                .trim()
                .strip_prefix("label_values(")
                .and_then(|q| q.strip_suffix(')'))
                .unwrap_or_else(|| panic!("variable {name}: not a label_values(SELECTOR, LABEL) query: {query}"));
            let (selector, label) = inner.rsplit_once(',').expect("label_values(SELECTOR, LABEL)");
            (name, selector.trim().to_string(), label.trim().to_string())
        })
        .collect()
}

/// A query as Prometheus runs it once Grafana has replaced the template variables: every
/// instance, port and priority (`All`, whose value is `.*`), a one-minute rate window.
fn instantiate(expr: &str) -> String {
    let mut out = expr.to_string();
    for (variable, value) in [("__rate_interval", "1m"), ("instance", ".*"), ("port", ".*"), ("priority", ".*")] {
        out = out.replace(&format!("${{{variable}}}"), value).replace(&format!("${variable}"), value);
    }
    assert!(!out.contains('$'), "a template variable the test does not know: {expr}");
    out
}

/// The `{{label}}`s of a legend format.
fn legend_labels(legend: &str) -> Vec<&str> {
    legend.split("{{").skip(1).filter_map(|s| s.split_once("}}")).map(|(label, _)| label.trim()).collect()
}

/// Debian's `prometheus` in the switch's namespace, scraping its metrics endpoint every
/// second and evaluating configs/pfcswitch-alerts.yml; killed and reaped on drop, panics
/// included.
struct Prometheus {
    child: Option<Child>,
    ns: String,
    log: PathBuf,
}

impl Prometheus {
    fn start(topology: &Topology, dir: &Path, storage: &Path) -> Prometheus {
        let config = dir.join("prometheus.yml");
        let rules = repo().join("configs/pfcswitch-alerts.yml");
        let yaml = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
             rule_files:\n  - {}\n\
             scrape_configs:\n  - job_name: pfcswitch\n    static_configs:\n      - targets: ['127.0.0.1:9464']\n",
            rules.display()
        );
        std::fs::write(&config, yaml).unwrap();
        let log = dir.join("prometheus.log");
        let child = topology
            .command("sw1", "prometheus")
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", storage.display()))
            .arg(format!("--web.listen-address={PROMETHEUS}"))
            .arg("--log.level=warn")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .expect("prometheus is missing: scripts/setup.sh installs it (Debian package `prometheus`)");
        let prometheus = Prometheus { child: Some(child), ns: topology.ns("sw1"), log };
        wait_until("Prometheus is ready", Duration::from_secs(30), || {
            prometheus.assert_running();
            prometheus.curl(&["-sf", &format!("http://{PROMETHEUS}/-/ready")]).is_some()
        });
        prometheus
    }

    fn assert_running(&self) {
        let child = self.child.as_ref().expect("running");
        // SAFETY: signal 0 checks that our own child exists.
        let alive = unsafe { libc::kill(child.id() as i32, 0) } == 0;
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        assert!(alive && !log.contains("level=error"), "prometheus stopped or failed:\n{log}");
    }

    /// curl in the switch's namespace: its stdout if it succeeded.
    fn curl(&self, args: &[&str]) -> Option<String> {
        let output = Command::new("ip").args(["netns", "exec", &self.ns, "curl"]).args(args).output().unwrap();
        output.status.success().then(|| String::from_utf8(output.stdout).expect("UTF-8"))
    }

    /// GET `path` of the HTTP API with URL-encoded `params`; the `data` of a `success` answer.
    fn api(&self, path: &str, params: &[(&str, &str)]) -> Value {
        let url = format!("http://{PROMETHEUS}{path}");
        let mut args = vec!["-sS".to_string(), "-G".to_string(), url];
        for (key, value) in params {
            args.extend(["--data-urlencode".to_string(), format!("{key}={value}")]);
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let body = self.curl(&args).unwrap_or_else(|| panic!("curl {args:?} failed"));
        let answer: Value = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path} {params:?}: {e}: {body}"));
        assert_eq!(answer["status"], "success", "{path} {params:?}: {answer}");
        answer["data"].clone()
    }

    /// An instant query's result vector.
    fn query(&self, expr: &str) -> Vec<Value> {
        let data = self.api("/api/v1/query", &[("query", expr)]);
        assert_eq!(data["resultType"], "vector", "{expr}: {data}");
        data["result"].as_array().cloned().unwrap_or_default()
    }

    /// The value of a query that returns one series (0 when it returns none).
    fn scalar(&self, expr: &str) -> f64 {
        let result = self.query(expr);
        assert!(result.len() <= 1, "{expr}: one series expected: {result:?}");
        result.first().map_or(0.0, |s| s["value"][1].as_str().unwrap().parse().unwrap())
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling our own child (`ip netns exec` execs prometheus in place).
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = child.wait();
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

/// Child processes killed and reaped on drop (the senders, if the test ends before they do).
struct Children(Vec<Child>);

impl Children {
    fn wait(mut self) {
        for mut child in std::mem::take(&mut self.0) {
            let status = child.wait().unwrap();
            assert!(status.success(), "a sender failed: {status}");
        }
    }
}

impl Drop for Children {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn unix_now() -> f64 {
    SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_secs_f64()
}

/// A pcap of a frame sw1 counts as malformed (a MAC control PDU of an unknown opcode), for
/// the malformed-frames panel: the family has a series per reason seen, none before.
fn malformed_frames(dir: &Path) -> String {
    let pfc = dir.join("pfc.pcap");
    let out = Command::new(binary("pfcswitch"))
        .args(["frame", "pfc", "--src", "02:00:00:00:00:01", "--class", "3=100", "-o"])
        .arg(&pfc)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut unknown_opcode = pfcswitch_tests::oracle::read_pcap(&pfc).remove(0);
    unknown_opcode[15] = 0x02;
    let malformed = dir.join("malformed.pcap");
    pfcswitch_tests::oracle::write_pcap(&malformed, &[unknown_opcode]);
    malformed.to_str().unwrap().to_string()
}

/// The whole test, about 25 s: star3 in pools mode with the watchdog, Prometheus beside it,
/// 4 s idle, malformed frames, an incast from h1 and h2 to h3 on priority 3 (PFC pauses h1
/// and h2) during which h3 storms priority 3 for 2 s (the watchdog detects, drops, restores),
/// then three down/up flaps of h2's link; then every query of the dashboard.
#[test]
fn every_panel_and_variable_of_the_grafana_dashboard_returns_data_from_a_live_switch() {
    let _serial = serial();
    let started = Instant::now();
    let dashboard = dashboard();
    let dir = tempfile::tempdir().unwrap();
    let sw1 = star3_config(dir.path(), config);
    let topology = Topology::up("star3", Some(&sw1));
    let keep = std::env::var_os("PFCSWITCH_DASHBOARD_KEEP").map(PathBuf::from);
    let storage = keep.clone().unwrap_or_else(|| dir.path().join("tsdb"));
    std::fs::create_dir_all(&storage).unwrap();
    let prometheus = Prometheus::start(&topology, dir.path(), &storage);
    wait_until("Prometheus scraped pfcswitchd 5 times", Duration::from_secs(30), || {
        prometheus.assert_running();
        prometheus.scalar("count_over_time(pfcswitch_uptime_seconds[1m])") >= 5.0
    });
    // The picture's range starts at about the first scrape.
    let from = unix_now() - 4.5;

    let malformed = malformed_frames(dir.path());
    topology.run("h1", binary("pfcswitch"), &["frame", "send", "--iface", "eth0", "--repeat", "3", &malformed]);
    wait_until("Prometheus scraped the malformed frames", Duration::from_secs(10), || {
        !prometheus.query("pfcswitch_malformed_frames_total").is_empty()
    });
    topology.run("h1", "ping", &["-c", "1", "-W", "2", "10.0.0.3"]);
    // 2 × 40,000 frames of 1500 bytes into one 100 Mbit/s port: about 10 s.
    let senders = Children(
        [("h1", "1"), ("h2", "2")]
            .iter()
            .map(|(host, flow)| {
                topology
                    .command(host, binary("pfcswitch"))
                    .args(["traffic", "send", "--iface", "eth0", "--speed", "100Mbps", "--dst", "02:00:00:00:00:03"])
                    .args(["--pcp", "3", "--frames", "40000", "--flow", flow, "--linger", "200ms"])
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap()
            })
            .collect(),
    );
    let sent_to_h3 = || topology.snapshot("sw1").port("p3").expect("p3").priorities[3].tx_frames;
    wait_until("the incast reaches h3", Duration::from_secs(20), || sent_to_h3() >= 10_000);
    // Malformed frames again: the first ones made the family's series, whose first value
    // rate() cannot see (docs/dashboard.md); these show on the panel.
    topology.run("h1", binary("pfcswitch"), &["frame", "send", "--iface", "eth0", "--repeat", "20", &malformed]);
    std::thread::sleep(Duration::from_secs(1));
    let storm = ["traffic", "storm", "--iface", "eth0", "--class", "3", "--duration", "2s", "--speed", "100Mbps"];
    topology.run("h3", binary("pfcswitch"), &storm);
    senders.wait();
    // Down for longer than a scrape interval, so that the link-state panel sees each.
    for _ in 0..3 {
        for (state, pause) in [("down", 1200), ("up", 400)] {
            topology.run("h2", "ip", &["link", "set", "eth0", state]);
            std::thread::sleep(Duration::from_millis(pause));
        }
    }
    let snapshot = topology.snapshot("sw1");
    let p3 = &snapshot.port("p3").unwrap().priorities[3];
    assert!(p3.pfcwd.counters.storms_detected >= 1, "the watchdog detected the storm: {:?}", p3.pfcwd);
    assert_eq!(snapshot.port("p2").unwrap().link_transitions, 6, "three flaps of p2");
    // Prometheus has seen it all once it has scraped the last flap and the storm's end.
    wait_until("Prometheus scraped the end of the run", Duration::from_secs(20), || {
        prometheus.scalar(r#"pfcswitch_port_oper_transitions_total{port="p2"}"#) == 6.0
            && prometheus.scalar(r#"pfcswitch_pfcwd_storms_restored_total{port="p3",priority="3"}"#) >= 1.0
            && prometheus.scalar("sum(pfcswitch_pfcwd_stormed)") == 0.0
    });

    let mut checked = 0;
    let mut empty = Vec::new();
    for (title, ref_id, expr, legend) in targets(&dashboard) {
        let query = instantiate(&expr);
        let result = prometheus.query(&query);
        if result.is_empty() {
            empty.push(format!("panel \"{title}\" query {ref_id}: {query}"));
        }
        for series in &result {
            for label in legend_labels(&legend) {
                assert!(
                    series["metric"].get(label).is_some(),
                    "panel \"{title}\" query {ref_id}: legend {legend:?} names label {label}, which {query} \
                     does not return: {series}"
                );
            }
        }
        checked += 1;
    }
    assert!(empty.is_empty(), "{} of {checked} panel queries returned no data:\n{}", empty.len(), empty.join("\n"));
    assert!(checked >= 40, "the dashboard has its panels: {checked} queries");

    let mut variables = BTreeMap::new();
    for (name, selector, label) in label_values_variables(&dashboard) {
        let selector = instantiate(&selector);
        let series = prometheus.api("/api/v1/series", &[("match[]", &selector), ("start", &format!("{from}"))]);
        let values: BTreeSet<String> =
            series.as_array().into_iter().flatten().filter_map(|s| s[&label].as_str().map(str::to_string)).collect();
        assert!(!values.is_empty(), "variable ${name}: label_values({selector}, {label}) has no values");
        variables.insert(name, values);
    }
    let set = |values: &[&str]| values.iter().map(|v| v.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(variables["instance"], set(&["127.0.0.1:9464"]));
    assert_eq!(variables["port"], set(&["p1", "p2", "p3"]));
    assert_eq!(variables["priority"], set(&["0", "1", "2", "3", "4", "5", "6", "7"]));

    // The data is the run's, and crosses the thresholds the dashboard draws where it should:
    // the alerts of configs/pfcswitch-alerts.yml that share them fire.
    assert!(prometheus.scalar("sum(increase(pfcswitch_pfc_tx_frames_total[5m]))") > 0.0, "PFC paused the senders");
    let firing = || {
        let alerts = prometheus.api("/api/v1/alerts", &[]);
        let firing = alerts["alerts"].as_array().unwrap().iter().filter(|a| a["state"] == "firing");
        firing.map(|a| a["labels"]["alertname"].as_str().unwrap().to_string()).collect::<BTreeSet<_>>()
    };
    let expected = set(&["PfcswitchLinkFlapping", "PfcswitchLosslessDrops", "PfcswitchPfcStorm"]);
    wait_until("the alerts evaluate", Duration::from_secs(10), || firing().is_superset(&expected));
    prometheus.assert_running();
    let until = unix_now();
    println!(
        "{checked} panel queries and {} template variables returned data; alerts firing: {:?}; {:.1} s",
        variables.len(),
        firing(),
        started.elapsed().as_secs_f64()
    );

    if let Some(png) = std::env::var_os("PFCSWITCH_DASHBOARD_PNG") {
        let png = repo().join(png);
        let render = topology
            .command("sw1", repo().join("contrib/grafana/render.py"))
            .arg(repo().join(DASHBOARD))
            .args(["--prometheus", &format!("http://{PROMETHEUS}")])
            .args(["--start", &format!("{:.0}", from.floor()), "--end", &format!("{:.0}", until.ceil())])
            .args(["--step", "1s", "--rate-interval", "4s", "--var", "priority=3", "-o"])
            .arg(&png)
            .output()
            .unwrap();
        assert!(
            render.status.success(),
            "render.py failed: {}{}",
            String::from_utf8_lossy(&render.stdout),
            String::from_utf8_lossy(&render.stderr)
        );
        println!("{}wrote {}", String::from_utf8_lossy(&render.stdout), png.display());
    }
    if let Some(keep) = keep {
        std::fs::write(keep.join("range"), format!("{:.0} {:.0}\n", from.floor(), until.ceil())).unwrap();
        println!("Prometheus data kept in {} (range in its file `range`)", keep.display());
    }
}

/// Every family the dashboard's queries and variables name is one pfcswitchd exports, with the
/// labels they select, group by and print (`instance` and `job` are Prometheus's), in the
/// exposition of the test's own switch config with a datapath: a renamed family or label fails
/// here, without root.
#[test]
fn the_dashboard_names_only_families_and_labels_the_endpoint_exports() {
    let families = exported_families();
    let dashboard = dashboard();
    let mut expressions: Vec<(String, String, String)> = targets(&dashboard)
        .into_iter()
        .map(|(title, ref_id, expr, legend)| (format!("panel \"{title}\" query {ref_id}"), expr, legend))
        .collect();
    for (name, selector, label) in label_values_variables(&dashboard) {
        expressions.push((format!("variable ${name}"), selector, format!("{{{{{label}}}}}")));
    }
    let mut names_seen = BTreeSet::new();
    for (what, expr, legend) in &expressions {
        // `All` and several values are regular expressions: only `=~` matches them.
        for variable in ["$instance", "$port", "$priority"] {
            for (at, _) in expr.match_indices(variable) {
                assert!(expr[..at].ends_with("=~\""), "{what}: {variable} without =~: {expr}");
            }
        }
        let mut known: BTreeSet<&str> = ["instance", "job"].into();
        let mut names = Vec::new();
        for (name, matchers) in selectors(expr) {
            let labels = families.get(&name).unwrap_or_else(|| panic!("{what}: {name} is not exported: {expr}"));
            for label in matchers {
                assert!(
                    labels.contains(&label) || ["instance", "job"].contains(&label.as_str()),
                    "{what}: {name} has no label {label}: {expr}"
                );
            }
            known.extend(labels.iter().map(String::as_str));
            names.push(name);
        }
        assert!(!names.is_empty(), "{what} names no pfcswitch family: {expr}");
        for label in grouping_labels(expr).iter().map(String::as_str).chain(legend_labels(legend)) {
            assert!(known.contains(label), "{what}: label {label} is on none of {names:?}: {expr} / {legend}");
        }
        names_seen.extend(names);
    }
    assert!(names_seen.len() >= 40, "the dashboard draws most families: {names_seen:?}");
}

/// Family (sample) name → its label names, from the text exposition of a switch with this
/// test's config, a datapath report, the classifier's counters and one malformed frame.
fn exported_families() -> BTreeMap<String, BTreeSet<String>> {
    let dir = tempfile::tempdir().unwrap();
    let file = star3_config(dir.path(), config);
    let (config, _) = pfcswitchd::config::load(&file).expect("the test's switch config loads");
    let (switch, _) = pfcswitch_switch::switch::Switch::new(&config).expect("a switch");
    let mut snapshot =
        pfcswitch_switch::report::Snapshot::of(&switch, &config, pfcswitch_link::time::Instant::ZERO, 1.0);
    snapshot.datapath = Some(pfcswitch_switch::report::DatapathReport::default());
    for port in &mut snapshot.ports {
        port.malformed.insert("mac_control_unknown_opcode".into(), 1);
        port.xdp = Some(pfcswitch_switch::report::XdpPortReport {
            attach: "native".into(),
            socket: "copy".into(),
            rx_frames: vec![0; 8],
            rx_bytes: vec![0; 8],
            drops: [("runt".to_string(), 0)].into(),
            shed_frames: vec![0; 8],
            socket_dropped: 0,
        });
    }
    let text = pfcswitchd::metrics::render(std::sync::Arc::new(snapshot), pfcswitchd::metrics::Format::Text004);
    let mut families: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let name_end = line.find(['{', ' ']).unwrap_or(line.len());
        let labels = families.entry(line[..name_end].to_string()).or_default();
        if let Some(inside) = line[name_end..].strip_prefix('{').and_then(|rest| rest.split_once('}')) {
            labels.extend(inside.0.split(',').filter_map(|pair| pair.split_once('=')).map(|(k, _)| k.to_string()));
        }
    }
    families
}

/// The `pfcswitch_*` names of an expression, each with the label names of its `{...}`.
fn selectors(expr: &str) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let mut rest = expr;
    while let Some(start) = rest.find("pfcswitch_") {
        let tail = &rest[start..];
        let end = tail.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(tail.len());
        let name = tail[..end].to_string();
        let mut labels = Vec::new();
        rest = &tail[end..];
        if let Some(inside) = rest.strip_prefix('{') {
            let (matchers, after) = inside.split_once('}').expect("a closed selector");
            for matcher in matchers.split(',') {
                let label = matcher.split(['=', '!']).next().unwrap().trim();
                if !label.is_empty() {
                    labels.push(label.to_string());
                }
            }
            rest = after;
        }
        out.push((name, labels));
    }
    out
}

/// The labels of `by (...)`, `on (...)`, `without (...)`, `ignoring (...)` and
/// `group_left/right (...)` clauses.
fn grouping_labels(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    for keyword in ["by", "on", "without", "ignoring", "group_left", "group_right"] {
        let mut rest = expr;
        while let Some(at) = rest.find(keyword) {
            let before = rest[..at].chars().next_back();
            let after = rest[at + keyword.len()..].trim_start();
            rest = &rest[at + keyword.len()..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            if let Some(list) = after.strip_prefix('(').and_then(|l| l.split_once(')')) {
                out.extend(list.0.split(',').map(str::trim).filter(|l| !l.is_empty()).map(str::to_string));
            }
        }
    }
    out
}
