//! `ringd serve`: the service itself. Its flags and environment variables
//! are a contract that scripts rely on: keep their names and defaults.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::ring::durations::{
    format_duration, parse_duration, DurationBounds, CLIENT_TTL, ELECTION_TTL, WATCH_KEEPALIVE,
};
use crate::server::{
    check_advertise_url, check_election_ttl, EtcdAccess, LogFormat, Secret, ServeConfig, TlsFiles,
    XdsListen, DEFAULT_CLIENT_TTL, DEFAULT_ELECTION_TTL, DEFAULT_LISTEN, DEFAULT_PREFIX,
    DEFAULT_RETENTION, DEFAULT_STORE, DEFAULT_WATCH_KEEPALIVE,
};
use crate::store::leadership::InstanceId;

/// Flags of `ringd serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// TOML file of these settings, one key per flag without its dashes (e.g. listen = "127.0.0.1:7420"); the command line and RINGD_* variables win over it.
    #[arg(long, env = "RINGD_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Address to serve on (host:port; port 0 picks a free one).
    #[arg(long, env = "RINGD_LISTEN", default_value = DEFAULT_LISTEN)]
    pub listen: String,
    /// The store: sqlite://PATH, or etcd://HOST:PORT[,HOST:PORT…] for etcd.
    #[arg(long = "store", env = "RINGD_STORE", default_value = DEFAULT_STORE)]
    pub store: String,
    /// Prefix of every key ringd writes in etcd (with an etcd:// store).
    #[arg(long, env = "RINGD_ETCD_PREFIX", default_value = DEFAULT_PREFIX)]
    pub etcd_prefix: String,
    /// PEM file of the CA that signed etcd's certificates; turns on TLS to etcd.
    #[arg(long, env = "RINGD_ETCD_CA_CERT", value_name = "PATH")]
    pub etcd_ca_cert: Option<std::path::PathBuf>,
    /// PEM client certificate for etcd's --client-cert-auth (with --etcd-key); turns on TLS.
    #[arg(long, env = "RINGD_ETCD_CERT", value_name = "PATH")]
    pub etcd_cert: Option<std::path::PathBuf>,
    /// PEM private key of --etcd-cert.
    #[arg(long, env = "RINGD_ETCD_KEY", value_name = "PATH")]
    pub etcd_key: Option<std::path::PathBuf>,
    /// etcd user, when etcd has authentication enabled (with --etcd-password).
    #[arg(long, env = "RINGD_ETCD_USER")]
    pub etcd_user: Option<String>,
    /// Password of --etcd-user; prefer the environment variable.
    #[arg(long, env = "RINGD_ETCD_PASSWORD", hide_env_values = true, value_parser = secret)]
    pub etcd_password: Option<Secret>,
    /// Token required for mutations (Authorization: Bearer …).
    #[arg(long, env = "RINGD_ADMIN_TOKEN", hide_env_values = true, value_parser = secret)]
    pub admin_token: Option<Secret>,
    /// Token required for reads; the admin token also reads.
    #[arg(long, env = "RINGD_READ_TOKEN", hide_env_values = true, value_parser = secret)]
    pub read_token: Option<Secret>,
    /// Log line format, written to stderr.
    #[arg(long, value_enum, default_value_t = LogFormatArg::Text)]
    pub log_format: LogFormatArg,
    /// Allow a non-loopback listen address without an admin token.
    #[arg(long)]
    pub insecure: bool,
    /// PEM certificate chain to serve HTTPS with (with --tls-key); reread on SIGHUP.
    #[arg(
        long,
        env = "RINGD_TLS_CERT",
        value_name = "PATH",
        requires = "tls_key"
    )]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert; reread on SIGHUP.
    #[arg(
        long,
        env = "RINGD_TLS_KEY",
        value_name = "PATH",
        requires = "tls_cert"
    )]
    pub tls_key: Option<PathBuf>,
    /// PEM CA certificates: clients must present a certificate they signed (mutual TLS).
    #[arg(
        long,
        env = "RINGD_TLS_CLIENT_CA",
        value_name = "PATH",
        requires = "tls_cert"
    )]
    pub tls_client_ca: Option<PathBuf>,
    /// How often an idle watch stream gets a keep-alive event.
    #[arg(long, env = "RINGD_WATCH_KEEPALIVE", default_value = default_text(&KEEPALIVE_TEXT, DEFAULT_WATCH_KEEPALIVE), value_name = "DURATION",
          value_parser = |t: &str| WATCH_KEEPALIVE.parse(t),
          help = bounded_help("How often an idle watch stream gets a keep-alive event", &WATCH_KEEPALIVE))]
    pub watch_keepalive: Duration,
    /// How long a client's ack counts after it was sent.
    #[arg(long, env = "RINGD_CLIENT_TTL", default_value = default_text(&CLIENT_TTL_TEXT, DEFAULT_CLIENT_TTL), value_name = "DURATION",
          value_parser = |t: &str| CLIENT_TTL.parse(t),
          help = bounded_help("How long a client's ack counts after it was sent", &CLIENT_TTL))]
    pub client_ttl: Duration,
    /// Watch streams and waiting long-polls served at most; past it a watch is answered 503 with Retry-After. Default: 100000, or the open-file limit less 1024 if that is lower.
    #[arg(long, env = "RINGD_MAX_WATCHERS", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_watchers: Option<u64>,
    /// Serve the web console (/ui/) from this folder instead of the copy built into the binary (for work on the console).
    #[arg(long, env = "RINGD_CONSOLE_DIR", value_name = "DIR")]
    pub console_dir: Option<PathBuf>,
    /// Versions kept per ring; older ones are pruned.
    #[arg(long, default_value_t = DEFAULT_RETENTION, value_parser = clap::value_parser!(u64).range(1..))]
    pub retention: u64,
    /// With etcd, the decision-maker's session TTL: a dead one is replaced within twice this.
    #[arg(long, env = "RINGD_ELECTION_TTL", default_value = default_text(&ELECTION_TTL_TEXT, DEFAULT_ELECTION_TTL), value_name = "DURATION",
          value_parser = election_ttl,
          help = format!("With etcd, the decision-maker's session TTL: a dead one is replaced within twice this (whole seconds, {})", ELECTION_TTL.range()))]
    pub election_ttl: Duration,
    /// This instance's id in GET /v1/cluster (letters, digits, . _ -); random when unset.
    #[arg(long, env = "RINGD_INSTANCE_ID", value_parser = |t: &str| InstanceId::new(t))]
    pub instance_id: Option<InstanceId>,
    /// The URL this instance is reached at, shown in GET /v1/cluster; http(s):// and the listen address when unset.
    #[arg(long, env = "RINGD_ADVERTISE_URL", value_name = "URL", value_parser = advertise_url)]
    pub advertise_url: Option<String>,
    /// Also serve xDS (Envoy's ADS, gRPC) on this host:port, for Envoy and gRPC's ring_hash; off when unset. Same tokens and TLS as the HTTP API.
    #[arg(long, env = "RINGD_XDS_LISTEN", value_name = "HOST:PORT")]
    pub xds_listen: Option<String>,
    /// The request header (gRPC metadata) whose value xDS routes hash as the key.
    #[arg(long, env = "RINGD_XDS_HASH_HEADER", value_name = "NAME", default_value = crate::xds::DEFAULT_HASH_HEADER,
          value_parser = hash_header)]
    pub xds_hash_header: String,
}

/// Checks `--xds-hash-header`.
fn hash_header(text: &str) -> Result<String, String> {
    crate::xds::check_hash_header(text)?;
    Ok(text.to_owned())
}

/// Parses `--election-ttl`.
fn election_ttl(text: &str) -> Result<Duration, String> {
    let ttl = parse_duration(text)?;
    check_election_ttl(ttl)?;
    Ok(ttl)
}

/// Checks `--advertise-url`.
fn advertise_url(text: &str) -> Result<String, String> {
    check_advertise_url(text)?;
    Ok(text.to_owned())
}

/// `--log-format`'s values: [`LogFormat`] as the command line spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(a: LogFormatArg) -> Self {
        match a {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

// clap wants a default as `&'static str`; these hold the text of the
// duration defaults, written once from their constants.
static KEEPALIVE_TEXT: OnceLock<String> = OnceLock::new();
static CLIENT_TTL_TEXT: OnceLock<String> = OnceLock::new();
static ELECTION_TTL_TEXT: OnceLock<String> = OnceLock::new();

/// The text of a duration default, e.g. `15s`, kept in `cell`.
fn default_text(cell: &'static OnceLock<String>, default: Duration) -> &'static str {
    cell.get_or_init(|| format_duration(default))
}

impl From<ServeArgs> for ServeConfig {
    fn from(a: ServeArgs) -> Self {
        ServeConfig {
            listen: a.listen,
            store_url: a.store,
            etcd_prefix: a.etcd_prefix,
            etcd_access: EtcdAccess {
                ca_cert: a.etcd_ca_cert,
                cert: a.etcd_cert,
                key: a.etcd_key,
                user: a.etcd_user,
                password: a.etcd_password,
            },
            admin_token: a.admin_token,
            read_token: a.read_token,
            insecure: a.insecure,
            tls: match (a.tls_cert, a.tls_key) {
                (Some(cert), Some(key)) => Some(TlsFiles {
                    cert,
                    key,
                    client_ca: a.tls_client_ca,
                }),
                // clap requires both or neither.
                _ => None,
            },
            retention: a.retention,
            settings: crate::api::Settings {
                keepalive: a.watch_keepalive,
                client_ttl: a.client_ttl,
                console_dir: a.console_dir,
            },
            max_watchers: a.max_watchers,
            log_format: a.log_format.into(),
            election_ttl: a.election_ttl,
            instance_id: a.instance_id,
            advertise_url: a.advertise_url,
            xds: a.xds_listen.map(|listen| XdsListen {
                listen,
                hash_header: a.xds_hash_header,
            }),
            ..ServeConfig::default()
        }
    }
}

/// Parses a token or password flag into a [`Secret`], so that even
/// [`ServeArgs`]' `Debug` prints none.
fn secret(text: &str) -> Result<Secret, std::convert::Infallible> {
    Ok(Secret::from(text))
}

/// A flag's help line with its range, e.g. `… (1s to 5m; e.g. 15s, 500ms)`,
/// so `--help` shows the bounds the parser applies.
fn bounded_help(what: &str, bounds: &DurationBounds) -> String {
    format!("{what} ({}; e.g. 500ms, 15s, 5m, 1h)", bounds.range())
}

/// Runs the service until SIGINT or SIGTERM.
pub async fn run(args: ServeArgs) -> Result<(), crate::server::ServeError> {
    let config = ServeConfig::from(args);
    crate::server::init_logging(config.log_format);
    crate::server::serve(config, crate::server::shutdown_signal()).await
}
