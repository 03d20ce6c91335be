//! The Debian package (`scripts/package-deb.sh`, docs/packaging.md) as an operator meets it:
//! apt installs it; `man` and bash find its pages and completions; systemd-analyze accepts its
//! unit; the installed `pfcswitch topology up` runs star3 on the installed pfcswitchd, its data
//! and its example configuration, and carries pings; `apt-get remove` stops that daemon, which
//! no systemd started, and leaves no XDP program attached; a purge takes the conffile.

use pfcswitch_tests::require_root;
use pfcswitch_tests::topology::{repo, serial, unique_prefix};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

const DAEMON: &str = "/usr/sbin/pfcswitchd";
const CLIENT: &str = "/usr/bin/pfcswitch";

fn run(program: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let output = Command::new(program).args(args).envs(env.iter().copied()).output().expect(program);
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn text(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn apt_get(args: &[&str]) -> Output {
    let mut all = vec!["-y", "-q", "--no-install-recommends"];
    all.extend_from_slice(args);
    run("apt-get", &all, &[("DEBIAN_FRONTEND", "noninteractive")])
}

fn package_status() -> String {
    let output = Command::new("dpkg-query").args(["-W", "-f=${Status}", "pfcswitch"]).output().expect("dpkg-query");
    let status = String::from_utf8_lossy(&output.stdout).into_owned();
    // A purged package may stay known to dpkg as not installed.
    if status.ends_with("not-installed") { String::new() } else { status }
}

/// Purges the package however the test ends, so a failed run leaves the machine as it was.
struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        if !package_status().is_empty() {
            let _ = Command::new("apt-get")
                .args(["-y", "-q", "purge", "pfcswitch"])
                .env("DEBIAN_FRONTEND", "noninteractive")
                .output();
        }
    }
}

/// star3 brought up by the installed client; torn down by the library (the client is gone
/// by then), also on panic.
struct Star3 {
    description: pfcswitch_topology::Topology,
    prefix: String,
}

impl Star3 {
    fn up() -> Star3 {
        let prefix = unique_prefix();
        let description = pfcswitch_topology::Topology::find("star3", &repo().join("topologies")).expect("star3");
        let star3 = Star3 { description, prefix };
        // The operator's environment: nothing points at the checkout.
        let output = Command::new(CLIENT)
            .args(["topology", "up", "star3", "--prefix", &star3.prefix])
            .env_remove("PFCSWITCH_ROOT")
            .env_remove("PFCSWITCHD")
            .current_dir("/")
            .output()
            .expect("the installed pfcswitch");
        assert!(output.status.success(), "pfcswitch topology up star3: {}", String::from_utf8_lossy(&output.stderr));
        star3
    }

    fn ns(&self, node: &str) -> String {
        format!("{}{node}", self.prefix)
    }

    fn daemon_pid(&self) -> i32 {
        let file = format!("/run/pfcswitch/{}.pid", self.ns("sw1"));
        std::fs::read_to_string(&file).expect(&file).trim().parse().expect("a pid")
    }

    fn has_xdp(&self) -> bool {
        text(&run("ip", &["-n", &self.ns("sw1"), "-d", "link", "show"], &[])).contains("prog/xdp")
    }
}

impl Drop for Star3 {
    fn drop(&mut self) {
        if let Err(error) = pfcswitch_lab::netns::down(&self.description, &self.prefix, None) {
            eprintln!("star3 down: {error:#}");
        }
    }
}

fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Every process running the packaged daemon's binary (`/usr/sbin/pfcswitchd`, or it deleted).
fn packaged_daemons() -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        if let Ok(exe) = std::fs::read_link(entry.path().join("exe"))
            && exe.to_string_lossy().starts_with(DAEMON)
        {
            found.push(format!("{} ({})", entry.file_name().to_string_lossy(), exe.display()));
        }
    }
    found
}

fn build_package(out: &Path) -> PathBuf {
    let output = Command::new(repo().join("scripts/package-deb.sh"))
        .arg(out)
        .env("PFCSWITCH_SKIP_SETUP", "1")
        .output()
        .expect("scripts/package-deb.sh");
    assert!(output.status.success(), "package-deb.sh: {}", String::from_utf8_lossy(&output.stderr));
    let deb = PathBuf::from(text(&output).lines().last().expect("the .deb's path").trim());
    assert!(deb.extension().is_some_and(|e| e == "deb") && deb.is_file(), "{}", deb.display());
    deb
}

fn check_contents(deb: &Path) {
    let listing = text(&run("dpkg-deb", &["--contents", deb.to_str().unwrap()], &[]));
    for path in [
        "./usr/bin/pfcswitch",
        "./usr/sbin/pfcswitchd",
        "./lib/systemd/system/pfcswitchd@.service",
        "./etc/pfcswitch/example.toml",
        "./usr/share/man/man1/pfcswitch.1.gz",
        "./usr/share/man/man1/pfcswitch-pfcstat.1.gz",
        "./usr/share/man/man8/pfcswitchd.8.gz",
        "./usr/share/bash-completion/completions/pfcswitch",
        "./usr/share/zsh/vendor-completions/_pfcswitch",
        "./usr/share/fish/vendor_completions.d/pfcswitchd.fish",
        "./usr/share/pfcswitch/prometheus/pfcswitch-alerts.yml",
        "./usr/share/pfcswitch/grafana/pfcswitch.json",
        "./usr/share/pfcswitch/grafana/provisioning/dashboards/pfcswitch.yml",
        "./usr/share/pfcswitch/topologies/star3.toml",
        "/wireshark/plugins/pfcswitch.lua",
        "./usr/share/doc/pfcswitch/copyright",
    ] {
        assert!(listing.contains(path), "the package lacks {path}:\n{listing}");
    }
    let conffiles = text(&run("dpkg-deb", &["--info", deb.to_str().unwrap(), "conffiles"], &[]));
    assert_eq!(conffiles.trim(), "/etc/pfcswitch/example.toml");
}

fn check_manuals() {
    let env = [("MANPAGER", "cat"), ("MANWIDTH", "100"), ("LANG", "C.UTF-8")];
    let located = text(&run("man", &["-w", "pfcswitch"], &env));
    assert_eq!(located.trim(), "/usr/share/man/man1/pfcswitch.1.gz");
    let client = text(&run("man", &["pfcswitch"], &env));
    for expected in ["SYNOPSIS", "pfcstat", "completions", "pfcswitchd(8)"] {
        assert!(client.contains(expected), "man pfcswitch lacks {expected}:\n{client}");
    }
    let subcommand = text(&run("man", &["pfcswitch-pfc-show"], &env));
    assert!(subcommand.contains("pfcswitch pfc show"), "man pfcswitch-pfc-show:\n{subcommand}");
    let daemon = text(&run("man", &["8", "pfcswitchd"], &env));
    for expected in ["--config", "--check", "SIGHUP", "/etc/pfcswitch/NAME.toml"] {
        assert!(daemon.contains(expected), "man 8 pfcswitchd lacks {expected}:\n{daemon}");
    }
}

/// What bash offers for the last of `words` (`""` after a space), from the installed script.
fn bash_completes(words: &[&str]) -> String {
    let quoted: Vec<String> = words.iter().map(|word| format!("'{word}'")).collect();
    let script = format!(
        ". /usr/share/bash-completion/completions/pfcswitch; COMP_WORDS=({}); \
         COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE=\"${{COMP_WORDS[*]}}\"; COMP_POINT=${{#COMP_LINE}}; \
         _pfcswitch pfcswitch \"${{COMP_WORDS[-1]}}\" \"${{COMP_WORDS[-2]}}\"; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        quoted.join(" ")
    );
    text(&run("bash", &["-c", &script], &[]))
}

fn check_unit() {
    let dir = tempfile::tempdir().unwrap();
    let instance = dir.path().join("pfcswitchd@sw1.service");
    std::os::unix::fs::symlink("/lib/systemd/system/pfcswitchd@.service", &instance).unwrap();
    // verify also checks that ExecStart's binary exists and that man:pfcswitchd(8) resolves.
    let output = Command::new("systemd-analyze").arg("verify").arg(&instance).output().expect("systemd-analyze");
    let complaints = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success() && complaints.trim().is_empty(), "systemd-analyze verify: {complaints}");
    let unit = std::fs::read_to_string("/lib/systemd/system/pfcswitchd@.service").unwrap();
    assert!(unit.contains("ExecStart=/usr/sbin/pfcswitchd --config /etc/pfcswitch/%i.toml\n"), "{unit}");
}

#[test]
fn the_debian_package_installs_runs_its_daemon_and_leaves_nothing_behind_on_removal() {
    let _serial = serial();
    require_root();
    let out = tempfile::tempdir().unwrap();
    let deb = build_package(out.path());
    check_contents(&deb);

    let installed = Installed;
    apt_get(&["install", deb.to_str().unwrap()]);
    assert_eq!(package_status(), "install ok installed");
    assert!(!Path::new("/etc/systemd/system/multi-user.target.wants/pfcswitchd@example.service").exists());
    check_manuals();
    let offered = bash_completes(&["pfcswitch", "pfcs"]);
    assert_eq!(offered.trim(), "pfcstat", "bash completion of `pfcswitch pfcs`");
    let offered = bash_completes(&["pfcswitch", "topology", ""]);
    for subcommand in ["up", "down", "describe", "list", "relink"] {
        assert!(offered.lines().any(|line| line == subcommand), "`pfcswitch topology <TAB>` offers {offered:?}");
    }
    check_unit();
    let plugins = text(&run("tshark", &["-G", "plugins"], &[]));
    assert!(
        plugins.lines().any(|l| l.contains("pfcswitch.lua") && l.contains("lua script")),
        "tshark -G plugins:\n{plugins}"
    );
    let checked = text(&run(DAEMON, &["--config", "/etc/pfcswitch/example.toml", "--check"], &[]));
    assert!(checked.contains("valid (3 ports, policy pfc)"), "{checked}");

    let star3 = Star3::up();
    let pid = star3.daemon_pid();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    assert_eq!(exe, Path::new(DAEMON), "topology up started the packaged daemon");
    let cmdline = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap().replace('\0', " ");
    assert!(cmdline.contains("/usr/share/pfcswitch/"), "the installed topology's config: {cmdline}");
    assert!(star3.has_xdp(), "the daemon attached its classifier");
    let h3 = star3.description.host_addresses("h3").expect("h3").ipv4.to_string();
    run("ip", &["netns", "exec", &star3.ns("h1"), "ping", "-c", "3", "-i", "0.2", "-W", "2", &h3], &[]);
    let socket = pfcswitch_lab::netns::socket_path(&star3.ns("sw1"));
    let ports: serde_json::Value =
        serde_json::from_str(&text(&run(CLIENT, &["-s", socket.to_str().unwrap(), "-j", "ports"], &[]))).unwrap();
    println!("installed pfcswitch ports: {ports}");
    let port = |name: &str| ports.as_array().unwrap().iter().find(|p| p["port"] == name).expect(name).clone();
    assert!(port("p1")["rx_frames"].as_u64() >= Some(3) && port("p3")["tx_frames"].as_u64() >= Some(3), "{ports}");

    apt_get(&["remove", "pfcswitch"]);
    assert_eq!(package_status(), "deinstall ok config-files");
    pfcswitch_tests::wait_until("the removed package's daemon has exited", Duration::from_secs(20), || !alive(pid));
    assert_eq!(packaged_daemons(), Vec::<String>::new(), "no process runs the packaged daemon");
    assert!(!star3.has_xdp(), "no XDP program stays attached after apt-get remove");
    assert!(Path::new("/etc/pfcswitch/example.toml").exists(), "remove keeps the conffile");
    assert!(!Path::new(CLIENT).exists() && !Path::new(DAEMON).exists());

    apt_get(&["purge", "pfcswitch"]);
    assert_eq!(package_status(), "", "purged");
    assert!(!Path::new("/etc/pfcswitch/example.toml").exists(), "purge removes the conffile");
    drop(star3);
    drop(installed);
}
