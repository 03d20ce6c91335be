//! Man pages and shell completions, rendered from the same clap definitions as `--help`
//! (pfcswitch's and pfcswitchd's), so they never drift from it. The Debian package
//! (`scripts/package-deb.sh`) ships what these write; see docs/packaging.md.

use clap::{CommandFactory, ValueEnum};
use clap_complete::Shell;
use clap_mangen::Man;
use clap_mangen::roff::{Roff, bold, italic, roman};
use std::path::Path;

/// The two programs of the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Program {
    Pfcswitch,
    Pfcswitchd,
}

impl Program {
    /// `client` is pfcswitch's command, which its `main` passes in.
    fn command(self, client: clap::Command) -> clap::Command {
        match self {
            Program::Pfcswitch => client,
            Program::Pfcswitchd => pfcswitchd::args::Args::command(),
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete in.
    #[arg(value_enum)]
    shell: Shell,
    /// The program to complete.
    #[arg(long, value_enum, default_value = "pfcswitch")]
    program: Program,
}

#[derive(Debug, clap::Args)]
pub struct ManpagesArgs {
    /// Where to write pfcswitch.1, one pfcswitch-SUBCOMMAND.1 per subcommand, and pfcswitchd.8.
    dir: std::path::PathBuf,
}

/// Prints the completion script of `args.program` for `args.shell` on standard output;
/// `client` is pfcswitch's own command.
pub fn completions(args: &CompletionsArgs, client: clap::Command) -> anyhow::Result<()> {
    let mut command = args.program.command(client);
    let name = command.get_name().to_string();
    clap_complete::generate(args.shell, &mut command, name, &mut std::io::stdout());
    Ok(())
}

/// Writes every man page into `args.dir`: pfcswitch(1) (`client`) and its subcommands'
/// pages, pfcswitchd(8) with the files, signals and environment it reads.
pub fn manpages(args: &ManpagesArgs, client: clap::Command) -> anyhow::Result<()> {
    let dir = &args.dir;
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("create {}: {e}", dir.display()))?;
    write_page(dir, &Man::new(client.clone()), &client_sections())?;
    // clap_mangen names subcommand pages `pfcswitch-pfc-show.1`, as git's are named.
    write_subcommand_pages(dir, &client, client.get_name())?;
    let daemon = pfcswitchd::args::Args::command();
    write_page(dir, &Man::new(daemon).section("8"), &daemon_sections())
}

fn write_subcommand_pages(dir: &Path, parent: &clap::Command, prefix: &str) -> anyhow::Result<()> {
    for sub in parent.get_subcommands().filter(|sub| !sub.is_hide_set()) {
        let name = format!("{prefix}-{}", sub.get_name());
        let page = sub.clone().name(name.clone()).bin_name(name.replace('-', " ")).version(env!("CARGO_PKG_VERSION"));
        write_page(dir, &Man::new(page.clone()), &[])?;
        write_subcommand_pages(dir, sub, &name)?;
    }
    Ok(())
}

/// A man page section after clap's own: a title and paragraphs of roff inlines.
type Section = (&'static str, Vec<Vec<clap_mangen::roff::Inline>>);

fn write_page(dir: &Path, man: &Man, extra: &[Section]) -> anyhow::Result<()> {
    let mut page = Vec::new();
    man.render(&mut page)?;
    let mut roff = Roff::new();
    for (title, paragraphs) in extra {
        roff.control("SH", [*title]);
        for paragraph in paragraphs {
            roff.control("PP", []).text(paragraph.clone());
        }
    }
    roff.to_writer(&mut page)?;
    let path = dir.join(man.get_filename());
    std::fs::write(&path, page).map_err(|e| anyhow::anyhow!("write {}: {e}", path.display()))?;
    Ok(())
}

fn client_sections() -> Vec<Section> {
    vec![
        (
            "ENVIRONMENT",
            vec![
                vec![
                    bold("PFCSWITCH_ROOT"),
                    roman(": where topologies/, scenarios/, workloads/ and configs/ are read from; by default "),
                    italic("/usr/share/pfcswitch"),
                    roman(" for an installed pfcswitch, else the checkout it was built from."),
                ],
                vec![bold("PFCSWITCHD"), roman(": the pfcswitchd that topology up and scenario run start.")],
            ],
        ),
        (
            "SEE ALSO",
            vec![vec![
                bold("pfcswitchd"),
                roman("(8), and one page per subcommand: "),
                bold("pfcswitch-pfcstat"),
                roman("(1), "),
                bold("pfcswitch-queues"),
                roman("(1), "),
                bold("pfcswitch-scenario"),
                roman("(1), ..."),
            ]],
        ),
    ]
}

fn daemon_sections() -> Vec<Section> {
    vec![
        (
            "FILES",
            vec![
                vec![
                    italic("/etc/pfcswitch/NAME.toml"),
                    roman(": the configuration of the switch that "),
                    bold("systemctl start pfcswitchd@NAME"),
                    roman(" runs; "),
                    italic("/etc/pfcswitch/example.toml"),
                    roman(" is a commented example to copy."),
                ],
                vec![
                    italic("/run/pfcswitch/NAME.sock"),
                    roman(": the control socket that "),
                    bold("pfcswitch"),
                    roman("(1) talks to."),
                ],
            ],
        ),
        (
            "SIGNALS",
            vec![
                vec![
                    bold("SIGHUP"),
                    roman(" re-reads the configuration (as "),
                    bold("pfcswitch reload"),
                    roman(" does)."),
                ],
                vec![
                    bold("SIGTERM"),
                    roman(", "),
                    bold("SIGINT"),
                    roman(
                        " stop the switch; its XDP programs leave with the process, also after SIGKILL \
                         (they are attached through links that the kernel releases when the process dies).",
                    ),
                ],
            ],
        ),
        ("ENVIRONMENT", vec![vec![bold("PFCSWITCH_LOG"), roman(": the log level (error, warn, info, debug).")]]),
        (
            "SEE ALSO",
            vec![vec![
                bold("pfcswitch"),
                roman("(1), "),
                bold("systemctl"),
                roman("(1); the unit "),
                italic("pfcswitchd@.service"),
                roman("."),
            ]],
        ),
    ]
}
