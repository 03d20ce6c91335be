//! `pfcswitch`: the command-line client of the pfcswitch project.

mod capture;
mod decode;
mod frame;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(name = "pfcswitch", version, about = "Lossless-Ethernet software switch: frames, control and experiments")]
struct Cli {
    /// Print JSON (one object per line) for scripts.
    #[arg(short = 'j', long = "json", global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Craft PAUSE, PFC, CNM and data frames into pcap files, or decode captures.
    #[command(subcommand)]
    Frame(frame::FrameCommand),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Frame(command) => frame::run(command, cli.json),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("pfcswitch: {error:#}");
            ExitCode::FAILURE
        }
    }
}
