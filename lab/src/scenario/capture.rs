//! `scenario run --capture`: every frame of chosen links, both ways, one pcap per link.
//!
//! A captured link is built through a tap namespace (`pfcswitch_lab::netns`, `--tap`): tc mirred passes
//! its frames across unchanged, and tcpdump there sees them. Taps at the link's ends would
//! see nothing: switch ports and scenario endpoints send and receive through AF_XDP, whose
//! frames never pass the kernel's taps.

use super::namespaces::Topology;
use anyhow::{Context, Result, bail};
use pfcswitch_topology::Link;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The links `--capture` names, among the topology's `links`: `all`, a host (its link) or
/// `SW:PORT` (the link at that port); each once, in the order asked.
pub(super) fn links_to_capture<'a>(asked: &[String], links: &'a [Link]) -> Result<Vec<&'a Link>> {
    if asked.iter().any(|a| a == "all") {
        return Ok(links.iter().collect());
    }
    let mut chosen = Vec::new();
    for end in asked {
        let Some(link) = links.iter().find(|link| link.has_end(end)) else {
            bail!("--capture {end}: no link of this topology ends there (a host, SW:PORT or `all`)");
        };
        if !chosen.contains(&link) {
            chosen.push(link);
        }
    }
    Ok(chosen)
}

/// The pcap of `link` in `dir`: `sw1:p3-sw2:p1` → `sw1.p3-sw2.p1.pcap`.
pub(super) fn pcap_path(dir: &Path, link: &str) -> PathBuf {
    dir.join(format!("{}.pcap", link.replace(':', ".")))
}

/// Running captures; killed on drop if not stopped.
pub(super) struct Captures {
    running: Vec<(Child, PathBuf)>,
}

impl Captures {
    /// Starts tcpdump on each tapped link, writing [`pcap_path`] in `dir`; returns once every
    /// one is listening, so that no frame of the run is missed.
    pub(super) fn start(topology: &Topology, links: &[String], dir: &Path) -> Result<Captures> {
        let mut captures = Captures { running: Vec::new() };
        if !links.is_empty() {
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        }
        for link in links {
            let (namespace, iface) = topology.tap(link);
            let path = pcap_path(dir, link);
            let mut child = Command::new("ip")
                .args(["netns", "exec", &namespace, "tcpdump", "-i", iface, "-U", "--immediate-mode", "-w"])
                .arg(&path)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .with_context(|| format!("cannot start tcpdump on {link} (scripts/setup.sh installs it)"))?;
            let mut stderr = BufReader::new(child.stderr.take().expect("piped"));
            let mut line = String::new();
            while !line.contains("listening on") {
                line.clear();
                if stderr.read_line(&mut line)? == 0 {
                    let _ = child.wait();
                    bail!("tcpdump on {link} exited before listening: {}", line.trim());
                }
            }
            // Its closing statistics go to a pipe nobody else reads.
            std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
            captures.running.push((child, path));
        }
        Ok(captures)
    }

    /// Stops every capture (SIGINT, so tcpdump flushes its file); returns the files.
    pub(super) fn stop(mut self) -> Result<Vec<PathBuf>> {
        let mut files = Vec::new();
        for (mut child, path) in std::mem::take(&mut self.running) {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let status = child.wait()?;
            if !status.success() {
                bail!("tcpdump writing {} failed ({status})", path.display());
            }
            files.push(path);
        }
        Ok(files)
    }
}

impl Drop for Captures {
    fn drop(&mut self) {
        for (child, _) in &mut self.running {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_names_a_link_by_a_host_a_port_or_all() {
        let text = r#"
            switches = ["sw1", "sw2"]
            hosts = ["h1", "h3"]
            links = ["sw1:p1 h1", "sw1:p3 sw2:p1", "sw2:p2 h3"]
            [defaults]
            speed = "10Gbps"
        "#;
        let topology = pfcswitch_topology::Topology::parse(text, Path::new("test.toml")).unwrap();
        let pick = |asked: &[&str]| -> Result<Vec<String>> {
            let asked: Vec<String> = asked.iter().map(|a| a.to_string()).collect();
            Ok(links_to_capture(&asked, &topology.links)?.into_iter().map(Link::name).collect())
        };
        assert_eq!(pick(&["h1", "sw2:p1", "sw1:p3"]).unwrap(), ["sw1:p1-h1", "sw1:p3-sw2:p1"]);
        assert_eq!(pick(&["all"]).unwrap(), ["sw1:p1-h1", "sw1:p3-sw2:p1", "sw2:p2-h3"]);
        let error = pick(&["h9"]).unwrap_err().to_string();
        assert!(error.contains("--capture h9: no link"), "{error}");
        assert_eq!(pcap_path(Path::new("c"), "sw1:p3-sw2:p1"), Path::new("c/sw1.p3-sw2.p1.pcap"));
    }
}
