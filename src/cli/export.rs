//! `ringd export RING --format F`: a version written as a proxy's
//! configuration (`GET …/export/{format}`), printed as the server renders
//! it, so it can be redirected into the proxy's configuration file.

use clap::{Args, ValueEnum};
use serde_json::json;

use super::context::{encode, ring_path};
use super::output::{emit, emit_json};
use super::{CliError, Context};
use crate::ring::proxy_config::{ExportSettings, ProxyFormat};

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
    /// The proxy.
    pub fn proxy(self) -> ProxyFormat {
        match self {
            Self::Nginx => ProxyFormat::Nginx,
            Self::Haproxy => ProxyFormat::Haproxy,
            Self::Twemproxy => ProxyFormat::Twemproxy,
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
    /// What the configuration holds besides the placement.
    #[command(flatten)]
    pub settings: ProxySettingsArgs,
}

/// What a proxy's configuration holds besides the placement (`ringd
/// export` and `ringd sync`).
#[derive(Debug, Clone, Args)]
pub struct ProxySettingsArgs {
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

impl ProxySettingsArgs {
    /// The settings as the renderer takes them.
    pub fn settings(&self) -> ExportSettings {
        ExportSettings {
            upstream: self.upstream.clone(),
            key: self.key.clone(),
            keepalive: self.keepalive,
            backend: self.backend.clone(),
            header: self.header.clone(),
            pool: self.pool.clone(),
            listen: self.listen.clone(),
            redis: self.redis.then_some(true),
        }
    }
}

/// Prints the configuration; with `-o json`, an object with the format,
/// the ETag and the text.
pub async fn run(ctx: &Context, a: ExportArgs) -> Result<(), CliError> {
    let version = a.version.map(|v| v.to_string());
    let s = &a.settings;
    let keepalive = s.keepalive.map(|k| k.to_string());
    let texts = [
        ("version", version.as_deref()),
        ("upstream", s.upstream.as_deref()),
        ("key", s.key.as_deref()),
        ("keepalive", keepalive.as_deref()),
        ("backend", s.backend.as_deref()),
        ("header", s.header.as_deref()),
        ("pool", s.pool.as_deref()),
        ("listen", s.listen.as_deref()),
        ("redis", s.redis.then_some("true")),
    ];
    let query: Vec<String> = texts
        .into_iter()
        .filter_map(|(name, value)| value.map(|v| format!("{name}={}", encode(v))))
        .collect();
    let mut path = ring_path(&a.ring, &format!("/export/{}", a.format.proxy().name()));
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    let (text, etag) = ctx.get_text(&path).await?;
    if ctx.json() {
        return emit_json(
            &json!({"format": a.format.proxy().name(), "etag": etag, "config": text}),
        );
    }
    // The server writes only names and addresses it has checked against
    // each proxy's literal characters, so the text prints as it is.
    emit(&text)
}
