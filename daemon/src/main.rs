//! pfcswitchd: the pfcswitch daemon. Runs in the foreground, logs to stderr; see the README.

use clap::Parser;
use pfcswitchd::config;
use pfcswitchd::control::{self, DatapathHandle};
use pfcswitchd::datapath::{Datapath, Options};
use pfcswitchd::signals::{self, EventFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(name = "pfcswitchd", version, about = "Lossless-Ethernet software switch daemon (AF_XDP datapath)")]
struct Args {
    /// Switch configuration (TOML).
    #[arg(long, short = 'c', value_name = "FILE")]
    config: PathBuf,
    /// Validate the configuration, print warnings, and exit (0 when valid).
    #[arg(long)]
    check: bool,
    /// Control socket, overriding `switch.control_socket` (default /run/pfcswitch/NAME.sock).
    #[arg(long, value_name = "PATH")]
    control_socket: Option<PathBuf>,
    /// Prometheus endpoint, overriding `switch.metrics_listen` (default 127.0.0.1:9464);
    /// `off` disables it.
    #[arg(long, value_name = "ADDR")]
    metrics_listen: Option<String>,
    /// Spin this long before each timer deadline instead of sleeping: tighter timers for a
    /// switch with a core to itself. 0 only sleeps, leaving the CPU to the endpoints and other
    /// switches of an experiment on the same machine (`pfcswitch topology up` starts daemons so).
    #[arg(long, default_value = "60us", value_parser = parse_duration)]
    spin: Duration,
    /// Nice value of the forwarding loop's thread (−20 to 19): below 0 it waits less for the
    /// CPU among busy tasks. The control socket and the metrics endpoint keep the process's.
    /// `pfcswitch topology up` passes −20.
    #[arg(long, value_name = "NICE", allow_negative_numbers = true, value_parser = clap::value_parser!(i8).range(-20..=19))]
    nice: Option<i8>,
    /// Run the forwarding loop under SCHED_FIFO at this priority (1–99): it preempts every
    /// ordinary task. For a switch with a core of its own: while busy it starves the kernel's
    /// softirq work on its CPU, which may carry its own transmissions (veth). Off by default.
    #[arg(long, value_name = "PRIORITY", value_parser = clap::value_parser!(u8).range(1..=99))]
    realtime: Option<u8>,
    /// Emulate a cable on a port: its frames wait DELAY and each is lost with probability
    /// LOSS; `out` for what the port sends (a link to another switch, which emulates the
    /// other way), `both` for a link to a host. Repeatable. `pfcswitch topology up` passes
    /// the links' delay and loss this way.
    #[arg(long = "cable", value_name = "PORT:DELAY:LOSS:out|both")]
    cables: Vec<pfcswitchd::datapath::CableSpec>,
}

fn parse_duration(text: &str) -> Result<Duration, String> {
    pfcswitch_link::units::parse_duration(text).map_err(|e| e.to_string())
}

/// Logs to stderr as `pfcswitchd[NAME]: LEVEL: message`; `PFCSWITCH_LOG=debug` for more.
struct StderrLogger {
    name: String,
    level: log::LevelFilter,
}

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= self.level
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            eprintln!("pfcswitchd[{}]: {}: {}", self.name, record.level().as_str().to_lowercase(), record.args());
        }
    }

    fn flush(&self) {}
}

fn init_logging(name: &str) {
    let level = std::env::var("PFCSWITCH_LOG").ok().and_then(|l| l.parse().ok()).unwrap_or(log::LevelFilter::Info);
    let logger = Box::new(StderrLogger { name: name.to_string(), level });
    if log::set_boxed_logger(logger).is_ok() {
        log::set_max_level(level);
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let (config, warnings) = match config::load(&args.config) {
        Ok(loaded) => loaded,
        Err(error) => {
            eprintln!("pfcswitchd: {error}");
            return ExitCode::FAILURE;
        }
    };
    init_logging(&config.switch.name);
    for warning in &warnings {
        log::warn!("{}: {warning}", args.config.display());
    }
    if args.check {
        println!(
            "{}: valid ({} ports, policy {})",
            args.config.display(),
            config.ports.len(),
            config.policy.kind.name()
        );
        return ExitCode::SUCCESS;
    }
    match run(args, config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            log::error!("{message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: Args, config: pfcswitch_switch::config::SwitchConfig) -> Result<(), String> {
    signals::block_signals().map_err(|e| format!("cannot block signals: {e}"))?;
    let wake = Arc::new(EventFd::new().map_err(|e| format!("cannot create an eventfd: {e}"))?);
    let (handle, calls) = DatapathHandle::new(wake.clone());
    let socket = args
        .control_socket
        .or_else(|| config.switch.control_socket.clone().map(PathBuf::from))
        .unwrap_or_else(|| control::default_socket_path(&config.switch.name));
    let metrics =
        args.metrics_listen.or_else(|| config.switch.metrics_listen.clone()).unwrap_or_else(|| "127.0.0.1:9464".into());
    let (nice, realtime) = (args.nice, args.realtime);
    let options = Options { config_path: args.config, spin: args.spin, cables: args.cables };
    let mut datapath = Datapath::new(config, options, wake, calls).map_err(|e| e.to_string())?;
    control::serve(&socket, handle.clone()).map_err(|e| format!("control socket {}: {e}", socket.display()))?;
    if metrics != "off" {
        pfcswitchd::metrics::serve(&metrics, handle).map_err(|e| format!("metrics endpoint {metrics}: {e}"))?;
        log::info!("metrics on http://{metrics}/metrics");
    }
    log::info!("control socket {}", socket.display());
    // Only now, on the datapath's thread: the control and metrics threads started above
    // stay ordinary.
    if let Some(nice) = nice {
        if let Err(error) = pfcswitchd::timer::set_nice(nice) {
            let _ = std::fs::remove_file(&socket);
            return Err(format!("--nice {nice}: setpriority: {error}"));
        }
        log::info!("forwarding loop at nice {nice}");
    }
    if let Some(priority) = realtime {
        if let Err(error) = pfcswitchd::timer::run_realtime(priority) {
            let _ = std::fs::remove_file(&socket);
            return Err(format!("--realtime {priority}: sched_setscheduler(SCHED_FIFO, {priority}): {error}"));
        }
        log::info!("forwarding loop under SCHED_FIFO priority {priority}");
    }
    datapath.run();
    drop(datapath);
    let _ = std::fs::remove_file(&socket);
    Ok(())
}
