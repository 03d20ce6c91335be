//! pfcswitch's hosts as sans-IO engines: the transports (go-back-N messages with FCTs) and
//! congestion control (DCTCP's window and HPCC's simulator's rate-based DCTCP, DCQCN, HPCC,
//! TIMELY and Swift's sender laws, QCN reaction points, FECN sources), pacing, and the NIC
//! that obeys PAUSE and PFC. The simulator's hosts and the AF_XDP traffic endpoints run the
//! same code; time comes in as a parameter. It holds no switch logic and no sockets.
//!
//! [`HostNic`] (in `nic`) is an endpoint's NIC as a lossless fabric sees it: a line rate, and
//! obedience to PFC and 802.3x PAUSE per priority, and optionally to OFC PAUSE per flow. The
//! traffic endpoints and the simulator's hosts send through it, with [`FlowSender`]s and a
//! [`FlowReceiver`], or a [`Transport`].
#![forbid(unsafe_code)]

mod dcqcn;
mod dctcp;
mod dctcp_rate;
mod fecn_source;
mod flow;
mod flow_map;
mod hpcc;
mod nic;
mod pacer;
mod rate_increase;
mod rate_trace;
mod reaction_point;
mod swift;
mod timely;
mod transport;
mod within_line;

pub use dcqcn::{Dcqcn, DcqcnModel, DcqcnParams, Fraction};
pub use dctcp::{Dctcp, DctcpModel, DctcpParams, EcnReaction};
pub use dctcp_rate::DctcpRate;
pub use fecn_source::{FecnReaction, FecnSource, FecnSourceStats};
pub use flow::{FlowReceiver, FlowSender, FlowSpec, FlowStats, MINIMAL_FRAME_ETHERTYPE};
pub use hpcc::{HopRecord, Hpcc, HpccParams};
pub use nic::HostNic;
pub use pacer::{Arrivals, Pacer};
pub use rate_trace::{RateLimiter, RateTrace};
pub use reaction_point::{ReactionPoint, RpParams, RpPhase};
pub use swift::{Swift, SwiftParams};
pub use timely::{Timely, TimelyModel, TimelyParams};
pub use transport::{
    ConnectionSpec, HpccTransport, MessageRecord, MessageSpec, QcnReaction, ReceiverStats, SenderStats, SwiftTransport,
    TimelyTransport, Transport, TransportConfig,
};
