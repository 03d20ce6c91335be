//! Namespaces left by processes that died by a signal (a test run killed, a runner stopped):
//! their guards never ran. A prefix that encodes its owner's pid (`pt4242x3-`, `sc4242-`)
//! lets the next run find them and remove them, daemons first.

use super::{daemons, ip};
use anyhow::Result;

/// Removes the namespaces named `BASE<PID>…` whose PID is no longer alive, after stopping
/// every process inside them. Returns the namespaces removed.
pub fn reap_orphans(base: &str) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    for namespace in ip::namespaces()? {
        let Some(owner) = owner_pid(&namespace, base) else { continue };
        if daemons::alive(owner) {
            continue;
        }
        for pid in pids_in(&namespace) {
            daemons::stop_pid(pid);
        }
        if ip::namespace_del(&namespace).is_ok() {
            removed.push(namespace);
        }
    }
    Ok(removed)
}

/// The pid a namespace name encodes after `base`: `pt4242x3-sw1` → 4242.
fn owner_pid(namespace: &str, base: &str) -> Option<i32> {
    let rest = namespace.strip_prefix(base)?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (pid, after) = rest.split_at(digits);
    // The pid must end at a separator: `pt4242x3-` or `sc4242-`, never a user's `pt2go`.
    (after.starts_with('x') || after.starts_with('-')).then(|| pid.parse().ok()).flatten()
}

fn pids_in(namespace: &str) -> Vec<i32> {
    let output = std::process::Command::new("ip").args(["netns", "pids", namespace]).output();
    let text = output.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()).unwrap_or_default();
    text.split_whitespace().filter_map(|pid| pid.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::owner_pid;

    #[test]
    fn only_a_pid_followed_by_a_separator_is_an_owner() {
        assert_eq!(owner_pid("pt4242x3-sw1", "pt"), Some(4242));
        assert_eq!(owner_pid("sc17-h1", "sc"), Some(17));
        assert_eq!(owner_pid("sc17-tap-sw1-p3", "sc"), Some(17));
        assert_eq!(owner_pid("pt2go", "pt"), None);
        assert_eq!(owner_pid("ptx1-sw1", "pt"), None);
        assert_eq!(owner_pid("pfc-sw1", "pt"), None);
    }
}
