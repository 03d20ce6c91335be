use super::*;
use pfcswitch_link::units::BitRate;
use pfcswitch_wire::{EthernetAddress, Ipv4Addr};
use std::path::Path;
use std::time::Duration;

fn parse(text: &str) -> Result<Topology, TopologyError> {
    Topology::parse(text, Path::new("/x/mine.toml"))
}

/// The line and reason of a refusal.
fn refusal(text: &str) -> (Option<usize>, String) {
    let error = parse(text).expect_err("refused");
    assert_eq!(error.file, Path::new("/x/mine.toml"));
    (error.line, error.reason)
}

const TWO_SWITCHES: &str = r#"
switches = ["sw1", "sw2"]
hosts = ["h1", "h2"]
configs = "configs"
links = [
  "sw1:p1 h1",
  "h2 sw2:p1",
  { a = "sw1:p2", b = "sw2:p2", speed = "40Gbps", delay = "2us", loss = 0.001, mtu = 9000 },
]

[defaults]
speed = "10Gbps"
delay = "1us"
"#;

#[test]
fn links_take_the_defaults_they_do_not_set_and_put_the_switch_end_first() {
    let t = parse(TWO_SWITCHES).unwrap();
    assert_eq!(t.name, "mine");
    assert_eq!(t.configs.as_deref(), Some(Path::new("/x/configs")));
    let names: Vec<_> = t.links.iter().map(Link::name).collect();
    assert_eq!(names, ["sw1:p1-h1", "sw2:p1-h2", "sw1:p2-sw2:p2"]);
    let host_link = &t.links[1];
    assert_eq!(
        (host_link.speed, host_link.delay, host_link.loss, host_link.mtu),
        (BitRate::gbps(10), Duration::from_micros(1), 0.0, 1500)
    );
    let trunk = &t.links[2];
    assert_eq!(
        (trunk.speed, trunk.delay, trunk.loss, trunk.mtu),
        (BitRate::gbps(40), Duration::from_micros(2), 0.001, 9000)
    );
    assert!(trunk.is_trunk() && !host_link.is_trunk());
    assert_eq!(trunk.line, 8);
    assert_eq!(t.link_at("h2").unwrap().name(), "sw2:p1-h2");
    assert_eq!(t.link_at("sw2:p2").unwrap().name(), "sw1:p2-sw2:p2");
    let ports: Vec<_> = t.ports_of("sw2").map(|(port, _)| port).collect();
    assert_eq!(ports, ["p1", "p2"]);
    let h2 = t.host_addresses("h2").unwrap();
    assert_eq!(
        (h2.mac, h2.ipv4, h2.ipv6.to_string()),
        (EthernetAddress([2, 0, 0, 0, 0, 2]), Ipv4Addr::new(10, 0, 0, 2), "fd00::2".into())
    );
}

#[test]
fn every_refusal_names_the_line_and_the_reason() {
    let cases: &[(&str, usize, &str)] = &[
        ("links = [\"sw1:p1 h1\", \"sw1:p1 h2\"]", 5, "port sw1:p1 is already on the link of line 5"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2 h1\", \"sw1:p3 h2\"]", 5, "host h1 is already on the link of line 5"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2 h9\"]", 5, "unknown node `h9`"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2 sw3:p1\"]", 5, "unknown node `sw3`"),
        ("links = [\"sw1:p1 h1\", \"h2 h1\"]", 5, "joins two hosts"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2 sw1\"]", 5, "`sw1` is a switch: name its port"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2 h2:eth0\"]", 5, "`h2` is a host"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2 sw1:p3\"]", 5, "joins sw1 to itself"),
        ("links = [\"sw1:p1 h1\", \"sw1:this-is-far-too-long h2\"]", 5, "must be 1 to 15 characters"),
        ("links = [\"sw1:p1 h1\", \"sw1:p2  h2 h3\"]", 5, "must be two ends"),
        ("links = [\"sw1:p1 h1\", { a = \"sw1:p2\", b = \"h2\", loss = 1.0 }]", 5, "loss = 1 is not a fraction"),
        ("links = [\"sw1:p1 h1\", { a = \"sw1:p2\", b = \"h2\", mtu = 100 }]", 5, "mtu = 100 is outside 1280..=9000"),
        ("links = [\"sw1:p1 h1\", { a = \"sw1:p2\", b = \"h2\", delay = \"5 parsecs\" }]", 5, "delay: "),
        ("links = [\"sw1:p1 h1\", { a = \"sw1:p2\", b = \"h2\", sped = \"1Gbps\" }]", 5, "unknown field `sped`"),
        ("links = [\"sw1:p1 h1\"]", 3, "host `h2` has no link"),
    ];
    for (links, line, reason) in cases {
        let text = format!(
            "switches = [\"sw1\", \"sw2\"]\n\nhosts = [\"h1\", \"h2\"]\n\n{links}\n\n[defaults]\nspeed = \"1Gbps\"\n"
        );
        let text = text.replace("switches = [\"sw1\", \"sw2\"]", "switches = [\"sw1\"]");
        let (got_line, got_reason) = refusal(&text);
        assert_eq!(got_line, Some(*line), "{links}: {got_reason}");
        assert!(got_reason.contains(reason), "{links}: `{got_reason}` lacks `{reason}`");
    }
}

#[test]
fn a_missing_speed_a_split_fabric_and_bad_names_are_refused() {
    let (line, reason) = refusal("switches = [\"sw1\"]\nhosts = [\"h1\"]\nlinks = [\"sw1:p1 h1\"]\n");
    assert_eq!(line, Some(3));
    assert!(reason.contains("has no speed, and [defaults] sets none"), "{reason}");
    let split = "switches = [\"sw1\", \"sw2\"]\nhosts = [\"h1\", \"h2\"]\nlinks = [\"sw1:p1 h1\", \"sw2:p1 h2\"]\n[defaults]\nspeed = \"1Gbps\"\n";
    let (line, reason) = refusal(split);
    assert_eq!(line, Some(1));
    assert!(reason.contains("`sw2` cannot reach `sw1`"), "{reason}");
    let (line, reason) = refusal("switches = [\"sw 1\"]\nhosts = []\nlinks = []\n");
    assert_eq!(line, Some(1));
    assert!(reason.contains("` ` is not allowed"), "{reason}");
    let (line, reason) = refusal("switches = [\"sw1\"]\nhosts = [\"sw1\"]\nlinks = []\n");
    assert_eq!(line, Some(1));
    assert!(reason.contains("named twice"), "{reason}");
    let (line, reason) = refusal("switches = [\"sw1\"]\nlinks = []\ncolour = \"red\"\n");
    assert_eq!(line, Some(3));
    assert!(reason.contains("unknown field `colour`"), "{reason}");
}

#[test]
fn the_built_ins_load_and_find_takes_a_name_or_a_path() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../topologies");
    let names = builtins(&dir);
    // The eight of topology.sh's days stay; later ones may join them.
    let former =
        ["dumbbell", "dumbbell-32", "leaf-spine", "leaf-spine-2s", "leaf-spine-4", "ofc-fig1", "star3", "star8"];
    assert!(former.iter().all(|f| names.iter().any(|n| n == f)), "{names:?}");
    for name in &names {
        let topology = Topology::find(name, &dir).unwrap_or_else(|e| panic!("{e}"));
        for switch in &topology.switches {
            let config = topology.config_of(switch).unwrap();
            assert!(config.is_file(), "{name}: {switch}'s config {} exists", config.display());
        }
    }
    let by_path = Topology::find(dir.join("star3.toml").to_str().unwrap(), &dir).unwrap();
    assert_eq!(by_path.links.len(), 3);
    let error = Topology::find("star4", &dir).unwrap_err();
    assert!(error.reason.contains("built-ins: dumbbell, dumbbell-32, leaf-spine"), "{error}");
}

#[test]
fn a_description_written_out_reads_back_the_same() {
    let mut original = parse(TWO_SWITCHES).unwrap();
    original.links[0].loss = 0.25;
    original.links[1].delay = Duration::ZERO;
    let text = original.to_toml();
    let again = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let strip =
        |t: &Topology| -> Vec<_> { t.links.iter().map(|l| (l.name(), l.speed, l.delay, l.loss, l.mtu)).collect() };
    assert_eq!(strip(&again), strip(&original), "{text}");
    assert_eq!(
        (&again.switches, &again.hosts, &again.configs),
        (&original.switches, &original.hosts, &original.configs)
    );
    assert!(text.contains("\"sw2:p1 h2\""), "defaults stay implicit: {text}");
}

#[test]
fn existing_interfaces_bind_free_switch_ports_and_write_back_out() {
    let with = |table: &str| format!("{TWO_SWITCHES}\n[interfaces]\n{table}");
    let topology = parse(&with("\"sw1:p9\" = \"enp3s0\"\n\"sw2:p9\" = \"veth.ctr1\"\n")).unwrap();
    let bound: Vec<_> = topology.interfaces.iter().map(|i| (i.end.to_string(), i.iface.as_str(), i.line)).collect();
    assert_eq!(bound, [("sw1:p9".to_string(), "enp3s0", 16), ("sw2:p9".to_string(), "veth.ctr1", 17)]);
    let again = parse(&topology.to_toml()).unwrap();
    assert_eq!(
        again.interfaces.iter().map(|i| (&i.end, &i.iface)).collect::<Vec<_>>(),
        [
            (&topology.interfaces[0].end, &topology.interfaces[0].iface),
            (&topology.interfaces[1].end, &topology.interfaces[1].iface)
        ]
    );
    let refused = |table: &str| refusal(&with(table));
    assert_eq!(refused("\"sw1:p1\" = \"enp3s0\"\n"), (Some(16), "port sw1:p1 is already on line 6".into()));
    assert_eq!(refused("\"h1\" = \"enp3s0\"\n").1, "interfaces: `h1` is not a switch port (`SWITCH:PORT`)");
    assert_eq!(refused("\"sw7:p1\" = \"enp3s0\"\n").1, "interfaces: unknown switch `sw7`");
    assert_eq!(
        refused("\"sw1:p8\" = \"enp3s0\"\n\"sw1:p9\" = \"enp3s0\"\n"),
        (Some(17), "interface `enp3s0` is bound twice".into())
    );
    assert!(refused("\"sw1:p9\" = \"a-very-long-interface\"\n").1.contains("not a Linux interface name"));
}

#[test]
fn machines_split_the_fabric_and_the_links_between_them_are_tunnels_both_ends_agree_on() {
    let with = |tables: &str| format!("{TWO_SWITCHES}\n{tables}");
    let machines = "[machines]\nleft = { address = \"192.0.2.1\", switches = [\"sw1\"] }\nright = { address = \"192.0.2.2\", switches = [\"sw2\"] }\n";
    let topology = parse(&with(machines)).unwrap();
    assert_eq!(topology.machine_of("h2").map(|m| m.name.as_str()), Some("right"));
    assert_eq!(topology.machine("left").map(|m| m.line), Some(16));
    assert!(topology.runs_on("h1", Some("left")) && !topology.runs_on("sw2", Some("left")));
    assert!(topology.runs_on("sw2", None), "an unsplit build runs everything");
    let trunk = &topology.links[2];
    let left = topology.tunnel(trunk, Some("left")).unwrap();
    let right = topology.tunnel(trunk, Some("right")).unwrap();
    assert_eq!((left.vni, left.port, right.vni), (FIRST_VNI + 2, VXLAN_PORT, FIRST_VNI + 2));
    assert_eq!((left.local, left.remote), (right.remote, right.local));
    assert_eq!(topology.tunnel(&topology.links[0], Some("left")), None, "a host link stays on its machine");
    assert_eq!(topology.tunnel(trunk, None), None, "an unsplit build has no tunnels");
    let again = parse(&with(&format!("{machines}\n[vxlan]\nport = 8472\nvni = 70\n"))).unwrap();
    assert_eq!(again.vxlan, VxlanSettings { port: 8472, first_vni: 70 });
    let written = parse(&again.to_toml()).unwrap();
    let placement =
        |t: &Topology| t.machines.iter().map(|m| (m.name.clone(), m.address, m.switches.clone())).collect::<Vec<_>>();
    assert_eq!((placement(&written), written.vxlan), (placement(&again), again.vxlan));

    let refused = |tables: &str| refusal(&with(tables));
    assert_eq!(
        refused("[machines]\nleft = { address = \"192.0.2.1\", switches = [\"sw1\"] }\n"),
        (Some(16), "switch sw2 is on no machine: [machines] must place every switch".into())
    );
    assert_eq!(
        refused(
            "[machines]\nleft = { address = \"192.0.2.1\", switches = [\"sw1\", \"sw2\"] }\nright = { address = \"192.0.2.2\", switches = [\"sw2\"] }\n"
        ),
        (Some(17), "switch sw2 is on machine left (line 16) already".into())
    );
    assert_eq!(
        refused("[machines]\nleft = { address = \"192.0.2.1\", switches = [\"sw1\", \"sw9\"] }\n").1,
        "machine left: unknown switch `sw9`"
    );
    assert_eq!(
        refused("[machines]\nleft = { address = \"192.0.2.1\", switches = [\"sw1\"] }\nright = { address = \"192.0.2.1\", switches = [\"sw2\"] }\n").1,
        "machines left and right both have address 192.0.2.1"
    );
    assert_eq!(
        refused(
            "[machines]\nleft = { address = \"192.0.2.1\", switches = [\"sw1\"] }\nright = { address = \"2001:db8::2\", switches = [\"sw2\"] }\n"
        ),
        (Some(8), "link sw1:p2-sw2:p2 joins machine left over IPv4 and right over IPv6".into())
    );
    assert_eq!(refused(&format!("{machines}[vxlan]\nvni = 16777214\n")).0, Some(18));
    assert!(
        refused("[machines]\nleft = { address = \"nowhere\", switches = [\"sw1\"] }\n")
            .1
            .contains("invalid IP address")
    );
}

#[test]
fn a_loop_of_flooding_switches_is_refused_and_a_flooding_tree_is_not() {
    let ring = "switches = [\"sw1\", \"sw2\", \"sw3\"]\nhosts = [\"h1\"]\nlinks = [\n  \"sw1:p1 h1\",\n  \"sw1:p2 sw2:p1\",\n  \"sw2:p2 sw3:p1\",\n  \"sw3:p2 sw1:p3\",\n]\n[defaults]\nspeed = \"1Gbps\"\n";
    let topology = parse(ring).unwrap();
    let error = topology.check_flooding(|_, _| true).unwrap_err();
    assert_eq!(error.file, Path::new("/x/mine.toml"));
    assert!(
        error.reason.contains("sw1:p2 → sw2:p1, sw2:p2 → sw3:p1, sw3:p2 → sw1:p3")
            || error.reason.contains("sw1:p3 → sw3:p2, sw3:p1 → sw2:p2, sw2:p1 → sw1:p2"),
        "{error}"
    );
    assert!(error.reason.contains("turn `flooding` off"), "{error}");
    // A ring is broken by a link whose two ends flood nothing; one end alone leaves the
    // other way round.
    let off = |ends: &'static [(&str, &str)]| move |switch: &str, port: &str| !ends.contains(&(switch, port));
    assert!(topology.check_flooding(off(&[("sw3", "p2")])).is_err());
    topology.check_flooding(off(&[("sw3", "p2"), ("sw1", "p3")])).unwrap();
    // Frames never go straight back over the link they came on: two switches on one link flood freely.
    let pair = parse(&TWO_SWITCHES.replace("configs = \"configs\"\n", "")).unwrap();
    pair.check_flooding(|_, _| true).unwrap();
    // Two links between the same two switches are a loop.
    let doubled = TWO_SWITCHES.replace("  \"h2 sw2:p1\",\n", "  \"h2 sw2:p1\",\n  \"sw1:p3 sw2:p3\",\n");
    assert!(parse(&doubled).unwrap().check_flooding(|_, _| true).is_err());
    // The built-in multipath topology floods along a tree, with its own configs.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../topologies");
    let leaf_spine = Topology::find("leaf-spine-2s", &dir).unwrap();
    assert!(leaf_spine.check_flooding(|_, _| true).is_err(), "two spines are a loop when every port floods");
}
