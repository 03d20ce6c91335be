//! pfcswitchd's command line, in the library so that `pfcswitch manpages` renders the
//! daemon's man page from the same definition as its `--help`.

use clap::Parser;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(name = "pfcswitchd", version, about = "Lossless-Ethernet software switch daemon (AF_XDP datapath)")]
pub struct Args {
    /// Switch configuration (TOML).
    #[arg(long, short = 'c', value_name = "FILE")]
    pub config: PathBuf,
    /// Validate the configuration, print warnings, and exit (0 when valid).
    #[arg(long)]
    pub check: bool,
    /// Control socket, overriding `switch.control_socket` (default /run/pfcswitch/NAME.sock).
    #[arg(long, value_name = "PATH")]
    pub control_socket: Option<PathBuf>,
    /// Prometheus endpoint, overriding `switch.metrics_listen` (default 127.0.0.1:9464);
    /// `off` disables it.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<String>,
    /// Spin this long before each timer deadline instead of sleeping: tighter timers for a
    /// switch with a core to itself, which then also spins up to 2 ms for the next frame a
    /// moment after its receive rings held a whole batch (under overload a late wake-up costs
    /// the frames its fill rings run out of). 0 only sleeps, leaving the CPU to the endpoints
    /// and other switches of an experiment on the same machine (`pfcswitch topology up` starts
    /// daemons so).
    #[arg(long, default_value = "60us", value_parser = parse_duration)]
    pub spin: Duration,
    /// Nice value of the forwarding loop's thread (−20 to 19): below 0 it waits less for the
    /// CPU among busy tasks. The control socket and the metrics endpoint keep the process's.
    /// `pfcswitch topology up` passes −20.
    #[arg(long, value_name = "NICE", allow_negative_numbers = true, value_parser = clap::value_parser!(i8).range(-20..=19))]
    pub nice: Option<i8>,
    /// Run the forwarding loop under SCHED_FIFO at this priority (1–99): it preempts every
    /// ordinary task. For a switch with a core of its own: while busy it starves the kernel's
    /// softirq work on its CPU, which may carry its own transmissions (veth). Off by default.
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u8).range(1..=99))]
    pub realtime: Option<u8>,
    /// Emulate a cable on a port: its frames wait DELAY and each is lost with probability
    /// LOSS; `out` for what the port sends (a link to another switch, which emulates the
    /// other way), `both` for a link to a host. Repeatable. `pfcswitch topology up` passes
    /// the links' delay and loss this way.
    #[arg(long = "cable", value_name = "PORT:DELAY:LOSS:out|both")]
    pub cables: Vec<crate::datapath::CableSpec>,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    pfcswitch_link::units::parse_duration(text).map_err(|e| e.to_string())
}
