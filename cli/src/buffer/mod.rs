//! `pfcswitch buffer`: buffer pools and profiles (buffer mode "pools", docs/buffers.md): the
//! running switch's buffer (`show`, `clear`) and SONiC's tables brought over (`import`).

mod import;
mod show;

use anyhow::{Context, Result};
use clap::Subcommand;
use pfcswitch_lab::control as client;
use pfcswitch_switch::report::ControlRequest;
use std::path::{Path, PathBuf};

#[derive(Debug, Subcommand)]
pub enum BufferCommand {
    /// Pools (size, use, watermark), priority groups (profile, use, the XOFF and XON points in
    /// force now, headroom) and queues (the limit in force now), as SONiC's `show buffer_pool
    /// watermark`, `show priority-group watermark` and `show queue watermark`.
    Show {
        /// Show every queue, not only those that held bytes since the watermarks were cleared.
        #[arg(short, long)]
        all: bool,
    },
    /// Restart every watermark (pools, priority groups, queues) from the current use; counters
    /// stay (SONiC's `sonic-clear ... watermark`).
    Clear,
    /// Convert a SONiC config_db.json's buffer tables into a switch configuration (TOML).
    ///
    /// Reads BUFFER_POOL, BUFFER_PROFILE, BUFFER_PG and BUFFER_QUEUE, with PORT, PORT_QOS_MAP,
    /// CABLE_LENGTH and DEVICE_METADATA, and writes buffer mode "pools". What pfcswitch cannot
    /// express is refused with its SONiC table and key; the result is validated as pfcswitchd
    /// would. See docs/buffer-import.md.
    Import {
        /// SONiC's config_db.json.
        #[arg(value_name = "CONFIG_DB.json")]
        config_db: PathBuf,
        /// Write the configuration (TOML) to FILE instead of standard output.
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// The switch's name (default: DEVICE_METADATA's hostname).
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
}

/// Runs one `pfcswitch buffer` subcommand; `socket` finds the switch's control socket (not
/// asked for by `import`, which needs no switch).
pub fn run(command: BufferCommand, socket: impl Fn() -> Result<PathBuf>, json: bool) -> Result<()> {
    match command {
        BufferCommand::Show { all } => show::show(&client::snapshot(&socket()?)?, all, json),
        BufferCommand::Clear => crate::control::command(&socket()?, ControlRequest::ClearWatermarks, json),
        BufferCommand::Import { config_db, output, name } => import(&config_db, output.as_deref(), name.as_deref()),
    }
}

/// Reads `config_db`, converts it, prints the warnings to stderr and writes the TOML to
/// `output` or stdout.
pub fn import(config_db: &Path, output: Option<&Path>, name: Option<&str>) -> Result<()> {
    let shown = config_db.display();
    let text = std::fs::read_to_string(config_db).with_context(|| format!("cannot read {shown}"))?;
    let db: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{shown} is not JSON"))?;
    let imported = import::convert(&db, name).with_context(|| shown.to_string())?;
    for warning in &imported.warnings {
        eprintln!("warning: {warning}");
    }
    let source = config_db.file_name().map_or_else(|| shown.to_string(), |file| file.to_string_lossy().into_owned());
    let toml = import::render(&imported, &source)?;
    match output {
        Some(path) => std::fs::write(path, toml).with_context(|| format!("cannot write {}", path.display())),
        None => {
            print!("{toml}");
            Ok(())
        }
    }
}
