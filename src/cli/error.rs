//! Why a command failed, and the exit code each failure maps to.

use std::path::PathBuf;

use thiserror::Error;

use crate::client::ClientError;

/// A failed command.
#[derive(Debug, Error)]
pub enum CliError {
    /// The server refused the request, could not be reached, or answered
    /// something unexpected.
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A file named on the command line could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file (`-` for stdin).
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A file named on the command line is not the JSON it should be.
    #[error("{path} is not valid JSON: {source}")]
    Json {
        /// The file (`-` for stdin).
        path: PathBuf,
        /// Where and why parsing failed.
        source: serde_json::Error,
    },
    /// The command cannot do what was asked, decided before or without
    /// asking the server (e.g. `node add` of a node that exists, or a
    /// change file that is not a JSON object).
    #[error("{0}")]
    Refused(String),
    /// Writing to stdout failed (other than a closed pipe, which ends the
    /// command quietly).
    #[error("cannot write the output: {0}")]
    Output(std::io::Error),
    /// What was given is refused, by the command or by ringd, and running
    /// the command again unchanged fails the same way: `ringd node join`'s
    /// record, TTL, ring or token. Exit code 2, as for a usage error, so a
    /// service manager can tell it from a server that is down.
    #[error(transparent)]
    Usage(ClientError),
    /// `ringd serve` could not start or failed while running.
    #[error(transparent)]
    Serve(#[from] crate::server::ServeError),
}

/// Exit code of a refusal: the server (or the command) said no.
pub(super) const EXIT_REFUSED: u8 = 1;
/// Exit code of a usage error; clap uses it for the errors it finds.
pub(super) const EXIT_USAGE: u8 = 2;
/// Exit code when no server answered at all.
pub(super) const EXIT_UNREACHABLE: u8 = 3;

impl CliError {
    /// The process exit code: 1 for a refusal or any other failure, 2 for
    /// a usage error (`serve`'s settings included), 3 when no server could
    /// be reached.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => EXIT_USAGE,
            Self::Client(ClientError::Unreachable { .. }) => EXIT_UNREACHABLE,
            Self::Client(ClientError::InvalidUrl(_)) => EXIT_USAGE,
            Self::Serve(e) if e.is_configuration() => EXIT_USAGE,
            _ => EXIT_REFUSED,
        }
    }

    /// A server answer that is not what the API documents.
    pub(crate) fn decode(
        what: &str,
        e: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        Self::Client(ClientError::decode(what, e))
    }
}
