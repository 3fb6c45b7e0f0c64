//! What `ringd serve` is configured with, and the checks a configuration
//! built in code gets too.

use std::sync::Arc;

use super::{EtcdAccess, Secret, ServeError, TlsFiles};
use crate::api::Settings;
use crate::ring::durations::{format_duration, CLIENT_TTL, ELECTION_TTL, WATCH_KEEPALIVE};
use crate::ring::{Clock, SystemClock};
use crate::store::leadership::InstanceId;

// The defaults the durations' bounds and the store define, so that `ringd
// serve`'s flags and a `ServeConfig` built in code name every default from
// here.
pub use crate::ring::durations::{
    DEFAULT_CLIENT_TTL, DEFAULT_ELECTION_TTL, DEFAULT_WATCH_KEEPALIVE,
};
pub use crate::store::etcd::DEFAULT_PREFIX;
pub use crate::store::DEFAULT_RETENTION;

/// The address served on, unless configured (`--listen`).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7420";

/// The store, unless configured (`--store`).
pub const DEFAULT_STORE: &str = "sqlite://./ringd-data/ringd.db";

/// How log lines are written (to stderr).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Everything `ringd serve` needs. Its `Debug` prints no secret.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// `host:port` to listen on; port 0 picks a free port.
    pub listen: String,
    /// `sqlite://PATH` or `etcd://HOST:PORT[,HOST:PORT…]`.
    pub store_url: String,
    /// Prefix of every key in an etcd store.
    pub etcd_prefix: String,
    /// TLS files and user for an etcd store.
    pub etcd_access: EtcdAccess,
    /// Token required for mutations; none leaves them open.
    pub admin_token: Option<Secret>,
    /// Token required for reads; none leaves them open.
    pub read_token: Option<Secret>,
    /// Allow a non-loopback address without an admin token.
    pub insecure: bool,
    /// Serve HTTPS with these files; none serves plain HTTP.
    pub tls: Option<TlsFiles>,
    /// Versions kept per ring.
    pub retention: u64,
    /// Log line format.
    pub log_format: LogFormat,
    /// Watch keep-alive and client ack lifetime.
    pub settings: Settings,
    /// Watchers (watch streams and waiting long-polls) served at most;
    /// when none, [`crate::api::DEFAULT_MAX_WATCHERS`] lowered to what the open-file
    /// limit leaves room for.
    pub max_watchers: Option<u64>,
    /// The decision-maker's session TTL with etcd: a dead decision-maker
    /// is replaced within twice this.
    pub election_ttl: std::time::Duration,
    /// This instance's id in `GET /v1/cluster`; random when none.
    pub instance_id: Option<InstanceId>,
    /// The URL other instances and operators reach this one at; `http(s)://`
    /// and the bound listen address when none.
    pub advertise_url: Option<String>,
    /// Where the service and its store read the time: the system's wall
    /// clock, unless a test sets another ([`crate::ring::ManualClock`]).
    /// Nothing below the server reads the wall clock itself.
    pub clock: Arc<dyn Clock>,
    /// Where to serve xDS too; none leaves it off.
    pub xds: Option<XdsListen>,
}

/// The xDS listener's settings (`--xds-listen`, `--xds-hash-header`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XdsListen {
    /// `host:port`; port 0 picks a free port.
    pub listen: String,
    /// The request header routes hash.
    pub hash_header: String,
}

impl Default for ServeConfig {
    fn default() -> Self {
        Self {
            listen: DEFAULT_LISTEN.into(),
            store_url: DEFAULT_STORE.into(),
            etcd_prefix: DEFAULT_PREFIX.into(),
            etcd_access: EtcdAccess::default(),
            admin_token: None,
            read_token: None,
            insecure: false,
            tls: None,
            retention: DEFAULT_RETENTION,
            log_format: LogFormat::Text,
            settings: Settings::default(),
            max_watchers: None,
            election_ttl: DEFAULT_ELECTION_TTL,
            instance_id: None,
            advertise_url: None,
            clock: Arc::new(SystemClock),
            xds: None,
        }
    }
}

/// Checks `--election-ttl`: in [`ELECTION_TTL`] and whole seconds.
pub fn check_election_ttl(ttl: std::time::Duration) -> Result<(), String> {
    if !ELECTION_TTL.contains(ttl) || ttl.subsec_nanos() != 0 {
        return Err(format!(
            "--election-ttl of {} is not allowed: use whole seconds from {}",
            format_duration(ttl),
            ELECTION_TTL.range()
        ));
    }
    Ok(())
}

/// Checks `--advertise-url`: `http://` or `https://` and a host, at most
/// 255 characters, no spaces or control characters.
pub fn check_advertise_url(url: &str) -> Result<(), String> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let fine = rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/'))
        && url.len() <= 255
        && !url.chars().any(|c| c.is_whitespace() || c.is_control());
    if fine {
        Ok(())
    } else {
        Err(format!(
            "--advertise-url `{}` is not a URL to reach this instance at: use http://HOST:PORT or https://HOST:PORT",
            url.escape_debug()
        ))
    }
}

/// Refuses durations outside their bounds. `ringd serve`'s flags are
/// checked when parsed; this covers a [`ServeConfig`] built in code.
pub(super) fn check_settings(config: &ServeConfig) -> Result<(), ServeError> {
    check_election_ttl(config.election_ttl).map_err(ServeError::Setting)?;
    if let Some(url) = &config.advertise_url {
        check_advertise_url(url).map_err(ServeError::Setting)?;
    }
    let settings = &config.settings;
    for (flag, bounds, value) in [
        ("--watch-keepalive", WATCH_KEEPALIVE, settings.keepalive),
        ("--client-ttl", CLIENT_TTL, settings.client_ttl),
    ] {
        if !bounds.contains(value) {
            return Err(ServeError::Setting(format!(
                "{flag} of {} is outside its bounds: use {}",
                format_duration(value),
                bounds.range()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn debug_hides_tokens() {
        let c = ServeConfig {
            admin_token: Some("s3cret".into()),
            read_token: Some("r3ad".into()),
            etcd_access: EtcdAccess {
                user: Some("ringd".into()),
                password: Some("pa55".into()),
                ..EtcdAccess::default()
            },
            ..ServeConfig::default()
        };
        let printed = format!("{c:?}");
        for secret in ["s3cret", "r3ad", "pa55"] {
            assert!(!printed.contains(secret), "{secret} in {printed}");
        }
        assert!(
            printed.contains("admin_token: Some(<redacted>)"),
            "{printed}"
        );
        assert!(printed.contains("user: Some(\"ringd\")"), "{printed}");
    }

    /// A default config with `settings`.
    fn with(settings: Settings) -> ServeConfig {
        ServeConfig {
            settings,
            ..ServeConfig::default()
        }
    }

    #[test]
    fn settings_built_in_code_are_bounded_too() {
        assert!(check_settings(&ServeConfig::default()).is_ok());
        let zero = Settings {
            keepalive: Duration::ZERO,
            ..Settings::default()
        };
        assert_eq!(
            check_settings(&with(zero)).unwrap_err().to_string(),
            "--watch-keepalive of 0ms is outside its bounds: use 1s to 5m"
        );
        let long = Settings {
            client_ttl: Duration::from_secs(2 * 24 * 3600),
            ..Settings::default()
        };
        assert_eq!(
            check_settings(&with(long)).unwrap_err().to_string(),
            "--client-ttl of 48h is outside its bounds: use 10s to 24h"
        );
    }

    #[test]
    fn the_election_ttl_is_whole_seconds_in_its_range() {
        assert_eq!(check_election_ttl(Duration::from_secs(2)), Ok(()));
        assert_eq!(check_election_ttl(Duration::from_secs(60)), Ok(()));
        for (bad, shown) in [
            (Duration::from_secs(1), "1s"),
            (Duration::from_secs(61), "61s"),
            (Duration::from_millis(2500), "2500ms"),
        ] {
            assert_eq!(
                check_election_ttl(bad),
                Err(format!(
                    "--election-ttl of {shown} is not allowed: use whole seconds from 2s to 1m"
                ))
            );
        }
        let short = ServeConfig {
            election_ttl: Duration::from_secs(1),
            ..ServeConfig::default()
        };
        assert!(check_settings(&short).is_err());
    }

    #[test]
    fn advertised_urls_are_http_urls() {
        for good in ["http://10.0.0.1:7420", "https://ringd-a.example:443/"] {
            assert_eq!(check_advertise_url(good), Ok(()), "{good}");
        }
        for bad in [
            "10.0.0.1:7420",
            "http://",
            "http:///x",
            "ftp://h",
            "http://a b",
            &format!("http://{}", "a".repeat(250)),
        ] {
            assert!(check_advertise_url(bad).is_err(), "{bad}");
        }
        assert_eq!(
            check_advertise_url("h:1").unwrap_err(),
            "--advertise-url `h:1` is not a URL to reach this instance at: use http://HOST:PORT or https://HOST:PORT"
        );
    }
}
