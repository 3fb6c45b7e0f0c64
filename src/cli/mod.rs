//! The `ringd` command line: `ringd serve` runs the service; every other
//! subcommand is an operator client of a running server (like `etcdctl`
//! or `consul`), talking to it over the REST API.
//!
//! One file per concern: [`serve`] runs the server; [`ring`], [`node`] (and
//! its long-running [`join`]),
//! [`change`], [`inspect`], [`watch`], [`clients`] and [`export`] are the
//! client commands, [`follow`] runs the client library as a canary, and
//! [`sync`] keeps a proxy on the latest version;
//! [`output`] renders tables and JSON and prints errors.
//! Exit codes are in [`CliError::exit_code`] and `docs/cli.md`.

pub mod change;
pub mod clients;
pub mod cluster;
pub mod config_file;
mod context;
mod describe;
mod error;
pub mod export;
mod flags;
pub mod follow;
pub mod health;
pub mod inspect;
pub mod join;
pub mod manual;
pub mod node;
pub mod output;
mod policy;
pub mod ring;
pub mod rollout;
pub mod serve;
pub mod sync;
pub mod watch;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use context::Context;
pub use error::CliError;
pub use serve::ServeArgs;

/// Where the client commands find ringd unless told otherwise.
pub const DEFAULT_ADDR: &str = "http://127.0.0.1:7420";

/// ringd: the single source of truth for consistent-hashing rings.
#[derive(Debug, Parser)]
#[command(name = "ringd", version, about)]
pub struct Cli {
    /// Flags shared by the client commands.
    #[command(flatten)]
    pub client: ClientArgs,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Flags of every client command: which servers, which token, which format.
/// Global, so they may come before or after the subcommand; `ringd serve`
/// ignores them.
#[derive(Debug, Clone, Args)]
pub struct ClientArgs {
    /// ringd server URL; a comma-separated list names several equivalent
    /// servers, tried in turn.
    #[arg(long, env = "RINGD_ADDR", default_value = DEFAULT_ADDR, global = true, help_heading = "Client options")]
    pub addr: String,
    /// Bearer token: the admin token for changes, the read or admin token
    /// for reads.
    #[arg(
        long,
        env = "RINGD_TOKEN",
        hide_env_values = true,
        global = true,
        help_heading = "Client options"
    )]
    pub token: Option<String>,
    /// PEM file of a CA to trust for https:// servers, besides the usual
    /// roots (e.g. the private CA that signed the server's --tls-cert).
    #[arg(
        long,
        env = "RINGD_CA_CERT",
        value_name = "PATH",
        global = true,
        help_heading = "Client options"
    )]
    pub ca_cert: Option<std::path::PathBuf>,
    /// PEM client certificate for a server with --tls-client-ca (with --client-key).
    #[arg(
        long,
        env = "RINGD_CLIENT_CERT",
        value_name = "PATH",
        global = true,
        requires = "client_key",
        help_heading = "Client options"
    )]
    pub client_cert: Option<std::path::PathBuf>,
    /// PEM private key of --client-cert.
    #[arg(
        long,
        env = "RINGD_CLIENT_KEY",
        value_name = "PATH",
        global = true,
        requires = "client_cert",
        help_heading = "Client options"
    )]
    pub client_key: Option<std::path::PathBuf>,
    /// Output format: aligned tables for people, JSON for scripts.
    #[arg(short = 'o', long, value_enum, default_value_t = OutputFormat::Table, global = true, help_heading = "Client options")]
    pub output: OutputFormat,
}

/// How results are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned, human-readable tables.
    Table,
    /// Pretty JSON with sorted keys (one compact object per line for `watch`).
    Json,
}

/// `ringd` subcommands.
// Parsed once per process, so the size of `serve`'s flags costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the service.
    // A repeated flag takes its last value, so wrappers can override defaults.
    #[command(args_override_self = true)]
    Serve(ServeArgs),
    /// Create, list, show and delete rings.
    #[command(subcommand)]
    Ring(ring::RingCommand),
    /// Add, update, drain, remove and list a ring's nodes.
    #[command(subcommand)]
    Node(node::NodeCommand),
    /// Apply a multi-op change from a file, after previewing its movement.
    #[command(subcommand)]
    Change(change::ChangeCommand),
    /// Which nodes own a key.
    Lookup(inspect::LookupArgs),
    /// Each node's exact share of the keyspace against its weight share.
    Ownership(inspect::OwnershipArgs),
    /// What moves between two versions.
    Diff(inspect::DiffArgs),
    /// A ring's retained versions: time, ops, reason, moved fraction.
    History(inspect::HistoryArgs),
    /// Apply a change in paced steps, each gated on the ring's clients.
    #[command(subcommand)]
    Rollout(rollout::RolloutCommand),
    /// Follow a ring: one line per new version.
    Watch(watch::WatchArgs),
    /// Follow a ring as a client that verifies, applies and acks each
    /// version: a canary for the fleet.
    Follow(follow::FollowArgs),
    /// Which clients applied which version, and who diverges.
    Clients(clients::ClientsArgs),
    /// The ringd instances sharing the store, and which one decides.
    Cluster(cluster::ClusterArgs),
    /// A version written as nginx's, HAProxy's or twemproxy's
    /// configuration.
    Export(export::ExportArgs),
    /// Keep a proxy's configuration on the ring's latest version: write,
    /// check and reload it for each version, and ack once it is loaded.
    Sync(sync::SyncArgs),
    /// Whether a server is alive (or, with --ready, serving): exit code 0 if so.
    Health(health::HealthArgs),
    /// Print the shell completion script for bash, zsh or fish.
    Completions(manual::CompletionsArgs),
    /// Print the man page (roff), e.g. `ringd man | man -l -`.
    Man,
}

/// Runs a parsed command line. Output goes to stdout; the caller prints
/// the error (see [`output::print_error`]) and exits with
/// [`CliError::exit_code`].
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let command = match cli.command {
        Command::Serve(args) => return Ok(serve::run(args).await?),
        Command::Completions(a) => return manual::completions(&a),
        Command::Man => return manual::man_page(),
        other => other,
    };
    let ctx = Context::new(&cli.client)?;
    match command {
        Command::Serve(_) | Command::Completions(_) | Command::Man => {
            unreachable!("handled above")
        }
        Command::Ring(c) => ring::run(&ctx, c).await,
        Command::Node(c) => node::run(&ctx, c).await,
        Command::Change(c) => change::run(&ctx, c).await,
        Command::Lookup(a) => inspect::lookup(&ctx, a).await,
        Command::Ownership(a) => inspect::ownership(&ctx, a).await,
        Command::Diff(a) => inspect::diff(&ctx, a).await,
        Command::History(a) => inspect::history(&ctx, a).await,
        Command::Rollout(c) => rollout::run(&ctx, c).await,
        Command::Watch(a) => watch::run(&ctx, a).await,
        Command::Follow(a) => follow::run(&ctx, a).await,
        Command::Clients(a) => clients::run(&ctx, a).await,
        Command::Cluster(a) => cluster::run(&ctx, a).await,
        Command::Export(a) => export::run(&ctx, a).await,
        Command::Sync(a) => sync::run(&ctx, a).await,
        Command::Health(a) => health::run(&ctx, a).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::{LogFormat, ServeConfig};
    use crate::store::DEFAULT_RETENTION;
    use clap::CommandFactory;

    #[test]
    fn cli_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn defaults() {
        let Command::Serve(a) = Cli::try_parse_from(["ringd", "serve"]).unwrap().command else {
            panic!("not serve");
        };
        let c = ServeConfig::from(a);
        assert_eq!(c.retention, DEFAULT_RETENTION);
        assert_eq!(c.log_format, LogFormat::Text);
        assert!(!c.insecure);
        assert_eq!(c.etcd_prefix, "/ringd");
    }

    #[test]
    fn global_flags_go_before_or_after_the_subcommand() {
        for args in [
            &[
                "ringd",
                "-o",
                "json",
                "--addr",
                "http://a:1",
                "ring",
                "list",
            ][..],
            &[
                "ringd",
                "ring",
                "list",
                "--addr",
                "http://a:1",
                "--output",
                "json",
            ][..],
        ] {
            let cli = Cli::try_parse_from(args).unwrap();
            assert_eq!(cli.client.output, OutputFormat::Json);
            assert_eq!(cli.client.addr, "http://a:1");
        }
    }
}
