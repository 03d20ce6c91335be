//! How HPCC's files (`fct.txt`, `pfc.txt`) number a run's nodes.

/// Node ids of the run's hosts and switches in HPCC's files: those of the `topology.txt` the
/// fabric was read from; otherwise hosts first, as HPCC's generated topologies are (host n,
/// from 0, is node n) and switch s is node hosts + s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HpccNodes {
    pub hosts: Vec<u32>,
    pub switches: Vec<u32>,
}

impl HpccNodes {
    pub fn hosts_first(hosts: usize, switches: usize) -> HpccNodes {
        let hosts = hosts as u32;
        HpccNodes { hosts: (0..hosts).collect(), switches: (hosts..hosts + switches as u32).collect() }
    }
}
