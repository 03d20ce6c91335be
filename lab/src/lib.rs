//! pfcswitch's experiments: what `pfcswitch scenario` and `pfcswitch traffic` do. A scenario
//! (a plan: topology, switch configs, policy, transport and a workload of traffic classes) is
//! run on the real datapath (namespaces, one `pfcswitchd` per switch, an AF_XDP endpoint per
//! host) or on the simulator (`pfcswitch-sim`), and what happened becomes `results.json`, a
//! report and plots. The direction is one way: plan → run → results → report.
//!
//! - [`scenario`]: scenario files, the runner on either engine and its hosts' AF_XDP
//!   process ([`scenario::endpoint`]), results, reports, sweeps of policies and seeds, the
//!   deadlock experiment;
//! - [`workload`]: traffic classes turned into connections and messages from a seed;
//! - [`flow_sizes`]: empirical flow-size distributions (WebSearch, Data Mining, Hadoop,
//!   Storage: `workloads/*.cdf`) and sampling from them; [`hpcc_traffic`]: HPCC's
//!   `traffic_gen.py` flows with them;
//! - [`traffic`]: AF_PACKET endpoints for a host (send, receive, storm);
//! - [`plot`], [`table`]: figures and text tables; [`control`]: the daemon's control client;
//!   [`repository`]: where built-in scenarios, configs and workloads are read from;
//!   [`stats`]: quantiles and the like, shared by the reports.
//!
//! It holds no switch, host or simulator logic of its own: it plans, runs and reports.

pub mod control;
pub mod flow_sizes;
pub mod hpcc_traffic;
pub mod netns;
pub mod plot;
pub mod repository;
pub mod scenario;
pub mod stats;
pub mod table;
pub mod traffic;
pub mod workload;
