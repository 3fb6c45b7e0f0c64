//! `ringd export RING --format F`: a version written as a proxy's
//! configuration (`GET …/export/{format}`), printed as the server renders
//! it, so it can be redirected into the proxy's configuration file.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::context::{encode, ring_path};
use super::output::{emit, emit_json};
use super::{CliError, Context};

/// The proxies, as `--format` names them.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Format {
    /// An nginx `upstream` block (`nginx` rings).
    Nginx,
    /// A HAProxy `backend` section (`haproxy` rings).
    Haproxy,
    /// A twemproxy pool (`twemproxy` rings).
    Twemproxy,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Self::Nginx => "nginx",
            Self::Haproxy => "haproxy",
            Self::Twemproxy => "twemproxy",
        }
    }
}

/// `ringd export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The ring.
    pub ring: String,
    /// The proxy whose configuration to write; the ring's algorithm must
    /// be its mode.
    #[arg(long, value_enum)]
    pub format: Format,
    /// The version to write [default: the current one].
    #[arg(long)]
    pub version: Option<u64>,
    /// nginx: the upstream name [default: the ring's name].
    #[arg(long)]
    pub upstream: Option<String>,
    /// nginx: the variable holding the key [default: $http_x_ringd_key].
    #[arg(long)]
    pub key: Option<String>,
    /// nginx: `keepalive N;` in the upstream.
    #[arg(long)]
    pub keepalive: Option<u32>,
    /// HAProxy: the backend name [default: the ring's name].
    #[arg(long)]
    pub backend: Option<String>,
    /// HAProxy: the header holding the key [default: X-Ringd-Key].
    #[arg(long)]
    pub header: Option<String>,
    /// twemproxy: the pool name [default: the ring's name].
    #[arg(long)]
    pub pool: Option<String>,
    /// twemproxy: where the pool listens [default: 127.0.0.1:22121].
    #[arg(long)]
    pub listen: Option<String>,
    /// twemproxy: the servers speak Redis, not memcached.
    #[arg(long)]
    pub redis: bool,
}

/// Prints the configuration; with `-o json`, an object with the format,
/// the ETag and the text.
pub async fn run(ctx: &Context, a: ExportArgs) -> Result<(), CliError> {
    let version = a.version.map(|v| v.to_string());
    let keepalive = a.keepalive.map(|k| k.to_string());
    let texts = [
        ("version", version.as_deref()),
        ("upstream", a.upstream.as_deref()),
        ("key", a.key.as_deref()),
        ("keepalive", keepalive.as_deref()),
        ("backend", a.backend.as_deref()),
        ("header", a.header.as_deref()),
        ("pool", a.pool.as_deref()),
        ("listen", a.listen.as_deref()),
        ("redis", a.redis.then_some("true")),
    ];
    let query: Vec<String> = texts
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| format!("{name}={}", encode(v))))
        .collect();
    let mut path = ring_path(&a.ring, &format!("/export/{}", a.format.name()));
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    let (text, etag) = ctx.get_text(&path).await?;
    if ctx.json() {
        return emit_json(&json!({"format": a.format.name(), "etag": etag, "config": text}));
    }
    // The server writes only names and addresses it has checked against
    // each proxy's literal characters, so the text prints as it is.
    emit(&text)
}
