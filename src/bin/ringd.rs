//! The `ringd` binary: parses the command line and runs it. Everything
//! else lives in the library (`ringd::cli`, `ringd::server`).

use clap::Parser;
use ringd::cli::{Cli, Command};
use ringd::server::{init_logging, serve, shutdown_signal, ServeConfig};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            let config = ServeConfig::from(args);
            init_logging(config.log_format);
            serve(config, shutdown_signal()).await?;
        }
    }
    Ok(())
}
