//! Log lines: where they go and in which format.

use std::io::{self, IsTerminal as _};

use super::LogFormat;

/// Installs the global tracing subscriber, writing to stderr. `RUST_LOG`
/// overrides the default `info` filter.
pub fn init_logging(format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        // Colour codes only for a person at a terminal, not in log files.
        .with_ansi(io::stderr().is_terminal())
        .with_writer(io::stderr);
    // A second call (tests running several servers in one process) keeps
    // the first subscriber; that is fine.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}
