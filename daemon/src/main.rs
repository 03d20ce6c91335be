//! pfcswitchd: the pfcswitch daemon. Runs in the foreground, logs to stderr; see the README.

use clap::Parser;
use pfcswitchd::args::Args;
use pfcswitchd::config;
use pfcswitchd::control::{self, DatapathHandle};
use pfcswitchd::datapath::{Datapath, Options};
use pfcswitchd::signals::{self, EventFd};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

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
