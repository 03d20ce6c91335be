//! Loops that flooded frames go round: with the switches' configs in hand (which ports
//! flood), a cycle of trunks where every switch floods on to the next is a broadcast storm
//! in waiting. A switch floods a frame out of every flooding port but the one it came in on,
//! so the check follows links in a direction, never straight back over the same link.

use super::description::{End, Link, Topology};
use super::error::TopologyError;

/// A trunk crossed one way: the link and whether from its `a` end to its `b` end.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Hop {
    link: usize,
    forward: bool,
}

impl Topology {
    /// Refuses the description if frames flooded by some switch come back to it, where
    /// `floods(switch, port)` says whether the switch's config floods out of that port.
    pub fn check_flooding(&self, floods: impl Fn(&str, &str) -> bool) -> Result<(), TopologyError> {
        let Some(cycle) = flooding_cycle(&self.links, &floods) else { return Ok(()) };
        let hops: Vec<String> = cycle
            .iter()
            .map(|hop| {
                let link = &self.links[hop.link];
                let (from, to) = if hop.forward { (&link.a, &link.b) } else { (&link.b, &link.a) };
                format!("{from} → {to}")
            })
            .collect();
        let first = &self.links[cycle[0].link];
        let start = if cycle[0].forward { first.a.node() } else { first.b.node() };
        Err(TopologyError::new(
            &self.file,
            Some(first.line),
            format!(
                "frames flooded by {start} come back to it ({}): a broadcast would go round for ever; turn `flooding` \
                 off on one of these ports in its switch's config (docs/configuration.md#multipath-ecmp)",
                hops.join(", ")
            ),
        ))
    }
}

/// A switch's port: (switch, port).
type PortOf<'a> = (&'a str, &'a str);

/// The trunk's two ends, from `a` to `b` when `forward`.
fn ends(link: &Link, forward: bool) -> Option<(PortOf<'_>, PortOf<'_>)> {
    let (End::Port { switch: a, port: pa }, End::Port { switch: b, port: pb }) = (&link.a, &link.b) else {
        return None;
    };
    let (a, b) = ((a.as_str(), pa.as_str()), (b.as_str(), pb.as_str()));
    Some(if forward { (a, b) } else { (b, a) })
}

/// A cycle of hops, each leaving through a flooding port and none going straight back over
/// the link it came on: depth-first over the hops, a hop met again on the current path closes
/// the cycle.
fn flooding_cycle(links: &[Link], floods: &impl Fn(&str, &str) -> bool) -> Option<Vec<Hop>> {
    let hops: Vec<Hop> = (0..links.len())
        .flat_map(|link| [Hop { link, forward: true }, Hop { link, forward: false }])
        .filter(|hop| ends(&links[hop.link], hop.forward).is_some_and(|((switch, port), _)| floods(switch, port)))
        .collect();
    let next = |hop: &Hop| -> Vec<usize> {
        let (_, (switch, _)) = ends(&links[hop.link], hop.forward).expect("a trunk");
        (0..hops.len())
            .filter(|&i| hops[i].link != hop.link)
            .filter(|&i| ends(&links[hops[i].link], hops[i].forward).is_some_and(|((from, _), _)| from == switch))
            .collect()
    };
    // 0: not visited, 1: on the current path, 2: done (no cycle through it).
    let mut state = vec![0u8; hops.len()];
    for root in 0..hops.len() {
        if state[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, Vec<usize>)> = vec![(root, next(&hops[root]))];
        state[root] = 1;
        while let Some((hop, successors)) = path.last_mut() {
            let hop = *hop;
            match successors.pop() {
                Some(successor) if state[successor] == 1 => {
                    let from = path.iter().position(|(h, _)| *h == successor).expect("on the path");
                    return Some(path[from..].iter().map(|(h, _)| hops[*h]).collect());
                }
                Some(successor) if state[successor] == 0 => {
                    state[successor] = 1;
                    path.push((successor, next(&hops[successor])));
                }
                Some(_) => {}
                None => {
                    state[hop] = 2;
                    path.pop();
                }
            }
        }
    }
    None
}
