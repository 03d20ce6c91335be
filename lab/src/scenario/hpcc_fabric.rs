//! HPCC's `topology.txt` (`pfcswitch_hpcc::topology`) as a generated fabric for the
//! simulator: its switches in the file's order (`sw1` is the first switch id of its second
//! line), each switch's ports in ns-3's interface order (its k-th link in the file is `p<k>`,
//! as `pfc.txt` and `qlen.txt` number interfaces from 1), its hosts by ascending node id
//! (`h1` is the smallest). Routing is the fabrics' (ECMP over every shortest path, as HPCC's
//! `CalculateRoute` builds it).
//!
//! What the simulator does not model is refused rather than approximated: links of
//! different delays (its cables share the scenario's `cable`, which must equal the file's),
//! host links at another rate than the scenario's `speed`, lossy links (`error_rate` above 0)
//! and a switch of more than 64 ports.

use anyhow::{Result, bail};
use pfcswitch_hpcc::topology::Topology;
use pfcswitch_link::units::BitRate;
use pfcswitch_sim::fabric::{Fabric, Peer};
use std::time::Duration;

/// The fabric of `topology`, whose hosts must link at `speed` and whose links must all be
/// `cable` long.
pub(super) fn fabric(topology: &Topology, speed: BitRate, cable: Duration) -> Result<Fabric> {
    let (hosts, switches) = (topology.hosts(), &topology.switches);
    let host_index = |id: u32| hosts.binary_search(&id).ok();
    let switch_index = |id: u32| switches.iter().position(|&s| s == id);
    for (i, link) in topology.links.iter().enumerate() {
        let line = || format!("link {} ({} {})", i + 1, link.a, link.b);
        if u128::from(link.delay_ns) != cable.as_nanos() {
            bail!(
                "{}: {} ns; the simulator's cables share one delay, the scenario's cable = {:?}: set `cable` to the file's",
                line(),
                link.delay_ns,
                cable
            );
        }
        if link.error_rate > 0.0 {
            bail!("{}: error rate {}; lossy links are not simulated on a fabric", line(), link.error_rate);
        }
        if (host_index(link.a).is_some() || host_index(link.b).is_some()) && link.rate_bps != speed.bps() {
            bail!("{}: a host link at {} bit/s; the scenario's hosts are at {speed}", line(), link.rate_bps);
        }
    }
    let mut ports = Vec::with_capacity(switches.len());
    let mut attached = vec![None; hosts.len()];
    for (s, &id) in switches.iter().enumerate() {
        let interfaces = topology.interfaces(id);
        if interfaces.len() > 64 {
            bail!("switch {id} has {} ports; a switch has at most 64", interfaces.len());
        }
        let switch_ports = interfaces.iter().enumerate().map(|(p, &(link, peer))| {
            let rate = BitRate::from_bps(topology.links[link].rate_bps).expect("read as above 0");
            let far = match (host_index(peer), switch_index(peer)) {
                (Some(h), _) => {
                    attached[h] = Some((s, p));
                    Peer::Host(h)
                }
                (None, Some(t)) => {
                    let far_port = topology.interfaces(peer).iter().position(|&(l, _)| l == link);
                    Peer::Switch((t, far_port.expect("a link is an interface of both ends")))
                }
                (None, None) => unreachable!("every node is a host or a switch"),
            };
            (far, rate)
        });
        ports.push(switch_ports.collect());
    }
    let hosts = attached.into_iter().map(|at| at.expect("every host has its one link, to a switch")).collect();
    Ok(Fabric { ports, hosts })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn hpccs_fat_tree_keeps_its_numbering_and_routes_every_pair() {
        let fabric = fabric(&Topology::hpcc_fat_tree(), BitRate::gbps(100), Duration::from_micros(1)).unwrap();
        assert_eq!((fabric.switch_count(), fabric.hosts.len()), (56, 320));
        // Host 17 is on the second ToR (sw2), its second port; the ToR's 17th port is its
        // first aggregation (sw21, whose second port it is) at 400 Gbit/s.
        assert_eq!(fabric.hosts[17], (1, 1));
        assert_eq!(fabric.ports[1][16], (Peer::Switch((20, 1)), BitRate::gbps(400)));
        let routes = fabric.routes();
        assert!(
            routes.iter().all(|per_host| per_host.iter().all(|&mask| mask != 0)),
            "every switch reaches every host"
        );
        // From a ToR to a host in another pod: its four aggregations (ports 17 to 20).
        assert_eq!(routes[0][319], 0b1111 << 16);
    }

    #[test]
    fn what_the_simulator_does_not_model_is_refused() {
        let read = |text: &str| Topology::parse(text, Path::new("t.txt")).unwrap();
        let refused =
            |text: &str| fabric(&read(text), BitRate::gbps(100), Duration::from_micros(1)).unwrap_err().to_string();
        assert!(refused("3 1 2\n2\n0 2 100Gbps 2us 0\n1 2 100Gbps 1us 0\n").contains("link 1 (0 2): 2000 ns"));
        assert!(refused("3 1 2\n2\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0.1\n").contains("link 2 (1 2): error rate 0.1"));
        assert!(
            refused("3 1 2\n2\n0 2 25Gbps 1us 0\n1 2 100Gbps 1us 0\n").contains("a host link at 25000000000 bit/s")
        );
    }
}
