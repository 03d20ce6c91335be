//! `pfcswitch scenario`: its subcommands, each handed to `pfcswitch_lab::scenario` (whose
//! option structs derive clap's `Args`, so that `--help` and the API stay one definition).

use clap::Subcommand;
use pfcswitch_lab::scenario::sweep::{MergeArgs, SweepArgs};
use pfcswitch_lab::scenario::{self, CompareArgs, DeadlockArgs, RunArgs};

#[derive(Debug, Subcommand)]
pub enum ScenarioCommand {
    /// The built-in scenarios.
    List,
    /// Run a scenario (a built-in name or a file).
    Run(RunArgs),
    /// Run it in the core's virtual-time harness: same configs, same plan, no namespaces.
    Simulate(RunArgs),
    /// Run one seed of a scenario under several policies (or PFC watchdog modes) and compare
    /// them side by side.
    Compare(CompareArgs),
    /// Run a scenario at every combination of some keys' values (--set KEY=V1,V2,...) under
    /// every policy and seed, each point as `run` or `simulate` (--sim) in a process of its
    /// own, and summarise each metric's mean over the seeds with its 95 % confidence interval.
    /// Points already done are skipped; --shard I/N runs a job array's share.
    Sweep(SweepArgs),
    /// Summarise the shards of one sweep (their --out directories) as one sweep.
    Merge(MergeArgs),
    /// OFC's deadlock experiment (Fig. 9) on the simulator: four flows over a cyclic buffer
    /// dependency, M frames split at random, deadlocks counted per policy and M.
    Deadlock(DeadlockArgs),
}

/// Runs one `pfcswitch scenario` subcommand.
pub fn run(command: ScenarioCommand) -> anyhow::Result<()> {
    match command {
        ScenarioCommand::List => scenario::list(),
        ScenarioCommand::Run(args) => scenario::run(&args).map(drop),
        ScenarioCommand::Simulate(args) => scenario::simulate(&args).map(drop),
        ScenarioCommand::Compare(args) => scenario::compare(&args),
        ScenarioCommand::Sweep(args) => scenario::sweep::sweep(&args),
        ScenarioCommand::Merge(args) => scenario::sweep::merge(&args),
        ScenarioCommand::Deadlock(args) => scenario::deadlock(&args),
    }
}
