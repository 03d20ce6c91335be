//! The Prometheus alert rules shipped in configs/: `promtool check rules` accepts them and
//! `promtool test rules` runs their unit tests (series that fire each alert and series that
//! must not). promtool comes with Debian's `prometheus` package (scripts/setup.sh).

use pfcswitch_tests::topology::repo;
use std::process::Command;

fn promtool(args: &[&str]) -> String {
    let output = Command::new("promtool")
        .args(args)
        .current_dir(repo().join("configs"))
        .output()
        .expect("promtool is missing: scripts/setup.sh installs it (Debian package `prometheus`)");
    let printed = format!("{}{}", String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(output.status.success(), "promtool {args:?} failed:\n{printed}");
    println!("$ promtool {}\n{printed}", args.join(" "));
    printed
}

#[test]
fn the_alert_rules_pass_promtool_check_and_their_unit_tests() {
    let checked = promtool(&["check", "rules", "pfcswitch-alerts.yml"]);
    assert!(checked.contains("SUCCESS: 5 rules found"), "{checked}");
    let tested = promtool(&["test", "rules", "pfcswitch-alerts.test.yml"]);
    assert!(tested.contains("SUCCESS"), "{tested}");
}
