//! The network's nodes and the ends of its links.

/// A node of the network.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Node {
    Switch(usize),
    Host(usize),
}

/// One end of a link: a node and its port (hosts have port 0 only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Endpoint {
    pub node: Node,
    pub port: usize,
}

impl Endpoint {
    pub const fn switch(index: usize, port: usize) -> Endpoint {
        Endpoint { node: Node::Switch(index), port }
    }

    pub const fn host(index: usize) -> Endpoint {
        Endpoint { node: Node::Host(index), port: 0 }
    }
}
