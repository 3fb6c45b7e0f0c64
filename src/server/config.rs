//! What `ringd serve` is configured with, and the checks a configuration
//! built in code gets too.

use super::{EtcdAccess, Secret, ServeError, TlsFiles};
use crate::api::Settings;
use crate::ring::durations::{format_duration, CLIENT_TTL, WATCH_KEEPALIVE};

// The defaults the API and the store define, so that `ringd serve`'s flags
// and a `ServeConfig` built in code name every default from here.
pub use crate::api::{DEFAULT_CLIENT_TTL, DEFAULT_KEEPALIVE};
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
        }
    }
}

/// Refuses durations outside their bounds. `ringd serve`'s flags are
/// checked when parsed; this covers a [`ServeConfig`] built in code.
pub(super) fn check_settings(settings: &Settings) -> Result<(), ServeError> {
    for (bounds, value) in [
        (WATCH_KEEPALIVE, settings.keepalive),
        (CLIENT_TTL, settings.client_ttl),
    ] {
        if !bounds.contains(value) {
            return Err(ServeError::Setting(format!(
                "{} of {} is outside its bounds: use {}",
                bounds.name,
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

    #[test]
    fn settings_built_in_code_are_bounded_too() {
        assert!(check_settings(&Settings::default()).is_ok());
        let zero = Settings {
            keepalive: Duration::ZERO,
            ..Settings::default()
        };
        assert_eq!(
            check_settings(&zero).unwrap_err().to_string(),
            "--watch-keepalive of 0ms is outside its bounds: use 1s to 5m"
        );
        let long = Settings {
            client_ttl: Duration::from_secs(2 * 24 * 3600),
            ..Settings::default()
        };
        assert_eq!(
            check_settings(&long).unwrap_err().to_string(),
            "--client-ttl of 48h is outside its bounds: use 10s to 24h"
        );
    }
}
